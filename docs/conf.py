"""Sphinx configuration of robodyn's documentation (user guide, conventions, methods, CLI and API reference).

Built offline by the test suite (tests/test_docs.py) with warnings as errors: nothing here fetches anything
(no intersphinx); formulas are MathJax in the browser.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from robodyn._version import __version__

project = "robodyn"
author = "the robodyn developers"
copyright = "2026, the robodyn developers"
version = release = __version__

extensions = [
    "myst_parser",  # pages in Markdown (MyST), and the README's sections included into the guide
    "sphinx.ext.autodoc",  # the API reference from the docstrings
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "_generated"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": False}
autoclass_content = "both"

html_theme = "alabaster"
html_title = f"robodyn {release}"
html_static_path: list[str] = []


def _cli_reference() -> None:
    """docs/_generated/cli.md: the CLI reference, written by typer's own documentation generator from the command
    tree itself (``typer robodyn.cli utils docs``), so it cannot drift from ``robodyn COMMAND --help``."""
    out = Path(__file__).parent / "_generated" / "cli.md"
    out.parent.mkdir(exist_ok=True)
    command = [sys.executable, "-m", "typer", "robodyn.cli", "utils", "docs", "--name", "robodyn", "--output", str(out)]
    subprocess.run(command, check=True, capture_output=True)


_cli_reference()

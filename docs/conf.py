"""Sphinx configuration of robodyn's documentation (user guide, conventions, methods, CLI and API reference).

Built offline by the test suite (tests/test_docs.py) with warnings as errors: nothing here fetches anything
(no intersphinx), and nothing the pages show needs the network: formulas are MathML, rendered when the site is
built (``_ext/mathml.py``), not MathJax from a CDN in the browser.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from robodyn._version import __version__

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "robodyn"
author = "the robodyn developers"
copyright = "2026, the robodyn developers"
version = release = __version__

extensions = [
    "myst_parser",  # pages in Markdown (MyST), and the README's sections included into the guide
    "sphinx.ext.autodoc",  # the API reference from the docstrings
    "mathml",  # _ext/mathml.py: formulas as MathML at build time (no script, no network)
    "figures",  # _ext/figures.py: the guide's figures, drawn by the current code when the site is built
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
html_theme_options = {"page_width": "1240px", "sidebar_width": "250px"}  # room for 120-column code
html_title = f"robodyn {release}"
html_static_path: list[str] = []
html_math_renderer = "mathml"


def _cli_reference() -> None:
    """docs/_generated/cli.md: the CLI reference, written by typer's own documentation generator from the command
    tree itself (``typer robodyn.cli utils docs``), so it cannot drift from ``robodyn COMMAND --help``."""
    out = Path(__file__).parent / "_generated" / "cli.md"
    out.parent.mkdir(exist_ok=True)
    command = [sys.executable, "-m", "typer", "robodyn.cli", "utils", "docs", "--name", "robodyn", "--output", str(out)]
    subprocess.run(command, check=True, capture_output=True)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def literal_indented_blocks(app: object, what: str, name: str, obj: object, options: object, lines: list[str]) -> None:
    """robodyn's docstrings set code and formulas off by a blank line and four more spaces, without reST's ``::``
    (they are read in terminals and editors first): mark each such block literal, so that it keeps its lines
    instead of becoming a block quote of run-together text. Blocks already literal (after ``::``) are left alone."""
    out: list[str] = []
    block: int | None = None  # the indentation of the literal block the current line belongs to
    previous = ""  # the last non-blank line
    for k, line in enumerate(lines):
        stripped = line.strip()
        if block is not None and (not stripped or _indent(line) >= block):
            out.append(line)
            continue
        block = None
        starts_block = stripped and k > 0 and not lines[k - 1].strip() and previous
        if starts_block and previous.rstrip().endswith("::") and _indent(line) > _indent(previous):
            block = _indent(line)  # already literal
        elif starts_block and _indent(line) >= _indent(previous) + 4 and not previous.lstrip().startswith(".."):
            out.extend(["::", ""])
            block = _indent(line)
        out.append(line)
        if stripped:
            previous = line
    lines[:] = out


def setup(app: object) -> None:
    _cli_reference()
    app.connect("autodoc-process-docstring", literal_indented_blocks)  # type: ignore[attr-defined]

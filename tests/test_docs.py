"""The documentation site: built offline by Sphinx with warnings as errors, its pages present, and the examples of
the conventions and method pages run (Python's doctest on the Markdown sources)."""

from __future__ import annotations

import doctest
import html
import importlib.util
import re
from pathlib import Path

import pytest

sphinx_build = pytest.importorskip("sphinx.cmd.build")
# myst-parser on Sphinx 9 uses an attribute that Sphinx 11 will remove: its business, not a failure here
pytestmark = pytest.mark.filterwarnings("ignore:.*is deprecated. Check CHANGES for Sphinx API")

DOCS = Path(__file__).resolve().parent.parent / "docs"
#: One page per source document, with the author its title names.
METHOD_PAGES = {"robmat": "Horn", "emdeg": "Burdick", "fu": "Fu", "kane": "Angeles", "macsyma": "Macsyma"}
#: Pages whose ``>>>`` examples are run.
EXAMPLE_PAGES = ["conventions.md", *(f"methods/{name}.md" for name in METHOD_PAGES)]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("docs")
    html = out / "html"
    # -W: warnings are errors; -E: read every source; --keep-going: report every warning before failing
    argv = ["-b", "html", "-W", "--keep-going", "-E", "-q", "-d", str(out / "doctrees"), str(DOCS), str(html)]
    assert sphinx_build.build_main(argv) == 0, "the documentation build printed warnings or errors (above)"
    return html


def _text(page: Path) -> str:
    """The page's text: tags dropped, entities decoded, white space collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8"))).split())


def test_site_has_the_guide_conventions_methods_cli_and_api(site: Path) -> None:
    for page in ("index", "conventions", "cli", "changelog", "guide/quickstart", "guide/model-files", "api/index"):
        assert (site / f"{page}.html").is_file(), page
    conventions = _text(site / "conventions.html")
    for topic in ("Denavit-Hartenberg", "modified", "centre of mass", "Gravity", "Coulomb", "Armature"):
        assert topic in conventions, topic
    for name, author in METHOD_PAGES.items():
        title = re.search(r"<h1>(.*?)</h1>", (site / "methods" / f"{name}.html").read_text(encoding="utf-8"), re.S)
        assert title and author in title.group(1), name
    # the quickstart page includes the README from "The two commands" to its tour: a section that moved or was
    # renamed fails the build, and the text arrives
    assert "./scripts/demo" in _text(site / "guide" / "quickstart.html")


def test_pages_show_their_formulas_and_figures_offline(site: Path) -> None:
    """Formulas are MathML written when the site is built (docs/_ext/mathml.py), not LaTeX left for a script from
    a CDN to typeset in the reader's browser; the figures are drawn by the current code and shipped with the site."""
    pages = sorted(site.rglob("*.html"))
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"<script[^>]+(mathjax|katex|https?://)", text, re.I), page
    conventions = (site / "conventions.html").read_text(encoding="utf-8")
    assert conventions.count("<math") > 30
    assert "\\mathrm{Rot}" not in conventions  # no LaTeX source left in the page's text
    for page, figure in (("conventions", "dh_modified"), ("methods/kane", "angeles_example1"),
                         ("methods/macsyma", "macsyma_swing")):
        assert f"{figure}.png" in (site / f"{page}.html").read_text(encoding="utf-8"), page
        image = site / "_images" / f"{figure}.png"
        assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and image.stat().st_size > 10_000, figure


def test_cli_reference_lists_every_command(site: Path) -> None:
    import typer.main

    from robodyn.cli import app

    cli = _text(site / "cli.html")
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    assert len(commands) >= 10
    for name, command in commands.items():
        assert f"robodyn {name}" in cli, name
        for param in command.params:
            for opt in param.opts:
                if opt.startswith("-") and not getattr(param, "hidden", False):
                    assert opt in cli, (name, opt)


def test_api_reference_documents_the_public_functions(site: Path) -> None:
    ids = set()
    for page in (site / "api").glob("*.html"):
        ids.update(re.findall(r'id="(robodyn\.[\w.]+)"', page.read_text(encoding="utf-8")))
    for name in ("robodyn.formats.load.load", "robodyn.formulations.derive", "robodyn.model.Manipulator",
                 "robodyn.equations.Equations.config_space", "robodyn.program.build", "robodyn.runtime.entry.compile",
                 "robodyn.numeric.inverse_dynamics", "robodyn.numeric.kinematics.external_torques",
                 "robodyn.analysis.simulation.simulate", "robodyn.analysis.linear.linearize",
                 "robodyn.codegen.casadi.to_casadi",
                 "robodyn.identification.base_parameters", "robodyn.analysis.toolbox.rne",
                 "robodyn.recursions.aba.joint_accelerations"):
        assert name in ids, name


@pytest.mark.parametrize("page", EXAMPLE_PAGES)
@pytest.mark.filterwarnings("ignore:.*triangle inequality")  # published data, shown by the pages on purpose
def test_page_examples_run(page: str) -> None:
    """Each ``>>>`` example prints what the page says (a page with none would not be a page of examples)."""
    result = doctest.testfile(str(DOCS / page), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE,
                              verbose=False, report=True)
    assert result.attempted >= 3, f"{page}: {result.attempted} examples"
    assert result.failed == 0, f"{page}: {result.failed} of {result.attempted} examples failed (printed above)"


def test_user_facing_text_has_no_internal_words() -> None:
    """What a user reads (README, changelog, the pages, the docstrings and messages of the package) names the papers
    by their authors, not by the project's file numbers, and has no project goals in it."""
    root = DOCS.parent
    files = [root / "README.md", root / "CHANGELOG.md", *DOCS.glob("**/*.md"), *(root / "src").glob("**/*.py"),
             *(root / "src").glob("**/*.yaml"), *(root / "examples").glob("*.*")]
    internal = re.compile(r"\bseeds? ?0\d\d\b|\bto beat\b|robodyn goal", re.IGNORECASE)
    found = [f"{path.relative_to(root)}:{n}: {line.strip()}"
             for path in files if "_build" not in path.parts and "_generated" not in path.parts
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if internal.search(line)]
    assert not found, "\n".join(found)


def test_indented_docstring_blocks_become_literal() -> None:
    """docs/conf.py marks the docstrings' indented code and formulas literal, and leaves reST's own blocks alone."""
    spec = importlib.util.spec_from_file_location("robodyn_docs_conf", DOCS / "conf.py")
    assert spec and spec.loader
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    lines = ["Split:", "", "    tau = M qdd + h", "    + G", "", "Text again.", "", "- item", "",
             "  its second paragraph", "", "Example::", "", "    x = 1", "", "        deeper"]
    conf.literal_indented_blocks(None, "module", "m", None, None, lines)
    assert lines == ["Split:", "", "::", "", "    tau = M qdd + h", "    + G", "", "Text again.", "", "- item", "",
                     "  its second paragraph", "", "Example::", "", "    x = 1", "", "        deeper"]

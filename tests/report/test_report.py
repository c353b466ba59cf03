"""The HTML report (robodyn.report.page): self-contained, formulas in MathML, large arms summarised, and
rendered by a real browser (headless Chromium) with the formulas laid out and no raw LaTeX visible."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from robodyn.cli import app
from robodyn.report import page as report
from tests.conftest import load_quiet

runner = CliRunner()
DOUBLE = {"L1": 1.0, "L2": 0.5, "m1": 2.0, "m2": 1.0}
CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium")
                 if p and Path(p).exists()), None)
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (Debian: apt-get install chromium; ./scripts/test installs it as root)",
)

#: Injected into a copy of the page: measures what the browser laid out and writes it into the DOM.
PROBE = """<script>
const maths = [...document.querySelectorAll('math')];
const boxes = maths.map(m => m.getBoundingClientRect());
const fracs = [...document.querySelectorAll('mfrac')].slice(0, 50).map(f => {
  const top = f.children[0].getBoundingClientRect(), bottom = f.children[1].getBoundingClientRect();
  return [top.bottom, bottom.top, top.width, bottom.width];
});
const text = document.body.innerText;
const out = {count: maths.length, empty: boxes.filter(b => b.width < 1 || b.height < 1).length,
             tallest: Math.max(...boxes.map(b => b.height)), fracs: fracs,
             latex: ['\\\\frac', '\\\\begin', '\\\\sin', '$$', '\\\\left'].filter(s => text.includes(s)),
             images: [...document.images].filter(i => i.complete && i.naturalWidth > 0).length};
const pre = document.createElement('pre'); pre.id = 'probe'; pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"""


@pytest.fixture(scope="module")
def double_page(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("report") / "double_pendulum.html"
    report.write(load_quiet("double_pendulum"), path, params=DOUBLE)
    return path


def test_page_is_self_contained(double_page):
    page = double_page.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing fetched at view time
    assert "<script" not in page and "<link" not in page and "@import" not in page
    assert page.count("<math") > 20 and "<mfrac>" in page
    assert page.count('src="data:image/png;base64,') == 2
    for heading in ("Denavit-Hartenberg parameters", "Inertial parameters", "Equations of motion",
                    "Forward dynamics in closed form", "Operation counts", "Cross-check", "All methods agree"):
        assert heading in page
    visible = re.sub(r'alttext="[^"]*"', "", page)  # LaTeX lives only in alttext attributes
    assert "\\frac" not in visible and "\\sin" not in visible
    assert 'alttext="M11 = L_{1}^{2} m_{1}' in page  # each formula keeps its LaTeX source


def test_large_arm_is_summarised():
    page = report.build(load_quiet("puma560"), cross_check=False, plots=False)
    assert re.search(r"more than 40 terms expanded: [^<]*h_1 \(\d{3,} terms\)", page)  # h_1: over a hundred terms
    assert len(page) < 1_000_000
    assert "<math" in page and "<h2 id='counts'>" in page
    assert "6.776" not in page  # rounding noise (1e-21 coefficients) is not displayed


def test_symbolic_arm_without_values_explains_missing_plots():
    page = report.build(load_quiet("double_pendulum"), cross_check=False)
    assert "Plots need numbers for L1, L2, m1, m2" in page and "data:image/png" not in page


def test_cli_report(tmp_path):
    target = tmp_path / "r.html"
    args = ["report", "stanford_modified", "-o", str(target), "--no-plots", "--no-check"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "<math" in target.read_text(encoding="utf-8")
    bad = runner.invoke(app, ["report", "stanford_modified", "-o", str(tmp_path / "missing" / "r.html")])
    assert bad.exit_code == 2 and bad.output.count("error:") == 1


def _chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)  # a hang guard only


@needs_chromium
def test_chromium_renders_the_formulas(double_page, tmp_path):
    """The page as Chromium lays it out: every formula has a box, fractions stack (numerator above the
    denominator: MathML rendered, not shown as text), no LaTeX source is visible, and the plots load."""
    probed = tmp_path / "probed.html"
    probed.write_text(double_page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    done = _chromium(["--dump-dom", probed.as_uri()], tmp_path / "profile-dom")
    match = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert match, f"no probe output from Chromium: {done.stderr[-500:]}"
    data = json.loads(match.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    assert data["count"] > 20 and data["empty"] == 0
    assert data["latex"] == []
    assert data["images"] == 2
    assert data["fracs"] and all(top <= bottom + 0.5 for top, bottom, _, _ in data["fracs"])


@needs_chromium
def test_chromium_screenshot_is_not_blank(double_page, tmp_path):
    from matplotlib.image import imread

    shot = tmp_path / "shot.png"
    done = _chromium([f"--screenshot={shot}", "--window-size=1000,1400", double_page.as_uri()], tmp_path / "profile")
    assert shot.exists(), done.stderr[-500:]
    pixels = imread(shot)[..., :3]
    ink = np.any(pixels < 0.8, axis=-1)  # anything clearly darker than the white page
    assert 0.01 < ink.mean() < 0.6
    assert len(np.unique((pixels * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 50  # text, rules, colours
    rows = np.flatnonzero(ink.any(axis=1))
    assert rows.max() - rows.min() > 700  # content runs down the page, not a single line


def test_placement_robot_leaves_kane_out_of_counts_and_check():
    """Kane's algorithm refuses fixed placements (URDF imports): the page says so instead of failing."""
    from tests.conftest import random_robot

    robot = random_robot(2, 2, "modified", extras=False)
    c, s = np.cos(0.4), np.sin(0.4)
    placement = [[c, -s, 0, 0.1], [s, c, 0, 0.2], [0, 0, 1, -0.1], [0, 0, 0, 1]]
    robot = robot.replace(links=(robot.links[0], robot.links[1].replace(placement=placement)))
    page = report.build(robot, plots=False)
    assert page.count("not applicable (fixed placements)") == 2  # the count table and the cross-check
    assert "All methods agree" in page and "lagrange-euler" in page
    counts = page[page.index("<h2 id='counts'>"):page.index("<h2 id='check'>")]
    assert "Kane" in counts and "cheapest straight-line program" in counts

"""The report stays small on any arm: the Panda (a 9-joint URDF tree with a mimic finger, nested equations) gives a
page under 2 MB that lists no zero entry of M, draws M's sparsity pattern, names its input file without the path,
and that headless Chromium renders; trees have their structural zeros in the pattern; 10 or more coordinates get
comma-separated indices."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from benchmarks.urdf_survey import robots_directory

import robodyn as rd
from robodyn.report import page as report
from tests.report.test_report import _chromium, needs_chromium

ROOT = Path(__file__).resolve().parents[2]


def _panda_urdf() -> Path:
    """The Panda of example-robot-data (a test dependency), or skip."""
    directory = robots_directory()
    path = None if directory is None else directory / "panda_description" / "urdf" / "panda.urdf"
    if path is None or not path.is_file():
        pytest.skip("example-robot-data is not installed, or ships no panda.urdf")
    return path


@pytest.fixture(scope="module")
def panda_page(tmp_path_factory) -> tuple[Path, Path]:
    urdf = _panda_urdf()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = rd.load(str(urdf))
    path = tmp_path_factory.mktemp("report") / "panda.html"
    report.write(robot, path)
    return urdf, path


def test_panda_page_is_small_and_lists_no_zero_entry(panda_page):
    urdf, path = panda_page
    page = path.read_text(encoding="utf-8")
    assert path.stat().st_size < 2_000_000
    assert not re.search(r'alttext="M\d+ = 0"', page)  # M's zeros are in the picture, not listed
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg" class="pattern"') == 1
    assert "7 of the 36 entries of the upper triangle are zero" in page  # the fingers against joints 1 to 7
    assert "Source: panda.urdf" in page and str(urdf.parent) not in page
    assert "nested form" in page and "Not expanded (expanding each would pass 2,000 terms): " in page


@needs_chromium
def test_chromium_screenshots_the_panda_page(panda_page, tmp_path):
    from matplotlib.image import imread

    _, path = panda_page
    shot = tmp_path / "panda.png"
    done = _chromium([f"--screenshot={shot}", "--window-size=1000,3000", path.as_uri()], tmp_path / "profile")
    assert shot.exists(), done.stderr[-500:]
    pixels = imread(shot)[..., :3]
    ink = np.any(pixels < 0.8, axis=-1)
    assert 0.01 < ink.mean() < 0.6
    rows = np.flatnonzero(ink.any(axis=1))
    assert rows.max() - rows.min() > 2000  # tables, the equations and the pattern run down the page


def test_tree_pattern_has_the_structural_zeros():
    """M[i, k] = 0 where neither joint is an ancestor of the other (two arms on a torso); the pattern draws each
    zero entry white on both sides of the diagonal."""
    robot = rd.load(str(ROOT / "tests" / "data" / "torso_two_arms.yaml"))
    eqs = rd.derive(robot)
    elements = report._elements(eqs, "M")

    def ancestors(k: int) -> set[int]:
        out = set()
        while k >= 0:
            out.add(k)
            k = robot.parents[k]
        return out

    apart = {(i + 1, k + 1) for i in range(robot.n) for k in range(i, robot.n)
             if i not in ancestors(k) and k not in ancestors(i)}
    zeros = {e.indices for e in elements if e.zero}
    assert apart and apart <= zeros
    svg = report.sparsity_svg(elements, robot.n)
    white = sum(2 if i != k else 1 for i, k in zeros)
    assert svg.count('fill="#ffffff"') == white
    assert svg.count("<rect") == robot.n**2 + 1  # one square per entry and the frame


def test_ten_coordinates_have_comma_separated_indices():
    wide = "<msub><mi>M</mi><mrow><mn>1</mn><mo>,</mo><mn>10</mn></mrow></msub>"
    assert report._indexed("M", 1, 10, wide=True) == wide
    assert report._indexed("M", 1, 2) == "<msub><mi>M</mi><mn>12</mn></msub>"
    links = [{"joint": "R", "a": 0.3, "mass": 1.5, "com": [0.15, 0, 0], "inertia": [0.01, 0.02, 0.02]}] * 10
    page = report.build(rd.Manipulator.from_dh(links, name="planar10"), cross_check=False, plots=False)
    assert "M_1,10" in page and "M_110" not in page

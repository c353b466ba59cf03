"""``robodyn demo`` on a model with floating-point data compares the methods as ``robodyn check`` does: numerically,
at random states (an exact comparison called the rounding differences of two methods a disagreement)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from robodyn.analysis.check import check
from robodyn.cli import app
from robodyn.formats import load as loading
from robodyn.report.demo import run

FLOAT_MODEL = """name: float_arm
gravity: [9.81, 0, 0]
links:
  - {joint: R, a: 0.7, alpha: 0, d: 0, theta: 0, mass: 1.3}
  - {joint: R, a: 0.45, alpha: 0.3, d: 0.1, theta: 0, mass: 0.9}
"""


@pytest.fixture
def model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path / "cache"))  # not the user's compile cache
    path = tmp_path / "float_arm.yaml"
    path.write_text(FLOAT_MODEL)
    return path


def test_demo_of_a_float_model_agrees_where_check_agrees(model: Path, tmp_path: Path) -> None:
    assert check(loading.load(str(model))).agree
    summary = run(str(model), tmp_path / "out")
    assert summary.mode == "numeric" and summary.agree and summary.ok


def test_cli_demo_of_a_float_model_exits_0(model: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["demo", str(model), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "methods agree" in result.output and "DISAGREE" not in result.output

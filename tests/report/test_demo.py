"""The main job (``robodyn demo``, what ./scripts/demo runs), on a small arm so that it is quick."""

from __future__ import annotations

import re
import shutil

import pytest
from typer.testing import CliRunner

from robodyn.cli import app
from robodyn.report.demo import run


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBODYN_CACHE", str(tmp_path / "cache"))  # not the user's compile cache


def test_demo_derives_checks_counts_and_writes_code(tmp_path):
    summary = run("two_link_payload", tmp_path / "out")
    assert summary.agree and summary.ok and summary.mode == "exact"
    programs = {p.output: p for p in summary.programs}
    assert programs["tau"].multiplications <= 14 and programs["tau"].additions <= 14  # seed 004's goal
    assert {f.name for f in summary.code.files} == {"two_link_payload.h", "two_link_payload.c"}
    assert all(f.exists() for f in [*summary.outputs, *summary.code.files])
    if shutil.which("cc") or shutil.which("gcc"):
        assert summary.code.compiled and summary.code.max_relative_difference < 1e-12
    else:
        pytest.skip("no C compiler: the demo writes the C without compiling it")


def test_cli_demo_prints_the_counts(tmp_path):
    result = CliRunner().invoke(app, ["demo", "double_pendulum", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "methods agree" in result.output
    assert re.search(r"inverse dynamics tau\s+│\s+\d+\s+│\s+\d+", result.output)
    assert (tmp_path / "codegen" / "double_pendulum.c").exists()

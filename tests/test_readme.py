"""The README runs as printed: its Python blocks as one script, each ``robodyn ...`` line of its bash blocks as a
command, in a fresh directory; and it stays a short, 120-column page (the long text lives in docs/guide).

The timeouts are guards against a hang, not claims about speed."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
#: The robodyn of the interpreter running the tests (the installed console script, not whatever is on PATH).
ROBODYN = Path(sys.executable).parent / "robodyn"
HANG_GUARD_S = 600
MAX_LINE = 120  # the repository's line length (ruff's line-length)
MAX_BYTES = 16 * 1024


def blocks(language: str) -> list[str]:
    """The bodies of the README's fenced blocks of that language, in order."""
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)


def commands() -> list[str]:
    """Every line of a bash block that runs robodyn, its trailing comment removed."""
    found = []
    for block in blocks("bash"):
        for line in block.splitlines():
            if line.startswith("robodyn "):
                found.append(" ".join(shlex.split(line, comments=True)))
    return found


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A clean environment: robodyn's compile cache in the test's own directory, plots without a display."""
    return {**os.environ, "ROBODYN_CACHE": str(tmp_path / "cache"), "MPLBACKEND": "Agg"}


def test_python_blocks_run_as_one_script(tmp_path: Path, env: dict[str, str]) -> None:
    code = "\n".join(blocks("python"))
    assert "import robodyn" in code
    work = tmp_path / "work"
    work.mkdir()
    result = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True,
                            timeout=HANG_GUARD_S)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]


def test_readme_has_commands_to_run() -> None:
    assert len(commands()) >= 5
    assert ROBODYN.is_file(), ROBODYN


@pytest.mark.parametrize("command", commands())
def test_command_runs(command: str, tmp_path: Path, env: dict[str, str]) -> None:
    argv = shlex.split(command)
    result = subprocess.run([str(ROBODYN), *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=HANG_GUARD_S)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]


def test_readme_is_short_and_within_the_line_length() -> None:
    data = README.read_bytes()
    assert len(data) < MAX_BYTES, f"README.md is {len(data)} bytes: move detail to docs/guide"
    long = [f"{n}: {len(line)}" for n, line in enumerate(data.decode("utf-8").splitlines(), start=1)
            if len(line) > MAX_LINE]
    assert not long, "README lines over 120 characters (line: length): " + ", ".join(long)

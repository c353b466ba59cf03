"""rd.compile's defaults for large robots (issue 43, point 5): an output or frame left out of ``outputs`` is built
on its first call with the same options and said once (a BuildNote), rather than a method the object offers and
refuses; a build that takes more than a second tells its stages on a terminal and ends with one line of its times
(the programs', the C compiler's), while on a pipe it writes nothing."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.model.manipulator import RigidBody
from tests.conftest import load_quiet
from tests.helpers import assert_close, has_c_compiler

DATA = Path(__file__).resolve().parents[1] / "data"

G = {"g": 9.81}  # (the test tree's one symbol)
compiler = pytest.mark.skipif(not has_c_compiler(), reason="no C compiler")


def _floating_torso() -> rd.Manipulator:
    torso = load_quiet(str(DATA / "torso_two_arms.yaml"))
    return torso.replace(floating=True, base=RigidBody(mass=5, com=[0, 0, "1/10"], inertia=["1/10", "1/5", "3/10"]))


@compiler
def test_an_output_left_out_is_built_on_its_first_call_and_said_once(tmp_path: Path) -> None:
    robot = _floating_torso()
    dyn = rd.compile(robot, cache=tmp_path, outputs=["tau"])
    rng = np.random.default_rng(3)
    q = rng.uniform(-1, 1, robot.nq)
    q[3:7] /= np.linalg.norm(q[3:7])
    with pytest.warns(rd.BuildNote, match=r"center_of_mass was not compiled .*outputs=\[\.\.\., 'com'\]") as said:
        com = dyn.center_of_mass(q, params=G)
    assert len(said) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once: the second call builds nothing and says nothing
        again = dyn.center_of_mass(np.stack([q, q]), params=G)
    assert_close(com, numeric.center_of_mass(robot, q, params=G), 1e-12)
    assert np.array_equal(again[1], com) and dyn.routines == ("inverse_dynamics",)


def _stderr_of(code: str, terminal: bool, cache: Path) -> str:
    """What ``python -c code`` writes to its stderr, a pseudo-terminal's or a pipe's."""
    env = {**os.environ, "ROBODYN_CACHE": str(cache), "TERM": "xterm", "COLUMNS": "120"}
    if not terminal:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                              timeout=600).stderr
    main, side = pty.openpty()
    process = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=side, env=env)
    os.close(side)
    chunks = []
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the process closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main)
    assert process.wait(timeout=600) == 0, b"".join(chunks).decode(errors="replace")
    return b"".join(chunks).decode(errors="replace")


@compiler
def test_a_long_build_tells_its_times_on_a_terminal_and_nothing_on_a_pipe(tmp_path: Path) -> None:
    code = "import robodyn as rd; rd.compile(rd.load('puma560'), outputs=['tau', 'M', 'forward'])"
    shown = _stderr_of(code, True, tmp_path / "a")
    assert "robodyn: compiled 3 routines of puma560 in " in shown, shown
    assert "programs " in shown and " s), cached in " in shown
    assert _stderr_of(code, False, tmp_path / "b") == ""


@compiler
def test_large_c_is_compiled_at_o1_with_the_same_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """C over toolchain.LARGE_C_BYTES (here every C) compiles at -O1, said in the build's stages; the numbers are
    those of the -O3 library (no fused multiply-adds at either level)."""
    from robodyn.program.progress import reporting
    from robodyn.runtime import toolchain

    robot = load_quiet("puma560")
    fast = rd.compile(robot, cache=tmp_path / "O3", outputs=["tau", "M"])
    monkeypatch.setattr(toolchain, "LARGE_C_BYTES", 0)
    stages: list[str] = []
    with reporting(stages.append):
        small = rd.compile(robot, cache=tmp_path / "O1", outputs=["tau", "M"])
    assert any(" -O1 on " in step for step in stages), stages
    assert toolchain.sized_command(["cc", "-O3", "-fPIC"], 1) == ["cc", "-O1", "-fPIC"]
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.uniform(-2, 2, (3, 64, robot.n))
    assert_close(small.inverse_dynamics(q, qd, qdd), fast.inverse_dynamics(q, qd, qdd), 1e-13)
    assert_close(small.mass_matrix(q), fast.mass_matrix(q), 1e-13)

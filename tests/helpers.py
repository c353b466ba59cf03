"""Test helpers: symbolic equivalence and numeric evaluation of sympy results."""

from __future__ import annotations

import numpy as np
import sympy

from robodyn.algebra import is_zero
from robodyn.symbols import joint_symbols


def equivalent(a, b, n: int) -> bool:
    """a == b as functions (angle sums expanded, then the exact canonical-form test)."""
    q = joint_symbols(n).q
    a, b = sympy.Matrix(a) if hasattr(a, "shape") else a, sympy.Matrix(b) if hasattr(b, "shape") else b
    diff = sympy.expand_trig(sympy.expand(a - b))
    if isinstance(diff, sympy.MatrixBase):
        return all(is_zero(x, q) for x in diff)
    return is_zero(diff, q)


def numeric(expr, values: dict) -> np.ndarray:
    """Evaluate a sympy matrix at numeric values (dict of sympy symbol -> float)."""
    return np.array(sympy.Matrix(expr).subs(values).evalf(), dtype=float)


def state_values(n: int, q, qd=None, qdd=None) -> dict:
    s = joint_symbols(n)
    values = {s.q[i]: float(q[i]) for i in range(n)}
    if qd is not None:
        values.update({s.qd[i]: float(qd[i]) for i in range(n)})
    if qdd is not None:
        values.update({s.qdd[i]: float(qdd[i]) for i in range(n)})
    return values


def assert_close(actual, expected, rtol: float = 1e-7, *, scale: float | None = None, err_msg: str = "") -> None:
    """``actual`` equals ``expected`` to ``rtol`` relative, with an absolute floor ``atol = rtol * scale``.

    A relative tolerance alone fails on entries that are rounding-level zeros (a torque at rest, a
    gravity-free component, an off-diagonal M entry, the acceleration of a settled controller): their
    last bits depend on the BLAS kernels of the machine (OpenBLAS picks them per CPU at run time) and
    on the batch size, so 6.57e-17 against 6.62e-17 is agreement, not a 1% error. ``scale`` is the
    natural size of the quantity (default: the largest ``|expected|``, 1 where that is zero); the
    relative claim ``rtol`` is kept as it is for every entry of that size."""
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    if scale is None:
        scale = float(np.max(np.abs(expected))) if expected.size else 0.0
        scale = scale if np.isfinite(scale) and scale > 0 else 1.0
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale, err_msg=err_msg)


def finite_difference_linearization(robot, q0, qd0, tau0, eps: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """(A, B) of x' = (qd, forward_dynamics(q, qd, tau)) at (q0, qd0, tau0) by central differences of the numeric
    engine: the independent check of ``robodyn.analysis.linear.linearize``."""
    from robodyn import numeric

    nv = robot.nv

    def f(q, qd, tau):
        return np.concatenate([qd, numeric.forward_dynamics(robot, q, qd, tau)])

    A, B = np.zeros((2 * nv, 2 * nv)), np.zeros((2 * nv, nv))
    for j in range(nv):
        e = np.eye(nv)[j] * eps
        A[:, j] = (f(q0 + e, qd0, tau0) - f(q0 - e, qd0, tau0)) / (2 * eps)
        A[:, nv + j] = (f(q0, qd0 + e, tau0) - f(q0, qd0 - e, tau0)) / (2 * eps)
        B[:, j] = (f(q0, qd0, tau0 + e) - f(q0, qd0, tau0 - e)) / (2 * eps)
    return A, B


def coupled_cli_outcomes(model: str, commands, tmp_path) -> dict[str, int]:
    """Each CLI command (its name and options, ``{tmp}`` for ``tmp_path``) on ``model``, a robot with coupled joints:
    it works (exit 0) or refuses in one line saying that the command does not take coupled joints (exit 2), never a
    traceback. The exit code of each, keyed by the command's first two words."""
    from typer.testing import CliRunner

    from robodyn.cli import app

    runner = CliRunner()
    outcome: dict[str, int] = {}
    for command in commands:
        args = [command[0], model, *(a.format(tmp=tmp_path) for a in command[1:])]
        result = runner.invoke(app, args)
        assert result.exit_code in (0, 2), (args, result.output)
        assert "Traceback" not in result.output, args
        if result.exit_code == 2:
            lines = [line for line in result.output.splitlines() if line.strip()]
            assert len(lines) == 1 and "coupled joints" in lines[0], (args, result.output)
        outcome[" ".join(command[:2])] = result.exit_code
    return outcome


def has_c_compiler() -> bool:
    """Whether rd.compile finds a C compiler ($CC naming one that is not there counts as none)."""
    from robodyn.runtime.toolchain import CompileError, find_compiler

    try:
        return find_compiler() is not None
    except CompileError:
        return False


def quick_compiler(directory, opt: str = "-O0") -> list[str]:
    """A C compiler command for rd.compile whose last -O is ``opt`` (a wrapper script in ``directory``: rd.compile puts
    its own -O3 first), for tests of large programs' numbers, not their speed; pytest.skip without a compiler."""
    import os
    import shutil

    import pytest

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    wrapper = directory / f"cc{opt}"
    wrapper.write_text(f'#!/bin/sh\nexec {cc} "$@" {opt}\n')
    os.chmod(wrapper, 0o755)
    return [str(wrapper)]

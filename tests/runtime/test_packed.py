"""M's packed upper triangle (``M_packed``, ``CompiledDynamics.mass_matrix_packed``): the entries of M above and on
the diagonal, row by row (``M[np.triu_indices(n)]``), bit for bit the compiled M's in C and the generated NumPy's in
NumPy, as a user reaches it: in a fresh process, through ``rd.compile`` and the command line."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import load_quiet
from tests.helpers import has_c_compiler

SCRIPT = textwrap.dedent("""
    import warnings
    import numpy as np
    import robodyn as rd

    warnings.simplefilter("ignore", rd.ModelWarning)
    rng = np.random.default_rng(3)
    for name, backend in (("puma560", "c"), ("puma560", "numpy")):
        robot = rd.load(name)
        n = robot.n
        dyn = rd.compile(robot, outputs=["M", "M_packed"], backend=backend, cache=CACHE)
        q = rng.uniform(-3, 3, (67, n))
        M, P = dyn.mass_matrix(q), dyn.mass_matrix_packed(q)
        assert P.shape == (67, n * (n + 1) // 2), P.shape
        assert np.array_equal(P, M[:, *np.triu_indices(n)]), name
        assert np.array_equal(dyn.mass_matrix_packed(q[5]), P[5])
        out = np.full_like(P, np.nan)
        assert dyn.mass_matrix_packed(q, out=out) is out and np.array_equal(out, P)
        # the symmetric matrix back from its triangle: LAPACK's lower packed order of M
        full = np.zeros((n, n))
        full[np.triu_indices(n)] = P[0]
        assert np.array_equal(full + np.triu(full, 1).T, M[0])
    print("ok")
""")


@pytest.mark.skipif(not has_c_compiler(), reason="no C compiler")
def test_packed_triangle_is_ms_upper_triangle_bit_for_bit(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-c", SCRIPT.replace("CACHE", repr(str(tmp_path)))],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def test_codegen_writes_the_packed_routine_in_every_language(tmp_path: Path) -> None:
    """A routine of n(n+1)/2 entries in C (``robodyn codegen --outputs M_packed``), Fortran, NumPy and JAX, only
    when asked for."""
    from typer.testing import CliRunner

    from robodyn import codegen
    from robodyn.cli import app

    result = CliRunner().invoke(app, ["codegen", "puma560", "--lang", "c", "--outputs", "M_packed", "-o",
                                      str(tmp_path)])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "puma560.c").read_text()
    assert "void puma560_mass_matrix_packed_batch(" in text and "puma560_mass_matrix(" not in text
    assert "Mp[21 * s + 20]" in text and "Mp[21 * s + 21]" not in text
    from robodyn.program.outputs import DEFAULT_KEYS  # (what rd.compile and codegen build unless told)

    assert "M_packed" not in DEFAULT_KEYS
    spec = codegen.module_spec(load_quiet("puma560"), ["M_packed"])
    assert spec.routine("mass_matrix_packed").output.shape == (21,)
    for language, routine in (("fortran", "subroutine mass_matrix_packed("), ("numpy", "def mass_matrix_packed("),
                              ("jax", "def mass_matrix_packed(")):
        (text,) = codegen.generate(None, language, spec=spec).values()
        assert routine in text.lower() and "mass_matrix(" not in text.replace("mass_matrix_packed", ""), language

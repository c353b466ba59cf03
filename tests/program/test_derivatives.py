"""The derivatives of the dynamics as program outputs (issue 14, item 1): dtau/dq, dtau/dqd, dqdd/dq, dqdd/dqd
and dqdd/dtau = M^-1, from the Newton-Euler recursion differentiated in forward mode.

Checked against Pinocchio's computeRNEADerivatives and computeABADerivatives (an independent, analytical
implementation: Carpentier and Mansard 2018) on numeric arms, and against central differences of
robodyn.numeric on symbolic ones; emitted in C, Fortran, NumPy and JAX alike.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from benchmarks.urdf_survey import robots_directory

import robodyn as rd
from robodyn import codegen, numeric
from robodyn.program import build
from robodyn.recursions.forward_mode import Dual, DualOps, constant, jacobian, seeded
from robodyn.recursions.scalars import SymengineOps
from robodyn.runtime.entry import load_library
from tests.conftest import load_quiet, random_params, random_robot

TOL = 1e-9
N = 4


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(a) - b)) / max(float(np.max(np.abs(b))), 1.0))


def _states(n: int, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-2, 2, (N, n)) for _ in range(4))


@functools.cache
def _numpy(robot: rd.Manipulator) -> rd.CompiledDynamics:
    return rd.compile(robot, outputs=("dtau", "dqdd"), backend="numpy")


# -- the dual numbers ------------------------------------------------------------------------------------


def test_duals_follow_the_chain_rule() -> None:
    """d(x y + 3 x - 1/x) and d cos(q + 0.2) on symengine scalars, against symengine's own diff."""
    import symengine as se

    x, y = se.symbols("x y")
    ops = DualOps(SymengineOps())
    dx, dy = seeded([x, y], "v")
    f = dx * dy + 3 * dx - ops.reciprocal(dx) + 1 - dy * 0
    expected = x * y + 3 * x - 1 / x + 1
    assert se.expand(f.value - expected) == 0
    for j, v in enumerate((x, y)):
        assert se.expand(f.derivative(("v", j)) - expected.diff(v)) == 0
    c, s = ops.cos_sin(0.2, dx)
    at = {x: 0.7}
    assert float(c.derivative(("v", 0)).xreplace(at)) == pytest.approx(-np.sin(0.9), abs=1e-15)
    assert float(s.derivative(("v", 0)).xreplace(at)) == pytest.approx(np.cos(0.9), abs=1e-15)
    assert (dx * 0) == 0 and dx * 1 is dx and not dy.d.get(("v", 0))  # literals fold; no cross-direction entry
    assert isinstance(constant([x])[0], Dual) and jacobian([f, 0], "v", 2)[1] == [0, 0]


# -- against Pinocchio ------------------------------------------------------------------------------------

pin = pytest.importorskip("pinocchio")
from robodyn.formats.pinocchio import to_pinocchio  # noqa: E402  (after the skip)


def _against_pinocchio(robot: rd.Manipulator, model: object, dyn: rd.CompiledDynamics, seed: int) -> None:
    """Pinocchio's model has no joint damping D: added on its side (dtau/dqd + D; its forward dynamics run at
    tau - D qd, then dqdd/dqd - M^-1 D)."""
    data = model.createData()  # type: ignore[attr-defined]
    q, qd, qdd, tau = _states(robot.n, seed)
    D = np.diag([float(link.damping) for link in robot.links])
    d_q, d_qd = dyn.inverse_dynamics_derivatives(q, qd, qdd)
    f_q, f_qd, f_tau = dyn.forward_dynamics_derivatives(q, qd, tau)
    for k in range(N):
        # Pinocchio returns views of its data, which the next call overwrites: copied at once
        p_q, p_qd, p_qdd = (np.array(x) for x in pin.computeRNEADerivatives(model, data, q[k], qd[k], qdd[k]))
        p_qd += D
        a_q, a_qd, a_tau = (np.array(x) for x in pin.computeABADerivatives(model, data, q[k], qd[k],
                                                                            tau[k] - D @ qd[k]))
        a_tau = np.triu(a_tau) + np.triu(a_tau, 1).T  # Pinocchio fills the upper triangle of M^-1
        a_qd -= a_tau @ D
        for got, ref, what in ((d_q[k], p_q, "dtau/dq"), (d_qd[k], p_qd, "dtau/dqd"), (f_q[k], a_q, "dqdd/dq"),
                               (f_qd[k], a_qd, "dqdd/dqd"), (f_tau[k], a_tau, "dqdd/dtau")):
            assert _rel(got, ref) < TOL, f"{robot.name} {what} at state {k}: {_rel(got, ref):.2e}"
        M = numeric.mass_matrix(robot, q[k])
        assert _rel(p_qdd, M) < TOL  # dtau/dqdd = M, the one derivative not generated


@pytest.mark.parametrize("name", ["puma560", "stanford_arm", "industrial_6r"])
def test_built_in_robots_match_pinocchio(name: str) -> None:
    robot = load_quiet(name)
    _against_pinocchio(robot, to_pinocchio(robot), _numpy(robot), seed=1)


@pytest.mark.parametrize(("seed", "convention"), [(11, "standard"), (12, "modified")])
def test_random_arms_match_pinocchio(seed: int, convention: str) -> None:
    """Mixed R/P joints, general twists; no damping or armature (which Pinocchio's model does not carry)."""
    robot = random_robot(seed, 5, convention, extras=False)
    _against_pinocchio(robot, to_pinocchio(robot), _numpy(robot), seed=seed)


def test_panda_tree_matches_pinocchio() -> None:
    """The Panda with its two fingers (a tree of 9 joints) from example-robot-data's URDF, against Pinocchio's
    model read from the same file."""
    directory = robots_directory()
    if directory is None:
        pytest.skip("example-robot-data not installed")
    path = directory / "panda_description" / "urdf" / "panda.urdf"
    with pytest.warns(rd.ModelWarning, match="mimic relations dropped"):
        robot = rd.load(path, mimic="independent")
    _against_pinocchio(robot, pin.buildModelFromUrdf(str(path)), _numpy(robot), seed=3)


# -- against central differences (symbolic parameters) --------------------------------------------------


@pytest.mark.parametrize("name", ["two_link_payload", "stanford_modified"])
def test_symbolic_arms_match_central_differences(name: str) -> None:
    """The derivatives of an arm with symbolic parameters (bound at run time) against central differences
    of robodyn.numeric's inverse and forward dynamics (step 1e-6: agreement to about 1e-8)."""
    robot = load_quiet(name)
    params = random_params(robot, np.random.default_rng(4))
    dyn = _numpy(robot)
    values = [params[p] for p in dyn.parameters]
    q, qd, qdd, tau = (x[0] for x in _states(robot.n, 5))
    d_q, d_qd = dyn.inverse_dynamics_derivatives(q, qd, qdd, params=values)
    f_q, f_qd, f_tau = dyn.forward_dynamics_derivatives(q, qd, tau, params=values)
    h, eye = 1e-6, np.eye(robot.n)

    def central(f: object, x: np.ndarray, at: int) -> np.ndarray:
        args = [q, qd, qdd if f is numeric.inverse_dynamics else tau]
        columns = []
        for e in eye:
            plus, minus = list(args), list(args)
            plus[at], minus[at] = x + h * e, x - h * e
            columns.append((f(robot, *plus, params=params) - f(robot, *minus, params=params)) / (2 * h))  # type: ignore[operator]
        return np.array(columns).T

    for got, f, x, at in ((d_q, numeric.inverse_dynamics, q, 0), (d_qd, numeric.inverse_dynamics, qd, 1),
                          (f_q, numeric.forward_dynamics, q, 0), (f_qd, numeric.forward_dynamics, qd, 1),
                          (f_tau, numeric.forward_dynamics, tau, 2)):
        assert _rel(got, central(f, x, at)) < 1e-7, (name, f.__name__, at)
    assert np.allclose(f_tau @ numeric.mass_matrix(robot, q, params=params), np.eye(robot.n), atol=1e-10)


# -- in every language --------------------------------------------------------------------------------


def _spec() -> codegen.ModuleSpec:
    return codegen.module_spec(load_quiet("two_link_payload"), ("tau", "dtau", "dqdd"))


def _stacked(dyn: rd.CompiledDynamics) -> object:
    """A compiled module's derivative routine as (N, 2 or 3, n, n), as the generated modules return it."""
    return lambda routine, values, *args: np.stack(getattr(dyn, routine)(*args, params=values), axis=1)


def _check_language(call: object, reference: rd.CompiledDynamics) -> None:
    robot = load_quiet("two_link_payload")
    params = random_params(robot, np.random.default_rng(6))
    values = [params[p] for p in reference.parameters]
    q, qd, qdd, tau = _states(robot.n, 7)
    for routine, args in (("inverse_dynamics_derivatives", (q, qd, qdd)),
                          ("forward_dynamics_derivatives", (q, qd, tau))):
        expected = _stacked(reference)(routine, values, *args)  # type: ignore[operator]
        got = call(routine, values, *args)  # type: ignore[operator]
        assert got.shape == expected.shape and _rel(got, expected) < 1e-12, routine


def test_c_derivatives(tmp_path: Path) -> None:
    robot = load_quiet("two_link_payload")
    dyn = rd.compile(robot, outputs=("tau", "dtau", "dqdd"), cache=tmp_path, spec=_spec())
    _check_language(_stacked(dyn), _numpy(robot))
    d_q, d_qd = dyn.inverse_dynamics_derivatives(*(x[0] for x in _states(robot.n, 8)[:3]),
                                                 params=[1.0] * len(dyn.parameters))
    assert d_q.shape == d_qd.shape == (2, 2)


@pytest.mark.skipif(shutil.which("gfortran") is None, reason="gfortran not installed")
def test_fortran_derivatives(tmp_path: Path) -> None:
    """C's (2, n, n) layout from Fortran's dtau(n, n, 2) (gfortran -Werror)."""
    spec = _spec()
    ((filename, text),) = codegen.generate(None, "fortran", spec=spec).items()
    (tmp_path / filename).write_text(text)
    library = tmp_path / "m.so"
    flags = ["-std=f2008", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O1", "-fPIC", "-shared", "-J", str(tmp_path)]
    proc = subprocess.run(["gfortran", *flags, "-o", str(library), str(tmp_path / filename)], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    _check_language(_stacked(load_library(library, spec)), _numpy(load_quiet("two_link_payload")))


@pytest.mark.parametrize("language", ["numpy", "jax"])
def test_python_derivatives(language: str) -> None:
    if language == "jax":
        jax = pytest.importorskip("jax")
        jax.config.update("jax_enable_x64", True)
    module: ModuleType = codegen.load_python(None, language, spec=_spec())
    _check_language(lambda routine, values, *args: np.asarray(getattr(module, routine)(module.constants(values),
                                                                                         *args)),
                    _numpy(load_quiet("two_link_payload")))


# -- the program -------------------------------------------------------------------------------------------


def test_derivative_outputs_share_the_program() -> None:
    """One program for tau and its derivatives shares the value statements: it costs less than the two apart;
    the inverse-dynamics derivatives need no tau input, the forward-dynamics ones do."""
    robot = load_quiet("puma560")

    def cost(outputs: tuple[str, ...]) -> int:
        c = build(robot, outputs).count()["evaluation"]
        return c.multiplications + c.additions

    assert cost(("tau", "dtau_dq", "dtau_dqd")) < cost(("tau",)) + cost(("dtau_dq", "dtau_dqd"))
    assert "tau" not in build(robot, ("dtau_dq",)).inputs
    assert "tau" in build(robot, ("dqdd_dtau",)).inputs
    with pytest.raises(ValueError, match="base-parameter model"):
        build(robot, ("dtau_dq",), base=rd.identification.base_parameters(robot))

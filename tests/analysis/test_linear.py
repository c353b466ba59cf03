"""Linearised and discrete-time models (robodyn.analysis.linear; ROBMAT's wished-for extensions, seed 000 sec. 7):
A, B against finite differences of the forward dynamics, symbolic against numeric, ZOH against the
simulated linear system, the RK4 step against the continuous simulation."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import sympy
from scipy.integrate import solve_ivp
from typer.testing import CliRunner

import robodyn as rd
from robodyn import numeric
from robodyn.analysis import linear, simulation
from robodyn.cli import app
from robodyn.errors import DerivationError, ModelError
from tests.conftest import load_quiet, random_robot
from tests.helpers import assert_close

runner = CliRunner()
DOUBLE = {"L1": 1.0, "L2": 0.5, "m1": 2.0, "m2": 1.0, "g": 9.81}
STANFORD = {"m1": 5.0, "m2": 3.0, "m3": 2.0, "y1": 0.05, "z1": 0.1, "d2": 0.15, "y2": 0.1, "z3": -0.2,
            **{f"I{axis}{i}": 0.1 for axis in ("xx", "yy", "zz") for i in (1, 2, 3)}, "g": 9.81}


def finite_differences(robot, q, qd, tau, params=None, h=1e-6):
    """Central differences of f(x, u) = (qd, FD(q, qd, tau)): (A, B)."""
    n = robot.n

    def f(x, u):
        return np.concatenate([x[n:], numeric.forward_dynamics(robot, x[:n], x[n:], u, params=params)])

    x, u = np.concatenate([q, qd]), np.asarray(tau, dtype=float)
    A = np.column_stack([(f(x + h * e, u) - f(x - h * e, u)) / (2 * h) for e in np.eye(2 * n)])
    B = np.column_stack([(f(x, u + h * e) - f(x, u - h * e)) / (2 * h) for e in np.eye(n)])
    return A, B


def relative(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


CASES = [
    ("puma560", None),
    ("industrial_6r", None),
    ("stanford_arm", None),
    ("double_pendulum", DOUBLE),
    ("stanford_modified", STANFORD),
]


@pytest.mark.parametrize(("name", "params"), CASES)
def test_linearisation_matches_finite_differences(name, params):
    robot = load_quiet(name)
    rng = np.random.default_rng(7)
    n = robot.n
    q, qd, tau = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n) * 10
    lin = rd.linearize(robot, q, qd, tau, params=params)
    A, B = finite_differences(robot, q, qd, tau, params)
    assert relative(lin.A, A) < 1e-6 and relative(lin.B, B) < 1e-6
    np.testing.assert_array_equal(lin.A[:n, :n], 0)
    np.testing.assert_array_equal(lin.A[:n, n:], np.eye(n))
    assert_close(lin.qdd0, numeric.forward_dynamics(robot, q, qd, tau, params=params))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_linearisation_of_random_arms_with_damping_tip_load_payload(seed):
    """Random arms with R and P joints, damping, armature, a tip load and sometimes a payload."""
    robot = random_robot(seed, 4, "modified" if seed % 2 else "standard")
    rng = np.random.default_rng(seed)
    q, qd, tau = rng.normal(size=4), rng.normal(size=4), rng.normal(size=4)
    lin = linear.linearize(robot, q, qd, tau)
    A, B = finite_differences(robot, q, qd, tau)
    assert relative(lin.A, A) < 1e-6 and relative(lin.B, B) < 1e-6


def test_default_operating_point_is_an_equilibrium():
    robot = load_quiet("puma560")
    q = np.array([0.2, -0.4, 0.6, 0.1, 0.3, 0.2])
    lin = linear.linearize(robot, q)
    assert_close(lin.tau0, numeric.gravity(robot, q))  # G1 = 0: joint 1's axis is vertical
    np.testing.assert_allclose(lin.qdd0, 0, atol=1e-12)
    np.testing.assert_array_equal(lin.qd0, 0)


def test_equilibrium_eigenvalues_are_the_small_oscillation_frequencies():
    robot = load_quiet("double_pendulum")
    lin = linear.linearize(robot, [0.0, 0.0], params=DOUBLE)
    osc = simulation.small_oscillations(robot, [0.0, 0.0], DOUBLE)
    eig = lin.eigenvalues()
    np.testing.assert_allclose(eig.real, 0, atol=1e-9)
    np.testing.assert_allclose(np.sort(np.abs(eig.imag)), np.sort(np.repeat(2 * np.pi / osc.periods, 2)), rtol=1e-10)


@pytest.mark.parametrize(("name", "params"), [("double_pendulum", DOUBLE), ("stanford_modified", STANFORD)])
def test_symbolic_matches_numeric(name, params):
    robot = load_quiet(name)
    n = robot.n
    rng = np.random.default_rng(5)
    q, qd, tau = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    numeric_model = linear.linearize(robot, q, qd, tau, params=params)
    at_point = linear.linearize(robot, q, qd, tau, params=params, symbolic=True)
    assert at_point.symbolic and not at_point.A.free_symbols
    np.testing.assert_allclose(np.array(at_point.A.evalf(), dtype=float), numeric_model.A, rtol=1e-10, atol=1e-10)
    if n == 2:  # the general form, in q, qd, tau and the parameters, evaluated afterwards
        general = linear.linearize(robot, symbolic=True)
        s = rd.derive(robot).symbols
        names = {**params, **{str(x): v for x, v in zip([*s.q, *s.qd], [*q, *qd], strict=True)},
                 **{f"tau{i + 1}": v for i, v in enumerate(tau)}}
        evaluated = linear.evaluate(general, names)
        np.testing.assert_allclose(evaluated.A, numeric_model.A, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(evaluated.B, numeric_model.B, rtol=1e-10, atol=1e-10)


def test_symbolic_double_pendulum_at_rest_is_textbook():
    """About q = 0 (hanging along +x; q2 is the relative angle): A21 = -M0^-1 K, B2 = M0^-1 with
    V = -g ((m1+m2) L1 cos q1 + m2 L2 cos(q1+q2)), so K = g [[(m1+m2) L1 + m2 L2, m2 L2], [m2 L2, m2 L2]],
    and M0 = [[(m1+m2) L1^2 + m2 L2^2 + 2 m2 L1 L2, m2 L2^2 + m2 L1 L2], [., m2 L2^2]]."""
    lin = linear.linearize(load_quiet("double_pendulum"), [0, 0], [0, 0], symbolic=True)
    L1, L2, m1, m2, g = sympy.symbols("L1 L2 m1 m2 g")
    M12 = m2 * L2**2 + m2 * L1 * L2
    M0 = sympy.Matrix([[(m1 + m2) * L1**2 + m2 * L2**2 + 2 * m2 * L1 * L2, M12], [M12, m2 * L2**2]])
    K = g * sympy.Matrix([[(m1 + m2) * L1 + m2 * L2, m2 * L2], [m2 * L2, m2 * L2]])
    assert sympy.simplify(lin.A[2:, :2] + M0.inv() * K) == sympy.zeros(2, 2)
    assert sympy.simplify(lin.B[2:, :] - M0.inv()) == sympy.zeros(2, 2)
    assert lin.A[2:, 2:] == sympy.zeros(2, 2)


def test_symbolic_refuses_large_arms():
    with pytest.raises(DerivationError, match="up to 3 joints"):
        linear.linearize(load_quiet("puma560"), np.zeros(6), symbolic=True)


def test_symbolic_refuses_an_output_matrix_in_one_line():
    """A matrix C is for numeric models: refused as a ModelError, not numpy's ambiguous truth value."""
    with pytest.raises(rd.ModelError, match="symbolic linearisation offers the outputs state, q and qd"):
        linear.linearize(load_quiet("double_pendulum"), symbolic=True, output=np.eye(4))


def test_outputs():
    robot = load_quiet("puma560")
    q = np.array([0.1, -0.3, 0.5, 0.0, 0.4, 0.0])
    tool = linear.linearize(robot, q, output="tool")
    from robodyn.numeric.kinematics import jacobian

    assert_close(tool.C[:, :6], jacobian(robot, q))  # J has rounding-level zeros (joint 1's axis is z0)
    np.testing.assert_array_equal(tool.C[:, 6:], 0)
    assert linear.linearize(robot, q, output="q").C.shape == (6, 12)
    with pytest.raises(ModelError, match="unknown output"):
        linear.linearize(robot, q, output="force")


# -- discrete time -----------------------------------------------------------------------------------


def test_zoh_matches_the_simulated_linear_system():
    """x[k+1] = Ad x[k] + Bd u[k] equals dx/dt = A x + B u integrated over each step with u held."""
    robot = load_quiet("puma560")
    lin = linear.linearize(robot, [0.1, -0.6, 0.4, 0.0, 0.3, 0.0], [0.2, 0.1, -0.1, 0.3, 0.0, 0.1])
    dt = 0.02
    disc = linear.discretize(lin, dt=dt, method="zoh")
    rng = np.random.default_rng(2)
    x = rng.normal(size=12) * 0.01
    x_disc = x.copy()
    for _ in range(25):
        u = rng.normal(size=6)
        sol = solve_ivp(lambda t, z, u=u: lin.A @ z + lin.B @ u, (0, dt), x, method="DOP853", rtol=1e-12, atol=1e-14)
        x = sol.y[:, -1]
        x_disc = disc.Ad @ x_disc + disc.Bd @ u
    assert np.max(np.abs(x_disc - x)) < 1e-9 * max(1.0, np.max(np.abs(x)))
    assert np.max(np.abs(x)) > 1e-3


def test_euler_is_first_order():
    A, B = np.array([[0.0, 1.0], [-4.0, -0.2]]), np.array([[0.0], [1.0]])
    disc = linear.discretize(A, B, dt=0.01, method="euler")
    assert_close(disc.Ad, np.eye(2) + 0.01 * A)
    assert_close(disc.Bd, 0.01 * B)
    with pytest.raises(ModelError, match="unknown method"):
        linear.discretize(A, B, dt=0.01, method="tustin-ish")


def test_discrete_linear_model_tracks_the_nonlinear_arm_near_equilibrium():
    """A small deviation from the hanging double pendulum: the ZOH model and the nonlinear simulation agree
    to second order in the deviation."""
    robot = load_quiet("double_pendulum")
    q0 = np.zeros(2)
    lin = linear.linearize(robot, q0, params=DOUBLE)
    dt, steps = 0.01, 100
    disc = linear.discretize(lin, dt=dt)
    errors = []
    for eps in (1e-3, 1e-4):
        dx0 = np.array([eps, -eps, 0.0, 0.0])
        x = dx0.copy()
        for _ in range(steps):
            x = disc.Ad @ x
        sim = simulation.simulate(robot, dt * steps, dx0[:2], dx0[2:], params=DOUBLE, method="DOP853",
                                  rtol=1e-12, atol=1e-14, samples=2)
        errors.append(np.max(np.abs(np.concatenate([sim.q[-1], sim.qd[-1]]) - x)) / eps)
    assert errors[0] < 1e-3 and errors[1] < errors[0] / 5  # relative error O(eps)


def test_rk4_step_is_fourth_order():
    robot = load_quiet("puma560")
    x0 = np.array([0.1, -0.5, 0.3, 0.2, 0.4, 0.1, 0.5, -0.2, 0.3, 0.0, 0.1, 0.2])
    tau = np.array([1.0, 20.0, 5.0, 0.1, 0.2, 0.0])
    errors = []
    for dt in (0.005, 0.0025):
        ref = simulation.simulate(robot, dt, x0[:6], x0[6:], tau, method="DOP853", rtol=1e-13, atol=1e-13, samples=2)
        exact = np.concatenate([ref.q[-1], ref.qd[-1]])
        errors.append(np.max(np.abs(linear.rk4_step(robot, x0, tau, dt) - exact)))
    assert errors[0] < 1e-6
    assert 16 < errors[0] / errors[1] < 64  # local error O(dt^5): halving dt divides it by ~32


def test_cli_linearize(tmp_path):
    params = [f"--param={k}={v}" for k, v in DOUBLE.items()]
    result = runner.invoke(app, ["linearize", "double_pendulum", "--q0", "0,0", "--dt", "0.01", "-f", "json", *params])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    lin = linear.linearize(load_quiet("double_pendulum"), [0, 0], params=DOUBLE)
    assert_close(data["A"], lin.A)
    assert_close(data["Ad"], linear.discretize(lin, dt=0.01).Ad)
    text = runner.invoke(app, ["linearize", "double_pendulum", "--symbolic", "--q0", "0,0", "--qd0", "0,0"])
    assert text.exit_code == 0 and "g/L1" in text.output
    latex = runner.invoke(app, ["linearize", "double_pendulum", "--q0", "0,0", "--dt", "0.01", "-f", "latex", *params])
    assert latex.exit_code == 0, latex.output
    rows = {line.split(" = ")[0]: line.split(" = ")[1] for line in latex.output.splitlines() if " = " in line
            and not line.startswith("%")}
    assert set(rows) == {"A", "B", "C", "D", "A_d", "B_d"}
    body = rows["A"].removeprefix(r"\left[\begin{matrix}").removesuffix(r"\end{matrix}\right]")
    assert_close([[float(x) for x in row.split("&")] for row in body.split(r"\\")], lin.A, rtol=1e-5)
    symbolic = runner.invoke(app, ["linearize", "double_pendulum", "--symbolic", "--q0", "0,0", "-f", "latex"])
    assert symbolic.exit_code == 0 and r"\frac{g}{L_{1}}" in symbolic.output
    bad = runner.invoke(app, ["linearize", "puma560", "--symbolic"])
    assert bad.exit_code == 2 and bad.output.count("error:") == 1
    for dt in ("inf", "nan", "0"):
        bad = runner.invoke(app, ["linearize", "puma560", "--dt", dt])
        assert bad.exit_code == 2 and bad.output.count("error:") == 1 and "--dt" in bad.output, bad.output
    with pytest.raises(rd.ModelError, match="finite"):
        linear.discretize(lin, dt=math.inf)

"""robodyn.codegen.casadi.to_casadi (issue 14, item 2): the program as a CasADi function, with the program's operations,
checked against robodyn.numeric and used in a small optimal-control problem solved by IPOPT (which the casadi
wheel ships). CasADi is an optional extra; these tests skip without it."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.program import build
from tests.conftest import load_quiet, random_params

ca = pytest.importorskip("casadi")
from robodyn.codegen.casadi import to_casadi  # noqa: E402  (after the skip)

DOUBLE = {"L1": 1.0, "L2": 0.7, "g": 9.81, "m1": 1.5, "m2": 1.0}


def _arithmetic(f: object) -> int:
    """The instructions of a CasADi function that compute (not inputs, outputs or constants)."""
    kinds = {ca.OP_ADD, ca.OP_SUB, ca.OP_MUL, ca.OP_DIV, ca.OP_SQ, ca.OP_SIN, ca.OP_COS}
    return sum(1 for i in range(f.n_instructions()) if f.instruction_id(i) in kinds)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["puma560", "puma560_symbolic"])
def test_the_function_has_the_programs_operations(name: str) -> None:
    """Not a lambdify of the expanded torques: the PUMA's tau is about 330 operations (the program's count, its
    constants included, since a CasADi function computes them at every call), not tens of thousands."""
    robot = load_quiet(name)
    f = to_casadi(robot)
    c = build(robot, ("tau",)).count()
    expected = sum(x.multiplications + x.additions + x.trig for x in c.values())
    assert expected - 5 <= _arithmetic(f) <= expected  # CasADi may fold an operation more, never add one
    assert f.name_in() == (["q", "qd", "qdd", "parameters"] if robot.parameters() else ["q", "qd", "qdd"])


@pytest.mark.parametrize("name", ["puma560", "two_link_payload", "stanford_arm"])
def test_the_function_is_the_dynamics(name: str) -> None:
    robot = load_quiet(name)
    rng = np.random.default_rng(3)
    params = random_params(robot, rng)
    values = [params[s.name] for s in robot.parameters()]
    f = to_casadi(robot, ("tau", "M", "forward", "dtau_dq"))
    q, qd, qdd, tau = (rng.uniform(-1.5, 1.5, robot.n) for _ in range(4))
    got = [np.array(x) for x in f(q, qd, qdd, tau, *([values] if values else []))]
    kw = {"params": params} if params else {}
    assert np.allclose(got[0].ravel(), numeric.inverse_dynamics(robot, q, qd, qdd, **kw), rtol=1e-12, atol=1e-12)
    assert np.allclose(got[1], numeric.mass_matrix(robot, q, **kw), rtol=1e-12, atol=1e-12)
    assert np.allclose(got[2].ravel(), numeric.forward_dynamics(robot, q, qd, tau, **kw), rtol=1e-10, atol=1e-10)
    dyn = rd.compile(robot, outputs=("dtau",), backend="numpy")
    d_q, _ = dyn.inverse_dynamics_derivatives(q, qd, qdd, params=values or None)
    assert np.allclose(got[3], d_q, rtol=1e-12, atol=1e-12)


def test_a_point_to_point_motion_of_the_double_pendulum_with_opti_and_ipopt() -> None:
    """Minimum-effort motion from rest at q = 0 to rest at (0.8, -0.5) in 1.5 s: 30 RK4 steps of the CasADi
    forward dynamics as constraints of casadi.Opti, solved by IPOPT; robodyn.numeric's forward dynamics, integrated
    with the same torques, retraces the solution to 1e-8 and ends at the goal."""
    robot = load_quiet("double_pendulum")
    p = [DOUBLE[s.name] for s in robot.parameters()]
    f = to_casadi(robot, ("forward",))
    N, T = 30, 1.5
    h = T / N

    def rk4(rhs: object, x: object, u: object) -> object:
        k1 = rhs(x, u)  # type: ignore[operator]
        k2 = rhs(x + h / 2 * k1, u)  # type: ignore[operator]
        k3 = rhs(x + h / 2 * k2, u)  # type: ignore[operator]
        k4 = rhs(x + h * k3, u)  # type: ignore[operator]
        return x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    opti = ca.Opti()
    X, U = opti.variable(4, N + 1), opti.variable(2, N)
    goal = np.array([0.8, -0.5, 0.0, 0.0])
    opti.subject_to(X[:, 0] == 0)
    opti.subject_to(X[:, N] == goal)
    for k in range(N):
        opti.subject_to(X[:, k + 1] == rk4(lambda x, u: ca.vertcat(x[2:], f(x[:2], x[2:], u, p)), X[:, k], U[:, k]))
    opti.minimize(ca.sumsqr(U))
    opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "sb": "yes"})
    solution = opti.solve()
    assert opti.stats()["return_status"] == "Solve_Succeeded"
    x, u = np.array(solution.value(X)), np.array(solution.value(U))

    def rhs(z: np.ndarray, torque: np.ndarray) -> np.ndarray:
        return np.concatenate([z[2:], numeric.forward_dynamics(robot, z[:2], z[2:], torque, params=DOUBLE)])

    z = np.zeros(4)
    for k in range(N):
        z = rk4(rhs, z, u[:, k])  # type: ignore[assignment]
        assert np.max(np.abs(z - x[:, k + 1])) < 1e-8, k
    assert np.max(np.abs(z - goal)) < 1e-8
    assert np.max(np.abs(u)) > 1.0  # it took effort: the pendulum was moved, not left hanging


def test_to_casadi_refuses_elements() -> None:
    with pytest.raises(ValueError, match="'elements' is EMDEG's listing"):
        to_casadi(load_quiet("two_link_fu"), ("elements",))

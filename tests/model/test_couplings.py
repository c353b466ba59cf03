"""Coupled coordinates (robodyn.model.couplings): q_tree = G q + c, tau = G^T tau_tree, M = G^T M_tree G, in the
model, the numeric engine, the program (rd.compile), rd.derive and model files."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import sympy

import robodyn as rd
from robodyn import numeric
from robodyn.errors import ModelError
from robodyn.model.couplings import Coupling
from tests.helpers import has_c_compiler


def puma() -> rd.Manipulator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        return rd.load("puma560")


#: The PUMA with a gear between its wrist joints: q5 = -2 q4 + 0.3 (link 4 follows link 3, 0-based).
GEAR = Coupling(4, 3, -2, sympy.Rational(3, 10))


def geared() -> rd.Manipulator:
    return puma().replace(couplings=(GEAR,))


def states(nv: int, count: int = 4, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q, qd, qdd = np.random.default_rng(seed).uniform(-1, 1, (3, count, nv))
    return q, qd, qdd


def test_the_map_and_its_questions() -> None:
    robot = geared()
    assert (robot.n, robot.nv, robot.independent) == (6, 5, (0, 1, 2, 3, 5))
    G, c = robot.coupling_map()
    assert G.shape == (6, 5) and G[4, 3] == -2 and G[5, 4] == 1 and c[4] == sympy.Rational(3, 10)
    assert puma().nv == 6 and puma().couplings == ()


def test_chains_are_resolved_and_errors_are_one_line() -> None:
    robot = puma().replace(couplings=(Coupling(5, 4, 3, 1), Coupling(4, 3, 2, 0.5)))
    assert {(c.joint, c.leader) for c in robot.couplings} == {(4, 3), (5, 3)}
    five = next(c for c in robot.couplings if c.joint == 5)
    assert (five.ratio, float(five.offset)) == (6, 2.5)  # q6 = 3 (2 q4 + 0.5) + 1
    base = puma()
    for couplings, message in [
        ((Coupling(9, 0),), "not a link index"),
        ((Coupling("nope", 0),), "no link is named"),
        ((Coupling(1, 1),), "cannot follow itself"),
        ((Coupling(1, 0), Coupling(1, 2)), "coupled twice"),
        ((Coupling(1, 2), Coupling(2, 1)), "cycle"),
        ((Coupling(1, 0, 0),), "ratio of 0"),
    ]:
        with pytest.raises(ModelError, match=message) as info:
            base.replace(couplings=couplings)
        assert "\n" not in str(info.value)


def test_numeric_engine_is_the_projected_tree() -> None:
    """tau = G^T tau_tree, M = G^T M G, h, G, bias likewise, against the same robot without the coupling."""
    robot, tree = geared(), puma()
    G = np.array(robot.coupling_map()[0], dtype=float)
    c = np.array(robot.coupling_map()[1], dtype=float).ravel()
    q, qd, qdd = states(robot.nv)
    qt, qdt, qddt = q @ G.T + c, qd @ G.T, qdd @ G.T
    def close(a: np.ndarray, b: np.ndarray) -> None:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())
    close(numeric.inverse_dynamics(robot, q, qd, qdd), numeric.inverse_dynamics(tree, qt, qdt, qddt) @ G)
    close(numeric.mass_matrix(robot, q), G.T @ numeric.mass_matrix(tree, qt) @ G)
    close(numeric.coriolis(robot, q, qd), numeric.coriolis(tree, qt, qdt) @ G)
    close(numeric.gravity(robot, q), numeric.gravity(tree, qt) @ G)
    close(numeric.bias_forces(robot, q, qd), numeric.bias_forces(tree, qt, qdt) @ G)
    close(numeric.friction(robot, qd), numeric.friction(tree, qdt) @ G)
    close(numeric.kinematics.jacobian(robot, q), numeric.kinematics.jacobian(tree, qt) @ G)
    for k in range(len(q)):  # one state (over floats) as in the batch
        close(numeric.inverse_dynamics(robot, q[k], qd[k], qdd[k]), numeric.inverse_dynamics(tree, qt[k], qdt[k],
                                                                                              qddt[k]) @ G)
    M = numeric.mass_matrix(robot, q)
    assert np.allclose(M, np.swapaxes(M, 1, 2)) and (np.linalg.eigvalsh(M)[:, 0] > 0).all()
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    close(numeric.forward_dynamics(robot, q, qd, tau), qdd)
    close(numeric.forward_dynamics(robot, q[0], qd[0], tau[0]), qdd[0])
    with pytest.raises(ValueError, match=r"shape \(5,\) or \(N, 5\)"):
        numeric.inverse_dynamics(robot, np.zeros(6), np.zeros(6), np.zeros(6))
    with pytest.raises(ModelError, match="couplings"):
        numeric.aba_forward_dynamics(robot, q, qd, tau)


def test_model_file_round_trip(tmp_path: Path) -> None:
    """A gear in a model file: written, read back, the same couplings and numbers as built in Python."""
    robot = geared()
    path = robot.save(tmp_path / "geared.yaml")
    assert "couplings:" in path.read_text()
    back = rd.load(path)
    assert back.couplings == robot.couplings and back.nv == 5
    text = path.read_text().split("couplings:")[0] + "couplings:\n  - {joint: 5, leader: 4, ratio: -2, offset: 0.3}\n"
    written = tmp_path / "by_hand.yaml"
    written.write_text(text)
    by_hand = rd.load(written)
    q, qd, qdd = states(5)
    for other in (back, by_hand):
        np.testing.assert_allclose(numeric.inverse_dynamics(other, q, qd, qdd),
                                   numeric.inverse_dynamics(robot, q, qd, qdd), rtol=1e-13, atol=1e-13)
    written.write_text(text.replace("leader: 4", "leader: 5"))
    with pytest.raises(ModelError, match="cannot follow itself"):
        rd.load(written)


def test_derive_newton_euler_in_independent_coordinates() -> None:
    """rd.derive of a coupled robot: the tree's equations with q_tree = G q + c substituted, projected."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        base = rd.load("double_pendulum").subs({"L1": 1.0, "L2": 0.7, "m1": 2.0, "m2": 1.5, "g": 9.81})
    robot = base.replace(couplings=(Coupling(1, 0, 2, 0.1),))
    eqs = rd.derive(robot, "newton-euler")
    assert eqs.n == 1 and eqs.M.shape == (1, 1)
    q, qd, qdd = 0.4, -0.3, 0.8
    s = eqs.symbols
    values = {s.q[0]: q, s.qd[0]: qd, s.qdd[0]: qdd}
    tau = float(eqs.tau[0].subs(values))
    assert tau == pytest.approx(float(numeric.inverse_dynamics(robot, [q], [qd], [qdd])[0]), rel=1e-10)
    inertia = float(eqs.M[0, 0].subs(values))
    assert inertia == pytest.approx(float(numeric.mass_matrix(robot, [q])[0, 0]), rel=1e-10)


@pytest.mark.skipif(not has_c_compiler(), reason="no C compiler")
def test_compiled_program_takes_independent_coordinates(tmp_path: Path) -> None:
    """rd.compile of a coupled robot: inputs of nv entries, outputs projected (tau, M, forward, the derivatives)."""
    robot = geared()
    dyn = rd.compile(robot, cache=tmp_path, outputs=["tau", "M", "forward", "dtau", "dqdd"])
    q, qd, qdd = states(robot.nv)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    np.testing.assert_allclose(dyn.inverse_dynamics(q, qd, qdd), tau, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dyn.mass_matrix(q), numeric.mass_matrix(robot, q), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dyn.forward_dynamics(q, qd, tau), qdd, rtol=1e-8, atol=1e-9)
    dq, dqd = dyn.inverse_dynamics_derivatives(q[0], qd[0], qdd[0])
    eps = 1e-6
    for j in range(robot.nv):
        e = np.eye(robot.nv)[j] * eps
        fd_q = (numeric.inverse_dynamics(robot, q[0] + e, qd[0], qdd[0])
                - numeric.inverse_dynamics(robot, q[0] - e, qd[0], qdd[0])) / (2 * eps)
        fd_qd = (numeric.inverse_dynamics(robot, q[0], qd[0] + e, qdd[0])
                 - numeric.inverse_dynamics(robot, q[0], qd[0] - e, qdd[0])) / (2 * eps)
        np.testing.assert_allclose(dq[:, j], fd_q, atol=1e-6)
        np.testing.assert_allclose(dqd[:, j], fd_qd, atol=1e-6)
    dqdd_dq, _, dqdd_dtau = dyn.forward_dynamics_derivatives(q[0], qd[0], tau[0])
    M = numeric.mass_matrix(robot, q[0])
    np.testing.assert_allclose(dqdd_dtau, np.linalg.inv(M), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(dqdd_dq, -np.linalg.solve(M, dq), rtol=1e-7, atol=1e-8)

"""Coupled robots (robodyn.model.couplings) through the analysis layer: simulate, energies, linearize, the Robotics
Toolbox aliases, torques along a trajectory, the cross-check, the CLI; q, qd, tau are the independent coordinates."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.analysis import linear, simulation, toolbox
from robodyn.analysis.check import check
from robodyn.analysis.samples import Trajectory
from robodyn.analysis.torques import torque_history
from robodyn.errors import ModelError
from robodyn.model.couplings import Coupling
from tests.helpers import coupled_cli_outcomes, finite_difference_linearization


def planar() -> rd.Manipulator:
    """A 3-link planar arm whose third joint follows the second: q3 = -0.5 q2 + 0.1."""
    links = tuple(rd.Link(joint="R", a=a, mass=m, com=(-a / 2, 0.02, 0), inertia=(0.01, 0.02, 0.025))
                  for a, m in ((0.5, 2.0), (0.4, 1.5), (0.3, 1.0)))
    return rd.Manipulator(links=links, gravity=(0, -9.81, 0), name="planar3",
                          couplings=(Coupling(joint=2, leader=1, ratio=-0.5, offset=0.1),))


def panda() -> rd.Manipulator:
    from benchmarks.urdf_survey import robots_directory

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rd.load(robots_directory() / "panda_description/urdf/panda.urdf")


ROBOTS = {"planar": planar, "panda": panda}


@pytest.fixture(scope="module", params=list(ROBOTS))
def robot(request: pytest.FixtureRequest) -> rd.Manipulator:
    return ROBOTS[request.param]()


def tree_map(robot: rd.Manipulator) -> tuple[rd.Manipulator, np.ndarray, np.ndarray]:
    G, c = robot.coupling_map()
    return robot.replace(couplings=()), np.array(G, dtype=float), np.array(c, dtype=float).ravel()


def start(robot: rd.Manipulator, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = rng.uniform(-0.5, 0.5, robot.nv)
    qd = rng.uniform(-0.5, 0.5, robot.nv)
    for k, j in enumerate(robot.independent):  # prismatic joints (the Panda's fingers): small, in range
        if not robot.links[j].revolute:
            q[k], qd[k] = 0.02, 0.01
    return q, qd


def test_the_robots_are_coupled(robot: rd.Manipulator) -> None:
    assert robot.nv == robot.n - 1 and robot.couplings


def test_free_swing_conserves_the_tree_energy(robot: rd.Manipulator) -> None:
    robot = toolbox.nofriction(robot, viscous=True)  # a free swing: the Panda's URDF joints are damped
    q0, qd0 = start(robot)
    engine = "lambdify" if robot.n <= 3 else "numpy"
    res = rd.simulate(robot, 2.0, q0, qd0, method="DOP853", rtol=1e-12, atol=1e-12, samples=21, engine=engine)
    assert res.q.shape == (21, robot.nv) and res.tau.shape == (21, robot.nv)
    tree, G, c = tree_map(robot)
    q_tree, qd_tree = res.q @ G.T + c, res.qd @ G.T
    M_tree = numeric.mass_matrix(tree, q_tree)
    kinetic_tree = 0.5 * np.einsum("ni,nij,nj->n", qd_tree, M_tree, qd_tree)
    np.testing.assert_allclose(res.kinetic, kinetic_tree, rtol=1e-12, atol=1e-12)
    energy = kinetic_tree + simulation.gravity_energy(tree, q_tree)
    np.testing.assert_allclose(res.energy, energy, rtol=1e-12, atol=1e-12)
    assert np.max(np.abs(energy - energy[0])) < 1e-8
    csv = res.to_csv_text().splitlines()[0].split(",")
    assert len(csv) == 1 + 4 * robot.nv + 3


def test_linearize_against_finite_differences(robot: rd.Manipulator) -> None:
    q0, qd0 = start(robot, seed=2)
    tau0 = 0.3 * np.ones(robot.nv)
    lin = linear.linearize(robot, q0, qd0, tau0)
    nv = robot.nv
    assert lin.A.shape == (2 * nv, 2 * nv) and lin.B.shape == (2 * nv, nv)
    A, B = finite_difference_linearization(robot, q0, qd0, tau0)
    scale = max(1.0, float(np.max(np.abs(A))))
    np.testing.assert_allclose(lin.A, A, atol=1e-5 * scale)
    np.testing.assert_allclose(lin.B, B, atol=1e-5 * max(1.0, float(np.max(np.abs(B)))))


def test_toolbox_and_torques_are_the_numeric_engine(robot: rd.Manipulator) -> None:
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-0.5, 0.5, (3, 7, robot.nv))
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    np.testing.assert_allclose(toolbox.rne(robot, q, qd, qdd), tau, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(toolbox.inertia(robot, q), numeric.mass_matrix(robot, q), rtol=1e-12, atol=1e-12)
    C = toolbox.coriolis(robot, q[0], qd[0])
    np.testing.assert_allclose(C @ qd[0], numeric.coriolis(robot, q[0], qd[0]), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(toolbox.accel(robot, q, qd, tau), qdd, rtol=1e-8, atol=1e-9)
    t = np.linspace(0.0, 1.0, 7)
    history = torque_history(robot, Trajectory(t, q, qd, qdd, name="random"))
    assert history.tau.shape == (7, robot.nv) and len(history.columns) == robot.nv
    for k in range(len(t)):
        np.testing.assert_allclose(history.tau[k], numeric.inverse_dynamics(robot, q[k], qd[k], qdd[k]),
                                   rtol=1e-12, atol=1e-12)
    built_in = torque_history(robot, "angeles1", samples=5)
    assert built_in.tau.shape == (5, robot.nv)
    with pytest.raises(ModelError, match="independent coordinates"):
        torque_history(robot, Trajectory(t, np.zeros((7, robot.n)), np.zeros((7, robot.n)), np.zeros((7, robot.n))))


def test_the_methods_agree_and_the_rest_refuses_in_one_line() -> None:
    robot = planar()
    assert check(robot, samples=5).agree
    from robodyn import identification
    from robodyn.analysis.simplified import simplify_model

    # identification takes coupled coordinates (tests/identification/test_coupled_identification.py): Y_a = G^T Y
    x = np.array([0.3, -0.2])
    Y = identification.numeric_regressor(robot, x, x, x)
    assert Y.shape[0] == 2 and identification.base_parameters(robot).numerical_rank().ok
    assert np.allclose(Y @ identification.numeric_values(robot), numeric.inverse_dynamics(robot, x, x, x),
                       rtol=0, atol=1e-12)
    with pytest.raises(ModelError, match="coupled joints") as info:
        simplify_model(robot)
    assert "\n" not in str(info.value)
    q = simulation.stable_equilibrium(robot, [0.1, 0.1])
    osc = simulation.small_oscillations(robot, q)
    assert osc.M.shape == (2, 2)
    fd = simulation.forward_dynamics_symbolic(robot)
    assert fd.numerator.shape == (2, 1)


COMMANDS = [
    ["show"], ["derive"], ["check"], ["count"], ["count", "--base"], ["count", "--counting", "kane"],
    ["simplify-model"], ["torques"], ["simulate", "--t-end", "0.2"], ["linearize"], ["linearize", "--symbolic"],
    ["codegen", "-o", "{tmp}/gen"], ["codegen", "--base", "-o", "{tmp}/genb"], ["report", "-o", "{tmp}/r.html"],
]


def test_every_command_works_or_refuses_in_one_line(tmp_path: Path) -> None:
    model = planar().save(tmp_path / "planar3.yaml")
    coupled_cli_outcomes(str(model), COMMANDS, tmp_path)

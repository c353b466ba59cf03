"""Closed chains (parallelograms eliminated as linear couplings: robodyn.model.parallelograms) against independent
implementations: Pinocchio's forward kinematics (the loops close), its constraint dynamics on the same tree with
the same closures (the accelerations), its tree inverse dynamics plus the loop forces (virtual work), the same
machine with its couplings written by hand (exact symbolic tau), and the energy of a free swing; then every path
that takes a robot (compile, linearize, the command line)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sympy

import robodyn as rd
from robodyn import numeric
from robodyn.analysis import linear
from robodyn.model.couplings import Coupling
from robodyn.model.loops import open_tree
from tests.helpers import coupled_cli_outcomes, finite_difference_linearization, has_c_compiler

pin = pytest.importorskip("pinocchio")

NAMES = ["palletizer_kr700pa", "palletizer_mpl800", "fourbar_parallelogram", "fourbar_rbdl"]


@pytest.fixture(scope="module", params=NAMES)
def robot(request: pytest.FixtureRequest) -> rd.Manipulator:
    return rd.load(request.param)


class Closed:
    """The robot's tree in Pinocchio with each loop a constraint between its two closing frames
    (:func:`robodyn.formats.pinocchio.to_pinocchio_closed`: a CONTACT_3D for a revolute closing joint), and the
    map q_tree = G q + c."""

    def __init__(self, robot: rd.Manipulator) -> None:
        from robodyn.formats.pinocchio import to_pinocchio_closed

        self.robot = robot
        self.model, self.constraints = to_pinocchio_closed(robot)
        self.data = self.model.createData()
        self.order = np.array(open_tree(robot).depth_first())  # Pinocchio's q[k] is the tree's q[order[k]]
        self.frames = [((c.joint1_id, c.joint1_placement), (c.joint2_id, c.joint2_placement))
                       for c in self.constraints]
        self.datas = pin.StdVec_RigidConstraintData()
        for constraint in self.constraints:
            self.datas.append(constraint.createData())
        pin.initConstraintDynamics(self.model, self.data, self.constraints, self.datas)
        G, c = robot.coupling_map()
        self.G, self.c = np.array(G, dtype=float), np.array(c, dtype=float).ravel()

    def tree(self, x: np.ndarray, offset: bool = False) -> np.ndarray:
        """A vector of the robot's coordinates as the tree's, in Pinocchio's order."""
        return (self.G @ x + (self.c if offset else 0))[self.order]

    def actuation(self, tau: np.ndarray) -> np.ndarray:
        """tau on the actuated joints, zero on the passive ones, in Pinocchio's order."""
        out = np.zeros(self.robot.n)
        out[list(self.robot.independent)] = tau
        return out[self.order]

    def robodyn_order(self, x: np.ndarray) -> np.ndarray:
        out = np.empty(self.robot.n)
        out[self.order] = x
        return out


def states(robot: rd.Manipulator, count: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q, qd, x = np.random.default_rng(seed).uniform(-0.6, 0.6, (3, count, robot.nv))
    return q, qd, x


def test_the_loops_close_at_every_configuration(robot: rd.Manipulator) -> None:
    closed = Closed(robot)
    for q in states(robot, 5, 1)[0]:
        pin.forwardKinematics(closed.model, closed.data, closed.tree(q, offset=True))
        for (ja, Pa), (jb, Pb) in closed.frames:
            A, B = closed.data.oMi[ja] * Pa, closed.data.oMi[jb] * Pb
            assert np.abs(A.translation - B.translation).max() < 1e-13
            assert np.abs(A.rotation[:, 2] - B.rotation[:, 2]).max() < 1e-13  # the revolute axes coincide


def test_forward_dynamics_is_pinocchios_constraint_dynamics(robot: rd.Manipulator) -> None:
    """CONTACT_3D on a planar loop leaves one constraint redundant (out of the plane): the proximal solver (mu
    1e-10, 100 iterations) handles it; no Baumgarte terms (their gains are zero by default)."""
    closed = Closed(robot)
    settings = pin.ProximalSettings(1e-14, 1e-10, 100)
    q, qd, x = states(robot, 6, 2)
    for k in range(len(q)):
        tau = 50 * x[k]
        qdd = numeric.forward_dynamics(robot, q[k], qd[k], tau)
        ddq = pin.constraintDynamics(closed.model, closed.data, closed.tree(q[k], offset=True), closed.tree(qd[k]),
                                     closed.actuation(tau), closed.constraints, closed.datas, settings)
        scale = max(1.0, float(np.abs(qdd).max()))
        assert np.abs(closed.robodyn_order(ddq) - closed.G @ qdd).max() < 1e-9 * scale  # actuated and passive


def test_inverse_dynamics_is_the_tree_plus_the_loop_forces(robot: rd.Manipulator) -> None:
    """tau_tree (Pinocchio's rnea on the tree at the consistent state) = the actuation + J_c^T lambda: the loop
    forces do no virtual work (G^T J_c^T = 0), so G^T tau_tree = tau; and the forward round trip."""
    closed = Closed(robot)
    q, qd, qdd = states(robot, 6, 3)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    np.testing.assert_allclose(numeric.forward_dynamics(robot, q, qd, tau), qdd, rtol=1e-10, atol=1e-10)
    for k in range(len(q)):
        tree_tau = closed.robodyn_order(pin.rnea(closed.model, closed.data, closed.tree(q[k], offset=True),
                                                 closed.tree(qd[k]), closed.tree(qdd[k])))
        scale = max(1.0, float(np.abs(tree_tau).max()))
        assert np.abs(closed.G.T @ tree_tau - tau[k]).max() < 1e-10 * scale
        # the loop forces tau_tree - actuation are J_c^T lambda: in the range of the constraints' Jacobian
        pin.constraintDynamics(closed.model, closed.data, closed.tree(q[k], offset=True), closed.tree(qd[k]),
                               closed.actuation(tau[k]), closed.constraints, closed.datas)  # the frames at q
        J = pin.getConstraintsJacobian(closed.model, closed.data, closed.constraints, closed.datas)
        loop_forces = (tree_tau - closed.robodyn_order(closed.actuation(tau[k])))[closed.order]
        multipliers = np.linalg.lstsq(J.T, loop_forces, rcond=None)[0]
        assert np.abs(J.T @ multipliers - loop_forces).max() < 1e-9 * scale
        assert np.abs(J @ closed.tree(np.eye(robot.nv)[0])).max() < 1e-12  # and G spans the loops' null space


def test_parallelograms_give_exactly_the_tau_written_by_hand() -> None:
    """The palletizer's couplings, derived from its loops, and the same tree with its couplings typed in: the same
    symbolic tau and M, term for term."""
    robot = rd.load("palletizer_kr700pa")
    pi = sympy.pi
    by_hand = open_tree(robot).replace(couplings=(
        Coupling("wrist", leaders={"lower_arm": -1, "upper_arm": -1}, offset=7 * pi / 6),
        Coupling("rod_dc", "lower_arm", 1, 0),
        Coupling("bell_crank", "lower_arm", -1, 2 * pi / 3),
        Coupling("rod_ep", leaders={"lower_arm": 1, "upper_arm": 1}, offset=-pi / 2)))
    loops, hand = rd.derive(robot, "newton-euler"), rd.derive(by_hand, "newton-euler")
    assert loops.tau == hand.tau and loops.M == hand.M
    assert all(sympy.expand(a - b) == 0 for a, b in zip(loops.tau, hand.tau, strict=True))


def test_a_free_swing_conserves_pinocchios_energy(robot: rd.Manipulator) -> None:
    """Zero torque, no damping, 10 s: the energy of the tree (Pinocchio's, at the states robodyn integrates)."""
    closed = Closed(robot)
    engine = "lambdify" if robot.n <= 3 else "numpy"
    res = rd.simulate(robot, 10.0, np.full(robot.nv, 0.3), np.full(robot.nv, 0.2), method="DOP853", rtol=1e-13,
                      atol=1e-13, samples=51, engine=engine)
    energy = []
    for q, qd in zip(res.q, res.qd, strict=True):
        kinetic = pin.computeKineticEnergy(closed.model, closed.data, closed.tree(q, offset=True), closed.tree(qd))
        energy.append(kinetic + pin.computePotentialEnergy(closed.model, closed.data, closed.tree(q, offset=True)))
    energy_ = np.array(energy)
    scale = float(np.abs(energy_).max())
    assert np.abs(res.energy - res.energy[0] - (energy_ - energy_[0])).max() < 1e-9 * scale  # the same energy
    assert np.abs(energy_ - energy_[0]).max() < 1e-8 * scale  # conserved


def test_linearize_against_finite_differences(robot: rd.Manipulator) -> None:
    q0, qd0, _ = states(robot, 1, 4)
    q0, qd0, tau0 = q0[0], qd0[0], np.full(robot.nv, 10.0)
    lin = linear.linearize(robot, q0, qd0, tau0)
    A, B = finite_difference_linearization(robot, q0, qd0, tau0)
    np.testing.assert_allclose(lin.A, A, atol=1e-5 * max(1.0, float(np.abs(A).max())))
    np.testing.assert_allclose(lin.B, B, atol=1e-5 * max(1.0, float(np.abs(B).max())))


@pytest.mark.skipif(not has_c_compiler(), reason="no C compiler")
def test_the_compiled_program_is_the_numeric_engine(robot: rd.Manipulator) -> None:
    compiled = rd.compile(robot)
    q, qd, qdd = states(robot, 7, 5)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    scale = max(1.0, float(np.abs(tau).max()))
    np.testing.assert_allclose(compiled.inverse_dynamics(q, qd, qdd), tau, atol=1e-11 * scale)
    np.testing.assert_allclose(compiled.mass_matrix(q), numeric.mass_matrix(robot, q), atol=1e-11 * scale)
    np.testing.assert_allclose(compiled.forward_dynamics(q, qd, tau), qdd, atol=1e-9)


COMMANDS: list[list[str]] = [
    ["show"], ["derive"], ["check"], ["count"], ["count", "--base"], ["simplify-model"], ["torques"],
    ["simulate", "--t-end", "0.2"], ["linearize"], ["codegen", "-o", "{tmp}/gen"], ["report", "-o", "{tmp}/r.html"],
]


def test_every_command_works_or_refuses_in_one_line(tmp_path: Path) -> None:
    outcome = coupled_cli_outcomes("fourbar_parallelogram", COMMANDS, tmp_path)
    assert outcome["show"] == outcome["derive"] == outcome["simulate --t-end"] == outcome["codegen -o"] == 0

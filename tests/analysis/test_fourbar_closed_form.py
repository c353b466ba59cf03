"""Planar four-bars eliminated in closed form (robodyn.model.fourbars) against independent implementations:
Pinocchio's forward kinematics on the tree (the loop closes at the closed-form passive angles), its constraint
dynamics on the same tree with the same closure (CONTACT_3D, no Baumgarte terms), its tree inverse dynamics plus
the loop forces (virtual work), the energy of a free swing; the symbolic derivation and the compiled C against the
numeric engine; the assembly branch; the one-line refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sympy

import robodyn as rd
from robodyn import numeric, program
from robodyn.errors import ModelError
from robodyn.model.loops import Loop
from robodyn.numeric import couplings
from tests.helpers import has_c_compiler

pin = pytest.importorskip("pinocchio")

NAME = "fourbar_crank_rocker"


@pytest.fixture(scope="module")
def robot() -> rd.Manipulator:
    return rd.load(NAME)


class Closed:
    """The four-bar's tree in Pinocchio with its loop a CONTACT_3D between the two closing frames, and the map
    q_tree = g(q), W(q) of the numeric engine."""

    def __init__(self, robot: rd.Manipulator) -> None:
        from robodyn.formats.pinocchio import to_pinocchio_closed
        from robodyn.model.loops import open_tree

        self.robot = robot
        self.model, self.constraints = to_pinocchio_closed(robot)
        self.data = self.model.createData()
        self.order = np.array(open_tree(robot).depth_first())
        self.datas = pin.StdVec_RigidConstraintData()
        for constraint in self.constraints:
            self.datas.append(constraint.createData())
        pin.initConstraintDynamics(self.model, self.data, self.constraints, self.datas)
        self.numeric = numeric.compile_model(robot)

    def q(self, q: np.ndarray) -> np.ndarray:
        return couplings.position(self.numeric, q)[self.order]

    def qd(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return couplings.rate(self.numeric, qd, q)[self.order]

    def qdd(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        return couplings.acceleration(self.numeric, q, qd, qdd)[self.order]

    def actuation(self, tau: np.ndarray) -> np.ndarray:
        out = np.zeros(self.robot.n)
        out[list(self.robot.independent)] = tau
        return out[self.order]

    def robodyn_order(self, x: np.ndarray) -> np.ndarray:
        out = np.empty(self.robot.n)
        out[self.order] = x
        return out


@pytest.fixture(scope="module")
def closed(robot: rd.Manipulator) -> Closed:
    return Closed(robot)


def states(count: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Crank angles all round (a crank-rocker assembles at every one), rates and accelerations."""
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (count, 1)), rng.uniform(-2, 2, (count, 1)), rng.uniform(-5, 5, (count, 1))


def test_the_loop_closes_at_every_crank_angle(closed: Closed) -> None:
    for q in states(6, 1)[0]:
        pin.forwardKinematics(closed.model, closed.data, closed.q(q))
        for c in closed.constraints:
            A = closed.data.oMi[c.joint1_id] * c.joint1_placement
            B = closed.data.oMi[c.joint2_id] * c.joint2_placement
            assert np.abs(A.translation - B.translation).max() < 1e-13


def test_forward_dynamics_is_pinocchios_constraint_dynamics(robot: rd.Manipulator, closed: Closed) -> None:
    settings = pin.ProximalSettings(1e-14, 1e-10, 100)
    q, qd, x = states(5, 2)
    for k in range(len(q)):
        tau = 3 * x[k]
        qdd = numeric.forward_dynamics(robot, q[k], qd[k], tau)
        ddq = pin.constraintDynamics(closed.model, closed.data, closed.q(q[k]), closed.qd(q[k], qd[k]),
                                     closed.actuation(tau), closed.constraints, closed.datas, settings)
        expected = closed.robodyn_order(ddq)
        scale = max(1.0, float(np.abs(expected).max()))
        assert np.abs(expected - closed.robodyn_order(closed.qdd(q[k], qd[k], qdd))).max() < 1e-9 * scale


def test_inverse_dynamics_is_the_tree_plus_the_loop_forces(robot: rd.Manipulator, closed: Closed) -> None:
    """tau_tree = the actuation + J_c^T lambda; W^T tau_tree = tau (W^T J_c^T = 0); the forward round trip."""
    q, qd, qdd = states(5, 3)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    np.testing.assert_allclose(numeric.forward_dynamics(robot, q, qd, tau), qdd, rtol=1e-10, atol=1e-10)
    for k in range(len(q)):
        tree_tau = closed.robodyn_order(pin.rnea(closed.model, closed.data, closed.q(q[k]), closed.qd(q[k], qd[k]),
                                                 closed.qdd(q[k], qd[k], qdd[k])))
        W = couplings.jacobian(closed.numeric, q[k])
        scale = max(1.0, float(np.abs(tree_tau).max()))
        assert np.abs(W.T @ tree_tau - tau[k]).max() < 1e-10 * scale
        pin.constraintDynamics(closed.model, closed.data, closed.q(q[k]), closed.qd(q[k], qd[k]),
                               closed.actuation(tau[k]), closed.constraints, closed.datas)  # the frames at q
        J = pin.getConstraintsJacobian(closed.model, closed.data, closed.constraints, closed.datas)
        loop_forces = (tree_tau - closed.robodyn_order(closed.actuation(tau[k])))[closed.order]
        multipliers = np.linalg.lstsq(J.T, loop_forces, rcond=None)[0]
        assert np.abs(J.T @ multipliers - loop_forces).max() < 1e-9 * scale
        assert np.abs(J @ W[closed.order]).max() < 1e-12  # W spans the loop's null space


def test_the_reduced_mass_matrix_is_symmetric_positive_definite(robot: rd.Manipulator) -> None:
    M = numeric.mass_matrix(robot, states(8, 4)[0])
    assert np.all(M[:, 0, 0] > 0)


def test_a_free_swing_conserves_pinocchios_energy(robot: rd.Manipulator, closed: Closed) -> None:
    """Zero torque, no damping, 10 s of a full turn and more: the energy of the tree (Pinocchio's)."""
    res = rd.simulate(robot, 10.0, np.array([0.3]), np.array([4.0]), method="DOP853", rtol=1e-13, atol=1e-13,
                      samples=41, engine="lambdify")
    energy = np.array([pin.computeKineticEnergy(closed.model, closed.data, closed.q(q), closed.qd(q, qd))
                       + pin.computePotentialEnergy(closed.model, closed.data, closed.q(q))
                       for q, qd in zip(res.q, res.qd, strict=True)])
    scale = float(np.abs(energy).max())
    assert np.abs(res.q[:, 0]).max() > np.pi  # the crank turned all round
    assert np.abs(energy - energy[0]).max() < 1e-8 * scale


def test_the_symbolic_equations_are_the_numeric_engine(robot: rd.Manipulator) -> None:
    eqs = rd.derive(robot, "newton-euler")
    q, qd, qdd = states(3, 5)
    s = eqs.symbols
    for k in range(len(q)):
        values = {s.q[0]: q[k, 0], s.qd[0]: qd[k, 0], s.qdd[0]: qdd[k, 0], sympy.Symbol("g"): 9.81}
        for part, expected in [(eqs.tau, numeric.inverse_dynamics(robot, q[k], qd[k], qdd[k])),
                               (eqs.M, numeric.mass_matrix(robot, q[k]).ravel()),
                               (eqs.h, numeric.coriolis(robot, q[k], qd[k])),
                               (eqs.G, numeric.gravity(robot, q[k]))]:
            got = np.array([float(sympy.N(x.subs(values))) for x in part])
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


def test_linearize_against_finite_differences(robot: rd.Manipulator) -> None:
    from robodyn.analysis import linear
    from tests.helpers import finite_difference_linearization

    q0, qd0, tau0 = np.array([0.4]), np.array([-0.7]), np.array([0.5])
    lin = linear.linearize(robot, q0, qd0, tau0)
    A, B = finite_difference_linearization(robot, q0, qd0, tau0)
    np.testing.assert_allclose(lin.A, A, atol=1e-5 * max(1.0, float(np.abs(A).max())))
    np.testing.assert_allclose(lin.B, B, atol=1e-5 * max(1.0, float(np.abs(B).max())))


def test_the_branch_round_trips_through_a_model_file(robot: rd.Manipulator, tmp_path: Path) -> None:
    q = couplings.position(numeric.compile_model(robot), np.array([1.0]))
    reference = {"crank": 1.0, "coupler": float(q[1]), "rocker": float(q[2])}
    for change in ({"branch": -1}, {"branch": "other", "reference": reference}):
        other = robot.replace(loops=(Loop(**{**robot.loops[0].__dict__, **change}),))
        again = rd.load(other.save(tmp_path / "fourbar.yaml"))
        assert again.loops == other.loops and again.couplings == other.couplings


@pytest.mark.skipif(not has_c_compiler(), reason="no C compiler")
def test_the_compiled_program_is_the_numeric_engine(robot: rd.Manipulator) -> None:
    compiled = rd.compile(robot)
    q, qd, qdd = states(6, 6)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    scale = max(1.0, float(np.abs(tau).max()))
    np.testing.assert_allclose(compiled.inverse_dynamics(q, qd, qdd), tau, atol=1e-11 * scale)
    np.testing.assert_allclose(compiled.mass_matrix(q), numeric.mass_matrix(robot, q), atol=1e-11 * scale)
    np.testing.assert_allclose(compiled.coriolis(q, qd), numeric.coriolis(robot, q, qd), atol=1e-11 * scale)
    np.testing.assert_allclose(compiled.forward_dynamics(q, qd, tau), qdd, atol=1e-9)


def test_the_branch_flips_the_solution(robot: rd.Manipulator) -> None:
    """branch: the reference (q = 0, assembled open), its other, and +-1: the other branch mirrors the coupler and
    the rocker about the diagonal, so their angles differ, and both close the loop (the test above for the first)."""
    sigma = robot.couplings[0].closure.branch
    other = robot.replace(loops=(Loop(**{**robot.loops[0].__dict__, "branch": "other"}),))
    same = robot.replace(loops=(Loop(**{**robot.loops[0].__dict__, "branch": sigma}),))
    assert other.couplings[0].closure.branch == -sigma and same.couplings == robot.couplings
    q = np.array([0.8])
    a, b = numeric.compile_model(robot), numeric.compile_model(other)
    assert np.abs(couplings.position(a, q)[1:] - couplings.position(b, q)[1:]).min() > 0.1
    np.testing.assert_allclose(couplings.position(b, np.array([0.0]))[0], 0.0)
    closed = Closed(other)
    pin.forwardKinematics(closed.model, closed.data, closed.q(q))
    c = closed.constraints[0]
    A, B = closed.data.oMi[c.joint1_id] * c.joint1_placement, closed.data.oMi[c.joint2_id] * c.joint2_placement
    assert np.abs(A.translation - B.translation).max() < 1e-13


def test_a_reference_configuration_names_the_branch(robot: rd.Manipulator) -> None:
    """The branch of a given closed configuration (the tree's angles, at a crank angle of 1): each branch's own."""
    for branch in ("reference", "other"):
        given = robot.replace(loops=(Loop(**{**robot.loops[0].__dict__, "branch": branch}),))
        q = couplings.position(numeric.compile_model(given), np.array([1.0]))
        reference = {"crank": 1.0, "coupler": float(q[1]), "rocker": float(q[2])}
        again = robot.replace(loops=(Loop(**{**robot.loops[0].__dict__, "reference": reference}),))
        assert again.couplings[0].closure.branch == given.couplings[0].closure.branch
    with pytest.raises(ModelError, match="reference configuration does not close this four-bar") as error:
        robot.replace(loops=(Loop(**{**robot.loops[0].__dict__, "reference": {"crank": 1.0}}),))
    assert "\n" not in str(error.value)
    with pytest.raises(ModelError, match="reference: no link is named 'nope'"):
        robot.replace(loops=(Loop(**{**robot.loops[0].__dict__, "reference": {"nope": 1.0}}),))


def test_the_one_line_refusals(robot: rd.Manipulator) -> None:
    loop = robot.loops[0].__dict__
    # a four-bar that cannot assemble anywhere near: the crank longer than the others allow (a non-Grashof
    # linkage with an assembly at q = 0 only on its given branch): the numeric engine names the loop
    long_crank = robot.replace(links=(robot.links[0].replace(a=sympy.Rational(6, 5)), *robot.links[1:]),
                               loops=(Loop(**{**loop, "branch": 1}),))
    with pytest.raises(ValueError, match="loop 'fourbar': the four-bar does not assemble") as info:
        numeric.inverse_dynamics(long_crank, np.array([np.pi]), np.zeros(1), np.zeros(1))
    assert "\n" not in str(info.value)
    for change, message in [({"branch": 2}, "is not \\+1, -1, reference or other"),
                            ({"branch": "crossed"}, "is not \\+1, -1, reference or other")]:
        with pytest.raises(ModelError, match=message) as error:
            robot.replace(loops=(Loop(**{**loop, **change}),))
        assert "\n" not in str(error.value)
    with pytest.raises(ModelError, match="does not close this four-bar: give its branch") as error:
        long_crank.replace(loops=(Loop(**loop),))
    assert "\n" not in str(error.value)
    with pytest.raises(ModelError, match="is a four-bar, in closed form") as error:
        robot.coupling_map()
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="derivative programs") as info:
        program.build(robot, ("dtau_dq",))
    assert "\n" not in str(info.value)

"""Implicit loops (robodyn.numeric.closed_chains) on the built-in planar five-bar: the loop closes after Newton's
method, the forward dynamics is Pinocchio's constraint dynamics on the same tree with the same closure, the inverse
dynamics is the tree's plus loop forces in the range of K^T, M_a is symmetric positive definite, a free swing keeps
its energy and its loop, the constraint rows of every joint type are the derivatives of phi, and every refusal is
one line."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn import codegen, numeric
from robodyn.errors import ModelError
from robodyn.model.loops import Loop, open_tree
from robodyn.numeric import closed_chains as cc

pin = pytest.importorskip("pinocchio")


@pytest.fixture(scope="module")
def robot() -> rd.Manipulator:
    return rd.load("fivebar")


@pytest.fixture(scope="module")
def states(robot: rd.Manipulator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q, qd, x = np.random.default_rng(7).uniform(-0.4, 0.4, (3, 4, robot.nv))
    return q, 2 * qd, 5 * x


class Closed:
    """The five-bar's tree in Pinocchio with its loop a CONTACT_3D between the two closing frames
    (:func:`robodyn.formats.pinocchio.to_pinocchio_closed`)."""

    def __init__(self, robot: rd.Manipulator) -> None:
        from robodyn.formats.pinocchio import to_pinocchio_closed

        self.robot = robot
        self.model, self.constraints = to_pinocchio_closed(robot)
        self.data = self.model.createData()
        self.order = np.array(open_tree(robot).depth_first())  # Pinocchio's q[k] is the tree's q[order[k]]
        self.datas = pin.StdVec_RigidConstraintData()
        for constraint in self.constraints:
            self.datas.append(constraint.createData())
        pin.initConstraintDynamics(self.model, self.data, self.constraints, self.datas)

    def actuation(self, tau: np.ndarray) -> np.ndarray:
        out = np.zeros(self.robot.n)
        out[list(self.robot.independent)] = tau
        return out

    def ours(self, x: np.ndarray) -> np.ndarray:
        out = np.empty(self.robot.n)
        out[self.order] = x
        return out


@pytest.fixture(scope="module")
def closed(robot: rd.Manipulator) -> Closed:
    return Closed(robot)


def test_the_model(robot: rd.Manipulator) -> None:
    assert (robot.n, robot.nv, robot.implicit, robot.passive, robot.independent) == (4, 2, ("fivebar",), (1, 3), (0, 2))
    assert robot.couplings == ()
    np.testing.assert_allclose(cc.positions(robot, np.zeros(2)), np.zeros(4), atol=1e-15)  # assembled at q = 0


def test_newton_closes_the_loop(robot: rd.Manipulator, closed: Closed, states: tuple) -> None:
    q = states[0]
    x = cc.positions(robot, q)
    assert np.abs(x[:, list(robot.independent)] - q).max() == 0
    assert np.abs(cc.constraints(robot, x)[0]).max() < 1e-12  # Newton: 1e-14 x the size (11 m)
    for row in x:  # Pinocchio's frames coincide
        pin.forwardKinematics(closed.model, closed.data, row[closed.order])
        (c,) = closed.constraints
        A = closed.data.oMi[c.joint1_id] * c.joint1_placement
        B = closed.data.oMi[c.joint2_id] * c.joint2_placement
        assert np.abs(A.translation - B.translation).max() < 1e-12
    # one state as a row of the batch, and a far guess on the other branch is another assembly
    np.testing.assert_allclose(cc.positions(robot, q[0]), x[0], atol=1e-14)
    other = cc.positions(robot, q[0], guess=[-2.0, 2.0])
    assert np.abs(cc.constraints(robot, other)[0]).max() < 1e-12 and np.abs(other - x[0]).max() > 0.1


def test_forward_dynamics_is_pinocchios_constraint_dynamics(robot: rd.Manipulator, closed: Closed,
                                                            states: tuple) -> None:
    """CONTACT_3D on the planar loop: one redundant row, which Pinocchio's proximal solver handles; no Baumgarte."""
    q, qd, tau = states
    settings = pin.ProximalSettings(1e-14, 1e-10, 100)
    qdd = cc.forward_dynamics(robot, q, qd, tau)
    np.testing.assert_array_equal(numeric.forward_dynamics(robot, q, qd, tau), qdd)  # the engine hands it over
    x, xd = cc.positions(robot, q), cc.velocities(robot, q, qd)
    W = cc.projection(robot, q)
    gamma = cc.tree_state(cc.closed_chain(robot), q, qd).gamma
    worst = 0.0
    for k in range(len(q)):
        ddq = pin.constraintDynamics(closed.model, closed.data, x[k][closed.order], xd[k][closed.order],
                                     closed.actuation(tau[k])[closed.order], closed.constraints, closed.datas,
                                     settings)
        ours = W[k] @ qdd[k] + gamma[k]
        worst = max(worst, float(np.abs(closed.ours(ddq) - ours).max() / max(1.0, np.abs(ours).max())))
    assert worst < 1e-9, worst


def test_inverse_dynamics_is_the_tree_plus_loop_forces(robot: rd.Manipulator, closed: Closed, states: tuple) -> None:
    q, qd, qdd = states
    tau = cc.inverse_dynamics(robot, q, qd, qdd)
    np.testing.assert_array_equal(numeric.inverse_dynamics(robot, q, qd, qdd), tau)
    assert np.abs(cc.forward_dynamics(robot, q, qd, tau) - qdd).max() < 1e-10 * max(1.0, np.abs(qdd).max())
    state = cc.tree_state(cc.closed_chain(robot), q, qd)
    for k in range(len(q)):
        a = state.W[k] @ qdd[k] + state.gamma[k]
        assert np.abs(cc.constraints(robot, state.q[k], state.qd[k])[1] @ a
                      + cc.constraints(robot, state.q[k], state.qd[k])[2]).max() < 1e-12  # K qdd + Kdot qd = 0
        tree_tau = closed.ours(pin.rnea(closed.model, closed.data, state.q[k][closed.order],
                                        state.qd[k][closed.order], a[closed.order]))
        scale = max(1.0, float(np.abs(tree_tau).max()))
        assert np.abs(state.W[k].T @ tree_tau - tau[k]).max() < 1e-10 * scale
        loop_forces = tree_tau - closed.actuation(tau[k])  # K^T lambda: no work on W
        K = state.K[k]
        multipliers = np.linalg.lstsq(K.T, loop_forces, rcond=None)[0]
        assert np.abs(K.T @ multipliers - loop_forces).max() < 1e-10 * scale


def test_mass_matrix_bias_and_gravity(robot: rd.Manipulator, states: tuple) -> None:
    q, qd, _ = states
    M = cc.mass_matrix(robot, q)
    assert np.abs(M - np.transpose(M, (0, 2, 1))).max() < 1e-13 * np.abs(M).max()
    assert np.linalg.eigvalsh(M).min() > 0.1
    # the split: bias = h + G (no damping, no tip load), and tau = M qdd + bias
    bias = cc.bias_forces(robot, q, qd)
    np.testing.assert_allclose(bias, cc.coriolis(robot, q, qd) + cc.gravity(robot, q), atol=1e-12)
    np.testing.assert_allclose(cc.inverse_dynamics(robot, q, qd, np.zeros_like(q)), bias, atol=1e-12)
    # G is the gradient of the potential along the loop (central differences)
    h = 1e-6
    for k in range(robot.nv):
        step = np.eye(robot.nv)[k] * h
        slope = (cc.potential(robot, q + step) - cc.potential(robot, q - step)) / (2 * h)
        np.testing.assert_allclose(slope, cc.gravity(robot, q)[:, k], rtol=1e-7, atol=1e-7)


def test_free_swing_keeps_its_energy_and_its_loop(robot: rd.Manipulator) -> None:
    """10 s of free swing (DOP853, rtol = atol = 1e-9): the actuated state integrated, the passive joints by
    Newton's method at every evaluation."""
    result = rd.simulate(robot, 10.0, q0=[0.3, -0.2], qd0=[0.0, 0.5], method="DOP853", rtol=1e-9, atol=1e-9,
                         samples=21)
    assert result.energy_drift() < 1e-8, result.energy_drift()
    assert np.ptp(result.kinetic) > 1.0  # it swings
    assert np.abs(cc.constraints(robot, cc.positions(robot, result.q))[0]).max() < 1e-12


def test_gravity_compensation_holds_the_five_bar(robot: rd.Manipulator) -> None:
    result = rd.simulate(robot, 0.5, q0=[0.3, -0.2], torque="gravity", samples=5)
    assert np.abs(result.q - [0.3, -0.2]).max() < 1e-12 and np.abs(result.qdd).max() < 1e-10


@pytest.mark.parametrize("joint", ["prismatic", "weld", "spherical", "revolute"])
def test_the_rows_are_derivatives_of_phi(robot: rd.Manipulator, joint: str) -> None:
    """K = dphi/dq and Kdot qd = d/dt (K qd) (central differences) for each joint type, at a configuration in
    space (the closing frames apart and turned, a prismatic joint in the tree)."""
    placement = {"xyz": (0.1, -0.2, 0.3), "rpy": (0.3, -0.4, 0.5)}
    links = list(robot.links)
    links[3] = links[3].replace(joint="P", alpha=0.7)  # a prismatic tree joint too, turned out of the plane
    spatial = robot.replace(links=tuple(links),
                            loops=(Loop(("rod1", "rod2"), (placement, None), joint, (1, 2, 2), name="probe"),))
    x, xd = np.array([0.3, -0.5, 0.2, 0.7]), np.array([0.4, -1.1, 0.9, 0.6])
    _, K, bias = cc.constraints(spatial, x, xd)
    h = 1e-6
    columns = [(cc.constraints(spatial, x + h * e)[0] - cc.constraints(spatial, x - h * e)[0]) / (2 * h)
               for e in np.eye(4)]
    np.testing.assert_allclose(np.column_stack(columns), K, atol=1e-8)
    rate = (cc.constraints(spatial, x + h * xd)[1] @ xd - cc.constraints(spatial, x - h * xd)[1] @ xd) / (2 * h)
    np.testing.assert_allclose(rate, bias, atol=1e-7)


def test_a_spherical_closure_of_the_planar_loop_moves_alike(robot: rd.Manipulator, states: tuple) -> None:
    q, qd, tau = states
    ball = robot.replace(loops=(Loop(("rod1", "rod2"), joint="spherical", name="ball"),))
    assert ball.implicit == ("ball",)
    np.testing.assert_allclose(cc.forward_dynamics(ball, q, qd, tau), cc.forward_dynamics(robot, q, qd, tau),
                               rtol=1e-12, atol=1e-12)


def _one_line(call, words: str) -> str:
    with pytest.raises(ModelError) as info:
        call()
    line = str(info.value)
    assert words in line and "\n" not in line, line
    return line


def test_the_refusals_are_one_line(robot: rd.Manipulator) -> None:
    # the cranks pointing apart: the rods (2 + 2 m) cannot span the 6 m between their ends
    _one_line(lambda: cc.positions(robot, [-np.pi / 2, np.pi / 2]), "loop 'fivebar'")
    # the rods in line (a singularity of the loop): K_p singular, given the exact passive angles as the guess
    theta2 = np.arccos(-0.25)
    psi = np.arctan2(2 * np.sin(theta2), 3.5)
    guess = [psi + np.pi - np.pi / 6, psi + np.pi - theta2 + np.pi / 6]
    _one_line(lambda: cc.positions(robot, [-np.pi / 2, theta2 + np.pi / 2], guess=guess),
              "loop 'fivebar': K_p (the constraints' Jacobian in the passive joints) is singular")
    # a weld on the planar loop: three constraints on two passive joints
    welded = robot.replace(loops=(Loop(("rod1", "rod2"), (None, {"rpy": (0, 0, "pi/3")}), "weld", name="w"),))
    _one_line(lambda: cc.mass_matrix(welded, [0.0, 0.0]), "loop 'w': over-constrained")  # (it closes at q = 0 only)
    # the guess and the external wrench
    with pytest.raises(ValueError, match="guess of 'fivebar'"):
        cc.positions(robot, [0.0, 0.0], guess=[1.0, 2.0, 3.0])
    _one_line(lambda: numeric.inverse_dynamics(robot, np.zeros(2), np.zeros(2), np.zeros(2), fext=np.ones(6)),
              "implicit loops: fext is not handled yet")
    # the symbolic paths
    for call in (lambda: rd.derive(robot), lambda: codegen.generate(robot, "c"), lambda: rd.compile(robot),
                 lambda: rd.simulate(robot, 0.1, engine="compiled")):
        _one_line(call, "implicit loops are numeric only in this version")


def test_the_command_line_refuses_count_in_one_line(tmp_path) -> None:
    from typer.testing import CliRunner

    from robodyn.cli import app

    result = CliRunner().invoke(app, ["count", "fivebar"])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "numeric only" in lines[0], result.output


def test_the_guides_example_runs_as_written() -> None:
    """docs/guide/trees.md's implicit-loop example, in a fresh process, prints what its comments say."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).parent.parent.parent
    text = (root / "docs" / "guide" / "trees.md").read_text(encoding="utf-8")
    section = text[text.index("**Implicit loops.**"):text.index("**Joint names and named states.**")]
    code = section.split("```python\n")[1].split("```")[0]
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root)
    assert run.returncode == 0, run.stderr
    expected = [line.split("# ")[-1].split() for line in code.splitlines() if line.startswith("print(")]
    assert [line.split() for line in run.stdout.splitlines()] == expected

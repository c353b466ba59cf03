"""The numeric engine on kinematic trees, against Pinocchio built from the same description.

:func:`robodyn.formats.pinocchio.to_pinocchio` builds the Pinocchio model from the DH rows and the parent array alone
(each
joint placed in its parent's joint frame), not from robodyn's compiled arrays, so the comparison checks the
recursions over the parent array (Newton-Euler, composite-body M, Cholesky and articulated-body forward
dynamics, frames, Jacobians and their rates) end to end. Pinocchio applies the armature but not the damping:
damping b qd is added to its rnea here, and subtracted from tau before its aba.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.numeric import kinematics
from robodyn.numeric.aba import aba_forward_dynamics
from robodyn.numeric.crba import crba_reference
from robodyn.numeric.kane import kane_inverse_dynamics
from robodyn.numeric.model import compile_model
from robodyn.numeric.rnea import rnea_reference
from tests.conftest import random_tree

pin = pytest.importorskip("pinocchio")
from robodyn.formats.pinocchio import to_pinocchio  # noqa: E402  (after the skip)

TREE = Path(__file__).parents[1] / "data" / "torso_two_arms.yaml"
PARAMS = {"g": 9.81}
TOL = 1e-9


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1.0))


def _states(n: int, N: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (N, n)), rng.uniform(-2, 2, (N, n)), rng.uniform(-5, 5, (N, n))


def _pinocchio_dynamics(robot: rd.Manipulator, params, q, qd, qdd):
    """tau (damping added), M and the forward dynamics of those tau, per state, from Pinocchio, in the robot's
    joint order (Pinocchio's is depth first: its joint k is the robot's link order[k])."""
    model = to_pinocchio(robot, params)
    data = model.createData()
    order = list(robot.depth_first())
    damping = np.array(model.damping)
    out = []
    for k in range(len(q)):
        x, xd, xdd = q[k, order], qd[k, order], qdd[k, order]
        tau, M = np.empty(robot.n), np.empty((robot.n, robot.n))
        tau[order] = pin.rnea(model, data, x, xd, xdd) + damping * xd
        upper = np.triu(pin.crba(model, data, x))
        M[np.ix_(order, order)] = upper + np.triu(upper, 1).T
        qdd_pin = np.empty(robot.n)
        qdd_pin[order] = pin.aba(model, data, x, xd, tau[order] - damping * xd)
        out.append((tau, M, qdd_pin))
    return [np.array(x) for x in zip(*out, strict=True)]


def assert_tree_matches_pinocchio(robot: rd.Manipulator, params=None, N: int = 12, seed: int = 0) -> None:
    q, qd, qdd = _states(robot.n, N, seed)
    tau_pin, M_pin, qdd_pin = _pinocchio_dynamics(robot, params, q, qd, qdd)
    assert _rel(qdd_pin, qdd) < 1e-7  # Pinocchio closes its own loop
    tau = numeric.inverse_dynamics(robot, q, qd, qdd, params=params)
    assert _rel(tau, tau_pin) < TOL
    assert _rel(numeric.mass_matrix(robot, q, params=params), M_pin) < TOL
    assert _rel(numeric.forward_dynamics(robot, q, qd, tau, params=params), qdd_pin) < TOL
    assert _rel(aba_forward_dynamics(robot, q, qd, tau, params=params), qdd_pin) < TOL
    model = compile_model(robot, params)  # the general recursions behind the unrolled kernels
    assert _rel(rnea_reference(model, q.T, qd.T, qdd.T).T, tau_pin) < TOL
    assert _rel(crba_reference(model, q.T), M_pin) < TOL


def test_the_test_tree_matches_pinocchio():
    assert_tree_matches_pinocchio(rd.load(TREE), PARAMS)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("convention", ["standard", "modified"])
def test_random_trees_match_pinocchio(seed: int, convention: str) -> None:
    robot = random_tree(seed, 3 + seed % 5, convention, extras=False)
    assert robot.is_tree
    assert_tree_matches_pinocchio(robot, seed=seed)


@pytest.mark.parametrize("seed", range(4))
def test_random_trees_with_damping_armature_and_payload_match_pinocchio(seed: int) -> None:
    robot = random_tree(seed, 5, "modified").replace(tip_force=(0, 0, 0), tip_moment=(0, 0, 0))
    assert_tree_matches_pinocchio(robot, seed=seed)


def test_the_tip_load_acts_on_the_last_link():
    """tau = RNEA + J^T w for the load w that the last link exerts (Fu's f_{n+1}, n_{n+1})."""
    robot = random_tree(3, 6, "modified")
    free = robot.replace(tip_force=(0, 0, 0), tip_moment=(0, 0, 0))
    q, qd, qdd = _states(robot.n, 5, 1)
    load = numeric.inverse_dynamics(robot, q, qd, qdd) - numeric.inverse_dynamics(free, q, qd, qdd)
    R, _ = kinematics.tool_pose(robot.replace(tool=None), q)
    wrench = np.concatenate([R @ np.array(robot.tip_force, dtype=float),
                             R @ np.array(robot.tip_moment, dtype=float)], axis=1)
    expected = np.einsum("nij,ni->nj", kinematics.jacobian(robot.replace(tool=None), q), wrench)
    assert _rel(load, expected) < TOL
    carrying = set(robot.ancestors(robot.n - 1))
    assert np.all(load[:, [k for k in range(robot.n) if k not in carrying]] == 0)


def test_depth_first_order():
    robot = random_tree(0, 3, "standard")
    assert robot.parents == (-1, -1, 0) and robot.depth_first() == (0, 2, 1)
    assert rd.load(TREE).depth_first() == tuple(range(7))


def test_mass_matrix_is_block_sparse_where_the_tree_says():
    robot = rd.load(TREE)
    M = numeric.mass_matrix(robot, _states(robot.n, 3, 2)[0], params=PARAMS)
    for i in range(robot.n):
        for k in range(robot.n):
            related = i in robot.ancestors(k) or k in robot.ancestors(i)
            assert np.all(M[:, i, k] == 0) != related, (i, k)


@pytest.mark.parametrize("convention", ["standard", "modified"])
def test_kinematics_of_the_last_link_match_pinocchio(convention: str) -> None:
    robot = random_tree(6, 7, convention, extras=False).replace(tool=None)
    model = to_pinocchio(robot)
    data = model.createData()
    q, qd, _ = _states(robot.n, 4, 3)
    J = kinematics.jacobian(robot, q)
    J_dot = kinematics.jacobian_dot(robot, q, qd)
    V = kinematics.potential_energy(robot, q)
    order = list(robot.depth_first())
    last = order.index(robot.n - 1) + 1  # Pinocchio's joint id of the last link
    frame = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    for k in range(len(q)):
        x, xd = q[k, order], qd[k, order]
        pin.computeJointJacobians(model, data, x)
        pin.computeJointJacobiansTimeVariation(model, data, x, xd)
        # the tool sits at link frame n = joint frame n * C_n: move Pinocchio's joint Jacobian to that point
        offset = data.oMi[last].rotation @ kinematics.tool_offset(robot)[:3, 3]
        J_pin = np.empty((6, robot.n))
        J_pin[:, order] = pin.getJointJacobian(model, data, last, frame)
        J_pin[:3] -= np.cross(offset, J_pin[3:].T).T
        assert _rel(J[k], J_pin) < TOL
        assert _rel(V[k], pin.computePotentialEnergy(model, data, x)) < TOL
        if convention == "modified":  # the rate of the point-shifted Jacobian has an extra term; modified: none
            J_dot_pin = np.empty((6, robot.n))
            J_dot_pin[:, order] = pin.getJointJacobianTimeVariation(model, data, last, frame)
            assert _rel(J_dot[k], J_dot_pin) < TOL


def test_kane_runs_on_a_tree_without_placements():
    """Kane's three stages over the parent array (recursions/kane.py); Angeles' notation has no placements."""
    robot = random_tree(2, 6, "standard", placements=False)
    q, qd, qdd = _states(robot.n, 5, 4)
    assert _rel(kane_inverse_dynamics(robot, q, qd, qdd), numeric.inverse_dynamics(robot, q, qd, qdd)) < TOL

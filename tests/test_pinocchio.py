"""robodyn.numeric against Pinocchio (an independent C++ implementation of Featherstone's algorithms).

The arm is rebuilt in Pinocchio from the DH table alone, not from robodyn's compiled arrays: link i's
transform A_i = B_i Rot(z, theta_i) Trans(z, d_i) C_i (standard DH: B = I, C = Trans(x, a) Rot(x, alpha);
modified DH: B = Rot(x, alpha) Trans(x, a), C = I) becomes a joint placement C_{i-1} B_i Rot(z, theta0_i)
Trans(z, d0_i) followed by a revolute (RZ) or prismatic (PZ) joint; link i's inertia, given in link frame
i, is moved onto the joint frame by C_i. No damping, armature or tip load (Pinocchio has none of them).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from tests.conftest import load_quiet, random_robot

pin = pytest.importorskip("pinocchio")

TOL = 1e-9


def _f(value: object) -> float:
    return float(value)  # type: ignore[arg-type]


def _rot_x(alpha: float) -> np.ndarray:
    c, s = np.cos(alpha), np.sin(alpha)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _rot_z(theta: float) -> np.ndarray:
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _dh_pieces(link: rd.Link, convention: str) -> tuple[object, object, object]:
    """(B, S at q = 0, C) of one link as Pinocchio SE3 placements."""
    a, alpha = _f(link.a), _f(link.alpha)
    trans_x = pin.SE3(np.eye(3), np.array([a, 0.0, 0.0]))
    rot_x = pin.SE3(_rot_x(alpha), np.zeros(3))
    screw = pin.SE3(_rot_z(_f(link.theta)), np.zeros(3)) * pin.SE3(np.eye(3), np.array([0.0, 0.0, _f(link.d)]))
    if convention == "standard":
        return pin.SE3.Identity(), screw, trans_x * rot_x
    return rot_x * trans_x, screw, pin.SE3.Identity()


def _inertia(body: rd.model.manipulator.RigidBody) -> object:
    com = np.array([_f(x) for x in body.com])
    rotational = np.array(body.inertia.tolist(), dtype=float)
    return pin.Inertia(_f(body.mass), com, rotational)


def pinocchio_model(robot: rd.Manipulator) -> object:
    """The same arm as a Pinocchio model (numeric robots only)."""
    model = pin.Model()
    model.gravity = pin.Motion(np.array([_f(x) for x in robot.gravity]), np.zeros(3))
    parent, C_prev = 0, pin.SE3.Identity()
    for i, link in enumerate(robot.links):
        B, S0, C = _dh_pieces(link, robot.convention)
        joint = pin.JointModelRZ() if link.revolute else pin.JointModelPZ()
        parent = model.addJoint(parent, joint, C_prev * B * S0, f"joint{i + 1}")
        for body in robot.bodies(i):
            model.appendBodyToJoint(parent, C.act(_inertia(body)), pin.SE3.Identity())
        C_prev = C
    return model


def _states(n: int, N: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (N, n)), rng.uniform(-2, 2, (N, n)), rng.uniform(-5, 5, (N, n))


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1.0))


def assert_matches_pinocchio(robot: rd.Manipulator, N: int = 20, seed: int = 0) -> None:
    model = pinocchio_model(robot)
    data = model.createData()
    q, qd, qdd = _states(robot.n, N, seed)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    M = numeric.mass_matrix(robot, q)
    qdd_fd = numeric.forward_dynamics(robot, q, qd, tau)
    for k in range(N):
        tau_pin = pin.rnea(model, data, q[k], qd[k], qdd[k])
        M_pin = np.triu(pin.crba(model, data, q[k]))
        M_pin = M_pin + np.triu(M_pin, 1).T
        qdd_pin = pin.aba(model, data, q[k], qd[k], tau_pin)
        assert _rel(tau[k], tau_pin) < TOL, f"{robot.name} rnea at state {k}"
        assert _rel(M[k], M_pin) < TOL, f"{robot.name} crba at state {k}"
        assert _rel(qdd_fd[k], qdd_pin) < TOL, f"{robot.name} aba at state {k}"
        assert _rel(qdd_pin, qdd[k]) < 1e-7  # Pinocchio itself closes the loop


@pytest.mark.parametrize("name", ["puma560", "stanford_arm", "industrial_6r"])
@pytest.mark.parametrize("convention", ["standard", "modified"])
def test_library_arm_matches_pinocchio(name: str, convention: str) -> None:
    robot = load_quiet(name)
    if robot.convention != convention:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rd.ModelWarning)  # published inertias, re-checked on conversion
            robot = robot.to_convention(convention)
    assert_matches_pinocchio(robot)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("convention", ["standard", "modified"])
def test_random_arm_matches_pinocchio(seed: int, convention: str) -> None:
    robot = random_robot(seed, 2 + seed % 5, convention, extras=False)
    assert_matches_pinocchio(robot, seed=seed)


def test_payload_matches_pinocchio() -> None:
    base = random_robot(5, 4, "standard", extras=False)
    payload = rd.Payload(mass=1.3, com=[0.05, -0.1, 0.2], inertia=[0.01, 0.02, 0.015])
    assert_matches_pinocchio(base.replace(payload=payload))

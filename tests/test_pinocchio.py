"""robodyn.numeric against Pinocchio (an independent C++ implementation of Featherstone's algorithms).

The arm is rebuilt in Pinocchio from the DH table alone by :func:`robodyn.formats.pinocchio.to_pinocchio`, not from
robodyn's compiled arrays: link i's transform A_i = B_i Rot(z, theta_i) Trans(z, d_i) C_i (standard DH: B = I,
C = Trans(x, a) Rot(x, alpha); modified DH: B = Rot(x, alpha) Trans(x, a), C = I) becomes a joint placement
C_{i-1} B_i Rot(z, theta0_i) Trans(z, d0_i) followed by a revolute (RZ) or prismatic (PZ) joint; link i's
inertia, given in link frame i, is moved onto the joint frame by C_i. No damping, armature or tip load here.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from tests.conftest import load_quiet, random_robot

pin = pytest.importorskip("pinocchio")
from robodyn.formats.pinocchio import to_pinocchio as pinocchio_model  # noqa: E402  (after the skip)

TOL = 1e-9


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

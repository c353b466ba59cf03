"""A floating robot's derivatives and kinematics in the numeric engine (robodyn.numeric.floating_derivatives) and its
forward dynamics by ABA (robodyn.numeric.floating), against Pinocchio 4.1's model of the same URDF with a
``JointModelFreeFlyer`` root at random states: computeRNEADerivatives, computeABADerivatives, aba,
jacobianCenterOfMass, getFrameJacobian, getFrameJacobianTimeVariation, getFrameClassicalAcceleration and
computeCentroidalMapTimeVariation, to 1e-9; the invariants dtau/da = M, dv'/dtau = M^-1; the tangent-space
derivatives against central differences on the manifold; a coupled robot's projected derivatives."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.errors import ModelError
from robodyn.model import joints
from robodyn.numeric import floating, floating_derivatives
from tests.numeric.test_floating import ROBOTS, SOLO12, TOLERANCE, _load, _path, _pinocchio_q, _relative

pin = pytest.importorskip("pinocchio")
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")

#: Three floating robots (18, 18 and 38 dof) and two named frames of each (a foot or hand, the base link).
CASES = {
    SOLO12: ("FL_FOOT", "base_link"),
    "anymal_b_simple_description/robots/anymal.urdf": ("RH_FOOT", "base"),
    "talos_data/robots/talos_reduced.urdf": ("arm_right_7_link", "left_sole_link"),
}
REFERENCES = {"local": "LOCAL", "world": "WORLD", "local_world_aligned": "LOCAL_WORLD_ALIGNED"}


@dataclass
class Case:
    robot: rd.Manipulator
    model: Any
    data: Any
    frames: tuple[str, ...]
    states: list[tuple[np.ndarray, np.ndarray, np.ndarray]]  # (q, v, a), robodyn's coordinates


def _random_state(robot: rd.Manipulator, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q = np.concatenate([joints.random_configuration(rng), rng.uniform(-1, 1, robot.nq - 7)])
    return q, rng.uniform(-1, 1, robot.nv), rng.uniform(-1, 1, robot.nv)


@pytest.fixture(scope="module", params=list(CASES), ids=lambda name: name.split("/")[-1].removesuffix(".urdf"))
def case(request: pytest.FixtureRequest) -> Case:
    robot = _load(request.param)
    model = pin.buildModelFromUrdf(str(_path(request.param)), pin.JointModelFreeFlyer())
    rng = np.random.default_rng(31)
    return Case(robot, model, model.createData(), CASES[request.param],
                [_random_state(robot, rng) for _ in range(2)])


def _damping(case: Case) -> np.ndarray:
    """robodyn's damping b (its tau has b v; Pinocchio's rnea has none) as a diagonal matrix."""
    return np.diag(np.concatenate([np.zeros(6), case.model.damping[6:]]))


def _friction(case: Case, v: np.ndarray) -> np.ndarray:
    """robodyn's Coulomb friction f sign(v) of the URDF's joints (Pinocchio's rnea has none; constant away from
    v = 0, so no derivative has it)."""
    return np.concatenate([np.zeros(6), case.model.friction[6:] * np.sign(v[6:])])


def test_inverse_dynamics_derivatives(case: Case) -> None:
    for q, v, a in case.states:
        qp = _pinocchio_q(case.model, q)
        dq, dv, da = pin.computeRNEADerivatives(case.model, case.data, qp, v, a)
        da = np.triu(da) + np.triu(da, 1).T
        ours = numeric.inverse_dynamics_derivatives(case.robot, q, v, a)
        assert _relative(ours[0], dq) < TOLERANCE
        assert _relative(ours[1], dv + _damping(case)) < TOLERANCE
        assert _relative(ours[2], da) < TOLERANCE
        np.testing.assert_allclose(ours[2], numeric.mass_matrix(case.robot, q), rtol=0, atol=1e-12)  # dtau/da = M


def test_forward_dynamics_and_derivatives(case: Case) -> None:
    for q, v, a in case.states:
        qp = _pinocchio_q(case.model, q)
        tau = pin.rnea(case.model, case.data, qp, v, a)
        ours_tau = tau + _damping(case) @ v + _friction(case, v)
        M = numeric.mass_matrix(case.robot, q)
        scale = max(1.0, float(np.abs(tau).max()))
        for method in floating.FORWARD_METHODS:  # backward error, in torque
            qdd = floating.forward_dynamics(case.robot, q, v, ours_tau, method=method)
            assert np.abs(M @ (qdd - pin.aba(case.model, case.data, qp, v, tau))).max() < TOLERANCE * scale
        dq, dv, dtau = pin.computeABADerivatives(case.model, case.data, qp, v, tau)
        ours = numeric.forward_dynamics_derivatives(case.robot, q, v, ours_tau)
        assert _relative(ours[0], dq) < TOLERANCE
        assert _relative(ours[1], dv - dtau @ _damping(case)) < TOLERANCE  # (robodyn's damping: -M^-1 b)
        assert _relative(ours[2], dtau) < TOLERANCE
        assert np.abs(ours[2] @ M - np.eye(case.robot.nv)).max() < 1e-9  # dv'/dtau = M^-1


def test_kinematics(case: Case) -> None:
    model, data = case.model, case.data
    for q, v, _ in case.states:
        qp = _pinocchio_q(model, q)
        Jc = pin.jacobianCenterOfMass(model, data, qp)
        assert _relative(numeric.center_of_mass_jacobian(case.robot, q), Jc) < TOLERANCE
        pin.computeJointJacobiansTimeVariation(model, data, qp, v)
        pin.forwardKinematics(model, data, qp, v, np.zeros(model.nv))
        pin.updateFramePlacements(model, data)
        for frame in case.frames:
            frame_id = model.getFrameId(frame)
            for reference, pin_reference in REFERENCES.items():
                J = numeric.frame_jacobian(case.robot, q, frame, reference=reference)
                dJ = numeric.frame_jacobian_dot(case.robot, q, v, frame, reference=reference)
                ref = getattr(pin.ReferenceFrame, pin_reference)
                assert _relative(J, pin.getFrameJacobian(model, data, frame_id, ref)) < TOLERANCE
                assert _relative(dJ, pin.getFrameJacobianTimeVariation(model, data, frame_id, ref)) < TOLERANCE
            bias = numeric.frame_jacobian_dot(case.robot, q, v, frame) @ v  # (local_world_aligned)
            classical = pin.getFrameClassicalAcceleration(model, data, frame_id, pin.LOCAL_WORLD_ALIGNED).vector
            assert _relative(bias, classical) < TOLERANCE
        dA = numeric.centroidal_map_dot(case.robot, q, v)
        dA_pin = pin.computeCentroidalMapTimeVariation(model, data, qp, v)
        assert _relative(dA @ v, dA_pin @ v) < TOLERANCE
        # Pinocchio's dAg leaves out -c' x (m J_c), which vanishes on v (c' x m c' = 0); robodyn's is dA_G/dt
        c_dot = Jc @ v
        dA_pin[3:] -= np.cross(c_dot[:, None], data.Ag[:3], axis=0)
        assert _relative(dA, dA_pin) < TOLERANCE



def _step(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """q (+) v: the base on SE(3), the joints additively."""
    return np.concatenate([joints.integrate(q[:7], v[:6]), q[7:] + v[6:]])


def _central(f: Any, q: np.ndarray, nv: int, eps: float = 1e-6) -> np.ndarray:
    """d f(q (+) x) / dx at x = 0 by central differences, columns over the tangent space."""
    columns = []
    for j in range(nv):
        e = np.zeros(nv)
        e[j] = eps
        columns.append((f(_step(q, e)) - f(_step(q, -e))) / (2 * eps))
    return np.stack(columns, -1)


def test_tangent_space_derivatives_by_central_differences() -> None:
    """Independent of Pinocchio: d/dq along q (+) eps e_j, and d/dt of J, A_G along (q (+) v t)."""
    robot = _load(SOLO12)
    rng = np.random.default_rng(7)
    q, v, a = _random_state(robot, rng)
    dq, dv, _ = numeric.inverse_dynamics_derivatives(robot, q, v, a)
    tau = numeric.inverse_dynamics(robot, q, v, a)
    scale = float(np.abs(dq).max())
    assert np.abs(dq - _central(lambda x: numeric.inverse_dynamics(robot, x, v, a), q, robot.nv)).max() < 1e-7 * scale
    fd_dv = np.stack([(numeric.inverse_dynamics(robot, q, v + e, a) - numeric.inverse_dynamics(robot, q, v - e, a))
                      / 2e-6 for e in np.eye(robot.nv) * 1e-6], -1)
    assert np.abs(dv - fd_dv).max() < 1e-7 * float(np.abs(dv).max())
    fd_q = _central(lambda x: numeric.forward_dynamics(robot, x, v, tau), q, robot.nv)
    assert np.abs(numeric.forward_dynamics_derivatives(robot, q, v, tau)[0] - fd_q).max() < 1e-6 * np.abs(fd_q).max()
    for f, f_dot in ((lambda x: numeric.frame_jacobian(robot, x, "FL_FOOT", reference="local"),
                      numeric.frame_jacobian_dot(robot, q, v, "FL_FOOT", reference="local")),
                     (lambda x: numeric.centroidal_map(robot, x), numeric.centroidal_map_dot(robot, q, v))):
        along = (f(_step(q, v * 1e-6)) - f(_step(q, -v * 1e-6))) / 2e-6
        assert np.abs(f_dot - along).max() < 1e-7 * max(1.0, float(np.abs(f_dot).max()))


def test_batches_match_single_states() -> None:
    robot = _load(SOLO12)
    rng = np.random.default_rng(8)
    q, v, a = (np.stack(x) for x in zip(*(_random_state(robot, rng) for _ in range(3)), strict=True))
    for call, args in ((numeric.inverse_dynamics_derivatives, (v, a)), (numeric.forward_dynamics_derivatives, (v, a)),
                       (numeric.center_of_mass_jacobian, ()), (numeric.centroidal_map_dot, (v,)),
                       (lambda r, x, y: numeric.frame_jacobian_dot(r, x, y, "FL_FOOT", reference="world"), (v,))):
        batch = call(robot, q, *args)
        for k in range(3):
            one = call(robot, q[k], *(x[k] for x in args))
            for b, o in zip(batch if isinstance(batch, tuple) else (batch,), one if isinstance(one, tuple) else (one,),
                            strict=True):
                np.testing.assert_allclose(b[k], o, rtol=0, atol=1e-10)
    np.testing.assert_allclose(numeric.aba_forward_dynamics(robot, q, v, a),
                               floating.forward_dynamics(robot, q, v, a, method="cholesky"), rtol=0, atol=1e-9)
    with pytest.raises(ValueError, match="method must be one of aba, cholesky"):
        floating.forward_dynamics(robot, q, v, a, method="lu")


def test_coupled_robot() -> None:
    """The Panda on a free joint, its fingers coupled (a mimic joint): the tree's derivatives projected on the
    independent coordinates, G^T dtau_tree/dq_tree G; Cholesky of G^T M G for its forward dynamics."""
    panda = rd.load(str(_path("panda_description/urdf/panda.urdf")), floating=True)
    assert (panda.nq, panda.nv) == (15, 14)
    rng = np.random.default_rng(9)
    q, v, a = _random_state(panda, rng)
    dq, _, M = numeric.inverse_dynamics_derivatives(panda, q, v, a)
    np.testing.assert_allclose(M, numeric.mass_matrix(panda, q), rtol=0, atol=1e-12)
    fd = _central(lambda x: numeric.inverse_dynamics(panda, x, v, a), q, panda.nv)
    assert np.abs(dq - fd).max() < 1e-7 * float(np.abs(dq).max())
    tau = numeric.inverse_dynamics(panda, q, v, a)
    np.testing.assert_allclose(numeric.forward_dynamics(panda, q, v, tau), a, atol=1e-8)
    assert np.abs(numeric.forward_dynamics_derivatives(panda, q, v, tau)[2] @ M - np.eye(14)).max() < 1e-8
    Jc = numeric.center_of_mass_jacobian(panda, q)
    np.testing.assert_allclose(Jc, _central(lambda x: numeric.center_of_mass(panda, x), q, panda.nv), atol=1e-8)
    J = numeric.frame_jacobian(panda, q, "panda_leftfinger", reference="world")
    assert J.shape == (6, 14)
    with pytest.raises(ModelError, match="method='cholesky'"):
        floating.forward_dynamics(panda, q, v, tau, method="aba")
    with pytest.raises(ValueError, match="unknown reference"):
        floating_derivatives.frame_jacobian(panda, q, "panda_hand", reference="body")


def test_singular_mass_matrix_is_refused() -> None:
    """Romeo's massless finger links (no armature): both methods refuse as a Cholesky factorisation does."""
    romeo = _load("romeo_description/urdf/romeo.urdf")
    q = np.concatenate([joints.neutral(), np.zeros(romeo.nq - 7)])
    for method in floating.FORWARD_METHODS:
        with pytest.raises(np.linalg.LinAlgError):
            floating.forward_dynamics(romeo, q, np.zeros(romeo.nv), np.zeros(romeo.nv), method=method)

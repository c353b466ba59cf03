"""The joint model, in one place (spatial_v2's ``jcalc``, Pinocchio's joint models): per joint type its sizes
(nq coordinates, nv velocities), its transform from the configuration, its motion subspace S, and the
configuration's update on its manifold (integrate, difference, neutral and random configurations).

- ``revolute`` (R) and ``prismatic`` (P): nq = nv = 1, the transform Rot(z, q) or Trans(z, q), S = (0, 0, 0, 0, 0, 1)
  or (0, 0, 1, 0, 0, 0) in the (linear, angular) order; integrate is q + v dt. The recursions and programs keep their
  own component-wise fast paths for these two (:mod:`robodyn.recursions`): they are described here for the layers
  that work per joint slice (idx_q / idx_v), not used by the existing recursions.
- ``free`` (a floating base, Pinocchio's ``JointModelFreeFlyer``): nq = 7, nv = 6. The configuration is the
  position p (3) of the body frame's origin in the parent (world) frame, then the unit quaternion of its
  orientation in **Pinocchio's order (x, y, z, w)**, the scalar part last. The velocity is the body-frame twist
  (v, omega): the velocity of the body frame's origin and the angular velocity, both in the body frame (linear
  first, as Pinocchio's). S is the 6 x 6 identity in the body frame. The configuration moves on SE(3):
  integrate(q, v, dt) = q (+) exp6(v dt) (the body-frame exponential, ``pinocchio.integrate`` for the free flyer),
  difference(q0, q1) = log6(M0^-1 M1) (``pinocchio.difference``).
- ``spherical`` (S, a ball joint, Pinocchio's ``JointModelSpherical``, MuJoCo's ``ball``): nq = 4, nv = 3. The
  configuration is the unit quaternion (x, y, z, w) of the child frame's orientation in the joint's frame at rest
  (Pinocchio's order; MuJoCo's qpos holds w first), the velocity the angular velocity in the child frame, S =
  [0; I3] (no translation: the rotation is about the joint frame's origin). The configuration moves on SO(3):
  integrate(q, v, dt) = q (x) exp3(v dt), difference(q0, q1) = log3(R0^T R1).
- ``planar`` (Pinocchio's ``JointModelPlanar``): nq = 4, nv = 3. The configuration is (x, y, cos theta, sin theta):
  the child frame is Trans(x, y, 0) Rot(z, theta) in the joint's frame at rest; the velocity (vx, vy, omega_z) is
  the child frame's, in its own axes, S = (e_x, e_y, 0; 0, 0, e_z) in the (linear, angular) order. The configuration
  moves on SE(2): integrate(q, v, dt) = M(q) exp(v dt), difference(q0, q1) = log(M0^-1 M1) (``pinocchio.integrate``
  and ``pinocchio.difference``), here as the SE(3) exponential and logarithm of the planar twist.

The manifold functions (:func:`integrate`, :func:`difference`, :func:`neutral`, :func:`random_configuration`,
:func:`normalize`, :func:`is_normalized`) take the joint type as ``joint`` ("free", the default, "S" or "planar").

Pure NumPy; every function takes one configuration (nq,) or a batch (N, nq) and answers with the same leading
shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: Below this angle the exponential and logarithm of SO(3)/SE(3) use their Taylor series.
SMALL_ANGLE = 1e-6
#: |quaternion| - 1 beyond this is not a unit quaternion (:func:`is_normalized`).
NORM_TOLERANCE = 1e-9


@dataclass(frozen=True)
class JointType:
    """A joint type's sizes: ``nq`` configuration coordinates and ``nv`` velocities."""

    name: str
    nq: int
    nv: int


REVOLUTE = JointType("revolute", 1, 1)
PRISMATIC = JointType("prismatic", 1, 1)
FREE = JointType("free", 7, 6)
SPHERICAL = JointType("spherical", 4, 3)
PLANAR = JointType("planar", 4, 3)
JOINT_TYPES = {"R": REVOLUTE, "P": PRISMATIC, "S": SPHERICAL, "planar": PLANAR, "free": FREE}
#: A planar joint's twist (vx, vy, omega_z) among the six of a spatial motion (linear, angular).
PLANAR_AXES = (0, 1, 5)


def motion_subspace(joint: str) -> np.ndarray:
    """S of a joint type (6 x nv) in its own frame, rows (linear, angular)."""
    if joint == "free":
        return np.eye(6)
    if joint == "S":
        return np.vstack([np.zeros((3, 3)), np.eye(3)])
    if joint == "planar":
        return np.eye(6)[:, PLANAR_AXES]
    S = np.zeros((6, 1))
    S[5 if joint == "R" else 2, 0] = 1.0
    return S


# -- SO(3) and quaternions (x, y, z, w) --------------------------------------------------------------------------


def skew(w: np.ndarray) -> np.ndarray:
    """[w]x for vectors (..., 3): (..., 3, 3)."""
    w = np.asarray(w, dtype=float)
    out = np.zeros((*w.shape[:-1], 3, 3))
    out[..., 0, 1], out[..., 0, 2] = -w[..., 2], w[..., 1]
    out[..., 1, 0], out[..., 1, 2] = w[..., 2], -w[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -w[..., 1], w[..., 0]
    return out


def quaternion_matrix(quat: np.ndarray) -> np.ndarray:
    """The rotation of unit quaternions (..., 4) in the order (x, y, z, w): (..., 3, 3)."""
    x, y, z, w = np.moveaxis(np.asarray(quat, dtype=float), -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


def matrix_quaternion(R: np.ndarray) -> np.ndarray:
    """The unit quaternion (x, y, z, w), w >= 0, of rotations (..., 3, 3) (Shepperd's method, per entry)."""
    R = np.asarray(R, dtype=float)
    flat = R.reshape(-1, 3, 3)
    out = np.empty((flat.shape[0], 4))
    for k, m in enumerate(flat):
        t = np.trace(m)
        if t > 0:
            s = 2.0 * np.sqrt(1.0 + t)
            q = [(m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s, s / 4]
        else:
            i = int(np.argmax(np.diag(m)))
            j, k2 = (i + 1) % 3, (i + 2) % 3
            s = 2.0 * np.sqrt(1.0 + m[i, i] - m[j, j] - m[k2, k2])
            q = [0.0] * 4
            q[i], q[j], q[k2], q[3] = (s / 4, (m[j, i] + m[i, j]) / s, (m[k2, i] + m[i, k2]) / s,
                                       (m[k2, j] - m[j, k2]) / s)
        q_ = np.array(q)
        out[k] = -q_ if q_[3] < 0 else q_
    return out.reshape(*R.shape[:-2], 4)


def _exp3_parts(w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """theta = |w| and the coefficients a = sin t / t, b = (1 - cos t) / t^2, c = (t - sin t) / t^3 (series near 0)."""
    t = np.linalg.norm(w, axis=-1)
    small = t < SMALL_ANGLE
    ts = np.where(small, 1.0, t)
    t2 = t * t
    a = np.where(small, 1 - t2 / 6, np.sin(ts) / ts)
    b = np.where(small, 0.5 - t2 / 24, (1 - np.cos(ts)) / ts**2)
    c = np.where(small, 1 / 6 - t2 / 120, (ts - np.sin(ts)) / ts**3)
    return t, a, b, c


def exp3(w: np.ndarray) -> np.ndarray:
    """R = exp([w]x) of rotation vectors w (..., 3): I + a [w] + b [w]^2 (Rodrigues)."""
    w = np.asarray(w, dtype=float)
    _, a, b, _ = _exp3_parts(w)
    W = skew(w)
    return np.eye(3) + a[..., None, None] * W + b[..., None, None] * (W @ W)


def _log3_parts(R: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(w, t, ts, small): the rotation vector w of rotations R (..., 3, 3) of angle t below pi (ts = t, 1 where
    small: t below :data:`SMALL_ANGLE`, then the series)."""
    R = np.asarray(R, dtype=float)
    cos = np.clip((np.trace(R, axis1=-2, axis2=-1) - 1) / 2, -1.0, 1.0)
    t = np.arccos(cos)
    small = t < SMALL_ANGLE
    ts = np.where(small, 1.0, t)
    factor = np.where(small, 0.5 + t * t / 12, ts / (2 * np.sin(ts)))
    vee = np.stack([R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0], R[..., 1, 0] - R[..., 0, 1]], -1)
    return factor[..., None] * vee, t, ts, small


def log3(R: np.ndarray) -> np.ndarray:
    """The rotation vector w (..., 3) with exp3(w) = R, for rotations of angle below pi."""
    return _log3_parts(R)[0]


def exp6(nu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, p) = exp of twists nu (..., 6) = (v, omega): R = exp3(omega), p = V(omega) v, V = I + b [w] + c [w]^2."""
    nu = np.asarray(nu, dtype=float)
    v, w = nu[..., :3], nu[..., 3:]
    _, a, b, c = _exp3_parts(w)
    W = skew(w)
    W2 = W @ W
    eye = np.eye(3)
    R = eye + a[..., None, None] * W + b[..., None, None] * W2
    V = eye + b[..., None, None] * W + c[..., None, None] * W2
    return R, np.einsum("...ij,...j->...i", V, v)


def log6(R: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The twist (v, omega) (..., 6) with exp6 = (R, p), for rotations of angle below pi."""
    w, t, ts, small = _log3_parts(R)
    W = skew(w)
    # V^-1 = I - W/2 + (1/t^2)(1 - (t sin t) / (2 (1 - cos t))) W^2
    d = np.where(small, 1 / 12 + t * t / 720, (1 - ts * np.sin(ts) / (2 * (1 - np.cos(ts)))) / ts**2)
    Vinv = np.eye(3) - W / 2 + d[..., None, None] * (W @ W)
    return np.concatenate([np.einsum("...ij,...j->...i", Vinv, p), w], -1)


# -- the free joint --------------------------------------------------------------------------------------------


def free_transform(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, p) of free-joint configurations (..., 7): the body frame in its parent's (the world)."""
    q = np.asarray(q, dtype=float)
    return quaternion_matrix(q[..., 3:7]), q[..., :3]


def free_configuration(R: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The configuration (..., 7) of a pose (R, p): position, then the quaternion (x, y, z, w)."""
    return np.concatenate([np.asarray(p, dtype=float), matrix_quaternion(R)], -1)


def _turned(quat: np.ndarray, R1: np.ndarray) -> np.ndarray:
    """The quaternion (x, y, z, w) of rotations R1 (..., 3, 3), in the hemisphere of ``quat`` (the same rotation)."""
    out = matrix_quaternion(R1)
    sign = np.where(np.sum(out * np.asarray(quat, dtype=float), axis=-1) < 0, -1.0, 1.0)
    return out * sign[..., None]


# -- the planar joint -------------------------------------------------------------------------------------------


def planar_transform(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, p) of planar-joint configurations (..., 4) = (x, y, cos theta, sin theta): Rot(z, theta), (x, y, 0)."""
    q = np.asarray(q, dtype=float)
    c, s = q[..., 2], q[..., 3]
    zero, one = np.zeros_like(c), np.ones_like(c)
    R = np.stack([np.stack([c, -s, zero], -1), np.stack([s, c, zero], -1), np.stack([zero, zero, one], -1)], -2)
    return R, np.stack([q[..., 0], q[..., 1], zero], -1)


def _planar_twist(v: np.ndarray) -> np.ndarray:
    """The spatial twists (..., 6) of planar velocities (..., 3) = (vx, vy, omega_z)."""
    v = np.asarray(v, dtype=float)
    out = np.zeros((*v.shape[:-1], 6))
    out[..., PLANAR_AXES] = v
    return out


def _integrate_planar(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    R, p = planar_transform(q)
    dR, dp = exp6(_planar_twist(v))
    R1 = R @ dR
    p1 = p + np.einsum("...ij,...j->...i", R, dp)
    return np.stack([p1[..., 0], p1[..., 1], R1[..., 0, 0], R1[..., 1, 0]], -1)


def _difference_planar(q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    R0, p0 = planar_transform(q0)
    R1, p1 = planar_transform(q1)
    R0t = np.swapaxes(R0, -1, -2)
    return log6(R0t @ R1, np.einsum("...ij,...j->...i", R0t, p1 - p0))[..., PLANAR_AXES]


def _quaternion_slice(joint: str) -> slice:
    """Where a joint type's configuration holds its quaternion: q[3:7] for the free joint, q[0:4] for "S"; for a
    planar joint its unit complex number (cos, sin), q[2:4]."""
    if joint == "free":
        return slice(3, 7)
    if joint == "S":
        return slice(0, 4)
    if joint == "planar":
        return slice(2, 4)
    raise ValueError(f"joint must be 'free', 'S' or 'planar' (the joints with nq > nv), got {joint!r}")


def integrate(q: np.ndarray, v: np.ndarray, dt: float = 1.0, joint: str = "free") -> np.ndarray:
    """q (+) v dt on the joint's manifold, as ``pinocchio.integrate``: for the free joint (the default) the pose
    M(q) exp6(v dt) (v the body-frame twist), for a spherical one ("S") the rotation R(q) exp3(v dt) (v the angular
    velocity in the child frame), for a planar one the pose M(q) exp(v dt) on SE(2) (v = (vx, vy, omega_z) in the
    child frame)."""
    _quaternion_slice(joint)
    q = np.asarray(q, dtype=float)
    if joint == "planar":
        return _integrate_planar(q, np.asarray(v, dtype=float) * dt)
    if joint == "S":
        R = quaternion_matrix(q)
        return _turned(q, R @ exp3(np.asarray(v, dtype=float) * dt))
    R, p = free_transform(q)
    dR, dp = exp6(np.asarray(v, dtype=float) * dt)
    p1 = p + np.einsum("...ij,...j->...i", R, dp)
    return np.concatenate([p1, _turned(q[..., 3:7], R @ dR)], -1)


def difference(q0: np.ndarray, q1: np.ndarray, joint: str = "free") -> np.ndarray:
    """v with integrate(q0, v) = q1, as ``pinocchio.difference``: log6(M0^-1 M1) (the body-frame twist) for the free
    joint, log3(R0^T R1) (the angular velocity in the child frame) for a spherical one ("S"), the planar twist of
    log(M0^-1 M1) for a planar one."""
    _quaternion_slice(joint)
    if joint == "planar":
        return _difference_planar(q0, q1)
    if joint == "S":
        R0t = np.swapaxes(quaternion_matrix(q0), -1, -2)
        return log3(R0t @ quaternion_matrix(q1))
    R0, p0 = free_transform(q0)
    R1, p1 = free_transform(q1)
    R0t = np.swapaxes(R0, -1, -2)
    return log6(R0t @ R1, np.einsum("...ij,...j->...i", R0t, p1 - p0))


def neutral(joint: str = "free") -> np.ndarray:
    """The identity: (0, 0, 0, 0, 0, 0, 1) for the free joint, (0, 0, 0, 1) for a spherical one ("S"), (0, 0, 1, 0)
    for a planar one."""
    _quaternion_slice(joint)
    if joint == "planar":
        return np.array([0.0, 0, 1, 0])
    return np.array([0.0, 0, 0, 1]) if joint == "S" else np.array([0.0, 0, 0, 0, 0, 0, 1])


def _random_quaternion(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Unit quaternions (x, y, z, w) (*shape, 4) uniform on SO(3): normalised Gaussians, w >= 0."""
    quat = rng.standard_normal((*shape, 4))
    quat /= np.linalg.norm(quat, axis=-1, keepdims=True)
    quat *= np.where(quat[..., 3:] < 0, -1.0, 1.0)
    return quat


def random_configuration(rng: np.random.Generator, size: int | None = None, box: float = 1.0,
                         joint: str = "free") -> np.ndarray:
    """Quaternions uniform on SO(3) (normalised Gaussians, w >= 0), after positions uniform in [-box, box]^3 for the
    free joint (the default); the quaternion alone for a spherical one ("S"); for a planar one (x, y) uniform in
    [-box, box]^2 and theta uniform in [-pi, pi)."""
    _quaternion_slice(joint)
    shape: tuple[int, ...] = () if size is None else (size,)
    if joint == "planar":
        theta = rng.uniform(-np.pi, np.pi, shape)
        return np.concatenate([rng.uniform(-box, box, (*shape, 2)), np.stack([np.cos(theta), np.sin(theta)], -1)],
                              -1)
    if joint == "S":
        return _random_quaternion(rng, shape)
    p = rng.uniform(-box, box, (*shape, 3))
    return np.concatenate([p, _random_quaternion(rng, shape)], -1)


def normalize(q: np.ndarray, joint: str = "free") -> np.ndarray:
    """q with its quaternion (a planar joint's (cos, sin)) scaled to unit length."""
    part = _quaternion_slice(joint)
    q = np.array(q, dtype=float)
    q[..., part] /= np.linalg.norm(q[..., part], axis=-1, keepdims=True)
    return q


def is_normalized(q: Any, tolerance: float = NORM_TOLERANCE, joint: str = "free") -> bool:
    """True where every configuration's quaternion has unit length within ``tolerance``."""
    quat = np.asarray(q, dtype=float)[..., _quaternion_slice(joint)]
    return bool(np.all(np.abs(np.linalg.norm(quat, axis=-1) - 1) <= tolerance))


__all__ = ["FREE", "JOINT_TYPES", "PLANAR", "PLANAR_AXES", "PRISMATIC", "REVOLUTE", "SPHERICAL", "JointType",
           "difference", "exp3", "exp6", "free_configuration", "free_transform", "integrate", "is_normalized", "log3",
           "log6", "matrix_quaternion", "motion_subspace", "neutral", "normalize", "planar_transform",
           "quaternion_matrix", "random_configuration", "skew"]

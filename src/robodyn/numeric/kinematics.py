"""Numeric kinematics in NumPy on batches of joint values: frames, tool pose, geometric Jacobian and its
time derivative, and the potential energy of gravity.

Frames are the *joint frames* of :mod:`robodyn.numeric.model` (joint i moves about/along the z axis of
joint frame i, whose origin lies on the axis), chained as

    X_i = X_lambda(i) K_i S_i(q_i),   K_i = (E_i, p_i),   S_i = Rot(z, theta_i) Trans(z, d_i),

(lambda(i) the parent of link i: i - 1 on a chain), so that link frame n is X_n C_n (C_n = Trans(x, a_n)
Rot(x, alpha_n) in standard DH, the identity in modified DH) and the tool frame is X_n C_n T_tool. The
geometric Jacobian has rows (v; omega) in the base frame like :func:`robodyn.formulations.kinematics.jacobian`: column
i is
(z_i x (p - o_i); z_i) for a revolute joint and (z_i; 0) for a prismatic one, for the joints that carry the
last link (on a tree the columns of the other branches are zero).

Shapes: ``q`` of shape (n,) gives results for one state; (N, n) gives a leading batch axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.model.floats import Floats
from robodyn.model.frames import joint_frame_offset
from robodyn.model.manipulator import Manipulator
from robodyn.model.params import symbol_values
from robodyn.model.spatial import rot_x
from robodyn.numeric import couplings
from robodyn.numeric.model import NumericModel, Params, compile_model


@dataclass(frozen=True)
class Frames:
    """Joint frames of a batch: rotations ``R`` (N, n, 3, 3) and origins ``o`` (N, n, 3) in the base frame."""

    R: np.ndarray
    o: np.ndarray

    @property
    def axes(self) -> np.ndarray:
        """Joint axes z_i in the base frame, (N, n, 3)."""
        return self.R[..., :, 2]


def _batch(q: np.ndarray, n: int) -> tuple[bool, np.ndarray]:
    q = np.asarray(q, dtype=float)
    if q.ndim not in (1, 2) or q.shape[-1] != n:
        raise ValueError(f"joint values must have shape ({n},) or (N, {n}), got {q.shape}")
    return q.ndim == 1, np.atleast_2d(q)


def _rz(theta: np.ndarray) -> np.ndarray:
    """Rot(z, theta) for a batch of angles (N,): (N, 3, 3)."""
    c, s = np.cos(theta), np.sin(theta)
    out = np.zeros((theta.size, 3, 3))
    out[:, 0, 0], out[:, 0, 1], out[:, 1, 0], out[:, 1, 1], out[:, 2, 2] = c, -s, s, c, 1.0
    return out


#: A joint frame's motion after S_i(q_i): a rotation (N, 3, 3) and a translation (N, 3) in that frame, or None.
Turn = tuple[np.ndarray, np.ndarray | None]


def joint_frames(model: NumericModel, q: np.ndarray, turns: dict[int, Turn] | None = None) -> Frames:
    """X_1..X_n for q of shape (N, n) (always batched here). ``turns``: per joint i a motion (R, p) after S_i(q_i):
    Trans(p) Rot(R) in the joint frame (a spherical joint's rotation about its origin, p None; a planar joint's
    Trans(x, y, 0) Rot(z, theta); :mod:`robodyn.numeric.floating`)."""
    N, n = q.shape
    R = np.empty((N, n, 3, 3))
    o = np.empty((N, n, 3))
    R_base, o_base = np.broadcast_to(np.eye(3), (N, 3, 3)), np.zeros((N, 3))
    for i in range(n):
        lam = model.parent[i]
        R_prev, o_prev = (R[:, lam], o[:, lam]) if lam >= 0 else (R_base, o_base)
        E, p = model.E[i], model.p[i]
        if model.revolute[i]:
            theta, d = model.theta0[i] + q[:, i], np.full(N, model.d0[i])
        else:
            theta, d = np.full(N, model.theta0[i]), model.d0[i] + q[:, i]
        RE = R_prev @ E
        o[:, i] = o_prev + R_prev @ p + RE[:, :, 2] * d[:, None]
        if turns is None or i not in turns:
            R[:, i] = RE @ _rz(theta)
            continue
        turn, shift = turns[i]
        R_rest = RE @ _rz(theta)
        R[:, i] = R_rest @ turn
        if shift is not None:
            o[:, i] += np.einsum("nij,nj->ni", R_rest, shift)
    return Frames(R, o)


def tool_offset(robot: Manipulator, params: Params | None = None) -> np.ndarray:
    """C_n T_tool as a 4x4 array: the tool frame in joint frame n."""
    return link_offset(robot, robot.n - 1, params) @ Floats(symbol_values(params)).array(robot.tool, (4, 4))


#: The frames a frame's Jacobian and its time derivative can be expressed in, named as Pinocchio names them
#: (``pin.ReferenceFrame``): ``local_world_aligned`` (the default; rows (v; omega): the velocity of the frame's origin
#: and the angular velocity, in the base frame: robodyn's geometric Jacobian), ``world`` (the spatial velocity: the
#: velocity of the point of the frame's body at the base origin, and omega, in the base frame) and ``local`` (the
#: frame's own velocity and omega in its own axes).
REFERENCES = ("local_world_aligned", "world", "local")


def frame_offset(robot: Manipulator, frame: str | None, params: Params | None = None) -> tuple[int, np.ndarray]:
    """(k, T): the named frame ``frame`` (:meth:`~robodyn.Manipulator.frame`; None: the tool frame, link frame n
    times ``robot.tool``) as its link k (-1: the base) and its placement T (4x4) in joint frame k
    (:func:`robodyn.model.frames.joint_frame_offset`)."""
    k, T = joint_frame_offset(robot, frame)
    return k, Floats(symbol_values(params)).array(T, (4, 4))


def _placed(frames: Frames, k: int, T: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, p) of the frame at T in joint frame k (the base for k = -1), (N, 3, 3) and (N, 3)."""
    N = frames.R.shape[0]
    if k < 0:
        return np.broadcast_to(T[:3, :3], (N, 3, 3)).copy(), np.broadcast_to(T[:3, 3], (N, 3)).copy()
    return frames.R[:, k] @ T[:3, :3], frames.o[:, k] + frames.R[:, k] @ T[:3, 3]


def tool_pose(
    robot: Manipulator, q: np.ndarray, params: Params | None = None, *, frame: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(R, p) of the tool frame in the base frame: (3, 3) and (3,), or (N, 3, 3) and (N, 3).

    ``frame``: a named frame (:meth:`~robodyn.Manipulator.frame`: a URDF link such as ``"panda_hand"``, a model
    file's frame, a link's ``name``). None: the tool frame, link frame n (the last link of the list) times
    ``robot.tool``; for a URDF robot that is robodyn's frame of its last moving joint (the joint's child link frame
    turned so that the joint axis is z), not a link of the file: name the frame you mean."""
    model = compile_model(robot, params)
    single, qb = _batch(couplings.position(model, q), model.n)
    R, p = _placed(joint_frames(model, qb), *frame_offset(robot, frame, params))
    return (R[0], p[0]) if single else (R, p)


def frame_pose(robot: Manipulator, q: np.ndarray, frame: str | None = None,
               params: Params | None = None) -> np.ndarray:
    """The homogeneous transform (4x4, or (N, 4, 4)) of the named frame ``frame`` in the base frame
    (:func:`tool_pose`; Pinocchio's ``data.oMf[frame_id]`` after ``framesForwardKinematics``)."""
    R, p = tool_pose(robot, q, params, frame=frame)
    T = np.zeros((*R.shape[:-2], 4, 4))
    T[..., :3, :3], T[..., :3, 3], T[..., 3, 3] = R, p, 1.0
    return T


def _columns(model: NumericModel, frames: Frames, p: np.ndarray, k: int | None = None) -> np.ndarray:
    """Geometric Jacobian (N, 6, n) of the point p (N, 3) of link k (the last by default), from the joint frames
    (the columns of joints that do not carry link k are zero)."""
    z = frames.axes
    J = np.zeros((z.shape[0], 6, model.n))
    for i in _carrying(model, k):
        if model.revolute[i]:
            J[:, :3, i] = np.cross(z[:, i], p - frames.o[:, i])
            J[:, 3:, i] = z[:, i]
        else:
            J[:, :3, i] = z[:, i]
    return J


def _carrying(model: NumericModel, k: int | None = None) -> list[int]:
    """The joints that move link k (the last link by default; none for the base, -1): it and its ancestors,
    base first."""
    out, k = [], model.n - 1 if k is None else k
    while k >= 0:
        out.append(k)
        k = model.parent[k]
    return out[::-1]


def _reference(reference: str) -> str:
    if reference not in REFERENCES:
        raise ValueError(f"unknown reference {reference!r}; choose from {', '.join(REFERENCES)}")
    return reference


def _expressed(J: np.ndarray, R: np.ndarray, p: np.ndarray, reference: str) -> np.ndarray:
    """The Jacobian (v; omega) of the frame at (R, p) (local_world_aligned, (N, 6, n)) in ``reference``: world
    (v + p x omega; omega), local (R^T v; R^T omega)."""
    if reference == "world":
        return np.concatenate([J[:, :3] + np.cross(p[:, :, None], J[:, 3:], axis=1), J[:, 3:]], axis=1)
    if reference == "local":
        Rt = np.transpose(R, (0, 2, 1))
        return np.concatenate([Rt @ J[:, :3], Rt @ J[:, 3:]], axis=1)
    return J


def jacobian(robot: Manipulator, q: np.ndarray, params: Params | None = None, *, frame: str | None = None,
             reference: str = "local_world_aligned") -> np.ndarray:
    """Geometric Jacobian of the tool frame, (6, nv) or (N, 6, nv): rows (v; omega), v the velocity of the frame's
    origin and omega the angular velocity, both in the base frame (``reference="local_world_aligned"``, the
    default; ``"world"`` and ``"local"``: :data:`REFERENCES`, Pinocchio's ``computeFrameJacobian``). ``frame``: a
    named frame, None the tool frame (:func:`tool_pose`). Columns over the independent coordinates (J_tree G)."""
    reference = _reference(reference)
    model = compile_model(robot, params)
    single, qb = _batch(couplings.position(model, q), model.n)
    frames = joint_frames(model, qb)
    k, T = frame_offset(robot, frame, params)
    R, p = _placed(frames, k, T)
    J = couplings.project_columns(model, _expressed(_columns(model, frames, p, k), R, p, reference), q)
    return J[0] if single else J
def link_offset(robot: Manipulator, k: int, params: Params | None = None) -> np.ndarray:
    """C_k as a 4x4 array: link frame k in joint frame k (Trans(x, a_k) Rot(x, alpha_k) in standard DH, else I)."""
    floats = Floats(symbol_values(params))
    link = robot.links[k]
    C = np.eye(4)
    if robot.convention == "standard":
        C[:3, :3] = rot_x(floats.scalar(link.alpha))
        C[0, 3] = floats.scalar(link.a)
    return C


def link_index(robot: Manipulator, link: int | str | None) -> int:
    """Link ``link`` as a 0-based index: an index (negative from the end), a link's ``name``, or None for the last."""
    if link is None:
        return robot.n - 1
    if isinstance(link, str):
        names = [x.name for x in robot.links]
        if link not in names:
            raise ValueError(f"{robot.name!r} has no link named {link!r} (named: {', '.join(n for n in names if n)})")
        return names.index(link)
    if isinstance(link, bool) or not isinstance(link, int | np.integer) or not -robot.n <= link < robot.n:
        raise ValueError(f"link must be a name or an index from {-robot.n} to {robot.n - 1}, got {link!r}")
    return int(link) % robot.n


def external_torques(robot: Manipulator, q: np.ndarray, fext: np.ndarray, link: int | str | None = None,
                     params: Params | None = None) -> np.ndarray:
    """J_k(q)^T w: the joint torques/forces with which the arm holds the wrench w = (f, m) that link k (the last by
    default; :func:`link_index`) exerts on the environment, f and m in link frame k and m about its origin (the
    Robotics Toolbox's ``fext`` of ``rne``; robodyn's tip load on link k). ``q`` (n,) or (N, n), ``fext`` (6,) or
    (N, 6); the result has q's shape (joints that do not carry link k get 0)."""
    model = compile_model(robot, params)
    k = link_index(robot, link)
    single, qb = _batch(couplings.position(model, q), model.n)
    w = np.asarray(fext, dtype=float)
    if w.ndim not in (1, 2) or w.shape[-1] != 6:
        raise ValueError(f"fext must have shape (6,) or (N, 6) (force, then moment), got {w.shape}")
    N = np.broadcast_shapes(qb.shape[:1], np.atleast_2d(w).shape[:1])[0]
    frames = joint_frames(model, np.broadcast_to(qb, (N, model.n)))
    C = link_offset(robot, k, params)
    R = frames.R[:, k] @ C[:3, :3]  # link frame k in the base frame
    origin = frames.o[:, k] + frames.R[:, k] @ C[:3, 3]
    wb = np.broadcast_to(np.atleast_2d(w), (N, 6))
    f, m = np.einsum("nij,nj->ni", R, wb[:, :3]), np.einsum("nij,nj->ni", R, wb[:, 3:])
    J = _columns(model, frames, origin, k)
    tau = couplings.project(model, np.einsum("nri,nr->ni", J, np.concatenate([f, m], axis=1)), q)
    return tau[0] if single and w.ndim == 1 else tau


def jacobian_dot(robot: Manipulator, q: np.ndarray, qd: np.ndarray, params: Params | None = None, *,
                 frame: str | None = None, reference: str = "local_world_aligned") -> np.ndarray:
    """dJ/dt at (q, qd), analytic: (6, nv) or (N, 6, nv), the time derivative of :func:`jacobian` of the same
    ``frame`` and ``reference`` (dJ/dt qd is then the frame's acceleration at qdd = 0: the classical acceleration
    of its origin and its angular acceleration for local_world_aligned; Pinocchio's
    ``getFrameJacobianTimeVariation``).

    Joint axis i turns with its parent link, zdot_i = omega_lambda(i) x z_i (omega_k: the sum of z_j qd_j over
    the revolute joints j carrying link k); its origin moves with velocity odot_i = sum_{j carrying lambda(i)}
    J_j(o_i) qd_j; the frame's origin with pdot = J qd. Differentiating the columns:
    d/dt (z x (p - o)) = zdot x (p - o) + z x (pdot - odot). In ``world``, d/dt (v + p x omega) adds
    pdot x omega + p x omegadot; in ``local``, d/dt R^T x = R^T (xdot - omega_f x x) (omega_f: the frame's own).
    """
    reference = _reference(reference)
    model = compile_model(robot, params)
    single, qb = _batch(couplings.position(model, q), model.n)
    _, qdb = _batch(couplings.rate(model, qd, q), model.n)
    frames = joint_frames(model, qb)
    k, T = frame_offset(robot, frame, params)
    R, p = _placed(frames, k, T)
    J = _columns(model, frames, p, k)
    z, o = frames.axes, frames.o
    pdot = np.einsum("nij,nj->ni", J[:, :3], qdb)
    omega = np.zeros((model.n, *p.shape))  # angular velocity of each link
    odot = np.zeros((model.n, *p.shape))  # velocity of each joint origin o_i as a point of the parent link
    Jdot = np.zeros_like(J)
    carrying = set(_carrying(model, k))
    for i in range(model.n):
        lam = model.parent[i]
        omega_parent = omega[lam] if lam >= 0 else np.zeros_like(p)
        if lam >= 0:  # o_i moves with link lambda(i): o_lam's velocity there, and the rotation about it
            odot[i] = odot[lam] + np.cross(omega_parent, o[:, i] - o[:, lam])
            if not model.revolute[lam]:
                odot[i] = odot[i] + z[:, lam] * qdb[:, lam, None]
        zdot = np.cross(omega_parent, z[:, i])
        omega[i] = omega_parent + z[:, i] * qdb[:, i, None] if model.revolute[i] else omega_parent
        if i not in carrying:
            continue
        if model.revolute[i]:
            Jdot[:, :3, i] = np.cross(zdot, p - o[:, i]) + np.cross(z[:, i], pdot - odot[i])
            Jdot[:, 3:, i] = zdot
        else:
            Jdot[:, :3, i] = zdot
    Jdot = _expressed_rate(J, Jdot, R, p, pdot, np.einsum("nij,nj->ni", J[:, 3:], qdb), reference)
    Jdot = couplings.project_columns(model, Jdot, q)
    if model.bars:  # d/dt (J_tree W) = Jdot_tree W + J_tree Wdot
        tree = _expressed(J, R, p, reference)
        Jdot = Jdot + tree @ couplings.jacobian_rate(model, q, qd)
    return Jdot[0] if single else Jdot


def _expressed_rate(J: np.ndarray, Jdot: np.ndarray, R: np.ndarray, p: np.ndarray, pdot: np.ndarray,
                    omega: np.ndarray, reference: str) -> np.ndarray:
    """d/dt of :func:`_expressed`'s Jacobian from J, dJ/dt (local_world_aligned), the frame's (R, p), pdot and
    omega."""
    if reference == "world":
        v = Jdot[:, :3] + np.cross(pdot[:, :, None], J[:, 3:], axis=1) + np.cross(p[:, :, None], Jdot[:, 3:], axis=1)
        return np.concatenate([v, Jdot[:, 3:]], axis=1)
    if reference == "local":
        Rt = np.transpose(R, (0, 2, 1))
        w = omega[:, :, None]
        return np.concatenate([Rt @ (Jdot[:, :3] - np.cross(w, J[:, :3], axis=1)),
                               Rt @ (Jdot[:, 3:] - np.cross(w, J[:, 3:], axis=1))], axis=1)
    return Jdot


def potential_energy(robot: Manipulator | NumericModel, q: np.ndarray, params: Params | None = None) -> np.ndarray:
    """V(q) = -sum_k m_k g . c_k over every body (payload included), zero with all centres of mass at the
    base origin: () or (N,). Its gradient is G(q) (:func:`robodyn.numeric.gravity`)."""
    model = compile_model(robot, params)
    single, qb = _batch(couplings.position(model, q), model.n)
    frames = joint_frames(model, qb)
    # m_i c_i in the base frame: m_i o_i + R_i h_i (h_i = m_i c_i in joint frame i)
    weighted = model.mass[None, :, None] * frames.o + np.einsum("nkij,kj->nki", frames.R, model.first_moment)
    V = -np.einsum("nki,i->n", weighted, model.gravity)
    return V[0] if single else V

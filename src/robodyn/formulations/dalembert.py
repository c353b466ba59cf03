"""Generalized d'Alembert equations (Lee, Lee and Nigam; Fu et al. eq. 3.4-1 to 3.4-28).

The kinetic energy of each link is split into its translational part (1/2 m v.v) and its
rotational part (1/2 w^T I w), eq. 3.4-5, and Lagrange's equations are applied to each
separately, which gives (eq. 3.4-24)

    tau_i = sum_j (D_rot_ij + D_tran_ij) qdd_j + h_rot_i + h_tran_i + c_i

with, for body s of mass m_s, inertia I_s about its centre of mass (link frame s), centre of
mass r_s and angular velocity w_s (all vectors in the base frame unless written sR0 x):

    D_rot_ij  = sum_s (sR0 z_i)^T I_s (sR0 z_j)                                    (3.4-25, first term)
    D_tran_ij = sum_s m_s [z_j x (r_s - p_j)] . [z_i x (r_s - p_i)]               (3.4-25, second term)
    h_tran_i  = sum_s m_s a_s . [z_i x (r_s - p_i)]                                (3.4-26)
    h_rot_i   = sum_s (sR0 z_i)^T I_s wdot_s + [sR0 z_i x sR0 w_s]^T I_s sR0 w_s  (3.4-27)
    c_i       = -g . [z_i x sum_s m_s (r_s - p_i)]                                 (3.4-28)

where z_i is joint i's axis and p_i a point on it (Fu's z_{i-1}, p_{i-1} with 1-based joints),
a_s and wdot_s are the velocity-product parts of the acceleration of the centre of mass and of
the angular acceleration (the qd-terms of eq. 3.4-11 and of the first term of eq. 3.4-27), and
the sums run over the bodies that joint i (and j) move. Both DH conventions are served by
:func:`robodyn.model.dh.chain_frames`: the joint axis is the z axis of the frame W_i = 0A_{i-1} B_i.

Prismatic joints (an extension: Fu derives the method for rotary joints only). A prismatic joint i
moves the bodies beyond it along z_i without turning them, so its partial velocity is z_i instead
of z_i x (r_s - p_i) and its partial angular velocity is zero: it contributes nothing to D_rot
and h_rot, and c_i = -g . z_i sum_s m_s. Its velocity adds the Coriolis acceleration
2 w_{i-1} x z_i qd_i to every point beyond it.

Beyond Fu: a payload (``Manipulator.bodies``) is one more body of the last link; the armature
G^2 Jm is added to the diagonal of M (it belongs neither to D_rot nor to D_tran); the tip load
enters by virtual work, tau_load = J^T (f, n), the wrench in the last link frame about its origin.

Trees: frame k hangs on frame parents[k], and "the bodies that joint i moves" are those of the links
that descend from i (i among their :meth:`~robodyn.model.manipulator.Manipulator.ancestors`); the
velocity products of eq. 3.4-11 are accumulated outward from each link's parent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import symengine as se

from robodyn.algebra import SeExpr, cross, dot, to_se, vector, zeros
from robodyn.model.dh import chain_frames, rotation, translation
from robodyn.model.manipulator import Manipulator

Progress = Callable[[str], None]
Vectors = list[list[se.DenseMatrix | None]]  # [body][joint]: a vector, or None where the joint does not move it


@dataclass(frozen=True)
class Joint:
    """Joint i in the base frame: unit axis z (Fu's z_{i-1}) and a point p on it (Fu's p_{i-1})."""

    z: se.DenseMatrix
    p: se.DenseMatrix
    revolute: bool


@dataclass(frozen=True)
class Body:
    """One rigid body moving with link ``link`` (0-based), its data in the base frame where stated."""

    link: int
    joints: tuple[int, ...]  # the joints that move it, ascending: ``link`` and its ancestors
    mass: SeExpr
    inertia: se.DenseMatrix  # I_s about the centre of mass, link frame s
    R: se.DenseMatrix  # 0R_s, link frame s to base
    r: se.DenseMatrix  # centre of mass, base frame (Fu's rbar_s, eq. 3.4-3)


@dataclass(frozen=True)
class Motion:
    """Velocity-dependent kinematics of link s (the qd-terms of eq. 3.4-1 and 3.4-11)."""

    omega: se.DenseMatrix  # w_s, eq. 3.4-1
    omega_dot: se.DenseMatrix  # velocity-product part of dw_s/dt
    point: se.DenseMatrix  # p_s, the point on joint s's axis, base frame
    accel: se.DenseMatrix  # velocity-product acceleration of the link-s point at p_s


def joints_and_bodies(robot: Manipulator, q: Sequence[SeExpr]) -> tuple[list[Joint], list[Body], se.DenseMatrix]:
    """The joints and bodies of ``robot`` at ``q``, and the tip frame 0A_n."""
    base = se.eye(4)
    frames_0: list[se.DenseMatrix] = []  # 0A_k (eq. 3.2-4), 0A_k = 0A_{parents[k]} A_k
    joints: list[Joint] = []
    bodies: list[Body] = []
    for k, frames in enumerate(chain_frames(robot, list(q))):
        parent = robot.parents[k]
        T = frames_0[parent] if parent >= 0 else base
        W = T * frames.B  # the frame whose z axis is joint k's axis
        joints.append(Joint(rotation(W) * vector([0, 0, 1]), translation(W), frames.revolute))
        T = T * frames.A
        frames_0.append(T)
        R, origin = rotation(T), translation(T)
        moved_by = tuple(sorted(robot.ancestors(k)))
        for body in robot.bodies(k):
            inertia = se.DenseMatrix(body.inertia.tolist())
            bodies.append(Body(k, moved_by, to_se(body.mass), inertia, R, origin + R * vector(body.com)))
    return joints, bodies, frames_0[-1]


def partial_velocity(joint: Joint, point: se.DenseMatrix) -> se.DenseMatrix:
    """d(velocity of ``point``)/d(qd_i): z_i x (point - p_i) for R (eq. 3.4-7), z_i for P."""
    return cross(joint.z, point - joint.p) if joint.revolute else joint.z


def link_axes(joints: list[Joint], body: Body) -> list[se.DenseMatrix | None]:
    """sR0 z_i for the revolute joints i that move ``body`` (eq. 3.4-2); None otherwise."""
    Rt = body.R.T
    return [Rt * jt.z if jt.revolute and i in body.joints else None for i, jt in enumerate(joints)]


def body_partials(joints: list[Joint], body: Body) -> list[se.DenseMatrix | None]:
    """Partial velocities of the centre of mass of ``body``; None for joints that do not move it."""
    return [partial_velocity(jt, body.r) if i in body.joints else None for i, jt in enumerate(joints)]


def link_motions(joints: list[Joint], parents: Sequence[int], qd: Sequence[SeExpr]) -> list[Motion]:
    """w_s, the velocity-product angular acceleration and the velocity-product acceleration of
    p_s, outward from the base (eq. 3.4-1 and the qd-terms of eq. 3.4-11, accumulated link by link
    from each link's parent)."""
    base = Motion(zeros(3), zeros(3), zeros(3), zeros(3))
    out: list[Motion] = []
    for i, jt in enumerate(joints):
        before = out[parents[i]] if parents[i] >= 0 else base
        omega, omega_dot, point, accel = before.omega, before.omega_dot, before.point, before.accel
        arm = jt.p - point  # Fu's p*_{k}: from the parent's joint point to this one, fixed in the parent
        accel = accel + cross(omega_dot, arm) + cross(omega, cross(omega, arm))
        spin = jt.z * qd[i]
        if jt.revolute:
            omega_dot = omega_dot + cross(omega, spin)  # sum_p (sum_{q<p} qd_q z_q) x qd_p z_p, eq. 3.4-11
            omega = omega + spin  # eq. 3.4-1
        else:
            accel = accel + cross(omega, spin) * 2  # Coriolis acceleration of the sliding link
        point = jt.p
        out.append(Motion(omega, omega_dot, point, accel))
    return out


def com_acceleration(motion: Motion, body: Body) -> se.DenseMatrix:
    """Velocity-product acceleration of the centre of mass (eq. 3.4-11 without the qdd terms)."""
    arm = body.r - motion.point  # Fu's cbar_s
    return motion.accel + cross(motion.omega_dot, arm) + cross(motion.omega, cross(motion.omega, arm))


def inertia_parts(
    n: int, bodies: list[Body], axes: Vectors, partials: Vectors
) -> tuple[se.DenseMatrix, se.DenseMatrix]:
    """D_rot and D_tran of eq. 3.4-25 (symmetric; the sum over s starts at max(i, j): over the bodies
    that both joints move)."""
    D_rot, D_tran = se.zeros(n, n), se.zeros(n, n)
    for body, w, v in zip(bodies, axes, partials, strict=True):
        Iw = [body.inertia * x if x is not None else None for x in w]
        for a, i in enumerate(body.joints):
            for j in body.joints[a:]:
                if w[i] is not None and w[j] is not None:
                    D_rot[i, j] += dot(w[i], Iw[j])  # (sR0 z_i)^T I_s (sR0 z_j)
                D_tran[i, j] += body.mass * dot(v[i], v[j])  # m_s [z_j x (r_s - p_j)] . [z_i x (r_s - p_i)]
    for i in range(n):
        for j in range(i):
            D_rot[i, j], D_tran[i, j] = D_rot[j, i], D_tran[j, i]
    return D_rot, D_tran


def velocity_parts(
    n: int,
    bodies: list[Body],
    axes: Vectors,
    partials: Vectors,
    motions: list[Motion],
    qd: Sequence[SeExpr],
) -> tuple[se.DenseMatrix, se.DenseMatrix]:
    """h_rot (eq. 3.4-27) and h_tran (eq. 3.4-26)."""
    h_rot, h_tran = se.zeros(n, 1), se.zeros(n, 1)
    for body, w, v in zip(bodies, axes, partials, strict=True):
        motion = motions[body.link]
        a = com_acceleration(motion, body) * body.mass
        spins = [x * qd[i] for i, x in enumerate(w) if x is not None]
        omega = sum(spins, zeros(3))  # sR0 w_s, eq. 3.4-2
        # sum_j qd_j sR0 z_j x sum_{k>j} qd_k sR0 z_k: the first term of eq. 3.4-27
        omega_dot = sum((cross(spins[j], spins[k]) for j in range(len(spins)) for k in range(j + 1, len(spins))),
                        zeros(3))
        I_omega = body.inertia * omega
        I_omega_dot = body.inertia * omega_dot
        for i in body.joints:
            h_tran[i, 0] += dot(a, v[i])  # m_s a_s . [z_i x (r_s - p_i)], eq. 3.4-26
            if w[i] is not None:
                h_rot[i, 0] += dot(w[i], I_omega_dot) + dot(cross(w[i], omega), I_omega)  # eq. 3.4-27
    return h_rot, h_tran


def gravity_part(n: int, bodies: list[Body], partials: Vectors, gravity: se.DenseMatrix) -> se.DenseMatrix:
    """c_i = -g . [z_i x sum_s m_s (r_s - p_i)] (eq. 3.4-28), i.e. -g . sum_s m_s dr_s/dq_i."""
    c = se.zeros(n, 1)
    for body, v in zip(bodies, partials, strict=True):
        for i in body.joints:
            c[i, 0] -= body.mass * dot(gravity, v[i])
    return c


def tip_load(robot: Manipulator, joints: list[Joint], tip: se.DenseMatrix) -> se.DenseMatrix:
    """Virtual work of the tip wrench: tau_i = (dO_n/dq_i) . f_0 + (axis_i if R) . n_0."""
    R_n = rotation(tip)
    f0, n0 = R_n * vector(robot.tip_force), R_n * vector(robot.tip_moment)
    out = se.zeros(robot.n, 1)
    for i in robot.ancestors(robot.n - 1):  # the joints that do not move the last link feel nothing
        jt = joints[i]
        value = dot(partial_velocity(jt, translation(tip)), f0)
        out[i, 0] = value + dot(jt.z, n0) if jt.revolute else value
    return out


def components(
    robot: Manipulator,
    q: Sequence[SeExpr],
    qd: Sequence[SeExpr],
    progress: Progress | None = None,
) -> dict[str, se.DenseMatrix]:
    """M, h, G and the tip-load torques, plus the split D_rot, D_tran, h_rot, h_tran and c (= G).

    M = D_rot + D_tran + diag(armature) and h = h_rot + h_tran (eq. 3.4-24)."""
    n = robot.n
    joints, bodies, tip = joints_and_bodies(robot, q)
    axes = [link_axes(joints, b) for b in bodies]
    partials = [body_partials(joints, b) for b in bodies]
    D_rot, D_tran = inertia_parts(n, bodies, axes, partials)
    if progress:
        progress("inertia matrix D = D_rot + D_tran (eq. 3.4-25)")
    h_rot, h_tran = velocity_parts(n, bodies, axes, partials, link_motions(joints, robot.parents, qd), qd)
    if progress:
        progress("velocity terms h_rot (eq. 3.4-27) and h_tran (eq. 3.4-26)")
    c = gravity_part(n, bodies, partials, vector(robot.gravity))
    load = tip_load(robot, joints, tip)
    if progress:
        progress("gravity c (eq. 3.4-28) and tip load")
    armature = se.diag(*[to_se(link.armature) for link in robot.links])
    return {
        "M": D_rot + D_tran + armature,
        "h": h_rot + h_tran,
        "G": c,
        "load": load,
        "D_rot": D_rot,
        "D_tran": D_tran,
        "h_rot": h_rot,
        "h_tran": h_tran,
        "c": c,
    }

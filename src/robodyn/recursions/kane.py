"""Kane's equations by the O(n) three-stage algorithm of Angeles, Ma and Rojas (1989).

Their notation (sec. 3.1): frame i sits on joint axis i, Z_i along it, and link i-1 to link i is

    Q_i = Rot(x, alpha_i) Rot(z, theta_i)                      (eq. 7)
    [a_i]_{i-1} = (a_i, b_i sin(alpha_i), -b_i cos(alpha_i))   (eq. 8)

which is Craig's modified DH with their alpha_i, a_i = Craig's alpha_{i-1}, a_{i-1} (our row i's
``alpha`` and ``a``) and b_i = -d_i. :func:`to_angeles` is the one place where our model is converted: it reads
the joints of :mod:`robodyn.recursions.arm` (F = Rot(x, alpha), p = (a, 0, 0) without placements) and keeps
the model's mass-centre data, which the paper's stage 3 uses.

The algorithm (sec. 6), with p_i'' = c_i'' - g the acceleration of mass centre C_i when the base
accelerates by -g (eq. 41, 51), W_i = Omega_i' + Omega_i^2 (eq. 53), everything of link i in frame i:

- stage 1: [a_i]_{i-1} of prismatic joints (those of revolute joints are constants);
- stage 2: forward, omega_i, omega_i' (eq. 12-13), W_i, p_i'' (eq. 18, 20);
- stage 3: backward, h_i' (eq. 2), u_i = m_i p_i'', v_i = sum_{j>=i} m_j p_j'' (eq. 49),
  k_i (eq. 47), w_i = Q_{i+1} w_{i+1} + k_i (eq. 46), tau_i = e_i . w_i or e_i . v_i (eq. 44-45).

Products with Q_i and Q_i^T are done as in eq. 54-55 (8 multiplications, 4 additions), never by
forming the matrix. The code is written over the scalar interface of :mod:`robodyn.recursions.scalars`:
the same functions run on symengine expressions, on NumPy arrays of a batch of states
(:mod:`robodyn.numeric.kane`) and on counting scalars (:mod:`robodyn.program.opcount`).
The scalars only need ``+``, ``-``, unary ``-`` and ``*``; the literal Python ``0`` stands for the
zeros of the algorithm (e_i = [0, 0, 1], omega_0 = 0, ...) so that every scalar type can fold them.

Differences from the printed paper, all checked against Newton-Euler by the tests:

- stage 2 prints p_i'' = Q_i^T [p_{i-1}'' - W_{i-1} (a_i - rho_{i-1})] + ...; the sign is + (eq. 18);
- stage 1 prints [a_i]_{i-1} = (a_i, -b_i s(alpha_i), b_i c(alpha_i)); eq. 8 is right;
- for a prismatic joint, q_i = b_i (eq. 30) would give the partial velocity -e_i (eq. 22), yet eq. 43
  projects on +e_i: tau_i = e_i . v_i is the force along +Z_i, the generalized force of -b_i = d_i,
  which is our q_i. So our q_i = -b_i - (offset), and b_i' = -qd_i, b_i'' = -qdd_i.

Trees (an extension): stage 2 starts link i from its parent's omega, omega', W, p'' and rho (the
paper's i-1), and stage 3 sums into v_i, w_i the Q_c v_c, Q_c w_c + a_c x Q_c v_c of every child c of
link i (the paper's single i+1); a parent array of a chain gives the paper's recursion operation for operation.

Extensions over the paper, outside its three stages: the tip load enters as v_{n+1}, w_{n+1}
(in frame n, Q_{n+1} = 1, a_{n+1} = 0); a payload on the last link adds its u and k terms; damping
b_i qd_i and armature qdd_i are added to tau_i (the paper's phi_d, eq. 24, set to zero in sec. 5).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sympy

from robodyn.errors import DerivationError
from robodyn.model.dh import modified
from robodyn.model.manipulator import Manipulator
from robodyn.recursions.arm import coulomb_scalars, joint_data, joint_friction, link_spring
from robodyn.recursions.scalars import ScalarOps
from robodyn.recursions.vec3 import ZERO3, Mat, Scalar, Vec, cross, matvec, vadd, vneg, vscale, vsub

ZERO33: Mat = (ZERO3, ZERO3, ZERO3)
Progress = Callable[[str], None]


# -- their description of the arm --------------------------------------------------------------
@dataclass(frozen=True)
class Body:
    """A rigid body fixed to link i: mass, [rho]_i (O_i to its mass centre) and centroidal [I]_i."""

    mass: Scalar
    rho: Vec
    inertia: Mat


@dataclass(frozen=True)
class HDLink:
    """Row i of their HD table (sec. 3.1), the state of joint i, and the bodies of link i.

    ``rate`` and ``accel`` are theta_i', theta_i'' (R) or b_i', b_i'' (P); ``a_vec`` is
    [a_i]_{i-1} when it is constant (R: computed off line, eq. 52) and None for P (stage 1).
    The first body's rho is the paper's rho_i; a payload on the last link is a second body.
    """

    revolute: bool
    cos_alpha: Scalar
    sin_alpha: Scalar
    a: Scalar
    b: Scalar
    cos_theta: Scalar
    sin_theta: Scalar
    rate: Scalar
    accel: Scalar
    a_vec: Vec | None
    bodies: tuple[Body, ...]

    @property
    def rho(self) -> Vec:
        return self.bodies[0].rho


@dataclass(frozen=True)
class AngelesArm:
    """The arm in their notation, at one state (or a batch): links 1..n, [g]_0, the tip load
    (force and moment about O_n, in frame n) as v_{n+1}, w_{n+1}, and the parent of each link
    (0-based, -1 the base: i - 1 for their serial chain)."""

    links: tuple[HDLink, ...]
    gravity: Vec
    tip_force: Vec
    tip_moment: Vec
    parents: tuple[int, ...]


def _inertia(ops: ScalarOps, matrix: sympy.MatrixBase) -> Mat:
    return tuple(tuple(ops.number(matrix[r, c]) for c in range(3)) for r in range(3))  # type: ignore[return-value]


def to_angeles(
    robot: Manipulator,
    q: Sequence[Scalar],
    qd: Sequence[Scalar],
    qdd: Sequence[Scalar],
    gravity: Sequence[Scalar],
    tip_force: Sequence[Scalar],
    tip_moment: Sequence[Scalar],
    ops: ScalarOps,
) -> AngelesArm:
    """Our model at joint state (q, qd, qdd) in Angeles, Ma and Rojas' notation: the one conversion.

    Modified DH first (same base frame; modified frame i is their frame i), then their
    alpha_i, a_i = row i's alpha, a; b_i = -d_i, so a prismatic joint's b_i = -(d offset + q_i)
    with b_i' = -qd_i, b_i'' = -qdd_i; theta_i = theta offset + q_i for a revolute joint.
    The tip load, given in the robot's own last frame, is moved to modified frame n as
    :func:`robodyn.model.convert.to_modified` moves the model's own.
    """
    placed = [k for k, link in enumerate(robot.links, start=1) if link.has_placement]
    if placed:
        raise DerivationError(
            f"link {placed[0]} has a fixed placement before its joint, which Angeles' HD notation (Kane's "
            "algorithm) cannot express; use newton-euler or lagrange-euler"
        )
    converted, inertias = _modified(robot)
    with ops.stage("conversion"):
        links = []
        for i, joint in enumerate(joint_data(converted)):  # no placement: F = Rot(x, alpha), p = (a, 0, 0)
            ca, sa = ops.number(joint.F[1][1]), ops.number(joint.F[2][1])
            a, b0 = ops.number(joint.p[0]), -ops.number(joint.d)
            bodies = tuple(
                Body(ops.number(body.mass), tuple(ops.number(x) for x in body.com), _inertia(ops, inertia))
                for body, inertia in zip(converted.bodies(i), inertias[i], strict=True)
            )
            if joint.revolute:
                ct, st = ops.cos_sin(joint.theta, q[i])
                common = dict(b=b0, cos_theta=ct, sin_theta=st, rate=qd[i], accel=qdd[i])
                a_vec: Vec | None = (a, b0 * sa, -(b0 * ca))  # eq. 8, constant: computed off line
            else:
                ct, st = ops.cos_sin(joint.theta, None)
                common = dict(b=b0 - q[i], cos_theta=ct, sin_theta=st, rate=-qd[i], accel=-qdd[i])
                a_vec = None
            links.append(HDLink(joint.revolute, ca, sa, a, a_vec=a_vec, bodies=bodies, **common))
        f, m = tuple(tip_force), tuple(tip_moment)
        if robot.convention == "standard":  # standard frame n = modified frame n moved by Trans(x, a) Rot(x, alpha)
            last = robot.links[-1]
            ca, sa = ops.cos_sin(last.alpha, None)
            f = _rot_x(ca, sa, f)
            m = vadd(_rot_x(ca, sa, m), cross((ops.number(last.a), 0, 0), f))
    return AngelesArm(tuple(links), tuple(gravity), f, m, robot.parents)


def _modified(robot: Manipulator) -> tuple[Manipulator, list[list[sympy.Matrix]]]:
    """``robot`` in modified DH (:func:`robodyn.model.dh.modified`, converted once per arm) and its bodies'
    inertia tensors there."""
    arm = modified(robot)
    return arm, [[body.inertia for body in arm.bodies(i)] for i in range(robot.n)]


def _rot_x(c: Scalar, s: Scalar, v: Vec) -> Vec:
    return (v[0], c * v[1] - s * v[2], s * v[1] + c * v[2])


def q_times(link: HDLink, v: Vec) -> Vec:
    """Q_i v by eq. 54-55: 8 multiplications, 4 additions."""
    u = v[0] * link.sin_theta + v[1] * link.cos_theta  # eq. 55
    return (
        v[0] * link.cos_theta - v[1] * link.sin_theta,
        u * link.cos_alpha - v[2] * link.sin_alpha,
        u * link.sin_alpha + v[2] * link.cos_alpha,
    )


def q_transpose_times(link: HDLink, v: Vec) -> Vec:
    """Q_i^T v = Rot(z, theta_i)^T Rot(x, alpha_i)^T v, eq. 54-55 transposed: 8 m, 4 a."""
    u = v[1] * link.cos_alpha + v[2] * link.sin_alpha
    return (
        v[0] * link.cos_theta + u * link.sin_theta,
        u * link.cos_theta - v[0] * link.sin_theta,
        v[2] * link.cos_alpha - v[1] * link.sin_alpha,
    )


def w_tensor(omega: Vec, omega_dot: Vec) -> Mat:
    """``W = Omega' + Omega^2`` (eq. 53), ``Omega^2 = omega omega^T - |omega|^2 1``: 6 m, 9 a."""
    wx, wy, wz = omega
    dx, dy, dz = omega_dot
    xx, yy, zz = wx * wx, wy * wy, wz * wz
    xy, xz, yz = wx * wy, wx * wz, wy * wz
    return (
        (-(yy + zz), xy - dz, xz + dy),
        (xy + dz, -(xx + zz), yz - dx),
        (xz - dy, yz + dx, -(xx + yy)),
    )


def angular_momentum_rate(inertia: Mat, omega: Vec, omega_dot: Vec) -> Vec:
    """h' = I omega' + omega x I omega (eq. 2): 24 m, 18 a for general omega."""
    return vadd(matvec(inertia, omega_dot), cross(omega, matvec(inertia, omega)))


# -- the three stages --------------------------------------------------------------------------
@dataclass(frozen=True)
class LinkKinematics:
    """Stage 2 results for link i, in frame i."""

    omega: Vec
    omega_dot: Vec
    W: Mat
    p_ddot: Vec  # p_i'' = c_i'' - g, at C_i (eq. 41)


def stage1(arm: AngelesArm) -> list[Vec]:
    """[a_i]_{i-1} (eq. 8): 2 multiplications per prismatic joint (eq. 52)."""
    return [
        link.a_vec if link.a_vec is not None else (link.a, link.b * link.sin_alpha, -(link.b * link.cos_alpha))
        for link in arm.links
    ]


def stage2(arm: AngelesArm, a_vecs: Sequence[Vec], progress: Progress | None = None) -> list[LinkKinematics]:
    """Forward recursion from omega_0 = omega_0' = 0 (eq. 14) and p_0'' = -g (eq. 51), each link
    from its parent's (the paper's link i-1)."""
    base = LinkKinematics(ZERO3, ZERO3, ZERO33, vneg(arm.gravity))
    out: list[LinkKinematics] = []
    for i, (link, a_i) in enumerate(zip(arm.links, a_vecs, strict=True)):
        parent = arm.parents[i]
        before = out[parent] if parent >= 0 else base
        omega, omega_dot, W, p_ddot = before.omega, before.omega_dot, before.W, before.p_ddot
        rho_prev = arm.links[parent].rho if parent >= 0 else ZERO3
        omega = q_transpose_times(link, omega)  # eq. 12
        omega_dot = q_transpose_times(link, omega_dot)  # eq. 13
        if link.revolute:
            rate = link.rate
            omega = (omega[0], omega[1], omega[2] + rate)
            # Omega_i theta_i' e_i + theta_i'' e_i: omega_i x (0, 0, theta_i') = (w_y theta', -w_x theta', 0)
            omega_dot = (omega_dot[0] + omega[1] * rate, omega_dot[1] - omega[0] * rate, omega_dot[2] + link.accel)
        W_prev, W = W, w_tensor(omega, omega_dot)  # eq. 53 (W_prev: the parent's)
        # eq. 18: C_{i-1} -> O_i by W_{i-1}(a_i - rho_{i-1}) in frame i-1, then O_i -> C_i by W_i rho_i
        p_ddot = vadd(q_transpose_times(link, vadd(p_ddot, matvec(W_prev, vsub(a_i, rho_prev)))), matvec(W, link.rho))
        if not link.revolute:  # eq. 20: - 2 Omega_i b_i' e_i - b_i'' e_i; 2 b' as b' + b'
            two_b_dot = link.rate + link.rate
            p_ddot = (
                p_ddot[0] - omega[1] * two_b_dot,
                p_ddot[1] + omega[0] * two_b_dot,
                p_ddot[2] - link.accel,
            )
        out.append(LinkKinematics(omega, omega_dot, W, p_ddot))
        if progress:
            progress(f"Kane stage 2, link {i + 1}")
    return out


def _link_terms(link: HDLink, kin: LinkKinematics) -> tuple[Vec, Vec]:
    """u_i = m_i p_i'' and h_i' + rho_i x u_i (the first two terms of k_i, eq. 47).

    A second body on the link (a payload) adds its own, its p'' moved from C_i by W_i."""
    u: Vec = ZERO3
    k: Vec = ZERO3
    for j, body in enumerate(link.bodies):
        p_ddot = kin.p_ddot if j == 0 else vadd(kin.p_ddot, matvec(kin.W, vsub(body.rho, link.rho)))
        u_b = vscale(body.mass, p_ddot)
        k_b = vadd(angular_momentum_rate(body.inertia, kin.omega, kin.omega_dot), cross(body.rho, u_b))
        u, k = (u_b, k_b) if j == 0 else (vadd(u, u_b), vadd(k, k_b))
    return u, k


def stage3(
    arm: AngelesArm, a_vecs: Sequence[Vec], kinematics: Sequence[LinkKinematics], progress: Progress | None = None
) -> list[Scalar]:
    """Backward recursion for tau_n .. tau_1 (eq. 44-49), from v_{n+1}, w_{n+1} = the tip load on the last
    link; each link's v_i, w_i gather those of its children (the paper's link i+1)."""
    n = len(arm.links)
    v: list[Vec] = [ZERO3] * n
    w: list[Vec] = [ZERO3] * n
    tau: list[Scalar] = [0] * n
    for i in reversed(range(n)):
        link = arm.links[i]
        u, k = _link_terms(link, kinematics[i])
        if i == n - 1:  # the tip load is already in frame n, about O_n: Q_{n+1} = 1, a_{n+1} = 0
            inward = [(arm.tip_force, arm.tip_moment, ZERO3)]
        else:
            inward = [(q_times(arm.links[c], v[c]), q_times(arm.links[c], w[c]), a_vecs[c]) for c in _children(arm, i)]
        v_next, w_next = ZERO3, ZERO3
        for j, (v_c, w_c, a_c) in enumerate(inward):
            k = vadd(k, cross(a_c, v_c))  # eq. 47
            v_next, w_next = (v_c, w_c) if j == 0 else (vadd(v_next, v_c), vadd(w_next, w_c))
        w[i] = vadd(w_next, k)  # eq. 46
        v[i] = vadd(v_next, u)  # eq. 49
        tau[i] = w[i][2] if link.revolute else v[i][2]  # eq. 44-45, [e_i]_i = (0, 0, 1)
        if progress:
            progress(f"Kane stage 3, link {i + 1}")
    return tau


def _children(arm: AngelesArm, i: int) -> list[int]:
    return [c for c in range(i + 1, len(arm.links)) if arm.parents[c] == i]


def three_stages(arm: AngelesArm, ops: ScalarOps, progress: Progress | None = None) -> list[Scalar]:
    """The paper's algorithm (sec. 6): the generalized driving forces tau_1..tau_n, phi_d = 0."""
    with ops.stage("stage 1"):
        a_vecs = stage1(arm)
    with ops.stage("stage 2"):
        kinematics = stage2(arm, a_vecs, progress)
    with ops.stage("stage 3"):
        return stage3(arm, a_vecs, kinematics, progress)


def joint_torques(
    robot: Manipulator,
    q: Sequence[Scalar],
    qd: Sequence[Scalar],
    qdd: Sequence[Scalar],
    gravity: Sequence[Scalar],
    tip_force: Sequence[Scalar],
    tip_moment: Sequence[Scalar],
    ops: ScalarOps,
    progress: Progress | None = None,
    spring: bool = True,
) -> list[Scalar]:
    """tau_i of the three stages plus damping b_i qd_i, armature qdd_i and, with ``spring``, the joint spring
    k_i (q_i - q_ref,i), on any scalar type."""
    arm = to_angeles(robot, q, qd, qdd, gravity, tip_force, tip_moment, ops)
    tau = three_stages(arm, ops, progress)
    return [
        t + joint_friction(ops, ops.number(link.damping), coulomb_scalars(ops, link.coulomb_parts), qd[i])
        + ops.number(link.armature) * qdd[i]
        + (link_spring(ops, link, q[i]) if spring else 0)
        for i, (t, link) in enumerate(zip(tau, robot.links, strict=True))
    ]

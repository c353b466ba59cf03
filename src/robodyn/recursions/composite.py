"""The composite-body algorithm for M, and Khalil and Kleinfinger's regrouping of the inertial parameters.

Both carry the parameters of a body from frame j into the frame of its parent lambda(j) (:func:`carry`):
J' = R J R^T - m hat(P) hat(P) - hat(P) hat(h) - hat(h) hat(P), h = R MS, MS' = h + m P (parallel axes).

:func:`inertia_matrix` (Walker and Orin's method 3, in Khalil's parameters): the composite parameters of
link j and its descendants are carried back to the parent's frame, and column j of M is the wrench a unit
qdd_j produces, carried to the base through the ancestors of j (M_ij of two links on different branches is an
exact 0, never computed: Featherstone's branch-induced sparsity). With ``dh_steps`` the composite parameters
are carried a factor of the modified-DH transform at a time (:func:`carry_dh`: turns about one axis by the
double angle, moves along one axis), which folds more of the DH zeros.

:func:`inertia_matrix_root_frame`: the same composite bodies, each column's wrench taken once into the frame of
the tree's root link and projected there on the motion subspace of each ancestor (Featherstone's
M_ij = S_i^T I^c_j S_j in one frame): 6 multiplications an entry, where carrying the wrench through a DH step
takes 10 to 22, for the frames' kinematics once per link. :attr:`robodyn.program.routes.Context.mass_matrix`
builds the three and keeps the cheapest program.

:func:`grouped` (Khalil and Kleinfinger's regrouping, from the last link to the first; exact: tau unchanged):
revolute joint j: the part of link j that is symmetric about z_j (YY_j on the xx and yy entries of J_j, MZ_j
and M_j) moves as if fixed to link lambda(j), whatever q_j, so it is carried into that frame: what remains is
XXR_j = XX_j - YY_j, XY_j, XZ_j, YZ_j, ZZ_j, MX_j, MY_j. Prismatic joint j: J_j is a couple-producing term that
rotates with link lambda(j), so it joins J_lambda(j) (R J_j R^T). For a link on the fixed base the moved part
has no effect at all.

Written once over the scalar interface of :mod:`robodyn.recursions.scalars` and a parent array.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from robodyn.recursions.arm import ArmData, Inertial, Joint, JointData, fixed_joint, inertials, joints
from robodyn.recursions.scalars import ScalarOps
from robodyn.recursions.vec3 import ZERO3, Mat, Scalar, Vec, cross, dot, matvec, vadd, vscale, vsub


def link_parameters(arm: ArmData, ops: ScalarOps, group: bool, given: Sequence[Inertial] | None) -> list[Inertial]:
    """``given`` (scalars), or the arm's own parameters (regrouped if ``group``)."""
    if given is not None:
        return list(given)
    par = inertials(arm, ops)
    return grouped(arm, ops, par) if group else par


def grouped(arm: ArmData, ops: ScalarOps, parameters: list[Inertial], root: Inertial | None = None
            ) -> list[Inertial]:
    """The regrouped parameters (module docstring); on a tree, the moved part joins the parent lambda(j).
    ``root``: the parameters of a floating base, which the moved parts of the links on it join (it moves: they act
    there), returned after the links'."""
    out = list(parameters) + ([] if root is None else [root])
    for j in reversed(range(arm.n)):
        data, p = arm.joints[j], out[j]
        if data.pseudo == 0:  # (a spherical or planar joint's first pseudo-joint moves by its q: nothing moves)
            continue
        if data.revolute:
            yy, mz, m = p.J[1][1], p.MS[2], p.M
            J_moved: Mat = ((yy, 0, 0), (0, yy, 0), (0, 0, 0))
            MS_moved: Vec = (0, 0, mz)
            rest = dataclasses.replace(p, J=_sub33(p.J, J_moved), MS=(p.MS[0], p.MS[1], 0), M=0)
        else:
            J_moved, MS_moved, m = p.J, ZERO3, 0
            rest = dataclasses.replace(p, J=((0,) * 3,) * 3)
        out[j] = rest
        lam = arm.parents[j]
        if lam < 0:
            if root is None:
                continue
            lam = arm.n  # (the floating base, last)
        J, MS = carry(fixed_joint(data, ops), m, J_moved, MS_moved)
        parent = out[lam]
        out[lam] = dataclasses.replace(
            parent,
            J=tuple(tuple(parent.J[a][b] + J[a][b] for b in range(3)) for a in range(3)),  # type: ignore[arg-type]
            MS=vadd(parent.MS, MS),
            M=parent.M + m,
        )
    return out


def floating_parameters(arm: ArmData, ops: ScalarOps, base: Inertial, group: bool
                        ) -> tuple[list[Inertial], Inertial]:
    """The links' parameters and a floating base's (``base``, model numbers) as scalars of ``ops``; regrouped with
    ``group`` (:func:`grouped`, the moved parts of the links on the base joining the base)."""
    par = inertials(arm, ops)
    root = Inertial(J=tuple(tuple(ops.number(x) for x in row) for row in base.J),  # type: ignore[arg-type]
                    MS=tuple(ops.number(x) for x in base.MS), M=ops.number(base.M))
    if not group:
        return par, root
    out = grouped(arm, ops, par, root)
    return out[:-1], out[-1]


def _sub33(A: Mat, B: Mat) -> Mat:
    return tuple(tuple(A[a][b] - B[a][b] for b in range(3)) for a in range(3))  # type: ignore[return-value]


def carry(jt: Joint, m: Scalar, J: Mat | list[list[Scalar]], MS: Vec) -> tuple[list[list[Scalar]], Vec]:
    """J, MS of a body about O_j in frame j, about O_lambda(j) in the parent's frame (module docstring)."""
    h = jt.to_parent(MS)
    RJ = [jt.to_parent((J[0][c], J[1][c], J[2][c])) for c in range(3)]  # columns of R J
    RJRt = [jt.to_parent((RJ[0][r], RJ[1][r], RJ[2][r])) for r in range(3)]
    shift = _parallel_axes(m, jt.P, h)
    out: list[list[Scalar]] = [[0] * 3 for _ in range(3)]
    for a in range(3):
        for b in range(a, 3):
            out[a][b] = out[b][a] = RJRt[a][b] + shift[a][b]
    return out, vadd(h, vscale(m, jt.P))


def _parallel_axes(m: Scalar, P: Vec, h: Vec) -> list[list[Scalar]]:
    """-m hat(P) hat(P) - hat(P) hat(h) - hat(h) hat(P) = (m P.P + 2 P.h) 1 - m P P^T - h P^T - P h^T
    (from -hat(a) hat(b) = (a.b) 1 - b a^T); upper triangle."""
    mP = vscale(m, P)
    pp = P[0] * mP[0] + P[1] * mP[1] + P[2] * mP[2]
    ph = P[0] * h[0] + P[1] * h[1] + P[2] * h[2]
    out: list[list[Scalar]] = [[0] * 3 for _ in range(3)]
    for a in range(3):
        for b in range(a, 3):
            diag = (pp + 2 * ph) if a == b else 0
            out[a][b] = diag - (P[a] * mP[b] + P[a] * h[b] + h[a] * P[b])
    return out


def carry_wrench(jt: Joint, f: Vec, n: Vec) -> tuple[Vec, Vec]:
    """A force f and moment n (about O_j) in frame j, as force and moment about O_lambda(j) in the parent's."""
    f_parent = jt.to_parent(f)
    return f_parent, vadd(jt.to_parent(n), cross(jt.P, f_parent))


def composite_bodies(arm: ArmData, ops: ScalarOps, geo: Sequence[Joint], par: Sequence[Inertial],
                     step: Callable[[int, Scalar, Any, Vec], tuple[Any, Vec]] | None = None
                     ) -> tuple[list[list[list[Scalar]]], list[Vec], list[Scalar]]:
    """J, MS, M of each link and its descendants about its own origin, in its own frame (from the last link to
    the first, each carried into its parent's frame by ``step(j, M, J, MS)``; None: :func:`carry`)."""
    J = [[list(row) for row in p.J] for p in par]
    MS, M = [p.MS for p in par], [p.M for p in par]
    for j in reversed(range(arm.n)):
        lam = arm.parents[j]
        if lam < 0:
            continue
        carried_J, carried_MS = (carry(geo[j], M[j], J[j], MS[j]) if step is None
                                 else step(j, M[j], J[j], MS[j]))
        J[lam] = [[J[lam][a][b] + carried_J[a][b] for b in range(3)] for a in range(3)]
        MS[lam] = vadd(MS[lam], carried_MS)
        M[lam] = M[lam] + M[j]
    return J, MS, M


def unit_wrench(jt: Joint, J: Sequence[Sequence[Scalar]], MS: Vec, M: Scalar) -> tuple[Vec, Vec]:
    """The force and moment (about O_j, in frame j) that a unit qdd_j produces on the composite body of link j:
    revolute, wd = z: F = z x MS = (-MS_y, MS_x, 0), N = J z (a column read); prismatic, vd = z: F = M z,
    N = MS x z = (MS_y, -MS_x, 0)."""
    if jt.revolute:
        return (-MS[1], MS[0], 0), (J[0][2], J[1][2], J[2][2])
    return (0, 0, M), (MS[1], -MS[0], 0)


def inertia_matrix(arm: ArmData, ops: ScalarOps, q: Sequence[Scalar], *, group: bool = True,
                   parameters: Sequence[Inertial] | None = None, dh_steps: bool = False) -> list[list[Scalar]]:
    """M (n x n, symmetric) by the composite-body algorithm (module docstring), armature included; ``group``
    regroups the parameters first, ``parameters`` (scalars) replace the arm's own; ``dh_steps`` carries the
    composite bodies a factor of the joint's transform at a time (:func:`carry_dh`) instead of by :func:`carry`."""
    n, parents = arm.n, arm.parents
    geo = joints(arm, ops, q)
    par = link_parameters(arm, ops, group, parameters)
    J, MS, M = composite_bodies(arm, ops, geo, par, dh_step(arm, ops, geo, q) if dh_steps else None)
    out: list[list[Scalar]] = [[0] * n for _ in range(n)]
    for j in range(n):
        f, m = unit_wrench(geo[j], J[j], MS[j], M[j])
        for i in arm.ancestors(j):
            value = m[2] if geo[i].revolute else f[2]
            out[i][j] = out[j][i] = value + (par[j].armature if i == j else 0)
            if parents[i] >= 0:
                f, m = carry_wrench(geo[i], f, m)
    return out


def inertia_matrix_root_frame(arm: ArmData, ops: ScalarOps, q: Sequence[Scalar], *, group: bool = True,
                              parameters: Sequence[Inertial] | None = None) -> list[list[Scalar]]:
    """M as :func:`inertia_matrix` gives it, its off-diagonal entries projected in one frame per tree.

    The composite bodies are the same (:func:`composite_bodies`); column j's wrench (:func:`unit_wrench`) is
    taken once into the frame of the root link r of j's tree (the link on the base: R = R_r^j, p = O_j, f' = R f,
    n' = R n + p x f', moment about O_r), and each entry of an ancestor i is the projection on i's motion
    subspace there (Featherstone's M_ij = S_i^T F_j): M_ij = z_i . n' + (p_i x z_i) . f' for a revolute i,
    z_i . f' for a prismatic one, z_i and p_i x z_i once per link: 6 multiplications an entry (3 prismatic),
    against about 22 to carry the wrench through one modified-DH step of general twist (:func:`carry_wrench`;
    about 10 for a right angle), for the frames' kinematics and the columns' turns (about 45 a link): on chains
    of general geometry this wins from 8 joints (671 multiplications against 691 at 8, 7,871 against 17,683
    at 40), on right-angled ones from about 20. Frame r is the reference because M does not depend on q_r
    (R_r^r = 1, z_r = (0, 0, 1): the root's row is the column read n'_z). The diagonal is read in frame j as
    :func:`inertia_matrix` reads it.
    """
    n = arm.n
    geo = joints(arm, ops, q)
    par = link_parameters(arm, ops, group, parameters)
    J, MS, M = composite_bodies(arm, ops, geo, par, dh_step(arm, ops, geo, q))
    R, p = root_frames(arm, geo, joint_offsets(arm, ops, q))
    moment_arm = [cross(p[i], R[i][2]) if geo[i].revolute else ZERO3 for i in range(n)]  # p_i x z_i
    out: list[list[Scalar]] = [[0] * n for _ in range(n)]
    for j in range(n):
        f, m = unit_wrench(geo[j], J[j], MS[j], M[j])
        out[j][j] = (m[2] if geo[j].revolute else f[2]) + par[j].armature
        ancestors = arm.ancestors(j)[1:]
        if not ancestors:
            continue
        f_root = _rotate(R[j], f)
        n_root = vadd(_rotate(R[j], m), cross(p[j], f_root))
        for i in ancestors:
            z = R[i][2]
            value = dot(z, f_root) if not geo[i].revolute else dot(z, n_root) + dot(moment_arm[i], f_root)
            out[i][j] = out[j][i] = value
    return out


def floating_inertia_matrix(arm: ArmData, ops: ScalarOps, q: Sequence[Scalar], base: Inertial, *,
                            group: bool = True, joint_block: Callable[..., list[list[Scalar]]] | None = None
                            ) -> list[list[Scalar]]:
    """M (nv x nv, nv = 6 + n, symmetric) of a tree on a floating base (Pinocchio's ``crba`` with a
    ``JointModelFreeFlyer`` root; the base's six coordinates first, its body-frame twist (linear, angular)).

    The joints' block is the fixed-base tree's M (``joint_block``, :func:`inertia_matrix` by default: the composite
    bodies of the links do not depend on the base), with the parameters regrouped into the base
    (:func:`floating_parameters`). The base's block is the spatial inertia of the whole robot, the composite body
    of the base (its own parameters and its children's composite bodies carried into its frame, a modified-DH
    factor at a time: :func:`carry_dh`), [[M 1, -hat(MS)], [hat(MS), J]] in (linear, angular) order; the base's
    entries of joint j's column are the wrench that a unit qdd_j produces on j's composite body
    (:func:`unit_wrench`) carried through j's ancestors into the base frame (S_base^T F_j, S_base = 1)."""
    n = arm.n
    geo = joints(arm, ops, q)
    par, root = floating_parameters(arm, ops, base, group)
    inner = (joint_block or inertia_matrix)(arm, ops, q, parameters=par)
    step = dh_step(arm, ops, geo, q)
    J, MS, M = composite_bodies(arm, ops, geo, par, step)
    Jb = [list(row) for row in root.J]
    MSb, Mb = root.MS, root.M
    for j in range(n):
        if arm.parents[j] < 0:
            carried_J, carried_MS = step(j, M[j], J[j], MS[j])
            Jb = [[Jb[a][b] + carried_J[a][b] for b in range(3)] for a in range(3)]
            MSb, Mb = vadd(MSb, carried_MS), Mb + M[j]
    hx, hy, hz = MSb
    out: list[list[Scalar]] = [[0] * (6 + n) for _ in range(6 + n)]
    block = [[Mb, 0, 0, 0, hz, -hy], [0, Mb, 0, -hz, 0, hx], [0, 0, Mb, hy, -hx, 0],
             [0, -hz, hy, *Jb[0]], [hz, 0, -hx, *Jb[1]], [-hy, hx, 0, *Jb[2]]]
    for a in range(6):
        out[a][:6] = block[a]
    for j in range(n):
        f, m = unit_wrench(geo[j], J[j], MS[j], M[j])
        for i in arm.ancestors(j):
            f, m = carry_wrench(geo[i], f, m)
        for a, value in enumerate((*f, *m)):
            out[a][6 + j] = out[6 + j][a] = value
        for i in range(n):
            out[6 + i][6 + j] = inner[i][j]
    return out


def root_frames(arm: ArmData, geo: Sequence[Joint], offsets: Sequence[tuple[Vec, Scalar]]
                ) -> tuple[list[Mat], list[Vec]]:
    """Each link's frame in the frame of its tree's root link (the link on the base): the columns of the
    rotation (x, y, z of frame j) and the origin O_j; the root's own are the literal 1 and 0.
    R_j = R_lambda F Rot(z, theta): z_j = (R_lambda F) z needs no angle of j, and
    O_j = O_lambda + R_lambda (p + F z d) = O_lambda + R_lambda p + z_j d (``offsets``: p, d; modified DH:
    p = (a, 0, 0), 3 multiplications and 3 for d, where R_lambda P_j would take 9)."""
    R: list[Mat] = []
    origins: list[Vec] = []
    for j, jt in enumerate(geo):
        lam = arm.parents[j]
        if lam < 0:
            R.append(((1, 0, 0), (0, 1, 0), (0, 0, 1)))
            origins.append(ZERO3)
            continue
        A = [_rotate(R[lam], (jt.F[0][c], jt.F[1][c], jt.F[2][c])) for c in range(3)]  # columns of R_lambda F
        c, s = jt.c_theta, jt.s_theta
        R.append((vadd(vscale(c, A[0]), vscale(s, A[1])), vsub(vscale(c, A[1]), vscale(s, A[0])), A[2]))
        p, d = offsets[j]
        origins.append(vadd(origins[lam], _rotate(R[lam], p), vscale(d, A[2])))
    return R, origins


def joint_offsets(arm: ArmData, ops: ScalarOps, q: Sequence[Scalar]) -> list[tuple[Vec, Scalar]]:
    """p and d of each joint (P = p + F z d, :mod:`robodyn.recursions.arm`) as scalars of ``ops``."""
    out = []
    for j, data in enumerate(arm.joints):
        d = ops.number(data.d) if data.revolute or data.pseudo is not None else ops.number(data.d) + q[j]
        out.append((tuple(ops.number(x) for x in data.p), d))
    return out


def dh_step(arm: ArmData, ops: ScalarOps, geo: Sequence[Joint], q: Sequence[Scalar]
            ) -> Callable[[int, Scalar, Any, Vec], tuple[Any, Vec]]:
    """The step of :func:`composite_bodies` by :func:`carry_dh`."""
    offsets = joint_offsets(arm, ops, q)
    return lambda j, m, J, MS: carry_dh(arm.joints[j], geo[j], *offsets[j], m, J, MS)


def carry_dh(data: JointData, jt: Joint, p: Vec, d: Scalar, m: Scalar, J: Sequence[Sequence[Scalar]], MS: Vec
             ) -> tuple[list[list[Scalar]], Vec]:
    """What :func:`carry` gives, the transform taken a factor at a time (R = F Rot(z, theta), P = p + F z d):
    the body is turned about z_j, moved along it by d, turned by F and moved by p. A turn about a coordinate
    axis (cosine c, sine s; axes a, b turned, k kept) changes J by the double angle: with D = J_aa - J_bb and
    t = s^2 D + 2cs J_ab, J_aa - t, J_bb + t, J_ab' = cs D + (c^2 - s^2) J_ab, then (J_ak, J_bk) turned as a
    vector: 8 multiplications (s^2, cs, c^2 shared by the joint's every use) where R J R^T takes about 20; a
    move along one axis, 3. F is modified DH's Rot(x, alpha), turned the same way (axes relabelled) unless
    alpha is a multiple of pi/2 (its entries fold), or a general rotation after a fixed placement."""
    if data.pseudo == 0:  # (moved by a spherical or planar joint's q: no DH factors)
        return carry(jt, m, [list(row) for row in J], MS)
    J1, h = _turn(J, MS, jt.c_theta, jt.s_theta, (0, 1, 2))
    J2, h = _moved(m, (0, 0, d), J1, h)
    J3, h = _turn(J2, h, jt.F[1][1], jt.F[2][1], (1, 2, 0)) if _about_x(data.F) else _rotated(jt.F, J2, h)
    return _moved(m, p, J3, h)


def _about_x(F: Any) -> bool:
    """F (model numbers) is Rot(x, alpha) with alpha not a multiple of pi/2."""
    exact = (F[0][0] == 1 and F[0][1] == 0 and F[0][2] == 0 and F[1][0] == 0 and F[2][0] == 0
             and F[1][1] == F[2][2] and F[1][2] == -F[2][1])
    return bool(exact) and not any(F[1][1] == v for v in (0, 1, -1))


def _turn(J: Sequence[Sequence[Scalar]], h: Vec, c: Scalar, s: Scalar, axes: tuple[int, int, int]
          ) -> tuple[list[list[Scalar]], Vec]:
    """Rot J Rot^T and Rot h for the turn about axis k = axes[2] (axes a, b: v_a' = c v_a - s v_b,
    v_b' = s v_a + c v_b); :func:`carry_dh`."""
    a, b, k = axes
    s2, cs = s * s, c * s
    D = J[a][a] - J[b][b]
    t = s2 * D + (cs + cs) * J[a][b]
    out = [[J[r][col] for col in range(3)] for r in range(3)]
    out[a][a], out[b][b] = J[a][a] - t, J[b][b] + t
    out[a][b] = out[b][a] = cs * D + (c * c - s2) * J[a][b]
    out[a][k] = out[k][a] = c * J[a][k] - s * J[b][k]
    out[b][k] = out[k][b] = s * J[a][k] + c * J[b][k]
    turned = list(h)
    turned[a], turned[b] = c * h[a] - s * h[b], s * h[a] + c * h[b]
    return out, (turned[0], turned[1], turned[2])


def _moved(m: Scalar, P: Vec, J: Sequence[Sequence[Scalar]], h: Vec) -> tuple[list[list[Scalar]], Vec]:
    """J and h of a body (mass m, first moment h about the present origin) about the origin moved to -P
    (:func:`_parallel_axes`)."""
    shift = _parallel_axes(m, P, h)
    out: list[list[Scalar]] = [[0] * 3 for _ in range(3)]
    for a in range(3):
        for b in range(a, 3):
            out[a][b] = out[b][a] = J[a][b] + shift[a][b]
    return out, vadd(h, vscale(m, P))


def _rotated(F: Mat, J: Sequence[Sequence[Scalar]], h: Vec) -> tuple[list[list[Scalar]], Vec]:
    """F J F^T (upper triangle, mirrored) and F h for a general rotation F."""
    FJ = [matvec(F, (J[0][c], J[1][c], J[2][c])) for c in range(3)]  # columns of F J
    out: list[list[Scalar]] = [[0] * 3 for _ in range(3)]
    for a in range(3):
        for b in range(a, 3):
            out[a][b] = out[b][a] = FJ[0][a] * F[b][0] + FJ[1][a] * F[b][1] + FJ[2][a] * F[b][2]
    return out, matvec(F, h)


def _rotate(columns: Mat, v: Vec) -> Vec:
    """(columns) v: the matrix given by its columns, times v (a literal 0 or 1 of v folds)."""
    out: Vec = ZERO3
    for column, x in zip(columns, v, strict=True):
        if isinstance(x, int) and x == 0:
            continue
        out = vadd(out, column if isinstance(x, int) and x == 1 else vscale(x, column))
    return out

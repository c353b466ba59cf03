"""The composite-body algorithm for M, and Khalil and Kleinfinger's regrouping of the inertial parameters.

Both carry the parameters of a body from frame j into the frame of its parent lambda(j) (:func:`carry`):
J' = R J R^T - m hat(P) hat(P) - hat(P) hat(h) - hat(h) hat(P), h = R MS, MS' = h + m P (parallel axes).

:func:`inertia_matrix` (Walker and Orin's method 3, in Khalil's parameters): the composite parameters of
link j and its descendants are carried back to the parent's frame, and column j of M is the wrench a unit
qdd_j produces, carried to the base through the ancestors of j (M_ij of two links on different branches is an
exact 0, never computed: Featherstone's branch-induced sparsity).

:func:`grouped` (Khalil and Kleinfinger's regrouping, from the last link to the first; exact: tau unchanged):
revolute joint j: the part of link j that is symmetric about z_j (YY_j on the xx and yy entries of J_j, MZ_j
and M_j) moves as if fixed to link lambda(j), whatever q_j, so it is carried into that frame: what remains is
XXR_j = XX_j - YY_j, XY_j, XZ_j, YZ_j, ZZ_j, MX_j, MY_j. Prismatic joint j: J_j is a couple-producing term that
rotates with link lambda(j), so it joins J_lambda(j) (R J_j R^T). For a link on the fixed base the moved part
has no effect at all.

Written once over the scalar interface of :mod:`robodyn.recursions.scalars` and a parent array.
"""

from __future__ import annotations

from collections.abc import Sequence

from robodyn.recursions.arm import ArmData, Inertial, Joint, fixed_joint, inertials, joints
from robodyn.recursions.scalars import ScalarOps
from robodyn.recursions.vec3 import ZERO3, Mat, Scalar, Vec, cross, vadd, vscale


def link_parameters(arm: ArmData, ops: ScalarOps, group: bool, given: Sequence[Inertial] | None) -> list[Inertial]:
    """``given`` (scalars), or the arm's own parameters (regrouped if ``group``)."""
    if given is not None:
        return list(given)
    par = inertials(arm, ops)
    return grouped(arm, ops, par) if group else par


def grouped(arm: ArmData, ops: ScalarOps, parameters: list[Inertial]) -> list[Inertial]:
    """The regrouped parameters (module docstring); on a tree, the moved part joins the parent lambda(j)."""
    out = list(parameters)
    for j in reversed(range(arm.n)):
        data, p = arm.joints[j], out[j]
        if data.revolute:
            yy, mz, m = p.J[1][1], p.MS[2], p.M
            J_moved: Mat = ((yy, 0, 0), (0, yy, 0), (0, 0, 0))
            MS_moved: Vec = (0, 0, mz)
            rest = Inertial(J=_sub33(p.J, J_moved), MS=(p.MS[0], p.MS[1], 0), M=0, damping=p.damping,
                            armature=p.armature, coulomb=p.coulomb)
        else:
            J_moved, MS_moved, m = p.J, ZERO3, 0
            rest = Inertial(J=((0,) * 3,) * 3, MS=p.MS, M=p.M, damping=p.damping, armature=p.armature,
                            coulomb=p.coulomb)
        out[j] = rest
        lam = arm.parents[j]
        if lam < 0:
            continue
        J, MS = carry(fixed_joint(data, ops), m, J_moved, MS_moved)
        parent = out[lam]
        out[lam] = Inertial(
            J=tuple(tuple(parent.J[a][b] + J[a][b] for b in range(3)) for a in range(3)),  # type: ignore[arg-type]
            MS=vadd(parent.MS, MS),
            M=parent.M + m,
            damping=parent.damping,
            armature=parent.armature,
            coulomb=parent.coulomb,
        )
    return out


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


def inertia_matrix(arm: ArmData, ops: ScalarOps, q: Sequence[Scalar], *, group: bool = True,
                   parameters: Sequence[Inertial] | None = None) -> list[list[Scalar]]:
    """M (n x n, symmetric) by the composite-body algorithm (module docstring), armature included; ``group``
    regroups the parameters first, ``parameters`` (scalars) replace the arm's own."""
    n, parents = arm.n, arm.parents
    geo = joints(arm, ops, q)
    par = link_parameters(arm, ops, group, parameters)
    J = [[list(row) for row in p.J] for p in par]
    MS, M = [p.MS for p in par], [p.M for p in par]
    for j in reversed(range(n)):  # composite parameters of link j and its descendants, into the parent's frame
        lam = parents[j]
        if lam < 0:
            continue
        carried_J, carried_MS = carry(geo[j], M[j], J[j], MS[j])
        J[lam] = [[J[lam][a][b] + carried_J[a][b] for b in range(3)] for a in range(3)]
        MS[lam] = vadd(MS[lam], carried_MS)
        M[lam] = M[lam] + M[j]
    out: list[list[Scalar]] = [[0] * n for _ in range(n)]
    z: Vec = (0, 0, 1)
    for j in range(n):
        if geo[j].revolute:  # unit qdd_j: wd = z gives F = z x MS, N = J z
            f, m = cross(z, MS[j]), (J[j][0][2], J[j][1][2], J[j][2][2])
        else:  # vd = z gives F = M z, N = MS x z
            f, m = vscale(M[j], z), cross(MS[j], z)
        for i in arm.ancestors(j):
            value = m[2] if geo[i].revolute else f[2]
            out[i][j] = out[j][i] = value + (par[j].armature if i == j else 0)
            if parents[i] >= 0:
                f, m = carry_wrench(geo[i], f, m)
    return out

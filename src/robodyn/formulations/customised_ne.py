"""Customised Newton-Euler (Khalil and Kleinfinger), written for straight-line programs.

The recursion runs in modified DH frames (standard-DH arms are converted first) on the
scalars of :mod:`robodyn.program.builder`, so that it is specialised to the arm as it runs:
every 0, 1 and -1 of the geometry and of the inertial parameters folds away, and what depends
on parameters only goes to the constants block. Each link carries its standard inertial
parameters about its own frame origin (Khalil's J_j, MS_j = m_j r_j, M_j), which keeps the
mass-centre offsets out of the run-time recursion:

    forward, j = 1..n (frame j, R = j-1 R_j = Rot(x, alpha_{j-1}) Rot(z, theta_j), or with a fixed
    placement before it, see :class:`Joint`):
      w_j   = R^T w_{j-1} + qd_j z                                        (revolute)
      wd_j  = R^T wd_{j-1} + qdd_j z + (R^T w_{j-1}) x qd_j z            (revolute)
      vd_j  = R^T (vd_{j-1} + U_{j-1} P_j) [+ 2 w_j x qd_j z + qdd_j z]    (prismatic)
      U_j   = hat(wd_j) + hat(w_j) hat(w_j)
      F_j   = M_j vd_j + U_j MS_j
      N_j   = J_j wd_j + w_j x (J_j w_j) + MS_j x vd_j   (w x J w from the products w_a w_b)
    backward, j = n..1:
      f_j = F_j + R_{j+1} f_{j+1}
      n_j = N_j + R_{j+1} n_{j+1} + P_{j+1} x (R_{j+1} f_{j+1})
      tau_j = n_j . z (revolute) or f_j . z (prismatic) + damping qd_j + armature qdd_j

with vd_0 = -gravity (the base accelerating upwards) and the tip load as f_{n+1}, n_{n+1}. On a kinematic
tree (:attr:`~robodyn.Manipulator.parents`), j-1 stands for the parent lambda(j) in the forward pass, and the
backward pass sums f, n of every child k of j (R_k, P_k theirs); the tip load acts on the last link.
Products with R and R^T are done component by component (never forming the matrix), and U_j
is formed from the six products w_a w_b, as Khalil and Kleinfinger do.

:func:`inertia_matrix` is the composite-body algorithm in the same parameters: the composite
parameters of links j..n (on a tree: j and its descendants) are carried back to frame j-1 (the parent;
J' = R J R^T - m hat(P) hat(P) - hat(P) hat(h) - hat(h) hat(P), h = R MS, MS' = h + m P) and column j of M
is the wrench a unit qdd_j produces, carried to the base through the ancestors of j (M_ij of two links on
different branches is 0 and not computed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from robodyn.formulations.vec3 import ZERO3, Mat, Vec, cross, matvec, vadd, vscale
from robodyn.model.manipulator import Manipulator
from robodyn.recursions.bodies import body_parameters


# -- the geometry of one link in modified DH ----------------------------------------------------
@dataclass(frozen=True)
class Joint:
    """Link j: R = F Rot(z, theta) and P, as scalars, with F the constant part of the rotation:
    Rot(x, alpha) in modified DH, R_P Rot(x, alpha) for a link with a fixed ``placement`` (R_P, p_P),
    whose P is then p_P + R_P (a, -s_alpha d, c_alpha d)."""

    revolute: bool
    F: Mat
    c_theta: Any
    s_theta: Any
    P: Vec
    qd: Any
    qdd: Any

    def to_link(self, v: Vec) -> Vec:
        """R^T v: from frame j-1 into frame j."""
        u = tuple(self.F[0][r] * v[0] + self.F[1][r] * v[1] + self.F[2][r] * v[2] for r in range(3))  # F^T v
        return (self.c_theta * u[0] + self.s_theta * u[1], self.c_theta * u[1] - self.s_theta * u[0], u[2])

    def to_parent(self, v: Vec) -> Vec:
        """R v: from frame j into frame j-1."""
        u = (self.c_theta * v[0] - self.s_theta * v[1], self.s_theta * v[0] + self.c_theta * v[1], v[2])
        return matvec(self.F, u)


@dataclass(frozen=True)
class Inertial:
    """Khalil's standard parameters of one link about its frame origin: J (3x3), MS, M."""

    J: Mat
    MS: Vec
    M: Any
    damping: Any = 0
    armature: Any = 0


def joints(robot: Manipulator, ops: Any, q: Sequence[Any], qd: Sequence[Any], qdd: Sequence[Any]) -> list[Joint]:
    """The links' geometry as scalars of ``ops`` (a :class:`~robodyn.program.builder.Builder`)."""
    out = []
    for i, link in enumerate(robot.links):
        if link.joint == "R":
            c_theta, s_theta = ops.trig(link.theta + q[i])
            d = ops.value(link.d)
        else:
            c_theta, s_theta = ops.value(sympy.cos(link.theta)), ops.value(sympy.sin(link.theta))
            d = ops.value(link.d) + ops.value(q[i])
        out.append(fixed_part(link, ops, c_theta, s_theta, d, ops.value(qd[i]), ops.value(qdd[i])))
    return out


def fixed_part(link: Any, ops: Any, c_theta: Any, s_theta: Any, d: Any, qd: Any = 0, qdd: Any = 0) -> Joint:
    """The Joint of a link for the given cos, sin of theta and d (F and P of :class:`Joint`)."""
    ca, sa = ops.value(sympy.cos(link.alpha)), ops.value(sympy.sin(link.alpha))
    F: Mat = ((1, 0, 0), (0, ca, -sa), (0, sa, ca))
    P: Vec = (ops.value(link.a), -sa * d, ca * d)
    if getattr(link, "has_placement", False):
        T = link.placement
        R_P: Mat = tuple(tuple(ops.value(T[r, c]) for c in range(3)) for r in range(3))  # type: ignore[assignment]
        F = tuple(tuple(sum((R_P[r][k] * F[k][c] for k in range(1, 3)), R_P[r][0] * F[0][c]) for c in range(3))
                  for r in range(3))  # type: ignore[assignment]
        P = vadd(tuple(ops.value(T[r, 3]) for r in range(3)), matvec(R_P, P))  # type: ignore[arg-type]
    return Joint(link.joint == "R", F, c_theta, s_theta, P, qd, qdd)


def inertial_parameters(robot: Manipulator, ops: Any) -> list[Inertial]:
    """J_j about O_j (parallel axes), MS_j and M_j of each link, payload included, as constants."""
    out = []
    for j, link in enumerate(robot.links):
        J, MS, M = body_parameters(robot, j)  # parallel axes, payload included
        out.append(
            Inertial(
                J=tuple(tuple(ops.value(x) for x in row) for row in J),  # type: ignore[arg-type]
                MS=tuple(ops.value(x) for x in MS),  # type: ignore[arg-type]
                M=ops.value(M),
                damping=ops.value(link.damping),
                armature=ops.value(link.armature),
            )
        )
    return out


def link_parameters(robot: Manipulator, ops: Any, group: bool, given: Sequence[Inertial] | None) -> list[Inertial]:
    """``given``, or the robot's own parameters (regrouped if ``group``)."""
    if given is not None:
        return list(given)
    par = inertial_parameters(robot, ops)
    return grouped(robot, ops, par) if group else par


def grouped(robot: Manipulator, ops: Any, parameters: list[Inertial]) -> list[Inertial]:
    """Khalil and Kleinfinger's regrouping, from the last link to the first (exact: tau unchanged).

    Revolute joint j: the part of link j that is symmetric about z_j (YY_j on the xx and yy
    entries of J_j, MZ_j and M_j) moves as if fixed to link j-1, whatever q_j, so it is carried
    into frame j-1 with Rot(x, alpha) and P_j (the transform of :func:`inertia_matrix`): what
    remains is XXR_j = XX_j - YY_j, XY_j, XZ_j, YZ_j, ZZ_j, MX_j, MY_j. Prismatic joint j: J_j
    is a couple-producing term that rotates with link j-1, so it joins J_{j-1} (R J_j R^T).
    For a link on the fixed base the moved part has no effect at all. On a tree, "link j-1" is the
    parent lambda(j) (the moved part moves with it whatever q_j, as in the chain)."""
    out = list(parameters)
    parents = robot.parents
    for j in reversed(range(robot.n)):
        link, p = robot.links[j], out[j]
        if link.joint == "R":
            yy, mz, m = p.J[1][1], p.MS[2], p.M
            J_moved = ((yy, 0, 0), (0, yy, 0), (0, 0, 0))
            MS_moved: Vec = (0, 0, mz)
            rest = Inertial(
                J=_sub33(p.J, J_moved), MS=(p.MS[0], p.MS[1], 0), M=0, damping=p.damping, armature=p.armature
            )
        else:
            J_moved, MS_moved, m = p.J, ZERO3, 0
            rest = Inertial(J=((0,) * 3,) * 3, MS=p.MS, M=p.M, damping=p.damping, armature=p.armature)  # type: ignore[arg-type]
        out[j] = rest
        lam = parents[j]
        if lam < 0:
            continue
        # revolute: the moved part is symmetric about z_j, any theta will do; prismatic: R is constant
        ct, st = (1, 0) if link.joint == "R" else (ops.value(sympy.cos(link.theta)), ops.value(sympy.sin(link.theta)))
        fixed = fixed_part(link, ops, ct, st, ops.value(link.d))
        J, MS = _carry(fixed, m, J_moved, MS_moved)
        parent = out[lam]
        out[lam] = Inertial(
            J=tuple(tuple(parent.J[a][b] + J[a][b] for b in range(3)) for a in range(3)),  # type: ignore[arg-type]
            MS=vadd(parent.MS, MS),
            M=parent.M + m,
            damping=parent.damping,
            armature=parent.armature,
        )
    return out


def _sub33(A: Mat, B: Any) -> Mat:
    return tuple(tuple(A[a][b] - B[a][b] for b in range(3)) for a in range(3))  # type: ignore[return-value]


def _carry(jt: Joint, m: Any, J: Any, MS: Vec) -> tuple[list[list[Any]], Vec]:
    """J, MS of a body about O_j in frame j, about O_{j-1} in frame j-1 (module docstring)."""
    h = jt.to_parent(MS)
    RJ = [jt.to_parent(tuple(J[r][c] for r in range(3))) for c in range(3)]  # columns of R J
    RJRt = [jt.to_parent(tuple(RJ[c][r] for c in range(3))) for r in range(3)]
    shift = _parallel_axes(m, jt.P, h)
    out = [[0] * 3 for _ in range(3)]
    for a in range(3):
        for b in range(a, 3):
            out[a][b] = out[b][a] = RJRt[a][b] + shift[a][b]
    return out, vadd(h, vscale(m, jt.P))


def _U_times(w: Vec, wd: Vec, v: Vec) -> Vec:
    """U v = wd x v + w x (w x v), with U from the six products w_a w_b (Khalil)."""
    wx2, wy2, wz2 = w[0] * w[0], w[1] * w[1], w[2] * w[2]
    wxy, wxz, wyz = w[0] * w[1], w[0] * w[2], w[1] * w[2]
    U = (
        (-(wy2 + wz2), wxy - wd[2], wxz + wd[1]),
        (wxy + wd[2], -(wx2 + wz2), wyz - wd[0]),
        (wxz - wd[1], wyz + wd[0], -(wx2 + wy2)),
    )
    return matvec(U, v)


def _w_cross_Jw(J: Mat, w: Vec) -> Vec:
    """w x (J w) as quadratic forms in the six products w_a w_b that U_j already needs:
    (w x Jw)_x = (J_zz - J_yy) w_y w_z + J_xz w_x w_y - J_xy w_x w_z + J_yz (w_y^2 - w_z^2), and
    cyclically; the differences of moments are constants (3 multiplications fewer than J w, then
    the cross product, for a full tensor)."""
    xx, yy, zz = w[0] * w[0], w[1] * w[1], w[2] * w[2]
    xy, xz, yz = w[0] * w[1], w[0] * w[2], w[1] * w[2]
    return (
        (J[2][2] - J[1][1]) * yz + J[0][2] * xy - J[0][1] * xz + J[1][2] * (yy - zz),
        (J[0][0] - J[2][2]) * xz + J[0][1] * yz - J[1][2] * xy + J[0][2] * (zz - xx),
        (J[1][1] - J[0][0]) * xy + J[1][2] * xz - J[0][2] * yz + J[0][1] * (xx - yy),
    )


def inverse_dynamics(
    robot: Manipulator,
    ops: Any,
    q: Sequence[Any],
    qd: Sequence[Any] | None,
    qdd: Sequence[Any] | None,
    *,
    gravity: bool = True,
    tip_load: bool = True,
    friction: bool = True,
    group: bool = True,
    parameters: Sequence[Inertial] | None = None,
) -> list[Any]:
    """tau by the customised recursion (module docstring); ``qd``/``qdd`` None stand for zero.

    ``robot`` must be in modified DH (see :func:`modified`); ``friction`` adds damping qd and
    armature qdd; ``group`` applies :func:`grouped` first; ``parameters``, if given, are the
    links' parameters to use instead of the robot's (e.g. the base parameters as symbols)."""
    n, parents = robot.n, robot.parents
    zero = [0] * n
    geo = joints(robot, ops, q, qd or zero, qdd or zero)
    par = link_parameters(robot, ops, group, parameters)
    base_vd: Vec = tuple(-ops.value(g) for g in robot.gravity) if gravity else ZERO3  # type: ignore[assignment]
    motion: list[tuple[Vec, Vec, Vec]] = []  # w_j, wd_j, vd_j of each link
    F, N = [], []
    for j, (jt, p) in enumerate(zip(geo, par, strict=True)):
        w, wd, vd = motion[parents[j]] if parents[j] >= 0 else (ZERO3, ZERO3, base_vd)  # from the parent
        vd = jt.to_link(vadd(vd, _U_times(w, wd, jt.P)))
        w_in = jt.to_link(w)
        wd = jt.to_link(wd)
        if jt.revolute:
            w = (w_in[0], w_in[1], w_in[2] + jt.qd)
            wd = (wd[0] + w_in[1] * jt.qd, wd[1] - w_in[0] * jt.qd, wd[2] + jt.qdd)
        else:
            w = w_in
            vd = (vd[0] + 2 * w[1] * jt.qd, vd[1] - 2 * w[0] * jt.qd, vd[2] + jt.qdd)
        motion.append((w, wd, vd))
        F.append(vadd(vscale(p.M, vd), _U_times(w, wd, p.MS)))
        N.append(vadd(matvec(p.J, wd), _w_cross_Jw(p.J, w), cross(p.MS, vd)))

    # what the children (and, on the last link, the tip load) exert on each link, in its frame
    inward: list[tuple[Vec, Vec] | None] = [None] * n
    if tip_load:
        inward[n - 1] = (tuple(ops.value(x) for x in robot.tip_force),  # type: ignore[assignment]
                         tuple(ops.value(x) for x in robot.tip_moment))
    tau: list[Any] = [0] * n
    for j in reversed(range(n)):
        f, m = (F[j], N[j]) if inward[j] is None else (vadd(F[j], inward[j][0]), vadd(N[j], inward[j][1]))
        jt, p = geo[j], par[j]
        tau[j] = m[2] if jt.revolute else f[2]
        if friction:
            tau[j] = tau[j] + p.damping * jt.qd + p.armature * jt.qdd
        lam = parents[j]
        if lam >= 0:  # into the parent's frame, added to what its other children exert
            f_parent = jt.to_parent(f)
            carried = (f_parent, vadd(jt.to_parent(m), cross(jt.P, f_parent)))
            inward[lam] = carried if inward[lam] is None else (vadd(inward[lam][0], carried[0]),
                                                                vadd(inward[lam][1], carried[1]))
    return tau


def inertia_matrix(robot: Manipulator, ops: Any, q: Sequence[Any], *, group: bool = True,
                   parameters: Sequence[Inertial] | None = None) -> list[list[Any]]:
    """M (n x n, symmetric) by the composite-body algorithm (module docstring), armature included;
    ``group`` and ``parameters`` as in :func:`inverse_dynamics`."""
    n, parents = robot.n, robot.parents
    geo = joints(robot, ops, q, [0] * n, [0] * n)
    par = link_parameters(robot, ops, group, parameters)
    J, MS, M = [list(map(list, p.J)) for p in par], [p.MS for p in par], [p.M for p in par]
    for j in reversed(range(n)):  # composite parameters of link j and its descendants, into the parent's frame
        lam = parents[j]
        if lam < 0:
            continue
        carried_J, carried_MS = _carry(geo[j], M[j], J[j], MS[j])
        J[lam] = [[J[lam][a][b] + carried_J[a][b] for b in range(3)] for a in range(3)]
        MS[lam] = vadd(MS[lam], carried_MS)
        M[lam] = M[lam] + M[j]
    # column j: the wrench of a unit qdd_j, carried down to the base through the ancestors of j only; an entry
    # of two links on different branches is an exact 0, never computed (Featherstone's branch-induced sparsity)
    out: list[list[Any]] = [[0] * n for _ in range(n)]
    for j in range(n):
        z = (0, 0, 1)
        if geo[j].revolute:  # unit qdd_j: wd = z gives F = z x MS, N = J z
            f, m = cross(z, MS[j]), tuple(J[j][r][2] for r in range(3))
        else:  # vd = z gives F = M z, N = MS x z
            f, m = vscale(M[j], z), cross(MS[j], z)
        for i in robot.ancestors(j):
            value = m[2] if geo[i].revolute else f[2]
            out[i][j] = out[j][i] = value + (par[j].armature if i == j else 0)
            if parents[i] >= 0:
                f_parent = geo[i].to_parent(f)
                m = vadd(geo[i].to_parent(m), cross(geo[i].P, f_parent))
                f = f_parent
    return out


def _parallel_axes(m: Any, P: Vec, h: Vec) -> list[list[Any]]:
    """-m hat(P) hat(P) - hat(P) hat(h) - hat(h) hat(P) = (m P.P + 2 P.h) 1 - m P P^T - h P^T - P h^T
    (from -hat(a) hat(b) = (a.b) 1 - b a^T); upper triangle."""
    mP = vscale(m, P)
    pp = P[0] * mP[0] + P[1] * mP[1] + P[2] * mP[2]
    ph = P[0] * h[0] + P[1] * h[1] + P[2] * h[2]
    out = [[0] * 3 for _ in range(3)]
    for a in range(3):
        for b in range(a, 3):
            diag = (pp + 2 * ph) if a == b else 0
            out[a][b] = diag - (P[a] * mP[b] + P[a] * h[b] + h[a] * P[b])
    return out

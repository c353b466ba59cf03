"""dtau/dq and dtau/dqd analytically, in the base frame (Carpentier and Mansard, RSS 2018, sec. III).

The inverse dynamics is tau_j = S_j . F_j, with S_j joint j's axis (a motion vector), F_j the force its subtree
needs (f_i = I_i a_i + v_i x* I_i v_i summed over the subtree, the tip load on the last link), all in the base
frame about its origin (Plucker vectors: motion (w, v), force (n, f); a_0 = -gravity). With psi_k = S_k x v_k
and, for k = i or an ancestor of link i,

    dv_i/dqd_k = S_k,              da_i/dqd_k = S_k x v_i - 2 psi_k,
    dv_i/dq_k = S_k x v_i - psi_k, da_i/dq_k = S_k x a_i - psi_k x v_i - chi_k,
    chi_k = S_k x a_lambda(k) - psi_k x v_lambda(k),
    dS_i/dq_k = S_k x S_i,         dI_i/dq_k = S_k x* I_i - I_i S_k x   (the subtree turns rigidly),

so that df_i/dqd_k = B_i S_k - 2 I_i psi_k and df_i/dq_k = S_k x* f_i - B_i psi_k - I_i chi_k, where
B_i = dI_i/dt + [I_i v_i x*] and dI_i/dt = crf(v_i) I_i - I_i crm(v_i) = [[T_i, [g_i x]], [-[g_i x], 0]] (T_i the
rate of the inertia about the origin, (L_i, g_i) = I_i v_i the momentum): B S = (T s + s x L, 2 s x g) for
S = (s, t). Summed over a subtree these are composites (T_c, the momentum, the inertia I_c, the force F_c); the
rigid part S_k x* F_j cancels against dS_j/dq_k . F_j, and

    k = j or an ancestor of j:  dtau_j/dqd_k = s_k . alpha_j - 2 beta_j . psi_k,
                                dtau_j/dq_k  = -(psi_k,w . alpha_j + beta_j . chi_k),
    k a descendant of j:        dtau_j/dqd_k = S_j . gamma_k,   dtau_j/dq_k = S_j . delta_k,   0 otherwise,

    alpha_j = T_j a + L_j x a + 2 g_j x b,  beta_j = I_j S_j,  gamma_k = B_k S_k - 2 I_k psi_k,
    delta_k = S_k x* F_k - B_k psi_k - I_k chi_k

(S_j = (a, b), psi_k,w the angular part of psi_k; composites of the subtree of j, resp. k), plus the joint damping
on dtau/dqd's diagonal (Coulomb friction has no slope there, as in forward mode; the armature, no q or qd).
Per pair 6 to 9 multiplications, where forward mode (:mod:`robodyn.recursions.forward_mode`) carries a
direction through a whole step of both recursions; per link a few hundred (the pose in the base frame, the
inertia about the origin). The routes choose by count (:func:`robodyn.program.routes.derivative_outputs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from robodyn.recursions.arm import ArmData, Joint, joints
from robodyn.recursions.composite import link_parameters
from robodyn.recursions.scalars import ScalarOps
from robodyn.recursions.vec3 import ZERO3, Mat, Scalar, Vec, cross, dot, matvec, vadd, vscale, vsub

Motion6 = tuple[Vec, Vec]  # (w, v): angular, and the linear velocity of the point at the origin


def _combine(columns: Mat, v: Vec) -> Vec:
    """sum_c columns[c] v_c (a matrix given by its columns, times v)."""
    return vadd(vscale(v[0], columns[0]), vscale(v[1], columns[1]), vscale(v[2], columns[2]))


def _sym_add(A: Mat, B: Mat) -> Mat:
    return tuple(tuple(A[r][c] + B[r][c] for c in range(3)) for r in range(3))  # type: ignore[return-value]


def _sym(entry: dict[tuple[int, int], Scalar]) -> Mat:
    """The symmetric matrix of its upper entries (each entry formed once)."""
    return tuple(tuple(entry[min(r, c), max(r, c)] for c in range(3)) for r in range(3))  # type: ignore[return-value]


@dataclass
class _Body:
    """One link (or, summed, a subtree) in the base frame: inertia about the origin (Ibar, h, m), momentum
    (L, g), T = dIbar/dt."""

    Ibar: Mat
    h: Vec
    m: Scalar
    L: Vec
    g: Vec
    T: Mat

    def plus(self, other: _Body) -> _Body:
        return _Body(_sym_add(self.Ibar, other.Ibar), vadd(self.h, other.h), self.m + other.m,
                     vadd(self.L, other.L), vadd(self.g, other.g), _sym_add(self.T, other.T))

    def inertia_times(self, s: Vec, t: Vec) -> Motion6:
        """I (s, t) = (Ibar s + h x t, m t - h x s) (a force)."""
        return vadd(matvec(self.Ibar, s), cross(self.h, t)), vsub(vscale(self.m, t), cross(self.h, s))


def _pose(jt: Joint, R: Mat, p: Vec) -> tuple[Mat, Vec]:
    """Link j's rotation (columns) and origin in the base frame, from its parent's."""
    RF = tuple(_combine(R, (jt.F[0][c], jt.F[1][c], jt.F[2][c])) for c in range(3))  # R F, by columns
    c, s = jt.c_theta, jt.s_theta
    x = vadd(vscale(c, RF[0]), vscale(s, RF[1]))
    y = vsub(vscale(c, RF[1]), vscale(s, RF[0]))
    return (x, y, RF[2]), vadd(p, _combine(R, jt.P))


def _body(ops: ScalarOps, R: Mat, p: Vec, J: Mat, MS: Vec, M: Scalar, w: Vec, v: Vec) -> _Body:
    """A link's inertia about the origin, its momentum and T = w x Ibar - Ibar w x - (h v^T + v h^T) + 2 (v.h) 1."""
    u = _combine(R, MS)
    RJ: Mat = tuple(_combine(R, (J[0][c], J[1][c], J[2][c])) for c in range(3))  # type: ignore[assignment]
    RJR = [_combine(RJ, (R[0][c], R[1][c], R[2][c])) for c in range(3)]  # R J R^T, by columns
    e = vadd(u, vscale(ops.number(sympy.Rational(1, 2)) * M, p))  # Ibar = R J R^T - (p e^T + e p^T) + 2 (p.e) 1
    pe = dot(p, e)
    Ibar = _sym({(r, c): RJR[c][r] - (p[r] * e[c] + e[r] * p[c]) + ((pe + pe) if r == c else 0)
                 for r in range(3) for c in range(r, 3)})
    h = vadd(vscale(M, p), u)
    L = vadd(matvec(Ibar, w), cross(h, v))
    g = vadd(vscale(M, v), cross(w, h))
    K = tuple(cross(w, Ibar[c]) for c in range(3))  # columns of [w x] Ibar (Ibar symmetric: its rows are columns)
    vh = dot(v, h)
    T = _sym({(r, c): K[c][r] + K[r][c] - (h[r] * v[c] + v[r] * h[c]) + ((vh + vh) if r == c else 0)
              for r in range(3) for c in range(r, 3)})
    return _Body(Ibar, h, M, L, g, T)


def _is_zero(x: Scalar) -> bool:
    if isinstance(x, int | float):
        return x == 0
    is_zero = getattr(x, "is_zero", None)
    return bool(is_zero()) if callable(is_zero) else False


def _motion_cross(x: Motion6, y: Motion6) -> Motion6:
    return cross(x[0], y[0]), vadd(cross(x[0], y[1]), cross(x[1], y[0]))


def _force_cross(m: Motion6, f: Motion6) -> Motion6:
    """m x* f = (w x n + v x f, w x f)."""
    return vadd(cross(m[0], f[0]), cross(m[1], f[1])), cross(m[0], f[1])


def _pair(x: Motion6, y: Motion6) -> Scalar:
    return dot(x[0], y[0]) + dot(x[1], y[1])


def id_jacobians(arm: ArmData, ops: ScalarOps, q: Sequence[Scalar], qd: Sequence[Scalar], qdd: Sequence[Scalar],
                 directions: Sequence[str]) -> dict[str, list[list[Scalar]]]:
    """{d: [[dtau_j/dd_k for k] for j]} for d in ``directions`` (of "q", "qd") at (q, qd, qdd) (module
    docstring); the regrouped parameters, as tau uses."""
    n = arm.n
    geo = joints(arm, ops, q, qd, qdd)
    par = link_parameters(arm, ops, True, None)
    identity: Mat = ((1, 0, 0), (0, 1, 0), (0, 0, 1))
    poses: list[tuple[Mat, Vec]] = []
    axes: list[Motion6] = []
    velocity: list[Motion6] = []
    psi: list[Motion6] = []  # S_j x v_j
    with ops.stage("ID derivatives: the links in the base frame"):
        for j, jt in enumerate(geo):
            lam = arm.parents[j]
            R, p = _pose(jt, *(poses[lam] if lam >= 0 else (identity, ZERO3)))
            poses.append((R, p))
            z = R[2]
            axes.append((z, cross(p, z)) if jt.revolute else (ZERO3, z))
            parent_v = velocity[lam] if lam >= 0 else (ZERO3, ZERO3)
            velocity.append((vadd(parent_v[0], vscale(jt.qd, axes[j][0])),
                             vadd(parent_v[1], vscale(jt.qd, axes[j][1]))))
            psi.append(_motion_cross(axes[j], velocity[j]))
        bodies = [_body(ops, *poses[j], par[j].J, par[j].MS, par[j].M, *velocity[j]) for j in range(n)]
        if "q" in directions:
            F, chi = _forces(arm, ops, geo, poses, axes, velocity, psi, bodies)
        for j in reversed(range(n)):  # composites: each subtree's sums
            if arm.parents[j] >= 0:
                bodies[arm.parents[j]] = bodies[arm.parents[j]].plus(bodies[j])
    alpha, beta, gamma, delta = [], [], [], []
    with ops.stage("ID derivatives: per joint"):
        for j in range(n):
            (a, b), c = axes[j], bodies[j]
            beta.append(c.inertia_times(a, b))
            Ta = matvec(c.T, a)
            gb = cross(c.g, b)
            alpha.append(vadd(Ta, cross(c.L, a), gb, gb))
            if "qd" in directions:  # Bc S - 2 Ic psi
                Ipsi = c.inertia_times(*psi[j])
                down = vsub(cross(a, c.g), Ipsi[1])
                gamma.append((vsub(Ta, vadd(cross(c.L, a), Ipsi[0], Ipsi[0])), vadd(down, down)))
            if "q" in directions:  # S x* F - Bc psi - Ic chi
                s = psi[j][0]
                Ichi, SF = c.inertia_times(*chi[j]), _force_cross(axes[j], F[j])
                gs = cross(s, c.g)
                delta.append((vsub(SF[0], vadd(matvec(c.T, s), cross(s, c.L), Ichi[0])),
                              vsub(SF[1], vadd(gs, gs, Ichi[1]))))
    out: dict[str, list[list[Scalar]]] = {d: [[0] * n for _ in range(n)] for d in directions}
    with ops.stage("ID derivatives: the pairs"):
        for j in range(n):
            for k in arm.ancestors(j):  # k = j or an ancestor of j: dtau_j/d_k, then (k != j) dtau_k/d_j
                if "qd" in directions:
                    bp = _pair(beta[j], psi[k])
                    out["qd"][j][k] = dot(axes[k][0], alpha[j]) - (bp + bp)
                    if k != j:
                        out["qd"][k][j] = _pair(axes[k], gamma[j])
                if "q" in directions:
                    out["q"][j][k] = -(dot(psi[k][0], alpha[j]) + _pair(beta[j], chi[k]))
                    if k != j:
                        out["q"][k][j] = _pair(axes[k], delta[j])
            if "qd" in directions and not _is_zero(par[j].damping):
                out["qd"][j][j] = out["qd"][j][j] + par[j].damping
    return out


def _forces(arm: ArmData, ops: ScalarOps, geo: Sequence[Joint], poses: Sequence[tuple[Mat, Vec]],
            axes: Sequence[Motion6], velocity: Sequence[Motion6], psi: Sequence[Motion6],
            bodies: Sequence[_Body]) -> tuple[list[Motion6], list[Motion6]]:
    """F_j, the force each subtree needs (the tip load on the last link), and chi_j = S_j x a_lambda(j) -
    psi_j x v_lambda(j), in the base frame (``bodies``: each link's own)."""
    n = arm.n
    base_a: Motion6 = (ZERO3, tuple(-ops.number(g) for g in arm.gravity))
    acceleration: list[Motion6] = []
    F: list[Motion6] = []
    chi: list[Motion6] = []
    for j, jt in enumerate(geo):
        lam = arm.parents[j]
        parent_a = acceleration[lam] if lam >= 0 else base_a
        parent_v = velocity[lam] if lam >= 0 else (ZERO3, ZERO3)
        acceleration.append(tuple(vsub(vadd(parent_a[r], vscale(jt.qdd, axes[j][r])), vscale(jt.qd, psi[j][r]))
                                  for r in range(2)))  # type: ignore[arg-type]
        Sa, pv = _motion_cross(axes[j], parent_a), _motion_cross(psi[j], parent_v)
        chi.append((vsub(Sa[0], pv[0]), vsub(Sa[1], pv[1])))
        c = bodies[j]
        Ia, vh = c.inertia_times(*acceleration[j]), _force_cross(velocity[j], (c.L, c.g))
        F.append((vadd(Ia[0], vh[0]), vadd(Ia[1], vh[1])))
    R, p = poses[n - 1]
    force = _combine(R, tuple(ops.number(x) for x in arm.tip_force))
    moment = vadd(_combine(R, tuple(ops.number(x) for x in arm.tip_moment)), cross(p, force))
    F[n - 1] = (vadd(F[n - 1][0], moment), vadd(F[n - 1][1], force))
    for j in reversed(range(n)):
        lam = arm.parents[j]
        if lam >= 0:
            F[lam] = (vadd(F[lam][0], F[j][0]), vadd(F[lam][1], F[j][1]))
    return F, chi


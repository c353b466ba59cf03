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
on dtau/dqd's diagonal and the joint stiffness k on dtau/dq's (Coulomb friction has no slope there, as in forward
mode; the armature, no q or qd).
Per pair 6 to 9 multiplications, where forward mode (:mod:`robodyn.recursions.forward_mode`) carries a
direction through a whole step of both recursions; per link a few hundred (the pose in the base frame, the
inertia about the origin). The routes choose by count (:func:`robodyn.program.routes.derivative_outputs`).

On a floating base (a :class:`Root` with a body) the same recursion runs in the base's frame at this instant, the base
a six-column root whose motion subspace is the identity; its rows and columns border the joints' (:func:`_base_pairs`;
:func:`robodyn.program.floating.analytic_id_jacobians` makes the root from the program's inputs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from robodyn.recursions.arm import ArmData, Inertial, Joint, joints
from robodyn.recursions.composite import floating_parameters, link_parameters
from robodyn.recursions.scalars import ScalarOps
from robodyn.recursions.vec3 import ZERO3, Mat, Scalar, Vec, cross, dot, matvec, vadd, vscale, vsub

Motion6 = tuple[Vec, Vec]  # (w, v): angular, and the linear velocity of the point at the origin
IDENTITY: Mat = ((1, 0, 0), (0, 1, 0), (0, 0, 1))


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


@dataclass(frozen=True)
class Root:
    """What the tree stands on, in the reference frame of the recursion: its twist and its spatial acceleration
    with the world's (``a0``, gravity as the world accelerating upwards) added, and, for a floating base, its own
    link's parameters about its origin (the reference frame is the base's at this instant, module docstring)."""

    velocity: Motion6
    acceleration: Motion6
    a0: Motion6
    body: Inertial | None = None


#: A floating base's six directions in Pinocchio's order (linear, then angular; a ``JointModelFreeFlyer``'s motion
#: subspace, the identity in the base frame), as motion vectors (w, v).
_UNITS: tuple[Vec, Vec, Vec] = ((1, 0, 0), (0, 1, 0), (0, 0, 1))
BASE_AXES: tuple[Motion6, ...] = (*((ZERO3, e) for e in _UNITS), *((e, ZERO3) for e in _UNITS))


def fixed_root(arm: ArmData, ops: ScalarOps) -> Root:
    """A fixed base: at rest, a0 = (0, -gravity)."""
    a0: Motion6 = (ZERO3, (-ops.number(arm.gravity[0]), -ops.number(arm.gravity[1]), -ops.number(arm.gravity[2])))
    return Root((ZERO3, ZERO3), a0, a0)


def id_jacobians(arm: ArmData, ops: ScalarOps, q: Sequence[Scalar], qd: Sequence[Scalar], qdd: Sequence[Scalar],
                 directions: Sequence[str], root: Root | None = None) -> dict[str, list[list[Scalar]]]:
    """{d: [[dtau_j/dd_k for k] for j]} for d in ``directions`` (of "q", "qd") at (q, qd, qdd) (module
    docstring); the regrouped parameters, as tau uses. A floating ``root`` (:class:`Root` with a body) adds the
    base's six rows and columns first (nv = n + 6, :func:`_base_pairs`); its parameters are regrouped with the
    links', as :func:`robodyn.recursions.newton_euler.floating_inverse_dynamics` does."""
    n = arm.n
    root = root if root is not None else fixed_root(arm, ops)
    geo = joints(arm, ops, q, qd, qdd)
    if root.body is None:
        par, base_body = link_parameters(arm, ops, True, None), None
    else:
        par, base_par = floating_parameters(arm, ops, root.body, True)
        base_body = _body(ops, IDENTITY, ZERO3, base_par.J, base_par.MS, base_par.M, *root.velocity)
    poses: list[tuple[Mat, Vec]] = []
    axes: list[Motion6] = []
    velocity: list[Motion6] = []
    psi: list[Motion6] = []  # S_j x v_j
    with ops.stage("ID derivatives: the links in the base frame"):
        for j, jt in enumerate(geo):
            lam = arm.parents[j]
            R, p = _pose(jt, *(poses[lam] if lam >= 0 else (IDENTITY, ZERO3)))
            poses.append((R, p))
            z = R[2]
            axes.append((z, cross(p, z)) if jt.revolute else (ZERO3, z))
            parent_v = velocity[lam] if lam >= 0 else root.velocity
            velocity.append((vadd(parent_v[0], vscale(jt.qd, axes[j][0])),
                             vadd(parent_v[1], vscale(jt.qd, axes[j][1]))))
            psi.append(_motion_cross(axes[j], velocity[j]))
        bodies = [_body(ops, *poses[j], par[j].J, par[j].MS, par[j].M, *velocity[j]) for j in range(n)]
        if "q" in directions:
            F, chi = _forces(arm, ops, geo, poses, axes, velocity, psi, bodies, root)
        for j in reversed(range(n)):  # composites: each subtree's sums
            if arm.parents[j] >= 0:
                bodies[arm.parents[j]] = bodies[arm.parents[j]].plus(bodies[j])
            elif base_body is not None:
                base_body = base_body.plus(bodies[j])
    alpha, beta, gamma, delta = [], [], [], []
    with ops.stage("ID derivatives: per joint"):
        for j in range(n):
            (a, b), c = axes[j], bodies[j]
            beta.append(c.inertia_times(a, b))
            Ta = matvec(c.T, a)
            alpha.append(_alpha(c, Ta, a, b))
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
            if "q" in directions and not _is_zero(par[j].stiffness):  # the spring k (q - q_ref)
                out["q"][j][j] = out["q"][j][j] + par[j].stiffness
    if base_body is None:
        return out
    with ops.stage("ID derivatives: the floating base's rows and columns"):
        return _base_pairs(out, root, base_body, alpha, beta, gamma, delta)


def _alpha(c: _Body, Ta: Vec, a: Vec, b: Vec) -> Vec:
    """alpha = T a + L x a + 2 g x b, for S = (a, b) and the composite c (module docstring; ``Ta`` = T a)."""
    gb = cross(c.g, b)
    return vadd(Ta, cross(c.L, a), gb, gb)


def _base_pairs(out: dict[str, list[list[Scalar]]], root: Root, total: _Body, alpha: Sequence[Vec],
                beta: Sequence[Motion6], gamma: Sequence[Motion6], delta: Sequence[Motion6]
                ) -> dict[str, list[list[Scalar]]]:
    """The jacobians ``out`` (n x n, the joints') bordered by a floating base's six rows and columns (first).

    The base is one six-column joint whose motion subspace, the identity, is fixed in the base; in the reference
    frame of the base at this instant its columns are the unit twists e_c (:data:`BASE_AXES`), nu = (w, v) its
    twist, and ``total`` the composite of the whole robot. Moving the base along e_c in the tangent (its pose times
    exp(eps e_c)) turns every body and every velocity, acceleration and force of the tree rigidly except the
    world's acceleration a0 = (0, -R^T g); so, for every row j (a joint, or a base row whose composite is the
    whole robot's), the rigid part cancelling as for a joint,

        dtau_j/dq_c  = -beta_j . (e_c x a0),
        dtau_j/dnu_c = s_c . alpha_j - beta_j . (e_c x nu)

    (the second from dv_i/dnu_c = e_c, da_i/dnu_c = e_c x (v_i - nu): the base's own acceleration is nu's
    derivative, Pinocchio's a, with no velocity term); a base row j against a joint's column k is the joints'
    descendant form, e_j . gamma_k and e_j . delta_k. Translations (c < 3) leave every q-derivative 0."""
    n = len(alpha)
    base_alpha = [_alpha(total, matvec(total.T, e[0]), *e) for e in BASE_AXES]
    base_beta = [total.inertia_times(*e) for e in BASE_AXES]
    rows_alpha, rows_beta = [*base_alpha, *alpha], [*base_beta, *beta]
    moved = {"q": [_motion_cross(e, root.a0) for e in BASE_AXES],
             "qd": [_motion_cross(e, root.velocity) for e in BASE_AXES]}
    columns = {"qd": gamma, "q": delta}
    bordered: dict[str, list[list[Scalar]]] = {}
    for d, jac in out.items():
        rows: list[list[Scalar]] = []
        for i in range(n + 6):
            row: list[Scalar] = []
            for c, e in enumerate(BASE_AXES):
                term = -_pair(rows_beta[i], moved[d][c])
                row.append(term + dot(e[0], rows_alpha[i]) if d == "qd" else term)
            if i < 6:
                row.extend(_pair(BASE_AXES[i], columns[d][k]) for k in range(n))
            else:
                row.extend(jac[i - 6])
            rows.append(row)
        bordered[d] = rows
    return bordered


def _forces(arm: ArmData, ops: ScalarOps, geo: Sequence[Joint], poses: Sequence[tuple[Mat, Vec]],
            axes: Sequence[Motion6], velocity: Sequence[Motion6], psi: Sequence[Motion6],
            bodies: Sequence[_Body], root: Root) -> tuple[list[Motion6], list[Motion6]]:
    """F_j, the force each subtree needs (the tip load on the last link), and chi_j = S_j x a_lambda(j) -
    psi_j x v_lambda(j), in the base frame (``bodies``: each link's own; the ``root``'s motion under the links
    on it)."""
    n = arm.n
    acceleration: list[Motion6] = []
    F: list[Motion6] = []
    chi: list[Motion6] = []
    for j, jt in enumerate(geo):
        lam = arm.parents[j]
        parent_a = acceleration[lam] if lam >= 0 else root.acceleration
        parent_v = velocity[lam] if lam >= 0 else root.velocity
        acceleration.append(tuple(vsub(vadd(parent_a[r], vscale(jt.qdd, axes[j][r])), vscale(jt.qd, psi[j][r]))
                                  for r in range(2)))  # type: ignore[arg-type]
        Sa, pv = _motion_cross(axes[j], parent_a), _motion_cross(psi[j], parent_v)
        chi.append((vsub(Sa[0], pv[0]), vsub(Sa[1], pv[1])))
        c = bodies[j]
        Ia, vh = c.inertia_times(*acceleration[j]), _force_cross(velocity[j], (c.L, c.g))
        F.append((vadd(Ia[0], vh[0]), vadd(Ia[1], vh[1])))
    if n == 0:
        return F, chi
    R, p = poses[n - 1]
    force = _combine(R, tuple(ops.number(x) for x in arm.tip_force))
    moment = vadd(_combine(R, tuple(ops.number(x) for x in arm.tip_moment)), cross(p, force))
    F[n - 1] = (vadd(F[n - 1][0], moment), vadd(F[n - 1][1], force))
    for j in reversed(range(n)):
        lam = arm.parents[j]
        if lam >= 0:
            F[lam] = (vadd(F[lam][0], F[j][0]), vadd(F[lam][1], F[j][1]))
    return F, chi


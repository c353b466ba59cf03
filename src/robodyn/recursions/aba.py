"""Forward dynamics by Featherstone's articulated-body algorithm (ABA), O(n), written once.

Featherstone, Rigid Body Dynamics Algorithms (2008), sec. 7.3 and its Table 7.1, with the book's names:
for each body i with parent lambda(i) (``parent[i]``; -1 is the fixed base)::

    pass 1, i = 1..n:   iX_lambda = XJ(i) XT(i)                    (Table 7.1, line 4; jcalc, Table 4.1)
                        v_i  = iX_lambda v_lambda + vJ              (line 5; v_0 = 0)
                        c_i  = cJ + v_i x vJ                        (line 6; cJ = 0: S_i is constant in frame i)
                        IA_i = I_i                                  (line 7)
                        pA_i = v_i x* I_i v_i - f_i^x               (line 8; f^x: the tip load on the last body)
    pass 2, i = n..1:   U_i = IA_i S_i,  D_i = S_i^T U_i            (lines 11-12; + the armature, below)
                        u_i = tau_i - S_i^T pA_i                    (line 13; - the damping b_i qd_i, below)
                        Ia = IA_i - U_i D_i^-1 U_i^T                (line 15)
                        pa = pA_i + Ia c_i + U_i D_i^-1 u_i         (line 16)
                        IA_lambda += lambdaX*_i Ia iX_lambda         (line 17)
                        pA_lambda += lambdaX*_i pa                   (line 18)
    pass 3, i = 1..n:   a'_i   = iX_lambda a_lambda + c_i           (line 22; a_0 = -a_g: gravity by
                                                                     accelerating the base, as Newton-Euler does)
                        qdd_i  = D_i^-1 (u_i - U_i^T a'_i)          (line 23)
                        a_i    = a'_i + S_i qdd_i                   (line 24)

(the "line" numbers count the rows of Table 7.1 as laid out here, not verified against the printed page;
the book's own equation numbers for sec. 7.3 were not at hand and are not quoted.)

Everything of body i is in its own frame of :mod:`robodyn.recursions.arm` (the modified-DH frame; a
standard-DH arm is converted first), so the joint axis is z_i and S_i = (z, 0) for a revolute joint,
(0, z) for a prismatic one. A spatial motion is (angular, linear at the frame origin), a spatial force
(moment about the origin, force), a spatial inertia the 3x3 blocks [[A, B], [B^T, C]] (a rigid body:
A = its inertia tensor about the origin, B = hat(m c), C = m 1). The transform iX_lambda is not formed as a
6x6 matrix: it is the product of the elementary moves of the joint's description R = F Rot(z, theta + q),
P = p + F z (d + q) (Trans(p), Rot(F), Trans(z, d), Rot(z, theta + q) for a revolute joint, or Rot(z, theta),
Trans(z, d + q) for a prismatic one), and motions, forces and inertias go through them one move at a time,
so that every zero and one of the geometry folds on the scalars that fold.

The joint terms act as in the inverse dynamics tau = M qdd + h + G + b qd + load: the armature adds to M_ii
only, so D_i = S_i^T U_i + armature_i; the viscous damping b_i qd_i and the spring k_i (q_i - q_ref,i) are
taken from tau_i in u_i. With a zero armature, Ia S_i = 0 exactly (the row and column of Ia along S_i vanish),
which is used; with an armature it does not hold and the whole of Ia is computed.

Written against the scalar interface of :mod:`robodyn.recursions.kane` (``number``, ``cos_sin``, ``stage``)
plus one division, ``reciprocal`` (1 / D_i, once per joint): see :class:`ArticulatedOps`. The literal 0 and 1
stand for the zeros and ones of the algorithm, as there.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import sympy

from robodyn.errors import DerivationError
from robodyn.model.spatial import rot_z_rows
from robodyn.recursions.arm import (
    ArmData,
    JointData,
    coulomb_scalars,
    inertials,
    joint_friction,
    joint_spring,
    literal_zero,
)
from robodyn.recursions.scalars import ScalarOps
from robodyn.recursions.vec3 import ZERO3, Mat, Scalar, Vec, cross, vadd, vscale

Z: Vec = (0, 0, 1)
Motion = tuple[Vec, Vec]  # (angular, linear at the origin)
Force = tuple[Vec, Vec]  # (moment about the origin, force)
Inertia = tuple[Mat, Mat, Mat]  # the blocks A, B, C of [[A, B], [B^T, C]]


class ArticulatedOps(ScalarOps, Protocol):
    """The scalar interface of :mod:`robodyn.recursions.scalars` and one division (ABA divides by D_i)."""

    def reciprocal(self, x: Scalar) -> Scalar:
        """1 / x."""


# -- small folding helpers (the literal 0 and 1 vanish on every scalar type) ----------------------------
def _mul(x: Scalar, y: Scalar) -> Scalar:
    if type(x) is int:
        if x == 0:
            return 0
        if x == 1:
            return y
    if type(y) is int:
        if y == 0:
            return 0
        if y == 1:
            return x
    return x * y


def _add(x: Scalar, y: Scalar) -> Scalar:
    if type(x) is int and x == 0:
        return y
    if type(y) is int and y == 0:
        return x
    return x + y


def _dot(xs: Sequence[Scalar], ys: Sequence[Scalar]) -> Scalar:
    total: Scalar = 0
    for x, y in zip(xs, ys, strict=True):
        total = _add(total, _mul(x, y))
    return total


def _rot(R: Mat, v: Vec) -> Vec:
    """R v."""
    return (_dot(R[0], v), _dot(R[1], v), _dot(R[2], v))


def _rot_t(R: Mat, v: Vec) -> Vec:
    """R^T v."""
    return tuple(_dot((R[0][c], R[1][c], R[2][c]), v) for c in range(3))


def _hat(p: Vec) -> Mat:
    """hat(p) x = p x x."""
    return ((0, -p[2], p[1]), (p[2], 0, -p[0]), (-p[1], p[0], 0))


def _matmul(X: Mat, Y: Mat) -> Mat:
    return tuple(tuple(_dot(X[r], (Y[0][c], Y[1][c], Y[2][c])) for c in range(3)) for r in range(3))  # type: ignore[return-value]


def _symmetric(entry: object) -> Mat:
    """A symmetric 3x3 from ``entry(a, b)``, computed for a <= b only."""
    upper = {(a, b): entry(a, b) for a in range(3) for b in range(a, 3)}  # type: ignore[operator]
    return tuple(tuple(upper[min(a, b), max(a, b)] for b in range(3)) for a in range(3))  # type: ignore[return-value]


def _transpose(X: Mat) -> Mat:
    return tuple(tuple(X[c][r] for c in range(3)) for r in range(3))  # type: ignore[return-value]


# -- the joint transform: elementary moves ----------------------------------------------------------------
@dataclass(frozen=True)
class Rot:
    """A rotation of the frame: the new axes in the old, x_old = R x_new."""

    R: Mat


@dataclass(frozen=True)
class Trans:
    """A translation of the frame: the new origin in the old frame."""

    p: Vec


Move = Rot | Trans


def _rot_z(c: Scalar, s: Scalar) -> Mat:
    a, b, e = rot_z_rows(c, s)
    return (a[0], a[1], a[2]), (b[0], b[1], b[2]), (e[0], e[1], e[2])


def _zero(x: sympy.Expr) -> bool:
    return sympy.sympify(x) == 0


@dataclass(frozen=True)
class Joint:
    """Link i's joint: ``moves`` from the parent frame to frame i (XT(i) then XJ(i), Table 7.1 line 4),
    ``revolute`` (S_i = (z, 0)) or prismatic (S_i = (0, z))."""

    revolute: bool
    moves: tuple[Move, ...]


@functools.lru_cache(maxsize=1024)
def _fixed_moves(joint: JointData) -> tuple[tuple[str, tuple], ...]:
    """XT(i), the joint's moves that do not depend on q, as model numbers (exact 0 and 1 as the literals the
    folding helpers drop), decided once per joint: Trans(p) Rot(F) = Rot(F) Trans(F^T p), with whichever
    translation has fewer nonzero entries (Rot(x, alpha) Trans(x, a) for a plain modified-DH row; a placement
    may do better the other way round), then Trans(z, d) (revolute) or Rot(z, theta) (prismatic); moves that
    are exactly the identity are left out."""
    F = sympy.Matrix(joint.F)
    p, p_turned = sympy.Matrix(joint.p), F.T * sympy.Matrix(joint.p)
    turn = [("R", _literals(F.tolist()))] if sympy.eye(3) != F else []
    if sum(not _zero(x) for x in p_turned) <= sum(not _zero(x) for x in p):
        moves = [*turn, *_translation(p_turned)]
    else:
        moves = [*_translation(p), *turn]
    if joint.revolute and not _zero(joint.d):
        moves.append(("T", (0, 0, _literal(joint.d))))
    if not joint.revolute and not _zero(joint.theta):
        moves.append(("Rz", ()))  # Rot(z, theta), of the joint's theta
    return tuple(moves)


def _translation(p: sympy.Matrix) -> list[tuple[str, tuple]]:
    return [("T", tuple(_literal(x) for x in p))] if any(not _zero(x) for x in p) else []


def _literal(x: sympy.Expr) -> sympy.Expr | int:
    value = sympy.sympify(x)
    return 0 if value == 0 else 1 if value == 1 else value


def _literals(rows: list[list[sympy.Expr]]) -> tuple[tuple[sympy.Expr | int, ...], ...]:
    return tuple(tuple(_literal(x) for x in row) for row in rows)


def _scalar(x: sympy.Expr | int, ops: ScalarOps) -> Scalar:
    return x if type(x) is int else ops.number(x)


def jcalc(joint: JointData, ops: ScalarOps, q: Scalar) -> Joint:
    """The moves of joint i (Featherstone's XT(i), then jcalc's XJ(i)) from the arm's one description
    (:mod:`robodyn.recursions.arm`: R = F Rot(z, theta + q), P = p + F z (d + q)), parent frame -> frame i:
    the fixed moves of :func:`_fixed_moves`, then XJ = Rot(z, theta + q) for a revolute joint or
    Trans(z, d + q) for a prismatic one (Rot(z) and Trans(z) commute)."""
    moves: list[Move] = []
    for kind, values in _fixed_moves(joint):
        if kind == "T":
            moves.append(Trans(tuple(_scalar(x, ops) for x in values)))
        elif kind == "R":
            moves.append(Rot(tuple(tuple(_scalar(x, ops) for x in row) for row in values)))  # type: ignore[arg-type]
        else:
            moves.append(Rot(_rot_z(*ops.cos_sin(joint.theta, None))))
    if joint.revolute:
        moves.append(Rot(_rot_z(*ops.cos_sin(joint.theta, q))))  # XJ: Rot(z, theta + q)
    else:
        moves.append(Trans((0, 0, q if _zero(joint.d) else ops.number(joint.d) + q)))  # XJ: Trans(z, d + q)
    return Joint(joint.revolute, tuple(moves))


def motion_to_child(joint: Joint, m: Motion) -> Motion:
    """iX_lambda m: a motion vector of the parent frame in frame i."""
    w, v = m
    for move in joint.moves:
        if isinstance(move, Trans):  # the velocity of the new origin: v + w x p
            v = vadd(v, cross(w, move.p))
        else:
            w, v = _rot_t(move.R, w), _rot_t(move.R, v)
    return w, v


def force_to_parent(joint: Joint, f: Force) -> Force:
    """lambdaX*_i f: a force of frame i in the parent frame."""
    n, force = f
    for move in reversed(joint.moves):
        if isinstance(move, Trans):  # the moment about the old origin: n + p x f
            n = vadd(n, cross(move.p, force))
        else:
            n, force = _rot(move.R, n), _rot(move.R, force)
    return n, force


def inertia_to_parent(joint: Joint, inertia: Inertia) -> Inertia:
    """lambdaX*_i I iX_lambda: a spatial inertia of frame i in the parent frame. A rotation turns each block
    (R A R^T, ...); a translation by p, with X = hat(p), gives B' = B + X C, C' = C and
    A' = A - B X + X B^T - X C X = A - B' X - (B X)^T (symmetric: only its upper triangle is computed)."""
    A, B, C = inertia
    for move in reversed(joint.moves):
        if isinstance(move, Trans):
            X = _hat(move.p)
            BX = _matmul(B, X)
            B2 = tuple(tuple(_add(B[r][c], _dot(X[r], (C[0][c], C[1][c], C[2][c]))) for c in range(3))
                       for r in range(3))
            A = _symmetric(lambda a, b, A=A, B2=B2, BX=BX, X=X: _add(
                A[a][b], -_add(_dot(B2[a], (X[0][b], X[1][b], X[2][b])), BX[b][a])))
            B = B2  # type: ignore[assignment]
        else:
            R = move.R
            A, C = _turn_symmetric(R, A), _turn_symmetric(R, C)
            B = _matmul(R, _matmul(B, _transpose(R)))
    return A, B, C


def _turn_symmetric(R: Mat, S: Mat) -> Mat:
    """R S R^T for a symmetric S (upper triangle computed)."""
    T = _matmul(S, _transpose(R))
    return _symmetric(lambda a, b: _dot(R[a], (T[0][b], T[1][b], T[2][b])))


# -- spatial algebra in one frame --------------------------------------------------------------------
def cross_motion(m: Motion, other: Motion) -> Motion:
    """m x other = (w x w', w x v' + v x w')."""
    (w, v), (w2, v2) = m, other
    return cross(w, w2), vadd(cross(w, v2), cross(v, w2))


def inertia_times(inertia: Inertia, m: Motion) -> Force:
    """I m = (A w + B v, B^T w + C v)."""
    A, B, C = inertia
    w, v = m
    return vadd(_rot(A, w), _rot(B, v)), vadd(_rot_t(B, w), _rot(C, v))


def rigid_inertia(J: Mat, MS: Vec, M: Scalar) -> Inertia:
    """A rigid body at the frame origin: A = J (about the origin), B = hat(m c), C = m 1."""
    return J, _hat(MS), ((M, 0, 0), (0, M, 0), (0, 0, M))


def rigid_bias(J: Mat, MS: Vec, M: Scalar, v: Motion) -> Force:
    """v x* I v for a rigid body (Table 7.1, line 8), in 3-vectors: with w x v written a,
    (w x J w + MS x a, M a + w x (w x MS)) (v x M v = 0; the Jacobi identity gathers the rest)."""
    w, lin = v
    a = cross(w, lin)
    return vadd(cross(w, _rot(J, w)), cross(MS, a)), vadd(vscale(M, a), cross(w, cross(w, MS)))


def _add_inertia(X: Inertia, Y: Inertia) -> Inertia:
    return tuple(tuple(tuple(_add(x, y) for x, y in zip(rx, ry, strict=True)) for rx, ry in zip(bx, by, strict=True))
                 for bx, by in zip(X, Y, strict=True))  # type: ignore[return-value]


def _add_force(f: Force, g: Force) -> Force:
    return vadd(f[0], g[0]), vadd(f[1], g[1])


def _six(m: tuple[Vec, Vec]) -> tuple[Scalar, ...]:
    return (*m[0], *m[1])


def _pair(x: Sequence[Scalar]) -> tuple[Vec, Vec]:
    return (x[0], x[1], x[2]), (x[3], x[4], x[5])


def _entry(inertia: Inertia, a: int, b: int) -> Scalar:
    """Entry (a, b) of the 6x6 matrix [[A, B], [B^T, C]]."""
    A, B, C = inertia
    if a < 3:
        return A[a][b] if b < 3 else B[a][b - 3]
    return B[b][a - 3] if b < 3 else C[a - 3][b - 3]


def _from_entries(entry: object) -> Inertia:
    """The blocks of a symmetric 6x6 matrix from ``entry(a, b)``, a <= b."""
    e = entry
    A = _symmetric(lambda a, b: e(a, b))  # type: ignore[operator]
    B = tuple(tuple(e(a, b + 3) for b in range(3)) for a in range(3))  # type: ignore[operator]
    C = _symmetric(lambda a, b: e(a + 3, b + 3))  # type: ignore[operator]
    return A, B, C  # type: ignore[return-value]


def _articulated(IA: Inertia, U: Sequence[Scalar], Ud: Sequence[Scalar], axis: int | None) -> Inertia:
    """Ia = IA - U D^-1 U^T (Table 7.1, line 15); ``axis``: that of S when there is no armature, whose row and
    column of Ia are then exactly zero (Ia S = U - U D^-1 S^T U = 0)."""
    def entry(a: int, b: int) -> Scalar:
        if axis in (a, b):
            return 0
        return _add(_entry(IA, a, b), -_mul(U[a], Ud[b]))

    return _from_entries(entry)




def serial_parents(n: int) -> tuple[int, ...]:
    """parent[i] = i - 1: a serial chain (-1 is the fixed base)."""
    return tuple(range(-1, n - 1))


# -- the algorithm ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class FloatingRoot:
    """A floating base under the tree (Featherstone sec. 9.4, the floating-base ABA: the base a body whose joint has
    six degrees of freedom and S = 1): its parameters about its origin (J, MS, M, scalars), its twist ``velocity``
    (angular, linear at its origin, in its frame), the wrench ``force`` applied to it (moment, force: the base's rows
    of tau) and the world's gravity in its frame (R^T g)."""

    J: Mat
    MS: Vec
    M: Scalar
    velocity: Motion
    force: Force
    gravity: Vec


def joint_accelerations(
    arm: ArmData,
    q: Sequence[Scalar],
    qd: Sequence[Scalar],
    tau: Sequence[Scalar],
    ops: ArticulatedOps,
) -> list[Scalar]:
    """qdd = M^-1 (tau - bias) by the articulated-body algorithm (module docstring) on any scalar type.

    ``arm``: the arm as the recursions read it (:func:`robodyn.recursions.arm.arm_data`: either DH convention,
    in the modified-DH frames of the algorithm); gravity, the tip load (on the last body), damping, armature
    and the payload are the arm's, and so is the parent array (parent[i] < i, -1 the base).
    """
    return _articulated_body(arm, q, qd, tau, ops, None)


def floating_accelerations(arm: ArmData, q: Sequence[Scalar], qd: Sequence[Scalar], tau: Sequence[Scalar],
                           ops: ArticulatedOps, root: FloatingRoot) -> list[Scalar]:
    """The floating base's acceleration (linear, angular: the derivative of its body-frame twist, Pinocchio's) and
    the joints' qdd, 6 + n entries, by the articulated-body algorithm with the base at the root.

    The tree's bodies hang on the base (parent -1), whose articulated inertia IA_0 and bias pA_0 gather theirs in
    pass 2 as a parent's do; then, as line 23 for a joint whose S is the identity and whose parent (the world, at
    rest, accelerating by -a_g as in the fixed base's pass 3) gives a'_0 = (0, -R^T g), the base's acceleration
    with gravity taken out is ahat_0 = IA_0^-1 (f_0 - pA_0) (a 6 x 6 L D L^T solve), pass 3 runs from it, and the
    base's own is ahat_0 + (0, R^T g). ``arm``'s gravity is not read (the root's is)."""
    return _articulated_body(arm, q, qd, tau, ops, root)


def _articulated_body(arm: ArmData, q: Sequence[Scalar], qd: Sequence[Scalar], tau: Sequence[Scalar],
                      ops: ArticulatedOps, root: FloatingRoot | None) -> list[Scalar]:
    n, parent = arm.n, arm.parents
    if len(parent) != n or any(not -1 <= p < i for i, p in enumerate(parent)):
        raise DerivationError(f"parent must list, for each of the {n} bodies, an earlier body or -1 (the base)")

    with ops.stage("pass 1"):
        v: list[Motion] = []
        joints, c, IA, pA = [], [], [], []
        for i, (data, body) in enumerate(zip(arm.joints, inertials(arm, ops), strict=True)):
            joint = jcalc(data, ops, q[i])  # line 4
            joints.append(joint)
            vJ: Motion = ((0, 0, qd[i]), ZERO3) if joint.revolute else (ZERO3, (0, 0, qd[i]))
            above = v[parent[i]] if parent[i] >= 0 else None if root is None else root.velocity
            v_i = vJ if above is None else _add_motion(motion_to_child(joint, above), vJ)  # line 5
            v.append(v_i)
            c.append(cross_motion(v_i, vJ))  # line 6
            IA.append(rigid_inertia(body.J, body.MS, body.M))  # line 7
            pA.append(rigid_bias(body.J, body.MS, body.M, v_i))  # line 8
        if n:
            tip: Force = (tuple(ops.number(x) for x in arm.tip_moment), tuple(ops.number(x) for x in arm.tip_force))
            pA[n - 1] = _add_force(pA[n - 1], tip)  # - f^x: the tip load is the force the last body exerts
        if root is not None:  # the base, a body of its own (lines 7-8), the last of these lists
            IA.append(rigid_inertia(root.J, root.MS, root.M))
            pA.append(rigid_bias(root.J, root.MS, root.M, root.velocity))

    with ops.stage("pass 2"):
        U: list[tuple[Scalar, ...]] = [()] * n
        D: list[Scalar] = [0] * n
        D_inv: list[Scalar] = [0] * n
        u: list[Scalar] = [0] * n
        for i in reversed(range(n)):
            body, joint = arm.inertials[i], joints[i]
            axis = 2 if joint.revolute else 5  # S_i = e_axis of the 6-vector
            U[i] = tuple(_entry(IA[i], a, axis) for a in range(6))  # line 11: IA_i S_i
            armature_free = _zero(body.armature)
            D[i] = U[i][axis] if armature_free else U[i][axis] + ops.number(body.armature)  # line 12
            force = _six(pA[i])[axis]
            b = 0 if _zero(body.damping) else ops.number(body.damping)
            friction = joint_friction(ops, b, coulomb_scalars(ops, body.coulomb), qd[i])
            if not _zero(body.stiffness):
                springref = 0 if _zero(body.springref) else ops.number(body.springref)
                friction = friction + joint_spring(ops.number(body.stiffness), springref, q[i])
            u[i] = tau[i] - force if literal_zero(friction) else tau[i] - friction - force  # line 13
            D_inv[i] = ops.reciprocal(D[i])
            lam = parent[i] if parent[i] >= 0 or root is None else n  # (n: the floating base)
            if lam < 0:
                continue
            Ud = tuple(_mul(x, D_inv[i]) for x in U[i])  # U_i D_i^-1
            Ia = _articulated(IA[i], U[i], Ud, axis if armature_free else None)  # line 15
            pa = _add_force(_add_force(pA[i], inertia_times(Ia, c[i])), _pair(tuple(_mul(x, u[i]) for x in Ud)))  # 16
            IA[lam] = _add_inertia(IA[lam], inertia_to_parent(joints[i], Ia))  # line 17
            pA[lam] = _add_force(pA[lam], force_to_parent(joints[i], pa))  # line 18

    with ops.stage("pass 3"):
        a: list[Motion] = []
        a_base: Motion = (ZERO3, tuple(-ops.number(g) for g in arm.gravity))  # a_0 = -a_g  # type: ignore[assignment]
        if root is not None:  # ahat_0 = IA_0^-1 (f_0 - pA_0)
            f = _six(root.force)
            p0 = _six(pA[n])
            a_base = _pair(solve_symmetric(ops, [[_entry(IA[n], r, col) for col in range(6)] for r in range(6)],
                                           [_add(f[r], -p0[r]) for r in range(6)]))
        qdd: list[Scalar] = [0] * n
        for i, joint in enumerate(joints):
            a_prime = _add_motion(motion_to_child(joint, a_base if parent[i] < 0 else a[parent[i]]), c[i])  # 22
            axis = 2 if joint.revolute else 5
            qdd[i] = (u[i] - _dot(U[i], _six(a_prime))) * D_inv[i]  # line 23
            a_i = list(_six(a_prime))
            a_i[axis] = a_i[axis] + qdd[i]  # line 24: a'_i + S_i qdd_i
            a.append(_pair(a_i))
    if root is None:
        return qdd
    (w_dot, lin), g = a_base, root.gravity
    return [*(_add(x, y) for x, y in zip(lin, g, strict=True)), *w_dot, *qdd]


def solve_symmetric(ops: ArticulatedOps, A: Sequence[Sequence[Scalar]], b: Sequence[Scalar]) -> list[Scalar]:
    """x with A x = b, A symmetric positive definite (small: the floating base's 6 x 6), by L D L^T: D_j and the
    columns of L from the upper triangle, one reciprocal per pivot, then the two triangular solves."""
    n = len(b)
    L: list[list[Scalar]] = [[0] * n for _ in range(n)]
    D: list[Scalar] = [0] * n
    D_inv: list[Scalar] = [0] * n
    for j in range(n):
        LD = [_mul(L[j][k], D[k]) for k in range(j)]  # L_jk D_k
        D[j] = _add(A[j][j], -_dot(LD, L[j][:j]))
        D_inv[j] = ops.reciprocal(D[j])
        for i in range(j + 1, n):
            L[i][j] = _mul(_add(A[j][i], -_dot(LD, L[i][:j])), D_inv[j])
    y: list[Scalar] = []
    for i in range(n):
        y.append(_add(b[i], -_dot(L[i][:i], y)))
    x: list[Scalar] = [0] * n
    for i in reversed(range(n)):
        x[i] = _add(_mul(y[i], D_inv[i]), -_dot([L[k][i] for k in range(i + 1, n)], x[i + 1:]))
    return x


def _add_motion(m: Motion, other: Motion) -> Motion:
    return vadd(m[0], other[0]), vadd(m[1], other[1])

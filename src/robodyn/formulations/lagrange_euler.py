"""Lagrange-Euler with 4x4 matrices (Uicker, Kahn; Fu et al. eq. 3.2-1 to 3.2-34).

With the split transform A_j = B_j S_j C_j of :mod:`robodyn.model.dh`, Fu's eq. 3.2-11
U_ij = 0A_{j-1} Q_j {j-1}A_i becomes U_ij = W_j Q_j S_j C_j {j}A_i with W_j = 0A_{j-1} B_j,
i.e. U_ij = Delta_j 0A_i with the base-frame operator Delta_j = W_j Q_j W_j^-1. Then
eq. 3.2-13 reads U_ijk = Delta_min(j,k) Delta_max(j,k) 0A_i, and

    D_ik   = sum_{j >= max(i,k)}   Tr(U_jk J_j U_ji^T)                 (3.2-31)
    h_ikm  = sum_{j >= max(i,k,m)} Tr(U_jkm J_j U_ji^T)                (3.2-33)
    h_i    = sum_k sum_m h_ikm qd_k qd_m                               (3.2-32)
    c_i    = -sum_{j >= i} m_j g U_ji rbar_j                           (3.2-34)

with J_j the pseudo-inertia of eq. 3.2-18 built from the inertia about the centre of
mass (a payload adds its own pseudo-inertia to the last link's: J is additive).
The tip load enters by virtual work, tau_load = J^T (f, n).

Trees: 0A_i = 0A_{parents[i]} A_i, and link j moves with joint i only if i is one of its
ancestors (:meth:`Manipulator.ancestors`), so U_ji = 0 otherwise and the sums over j >= max(...)
above run only over the links j that descend from every joint of the term (for a chain, all of them).
"""

from __future__ import annotations

from collections.abc import Callable

import symengine as se
import sympy

from robodyn.algebra import SeExpr, canonical, count_terms, dot, to_se, vector
from robodyn.model.dh import chain_frames, inverse, rotation, translation
from robodyn.model.inertia import second_moment
from robodyn.model.manipulator import Manipulator, RigidBody

Q_REVOLUTE = se.DenseMatrix([[0, -1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])  # eq. 3.2-8a
Q_PRISMATIC = se.DenseMatrix([[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 0]])  # eq. 3.2-8b


def pseudo_inertia(body: RigidBody) -> sympy.Matrix:
    """Fu eq. 3.2-18: J = integral(r r^T dm) over the body in homogeneous link coordinates."""
    m = body.mass
    c = sympy.Matrix(body.com)
    J = sympy.zeros(4, 4)
    J[:3, :3] = second_moment(body.inertia) + m * c * c.T
    J[:3, 3] = m * c
    J[3, :3] = (m * c).T
    J[3, 3] = m
    return J


#: Largest product of the factors' entry sizes (in terms) for which a 4x4 product is expanded
#: (floating-point arms are never expanded: see LagrangeEuler).
EXPAND_LIMIT = 300


def trace_product(A: se.DenseMatrix, J: se.DenseMatrix, B: se.DenseMatrix) -> SeExpr:
    """Tr(A J B^T) = sum_rst A_rs J_st B_rt; rows 4 of U matrices are zero, so r < 3."""
    AJ = A[:3, :] * J
    return sum((AJ[r, t] * B[r, t] for r in range(3) for t in range(4) if B[r, t] != 0), se.Integer(0))


class LagrangeEuler:
    """The quantities of Fu section 3.2 for one arm, built once and shared by D, h and c.

    Simplify small and early, but only while it stays small: a 4x4 product
    is brought to canonical form (expanded, sin^2 -> 1 - cos^2) when both factors are in that
    form and their largest entries have at most :data:`EXPAND_LIMIT` terms between them;
    otherwise it is kept nested, and always for floating-point data (which never cancel exactly).
    Right-angled symbolic arms such as EMDEG's PUMA stay expanded throughout
    and their traces cancel early (its canonical tau in 1.5 s instead of 120 s); general twists
    and offsets make expanded blocks grow exponentially with n and switch to nested forms.
    """

    def __init__(self, robot: Manipulator, q: list[SeExpr]) -> None:
        self.robot = robot
        self.n = robot.n
        self.q = q
        self._terms: dict[int, int] = {}  # id of a canonical block -> its largest entry's terms
        # floating-point data never cancel exactly: expanding only swells them (kept nested)
        self.expand = not robot.has_floats
        frames = chain_frames(robot, q)
        parents = robot.parents
        #: moves[j]: the joints that move link j (j and its ancestors)
        self.moves = [frozenset(robot.ancestors(j)) for j in range(self.n)]
        self.T = [self.canonical(se.eye(4))]  # 0A_i, i = 0..n (eq. 3.2-4), 0A_i = 0A_{parents[i]} A_i
        for i, f in enumerate(frames):
            self.T.append(self.product(self.T[parents[i] + 1], self.canonical(f.A)))
        self.Delta = []  # Delta_j = W_j Q_j W_j^-1, W_j = 0A_{j-1} B_j
        self.axis = []  # joint axis in the base frame (revolute) for the tip load
        for j, f in enumerate(frames):
            W = self.product(self.T[parents[j] + 1], self.canonical(f.B))
            Qj = self.canonical(Q_REVOLUTE if f.revolute else Q_PRISMATIC)
            W_inv = self.canonical(inverse(W)) if id(W) in self._terms else inverse(W)
            self.Delta.append(self.product(self.product(W, Qj), W_inv))
            self.axis.append(rotation(W) * vector([0, 0, 1]) if f.revolute else None)
        self.J = []
        for j in range(self.n):
            J = sum((pseudo_inertia(b) for b in robot.bodies(j)), sympy.zeros(4, 4))
            self.J.append(se.DenseMatrix(J.tolist()))
        self._U: dict[tuple[int, int], se.DenseMatrix] = {}

    def canonical(self, matrix: se.DenseMatrix) -> se.DenseMatrix:
        out = matrix.applyfunc(lambda x: canonical(x, self.q))
        self._terms[id(out)] = max(count_terms(x) for x in out)
        return out

    def product(self, A: se.DenseMatrix, B: se.DenseMatrix) -> se.DenseMatrix:
        """A B, in canonical form while that stays small (see the class docstring)."""
        ta, tb = self._terms.get(id(A)), self._terms.get(id(B))
        if self.expand and ta is not None and tb is not None and ta * tb <= EXPAND_LIMIT:
            return self.canonical(A * B)
        return A * B

    def U(self, i: int, j: int) -> se.DenseMatrix:
        """U_ij = d(0A_i)/dq_j (eq. 3.2-11), 0-based link i and joint j that moves it."""
        key = (i, j)
        if key not in self._U:
            self._U[key] = self.product(self.Delta[j], self.T[i + 1])
        return self._U[key]

    def U2(self, i: int, j: int, k: int) -> se.DenseMatrix:
        """U_ijk = d(U_ij)/dq_k (eq. 3.2-13)."""
        a, b = min(j, k), max(j, k)
        return self.product(self.Delta[a], self.U(i, b))

    def descendants(self, *joints: int) -> list[int]:
        """The links j >= max(joints) that every one of ``joints`` moves (Fu's j >= max(i, k, m))."""
        return [j for j in range(max(joints), self.n) if self.moves[j].issuperset(joints)]

    def D(self) -> se.DenseMatrix:
        n = self.n
        D = se.zeros(n, n)
        for i in range(n):
            for k in range(i, n):
                D[i, k] = sum(
                    (trace_product(self.U(j, k), self.J[j], self.U(j, i)) for j in self.descendants(i, k)),
                    se.Integer(0),
                )  # eq. 3.2-31
                D[k, i] = D[i, k]
            D[i, i] += to_se(self.robot.links[i].armature)
        return D

    def h_coefficient(self, i: int, k: int, m: int) -> SeExpr:
        """h_ikm of eq. 3.2-33."""
        return sum(
            (trace_product(self.U2(j, k, m), self.J[j], self.U(j, i)) for j in self.descendants(i, k, m)),
            se.Integer(0),
        )

    def V(self, j: int, qd: list[SeExpr]) -> se.DenseMatrix:
        """V_j = sum_k sum_m U_jkm qd_k qd_m, the velocity-product part of d2(0A_j)/dt2."""
        V = se.zeros(4, 4)
        joints = sorted(self.moves[j])
        for a, k in enumerate(joints):
            for m in joints[a:]:
                weight = 1 if k == m else 2  # U_jkm = U_jmk
                V += self.U2(j, k, m) * (weight * qd[k] * qd[m])
        return V

    def h(self, qd: list[SeExpr]) -> se.DenseMatrix:
        """h_i = sum_k sum_m h_ikm qd_k qd_m (eq. 3.2-32 with 3.2-33), summed over the link j
        first: h_i = sum_{j >= i} Tr(V_j J_j U_ji^T). The same sum, n^2 traces instead of n^4."""
        n = self.n
        V = [self.V(j, qd) for j in range(n)]
        out = se.zeros(n, 1)
        for i in range(n):
            out[i, 0] = sum(
                (trace_product(V[j], self.J[j], self.U(i=j, j=i)) for j in self.descendants(i)), se.Integer(0)
            )
        return out

    def c(self) -> se.DenseMatrix:
        g_row = se.DenseMatrix([[to_se(x) for x in self.robot.gravity] + [0]])
        out = se.zeros(self.n, 1)
        for i in range(self.n):
            # m_j rbar_j (homogeneous) is the last column of J_j
            out[i, 0] = -sum(
                ((g_row * self.U(j, i) * self.J[j][:, 3])[0, 0] for j in self.descendants(i)), se.Integer(0)
            )  # eq. 3.2-34
        return out

    def load(self) -> se.DenseMatrix:
        """Virtual work of the tip wrench: tau_i = dp_n/dq_i . f_0 + axis_i . n_0."""
        R_n = rotation(self.T[-1])
        f0 = R_n * vector(self.robot.tip_force)
        n0 = R_n * vector(self.robot.tip_moment)
        out = se.zeros(self.n, 1)
        for i in sorted(self.moves[self.n - 1]):  # the joints that do not move the last link feel nothing
            value = dot(translation(self.U(self.n - 1, i)), f0)
            if self.axis[i] is not None:
                value += dot(self.axis[i], n0)
            out[i, 0] = value
        return out


def components(
    robot: Manipulator,
    q: list[SeExpr],
    qd: list[SeExpr],
    progress: Callable[[str], None] | None = None,
) -> dict[str, se.DenseMatrix]:
    """M (= Fu's D), h, G (= Fu's c) and the tip-load torques."""
    le = LagrangeEuler(robot, q)
    out = {"M": le.D()}
    if progress:
        progress("inertia matrix D (eq. 3.2-31)")
    out["h"] = le.h(qd)
    if progress:
        progress("Coriolis and centrifugal h (eq. 3.2-32, 3.2-33)")
    out["G"] = le.c()
    out["load"] = le.load()
    if progress:
        progress("gravity c (eq. 3.2-34)")
    return out

"""EMDEG's structure-exploiting method (Burdick 1986).

Modified DH frames (Craig; standard-DH arms are converted first). Burdick's quantities of the
links j..N, each in frame j (eq. 20, 19):
    M_j = sum_{k>=j} m_k                                          (composite mass)
    U_j = m_j r_j + M_{j+1} P_{j+1} + jR_{j+1} U_{j+1}            (first moment about O_j)
    I_jj = K_jj - {P_{j+1}, jU_{j+1}} + jR_{j+1} I_{j+1,j+1} j+1R_j
    K_jj = I*_j - m_j r^_j r^_j - M_{j+1} P^_{j+1} P^_{j+1}       ({a, b} = a^ b^ + b^ a^)

with I*_j the centroidal tensor and a^ the cross-product matrix of a. The inertia matrix (eq. 17,
18; i <= j, jz_i the axis of joint i and jL_ij the vector O_i -> O_j, both in frame j):
    R-R: M_ij = jz_i . [I_jj - jL^_ij U^_j] . z       P-R: M_ij = jz_i . (z x U_j)
    R-P: M_ij = jz_i . (U_j x z + M_j jL_ij x z)       P-P: M_ij = M_j jz_i . z

gravity g_i = -(ig) . (z x U_i) (R) or -M_i (ig) . z (P), from the potential energy (eq. 10, 16),
ig the gravity vector in frame i; and from the derivatives of M, the Christoffel structure rules
valid for every serial arm (eq. 26-29):
    dM_ij/dq_k = 0 for k <= min(i, j)                                       (26)
    c_ijj = dM_ij/dq_j (i < j), 0 (i = j), -1/2 dM_jj/dq_i (i > j)         (27)
    b_ijk (j < k) = -2 c_kii (i = j), 0 (i = k), -b_kji (i > k)             (28)
    b_ijk = dM_ij/dq_k + dM_ik/dq_j (i < j),  dM_ij/dq_k - dM_jk/dq_i (j < i < k)   (29)

so each distinct element is computed once and the others are kept as references
(:attr:`Elements.relations`). Successive parallel revolute joints p, p+1 give b_{i,p,k} =
b_{i,p+1,k} (eq. 34), found here, with every other exact relation between elements, by
comparing canonical forms. The configuration-independent constants (Burdick's K, g_ijk) and
the factoring into configuration-dependent products (his T, V, eta) are the factored route of
:mod:`robodyn.program.factor`; :func:`program` applies it to the distinct elements.

The tip load is not part of Burdick's M, c, b, g; :func:`components` takes its torques from one
Newton-Euler run with only the load.

Trees (``parents``, serial when None): the composite quantities of link j sum over its children instead
of link j+1 alone, M_ij is computed for i an ancestor of j (and is 0 for two joints of which neither is
the other's ancestor), O_i -> O_j and iR_j run along the path between them, and gravity is carried
outward from each parent. Eq. 26, from which eq. 27-29 follow, holds unchanged with links listed after
their parents: joints k <= min(i, j) are ancestors of both i and j (turning the whole subtree of M_ij
rigidly) or on other branches (moving none of its bodies).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import symengine as se

from robodyn.algebra import SeExpr, canonical, cross, dot, to_se, vector, zeros
from robodyn.model.dh import cos_sin_of_sum, modified
from robodyn.model.manipulator import Manipulator
from robodyn.recursions import newton_euler as recursion
from robodyn.recursions.arm import arm_data
from robodyn.recursions.scalars import SymengineOps

Z = vector([0, 0, 1])
Progress = Callable[[str], None]


def hat(a: se.DenseMatrix) -> se.DenseMatrix:
    """a^ with a^ b = a x b."""
    return se.DenseMatrix([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])


@dataclass(frozen=True)
class Link:
    """Link j in modified DH: R = j-1 R_j, P = P_j (O_j in frame j-1) and its bodies lumped
    about O_j: mass, first moment m r and the inertia about O_j."""

    revolute: bool
    R: se.DenseMatrix
    P: se.DenseMatrix
    mass: SeExpr
    first_moment: se.DenseMatrix
    inertia: se.DenseMatrix
    armature: SeExpr


def links(robot: Manipulator, q: list[SeExpr]) -> list[Link]:
    out = []
    for i, link in enumerate(robot.links):
        revolute = link.joint == "R"
        ca, sa = se.cos(to_se(link.alpha)), se.sin(to_se(link.alpha))
        ct, st = cos_sin_of_sum(to_se(link.theta), q[i] if revolute else None)
        d = to_se(link.d) + (0 if revolute else q[i])
        R = se.DenseMatrix([[ct, -st, 0], [ca * st, ca * ct, -sa], [sa * st, sa * ct, ca]])  # eq. 1
        P = vector([to_se(link.a), -sa * d, ca * d])
        if getattr(link, "has_placement", False):  # a fixed transform before the DH row (URDF)
            T = se.DenseMatrix(link.placement.tolist())
            R_P = T[:3, :3]
            R, P = R_P * R, vector([T[r, 3] for r in range(3)]) + R_P * P
        mass, first, inertia = se.Integer(0), zeros(3), zeros(3, 3)
        for body in robot.bodies(i):
            m, r = to_se(body.mass), vector(body.com)
            mass += m
            first += r * m
            inertia += se.DenseMatrix(body.inertia.tolist()) - hat(r) * hat(r) * m  # K_jj's own part
        out.append(Link(revolute, R, P, mass, first, inertia, to_se(link.armature)))
    return out


@dataclass
class Composite:
    """M_j, U_j and I_jj of links j..N, in frame j (eq. 19, 20)."""

    mass: list[SeExpr] = field(default_factory=list)
    U: list[se.DenseMatrix] = field(default_factory=list)
    I: list[se.DenseMatrix] = field(default_factory=list)  # noqa: E741 (Burdick's name)


Parents = Sequence[int] | None  # parents[j]: the link that link j hangs on; None: a serial chain


def _parents(chain: list[Link], parents: Parents) -> Sequence[int]:
    return tuple(range(-1, len(chain) - 1)) if parents is None else parents


def _ancestors(parents: Sequence[int], j: int) -> list[int]:
    """j and the links between it and the base, ascending (for a chain: 0..j)."""
    out = []
    while j >= 0:
        out.append(j)
        j = parents[j]
    return out[::-1]


def composite(chain: list[Link], parents: Parents = None) -> Composite:
    """Eq. 19-20 summed over the children of link j (for a chain: link j+1)."""
    n = len(chain)
    parents = _parents(chain, parents)
    out = Composite([se.Integer(0)] * n, [zeros(3)] * n, [zeros(3, 3)] * n)
    for j in reversed(range(n)):
        own = chain[j]
        mass, U, inertia = own.mass, own.first_moment, own.inertia
        for c in (c for c in range(j + 1, n) if parents[c] == j):
            child = chain[c]
            M1, P = out.mass[c], child.P
            jU = child.R * out.U[c]  # jU_{j+1}
            mass = mass + M1
            U = U + P * M1 + jU  # eq. 20
            K = inertia - hat(P) * hat(P) * M1  # K_jj (its own part, I*_j - m_j r^ r^, is in Link.inertia)
            inertia = K - (hat(P) * hat(jU) + hat(jU) * hat(P)) + child.R * out.I[c] * child.R.T  # eq. 19
        out.mass[j], out.U[j], out.I[j] = mass, U, inertia
    return out


def _relative(chain: list[Link], i: int, j: int, parents: Parents = None) -> tuple[se.DenseMatrix, se.DenseMatrix]:
    """iR_j and iL_ij (O_i -> O_j in frame i), i an ancestor of j (for a chain: i <= j)."""
    R, L = se.eye(3), zeros(3)
    for k in _ancestors(_parents(chain, parents), j):
        if k > i:
            L = L + R * chain[k].P
            R = R * chain[k].R
    return R, L


def inertia_matrix(chain: list[Link], comp: Composite, parents: Parents = None) -> se.DenseMatrix:
    """M by eq. 17-18 (upper triangle computed, lower mirrored), armature on the diagonal; M_ij = 0 where
    neither of joints i, j is an ancestor of the other."""
    n = len(chain)
    parents = _parents(chain, parents)
    M = zeros(n, n)
    for j in range(n):
        for i in _ancestors(parents, j):
            iRj, iLij = _relative(chain, i, j, parents)
            z_i, L = iRj.T * Z, iRj.T * iLij  # jz_i, jL_ij
            U, Mj = comp.U[j], comp.mass[j]
            if chain[i].revolute and chain[j].revolute:
                value = dot(z_i, comp.I[j] * Z - hat(L) * hat(U) * Z)
            elif chain[j].revolute:
                value = dot(z_i, cross(Z, U))
            elif chain[i].revolute:
                value = dot(z_i, cross(U, Z) + cross(L, Z) * Mj)
            else:
                value = Mj * dot(z_i, Z)
            M[i, j] = M[j, i] = value + (chain[j].armature if i == j else 0)
    return M


def gravity(chain: list[Link], comp: Composite, g0: se.DenseMatrix, parents: Parents = None) -> se.DenseMatrix:
    """g_i = dV/dq_i (eq. 10, 16) with the gravity vector carried into each frame (from its parent's)."""
    parents = _parents(chain, parents)
    out: list[SeExpr] = []
    frame_g: list[se.DenseMatrix] = []
    for i, link in enumerate(chain):
        g = link.R.T * (frame_g[parents[i]] if parents[i] >= 0 else g0)
        frame_g.append(g)
        out.append(-dot(g, cross(Z, comp.U[i])) if link.revolute else -comp.mass[i] * g[2])
    return se.DenseMatrix([[x] for x in out])


# -- the elements and their relations --------------------------------------------------------
@dataclass
class Elements:
    """Burdick's distinct elements (1-based names M12, c211, b123, g2) in canonical form, and
    the relations {name: (factor, other)} meaning element = factor * other (0: element = 0)."""

    values: dict[str, SeExpr]
    relations: dict[str, tuple[SeExpr, str | None]]
    n: int

    def element(self, name: str) -> SeExpr:
        if name in self.values:
            return self.values[name]
        factor, other = self.relations[name]
        return se.Integer(0) if other is None else factor * self.element(other)


def _name(kind: str, *ix: int) -> str:
    return kind + "".join(str(i + 1) for i in ix)


def elements(robot: Manipulator, q: list[SeExpr], progress: Progress | None = None, *,
             expand: bool = True) -> Elements:
    """All of M_ij (i <= j), c_ijj, b_ijk (j < k) and g_i by the rules of the module docstring, in
    canonical form (``expand=False``: as the unexpanded trees of eq. 17-21, for arms whose canonical forms
    would be too large; the relations between elements are then those of eq. 26-29 only)."""

    arm = modified(robot)
    n = arm.n
    chain = links(arm, q)
    comp = composite(chain, arm.parents)
    M = inertia_matrix(chain, comp, arm.parents)

    def finish(x: SeExpr) -> SeExpr:
        return canonical(x, q) if expand else x

    Mc: list[list[SeExpr]] = [[finish(M[i, j]) if i <= j else None for j in range(n)] for i in range(n)]
    for i in range(n):
        for j in range(i):
            Mc[i][j] = Mc[j][i]
    if progress:
        progress("inertia matrix (eq. 17-21)")
    G = gravity(chain, comp, vector([to_se(x) for x in arm.gravity]), arm.parents)

    def dM(i: int, j: int, k: int) -> SeExpr:
        return se.Integer(0) if k <= min(i, j) else finish(Mc[i][j].diff(q[k]))  # eq. 26

    values: dict[str, SeExpr] = {}
    relations: dict[str, tuple[SeExpr, str | None]] = {}
    for i in range(n):
        for j in range(i, n):
            values[_name("M", i, j)] = Mc[i][j]
    for i in range(n):
        for j in range(n):  # eq. 27
            name = _name("c", i, j, j)
            if i == j:
                relations[name] = (se.Integer(0), None)
            else:
                values[name] = dM(i, j, j) if i < j else finish(-dM(j, j, i) / 2)
    for i in range(n):
        for j in range(n):
            for k in range(j + 1, n):
                name = _name("b", i, j, k)
                if i == j:  # eq. 28
                    relations[name] = (se.Integer(-2), _name("c", k, i, i))
                elif i == k:
                    relations[name] = (se.Integer(0), None)
                elif i > k:
                    relations[name] = (se.Integer(-1), _name("b", k, j, i))
                elif i < j:  # eq. 29
                    values[name] = finish(dM(i, j, k) + dM(i, k, j))
                else:
                    values[name] = finish(dM(i, j, k) - dM(j, k, i))
    for i in range(n):
        values[_name("g", i)] = finish(G[i])
    if progress:
        progress("c, b and g by the structure rules (eq. 26-29)")
    elements = Elements(values, relations, n)
    return _with_relations(elements) if expand else elements


def _with_relations(el: Elements) -> Elements:
    """Zero elements and elements equal to +-1 or +-2 times an earlier one become relations
    (among them eq. 34's b_{i,p,k} = b_{i,p+1,k} and appendix II's c322 = -c233)."""
    kept: dict[str, SeExpr] = {}
    relations = dict(el.relations)
    by_value: dict[SeExpr, str] = {}
    for name, value in el.values.items():
        if value == 0:
            relations[name] = (se.Integer(0), None)
            continue
        match = None
        for factor in (1, -1, 2, -2, se.Rational(1, 2), se.Rational(-1, 2)):
            other = by_value.get(se.expand(value / factor))
            if other is not None:
                match = (se.Integer(factor) if isinstance(factor, int) else factor, other)
                break
        if match is None:
            kept[name] = value
            by_value[value] = name
        else:
            relations[name] = match
    return Elements(kept, relations, el.n)


def components(
    robot: Manipulator, q: list[SeExpr], qd: list[SeExpr], progress: Progress | None = None
) -> dict[str, se.DenseMatrix]:
    """M, h = c + b (eq. 13), G and the tip-load torques, for :func:`robodyn.derive`."""

    n = robot.n
    el = elements(robot, q, progress)
    M = se.DenseMatrix(n, n, [el.element(_name("M", min(i, j), max(i, j))) for i in range(n) for j in range(n)])
    h = []
    for i in range(n):
        total = se.Integer(0)
        for j in range(n):
            total += el.element(_name("c", i, j, j)) * qd[j] ** 2
            for k in range(j + 1, n):
                total += el.element(_name("b", i, j, k)) * qd[j] * qd[k]
        h.append(total)
    # what the robot's tip load demands: tau at rest without gravity, by the Newton-Euler recursion
    loaded = any(x != 0 for x in (*robot.tip_force, *robot.tip_moment))
    load = (recursion.inverse_dynamics(arm_data(robot), SymengineOps(), q, None, None, gravity=False,
                                       friction=False, group=False) if loaded else [0] * n)
    return {
        "M": M,
        "h": se.DenseMatrix([[x] for x in h]),
        "G": se.DenseMatrix([[el.element(_name("g", i))] for i in range(n)]),
        "load": se.DenseMatrix([[x] for x in load]),
    }

"""Spherical and planar joints in the one-coordinate recursions: three coincident pseudo-joints each.

A spherical joint (a link's ``joint`` S: Pinocchio's ``JointModelSpherical``, MuJoCo's ``ball``; nq 4, the unit
quaternion (x, y, z, w); nv 3, the angular velocity w_r in the child frame) turns the child frame about the joint's
origin: R = R_0 R(quat), R_0 the joint's frame at rest (its row's offsets). A planar joint (``joint`` planar:
Pinocchio's ``JointModelPlanar``; nq 4, (x, y, cos theta, sin theta); nv 3, (vx, vy, w_z) in the child frame)
moves it by Trans(x, y, 0) Rot(z, theta). The recursions of this package take one coordinate per joint; they run
such a joint as three pseudo-joints A, B, C at the child frame's origin whose axes (their frames' z) are the child
frame's x, y and z, as RBDL runs its emulated multi-dof joints:

    A: R_A = R_0 R_q T, P_A = P_0 + R_0 p_q    (T's columns: the child's y, z, x; so z_A = x)       no body
    B: R_B = T, P_B = 0 (z_B = the child's y)                                                       no body
    C: R_C = T, P_C = 0 (C is the child frame: the link's body and children hang on it)

with (R_q, p_q) the joint's motion (R(quat), 0; or Rot(z, theta), (x, y, 0)); all three revolute for a spherical
joint, A and B prismatic and C revolute for a planar one. Their rates are the joint's velocities (the velocity
columns of the tree are the pseudo-joints, one each). The velocities add up to the joint's, v_C = X v_lambda + S nu.
The accelerations do not: the joint's (its bias c is zero in the child frame, Pinocchio's) are
a_C = X a_lambda + S nu' + v_C x S nu, while the recursion's revolute step wd_j = R^T wd + qdd_j z + (R^T w) x qd_j z
and prismatic step vd_j = R^T (vd + U P) + 2 w x qd_j z + qdd_j z, taken through the chain, leave

    spherical: wd_C - wd = (w_y w_z, -w_x w_z, w_x w_y)      (e_x x e_y w_x w_y + e_x x e_z w_x w_z + e_y x e_z w_y w_z)
    planar:    vd_C - vd = (w_z v_y, -w_z v_x, 0)            (the chain's Coriolis term 2 w x v_r misses the turn
                                                              of the child frame: (2 w + w_z e_z) x v_r is the joint's)

in the child frame (wd, vd the joint's angular and classical linear accelerations). So the recursion is given the
pseudo-joints' accelerations :func:`rates`: nu' less those terms; everything else (the wrenches; M, whose columns
are the unit accelerations; L D L^T over the coordinates' tree, whose three columns of one joint are a chain) is the
recursions' own. The joint's damping and armature act on nu and nu' (:func:`joint_terms`, added to tau outside the
recursion, which sees the shifted accelerations; the pseudo-joints carry none); Coulomb friction on one is refused.

The regrouping of parameters (:func:`robodyn.recursions.composite.grouped`) stops at A (its motion depends on q) and
runs through B and C (fixed turns; each pseudo-joint's relative motion is a turn about, or a slide along, its z).
Derivatives with respect to the tangent (Pinocchio's: the pose times exp(eps e_c)) move the four coordinates as
:func:`tangent` says: the seeds of forward mode.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import sympy

from robodyn.errors import ModelError
from robodyn.recursions.arm import PSEUDO_COLUMNS, ArmData, Inertial, JointData, literal_zero
from robodyn.recursions.vec3 import Scalar

#: T: the fixed turn of B and C (and after R_q in A): its columns are the child's y, z and x.
TURN = tuple(tuple(sympy.Integer(1 if r == PSEUDO_COLUMNS[c] else 0) for c in range(3)) for r in range(3))
#: The pseudo-joints' kinds (revolute?) of each joint type.
REVOLUTE = {"S": (True, True, True), "planar": (False, False, True)}


@dataclasses.dataclass(frozen=True)
class Tree:
    """A tree whose spherical and planar joints are pseudo-joints: ``arm`` over the velocity columns (one
    pseudo-joint or joint each), ``links`` the columns of each of the robot's links (3 for a spherical or planar
    joint, its C last), ``kinds`` each link's joint type ("S", "planar", or "" for a revolute or prismatic joint),
    and ``friction`` the damping and armature (model numbers) of the links in ``multi``."""

    arm: ArmData
    links: tuple[tuple[int, ...], ...]
    kinds: tuple[str, ...]
    friction: tuple[tuple[Any, Any], ...]

    @property
    def multi(self) -> tuple[int, ...]:
        """The links with a spherical or planar joint."""
        return tuple(k for k, kind in enumerate(self.kinds) if kind)

    def column(self, k: int) -> int:
        """The column whose frame is link k's (a spherical or planar joint's C); -1 (the base) stays."""
        return self.links[k][-1] if k >= 0 else -1

    def q_columns(self, q: Sequence[Scalar]) -> list[Any]:
        """The pseudo-arm's q from the links' (1 each, 4 for a spherical or planar joint, in link order): such a
        joint's four coordinates (a tuple) for its A, 0 for its B and C."""
        out: list[Any] = []
        start = 0
        for kind in self.kinds:
            if kind:
                out += [tuple(q[start:start + 4]), 0, 0]
                start += 4
            else:
                out.append(q[start])
                start += 1
        return out


def coordinate_directions(tree: Tree, q: Sequence[Scalar]) -> list[list[tuple[int, Scalar]]]:
    """How each of the links' coordinates q (1 each, 4 for a spherical or planar joint) moves along the velocity
    columns: [(column, d q_i / d eps_column), ...] (literal zeros left out): a joint's own column by 1, a spherical or
    planar joint's four coordinates along its three columns by :func:`tangent`. The seeds of forward mode along q,
    and with the velocities qd the coordinates' time derivatives (:func:`coordinate_rates`)."""
    out: list[list[tuple[int, Scalar]]] = []
    start = 0
    for k, kind in enumerate(tree.kinds):
        columns = tree.links[k]
        if not kind:
            out.append([(columns[0], 1)])
            start += 1
            continue
        rates = tangent(kind, q[start:start + 4])
        out += [[(col, rates[c][i]) for c, col in enumerate(columns) if not literal_zero(rates[c][i])]
                for i in range(4)]
        start += 4
    return out


def coordinate_rates(tree: Tree, q: Sequence[Scalar], qd: Sequence[Scalar]) -> list[Scalar]:
    """dq/dt of the links' coordinates q at the velocities qd (one per column; :func:`coordinate_directions`)."""
    out: list[Scalar] = []
    for moves in coordinate_directions(tree, q):
        terms = [qd[col] if isinstance(rate, int) and rate == 1 else rate * qd[col] for col, rate in moves]
        out.append(sum(terms[1:], terms[0]))
    return out


def expand(arm: ArmData, kinds: Sequence[str]) -> Tree:
    """The :class:`Tree` of ``arm`` (the robot's links, each spherical or planar joint as the revolute joint of its
    frame at rest) whose links have joints of ``kinds`` ("S", "planar", "" for the others)."""
    joints: list[JointData] = []
    inertials: list[Inertial] = []
    parents: list[int] = []
    links: list[tuple[int, ...]] = []
    friction = []
    zero = sympy.Integer(0)
    nobody = Inertial(J=((zero,) * 3,) * 3, MS=(zero,) * 3, M=zero)
    for k, (data, body) in enumerate(zip(arm.joints, arm.inertials, strict=True)):
        parent = links[arm.parents[k]][-1] if arm.parents[k] >= 0 else -1
        kind = kinds[k]
        if not kind:
            links.append((len(joints),))
            joints.append(data)
            inertials.append(body)
            parents.append(parent)
            continue
        if any(x != 0 for x in body.coulomb):  # (robodyn.program.floating.check says so first, naming the link)
            raise ModelError(f"Coulomb friction on a {'spherical' if kind == 'S' else kind} joint is not handled",
                             link=k + 1, field="coulomb")
        F0 = sympy.Matrix(data.F) * sympy.rot_axis3(-data.theta)  # R_0 = F Rot(z, theta) (rot_axis3 is R^T)
        P0 = sympy.Matrix(data.p) + sympy.Matrix(data.F)[:, 2] * data.d
        revolute = REVOLUTE[kind]
        first = JointData(revolute[0], _simplified(F0), tuple(sympy.simplify(x) for x in P0), zero, zero, pseudo=0,
                          kind=kind)
        turns = [JointData(revolute[m], TURN, (zero,) * 3, zero, zero, pseudo=m, kind=kind) for m in (1, 2)]
        start = len(joints)
        links.append((start, start + 1, start + 2))
        joints += [first, *turns]
        inertials += [nobody, nobody, dataclasses.replace(body, damping=zero, armature=zero)]
        parents += [parent, start, start + 1]
        friction.append((body.damping, body.armature))
    return Tree(arm=dataclasses.replace(arm, joints=tuple(joints), inertials=tuple(inertials),
                                        parents=tuple(parents)),
                links=tuple(links), kinds=tuple(kinds), friction=tuple(friction))


def _simplified(F: sympy.Matrix) -> tuple[tuple[Any, Any, Any], ...]:
    return tuple(tuple(sympy.simplify(F[r, c]) for c in range(3)) for r in range(3))


def rates(tree: Tree, qd: Sequence[Scalar] | None, qdd: Sequence[Scalar] | None
          ) -> tuple[list[Scalar] | None, list[Scalar] | None]:
    """The pseudo-arm's rates from the tree's velocities and accelerations (None: zero): a spherical joint's
    accelerations less (w_y w_z, -w_x w_z, w_x w_y), a planar one's less (w_z v_y, -w_z v_x, 0) (module
    docstring)."""
    if qd is None or not tree.multi:
        return (None if qd is None else list(qd)), (None if qdd is None else list(qdd))
    out = [0] * len(qd) if qdd is None else list(qdd)
    for k in tree.multi:
        a, b, c = tree.links[k]
        x, y, z = qd[a], qd[b], qd[c]
        if tree.kinds[k] == "S":
            out[a], out[b], out[c] = out[a] - y * z, out[b] + x * z, out[c] - x * y
        else:
            out[a], out[b] = out[a] - z * y, out[b] + z * x
    return list(qd), out


def rate_slopes(kind: str, nu: Sequence[Scalar]) -> tuple[tuple[Scalar, Scalar, Scalar], ...]:
    """d qdd'_r / d nu_c of :func:`rates`' shifted accelerations over one joint's three columns (rows r, columns c)
    at its velocities nu = (x, y, z): a spherical joint's qdd' = qdd - (y z, -x z, x y), a planar one's
    qdd - (z y, -z x, 0) (the chain rule of the analytic derivatives along qd:
    :func:`robodyn.program.floating.analytic_id_jacobians`)."""
    x, y, z = nu
    return (0, -z, -y), (z, 0, x), ((-y, -x, 0) if kind == "S" else (0, 0, 0))


def joint_terms(tree: Tree, ops: Any, tau: Sequence[Scalar], qd: Sequence[Scalar] | None,
                qdd: Sequence[Scalar] | None) -> list[Scalar]:
    """tau plus the spherical and planar joints' damping b nu and armature I_a nu' (model numbers made scalars of
    ``ops``; each on the joint's three columns)."""
    out = list(tau)
    for k, (damping, armature) in zip(tree.multi, tree.friction, strict=True):
        for col in tree.links[k]:
            if qd is not None and damping != 0:
                out[col] = out[col] + ops.number(damping) * qd[col]
            if qdd is not None and armature != 0:
                out[col] = out[col] + ops.number(armature) * qdd[col]
    return out


def armature(tree: Tree, ops: Any, M: list[list[Scalar]], offset: int = 0) -> list[list[Scalar]]:
    """M with the spherical and planar joints' armature on its diagonal (``offset``: the columns before the
    tree's)."""
    for k, (_, value) in zip(tree.multi, tree.friction, strict=True):
        if value != 0:
            for col in tree.links[k]:
                M[offset + col][offset + col] = M[offset + col][offset + col] + ops.number(value)
    return M


def tangent(kind: str, q: Sequence[Scalar]) -> list[tuple[Scalar, Scalar, Scalar, Scalar]]:
    """d q / d eps_c of the joint's four coordinates q for the pose times exp(eps e_c), c over its three
    velocities. Spherical: (1/2) quat (x) (e_c, 0) in (x, y, z, w) order, the vector part w e_c + v x e_c and the
    scalar -v_c. Planar (x, y, cos, sin): vx and vy move (x, y) by Rot(z, theta) e_x and e_y, w_z turns (cos, sin) by
    (-sin, cos)."""
    if kind == "planar":
        _, _, c, s = q
        return [(c, s, 0, 0), (-s, c, 0, 0), (0, 0, -s, c)]
    x, y, z, w = (0.5 * c for c in q)
    return [(w, z, -y, -x), (-z, w, x, -y), (y, -x, w, -z)]


@functools.lru_cache(maxsize=16)
def tree_of(arm: ArmData, kinds: tuple[str, ...]) -> Tree:
    """:func:`expand`, once per arm."""
    return expand(arm, kinds)

"""Spherical joints in the one-coordinate recursions: three coincident revolute pseudo-joints.

A spherical joint (a link's ``joint`` S: Pinocchio's ``JointModelSpherical``, MuJoCo's ``ball``; nq 4, the unit
quaternion (x, y, z, w); nv 3, the angular velocity w_r in the child frame) turns the child frame about the joint's
origin: R = R_0 R(quat), R_0 the joint's frame at rest (its row's offsets). The recursions of this package take one
coordinate per joint; they run a spherical joint as three revolute pseudo-joints A, B, C at its origin whose axes
(their frames' z) are the child frame's x, y and z, as RBDL runs its emulated multi-dof joints:

    A: R_A = R_0 R(quat) T, P_A = P_0 (T's columns: the child's y, z, x; so z_A = x)  no body
    B: R_B = T, P_B = 0 (z_B = the child's y)                                            no body
    C: R_C = T, P_C = 0 (C is the child frame: the link's body and children hang on it)

their rates the components of w_r (the velocity columns of the tree are the pseudo-joints, one each). The
velocities add up to the joint's, v_C = v_lambda + S w_r. The accelerations do not: the recursion's revolute step
wd_j = R^T wd + qdd_j z + (R^T w) x qd_j z, taken three times, gives

    wd_C = R^T wd_lambda + qdd + (R^T w_lambda) x w_r + (w_y w_z, -w_x w_z, w_x w_y)       (in the child frame)

(the last term: the products e_x x e_y w_x w_y + e_x x e_z w_x w_z + e_y x e_z w_y w_z of a chain of turns), where
the spherical joint's (its bias c is zero in the child frame, as Pinocchio's) has no such term. So the recursion is
given the pseudo-joints' accelerations :func:`rates` qdd - (w_y w_z, -w_x w_z, w_x w_y); everything else (the
linear acceleration: the origin is common; the wrenches; M, whose columns are the unit accelerations, and L D L^T
over the coordinates' tree, whose three columns of one joint are a chain) is the recursions' own. The joint's
damping and armature act on w_r and its derivative (:func:`joint_terms`, added to tau outside the recursion, which
sees the shifted accelerations; the pseudo-joints carry none); Coulomb friction on a spherical joint is refused.

The regrouping of parameters (:func:`robodyn.recursions.composite.grouped`) stops at A (its turn depends on the
quaternion) and runs through B and C (fixed turns; each pseudo-joint's motion is a turn about its z). Derivatives
with respect to the tangent (Pinocchio's: the pose R exp(eps e_c)) move the quaternion by (1/2) quat (x) (e_c, 0)
(:func:`tangent`): the seeds of forward mode.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import sympy

from robodyn.errors import ModelError
from robodyn.recursions.arm import PSEUDO_COLUMNS, ArmData, Inertial, JointData
from robodyn.recursions.vec3 import Scalar

#: T: the fixed turn of B and C (and after R(quat) in A): its columns are the child's y, z and x.
TURN = tuple(tuple(sympy.Integer(1 if r == PSEUDO_COLUMNS[c] else 0) for c in range(3)) for r in range(3))


@dataclasses.dataclass(frozen=True)
class Tree:
    """A tree whose spherical joints are pseudo-joints: ``arm`` over the velocity columns (one pseudo-joint or joint
    each), ``links`` the columns of each of the robot's links (3 for a spherical joint, its C last), ``spherical``
    the links with a spherical joint, and their damping and armature (model numbers)."""

    arm: ArmData
    links: tuple[tuple[int, ...], ...]
    spherical: tuple[int, ...]
    friction: tuple[tuple[Any, Any], ...]

    def q_columns(self, q: Sequence[Scalar]) -> list[Any]:
        """The pseudo-arm's q from the links' (1 each, 4 for a spherical joint, in link order): a spherical joint's
        quaternion (a tuple) for its A, 0 for its B and C."""
        out: list[Any] = []
        start = 0
        for k in range(len(self.links)):
            if k in self.spherical:
                out += [tuple(q[start:start + 4]), 0, 0]
                start += 4
            else:
                out.append(q[start])
                start += 1
        return out


def expand(arm: ArmData, spherical: Sequence[int]) -> Tree:
    """The :class:`Tree` of ``arm`` (the robot's links, each spherical joint as the revolute joint of its frame at
    rest) whose links ``spherical`` have spherical joints."""
    joints: list[JointData] = []
    inertials: list[Inertial] = []
    parents: list[int] = []
    links: list[tuple[int, ...]] = []
    friction = []
    zero = sympy.Integer(0)
    nobody = Inertial(J=((zero,) * 3,) * 3, MS=(zero,) * 3, M=zero)
    for k, (data, body) in enumerate(zip(arm.joints, arm.inertials, strict=True)):
        parent = links[arm.parents[k]][-1] if arm.parents[k] >= 0 else -1
        if k not in spherical:
            links.append((len(joints),))
            joints.append(data)
            inertials.append(body)
            parents.append(parent)
            continue
        if any(x != 0 for x in body.coulomb):
            raise ModelError(f"link {k + 1}: Coulomb friction on a spherical joint is not handled", link=k + 1,
                             field="coulomb")
        F0 = sympy.Matrix(data.F) * sympy.rot_axis3(-data.theta)  # R_0 = F Rot(z, theta) (rot_axis3 is R^T)
        P0 = sympy.Matrix(data.p) + sympy.Matrix(data.F)[:, 2] * data.d
        first = JointData(True, _rows(F0), tuple(sympy.simplify(x) for x in P0), zero, zero, spherical=0)
        turn = [JointData(True, TURN, (zero,) * 3, zero, zero, spherical=m) for m in (1, 2)]
        start = len(joints)
        links.append((start, start + 1, start + 2))
        joints += [first, *turn]
        inertials += [nobody, nobody, dataclasses.replace(body, damping=zero, armature=zero)]
        parents += [parent, start, start + 1]
        friction.append((body.damping, body.armature))
    return Tree(arm=dataclasses.replace(arm, joints=tuple(joints), inertials=tuple(inertials),
                                        parents=tuple(parents)),
                links=tuple(links), spherical=tuple(spherical), friction=tuple(friction))


def _rows(F: sympy.Matrix) -> tuple[tuple[Any, Any, Any], ...]:
    return tuple(tuple(sympy.simplify(F[r, c]) for c in range(3)) for r in range(3))


def rates(tree: Tree, qd: Sequence[Scalar] | None, qdd: Sequence[Scalar] | None
          ) -> tuple[list[Scalar] | None, list[Scalar] | None]:
    """The pseudo-arm's rates from the tree's velocities and accelerations (None: zero): a spherical joint's
    accelerations less (w_y w_z, -w_x w_z, w_x w_y) (module docstring)."""
    if qd is None or not tree.spherical:
        return (None if qd is None else list(qd)), (None if qdd is None else list(qdd))
    out = [0] * len(qd) if qdd is None else list(qdd)
    for k in tree.spherical:
        a, b, c = tree.links[k]
        wx, wy, wz = qd[a], qd[b], qd[c]
        out[a], out[b], out[c] = out[a] - wy * wz, out[b] + wx * wz, out[c] - wx * wy
    return list(qd), out


def joint_terms(tree: Tree, ops: Any, tau: Sequence[Scalar], qd: Sequence[Scalar] | None,
                qdd: Sequence[Scalar] | None) -> list[Scalar]:
    """tau plus the spherical joints' damping b w_r and armature I_a dw_r (model numbers made scalars of ``ops``;
    each on the joint's three columns)."""
    out = list(tau)
    for k, (damping, armature) in zip(tree.spherical, tree.friction, strict=True):
        for col in tree.links[k]:
            if qd is not None and damping != 0:
                out[col] = out[col] + ops.number(damping) * qd[col]
            if qdd is not None and armature != 0:
                out[col] = out[col] + ops.number(armature) * qdd[col]
    return out


def armature(tree: Tree, ops: Any, M: list[list[Scalar]], offset: int = 0) -> list[list[Scalar]]:
    """M with the spherical joints' armature on its diagonal (``offset``: the columns before the tree's)."""
    for k, (_, value) in zip(tree.spherical, tree.friction, strict=True):
        if value != 0:
            for col in tree.links[k]:
                M[offset + col][offset + col] = M[offset + col][offset + col] + ops.number(value)
    return M


def tangent(quaternion: Sequence[Scalar]) -> list[tuple[Scalar, Scalar, Scalar, Scalar]]:
    """d quat / d eps_c for the pose R exp(eps e_c), c = x, y, z: (1/2) quat (x) (e_c, 0) in (x, y, z, w) order,
    the vector part w e_c + v x e_c and the scalar -v_c."""
    x, y, z, w = (0.5 * c for c in quaternion)
    return [(w, z, -y, -x), (-z, w, x, -y), (y, -x, w, -z)]


@functools.lru_cache(maxsize=16)
def tree_of(arm: ArmData, spherical: tuple[int, ...]) -> Tree:
    """:func:`expand`, once per arm."""
    return expand(arm, spherical)

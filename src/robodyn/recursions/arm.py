"""What the recursions read of an arm: each joint's geometry in its parent's frame, and each link's inertia.

Link j's frame seen from the frame of its parent lambda(j) (``parents[j]``; j - 1 on a chain, -1 the base) is

    R_j = F_j Rot(z, theta_j),   P_j = p_j + F_j z d_j                   (Khalil and Kleinfinger, modified DH)

with theta_j = theta offset + q_j for a revolute joint and d_j = d offset + q_j for a prismatic one. In modified
DH, F_j = Rot(x, alpha_{j-1}) and p_j = (a_{j-1}, 0, 0), so P_j = (a, -s_alpha d, c_alpha d); a link with a
fixed ``placement`` (R_P, p_P) before it has F_j = R_P Rot(x, alpha) and p_j = p_P + R_P (a, 0, 0). The
numeric engine's joint frames (:mod:`robodyn.numeric.model`) are the same description with F = E, p = p.

Each link carries Khalil's standard inertial parameters about its own frame origin (J_j, MS_j = m_j r_j, M_j),
payload included, which keeps the mass-centre offsets out of the run-time recursions.

:class:`ArmData` holds model numbers (sympy expressions, or floats); :func:`joints` and :func:`inertials` turn
them into the scalars of an ``ops`` (:mod:`robodyn.recursions.scalars`) at one state.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from robodyn.errors import ModelWarning
from robodyn.model.dh import modified
from robodyn.model.manipulator import Manipulator
from robodyn.model.spatial import x_screw
from robodyn.recursions.bodies import body_parameters
from robodyn.recursions.scalars import ScalarOps
from robodyn.recursions.vec3 import Mat, Scalar, Vec, matvec, vadd


@dataclass(frozen=True)
class JointData:
    """Joint j's geometry as model numbers: R = F Rot(z, theta + q), P = p + F z (d + q) (module docstring)."""

    revolute: bool
    F: tuple[tuple[Any, Any, Any], ...]
    p: tuple[Any, Any, Any]
    theta: Any
    d: Any
    #: A spherical or planar joint's pseudo-joint (:mod:`robodyn.recursions.pseudo_joints`): 0 for the first, whose q
    #: is the joint's four coordinates and whose R is F times their turn times a fixed turn, 1 and 2 for the others
    #: (R = F, no angle); None for a revolute or prismatic joint. ``kind``: the joint's, "S" or "planar".
    pseudo: int | None = None
    kind: str = ""


@dataclass(frozen=True)
class Inertial:
    """Khalil's standard parameters of one link about its frame origin: J (3x3), MS, M, and the joint's
    viscous damping, armature, Coulomb friction as (odd, even) parts (``Link.coulomb_parts``) and spring (stiffness
    k and springref q_ref: :func:`joint_spring`) (model numbers in :class:`ArmData`, scalars in the recursions, an
    absent Coulomb part the literal 0)."""

    J: Mat
    MS: Vec
    M: Any
    damping: Any = 0
    armature: Any = 0
    coulomb: tuple[Any, Any] = (0, 0)
    stiffness: Any = 0
    springref: Any = 0


@dataclass(frozen=True)
class ArmData:
    """An arm as the recursions read it: joints, inertials, parents, gravity (base frame) and the tip load
    (the force and moment the last link exerts on the environment, in its frame, about its origin)."""

    joints: tuple[JointData, ...]
    inertials: tuple[Inertial, ...]
    parents: tuple[int, ...]
    gravity: tuple[Any, Any, Any]
    tip_force: tuple[Any, Any, Any]
    tip_moment: tuple[Any, Any, Any]

    @property
    def n(self) -> int:
        return len(self.joints)

    def ancestors(self, j: int) -> list[int]:
        """j, its parent, ... down to the link on the base."""
        out = [j]
        while self.parents[out[-1]] >= 0:
            out.append(self.parents[out[-1]])
        return out


@dataclass(frozen=True)
class Joint:
    """Joint j at one state, as scalars: R = F Rot(z, theta) (cos, sin given), P, and the rates."""

    revolute: bool
    F: Mat
    c_theta: Scalar
    s_theta: Scalar
    P: Vec
    qd: Scalar
    qdd: Scalar

    def to_link(self, v: Vec) -> Vec:
        """R^T v: from the parent's frame into frame j."""
        u = tuple(self.F[0][r] * v[0] + self.F[1][r] * v[1] + self.F[2][r] * v[2] for r in range(3))  # F^T v
        return (self.c_theta * u[0] + self.s_theta * u[1], self.c_theta * u[1] - self.s_theta * u[0], u[2])

    def to_parent(self, v: Vec) -> Vec:
        """R v: from frame j into the parent's frame."""
        u = (self.c_theta * v[0] - self.s_theta * v[1], self.s_theta * v[0] + self.c_theta * v[1], v[2])
        return matvec(self.F, u)


# -- from a Manipulator -------------------------------------------------------------------------
@functools.lru_cache(maxsize=16)
def arm_data(robot: Manipulator) -> ArmData:
    """The arm in modified DH (converted first if need be) as the recursions read it; once per arm (the arm is
    immutable, and derive, build, the numeric engine and the regressor all read it). A floating robot is refused
    (:meth:`~robodyn.model.manipulator.Manipulator.check_fixed_base`)."""
    robot.check_fixed_base()
    arm = modified(robot)
    return ArmData(
        joints=joint_data(arm),
        inertials=tuple(_link_inertial(arm, j) for j in range(arm.n)),
        parents=tuple(arm.parents),
        gravity=tuple(arm.gravity),
        tip_force=tuple(arm.tip_force),
        tip_moment=tuple(arm.tip_moment),
    )


@functools.lru_cache(maxsize=16)
def fixed_tree(robot: Manipulator) -> Manipulator:
    """A floating robot's tree on a fixed base (its links, on the base frame), each spherical or planar joint as the
    revolute joint of its frame at rest (:mod:`robodyn.recursions.pseudo_joints` moves it)."""
    if not (robot.floating or robot.multi_dof):
        raise ValueError(f"{robot.name}: not a floating robot, and no spherical or planar joint")
    with warnings.catch_warnings():  # (the links were checked, and warned about, when the robot was built)
        warnings.simplefilter("ignore", ModelWarning)
        if robot.multi_dof:
            return robot.replace(floating=False, base=None,
                                 links=tuple(link.replace(joint="R") if link.multi_dof else link
                                             for link in robot.links))
        return robot.replace(floating=False, base=None)


@functools.lru_cache(maxsize=16)
def floating_arm_data(robot: Manipulator) -> tuple[ArmData, Inertial]:
    """A floating robot's tree as :func:`arm_data` reads the fixed one (the tree's base frame is the floating
    base's, its ``gravity`` the world's) and the base body's parameters about the base origin, in the base frame
    (J = I_c + m (c.c 1 - c c^T), MS = m c, M; zero without a ``base`` body)."""
    body = robot.base
    zeros = (sympy.Integer(0),) * 3
    tree = (arm_data(fixed_tree(robot)) if robot.n else  # (a body alone, a drone: no joint, nv = 6)
            ArmData(joints=(), inertials=(), parents=(), gravity=tuple(robot.gravity), tip_force=zeros,
                    tip_moment=zeros))
    if body is None:
        zero = sympy.Integer(0)
        return tree, Inertial(J=((zero,) * 3,) * 3, MS=(zero,) * 3, M=zero)
    m, c = body.mass, list(body.com)
    cc = sum(x * x for x in c)
    J = tuple(tuple(sympy.expand(body.inertia[a, b] + m * ((cc if a == b else 0) - c[a] * c[b])) for b in range(3))
              for a in range(3))
    return tree, Inertial(J=J, MS=tuple(sympy.expand(m * x) for x in c), M=m)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=16)
def joint_data(robot: Manipulator) -> tuple[JointData, ...]:
    """The joints alone (in modified DH, converted first if need be), for a recursion that keeps the model's
    own inertial data (:mod:`robodyn.recursions.kane`)."""
    return tuple(_joint_data(link) for link in modified(robot).links)


def _joint_data(link: Any) -> JointData:
    F, p = x_screw(link.a, link.alpha)  # Rot(x, alpha) Trans(x, a)
    if link.has_placement:
        T = link.placement
        F, p = T[:3, :3] * F, T[:3, 3] + T[:3, :3] * p
    return JointData(
        revolute=link.joint == "R",
        F=tuple(tuple(F[r, c] for c in range(3)) for r in range(3)),
        p=(p[0], p[1], p[2]),
        theta=link.theta,
        d=link.d,
    )


def _link_inertial(robot: Manipulator, j: int) -> Inertial:
    J, MS, M = body_parameters(robot, j)  # parallel axes, payload included
    link = robot.links[j]
    return Inertial(J=tuple(map(tuple, J)), MS=tuple(MS), M=M, damping=link.damping,  # type: ignore[arg-type]
                    armature=link.armature, coulomb=link.coulomb_parts, stiffness=link.stiffness,
                    springref=link.springref)


# -- as scalars of an ops -----------------------------------------------------------------------
def joint_at(data: JointData, ops: ScalarOps, c_theta: Scalar, s_theta: Scalar, d: Scalar,
             qd: Scalar = 0, qdd: Scalar = 0) -> Joint:
    """The Joint for given cos, sin of theta and d (scalars of ``ops``)."""
    F: Mat = tuple(tuple(ops.number(x) for x in row) for row in data.F)  # type: ignore[assignment]
    P: Vec = tuple(ops.number(data.p[r]) + F[r][2] * d for r in range(3))
    return Joint(data.revolute, F, c_theta, s_theta, P, qd, qdd)


def joint_of(data: JointData, ops: ScalarOps, q: Scalar, qd: Scalar = 0, qdd: Scalar = 0) -> Joint:
    """One joint at its coordinate q (an angle for a revolute joint, a length for a prismatic one; a spherical or
    planar joint's first pseudo-joint the joint's four coordinates, :func:`pseudo_joint`)."""
    if data.pseudo is not None:
        return pseudo_joint(data, ops, q, qd, qdd)
    if data.revolute:
        c, s = ops.cos_sin(data.theta, q)
        d = ops.number(data.d)
    else:
        c, s = ops.cos_sin(data.theta, None)
        d = ops.number(data.d) + q
    return joint_at(data, ops, c, s, d, qd, qdd)


def quaternion_matrix(quaternion: Sequence[Scalar]) -> Mat:
    """R = 1 + 2 P of a unit quaternion (x, y, z, w) (:func:`robodyn.model.joints.quaternion_matrix`), P's entries
    quadratic (no normalisation: the caller passes a unit quaternion), on any scalars: a spherical joint's turn
    (:func:`pseudo_joint`), a floating base's (:func:`robodyn.program.centroidal.quaternion_rotation`)."""
    x, y, z, w = quaternion
    P = ((-(y * y + z * z), x * y - z * w, x * z + y * w),
         (x * y + z * w, -(x * x + z * z), y * z - x * w),
         (x * z - y * w, y * z + x * w, -(x * x + y * y)))
    return tuple(tuple((1 if r == c else 0) + 2 * P[r][c] for c in range(3)) for r in range(3))  # type: ignore[return-value]


def pseudo_joint(data: JointData, ops: ScalarOps, q: Any, qd: Scalar, qdd: Scalar) -> Joint:
    """A spherical or planar joint's pseudo-joint (:mod:`robodyn.recursions.pseudo_joints`) at its state: the first (q
    the joint's four coordinates) R = F R_q T and P = p + F p_q, with F, p the joint's frame at rest, (R_q, p_q) the
    joint's motion (a spherical joint: R(quat), 0; a planar one: Rot(z, theta) from (cos, sin), (x, y, 0)) and T the
    fixed turn that puts the pseudo frame's z on the child frame's x; the others R = F (a fixed turn), P = 0. No
    angle: cos 1, sin 0."""
    F: Mat = tuple(tuple(ops.number(x) for x in row) for row in data.F)  # type: ignore[assignment]
    P: Vec = tuple(ops.number(x) for x in data.p)
    if data.pseudo == 0:
        if data.kind == "S":
            R, moved = quaternion_matrix(q), None
        else:
            x, y, c, s = q
            R, moved = ((c, -s, 0), (s, c, 0), (0, 0, 1)), (x, y, 0)
        FR = [[sum((F[r][k] * R[k][col] for k in range(3) if not (literal_zero(F[r][k]) or literal_zero(R[k][col]))),
                   0) for col in range(3)] for r in range(3)]
        if moved is not None:
            P = vadd(P, matvec(F, moved))
        F = tuple(tuple(FR[r][col] for col in PSEUDO_COLUMNS) for r in range(3))  # type: ignore[assignment]
    return Joint(data.revolute, F, 1, 0, P, qd, qdd)


#: The child frame's columns that make the first pseudo-joint's frame (x, y, z): its z is the child's x
#: (:mod:`robodyn.recursions.pseudo_joints`).
PSEUDO_COLUMNS = (1, 2, 0)


def joints(arm: ArmData, ops: ScalarOps, q: Sequence[Scalar], qd: Sequence[Scalar] | None = None,
           qdd: Sequence[Scalar] | None = None) -> list[Joint]:
    """Every joint at the state (q, qd, qdd) (scalars of ``ops``; None: zero rates)."""
    return [joint_of(data, ops, q[j], qd[j] if qd else 0, qdd[j] if qdd else 0) for j, data in enumerate(arm.joints)]


def fixed_joint(data: JointData, ops: ScalarOps) -> Joint:
    """The joint at q = 0 for a revolute joint of which only the symmetric part matters (theta = 0), at its
    constant rotation for a prismatic one: what :func:`robodyn.recursions.composite.grouped` carries through."""
    c, s = (1, 0) if data.revolute else ops.cos_sin(data.theta, None)
    return joint_at(data, ops, c, s, ops.number(data.d))


def inertials(arm: ArmData, ops: ScalarOps) -> list[Inertial]:
    """The links' parameters as scalars of ``ops``."""
    return [
        Inertial(
            J=tuple(tuple(ops.number(x) for x in row) for row in p.J),  # type: ignore[arg-type]
            MS=tuple(ops.number(x) for x in p.MS),
            M=ops.number(p.M),
            damping=ops.number(p.damping),
            armature=ops.number(p.armature),
            coulomb=coulomb_scalars(ops, p.coulomb),
            stiffness=0 if p.stiffness == 0 else ops.number(p.stiffness),
            springref=0 if p.springref == 0 else ops.number(p.springref),
        )
        for p in arm.inertials
    ]


def coulomb_scalars(ops: ScalarOps, parts: tuple[Any, Any]) -> tuple[Scalar, Scalar]:
    """The (odd, even) Coulomb parts (model numbers) as scalars of ``ops``, a zero part the literal 0."""
    return tuple(0 if x == 0 else ops.number(x) for x in parts)  # type: ignore[return-value]


def joint_spring(stiffness: Scalar, springref: Scalar, q: Scalar) -> Scalar:
    """The joint spring's torque (force) k (q - q_ref), k the ``stiffness`` and q_ref the ``springref`` (scalars;
    MuJoCo's passive force is minus this): the literal 0 where k is, so that a joint without a spring adds
    nothing."""
    if literal_zero(stiffness):
        return 0
    return stiffness * q if literal_zero(springref) else stiffness * (q - springref)


def link_spring(ops: ScalarOps, link: Any, q: Scalar) -> Scalar:
    """A :class:`~robodyn.model.manipulator.Link`'s spring at its coordinate q (:func:`joint_spring`, its model
    numbers made scalars of ``ops``)."""
    if link.stiffness == 0:
        return 0
    return joint_spring(ops.number(link.stiffness), 0 if link.springref == 0 else ops.number(link.springref), q)


def joint_friction(ops: ScalarOps, damping: Scalar, coulomb: tuple[Scalar, Scalar], qd: Scalar) -> Scalar:
    """The joint's friction torque: the viscous b qd and the Coulomb friction, Tc+ for qd > 0, Tc- for qd < 0 and 0
    at rest, written odd sign(qd) + even sign(qd)^2 with odd = (Tc+ - Tc-)/2, even = (Tc+ + Tc-)/2 (one sign per
    joint, and no branch, so that every scalar type and generated language evaluates it). ``damping`` and the
    parts are scalars of ``ops`` (:func:`coulomb_scalars`); the literal 0 stands for an absent term or a zero qd."""
    out = 0 if literal_zero(damping) else damping * qd
    odd, even = coulomb
    if literal_zero(qd) or (literal_zero(odd) and literal_zero(even)):
        return out
    s = ops.sign(qd)
    if not literal_zero(odd):
        out = out + odd * s
    if not literal_zero(even):
        out = out + even * (s * s)
    return out


def literal_zero(x: Any) -> bool:
    """x is the literal 0 that stands for an exact zero on every scalar type (:mod:`robodyn.recursions.scalars`)."""
    return type(x) is int and x == 0

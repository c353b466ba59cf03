"""A link and the rigid bodies of a manipulator: frozen ``RigidBody``, ``Payload`` and ``Link``.

The conventions of their fields are those of :mod:`robodyn.model.manipulator` (which re-exports these names).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy

from robodyn.errors import ModelError
from robodyn.model.expr import check_name, to_expr
from robodyn.model.inertia import as_inertia, as_vector3, check_inertia
from robodyn.model.joints import JOINT_TYPES as JOINT_KINDS

JOINT_TYPES = {"R": "R", "P": "P", "S": "S", "PLANAR": "planar", "REVOLUTE": "R", "PRISMATIC": "P",
               "SPHERICAL": "S"}
ZERO3 = (sympy.Integer(0), sympy.Integer(0), sympy.Integer(0))


def _zero_inertia() -> sympy.ImmutableMatrix:
    return sympy.ImmutableMatrix.zeros(3, 3)


def _nonnegative(value: sympy.Expr, field_name: str) -> None:
    if value.is_number and float(value) < 0:
        raise ModelError(f"{value} is negative", field=field_name)


@dataclass(frozen=True)
class RigidBody:
    """Mass, centre of mass (in the frame it is attached to) and inertia about the centre of mass."""

    mass: Any = 0
    com: Any = ZERO3
    inertia: Any = field(default_factory=_zero_inertia)

    def __post_init__(self) -> None:
        object.__setattr__(self, "mass", to_expr(self.mass, "mass"))
        _nonnegative(self.mass, "mass")
        object.__setattr__(self, "com", as_vector3(self.com, "com"))
        object.__setattr__(self, "inertia", as_inertia(self.inertia, "inertia"))

    def check(self, where: str, strict: bool) -> None:
        check_inertia(self.inertia, mass=self.mass, field="inertia", where=where, strict=strict)


@dataclass(frozen=True)
class Payload(RigidBody):
    """A rigid body carried by the last link (fixed in its frame), e.g. the payload of the Macsyma thesis appendix."""


@dataclass(frozen=True)
class Link(RigidBody):
    """One joint and the link it moves.

    ``a``, ``alpha``, ``d``, ``theta`` are the DH parameters of the manipulator's convention
    (``theta``/``d`` are offsets to which the joint variable is added); the inertial fields
    are those of :class:`RigidBody`; ``damping``, ``coulomb``, ``armature`` and the joint spring's ``stiffness``
    k >= 0 and ``springref`` q_ref (tau gets k (q - q_ref); MuJoCo's ``stiffness`` and ``springref``) are optional.
    ``joint`` is R (revolute), P (prismatic), S (spherical: :attr:`spherical`; damping and armature then act on each
    of its three velocities; a spring is refused) or planar (:attr:`planar`, likewise). ``placement`` (optional)
    is a fixed homogeneous transform applied before the row's DH transform, A = placement * A_DH (identity when
    absent). ``name``
    (optional, a name of the :data:`~robodyn.model.expr.IDENTIFIER` grammar) labels the joint: other links name it
    as their ``parent``, a URDF import keeps the joint's name there, and messages use it.
    """

    joint: str = "R"
    a: Any = 0
    alpha: Any = 0
    d: Any = 0
    theta: Any = 0
    damping: Any = 0
    armature: Any = 0
    placement: Any = None
    name: str = ""
    coulomb: Any = (0, 0)
    stiffness: Any = 0
    springref: Any = 0

    def __post_init__(self) -> None:
        if self.name != "":
            object.__setattr__(self, "name", check_name(self.name, "name"))
        kind = JOINT_TYPES.get(str(self.joint).strip().upper()) if isinstance(self.joint, str) else None
        if kind is None:
            raise ModelError(f"unknown joint type {self.joint!r} (expected R, P, S or planar)", field="joint")
        object.__setattr__(self, "joint", kind)
        for name in ("a", "alpha", "d", "theta", "damping", "armature", "stiffness", "springref"):
            object.__setattr__(self, name, to_expr(getattr(self, name), name))
        _nonnegative(self.damping, "damping")
        _nonnegative(self.armature, "armature")
        _nonnegative(self.stiffness, "stiffness")
        if self.multi_dof and self.has_spring:
            raise ModelError(f"a joint spring on a {JOINT_KINDS[self.joint].name} joint is not supported (only on "
                             "revolute and prismatic joints)", field="stiffness")
        object.__setattr__(self, "coulomb", _as_coulomb(self.coulomb))
        object.__setattr__(self, "placement", _as_placement(self.placement))
        super().__post_init__()

    @property
    def revolute(self) -> bool:
        return self.joint == "R"

    @property
    def spherical(self) -> bool:
        """A spherical (ball) joint, S: its revolute frame at q = 0 (the row's offsets theta, d), then turned about
        its origin by a unit quaternion (:mod:`robodyn.model.joints`); nq 4, nv 3."""
        return self.joint == "S"

    @property
    def planar(self) -> bool:
        """A planar joint (Pinocchio's ``JointModelPlanar``): its revolute frame at q = 0 (the row's offsets theta,
        d), then moved by Trans(x, y, 0) Rot(z, theta) (:mod:`robodyn.model.joints`); nq 4 (x, y, cos, sin), nv 3."""
        return self.joint == "planar"

    @property
    def kind(self) -> str:
        """The joint type's name (:data:`robodyn.model.joints.JOINT_TYPES`): revolute, prismatic, spherical or
        planar."""
        return JOINT_KINDS[self.joint].name

    @property
    def multi_dof(self) -> bool:
        """A joint of several velocities (spherical or planar): nq 4, nv 3."""
        return self.joint in ("S", "planar")

    @property
    def has_placement(self) -> bool:
        """True if the row has a fixed transform before its DH transform (not the identity)."""
        return self.placement != sympy.eye(4)

    @property
    def has_coulomb(self) -> bool:
        """True if the joint has Coulomb friction (either of Tc+, Tc- not zero)."""
        return any(v != 0 for v in self.coulomb)

    @property
    def has_spring(self) -> bool:
        """True if the joint has a spring (``stiffness`` not zero): tau gets stiffness (q - springref)."""
        return self.stiffness != 0

    @property
    def coulomb_parts(self) -> tuple[sympy.Expr, sympy.Expr]:
        """(odd, even) = ((Tc+ - Tc-) / 2, (Tc+ + Tc-) / 2): the Coulomb friction is odd sign(qd) + even sign(qd)^2
        (Tc+ for qd > 0, Tc- for qd < 0, 0 at rest), the form the recursions and generated code evaluate."""
        plus, minus = self.coulomb
        return (plus - minus) / 2, (plus + minus) / 2

    def replace(self, **changes: Any) -> Link:
        return dataclasses.replace(self, **changes)


def _as_coulomb(value: object) -> tuple[sympy.Expr, sympy.Expr]:
    """``coulomb``: [Tc+, Tc-] (the friction torque or force for qd > 0 and for qd < 0, joint side: Tc+ >= 0 >= Tc-
    when numeric), or one number c for [c, -c]."""
    if isinstance(value, sympy.MatrixBase | np.ndarray):
        value = list(np.asarray(value, dtype=object).reshape(-1))
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        items = list(value)
        if len(items) != 2:
            raise ModelError(f"expected [Tc+, Tc-] (2 values) or one value, got {len(items)} values", field="coulomb")
        plus, minus = (to_expr(v, f"coulomb[{k}]") for k, v in enumerate(items))
    else:
        plus = to_expr(value, "coulomb")
        minus = -plus
    if plus.is_number and float(plus) < 0:
        raise ModelError(f"Tc+ = {float(plus):g} is negative: friction opposes the motion (Tc+ >= 0 >= Tc-)",
                         field="coulomb")
    if minus.is_number and float(minus) > 0:
        raise ModelError(f"Tc- = {float(minus):g} is positive: friction opposes the motion (Tc+ >= 0 >= Tc-)",
                         field="coulomb")
    return plus, minus


_IDENTITY = sympy.ImmutableMatrix.eye(4)


def _as_transform(value: object, field_name: str) -> sympy.ImmutableMatrix:
    if value is None or (isinstance(value, sympy.ImmutableMatrix) and value == _IDENTITY):  # the default, as is
        return _IDENTITY
    rows = value.tolist() if isinstance(value, sympy.MatrixBase) else value
    if not isinstance(rows, Sequence) or len(rows) != 4 or any(
        not isinstance(r, Sequence) or isinstance(r, str) or len(r) != 4 for r in rows
    ):
        raise ModelError("expected a 4x4 homogeneous transform", field=field_name)
    entries = [[to_expr(v, f"{field_name}[{i}][{j}]") for j, v in enumerate(r)] for i, r in enumerate(rows)]
    # compared as numbers: since SymPy 1.13 Float(1.0) != 1, and NumPy's tolist() or YAML give 0.0 and 1.0
    if not all(e.is_number and abs(complex(e) - target) <= 1e-12 for e, target in zip(entries[3], (0, 0, 0, 1),
                                                                                       strict=True)):
        raise ModelError("the last row of a homogeneous transform must be [0, 0, 0, 1]", field=field_name)
    entries[3] = [sympy.Integer(0), sympy.Integer(0), sympy.Integer(0), sympy.Integer(1)]
    matrix = sympy.ImmutableMatrix(entries)
    identity = sympy.ImmutableMatrix.eye(4)
    if all(e.is_number for e in matrix) and all(complex(e) == complex(i) for e, i in zip(matrix, identity,
                                                                                         strict=True)):
        return identity  # the identity written with floats is the identity: no placement, no tool
    return matrix


def _as_placement(value: object) -> sympy.ImmutableMatrix:
    """A link's ``placement``: a homogeneous transform whose rotation is orthonormal (checked when numeric)."""
    matrix = _as_transform(value, "placement")
    R = matrix[:3, :3]
    if all(e.is_number for e in R):
        values = np.array(R.evalf(), dtype=float)
        if np.max(np.abs(values.T @ values - np.eye(3))) > 1e-9 or np.linalg.det(values) < 0:
            raise ModelError("the rotation part of a placement must be a proper rotation matrix", field="placement")
    return matrix

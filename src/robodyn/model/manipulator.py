"""The manipulator description: frozen ``Link``s, an optional ``Payload``, and ``Manipulator``.

Conventions (ARCHITECTURE.md, "Conventions everyone relies on"):

- ``standard`` DH (Paul, Fu, ROBMAT): A_i = Rot(z, theta_i) Trans(z, d_i) Trans(x, a_i) Rot(x, alpha_i);
  joint i moves about/along z_{i-1}; link i's frame sits at its distal end.
- ``modified`` DH (Craig, Burdick): A_i = Rot(x, alpha_{i-1}) Trans(x, a_{i-1}) Rot(z, theta_i) Trans(z, d_i);
  a link row holds alpha_{i-1} and a_{i-1} as ``alpha`` and ``a``; joint i moves about/along z_i.
- A revolute joint's variable q_i adds to ``theta``; a prismatic joint's adds to ``d``.
- ``com`` is the centre of mass in the link frame; ``inertia`` the tensor about the centre of
  mass with axes parallel to the link frame (off-diagonals are minus the products of inertia).
- ``gravity`` is the acceleration of gravity in the base frame, e.g. (0, 0, -g).
- ``tip_force``/``tip_moment``: what the last link exerts on the environment (Fu's f_{n+1},
  n_{n+1}), in the last link frame, the moment about that frame's origin.
- ``damping`` is the viscous coefficient b_i (tau_i gets b_i qd_i, Fu table 3.2); ``armature``
  is the rotor inertia reflected to the joint, G^2 Jm, added to M_ii.
- ``placement`` (optional, 4x4) is a fixed transform P_i applied before the DH transform of its row,
  A_i = P_i A_i^DH, for joints that no DH row can place (URDF imports): see :mod:`robodyn.model.dh`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import sympy

from robodyn.errors import ModelError, prefixed_warnings
from robodyn.model.expr import check_name, shown, to_expr
from robodyn.model.inertia import as_inertia, as_vector3, check_inertia
from robodyn.symbols import g as gravity_symbol

CONVENTIONS = ("standard", "modified")
#: The most links (moving joints) a robot may have, on every input path: ``Manipulator(...)``, ``from_dh``, model
#: files and URDF. Symbolic derivation grows quickly with n (a 60-joint chain takes about a minute with
#: Newton-Euler); 200 is far beyond any arm and still refuses a file made to exhaust memory.
MAX_LINKS = 200
JOINT_TYPES = {"R": "R", "P": "P", "REVOLUTE": "R", "PRISMATIC": "P"}
ZERO3 = (sympy.Integer(0), sympy.Integer(0), sympy.Integer(0))


def _text(value: object, field_name: str) -> str:
    """Free text (a description, a source): kept as data, never printed into code or markup unescaped."""
    if not isinstance(value, str):
        raise ModelError(f"expected text, got {type(value).__name__}", field=field_name)
    return value


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
    """A rigid body carried by the last link (fixed in its frame), e.g. the payload of seed 004."""


@dataclass(frozen=True)
class Link(RigidBody):
    """One joint and the link it moves.

    ``a``, ``alpha``, ``d``, ``theta`` are the DH parameters of the manipulator's convention
    (``theta``/``d`` are offsets to which the joint variable is added); the inertial fields
    are those of :class:`RigidBody`; ``damping`` and ``armature`` are optional. ``placement``
    (optional) is a fixed homogeneous transform applied before the row's DH transform,
    A = placement * A_DH (identity when absent).
    """

    joint: str = "R"
    a: Any = 0
    alpha: Any = 0
    d: Any = 0
    theta: Any = 0
    damping: Any = 0
    armature: Any = 0
    placement: Any = None

    def __post_init__(self) -> None:
        kind = JOINT_TYPES.get(str(self.joint).strip().upper()) if isinstance(self.joint, str) else None
        if kind is None:
            raise ModelError(f"unknown joint type {self.joint!r} (expected R or P)", field="joint")
        object.__setattr__(self, "joint", kind)
        for name in ("a", "alpha", "d", "theta", "damping", "armature"):
            object.__setattr__(self, name, to_expr(getattr(self, name), name))
        _nonnegative(self.damping, "damping")
        _nonnegative(self.armature, "armature")
        object.__setattr__(self, "placement", _as_placement(self.placement))
        super().__post_init__()

    @property
    def revolute(self) -> bool:
        return self.joint == "R"

    @property
    def has_placement(self) -> bool:
        """True if the row has a fixed transform before its DH transform (not the identity)."""
        return self.placement != sympy.eye(4)

    def replace(self, **changes: Any) -> Link:
        return dataclasses.replace(self, **changes)


def _as_transform(value: object, field_name: str) -> sympy.ImmutableMatrix:
    if value is None:
        return sympy.ImmutableMatrix.eye(4)
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


@dataclass(frozen=True)
class Manipulator:
    """An immutable serial arm: links, DH convention, gravity, optional tip load, payload and tool.

    Build one in code (``Manipulator(links=[Link(...), ...])`` or :meth:`from_dh`), from a
    model file (:func:`robodyn.load`), or from the built-in library. ``strict=True`` turns
    the triangle-inequality warning into an error.

    ``name`` and every parameter name follow :data:`robodyn.model.expr.IDENTIFIER` (an ASCII letter, then
    letters, digits and ``_``, at most 64 characters), checked here, so that whatever builds a
    Manipulator, only such names reach generated code and file names; ``description`` and ``source`` are
    free text, kept as data.
    """

    links: tuple[Link, ...]
    convention: str = "standard"
    gravity: Any = (0, 0, -gravity_symbol)
    name: str = "robot"
    description: str = ""
    source: str = ""
    tip_force: Any = ZERO3
    tip_moment: Any = ZERO3
    payload: Payload | None = None
    tool: Any = None
    strict: InitVar[bool] = False

    def __post_init__(self, strict: bool) -> None:
        links = tuple(self.links)
        if not links:
            raise ModelError("a manipulator needs at least one link", field="links")
        if len(links) > MAX_LINKS:
            raise ModelError(f"{len(links)} links: at most {MAX_LINKS} are accepted", field="links")
        for k, link in enumerate(links, start=1):
            if not isinstance(link, Link):
                raise ModelError(f"expected a Link, got {type(link).__name__}", link=k)
        object.__setattr__(self, "links", links)
        if self.convention not in CONVENTIONS:
            raise ModelError(
                f"unknown convention {self.convention!r} (expected one of {', '.join(CONVENTIONS)})",
                field="convention",
            )
        object.__setattr__(self, "name", check_name(self.name, "name"))
        object.__setattr__(self, "description", _text(self.description, "description"))
        object.__setattr__(self, "source", _text(self.source, "source"))
        object.__setattr__(self, "gravity", as_vector3(self.gravity, "gravity"))
        object.__setattr__(self, "tip_force", as_vector3(self.tip_force, "tip_force"))
        object.__setattr__(self, "tip_moment", as_vector3(self.tip_moment, "tip_moment"))
        object.__setattr__(self, "tool", _as_transform(self.tool, "tool"))
        if self.payload is not None and not isinstance(self.payload, Payload):
            raise ModelError("expected a Payload", field="payload")
        for k, link in enumerate(links, start=1):
            try:
                link.check(f"link {k}", strict)
            except ModelError as exc:
                raise exc.located(link=k) from None
        if self.payload is not None:
            try:
                self.payload.check("payload", strict)
            except ModelError as exc:
                raise exc.located(link="payload") from None

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_dh(
        cls,
        rows: Iterable[Mapping[str, Any] | Link],
        convention: str = "standard",
        **kwargs: Any,
    ) -> Manipulator:
        """Build from DH rows: dicts with the model-file keys (``joint``, ``a``, ``alpha``,
        ``d``, ``theta``, ``mass``, ``com``, ``inertia``, ``damping``, ``armature``) or Links."""
        links = []
        for k, row in enumerate(rows, start=1):
            if isinstance(row, Link):
                links.append(row)
                continue
            try:
                with prefixed_warnings(f"link {k}"):
                    links.append(Link(**dict(row)))
            except ModelError as exc:
                raise exc.located(link=k) from None
            except TypeError as exc:
                raise ModelError(str(exc).replace("__init__() ", ""), link=k) from None
        return cls(links=tuple(links), convention=convention, **kwargs)

    # -- questions ----------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of joints."""
        return len(self.links)

    @property
    def joint_types(self) -> str:
        """E.g. ``"RRP"``."""
        return "".join(link.joint for link in self.links)

    def parameters(self) -> tuple[sympy.Symbol, ...]:
        """Every free symbol of the description, sorted by name (``g`` included if used)."""
        symbols: set[sympy.Symbol] = set()
        for expr in self._expressions():
            symbols |= expr.free_symbols
        return tuple(sorted(symbols, key=lambda s: s.name))

    @property
    def has_placements(self) -> bool:
        """True if any link has a fixed placement before its DH transform (see :class:`Link`)."""
        return any(link.has_placement for link in self.links)

    @property
    def is_numeric(self) -> bool:
        return not self.parameters()

    @property
    def has_floats(self) -> bool:
        """True if any number in the description is a floating-point number (not exact)."""
        return any(expr.has(sympy.Float) for expr in self._expressions())

    def bodies(self, k: int) -> tuple[RigidBody, ...]:
        """The rigid bodies moving with link k (0-based): the link, and the payload on the last."""
        if k == self.n - 1 and self.payload is not None:
            return (self.links[k], self.payload)
        return (self.links[k],)

    def _expressions(self) -> Iterable[sympy.Expr]:
        for link in self.links:
            yield from (link.a, link.alpha, link.d, link.theta, link.mass, link.damping, link.armature)
            yield from link.com
            yield from link.inertia
            if link.has_placement:
                yield from link.placement
        yield from self.gravity
        yield from self.tip_force
        yield from self.tip_moment
        yield from self.tool
        if self.payload is not None:
            yield self.payload.mass
            yield from self.payload.com
            yield from self.payload.inertia

    # -- transformation -----------------------------------------------------------------
    def subs(self, values: Mapping[Any, Any]) -> Manipulator:
        """A copy with parameters replaced, e.g. ``robot.subs({"L1": 1.0, "g": 9.81})``."""
        mapping = {sympy.Symbol(k) if isinstance(k, str) else k: to_expr(v, f"values[{shown(k)}]")  # never sympify text
                   for k, v in values.items()}

        def sub(value: Any) -> Any:
            if isinstance(value, sympy.MatrixBase):
                return value.subs(mapping)
            if isinstance(value, tuple):
                return tuple(sub(v) for v in value)
            if isinstance(value, sympy.Basic):
                return value.subs(mapping)
            return value

        def body(b: RigidBody) -> dict[str, Any]:
            return {f.name: sub(getattr(b, f.name)) for f in dataclasses.fields(b)}

        links = []
        for k, link in enumerate(self.links, start=1):
            try:
                links.append(Link(**body(link)))
            except ModelError as exc:
                raise exc.located(link=k) from None
        try:
            payload = Payload(**body(self.payload)) if self.payload is not None else None
        except ModelError as exc:
            raise exc.located(link="payload") from None
        return dataclasses.replace(
            self,
            links=tuple(links),
            gravity=sub(self.gravity),
            tip_force=sub(self.tip_force),
            tip_moment=sub(self.tip_moment),
            tool=sub(self.tool),
            payload=payload,
        )

    def replace(self, **changes: Any) -> Manipulator:
        return dataclasses.replace(self, **changes)

    def to_convention(self, convention: str) -> Manipulator:
        """The same physical arm described in the other DH convention (see :mod:`robodyn.model.convert`)."""
        from robodyn.model.convert import to_convention

        return to_convention(self, convention)

    # -- files --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The model-file structure (see :mod:`robodyn.model.io`)."""
        from robodyn.model.io import manipulator_to_dict

        return manipulator_to_dict(self)

    def save(self, path: str | Path) -> Path:
        """Write a YAML (or, for a ``.json`` path, JSON) model file atomically."""
        from robodyn.model.io import save

        return save(self, path)

    # -- Robotics Toolbox names (thin aliases over robodyn.numeric; see robodyn.toolbox) --------------------
    def rne(self, q: Any, qd: Any = None, qdd: Any = None, **kwargs: Any) -> Any:
        """Inverse dynamics, as RTB's ``rne`` (:func:`robodyn.toolbox.rne`)."""
        from robodyn import toolbox

        return toolbox.rne(self, q, qd, qdd, **kwargs)

    def inertia(self, q: Any, **kwargs: Any) -> Any:
        """The inertia matrix M(q), as RTB's ``inertia`` (:func:`robodyn.toolbox.inertia`)."""
        from robodyn import toolbox

        return toolbox.inertia(self, q, **kwargs)

    def coriolis(self, q: Any, qd: Any, **kwargs: Any) -> Any:
        """The Coriolis matrix C(q, qd), as RTB's ``coriolis`` (:func:`robodyn.toolbox.coriolis`)."""
        from robodyn import toolbox

        return toolbox.coriolis(self, q, qd, **kwargs)

    def gravload(self, q: Any, **kwargs: Any) -> Any:
        """The gravity torques G(q), as RTB's ``gravload`` (:func:`robodyn.toolbox.gravload`)."""
        from robodyn import toolbox

        return toolbox.gravload(self, q, **kwargs)

    def accel(self, q: Any, qd: Any, torque: Any, **kwargs: Any) -> Any:
        """Forward dynamics, as RTB's ``accel`` (:func:`robodyn.toolbox.accel`)."""
        from robodyn import toolbox

        return toolbox.accel(self, q, qd, torque, **kwargs)

    def fdyn(self, T: float, q0: Any, Q: Any = None, **kwargs: Any) -> Any:
        """Integrate the motion, as RTB's ``fdyn`` (:func:`robodyn.toolbox.fdyn`)."""
        from robodyn import toolbox

        return toolbox.fdyn(self, T, q0, Q, **kwargs)

    def to_urdf(self, path: str | Path | None = None, *, params: Mapping[Any, Any] | None = None) -> str:
        """URDF text of this robot (numeric inertial data, or symbols bound by ``params``); also written to
        ``path`` if given. See :mod:`robodyn.urdf`."""
        from robodyn.urdf import to_urdf, write_urdf

        if path is not None:
            write_urdf(self, path, params)
        return to_urdf(self, params)

    def __repr__(self) -> str:
        return (
            f"Manipulator(name={self.name!r}, n={self.n}, joints={self.joint_types!r}, "
            f"convention={self.convention!r}, parameters={len(self.parameters())})"
        )

    def _repr_latex_(self) -> str:
        from robodyn.tables import dh_table_latex

        return "$" + dh_table_latex(self) + "$"

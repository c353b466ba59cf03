"""The format-neutral builder of a robot from joint frames, shared by the URDF reader and ``from_pinocchio``.

A format reader describes each moving joint as a :class:`JointFrame` (its kind, axis, placement in its parent
joint's frame, the :class:`Body` it carries); :func:`manipulator_from_frames` turns the tree of frames into a
modified-DH :class:`~robodyn.model.manipulator.Manipulator`: each frame turned so that its joint moves about z
(:func:`axis_rotation`), its placement written as a DH row where it has that form (:func:`dh_row`), else as a
``placement``, angles within 1e-9 rad of a multiple of pi/2 snapped to it (``snap``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy

from robodyn.errors import ModelError
from robodyn.model.expr import to_identifier
from robodyn.model.manipulator import Link, Manipulator, RigidBody
from robodyn.model.names import unique_names
from robodyn.model.spatial import com_inertia, homogeneous, moved_inertia, origin_inertia, rot_x, rot_z

#: Angles within this of a multiple of pi/2, and rotation entries within this of -1, 0 or 1, are snapped.
SNAP = 1e-9


@dataclass
class Body:
    """Mass, first moment and inertia about the origin of the frame it is expressed in (floats)."""

    m: float = 0.0
    h: np.ndarray = field(default_factory=lambda: np.zeros(3))
    J: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))

    @staticmethod
    def from_com(m: float, c: np.ndarray, inertia: np.ndarray) -> Body:
        """The body of mass m, centre of mass c and ``inertia`` about it
        (:func:`~robodyn.model.spatial.origin_inertia`)."""
        return Body(*origin_inertia(m, c, inertia))

    def moved(self, T: np.ndarray) -> Body:
        """The same body expressed in a frame where its current frame sits at T
        (:func:`~robodyn.model.spatial.moved_inertia`)."""
        return Body(*moved_inertia(self.m, self.h, self.J, T))

    def __add__(self, other: Body) -> Body:
        return Body(self.m + other.m, self.h + other.h, self.J + other.J)

    def com_form(self) -> tuple[float, np.ndarray, np.ndarray]:
        """(mass, centre of mass, inertia about the centre of mass) (:func:`~robodyn.model.spatial.com_inertia`)."""
        return com_inertia(self.m, self.h, self.J)


def axis_rotation(axis: np.ndarray) -> np.ndarray:
    """A rotation R with R e_z = axis (unit): I for +z, Rot(x, pi) for -z, Rot(x, -+pi/2) / Rot(y, +-pi/2) for
    +-y / +-x, otherwise the smallest rotation taking e_z to the axis (Rodrigues)."""
    x, y, z = axis
    if abs(x) < SNAP and abs(y) < SNAP:
        return np.eye(3) if z > 0 else np.diag([1.0, -1.0, -1.0])
    if abs(x) < SNAP and abs(z) < SNAP:
        return rot_x(-math.pi / 2 if y > 0 else math.pi / 2).round(15)
    if abs(y) < SNAP and abs(z) < SNAP:
        return np.array([[0, 0, 1.0], [0, 1.0, 0], [-1.0, 0, 0]]) if x > 0 else np.array(
            [[0, 0, -1.0], [0, 1.0, 0], [1.0, 0, 0]])
    k = np.cross([0.0, 0.0, 1.0], axis)
    s, c = float(np.linalg.norm(k)), float(z)
    k = k / s
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + s * K + (1 - c) * K @ K


def _snap_angle(a: float, snap: bool) -> sympy.Expr:
    if snap:
        quarter = round(a / (math.pi / 2))
        if abs(a - quarter * math.pi / 2) < SNAP:
            return sympy.pi * sympy.Rational(quarter, 2)
    return sympy.Float(a)


def _snap_length(x: float, snap: bool) -> sympy.Expr:
    return sympy.Integer(0) if snap and abs(x) < 1e-12 else sympy.Float(x)


def _snap_rotation(R: np.ndarray, snap: bool) -> np.ndarray:
    if snap:
        rounded = np.round(R)
        if np.all(np.abs(R - rounded) < SNAP) and np.allclose(rounded.T @ rounded, np.eye(3)):
            return rounded + 0.0
    return R


def dh_row(P: np.ndarray, snap: bool = True) -> dict[str, Any] | None:
    """(alpha, a, theta, d) with P = Rot(x, alpha) Trans(x, a) Rot(z, theta) Trans(z, d), or None."""
    R, t = P[:3, :3], P[:3, 3]
    scale = max(1.0, float(np.abs(t).max()))
    if abs(R[0, 2]) > 1e-12 or abs(t[1] * R[2, 2] - t[2] * R[1, 2]) > 1e-12 * scale:
        return None
    alpha = math.atan2(-R[1, 2], R[2, 2])
    theta = math.atan2(-R[0, 1], R[0, 0])
    a, d = float(t[0]), float(t @ R[:, 2])
    rebuilt = homogeneous(rot_x(alpha) @ rot_z(theta), rot_x(alpha) @ np.array([a, 0, 0]) + d * R[:, 2])
    if np.abs(rebuilt - P).max() > 1e-12 * scale:
        return None
    return {"alpha": _snap_angle(alpha, snap), "a": _snap_length(a, snap), "theta": _snap_angle(theta, snap),
            "d": _snap_length(d, snap)}


def _placement(P: np.ndarray, snap: bool) -> list[list[sympy.Expr]]:
    R = _snap_rotation(P[:3, :3], snap)
    rows = [[sympy.Float(x) if x not in (0.0, 1.0, -1.0) else sympy.Integer(int(x)) for x in R[i]]
            + [_snap_length(float(P[i, 3]), snap)] for i in range(3)]
    return [*rows, [0, 0, 0, 1]]


def frame_placement(P: np.ndarray, snap: bool = True) -> list[list[sympy.Expr]]:
    """A fixed transform (a named frame's placement, :mod:`robodyn.model.frames`) as exact as a link's
    ``placement``: rotation entries within :data:`SNAP` of -1, 0 or 1 and lengths below 1e-12 exact (``snap``)."""
    return _placement(P, snap)


def distinct_names(names: Sequence[str], taken: Iterable[str] = ()) -> list[str]:
    """Each of ``names`` (URDF joint names, any text) as a name of robodyn's grammar
    (:func:`~robodyn.model.expr.to_identifier`, prefix ``joint``), made unique by :func:`unique_names`."""
    return unique_names([to_identifier(name, prefix="joint") for name in names], taken)


@dataclass(frozen=True)
class JointFrame:
    """A moving joint as URDF and Pinocchio describe it: its kind, its axis (unit, in its own frame), its frame's
    placement ``origin`` (4x4) in the frame of the joint ``parent`` (-1: the base), the ``body`` it carries (in its
    frame), its viscous ``damping`` and armature, its spring's ``stiffness`` and ``springref`` (the joint position
    where it is relaxed: robodyn's q, which is the file's joint position), and ``where`` (how errors name it).
    ``spherical``: a ball joint (its axis then e_z: the frame is not turned, its quaternion is in the frame's own
    axes)."""

    name: str
    prismatic: bool
    axis: np.ndarray
    parent: int
    origin: np.ndarray
    body: Body
    damping: float
    where: str
    armature: float = 0.0
    spherical: bool = False
    stiffness: float = 0.0
    springref: float = 0.0


def manipulator_from_frames(frames: Sequence[JointFrame], *, name: str, description: str, gravity: Any,
                            snap: bool, strict: bool, shown: str, base: Body | None = None) -> Manipulator:
    """The modified-DH Manipulator of a tree of joint frames (parents before children): each frame turned by R_a
    (R_a e_z = its axis, :func:`axis_rotation`) so that it moves about z; its placement in the parent's turned
    frame a DH row where it has that form (:func:`dh_row`), else a ``placement``; its body carried into the turned
    frame. Errors name ``shown`` and the joint's ``where``. Each link's ``name`` is its frame's name as an
    identifier (:func:`distinct_names`); the frames' names, as given, are the robot's ``source_names``. ``base``
    (the body fixed to the root, in the root's frame) makes a floating robot, whose base carries it (``frames``
    may then be empty)."""
    names = distinct_names([frame.name for frame in frames], taken=("base",))  # "base": a model file's base
    rows: list[Link] = []
    R_axis: list[np.ndarray] = []  # per link: R_a, its frame's rotation from the given joint frame
    for k, frame in enumerate(frames):
        Ra = axis_rotation(frame.axis)
        R_parent = R_axis[frame.parent] if frame.parent >= 0 else np.eye(3)
        P = homogeneous(R_parent.T, np.zeros(3)) @ frame.origin @ homogeneous(Ra, np.zeros(3))
        rows.append(_link(frame, P, frame.body.moved(homogeneous(Ra.T, np.zeros(3))), names[k], snap, shown))
        R_axis.append(Ra)
    for frame, row in zip(frames, rows, strict=True):  # name the joint in inertia errors
        try:
            row.check(frame.where, strict)
        except ModelError as exc:
            raise ModelError(exc.problem, file=shown, link=frame.where, field=exc.field) from None
    try:
        return Manipulator(links=tuple(rows), convention="modified", gravity=gravity, name=to_identifier(name),
                           description=description, source=shown, strict=strict,
                           parent=[frame.parent for frame in frames] or None,
                           source_names=[frame.name for frame in frames], **_floating(base))
    except ModelError as exc:
        raise exc.located(file=shown) from None


def _floating(base: Body | None) -> dict[str, Any]:
    """The Manipulator fields of a floating base carrying ``base`` (none for a fixed base, ``base`` None)."""
    if base is None:
        return {}
    mass, com, inertia = base.com_form()
    return {"floating": True, "base": RigidBody(mass=mass, com=com.tolist(), inertia=inertia.tolist())}


def _link(frame: JointFrame, P: np.ndarray, body: Body, name: str, snap: bool, shown: str) -> Link:
    """The row of a moving joint: placed by P (a DH row when it has that form), carrying ``body``."""
    mass, com, inertia = body.com_form()
    fields: dict[str, Any] = {
        "joint": "S" if frame.spherical else "P" if frame.prismatic else "R", "name": name, "mass": mass,
        "com": com.tolist(),
        "inertia": inertia.tolist(), "damping": frame.damping,
    }
    if frame.armature:
        fields["armature"] = frame.armature
    if frame.stiffness:
        fields["stiffness"], fields["springref"] = frame.stiffness, frame.springref
    row = dh_row(P, snap)
    if row is None:
        fields["placement"] = _placement(P, snap)
    else:
        fields.update(row)
    try:
        return Link(**fields)
    except ModelError as exc:
        raise ModelError(exc.problem, file=shown, link=frame.where, field=exc.field) from None


__all__ = ["Body", "JointFrame", "axis_rotation", "dh_row", "distinct_names", "frame_placement",
           "manipulator_from_frames", "unique_names"]

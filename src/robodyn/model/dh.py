"""Link transforms in both DH conventions, split around the joint.

Every link transform is written A_i = B_i S_i(q_i) C_i, where S_i = Rot(z, theta_i) Trans(z, d_i)
is the joint's screw about/along the local z axis and B_i, C_i are constant:

- standard (Paul; Fu eq. 3.2-5/6):   B_i = I,                        C_i = Trans(x, a_i) Rot(x, alpha_i)
- modified (Craig; Burdick eq. 1):   B_i = Rot(x, alpha_{i-1}) Trans(x, a_{i-1}),   C_i = I

A link with a fixed ``placement`` P_i (URDF joints that no DH row can place) has A_i = P_i B_i S_i C_i:
P_i is folded into B_i here, so every algorithm built on this split supports it unchanged.

Splitting this way lets one Newton-Euler and one Lagrange-Euler code serve both
conventions: the joint axis is the z axis of the frame after B_i, and
d(A_i)/dq_i = B_i Q_i S_i C_i with Fu's Q_i (eq. 3.2-8, 3.2-9).

A joint angle enters only as sin(q) and cos(q): cos(theta0 + q) is written
cos(theta0) cos(q) - sin(theta0) sin(q), which is exact and keeps the canonical form of
:mod:`robodyn.algebra` simple.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass
from typing import Any

import symengine as se

from robodyn.algebra import SeExpr, to_se
from robodyn.model.manipulator import Link, Manipulator
from robodyn.model.spatial import homogeneous_rows, rot_x_rows, rot_z_rows

_ORIGIN = (0, 0, 0)
_IDENTITY = ((1, 0, 0), (0, 1, 0), (0, 0, 1))


def rot_z(c: SeExpr, s: SeExpr) -> se.DenseMatrix:
    """Rot(z, theta) as a 4x4 symengine matrix, from c = cos(theta), s = sin(theta)."""
    return se.DenseMatrix(homogeneous_rows(rot_z_rows(c, s), _ORIGIN))


def rot_x(c: SeExpr, s: SeExpr) -> se.DenseMatrix:
    """Rot(x, alpha) as a 4x4 symengine matrix, from c = cos(alpha), s = sin(alpha)."""
    return se.DenseMatrix(homogeneous_rows(rot_x_rows(c, s), _ORIGIN))


def trans(x: SeExpr, y: SeExpr, z: SeExpr) -> se.DenseMatrix:
    """Trans(x, y, z) as a 4x4 symengine matrix."""
    return se.DenseMatrix(homogeneous_rows(_IDENTITY, (x, y, z)))


def cos_sin_of_sum(offset: SeExpr, q: SeExpr | None) -> tuple[SeExpr, SeExpr]:
    """cos and sin of offset + q, expanded so that q appears only in cos(q), sin(q)."""
    c0, s0 = se.cos(offset), se.sin(offset)
    if q is None:
        return c0, s0
    cq, sq = se.cos(q), se.sin(q)
    return c0 * cq - s0 * sq, s0 * cq + c0 * sq


@dataclass(frozen=True)
class JointFrames:
    """A_i = B S C for one link, as symengine 4x4 matrices, and the joint type."""

    B: se.DenseMatrix
    S: se.DenseMatrix
    C: se.DenseMatrix
    revolute: bool

    @property
    def A(self) -> se.DenseMatrix:
        return self.B * self.S * self.C


def joint_frames(link: Link, convention: str, q: SeExpr | None) -> JointFrames:
    """The split transform of one link at joint coordinate ``q`` (None: at the offsets)."""
    a, alpha = to_se(link.a), to_se(link.alpha)
    d, theta = to_se(link.d), to_se(link.theta)
    if q is not None and not link.revolute:
        d = d + q
    c, s = cos_sin_of_sum(theta, q if link.revolute else None)
    screw = rot_z(c, s) * trans(0, 0, d)
    ca, sa = se.cos(alpha), se.sin(alpha)
    if convention == "standard":
        B, C = se.eye(4), trans(a, 0, 0) * rot_x(ca, sa)
    else:
        B, C = rot_x(ca, sa) * trans(a, 0, 0), se.eye(4)
    if link.has_placement:
        B = se.DenseMatrix(link.placement.tolist()) * B
    return JointFrames(B, screw, C, link.revolute)


def chain_frames(robot: Manipulator, q: list[SeExpr]) -> list[JointFrames]:
    return [joint_frames(link, robot.convention, qi) for link, qi in zip(robot.links, q, strict=True)]


def rotation(T: se.DenseMatrix) -> se.DenseMatrix:
    return T[:3, :3]


def translation(T: se.DenseMatrix) -> se.DenseMatrix:
    return T[:3, 3]


def inverse(T: se.DenseMatrix) -> se.DenseMatrix:
    """Inverse of a homogeneous transform: [R^T, -R^T p]."""
    Rt = rotation(T).T
    p = -(Rt * translation(T))
    out = se.eye(4)
    for i in range(3):
        for j in range(3):
            out[i, j] = Rt[i, j]
        out[i, 3] = p[i]
    return out


def modified(robot: Manipulator) -> Manipulator:
    """The arm in modified DH (the frames of the recursions), without repeating the model's warnings."""
    return robot if robot.convention == "modified" else _converted(robot)


@functools.lru_cache(maxsize=16)
def _converted(robot: Manipulator) -> Manipulator:
    """A standard-DH arm in modified DH, once per arm (derive converts it for the recursion and again for
    :func:`right_angled`; the arm is immutable)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the model's own warnings were given when it was loaded
        return robot.to_convention("modified")


def _unit_or_zero(x: Any) -> bool:
    e = to_se(x)
    return bool(e.is_Number) and float(e) in (0.0, 1.0, -1.0)


def right_angled(robot: Manipulator) -> bool:
    """Every fixed angle of the geometry a multiple of pi/2 exactly: the twists between joint axes, the
    joint offsets theta and the rotations of placements have sines and cosines 0 or +-1 (not 6e-17 as
    for a floating-point pi/2), so they do not multiply the terms of the canonical forms (each general
    angle splits every term it meets in two or more). In modified DH; the twist of a link on the base only
    turns gravity and is not looked at. A cheap test, made before any expansion."""
    arm = modified(robot)
    for link, parent in zip(arm.links, arm.parents, strict=True):
        angles = [to_se(link.theta)] + ([to_se(link.alpha)] if parent >= 0 else [])
        if not all(_unit_or_zero(se.sin(a)) and _unit_or_zero(se.cos(a)) for a in angles):
            return False
        if link.has_placement and not all(_unit_or_zero(link.placement[r, c]) for r in range(3) for c in range(3)):
            return False
    return True

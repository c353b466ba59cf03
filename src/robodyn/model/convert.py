"""The same physical arm in the other DH convention.

Write S_i = Rot(z, theta_i) Trans(z, d_i) and C_i = Trans(x, a_i) Rot(x, alpha_i) for the
standard parameters. Standard frames satisfy F_i = F_{i-1} S_i C_i. Taking the modified
frame i to be the standard frame i-1 moved by the joint screw, M_i = F_{i-1} S_i, gives
M_i = M_{i-1} C_{i-1} S_i: exactly the modified-DH transform with alpha_{i-1}, a_{i-1}
taken from the standard row i-1 (Trans(x, a) and Rot(x, alpha) commute) and d_i, theta_i
unchanged. A body described in standard frame i = M_i C_i is moved into M_i by C_i.

The way back needs alpha_0 = a_0 = 0 (standard DH has no fixed transform before joint 1);
the last standard frame is taken equal to the last modified frame.

A link's fixed ``placement`` P_i (A_i = P_i B_i S_i C_i, :mod:`robodyn.model.dh`) is conjugated:
standard A_i = P_i S_i C_i gives M_i = M_{i-1} C_{i-1} P_i S_i = M_{i-1} (C_{i-1} P_i C_{i-1}^-1) C_{i-1} S_i,
so the modified row keeps B_i = C_{i-1} and gets P_i' = C_{i-1} P_i C_{i-1}^-1; the way back uses
P_i = B_i^-1 P_i' B_i.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import sympy

from robodyn.errors import ModelError
from robodyn.model.link import Link, Payload, RigidBody
from robodyn.model.spatial import sympy_homogeneous, x_screw

if TYPE_CHECKING:  # Manipulator uses this module for its to_convention method
    from robodyn.model.manipulator import Manipulator


def _move(body: RigidBody, R: sympy.Matrix, p: sympy.Matrix) -> dict[str, Any]:
    """Inertial fields of ``body`` re-expressed in a frame where its old frame sits at (R, p)."""
    com = R * sympy.Matrix(body.com) + p
    inertia = R * sympy.Matrix(body.inertia) * R.T
    # mirror the upper triangle: with floating-point data R I R^T is symmetric only to rounding
    return {
        "mass": body.mass,
        "com": [sympy.expand(x) for x in com],
        "inertia": [[sympy.expand(inertia[min(i, j), max(i, j)]) for j in range(3)] for i in range(3)],
    }


def _conjugate(placement: sympy.MatrixBase, a: sympy.Expr, alpha: sympy.Expr, inverse: bool) -> sympy.Matrix:
    """X P X^-1 with X = Trans(x, a) Rot(x, alpha) (``inverse``: X^-1 P X), expanded."""
    R, p = x_screw(a, alpha)
    X = sympy_homogeneous(R, p)
    X_inv = sympy_homogeneous(R.T, -(R.T * p))
    out = X_inv * placement * X if inverse else X * placement * X_inv
    return out.applyfunc(sympy.expand)


def tip_load_to_modified(last: Link, force: Any, moment: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """A tip load in the last standard frame (the moment about its origin) as the same load in the last
    modified frame, which the standard one sits in at C_n = (R, p): f' = R f, n' = R n + p x f'."""
    R, p = x_screw(last.a, last.alpha)
    f = R * sympy.Matrix(list(force))
    return tuple(f), tuple(sympy.expand(x) for x in R * sympy.Matrix(list(moment)) + p.cross(f))


def to_modified(robot: Manipulator) -> Manipulator:
    """A standard-DH arm described in modified DH (same dynamics, same joint coordinates). On a tree, the
    row of link i takes alpha and a from its parent's standard row (its B_i = C_parent(i))."""
    if robot.convention == "modified":
        return robot
    links = []
    for link, p in zip(robot.links, robot.parents, strict=True):
        previous = (robot.links[p].a, robot.links[p].alpha) if p >= 0 else (sympy.Integer(0), sympy.Integer(0))
        R, p_vec = x_screw(link.a, link.alpha)
        fields = {f.name: getattr(link, f.name) for f in dataclasses.fields(link)}
        fields.update(_move(link, R, p_vec), a=previous[0], alpha=previous[1])
        if link.has_placement:
            fields["placement"] = _conjugate(link.placement, previous[0], previous[1], inverse=False)
        links.append(Link(**fields))
    R, p = x_screw(robot.links[-1].a, robot.links[-1].alpha)
    f, moment = tip_load_to_modified(robot.links[-1], robot.tip_force, robot.tip_moment)
    payload = Payload(**_move(robot.payload, R, p)) if robot.payload is not None else None
    return dataclasses.replace(
        robot,
        links=tuple(links),
        convention="modified",
        tool=(sympy_homogeneous(R, p) * robot.tool).applyfunc(sympy.expand),
        tip_force=f,
        tip_moment=moment,
        payload=payload,
        frames=_moved_frames(robot, [(link.a, link.alpha) for link in robot.links], inverse=False),
        loops=_moved_loops(robot, [(link.a, link.alpha) for link in robot.links], inverse=False),
    )


def to_standard(robot: Manipulator) -> Manipulator:
    """A modified-DH arm described in standard DH; needs alpha_0 = a_0 = 0 on the links on the base, unless the arm
    has placements (one then carries them).

    Link i's standard row takes alpha and a from its (first) child's modified row, C_i = B_child. A child j
    whose B_j is not its parent's C (a second branch of a tree) gets the placement C_parent^-1 P_j B_j, which
    for B_j = C_parent is the conjugation of the module docstring."""
    if robot.convention == "standard":
        return robot
    parents = robot.parents
    first_child = {p: k for k, p in reversed(list(enumerate(parents)))}
    zero = sympy.Integer(0)
    links = []
    for k, link in enumerate(robot.links):
        p = parents[k]
        C_parent = (robot.links[first_child[p]].a, robot.links[first_child[p]].alpha) if p >= 0 else (zero, zero)
        own = (link.a, link.alpha)
        if p < 0 and own != (zero, zero) and not robot.has_placements:
            raise ModelError(
                "standard DH cannot place a joint on the base away from the base frame: alpha_0 and a_0 must be 0",
                link=k + 1,
                field="a" if link.a != 0 else "alpha",
            )
        child = first_child.get(k)
        a, alpha = (robot.links[child].a, robot.links[child].alpha) if child is not None else (zero, zero)
        R, p_vec = x_screw(a, alpha)
        fields = {f.name: getattr(link, f.name) for f in dataclasses.fields(link)}
        fields.update(_move(link, R.T, -(R.T * p_vec)), a=a, alpha=alpha)
        if own == C_parent:
            if link.has_placement:
                fields["placement"] = _conjugate(link.placement, link.a, link.alpha, inverse=True)
        else:  # standard A_k = (C_parent^-1 P_k B_k) S_k C_k
            R_parent, p_parent = x_screw(*C_parent)
            C_inverse = sympy_homogeneous(R_parent.T, -(R_parent.T * p_parent))
            placement = C_inverse * sympy.Matrix(link.placement) * sympy_homogeneous(*x_screw(*own))
            fields["placement"] = placement.applyfunc(sympy.expand)
        links.append(Link(**fields))
    return dataclasses.replace(robot, links=tuple(links), convention="standard",
                               frames=_moved_frames(robot, [(link.a, link.alpha) for link in links], inverse=True),
                               loops=_moved_loops(robot, [(link.a, link.alpha) for link in links], inverse=True))


def _moved_frames(robot: Manipulator, screws: list[tuple[Any, Any]], inverse: bool) -> tuple[Any, ...]:
    """The named frames (:mod:`robodyn.model.frames`) in the other convention's link frames: standard link frame k
    is modified link frame k times C_k = Trans(x, a_k) Rot(x, alpha_k) of the standard row k (``screws[k]``), so a
    frame's placement becomes C_k P (to modified) or C_k^-1 P (``inverse``: to standard); the base's stay."""
    out = []
    for frame in robot.frames:
        if frame.link < 0:
            out.append(frame)
            continue
        R, p = x_screw(*screws[frame.link])
        C = sympy_homogeneous(R.T, -(R.T * p)) if inverse else sympy_homogeneous(R, p)
        out.append(dataclasses.replace(frame, placement=sympy.ImmutableMatrix(
            (C * sympy.Matrix(frame.placement)).applyfunc(sympy.expand))))
    return tuple(out)


def _moved_loops(robot: Manipulator, screws: list[tuple[Any, Any]], inverse: bool) -> tuple[Any, ...]:
    """The loop closures (:mod:`robodyn.model.loops`) with their placements in the other convention's link frames,
    as :func:`_moved_frames` moves the named frames (C_k P to modified, C_k^-1 P to standard; the base's stay)."""
    out = []
    for loop in getattr(robot, "loops", ()):
        placements = []
        for k, placement in zip(loop.links, loop.placements, strict=True):
            if k < 0:
                placements.append(placement)
                continue
            R, p = x_screw(*screws[k])
            C = sympy_homogeneous(R.T, -(R.T * p)) if inverse else sympy_homogeneous(R, p)
            placements.append(sympy.ImmutableMatrix((C * sympy.Matrix(placement)).applyfunc(sympy.expand)))
        out.append(dataclasses.replace(loop, placements=tuple(placements)))
    return tuple(out)


def to_convention(robot: Manipulator, convention: str) -> Manipulator:
    """``robot`` described in ``convention`` ("standard" or "modified")."""
    if convention == "modified":
        return to_modified(robot)
    if convention == "standard":
        return to_standard(robot)
    raise ModelError(f"unknown convention {convention!r}", field="convention")

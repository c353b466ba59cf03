"""Loop closures: a closed kinematic chain is a tree plus closures (data only; docs/guide/trees.md).

A :class:`Loop` closes the tree between two links (or a link and the base): a closing joint whose frame sits at
``placements[0]`` in the first link's frame and at ``placements[1]`` in the second's (the two frames coincide,
up to the joint's own motion, whenever the loop is closed), of type ``revolute`` or ``prismatic`` (about or along
``axis``, given in the closing frame; z by default), ``spherical`` or ``weld``. The robot's ``actuated`` joints
(:class:`~robodyn.model.Manipulator`) are its coordinates; every other joint of a loop is passive, its angle
fixed by the closures. How a loop is eliminated (today: parallelograms, as linear couplings) is
:mod:`robodyn.model.parallelograms`.

Here every field is checked, and each refusal is one line naming the loop and the field: an unknown link, a loop
between a link and itself or its own parent (one joint between them: nothing to close), an unknown joint type, a
zero or malformed axis, a placement that is not a proper rigid transform (a 4x4, or ``{xyz: [x, y, z], rpy:
[roll, pitch, yaw]}`` as URDF's ``<origin>``: R = Rz(yaw) Ry(pitch) Rx(roll)).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from robodyn.errors import ModelError
from robodyn.model.expr import check_name, shown, to_expr
from robodyn.model.link import _as_placement

#: The closing joint types and their degrees of freedom (a joint of f degrees imposes 6 - f constraints in space,
#: 3 - f in a plane).
JOINT_TYPES: dict[str, int] = {"revolute": 1, "prismatic": 1, "spherical": 3, "weld": 0}
_IDENTITY = sympy.ImmutableMatrix.eye(4)


@dataclass(frozen=True)
class Loop:
    """One loop closure. ``links``: the two links it closes, 0-based indices (-1: the base) or link names
    ("base": the base); ``placements``: the closing joint's frame on each (a 4x4, ``{xyz, rpy}`` or None for the
    link's own frame); ``joint``: revolute, prismatic, spherical or weld; ``axis``: a revolute or prismatic
    joint's axis in the closing frame; ``name``: for messages (default ``loop<k>``, k from 1)."""

    links: Any
    placements: Any = (None, None)
    joint: str = "revolute"
    axis: Any = (0, 0, 1)
    name: str = ""
    #: A four-bar's assembly branch (:mod:`robodyn.model.fourbars`): +1 or -1, "reference" (the branch of the
    #: reference configuration; None: the same) or "other".
    branch: Any = None
    #: The reference configuration of a four-bar's branch: joint angles of the tree (link name or index -> angle;
    #: the joints not given at 0), at which the loop closes; () for the tree's q = 0.
    reference: Any = ()

    def subs(self, mapping: Any) -> Loop:
        return Loop(self.links, tuple(p.subs(mapping) for p in self.placements), self.joint,
                    tuple(a.subs(mapping) for a in self.axis), self.name, self.branch,
                    tuple((k, v.subs(mapping)) for k, v in self.reference))

    @property
    def dof(self) -> int:
        """The closing joint's degrees of freedom."""
        return JOINT_TYPES[self.joint]

    def expressions(self) -> Iterable[sympy.Expr]:
        for placement in self.placements:
            yield from placement
        yield from self.axis


def _refuse(loop: str, what: str, problem: str) -> ModelError:
    return ModelError(f"loop {loop!r}: {what}: {problem}", field="loops")


def _link(entry: object, names: dict[str, int], n: int, loop: str) -> int:
    """One end of a loop: a name ("base": the base) or a 0-based index (-1: the base)."""
    if isinstance(entry, str):
        if entry == "base":
            return -1
        if entry not in names:
            raise _refuse(loop, "links", f"no link is named {shown(entry)}")
        return names[entry]
    if isinstance(entry, bool) or not isinstance(entry, int) or not -1 <= entry < n:
        raise _refuse(loop, "links", f"{shown(entry)} is not a link index (0 to {n - 1}, -1 for the base) or a "
                                     "link name")
    return entry


def rpy_transform(xyz: Any, rpy: Any, where: str = "placement") -> sympy.ImmutableMatrix:
    """The 4x4 of URDF's ``<origin xyz rpy>``: Trans(xyz) Rz(yaw) Ry(pitch) Rx(roll)."""
    for value, key in ((xyz, "xyz"), (rpy, "rpy")):
        if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != 3:
            raise ModelError(f"{key}: expected three numbers", field=where)
    x, y, z = (to_expr(v, f"{where}.xyz") for v in xyz)
    r, p, w = (to_expr(v, f"{where}.rpy") for v in rpy)
    Rx = sympy.Matrix([[1, 0, 0], [0, sympy.cos(r), -sympy.sin(r)], [0, sympy.sin(r), sympy.cos(r)]])
    Ry = sympy.Matrix([[sympy.cos(p), 0, sympy.sin(p)], [0, 1, 0], [-sympy.sin(p), 0, sympy.cos(p)]])
    Rz = sympy.Matrix([[sympy.cos(w), -sympy.sin(w), 0], [sympy.sin(w), sympy.cos(w), 0], [0, 0, 1]])
    T = sympy.eye(4)
    T[:3, :3] = Rz * Ry * Rx
    T[:3, 3] = sympy.Matrix([x, y, z])
    return sympy.ImmutableMatrix(T)


def _placement(value: object, loop: str, k: int) -> sympy.ImmutableMatrix:
    what = f"placements[{k}]"
    if value is None:
        return _IDENTITY
    try:
        if isinstance(value, Mapping):
            unknown = sorted(set(map(str, value)) - {"xyz", "rpy"})
            if unknown:
                raise ModelError(f"unknown key {shown(unknown[0])} (expected xyz, rpy)")
            value = rpy_transform(value.get("xyz", (0, 0, 0)), value.get("rpy", (0, 0, 0)), what)
        return _as_placement(value)
    except ModelError as exc:
        raise _refuse(loop, what, exc.problem) from None


def _axis(value: object, joint: str, loop: str) -> tuple[sympy.Expr, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != 3:
        raise _refuse(loop, "axis", "expected three numbers")
    try:
        axis = tuple(to_expr(v, "axis") for v in value)
    except ModelError as exc:
        raise _refuse(loop, "axis", exc.problem) from None
    if all(a.is_number and a == 0 for a in axis) and joint in ("revolute", "prismatic"):
        raise _refuse(loop, "axis", "a zero axis")
    return axis


def check_loop(value: object, k: int, names: dict[str, int], parents: Sequence[int]) -> Loop:
    """One loop checked: links as indices (-1: the base), placements as 4x4 transforms, the axis as expressions."""
    if isinstance(value, Mapping):
        try:
            value = Loop(**value)
        except TypeError as exc:
            raise ModelError(f"loop {k + 1}: {str(exc).replace('__init__() ', '')}", field="loops") from None
    if not isinstance(value, Loop):
        raise ModelError(f"loop {k + 1}: expected a Loop, got {type(value).__name__}", field="loops")
    name = f"loop{k + 1}" if value.name is None or value.name == "" else value.name
    try:
        check_name(name, "name")
    except ModelError as exc:
        raise ModelError(f"loop {k + 1}: name: {exc.problem}", field="loops") from None
    ends = value.links
    if isinstance(ends, str) or not isinstance(ends, Sequence) or len(ends) != 2:
        raise _refuse(name, "links", "expected two links (names, or indices; the base: -1 or 'base')")
    a, b = (_link(e, names, len(parents), name) for e in ends)
    if a == b:
        raise _refuse(name, "links", f"a loop between {_label(a, names)} and itself (no joint between them)")
    if (a >= 0 and parents[a] == b) or (b >= 0 and parents[b] == a):
        child = a if a >= 0 and parents[a] == b else b
        raise _refuse(name, "links", f"a loop between {_label(child, names)} and its own parent closes over one "
                                     "joint only")
    if not isinstance(value.joint, str) or value.joint not in JOINT_TYPES:
        raise _refuse(name, "joint", f"{shown(value.joint)} is not one of {', '.join(JOINT_TYPES)}")
    placements = value.placements
    if placements is None:
        placements = (None, None)
    if isinstance(placements, str | Mapping) or not isinstance(placements, Sequence) or len(placements) != 2:
        raise _refuse(name, "placements", "expected two placements (one on each link)")
    branch = value.branch
    if branch is not None and not (branch in (1, -1) and not isinstance(branch, bool)) and \
            branch not in ("reference", "other"):
        raise _refuse(name, "branch", f"{shown(branch)} is not +1, -1, reference or other")
    return Loop((a, b), tuple(_placement(p, name, i) for i, p in enumerate(placements)), value.joint,
                _axis(value.axis, value.joint, name), name, None if branch is None else branch,
                _reference(value.reference, names, len(parents), name))


def _reference(value: object, names: dict[str, int], n: int, loop: str) -> tuple[tuple[int, sympy.Expr], ...]:
    """A four-bar's reference configuration: (link index, angle) pairs from a mapping of link names or indices."""
    if value is None or (isinstance(value, tuple) and not value):
        return ()
    pairs = list(value.items()) if isinstance(value, Mapping) else value
    if isinstance(pairs, str) or not isinstance(pairs, Sequence) or \
            any(isinstance(p, str) or not isinstance(p, Sequence) or len(p) != 2 for p in pairs):
        raise _refuse(loop, "reference", "expected a mapping of joints (link names or indices) to angles")
    out = []
    for key, angle in pairs:
        if isinstance(key, str) and key not in names:
            raise _refuse(loop, "reference", f"no link is named {shown(key)}")
        k = _link(key, names, n, loop)
        if k < 0:
            raise _refuse(loop, "reference", f"{shown(key)} is not a joint")
        try:
            out.append((k, to_expr(angle, "reference")))
        except ModelError as exc:
            raise _refuse(loop, "reference", exc.problem) from None
    return tuple(out)


def _label(k: int, names: dict[str, int]) -> str:
    if k < 0:
        return "the base"
    named = [name for name, index in names.items() if index == k]
    return f"link {named[0]!r}" if named else f"link {k + 1}"


def check_loops(value: object, link_names: Sequence[str], parents: Sequence[int]) -> tuple[Loop, ...]:
    """``loops`` checked: () for none, else Loops with their links as indices; names distinct."""
    if value is None:
        return ()
    if isinstance(value, str | Loop | Mapping) or not isinstance(value, Iterable):
        raise ModelError("expected a sequence of Loops", field="loops")
    entries = list(value)
    if len(entries) > len(link_names):  # each closure fixes at least one passive joint: refused before any geometry
        raise ModelError(f"{len(entries)} loop closures on {len(link_names)} links: the closures would fix more "
                         "joints than there are", field="loops")
    names = {name: k for k, name in enumerate(link_names) if name}
    out = tuple(check_loop(entry, k, names, parents) for k, entry in enumerate(entries))
    seen: set[str] = set()
    for loop in out:
        if loop.name in seen:
            raise _refuse(loop.name, "name", "two loops have this name")
        seen.add(loop.name)
    return out


def check_actuated(value: object, link_names: Sequence[str]) -> tuple[int, ...]:
    """``actuated``: link indices or names, to sorted 0-based indices; () for none."""
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ModelError("expected a list of joints (link names or indices)", field="actuated")
    names = {name: k for k, name in enumerate(link_names) if name}
    n = len(link_names)
    out: set[int] = set()
    for entry in value:
        if isinstance(entry, str):
            if entry not in names:
                raise ModelError(f"no link is named {shown(entry)}", field="actuated")
            k = names[entry]
        elif isinstance(entry, bool) or not isinstance(entry, int) or not 0 <= entry < n:
            raise ModelError(f"{shown(entry)} is not a link index (0 to {n - 1}) or a link name", field="actuated")
        else:
            k = entry
        if k in out:
            raise ModelError(f"joint {link_names[k] or k + 1} is listed twice", field="actuated")
        out.add(k)
    return tuple(sorted(out))


def loop_joints(loop: Loop, parents: Sequence[int]) -> tuple[list[int], int, list[int]]:
    """(the links from the first end up to the common ancestor, the ancestor (-1: the base), the links from the
    second end up to it): the tree joints of the loop are those of both lists."""
    a, b = loop.links

    def chain(k: int) -> list[int]:
        out = []
        while k >= 0:
            out.append(k)
            k = parents[k]
        return out

    up_a, up_b = chain(a), chain(b)
    common = set(up_a) & set(up_b)
    ancestor = next((k for k in up_a if k in common), -1)
    return ([k for k in up_a if k not in common], ancestor, [k for k in up_b if k not in common])


def open_tree(robot: Any) -> Any:
    """``robot`` without its loop closures: the tree, with the couplings given as such (none derived from a
    loop) and no actuated list."""
    return robot.replace(loops=(), actuated=(), couplings=tuple(c for c in robot.couplings if not c.loop))


__all__ = ["JOINT_TYPES", "Loop", "check_actuated", "check_loops", "loop_joints", "open_tree", "rpy_transform"]

"""URDF import and export for serial chains and kinematic trees.

``rd.load("arm.urdf")`` (or :func:`read_urdf`) reads a URDF file (its XML with lxml, safely, into plain
records: :mod:`robodyn.formats.urdf_xml`; meshes are never read) and builds a
:class:`~robodyn.model.manipulator.Manipulator`:

- joints ``revolute``, ``continuous`` (the same for dynamics; limits are ignored), ``prismatic`` and ``fixed``;
  any joint ``origin`` and ``axis``. ``lock={"finger_joint": 0.0}`` (``--lock finger_joint=0`` on the command
  line) turns moving joints into fixed ones at the given position (rad or m).
- A fixed joint merges its child's inertia into its parent (masses, centres of mass and tensors combine
  exactly by the parallel-axis theorem); whatever is fixed to the root is the base and carries no dynamics.
- After merging, each moving joint is a link of the robot, and its ``parent`` is the link of the nearest moving
  joint above it (the base when there is none): a serial chain, or a kinematic tree (legs, arms and fingers of a
  humanoid). The links are listed depth-first from the root, each joint followed by its whole subtree before its
  next sibling (so a parent always comes before its children), siblings sorted by joint name (by code point, as
  C++ compares UTF-8 bytes): Pinocchio's order, whose ``buildModelFromUrdf`` walks the tree through urdfdom, which
  lists a link's child joints from its ``std::map`` of joints, by name. Fixed joints take their place in that
  walk (a moving joint below a fixed one comes where Pinocchio meets it), so with no joint locked Pinocchio's
  ``model.names[1:]`` are the robot's :attr:`~robodyn.model.Manipulator.joint_names`, in order (a ``continuous``
  joint has two coordinates in Pinocchio's q, cos and sin, one here). A link with two parents (a closed chain),
  a second root, or links not connected to the root (a loop) is a one-line :class:`~robodyn.errors.ModelError`.
- Frames: robodyn's frame of link k is the URDF child link frame of joint k, rotated (by R_a, about the origin)
  so that the joint axis is its z axis (R_a = I when the axis is +z). The fixed transform from the frame of
  link p = parent(k) to frame k at q = 0, P_k = R_{a,p}^T T(p's child link <- joint origin) R_{a,k} (R_{a,p} = I
  and the root link's frame for the base), becomes a modified-DH row (alpha, a, theta, d) when it has that form
  (R e_x . e_z = 0 and its translation lies in the plane of x and the new z axis) and is otherwise kept exactly
  as the row's ``placement`` (A_k = P_k Rot(z, q) or Trans(z, q)); nothing is approximated. Angles within 1e-9
  rad of a multiple of 90 degrees, and rotation entries within 1e-9 of 0 or +-1, are read as exact (URDF files
  write pi/2 as 1.5707963 or 1.57079632679); ``snap=False`` keeps the literal numbers.
- ``<dynamics damping>`` becomes the link's viscous ``damping`` (tau += damping qd) and ``<dynamics friction>``
  its Coulomb friction ``coulomb`` = [f, -f] (tau += f sign(qd), 0 at rest), both on the joint side, as
  Pinocchio reads them into ``model.damping`` and ``model.friction`` (which its ``rnea`` leaves out);
  ``friction="ignore"`` (``--friction ignore``) drops the friction. Gravity is ``(0, 0, -9.81)`` unless given.
- Names: the robot's name is the ``<robot name>`` mapped to robodyn's name grammar
  (:func:`robodyn.model.expr.to_identifier`: ``"ur5-e (v2)"`` gives ``ur5_e_v2``); each link's ``name`` is its
  joint's URDF name mapped the same way (prefix ``joint``; :func:`distinct_names`: two names that map to the
  same identifier, or to ``base``, the base's name in model files, get ``_2``, ``_3``... in list order). The
  original joint names, as the file spells them, are the robot's ``joint_names`` (data, never printed into
  code: :meth:`~robodyn.model.Manipulator.q_from` maps a ``joint_states`` message or a dict of them to q, and
  :meth:`~robodyn.model.Manipulator.named` back); the ``description`` repeats them with the robot's name.

- ``mimic`` joints (q_j = multiplier q_i + offset) are coupled coordinates by default (``mimic="couple"``): the
  joint stays a link of the tree and the robot gets a :class:`~robodyn.model.couplings.Coupling`, so that its q,
  qd, tau, M are those of the independent joints (``robot.nv`` of them; the Panda has 8), as Pinocchio's
  ``buildModelFromUrdf(path, mimic=True)``. ``mimic="independent"`` reads them as independent joints (Pinocchio's
  default; a :class:`~robodyn.errors.ModelWarning` names the joints whose relation is dropped) and
  ``mimic="refuse"`` refuses them. A joint that mimics a fixed or locked joint is refused (lock it too).

- Loop closures (:mod:`robodyn.model.loops`): Drake's ``<loop_joint>`` (also read by RigidBodyDynamics.jl and
  Isaac Sim) and URDF+'s ``<loop>`` (Chignoli et al. 2024), read by :mod:`robodyn.formats.urdf_xml`, become the
  robot's ``loops``: the closing joint's frame on each URDF link is moved into robodyn's frame of the link it is
  fixed to (the base for links fixed to the root), exact as a link's placement (``snap``); type ``revolute`` or
  ``continuous`` (a revolute closing joint), ``prismatic``, ``fixed`` (a weld), ``spherical`` or ``ball``. The
  actuated joints (the robot's coordinates; the other joints of each loop are passive and follow them) are, in
  this order of precedence: ``actuated=[...]`` (URDF joint names, ``rd.load(path, actuated=[...])``), else the
  joints marked URDF+ ``independent="true"``, else the joints a ``<transmission>`` drives; with each of these, every
  moving joint that is in no loop (and not a mimic joint) is actuated too. A file with loops and none of these is
  refused in one line saying so. How loops are eliminated (today: parallelograms, exactly, as linear couplings;
  any other loop is refused in one line) is :mod:`robodyn.model.parallelograms`.

``planar`` joints are Pinocchio's ``JointModelPlanar`` (a link's ``joint`` planar, :mod:`robodyn.model.joints`: q
(x, y, cos theta, sin theta) in the joint frame's xy plane, nv 3), read where their axis is the joint frame's z
(0 0 1); another axis (Pinocchio ignores it), a locked or a mimic planar joint are refused in one line.

``root="forearm"`` reads the subtree of that URDF link only (the link is then the base; the other links, and the
joints, loops and transmissions among them, are left out). A xacro file (``.xacro``, or a ``.urdf`` using xacro
macros) is expanded in memory first, with ``xacro_args`` and ``package_paths`` (:mod:`robodyn.formats.urdf_xacro`).

Not supported, each a one-line ModelError naming the joint: ``floating`` joints (a humanoid's URDF
with a floating root joint is refused, and loads once that joint is removed). A floating base is asked for instead
by ``floating=True`` (:func:`read_urdf`): the root link then moves on a free joint, with its inertia (numeric
engine only so far).

Errors in the file (not XML, unknown or missing links, a joint whose parent is its child, unsupported joint
types, a zero axis, negative masses, an ``<inertial>`` without ``<mass value>`` or without all six
inertia attributes, numbers that do not parse or are not finite) are one-line ModelErrors naming the file, the
joint or link and the attribute; NumPy's floating-point warnings are silenced while reading.

:func:`to_urdf` (and :func:`write_urdf` for a file) writes a robot (chain or tree) with numeric inertial data
as URDF: the root link ``base_link``; per robodyn link a joint (``continuous`` or ``prismatic``) and its child
link (the numeric engine's joint frame: z along the joint axis), the joint named after the robot's
``joint_names`` (its source's names, else the link's ``name``, else ``joint<i>``) and the link after the link's
``name`` (else ``link<i>``), the joint's parent the URDF link of the robodyn parent; and a fixed ``tool`` joint
to ``tool0`` at the last link's frame times the robot's tool; damping and Coulomb friction as ``<dynamics damping
friction>`` (an uneven pair [Tc+, Tc-] as (Tc+ - Tc-)/2, with a warning). URDF has no armature, joint springs, tip
load or gravity: they are left out with a warning. :func:`read_urdf` of the file gives back the same dynamics and
names (of a tree whose sibling joints are not in name order, in the order read here).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from pathlib import Path
from typing import Any

import numpy as np
import sympy

from robodyn.errors import ModelError, ModelWarning, did_you_mean, printable
from robodyn.formats.frames import (
    Body,
    JointFrame,
    axis_rotation,
    dh_row,
    frame_placement,
    manipulator_from_frames,
    unique_names,
)
from robodyn.formats.urdf_xml import read_robot
from robodyn.model.couplings import Coupling
from robodyn.model.expr import MAX_MAGNITUDE, check_name, to_identifier
from robodyn.model.files import atomic_write
from robodyn.model.floats import bound_floats
from robodyn.model.frames import Frame
from robodyn.model.inertia import check_inertia
from robodyn.model.loops import Loop, loop_joints
from robodyn.model.manipulator import MAX_LINKS, Manipulator
from robodyn.model.spatial import homogeneous, joint_screw, link_transforms

SUPPORTED = ("revolute", "continuous", "prismatic", "fixed")


# -- reading ----------------------------------------------------------------------------------------
# The XML is read into plain records by robodyn.formats.urdf_xml (lxml only); from here on, the manipulator.


def _floats(values: Any, count: int, where: str, shown: str, what: str) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float).reshape(count)
    except (TypeError, ValueError):
        raise ModelError(f"expected {count} numbers", file=shown, link=where, field=what) from None
    if not np.all(np.isfinite(array)):
        raise ModelError("not a finite number", file=shown, link=where, field=what)
    if np.max(np.abs(array), initial=0.0) > MAX_MAGNITUDE:
        raise ModelError(f"a number of magnitude above {MAX_MAGNITUDE:g}", file=shown, link=where, field=what)
    return array


def _origin(element: Any, where: str, shown: str) -> np.ndarray:
    origin = getattr(element, "origin", None)
    if origin is None:
        return np.eye(4)
    T = _floats(origin, 16, where, shown, "origin").reshape(4, 4)
    return T


def _inertial(link: Any, shown: str) -> Body:
    inertial = link.inertial
    where = f"link '{link.name}'"
    if inertial is None:
        return Body()
    mass = 0.0 if inertial.mass is None else float(_floats(inertial.mass, 1, where, shown, "mass")[0])
    if mass < 0:
        raise ModelError(f"mass {mass} is negative", file=shown, link=where, field="mass")
    inertia = np.zeros((3, 3)) if inertial.inertia is None else _floats(inertial.inertia, 9, where, shown,
                                                                        "inertia").reshape(3, 3)
    T = _origin(inertial, where, shown)
    try:  # each URDF link on its own: a merged body could hide one link's violation or noise (the triangle
        # inequality: checked on the merged body)
        check_inertia(inertia, mass=mass, field="inertia", where=f"{shown}: {where}", triangle=False)
    except ModelError as exc:
        raise ModelError(exc.problem, file=shown, link=where, field=exc.field) from None
    body = Body.from_com(mass, np.zeros(3), inertia)
    return body.moved(T)


@dataclass
class _Tree:
    """The moving joints (depth-first, siblings by joint name: Pinocchio's order), per joint the index of the
    nearest moving joint above it (-1: the base), and the groups of links fixed to one another: groups[0] the
    base's, groups[k + 1] the one joints[k] moves, each a list of (URDF link name, transform from the group's
    root link)."""

    joints: list[Any]
    parents: list[int]
    groups: list[list[tuple[str, np.ndarray]]]


def _links_and_joints(robot: Any, lock: Mapping[str, float], shown: str) -> tuple[str, dict[str, list[Any]]]:
    """The root link and, per link, the joints leaving it (file order), after checking names, joint types and
    that the links form one tree."""
    links: dict[str, Any] = {}
    for link in robot.links:
        if link.name in links:
            raise ModelError("defined twice", file=shown, link=f"link '{link.name}'")
        links[link.name] = link
    names: set[str] = set()
    parent_of: dict[str, Any] = {}
    children: dict[str, list[Any]] = {name: [] for name in links}
    for joint in robot.joints:
        where = f"joint '{joint.name}'"
        if joint.name in names:
            raise ModelError("defined twice", file=shown, link=where)
        names.add(joint.name)
        if joint.type not in SUPPORTED and joint.type not in ("floating", "planar"):
            raise ModelError(f"unknown joint type {joint.type!r} (expected one of {', '.join(SUPPORTED)})",
                             file=shown, link=where, field="type")
        if joint.type == "floating":
            raise ModelError(f"{joint.type} joints are not supported (robodyn's base is fixed; joints "
                             f"{', '.join(SUPPORTED)} only)", file=shown, link=where, field="type")
        if joint.type == "planar":
            _planar_axis(joint, shown)
            if joint.name in lock or getattr(joint, "mimic", None) is not None:
                raise ModelError(f"a planar joint cannot be {'locked' if joint.name in lock else 'a mimic joint'} "
                                 "(it has three coordinates)", file=shown, link=where)
        for end in (joint.parent, joint.child):
            if end not in links:
                raise ModelError(f"refers to link {end!r}, which is not defined", file=shown, link=where)
        if joint.child in parent_of:
            raise ModelError(f"closed chain: it is the child of joints {parent_of[joint.child].name!r} and "
                             f"{joint.name!r}", file=shown, link=f"link '{joint.child}'")
        parent_of[joint.child] = joint
        children[joint.parent].append(joint)
    unknown = sorted(set(lock) - names)
    if unknown:
        raise ModelError(f"lock names joint {unknown[0]!r}, which is not defined", file=shown)
    roots = [name for name in links if name not in parent_of]
    if len(roots) != 1:
        detail = "no root (the joints form a loop)" if not roots else f"several roots: {', '.join(roots)}"
        raise ModelError(f"not one tree: {detail}", file=shown)
    return roots[0], children


def _tree(robot: Any, lock: Mapping[str, float], shown: str, mimic: str = "refuse", floating: bool = False) -> _Tree:
    """Merge the links fixed to one another (fixed and locked joints) into groups and list the moving joints
    between the groups depth-first, each joint's subtree before its next sibling, siblings sorted by joint name:
    Pinocchio's order (urdfdom lists a link's child joints from its std::map of joints, by name), fixed joints
    taking their place in it as Pinocchio's reader walks them."""
    root, children = _links_and_joints(robot, lock, shown)
    order: dict[int, int] = {}  # each joint's place in the depth-first walk of all joints, fixed ones included
    pending = sorted(children[root], key=lambda joint: joint.name, reverse=True)
    while pending:
        joint = pending.pop()
        order[id(joint)] = len(order)
        pending.extend(sorted(children[joint.child], key=lambda joint: joint.name, reverse=True))

    def moving(joint: Any) -> bool:
        return joint.type != "fixed" and joint.name not in lock

    def group(start: str) -> tuple[list[tuple[str, np.ndarray]], list[Any]]:
        """Links fixed to ``start`` (with their transforms) and the moving joints leaving them, in walk order."""
        members, leaving, stack = [], [], [(start, np.eye(4))]
        while stack:
            name, T = stack.pop()
            members.append((name, T))
            for joint in children[name]:
                if moving(joint):
                    leaving.append(joint)
                else:
                    stack.append((joint.child, T @ _joint_motion(joint, lock.get(joint.name, 0.0), shown)))
        return members, sorted(leaving, key=lambda joint: order[id(joint)])

    tree = _Tree([], [], [])
    members, leaving = group(root)
    tree.groups.append(members)
    stack = [(joint, -1) for joint in reversed(leaving)]
    while stack:
        joint, parent = stack.pop()
        if getattr(joint, "mimic", None) is not None and mimic == "refuse":
            raise ModelError(f"a mimic joint (it follows joint {joint.mimic.joint!r}), refused (mimic='refuse'): "
                             "lock it (lock=, --lock), or read it coupled (the default) or independent "
                             "(mimic='independent', --mimic independent)",
                             file=shown, link=f"joint '{joint.name}'", field="mimic")
        tree.joints.append(joint)
        tree.parents.append(parent)
        members, leaving = group(joint.child)
        tree.groups.append(members)
        stack.extend((child, len(tree.joints) - 1) for child in reversed(leaving))
    reached = {name for members in tree.groups for name, _ in members}
    loop = [link.name for link in robot.links if link.name not in reached]
    if loop:
        raise ModelError(f"not one tree: links {', '.join(map(repr, loop[:3]))} are not connected to the root "
                         f"{root!r} (their joints form a loop)", file=shown)
    if not tree.joints and not floating:  # (a floating base is the drone's one moving joint)
        raise ModelError("no moving joint (revolute, continuous or prismatic)", file=shown)
    if len(tree.joints) > MAX_LINKS:
        raise ModelError(f"{len(tree.joints)} moving joints: at most {MAX_LINKS} are accepted", file=shown)
    return tree


def _joint_motion(joint: Any, value: float, shown: str) -> np.ndarray:
    """origin * motion(value) of a fixed or locked joint."""
    where = f"joint '{joint.name}'"
    T = _origin(joint, where, shown)
    if joint.type == "fixed" or value == 0.0:
        return T
    axis = _axis(joint, shown)
    if joint.type == "prismatic":
        return T @ homogeneous(np.eye(3), axis * value)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    R = np.eye(3) + math.sin(value) * K + (1 - math.cos(value)) * K @ K
    return T @ homogeneous(R, np.zeros(3))


def _axis(joint: Any, shown: str) -> np.ndarray:
    where = f"joint '{joint.name}'"
    axis = np.array([1.0, 0.0, 0.0]) if joint.axis is None else _floats(joint.axis, 3, where, shown, "axis")
    norm = float(np.linalg.norm(axis))
    if norm < 1e-12:
        raise ModelError("the joint axis is zero", file=shown, link=where, field="axis")
    return axis / norm


def _planar_axis(joint: Any, shown: str) -> np.ndarray:
    """A planar joint's axis, the normal of its plane: the joint frame's z (0 0 1) only (Pinocchio's
    ``JointModelPlanar`` moves in its frame's xy plane whatever the axis)."""
    axis = _axis(joint, shown)
    if not np.allclose(axis, [0.0, 0.0, 1.0], rtol=0.0, atol=1e-12):
        raise ModelError(f"a planar joint's axis must be its frame's z (0 0 1), got {' '.join(f'{a:g}' for a in axis)}"
                         " (turn the joint's origin instead)", file=shown, link=f"joint '{joint.name}'", field="axis")
    return axis


def _damping(joint: Any, shown: str) -> float:
    return _dynamics(joint, "damping", shown)


def _dynamics(joint: Any, field: str, shown: str) -> float:
    """The joint's ``<dynamics>`` ``damping`` or ``friction`` (0 where absent), at least 0."""
    value = getattr(getattr(joint, "dynamics", None), field, None)
    if value is None:
        return 0.0
    where = f"joint '{joint.name}'"
    number = float(_floats(value, 1, where, shown, field)[0])
    if number < 0:
        raise ModelError(f"{field} {number} is negative", file=shown, link=where, field=field)
    return number


#: How :func:`read_urdf` reads a mimic joint: as a coupled coordinate (the default, as Pinocchio's ``mimic=True``),
#: as an independent joint (the relation dropped, as Pinocchio's default), or not at all (an error).
MIMIC = ("couple", "independent", "refuse")
#: How :func:`read_urdf` reads ``<dynamics friction>``: as the link's Coulomb friction (the default), or not at all.
FRICTION = ("coulomb", "ignore")


def read_urdf(
    path: str | Path,
    *,
    strict: bool = False,
    lock: Mapping[str, float] | None = None,
    gravity: Any = (0, 0, -9.81),
    snap: bool = True,
    mimic: str = "couple",
    actuated: Sequence[str] | None = None,
    floating: bool | None = None,
    friction: str = "coulomb",
    root: str | None = None,
    xacro_args: Mapping[str, Any] | None = None,
    package_paths: Sequence[str | Path] | None = None,
) -> Manipulator:
    """A manipulator (a serial chain or a tree) from a URDF file (see the module docstring). ``lock`` fixes the
    named moving joints at the given positions (rad or m); ``gravity`` is the acceleration of gravity in the
    root link's frame; ``mimic``: ``"couple"`` (a mimic joint is a coupled coordinate, the default),
    ``"independent"`` (read as an ordinary joint, with a warning) or ``"refuse"`` (a mimic joint is an error);
    ``actuated``: the actuated joints (URDF names) of a file with loop closures (see the module docstring);
    ``friction``: ``"coulomb"`` (the default: ``<dynamics friction>`` is the link's Coulomb friction, [f, -f]) or
    ``"ignore"``; ``root``: the URDF link whose subtree is read (the file's root by default; the other links are
    left out); ``xacro_args`` and ``package_paths``: a xacro file's arguments and where its packages are
    (:mod:`robodyn.formats.urdf_xacro`).

    The links are the moving joints, depth-first from the root: each joint is followed by its whole subtree
    before its next sibling, siblings sorted by joint name (Pinocchio's order); link i's ``parent`` is the nearest
    moving joint above it (-1: the base).

    ``floating=True`` puts a free joint at the root (Pinocchio's ``JointModelFreeFlyer``): the root link, and every
    link fixed to it, become the moving base with their inertia (a fixed base drops it), ``gravity`` is in the
    world frame, and a file with no moving joint (a drone) loads (docs/guide/floating.md: what handles such a
    robot); None (the default: the file decides, and a URDF's root is fixed) and False keep the root fixed."""
    path = Path(path)
    shown = str(path)
    if floating is not None and not isinstance(floating, bool):
        raise ModelError(f"floating must be None, True or False, got {type(floating).__name__}", file=shown)
    for name, value, allowed in (("mimic", mimic, MIMIC), ("friction", friction, FRICTION)):
        if value not in allowed:
            raise ModelError(f"{name}={value!r}: expected one of {', '.join(map(repr, allowed))}", file=shown)
    if root is not None and not isinstance(root, str):
        raise ModelError(f"root must be a link's name, got {type(root).__name__}", file=shown, field="root")
    locked = _lock_values(lock or {}, shown)
    chosen = _actuated_names(actuated, shown)
    robot = read_robot(path, shown, xacro_args, package_paths)
    if root is not None:
        robot = _subtree(robot, root, shown)
    if friction == "ignore":
        robot = dataclasses.replace(robot, joints=tuple(_frictionless(joint) for joint in robot.joints))
    # huge numbers may overflow in the geometry: the result is refused below, without NumPy's warning lines
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return _build(robot, path, shown, strict, locked, gravity, snap, mimic, chosen, bool(floating))


def _frictionless(joint: Any) -> Any:
    """The joint with no ``<dynamics friction>``."""
    if joint.dynamics is None or joint.dynamics.friction is None:
        return joint
    return dataclasses.replace(joint, dynamics=dataclasses.replace(joint.dynamics, friction=None))


def _subtree(robot: Any, root: str, shown: str) -> Any:
    """The robot record cut to the URDF link ``root`` and the links below it (by their joints), with the joints,
    loops and transmissions among them; a loop between the subtree and the rest is refused."""
    names = [link.name for link in robot.links]
    if root not in names:
        raise ModelError(f"root={root!r}: no such link{did_you_mean(root, names)}", file=shown, field="root")
    children: dict[str, list[Any]] = {}
    for joint in robot.joints:
        children.setdefault(joint.parent, []).append(joint)
    kept, pending = {root}, [root]
    while pending:
        for joint in children.get(pending.pop(), []):
            if joint.child not in kept:
                kept.add(joint.child)
                pending.append(joint.child)
    joints = tuple(joint for joint in robot.joints if joint.parent in kept and joint.child in kept)
    loops = []
    for loop in robot.loops:
        inside = [name in kept for name in loop.links]
        if any(inside) and not all(inside):
            raise ModelError(f"closes a loop between links {loop.links[0]!r} and {loop.links[1]!r}, one of them "
                             f"outside the subtree of root={root!r}", file=shown, link=f"{loop.element} '{loop.name}'")
        if all(inside):
            loops.append(loop)
    moving = {joint.name for joint in joints}
    return dataclasses.replace(robot, links=tuple(link for link in robot.links if link.name in kept), joints=joints,
                               loops=tuple(loops),
                               transmissions=tuple(name for name in robot.transmissions if name in moving))


def _actuated_names(actuated: Sequence[str] | None, shown: str) -> tuple[str, ...] | None:
    """``actuated`` checked: None, or URDF joint names (text), each once."""
    if actuated is None:
        return None
    if isinstance(actuated, str | bytes) or not isinstance(actuated, Iterable):
        raise ModelError(f"actuated must list joint names, got {type(actuated).__name__}", file=shown,
                         field="actuated")
    names = list(actuated)
    for name in names:
        if not isinstance(name, str):
            raise ModelError(f"a joint name must be text, got {type(name).__name__}", file=shown, field="actuated")
        if names.count(name) > 1:
            raise ModelError(f"joint {name!r} is listed twice", file=shown, field="actuated")
    return tuple(names)


def _lock_values(lock: Mapping[str, float], shown: str) -> dict[str, float]:
    """``lock`` checked: joint names (text) to finite real numbers."""
    if not isinstance(lock, Mapping):
        raise ModelError(f"lock must map joint names to positions, got {type(lock).__name__}", file=shown)
    out: dict[str, float] = {}
    for name, value in lock.items():
        if not isinstance(name, str):
            raise ModelError(f"lock: a joint name must be text, got {type(name).__name__}", file=shown)
        where = f"joint {name!r}"
        if isinstance(value, bool) or not isinstance(value, Real):
            raise ModelError(f"expected a number, got {type(value).__name__}", file=shown, link=where, field="lock")
        out[name] = float(_floats(value, 1, where, shown, "lock")[0])
    return out


def _build(robot: Any, path: Path, shown: str, strict: bool, lock: dict[str, float], gravity: Any,
           snap: bool, mimic: str, actuated: tuple[str, ...] | None = None, floating: bool = False) -> Manipulator:
    tree = _tree(robot, lock, shown, mimic, floating)
    dropped = [joint.name for joint in tree.joints if getattr(joint, "mimic", None) is not None]
    couplings = _mimic_couplings(tree, shown, {j.name for j in robot.joints}) if mimic == "couple" else ()
    if dropped and mimic == "independent":
        warnings.warn(f"{shown}: mimic relations dropped, independent joints: {', '.join(map(repr, dropped))}",
                      ModelWarning, stacklevel=4)
    links_by_name = {link.name: link for link in robot.links}
    frames = []
    for k, joint in enumerate(tree.joints):
        where = f"joint '{joint.name}'"
        p = tree.parents[k]
        body = Body()
        for name, T in tree.groups[k + 1]:
            body = body + _inertial(links_by_name[name], shown).moved(T)
        frames.append(JointFrame(name=joint.name, prismatic=joint.type == "prismatic",
                                 axis=_planar_axis(joint, shown) if joint.type == "planar" else _axis(joint, shown),
                                 parent=p, origin=dict(tree.groups[p + 1])[joint.parent] @ _origin(joint, where, shown),
                                 body=body, damping=_damping(joint, shown), where=f"link '{joint.child}'"))
    shape = "" if tree.parents == list(range(-1, len(frames) - 1)) else "a tree of "
    base = None  # a fixed base carries no dynamics; a floating one the bodies fixed to the root
    if floating:
        base = Body()
        for name, T in tree.groups[0]:
            base = base + _inertial(links_by_name[name], shown).moved(T)
        shape = f"a floating base and {shape}"
    built = manipulator_from_frames(
        frames, name=robot.name, gravity=gravity, snap=snap, strict=strict, shown=shown, base=base,
        description=f"imported from {path.name} (robot {robot.name!r}, {shape}{len(frames)} moving joints: "
                    f"{', '.join(j.name for j in tree.joints)})")
    built = _planar_links(built, [k for k, joint in enumerate(tree.joints) if joint.type == "planar"], shown)
    built = _coulomb_links(built, tree, shown)
    named = _named_frames(robot, tree, built, shown, snap)
    loops = _loops(robot, tree, shown, snap)
    if actuated is not None and not loops:
        raise ModelError("actuated joints are given, and the file has no loop closure (<loop_joint>, <loop>)",
                         file=shown, field="actuated")
    chosen = _actuated(robot, tree, loops, couplings, actuated, shown) if loops else ()
    with warnings.catch_warnings():  # the links were checked, and warned about, as the robot was built
        warnings.simplefilter("ignore", ModelWarning)
        try:
            return built.replace(couplings=couplings, frames=named, loops=loops, actuated=chosen)
        except ModelError as exc:
            raise exc.located(file=shown) from None


def _planar_links(built: Manipulator, planar: list[int], shown: str) -> Manipulator:
    """``built`` with the links of the file's planar joints made planar (each read as the revolute joint of its
    frame, its axis z: the frame is not turned)."""
    if not planar:
        return built
    links = tuple(link.replace(joint="planar") if k in planar else link for k, link in enumerate(built.links))
    try:
        return built.replace(links=links)
    except ModelError as exc:
        raise exc.located(file=shown) from None


def _coulomb_links(built: Manipulator, tree: _Tree, shown: str) -> Manipulator:
    """``built`` with each joint's ``<dynamics friction>`` f as its link's Coulomb friction [f, -f] (robodyn's
    tau += f sign(qd), Pinocchio's ``model.friction``); refused on a planar joint (three coordinates)."""
    values = [_dynamics(joint, "friction", shown) for joint in tree.joints]
    if not any(values):
        return built
    for joint, value in zip(tree.joints, values, strict=True):
        if value and joint.type == "planar":
            raise ModelError("Coulomb friction on a planar joint is not handled (three coordinates): read the file "
                             "with friction='ignore' (--friction ignore)", file=shown, link=f"joint '{joint.name}'",
                             field="friction")
    links = tuple(link.replace(coulomb=value) if value else link for link, value in zip(built.links, values,
                                                                                         strict=True))
    try:
        return built.replace(links=links)
    except ModelError as exc:
        raise exc.located(file=shown) from None


#: The loop joint types of Drake's ``<loop_joint>`` and URDF+'s ``<loop>`` as robodyn's closing joints.
LOOP_TYPES = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic", "fixed": "weld",
              "spherical": "spherical", "ball": "spherical"}
#: The tags of a loop element's two ends (for messages).
LOOP_ENDS = {"loop_joint": ("link1", "link2"), "loop": ("predecessor", "successor")}


def _loops(robot: Any, tree: _Tree, shown: str, snap: bool) -> tuple[Loop, ...]:
    """The file's loop elements as :class:`~robodyn.model.loops.Loop`s: each end the robodyn link its URDF link is
    fixed to (-1: the base) and the closing frame moved into that link's frame (turned by R_a^T, as a named
    frame), the axis as given (exact where it is within 1e-9 of -1, 0 or 1, ``snap``)."""
    if not robot.loops:
        return ()
    if len(robot.loops) > len(tree.joints):  # each closure fixes at least one passive joint: refused before the
        # geometry of thousands of closures is worked out
        raise ModelError(f"{len(robot.loops)} loop closures on {len(tree.joints)} moving joints: the closures "
                         "over-constrain the tree (each fixes at least one passive joint)", file=shown, field="loops")
    placed: dict[str, tuple[int, np.ndarray]] = {}
    for g, members in enumerate(tree.groups):
        Ra = np.eye(4) if g == 0 else homogeneous(axis_rotation(_axis(tree.joints[g - 1], shown)).T, np.zeros(3))
        for name, T in members:
            placed[name] = (g - 1, Ra @ T)
    out = []
    for loop in robot.loops:
        where = f"{loop.element} '{loop.name}'"
        if loop.type not in LOOP_TYPES:
            raise ModelError(f"unknown loop joint type {loop.type!r} (expected one of {', '.join(LOOP_TYPES)})",
                             file=shown, link=where, field="type")
        ends, placements = [], []
        for tag, name, origin in zip(LOOP_ENDS[loop.element], loop.links, loop.origins, strict=True):
            if name not in placed:
                raise ModelError(f"refers to link {name!r}, which is not defined", file=shown, link=where, field=tag)
            k, T = placed[name]
            P = np.eye(4) if origin is None else _floats(origin, 16, where, shown, f"{tag} origin").reshape(4, 4)
            ends.append(k)
            placements.append(sympy.ImmutableMatrix(frame_placement(T @ P, snap)))
        axis = _floats(loop.axis, 3, where, shown, "axis")
        norm = float(np.linalg.norm(axis))
        if norm < 1e-12:
            raise ModelError("the loop joint axis is zero", file=shown, link=where, field="axis")
        exact = tuple(_snapped(float(a), snap) for a in axis / norm)
        out.append(Loop(tuple(ends), tuple(placements), LOOP_TYPES[loop.type], exact,
                        to_identifier(loop.name, prefix="loop")))
    return tuple(out)


def _snapped(x: float, snap: bool) -> Any:
    """-1, 0 or 1 as integers where ``x`` is within 1e-9 of them (``snap``), else ``x``."""
    nearest = round(x)
    return int(nearest) if snap and nearest in (-1, 0, 1) and abs(x - nearest) < 1e-9 else x


def _actuated(robot: Any, tree: _Tree, loops: tuple[Loop, ...], couplings: tuple[Coupling, ...],
              actuated: tuple[str, ...] | None, shown: str) -> tuple[int, ...]:
    """The actuated joints (link indices) of a robot with loops: those named (``actuated``), else marked URDF+
    ``independent="true"``, else driven by a ``<transmission>``; and every moving joint in no loop that no
    coupling moves."""
    index = {joint.name: k for k, joint in enumerate(tree.joints)}
    coupled = {int(c.joint) for c in couplings}
    in_loops: set[int] = set()
    for loop in loops:
        up_a, _, up_b = loop_joints(loop, tree.parents)
        in_loops.update(up_a, up_b)
    if actuated is not None:
        for name in actuated:
            if name not in index:
                raise ModelError(f"no moving joint is named {name!r}", file=shown, field="actuated")
        named = [index[name] for name in actuated]
    elif any(joint.independent is not None for joint in tree.joints):
        named = [k for k, joint in enumerate(tree.joints) if joint.independent]
    elif any(name in index for name in robot.transmissions):
        named = [index[name] for name in robot.transmissions if name in index]
    else:
        raise ModelError("the file has loop closures and does not say which joints are actuated: give rd.load(..., "
                         "actuated=[joint names]), or mark them in the file (URDF+ independent=\"true\", or a "
                         "<transmission>)", file=shown, field="actuated")
    free = [k for k in range(len(tree.joints)) if k not in in_loops and k not in coupled]
    return tuple(sorted(set(named) | set(free)))


def _named_frames(robot: Any, tree: _Tree, built: Manipulator, shown: str, snap: bool) -> tuple[Frame, ...]:
    """Every URDF link as a named frame (:mod:`robodyn.model.frames`), fixed to the robodyn link whose group it
    belongs to (the base for those fixed to the root): a link at T in its group's root link frame (the child link
    of moving joint k) is at R_a^T T in robodyn's frame of link k (turned by R_a so that the joint moves about z),
    exact where it has exact numbers (the placements' rule, ``snap``). A URDF link named like a robodyn link (a
    joint's name) is left out: silently where it is that link's own frame (the files :func:`to_urdf` writes), else
    with a warning (the name answers the link's own frame)."""
    taken = {link.name: k for k, link in enumerate(built.links)}
    out, clashes = [], []
    for g, members in enumerate(tree.groups):
        Ra = np.eye(4) if g == 0 else homogeneous(axis_rotation(_axis(tree.joints[g - 1], shown)).T, np.zeros(3))
        for name, T in members:
            placement = sympy.ImmutableMatrix(frame_placement(Ra @ T, snap))
            if name in taken:  # the link's own frame already (as to_urdf writes them), or a clash
                if taken[name] != g - 1 or placement != sympy.eye(4):
                    clashes.append(name)
                continue
            out.append(Frame(name, g - 1, placement))
    if clashes:
        warnings.warn(f"{shown}: links named like a joint, not kept as named frames: "
                      f"{printable(', '.join(map(repr, clashes[:5])))}", ModelWarning, stacklevel=5)
    return tuple(out)


def _mimic_couplings(tree: _Tree, shown: str, defined: set[str]) -> tuple[Coupling, ...]:
    """The mimic joints as couplings (q_joint = multiplier q_leader + offset), by link index. A joint that mimics
    a joint the file does not define at all (example-robot-data's alex_psyonic_hands) is read as an independent
    joint, with a warning naming both, as Pinocchio's reader does without ``mimic=True``."""
    index = {joint.name: k for k, joint in enumerate(tree.joints)}
    out = []
    undefined = []
    for k, joint in enumerate(tree.joints):
        relation = getattr(joint, "mimic", None)
        if relation is None:
            continue
        where = f"joint '{joint.name}'"
        if relation.joint not in defined:
            undefined.append(f"{joint.name!r} (follows {relation.joint!r})")
            continue
        if relation.joint not in index:
            raise ModelError(f"it mimics joint {relation.joint!r}, which is not a moving joint (fixed, locked or "
                             "undefined): lock this one too, or read it with mimic='independent' (--mimic "
                             "independent)", file=shown, link=where, field="mimic")
        multiplier = 1.0 if relation.multiplier is None else _floats(relation.multiplier, 1, where, shown, "mimic")[0]
        offset = 0.0 if relation.offset is None else _floats(relation.offset, 1, where, shown, "mimic")[0]
        out.append(Coupling(k, index[relation.joint], _exact(float(multiplier)), _exact(float(offset))))
    if undefined:
        warnings.warn(f"{shown}: mimic joints of a joint the file does not define, read as independent joints: "
                      f"{printable(', '.join(undefined[:5]))}{' ...' if len(undefined) > 5 else ''}", ModelWarning,
                      stacklevel=5)
    return tuple(out)


def _exact(x: float) -> Any:
    """1.0, -1.0 and 0.0 as integers (so that the couplings of most mimic joints fold away in programs)."""
    return int(x) if x in (0.0, 1.0, -1.0) else x


# -- writing ----------------------------------------------------------------------------------------


def _fmt(values: Any) -> str:
    return " ".join(repr(float(x)) for x in np.asarray(values, dtype=float).ravel())


def _rpy(R: np.ndarray) -> np.ndarray:
    """Roll, pitch, yaw (URDF: R = Rz(yaw) Ry(pitch) Rx(roll))."""
    pitch = math.atan2(-R[2, 0], math.hypot(R[0, 0], R[1, 0]))
    if abs(math.cos(pitch)) < 1e-12:  # gimbal lock: put everything in yaw
        return np.array([0.0, pitch, math.atan2(-R[0, 1], R[1, 1])])
    return np.array([math.atan2(R[2, 1], R[2, 2]), pitch, math.atan2(R[1, 0], R[0, 0])])


def to_urdf(robot: Manipulator, params: Mapping[Any, Any] | None = None) -> str:
    """URDF text for ``robot`` (numeric data, or symbols bound by ``params``); see the module docstring."""
    from xml.etree import ElementTree as ET

    robot.check_one_dof("to_urdf (URDF has no spherical joint; planar ones are not written)")
    if robot.loops or any(len(c.leaders) != 1 for c in robot.couplings):  # URDF: a tree and one-leader mimics
        raise ModelError(f"{robot.name}: URDF has no loop closures nor couplings of several leaders (a mimic "
                         "follows one joint): save a model file instead", field="loops")
    floats = bound_floats(robot, params)
    if any(floats.scalar(link.armature) != 0 for link in robot.links):
        warnings.warn(f"{robot.name}: URDF has no armature (reflected rotor inertia); not written", ModelWarning,
                      stacklevel=2)
    if any(floats.scalar(link.stiffness) != 0 for link in robot.links):
        warnings.warn(f"{robot.name}: URDF has no joint springs (stiffness); not written", ModelWarning, stacklevel=2)
    if any(floats.scalar(x) != 0 for x in (*robot.tip_force, *robot.tip_moment)):
        warnings.warn(f"{robot.name}: URDF has no tip load; not written", ModelWarning, stacklevel=2)
    name = check_name(robot.name)  # an identifier: no "--" to end the comment below
    root = ET.Element("robot", name=name)
    root.append(ET.Comment(f" written by robodyn from {name} ({robot.convention} DH); gravity "
                           f"{_fmt([floats.scalar(x) for x in robot.gravity])} is not part of URDF "))
    ET.SubElement(root, "link", name="base_link")
    # URDF names: the joint's name (the source's, else the link's name, else joint<i>); link<i> for unnamed links
    joint_names = unique_names(list(robot.joint_names), ("tool",))  # the source's names, else the links' or joint<i>
    link_names = unique_names([link.name or f"link{i + 1}" for i, link in enumerate(robot.links)],
                              ("base_link", "tool0"))
    C_of: list[np.ndarray] = []  # per link: C_i, from the numeric engine's joint frame to frame i
    uneven = False  # Coulomb friction of different sizes by direction (URDF's friction is one number)
    for i, link in enumerate(robot.links):
        p = robot.parents[i]
        B, C = link_transforms(floats, robot.convention, link)
        origin = (C_of[p] if p >= 0 else np.eye(4)) @ B @ joint_screw(floats, link)
        body = Body()
        for b in robot.bodies(i):
            body = body + Body.from_com(floats.scalar(b.mass), floats.array(b.com, (3,)),
                                         floats.array(b.inertia, (3, 3))).moved(C)
        mass, com, inertia = body.com_form()
        element = ET.SubElement(root, "link", name=link_names[i])
        inertial = ET.SubElement(element, "inertial")
        ET.SubElement(inertial, "origin", xyz=_fmt(com), rpy="0.0 0.0 0.0")
        ET.SubElement(inertial, "mass", value=repr(float(mass)))
        entries = {f"i{'xyz'[r]}{'xyz'[c]}": repr(float(inertia[r, c])) for r, c in
                   ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))}
        ET.SubElement(inertial, "inertia", entries)
        joint = ET.SubElement(root, "joint", name=joint_names[i], type="continuous" if link.revolute else "prismatic")
        ET.SubElement(joint, "parent", link="base_link" if p < 0 else link_names[p])
        ET.SubElement(joint, "child", link=link_names[i])
        ET.SubElement(joint, "origin", xyz=_fmt(origin[:3, 3]), rpy=_fmt(_rpy(origin[:3, :3])))
        ET.SubElement(joint, "axis", xyz="0.0 0.0 1.0")
        if not link.revolute:
            ET.SubElement(joint, "limit", lower="-1000.0", upper="1000.0", effort="0.0", velocity="0.0")
        for coupling in (c for c in robot.couplings if c.joint == i):  # a coupled joint: URDF's mimic
            ET.SubElement(joint, "mimic", joint=joint_names[int(coupling.leaders[0][0])],
                          multiplier=repr(floats.scalar(coupling.ratio)), offset=repr(floats.scalar(coupling.offset)))
        damping = floats.scalar(link.damping)
        plus, minus = (floats.scalar(x) for x in link.coulomb)
        if damping or plus or minus:
            ET.SubElement(joint, "dynamics", damping=repr(float(damping)), friction=repr(float(plus - minus) / 2))
        uneven |= plus != -minus
        C_of.append(C)
    if uneven:
        warnings.warn(f"{robot.name}: URDF's friction is one size for both directions: Coulomb friction [Tc+, Tc-] "
                      "written as (Tc+ - Tc-)/2", ModelWarning, stacklevel=2)
    tool = C_of[-1] @ floats.array(robot.tool, (4, 4))
    ET.SubElement(root, "link", name="tool0")
    joint = ET.SubElement(root, "joint", name="tool", type="fixed")
    ET.SubElement(joint, "parent", link=link_names[-1])
    ET.SubElement(joint, "child", link="tool0")
    ET.SubElement(joint, "origin", xyz=_fmt(tool[:3, 3]), rpy=_fmt(_rpy(tool[:3, :3])))
    ET.indent(root)
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_urdf(robot: Manipulator, path: str | Path, params: Mapping[Any, Any] | None = None) -> Path:
    """Write :func:`to_urdf` text to ``path`` atomically."""
    return atomic_write(path, to_urdf(robot, params))


__all__ = ["axis_rotation", "dh_row", "read_urdf", "to_urdf", "write_urdf"]

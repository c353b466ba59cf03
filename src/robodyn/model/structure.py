"""A robot's structure, computed once: what kind of mechanism it is, for every door that dispatches on it.

:func:`structure` answers, per robot and cached with it (:class:`~robodyn.model.cache.PerRobotCache`), one frozen
:class:`Structure`:

- ``kind``: :data:`TREE` (a serial chain or a tree, its base fixed or floating, its joints of any type),
  :data:`PROJECTED` (a tree with couplings, the closed-form loops among them: four-bars and parallelograms, whose
  dynamics are the tree's projected on the independent coordinates, :mod:`robodyn.model.couplings`) or
  :data:`IMPLICIT` (loops that no elimination solves in closed form, whose constraints are solved numerically:
  :attr:`~robodyn.model.manipulator.Manipulator.implicit`);
- ``floating``: whether the base moves on a free joint;
- ``joints``: each link's joint type (``"R"``, ``"P"``, ``"S"``, ``"planar"``; sizes in
  :data:`robodyn.model.joints.JOINT_TYPES`), ``nq`` and ``nv``: the lengths of q and of its rates;
- the closure: ``couplings`` (given or derived from loops), ``loops``, the ``implicit`` ones' names.

A door (the numeric API, the program builder, simulation) picks its engine from a table keyed by ``kind`` and
:attr:`Structure.manifold`, and :func:`refuse` words, in one line, what an engine does not handle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from robodyn.errors import ModelError
from robodyn.model.cache import PerRobotCache
from robodyn.model.couplings import Coupling
from robodyn.model.joints import JOINT_TYPES
from robodyn.model.loops import Loop

#: A serial chain or a tree (fixed or floating base, joints of any type).
TREE = "tree"
#: A tree with couplings (gears, mimic joints, loops eliminated in closed form), projected on its independent
#: coordinates.
PROJECTED = "projected"
#: A tree with implicit loops, their constraints solved numerically.
IMPLICIT = "implicit"
KINDS = (TREE, PROJECTED, IMPLICIT)


@dataclass(frozen=True)
class Structure:
    """What kind of mechanism a robot is (see the module): computed once per robot by :func:`structure`."""

    name: str
    kind: str
    floating: bool
    #: Each link's joint type: "R", "P", "S" or "planar".
    joints: tuple[str, ...]
    nq: int
    nv: int
    couplings: tuple[Coupling, ...] = ()
    loops: tuple[Loop, ...] = ()
    #: The implicit loops' names.
    implicit: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        """The tree's joints (links)."""
        return len(self.joints)

    @property
    def multi_dof(self) -> tuple[int, ...]:
        """The links whose joint has several velocities (spherical, planar), 0-based."""
        return tuple(k for k, joint in enumerate(self.joints) if JOINT_TYPES[joint].nv > 1)

    @property
    def manifold(self) -> bool:
        """q is not a vector of the rates' space (nq != nv): a floating base, or a spherical or planar joint."""
        return self.nq != self.nv

    @property
    def four_bars(self) -> tuple[str, ...]:
        """The loops eliminated in closed form by a four-bar's nonlinear map (their names, in order)."""
        return tuple(dict.fromkeys(c.loop for c in self.couplings if c.closure is not None))

    @property
    def variety(self) -> str:
        """What it has beyond a fixed tree of one-coordinate joints, the first of: ``"floating base"``,
        ``"spherical joint"`` / ``"planar joint"`` (its first such link's), ``"implicit loops"``,
        ``"four-bars"``, ``"coupled joints"``; "" for none (the words of :func:`refuse`)."""
        if self.floating:
            return "floating base"
        if self.multi_dof:
            return f"{JOINT_TYPES[self.joints[self.multi_dof[0]]].name} joint"
        if self.implicit:
            return "implicit loops"
        if self.four_bars:
            return "four-bars"
        return "coupled joints" if self.couplings else ""


def _structure(robot: Any) -> Structure:
    kind = IMPLICIT if robot.implicit else PROJECTED if robot.couplings else TREE
    return Structure(name=robot.name, kind=kind, floating=robot.floating,
                     joints=tuple(link.joint for link in robot.links), nq=robot.nq, nv=robot.nv,
                     couplings=robot.couplings, loops=robot.loops, implicit=robot.implicit)


_CACHE: PerRobotCache[Structure] = PerRobotCache(1)


def structure(robot: Any) -> Structure:
    """The :class:`Structure` of ``robot`` (a :class:`~robodyn.model.manipulator.Manipulator`), computed once and
    cached while the robot lives."""
    return _CACHE.get(robot, None, lambda: _structure(robot))


def refuse(robot: Any, feature: str, *, what: str | None = None, field: str | None = None) -> ModelError:
    """The one-line :class:`~robodyn.errors.ModelError` of a ``feature`` (a function, an argument, an output) that
    the engine of ``robot``'s kind does not handle: ``"{name}: {what}: {feature} is not handled yet"``, ``what``
    the robot's :attr:`Structure.variety` unless given. Raise it: ``raise refuse(robot, "fext")``."""
    what = what or structure(robot).variety or "tree"
    return ModelError(f"{robot.name}: {what}: {feature} is not handled yet", field=field)


__all__ = ["IMPLICIT", "KINDS", "PROJECTED", "TREE", "Structure", "refuse", "structure"]

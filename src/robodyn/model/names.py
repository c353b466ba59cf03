"""Joint names: the names a robot's source gives its joints, and named states mapped to q and back.

A link's ``name`` is an identifier (:data:`robodyn.model.expr.IDENTIFIER`: it may reach generated code and file
names); the joint's name in its source (a URDF ``<joint name>``, a Pinocchio model's ``names``) may be any text
("joint-1", "l_arm/shoulder"; kept as given, shown in messages by ``repr``). :class:`~robodyn.model.Manipulator`
keeps the source's names as ``source_names`` (data, never printed into code) and answers ``joint_names``: per link
its source name, else its ``name``, else ``joint<k>`` (k from 1, as :func:`robodyn.formats.urdf.to_urdf` names
it), in the robot's order. :func:`q_from` and :func:`named` map a ``{joint name: value}`` mapping or a
``sensor_msgs/JointState``-like message (``.name`` and ``.position``) to a q vector in that order, and back. With
couplings (a joint that follows another, :mod:`robodyn.model.couplings`), q holds the independent joints' values
(:attr:`~robodyn.model.Manipulator.independent`): a follower's name is accepted in a state and its value not
read (it follows), and :func:`named` names the independent joints only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from robodyn.errors import ModelError
from robodyn.model.expr import MAX_NAME_LENGTH, shown

if TYPE_CHECKING:
    from robodyn.model.link import Link
    from robodyn.model.manipulator import Manipulator

_LISTED = 8  # names listed in a message before "..."


def default_names(links: Sequence[Link]) -> tuple[str, ...]:
    """Per link its ``name``, else ``joint<k>`` (k from 1), a repeat made distinct (:func:`unique_names`)."""
    return tuple(unique_names([link.name or f"joint{k + 1}" for k, link in enumerate(links)]))


def unique_names(names: Sequence[str], taken: Iterable[str] = ()) -> list[str]:
    """``names`` (identifiers) made unique in order: a name already given (or in ``taken``) gets ``_2``,
    ``_3``... appended (shortened to fit :data:`~robodyn.model.expr.MAX_NAME_LENGTH`)."""
    used = set(taken)
    out = []
    for name in names:
        candidate, k = name, 2
        while candidate in used:
            suffix = f"_{k}"
            candidate, k = name[:MAX_NAME_LENGTH - len(suffix)] + suffix, k + 1
        used.add(candidate)
        out.append(candidate)
    return out


def _source_name(value: object, k: int) -> str:
    if not isinstance(value, str):
        raise ModelError(f"expected text (the joint's name in its source), got {type(value).__name__}", link=k + 1,
                         field="source_names")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate ("\ud800", from a YAML or JSON escape): no file holds it
        raise ModelError(f"not valid Unicode text: a lone surrogate {value[exc.start]!a} at character {exc.start + 1}",
                         link=k + 1, field="source_names") from None
    return value


def check_source_names(value: object, links: Sequence[Link]) -> tuple[str, ...]:
    """``source_names`` checked: () when none differs from the link's default name (:func:`default_names`), else
    one text per link; from a sequence of texts ("" for the default) or a mapping of link (0-based index or
    name) to text. The resulting joint names must be distinct."""
    if value is None:
        return ()
    names = [""] * len(links)
    if isinstance(value, Mapping):
        index = {link.name: k for k, link in enumerate(links) if link.name}
        for key, text in value.items():
            k = index.get(key) if isinstance(key, str) else key
            if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(links):
                raise ModelError(f"{shown(key)} is not a link index (0 to {len(links) - 1}) or a link name",
                                 field="source_names")
            names[k] = _source_name(text, k)
    elif isinstance(value, str) or not isinstance(value, Iterable):
        raise ModelError("expected one joint name per link, or a mapping of link to joint name", field="source_names")
    else:
        given = list(value)
        if given and len(given) != len(links):
            raise ModelError(f"{len(given)} joint names for {len(links)} links", field="source_names")
        names[:len(given)] = [_source_name(text, k) for k, text in enumerate(given)]
    defaults = default_names(links)
    full = [name or default for name, default in zip(names, defaults, strict=True)]
    seen: dict[str, int] = {}
    for k, name in enumerate(full):
        if name in seen:
            raise ModelError(f"the joint name {shown(name)} is also link {seen[name] + 1}'s", link=k + 1,
                             field="source_names")
        seen[name] = k
    return () if tuple(full) == defaults else tuple(full)


def joint_names(robot: Manipulator) -> tuple[str, ...]:
    """The robot's joint names in its order (see the module docstring)."""
    return robot.source_names or default_names(robot.links)


def _listed(names: Iterable[str]) -> str:
    names = list(names)
    text = ", ".join(shown(name) for name in names[:_LISTED])
    return text + (f", ... ({len(names)} in all)" if len(names) > _LISTED else "")


def _number(value: object, what: str) -> float:
    """A finite real number (a Python, NumPy or SymPy number), as a float."""
    if isinstance(value, (bool, str, bytes)):
        raise ModelError(f"{what}: expected a number, got {shown(value)}")
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ModelError(f"{what}: expected a number, got {shown(value)}") from None
    if not math.isfinite(number):
        raise ModelError(f"{what}: {number} is not a finite number")
    return number


def _pairs(state: object, field: str) -> list[tuple[object, object]]:
    """(name, value) pairs of a mapping, or of a message's ``name`` and ``field`` (``position``...) lists."""
    if isinstance(state, Mapping):
        return list(state.items())
    names, values = getattr(state, "name", None), getattr(state, field, None)
    if names is None or values is None or isinstance(names, str) or isinstance(values, str):
        raise ModelError(f"expected a mapping of joint names to values, or a message with lists 'name' and "
                         f"{field!r} (sensor_msgs/JointState), got {type(state).__name__}")
    try:
        names, values = list(names), list(values)
    except TypeError:
        raise ModelError(f"the message's 'name' and {field!r} must be lists") from None
    if len(names) != len(values):
        raise ModelError(f"the message has {len(names)} names and {len(values)} values of {field!r}")
    return list(zip(names, values, strict=True))


def q_from(robot: Manipulator, state: object, default: float | None = None, *, field: str = "position",
           ignore_unknown: bool = False) -> np.ndarray:
    """The robot's q (a float array, the robot's order) from ``state``: a mapping of joint name
    (:attr:`~robodyn.model.Manipulator.joint_names`) to value, or a ``sensor_msgs/JointState``-like message
    (lists ``name`` and ``position``; ``field="velocity"`` reads qd, ``"effort"`` tau). A joint that ``state``
    does not name takes ``default``, or is an error when there is none; a name that is not a joint's is an error
    unless ``ignore_unknown`` (a message about joints the robot locked or does not have)."""
    robot.check_one_dof("q_from (one value per joint)")
    every = joint_names(robot)
    names = [every[k] for k in robot.independent]
    index = {name: k for k, name in enumerate(names)}
    q: list[float | None] = [None] * len(names)
    unknown: list[str] = []
    for name, value in _pairs(state, field):
        if not isinstance(name, str):
            raise ModelError(f"a joint name must be text, got {shown(name)}")
        k = index.get(name)
        if k is None:
            if name not in every:  # a follower's value is not read: it follows its leader
                unknown.append(name)
            continue
        if q[k] is not None:
            raise ModelError(f"joint {shown(name)} is given twice")
        q[k] = _number(value, f"joint {shown(name)}")
    if unknown and not ignore_unknown:
        raise ModelError(f"no joint of {robot.name} is named {_listed(unknown)} (joints: {_listed(every)})")
    missing = [names[k] for k, value in enumerate(q) if value is None]
    if missing and default is None:
        raise ModelError(f"no value for joint{'s' if len(missing) > 1 else ''} {_listed(missing)} of {robot.name} "
                         "(give them, or a default)")
    fill = 0.0 if default is None else _number(default, "default")
    return np.array([fill if value is None else value for value in q], dtype=float)


def named(robot: Manipulator, q: Any) -> dict[str, float]:
    """``q`` (one number per independent joint, the robot's order) as a dict of joint name to value, in the robot's
    order."""
    robot.check_one_dof("named (one value per joint)")
    every = joint_names(robot)
    names = [every[k] for k in robot.independent]
    if isinstance(q, (str, bytes, Mapping)):
        raise ModelError(f"expected {len(names)} numbers (one per joint), got {type(q).__name__}")
    values = list(np.asarray(q, dtype=object).ravel()) if isinstance(q, np.ndarray) else None
    if values is None:
        try:
            values = list(q)
        except TypeError:
            raise ModelError(f"expected {len(names)} numbers (one per joint), got {type(q).__name__}") from None
    if len(values) != len(names):
        raise ModelError(f"{len(values)} values for {len(names)} joints")
    return {name: _number(value, f"joint {shown(name)}") for name, value in zip(names, values, strict=True)}


__all__ = ["check_source_names", "default_names", "joint_names", "named", "q_from"]

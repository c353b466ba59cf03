"""Named frames: frames fixed to a link (or to the base), addressed by name.

A :class:`Frame` is a name, the link it is fixed to (0-based, -1 the base) and its fixed ``placement`` in that
link's frame (a 4x4 homogeneous transform, in the robot's convention: link frame k of standard DH sits at the
link's distal end, of modified DH on joint k's axis). A URDF's links are kept so (:mod:`robodyn.formats.urdf`:
``panda_hand``, ``tool0``, and every link's own URDF frame), model files list them under ``frames:``, and
:meth:`robodyn.Manipulator.frame` answers any of them by name, as well as every link's own frame by the link's
``name`` (placement the identity).

The kinematics of a named frame: :func:`robodyn.numeric.kinematics.frame_pose` and its Jacobians (numeric), the
Program outputs ``pose``, ``jacobian``, ... (:data:`robodyn.program.outputs.FRAME_OUTPUTS`, generated in every
language), ``ik.solve(..., frame=...)``.

Frame names are data, never printed into code: any text of at most :data:`MAX_FRAME_NAME` characters, without
control characters (so that one-line errors and the compile cache's manifest can hold them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy

from robodyn.errors import ModelError
from robodyn.model.expr import check_text, shown
from robodyn.model.link import _as_placement
from robodyn.model.spatial import sympy_homogeneous, x_screw

if TYPE_CHECKING:
    from robodyn.model.manipulator import Link, Manipulator

#: The longest frame name accepted.
MAX_FRAME_NAME = 200
#: The keys of one frame in a model file (and of a mapping given to ``Manipulator(frames=...)``).
FRAME_KEYS = ("name", "link", "placement")


@dataclass(frozen=True)
class Frame:
    """A named frame: fixed to link ``link`` (0-based; -1 the base) at ``placement`` (4x4) in that link's frame."""

    name: str
    link: int
    placement: sympy.ImmutableMatrix


def check_frame_name(value: object, field: str = "frames") -> str:
    """A frame's name: non-empty text, no control character, at most :data:`MAX_FRAME_NAME` characters."""
    name = check_text(value, field)
    if not name:
        raise ModelError("a frame needs a non-empty name", field=field)
    if len(name) > MAX_FRAME_NAME:
        raise ModelError(f"the frame name {shown(name)} is longer than {MAX_FRAME_NAME} characters", field=field)
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise ModelError(f"the frame name {shown(name)} holds a control character", field=field)
    return name


def _link_of(value: object, name: str, links: Sequence[Link]) -> int:
    """A frame's ``link``: a 0-based index (-1 the base) or a link name ("base" the base)."""
    if isinstance(value, str):
        if value == "base":
            return -1
        index = {link.name: k for k, link in enumerate(links) if link.name}
        if value not in index:
            raise ModelError(f"frame {shown(name)}: no link is named {shown(value)}", field="frames")
        return index[value]
    if isinstance(value, bool) or not isinstance(value, int) or not -1 <= value < len(links):
        raise ModelError(f"frame {shown(name)}: link {shown(value)} is not a link index (0 to {len(links) - 1}, "
                         "-1 for the base) or a link name", field="frames")
    return value


def _one(entry: object, links: Sequence[Link]) -> Frame:
    if isinstance(entry, Frame):
        name, link, placement = entry.name, entry.link, entry.placement
    elif isinstance(entry, Mapping):
        unknown = sorted(str(key) for key in entry if key not in FRAME_KEYS)
        if unknown:
            raise ModelError(f"a frame has no field {shown(unknown[0])} (fields: {', '.join(FRAME_KEYS)})",
                             field="frames")
        for key in ("name", "link"):
            if key not in entry:
                raise ModelError(f"a frame without {key!r}", field="frames")
        name, link, placement = entry["name"], entry["link"], entry.get("placement")
    else:
        raise ModelError(f"expected a frame ({{name, link, placement}}), got {type(entry).__name__}", field="frames")
    name = check_frame_name(name)
    index = _link_of(link, name, links)
    try:
        matrix = _as_placement(placement)
    except ModelError as exc:
        raise ModelError(f"frame {shown(name)}: {exc.problem}", field="frames") from None
    return Frame(name, index, matrix)


def check_frames(value: object, links: Sequence[Link]) -> tuple[Frame, ...]:
    """``frames`` checked: a sequence of :class:`Frame` or mappings ``{name, link, placement}`` (placement
    optional: the identity). Names are distinct and none is a link's ``name`` (that names the link's own frame);
    a frame named ``base`` (a URDF's ``base`` link) is that frame, not the base frame."""
    if value is None:
        return ()
    if isinstance(value, str | Mapping) or not isinstance(value, Iterable):
        raise ModelError("expected a list of frames ({name, link, placement})", field="frames")
    frames = tuple(_one(entry, links) for entry in value)
    link_names = {link.name: k for k, link in enumerate(links) if link.name}
    seen: set[str] = set()
    for frame in frames:
        if frame.name in seen:
            raise ModelError(f"two frames are named {shown(frame.name)}", field="frames")
        if frame.name in link_names:
            raise ModelError(f"frame {shown(frame.name)} has the name of link {link_names[frame.name] + 1} (which "
                             "names that link's own frame)", field="frames")
        seen.add(frame.name)
    return frames


def find_frame(robot: Manipulator, name: str) -> Frame:
    """The frame named ``name``: one of ``robot.frames``, else a link's own frame (its ``name``), else the base
    frame for ``"base"``; a ValueError listing the names otherwise."""
    for frame in robot.frames:
        if frame.name == name:
            return frame
    for k, link in enumerate(robot.links):
        if link.name and link.name == name:
            return Frame(name, k, sympy.ImmutableMatrix.eye(4))
    if name == "base":
        return Frame(name, -1, sympy.ImmutableMatrix.eye(4))
    known = frame_names(robot)
    listed = ", ".join(known[:20]) + (" ..." if len(known) > 20 else "")
    raise ValueError(f"{robot.name!r} has no frame named {name!r} (frames: {listed or 'none named'})")


def frame_names(robot: Manipulator) -> tuple[str, ...]:
    """Every name :func:`find_frame` answers: the named frames, then the links' names, then ``base``."""
    return (*(f.name for f in robot.frames), *(link.name for link in robot.links if link.name), "base")


def joint_frame_offset(robot: Manipulator, frame: str | None) -> tuple[int, sympy.Matrix]:
    """(k, T): the frame ``frame`` (None: the tool frame, link frame n times ``robot.tool``) as link k (-1 the
    base) and its placement T in the frame of joint k on whose z axis the joint moves (the numeric engine's joint
    frame, which is the modified-DH link frame): T = C_k placement, C_k = Trans(x, a_k) Rot(x, alpha_k) in
    standard DH (link frame k sits at the distal end), I in modified DH."""
    if frame is None:
        k, placement = robot.n - 1, robot.tool
    else:
        found = find_frame(robot, frame)
        k, placement = found.link, found.placement
    if k < 0 or robot.convention == "modified":
        return k, sympy.Matrix(placement)
    link = robot.links[k]
    R, p = x_screw(link.a, link.alpha)
    return k, sympy_homogeneous(R, p) * sympy.Matrix(placement)


__all__ = ["FRAME_KEYS", "MAX_FRAME_NAME", "Frame", "check_frame_name", "check_frames", "find_frame", "frame_names",
           "joint_frame_offset"]

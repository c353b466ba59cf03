"""A URDF file's XML read into plain records (lxml only: no mesh library, meshes are never read).

:func:`read_robot` parses the file safely (no network, no entity expansion, no DOCTYPE, no huge trees; the XML
declaration made as tolerant as urdfdom's) and gives a :class:`Robot`: its ``name``, ``links`` and ``joints``
in file order, with the fields :mod:`robodyn.formats.urdf` builds a manipulator from, as URDF defines them:

- a joint's ``origin`` is the 4x4 transform of ``<origin xyz rpy>``, T(xyz) R, R = Rz(yaw) Ry(pitch) Rx(roll)
  (fixed axes x, y, z), None without ``<origin>`` (the identity); its ``axis`` is ``<axis xyz>``, (1, 0, 0)
  without it; ``dynamics`` (damping, friction), ``limit`` (effort, velocity, lower, upper) and ``mimic`` (joint,
  multiplier 1 and offset 0 unless given) are None where the element is absent;
- a link's ``inertial`` is None without ``<inertial>``; else its ``origin`` (as a joint's), ``mass`` and the
  symmetric 3x3 ``inertia`` from ixx ixy ixz iyy iyz izz (all six required, as urdfdom does).

Loop closures (a closed chain is the tree plus these, :mod:`robodyn.model.loops`) are read from two dialects into
:class:`LoopJoint` records (``robot.loops``, file order, Drake's first):

- Drake's legacy ``<loop_joint name type><link1 link xyz rpy/><link2 link xyz rpy/><axis xyz/></loop_joint>``
  (read as well by RigidBodyDynamics.jl's ``parse_urdf`` and Isaac Sim's URDF importer): the closing joint's frame
  is at ``xyz rpy`` (attributes of ``<link1>``/``<link2>`` themselves, or of an ``<origin>`` in them, as Drake's
  older MATLAB parser had it) in each link's frame;
- URDF+ (Chignoli, Slotine, Wensing and Kim 2024, arXiv 2411.19753, as its authors' parser in
  ROAM-Lab-ND/generalized_rbda reads it) ``<loop name type><predecessor link><origin xyz rpy/></predecessor>
  <successor link><origin xyz rpy/></successor><axis xyz/></loop>``, and its joints' ``independent="true"`` or
  ``"false"`` attribute (``Joint.independent``: True for ``true`` or ``1``, any case, False for any other value,
  as the authors' parser reads it (their four_bar.urdf writes ``"fasle"``), None where absent).

The axis is in the closing joint's frame, (1, 0, 0) without ``<axis>`` (as for joints); ``type`` is checked
against URDF's joint types by :mod:`robodyn.formats.urdf`. The joints a ``<transmission>`` drives (its
``<joint name>`` children) are ``robot.transmissions``, in file order. Visuals, collisions, materials, the rest
of a transmission and Gazebo tags are not read. A missing attribute or a number
that does not parse, is not finite or comes in the wrong count is a one-line
:class:`~robodyn.errors.ModelError` naming the file, the joint or link and the field (``origin xyz``,
``inertial inertia ixx``, ``limit lower``...).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from robodyn.errors import ModelError
from robodyn.formats import urdf_xacro
from robodyn.model.files import read_limited

MAX_FILE_BYTES = 20_000_000
INERTIA_ATTRIBUTES = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


@dataclass(frozen=True, eq=False)
class Mimic:
    """``<mimic joint multiplier offset>``: q = multiplier q_joint + offset."""

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True, eq=False)
class Dynamics:
    """``<dynamics damping friction>`` (None where an attribute is absent)."""

    damping: float | None = None
    friction: float | None = None


@dataclass(frozen=True, eq=False)
class Limit:
    """``<limit effort velocity lower upper>`` (None where an attribute is absent)."""

    effort: float | None = None
    velocity: float | None = None
    lower: float | None = None
    upper: float | None = None


@dataclass(frozen=True, eq=False)
class Joint:
    """A ``<joint>``: ``origin`` the 4x4 transform from the parent link's frame (None: the identity)."""

    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray | None
    axis: np.ndarray
    dynamics: Dynamics | None = None
    limit: Limit | None = None
    mimic: Mimic | None = None
    independent: bool | None = None


@dataclass(frozen=True, eq=False)
class LoopJoint:
    """A loop closure: Drake's ``<loop_joint>`` or URDF+'s ``<loop>`` (``element``). ``links``: the two links it
    closes (``<link1>``/``<link2>``, ``<predecessor>``/``<successor>``); ``origins``: the closing joint's frame
    in each, a 4x4 (None: the link's own frame); ``axis``: in the closing frame."""

    name: str
    type: str
    links: tuple[str, str]
    origins: tuple[np.ndarray | None, np.ndarray | None]
    axis: np.ndarray
    element: str = "loop_joint"


@dataclass(frozen=True, eq=False)
class Inertial:
    """A link's ``<inertial>``: ``origin`` the 4x4 transform of the centre of mass frame (None: the identity)."""

    origin: np.ndarray | None
    mass: float
    inertia: np.ndarray


@dataclass(frozen=True, eq=False)
class Link:
    """A ``<link>`` (its inertial data only)."""

    name: str
    inertial: Inertial | None = None


@dataclass(frozen=True, eq=False)
class Robot:
    """A ``<robot>``: links and joints in file order."""

    name: str
    links: tuple[Link, ...]
    joints: tuple[Joint, ...]
    loops: tuple[LoopJoint, ...] = ()
    transmissions: tuple[str, ...] = ()


# -- the XML ----------------------------------------------------------------------------------------------------


def _prolog_declarations(data: bytes) -> tuple[int, list[tuple[int, int]]]:
    """Where the prolog of an XML text starts (after a UTF-8 byte order mark) and the (start, end) of each XML
    declaration ``<?xml ...?>`` in it, before the root element: the prolog is scanned over whitespace, comments
    and processing instructions only, and stops at anything else (the root element, a DOCTYPE, text in an
    encoding that is not ASCII-compatible), which is left to the XML parser."""
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    found: list[tuple[int, int]] = []
    pos = start
    while True:
        while pos < len(data) and data[pos] in b" \t\r\n":
            pos += 1
        if data.startswith(b"<!--", pos):
            end = data.find(b"-->", pos + 4)
            if end < 0:
                break
            pos = end + 3
        elif data.startswith(b"<?", pos):
            end = data.find(b"?>", pos + 2)
            if end < 0:
                break
            target = data[pos + 2:pos + 6]
            if target[:3].lower() == b"xml" and (len(target) < 4 or target[3:4] in b" \t\r\n?"):
                found.append((pos, end + 2))
            pos = end + 2
        else:
            break
    return start, found


def _normalised_declaration(data: bytes) -> bytes:
    """The text with its XML declaration made one that libxml2 reads, as urdfdom (TinyXML2) and PyBullet are
    tolerant of it: ``<?xml version="0.0"?>`` (PyBullet's minitaur files) becomes version 1.0, and a declaration
    after a comment (diff_ring.urdf) moves to the start (its encoding kept). Line numbers stay the same: the
    declaration's own text is replaced by its line breaks. Anything else is left to the parser unchanged."""
    start, found = _prolog_declarations(data)
    if not found:
        return data
    first, end = found[0]
    version = re.search(rb"""version\s*=\s*(["'])([^"']*)\1""", data[first:end])
    if len(found) == 1 and first == start and version is not None and version.group(2) in (b"1.0", b"1.1"):
        return data
    encoding = re.search(rb"""encoding\s*=\s*(["'])([A-Za-z][A-Za-z0-9._-]*)\1""", data[first:end])
    declaration = b'<?xml version="1.0"' + (b' encoding="' + encoding.group(2) + b'"' if encoding else b"") + b"?>"
    out, previous = [data[:start], declaration], start
    for begin, stop in found:
        out += [data[previous:begin], b"\n" * data.count(b"\n", begin, stop)]
        previous = stop
    out.append(data[previous:])
    return b"".join(out)


def _root(path: Path, shown: str, xacro_args: Mapping[str, Any] | None = None,
          package_paths: Sequence[str | Path] | None = None) -> Any:
    """The ``<robot>`` element of the file, parsed safely, after the checks of the whole document; a xacro file
    expanded first (:mod:`robodyn.formats.urdf_xacro`)."""
    try:
        from lxml import etree
    except ImportError:
        raise ModelError("reading URDF needs the 'lxml' package: pip install 'robodyn[urdf]'", file=shown) from None
    data = read_limited(path, MAX_FILE_BYTES, shown)  # a FIFO or a device is refused, not read
    if urdf_xacro.is_xacro(path, data):
        data = urdf_xacro.expand(path, data, shown, xacro_args, package_paths)
    data = _normalised_declaration(data)  # as tolerant as urdfdom of the XML declaration; the checks below stay
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    try:
        tree = etree.fromstring(data, parser=parser, base_url=str(path)).getroottree()
    except etree.XMLSyntaxError as exc:
        raise ModelError(f"not valid XML ({' '.join(str(exc).split())})", file=shown) from None
    except OSError as exc:
        raise ModelError(f"cannot read the file ({exc})", file=shown) from None
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None:
        raise ModelError("a DOCTYPE or entity declaration is not allowed in a URDF file", file=shown)
    root = tree.getroot()
    if root.tag == "mujoco":
        raise ModelError("MJCF (MuJoCo) files are not supported yet (root element <mujoco>): robodyn reads URDF",
                         file=shown)
    if root.tag != "robot":
        raise ModelError(f"the root element is <{root.tag}>, not <robot>", file=shown)
    left = next((element.tag for element in root.iter() if isinstance(element.tag, str)
                 and element.tag.startswith("{") and "xacro" in element.tag), None)
    if left is not None:  # (a xacro namespace spelt otherwise than xacro's own)
        raise ModelError(f"xacro element <{left}> left after expansion", file=shown)
    if "name" not in root.attrib:
        raise ModelError("<robot> has no name attribute", file=shown)
    if root.find("link") is None:
        raise ModelError("no <link> element: a URDF robot needs at least one link", file=shown)
    for kind in ("link", "joint"):
        for element in root.findall(kind):
            if "name" not in element.attrib:
                raise ModelError(f"a <{kind}> has no name attribute (line {element.sourceline})", file=shown)
    return root


# -- numbers ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Reader:
    """Reads the numbers of one joint or link: errors name the file (``shown``) and the element (``where``)."""

    shown: str
    where: str

    def fail(self, problem: str, field: str) -> ModelError:
        return ModelError(problem, file=self.shown, link=self.where, field=field)

    def numbers(self, element: Any, attribute: str, count: int, field: str) -> list[float] | None:
        """``count`` finite numbers from the attribute (None where it is absent)."""
        text = element.attrib.get(attribute)
        if text is None:
            return None
        words = text.split()
        try:
            values = [float(word) for word in words]
        except ValueError:
            raise self.fail(f"{text.strip()!r} is not {'a number' if count == 1 else f'{count} numbers'}",
                            field) from None
        if len(values) != count:
            raise self.fail(f"expected {count} number{'s' if count > 1 else ''}, got {len(values)}", field)
        bad = [word for word, value in zip(words, values, strict=True) if not math.isfinite(value)]
        if bad:
            raise self.fail(f"{bad[0]} is not a finite number", field)
        return values

    def number(self, element: Any, attribute: str, field: str) -> float | None:
        values = self.numbers(element, attribute, 1, field)
        return None if values is None else values[0]

    def required(self, element: Any, attribute: str, field: str, what: str) -> str:
        text = element.attrib.get(attribute)
        if text is None:
            raise self.fail(f"{what} has no {attribute} attribute", field)
        return str(text)

    def origin(self, element: Any, prefix: str = "") -> np.ndarray | None:
        """The 4x4 transform of ``<origin xyz rpy>`` (None without the element): T(xyz) Rz(yaw) Ry(pitch) Rx(roll),
        composed as trimesh's ``compose_matrix`` does (the same floating-point result to the last bit, signs of
        zeros included, as yourdfpy gave)."""
        if element is None:
            return None
        xyz = self.numbers(element, "xyz", 3, f"{prefix}origin xyz") or [0.0, 0.0, 0.0]
        roll, pitch, yaw = self.numbers(element, "rpy", 3, f"{prefix}origin rpy") or [0.0, 0.0, 0.0]
        T = np.identity(4)
        T[:3, 3] = xyz
        si, sj, sk = np.sin(roll), np.sin(pitch), np.sin(yaw)
        ci, cj, ck = np.cos(roll), np.cos(pitch), np.cos(yaw)
        cc, cs, sc, ss = ci * ck, ci * sk, si * ck, si * sk
        R = np.identity(4)
        R[0, 0], R[0, 1], R[0, 2] = cj * ck, sj * sc - cs, sj * cc + ss
        R[1, 0], R[1, 1], R[1, 2] = cj * sk, sj * ss + cc, sj * cs - sc
        R[2, 0], R[2, 1], R[2, 2] = -sj, cj * si, cj * ci
        M = np.dot(np.dot(np.identity(4), T), R)
        M /= M[3, 3]
        return M


# -- links and joints -------------------------------------------------------------------------------------------


def _link(element: Any, shown: str) -> Link:
    name = str(element.attrib["name"])
    inertial = element.find("inertial")
    if inertial is None:
        return Link(name)
    read = _Reader(shown, f"link '{name}'")
    mass = inertial.find("mass")
    if mass is None or "value" not in mass.attrib:
        raise read.fail("<inertial> needs <mass value=...>", "mass")
    inertia = inertial.find("inertia")
    missing = [] if inertia is None else [key for key in INERTIA_ATTRIBUTES if key not in inertia.attrib]
    if inertia is None or missing:
        detail = "no <inertia>" if inertia is None else f"<inertia> has no {', '.join(missing)}"
        raise read.fail(f"{detail} (<inertial> needs all six of {' '.join(INERTIA_ATTRIBUTES)})", "inertia")
    origin = read.origin(inertial.find("origin"), "inertial ")
    m = read.number(mass, "value", "inertial mass value")
    ixx, ixy, ixz, iyy, iyz, izz = (read.number(inertia, key, f"inertial inertia {key}") for key in INERTIA_ATTRIBUTES)
    tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=np.float64)
    return Link(name, Inertial(origin=origin, mass=_or(m, 0.0), inertia=tensor))


def _joint(element: Any, shown: str) -> Joint:
    name = str(element.attrib["name"])
    where = f"joint '{name}'"
    read = _Reader(shown, where)
    ends = []
    for tag in ("parent", "child"):
        sub = element.find(tag)
        if sub is None or "link" not in sub.attrib:
            raise ModelError(f"missing <{tag} link=...>", file=shown, link=where)
        ends.append(str(sub.attrib["link"]))
    parent, child = ends
    if parent == child:
        raise ModelError(f"its parent and child are the same link {child!r}", file=shown, link=where)
    kind = read.required(element, "type", "type", "<joint>")
    origin = read.origin(element.find("origin"))
    axis_element = element.find("axis")
    axis = None if axis_element is None else read.numbers(axis_element, "xyz", 3, "axis xyz")
    dynamics = element.find("dynamics")
    limit = element.find("limit")
    mimic = element.find("mimic")
    independent = element.attrib.get("independent")
    return Joint(
        name=name, type=kind, parent=parent, child=child, origin=origin,
        axis=np.array([1.0, 0.0, 0.0] if axis is None else axis),
        dynamics=None if dynamics is None else Dynamics(
            damping=read.number(dynamics, "damping", "dynamics damping"),
            friction=read.number(dynamics, "friction", "dynamics friction")),
        limit=None if limit is None else Limit(*(read.number(limit, key, f"limit {key}")
                                                 for key in ("effort", "velocity", "lower", "upper"))),
        mimic=None if mimic is None else Mimic(
            joint=read.required(mimic, "joint", "mimic", "<mimic>"),
            multiplier=_or(read.number(mimic, "multiplier", "mimic multiplier"), 1.0),
            offset=_or(read.number(mimic, "offset", "mimic offset"), 0.0)),
        independent=None if independent is None else independent.strip().lower() in ("true", "1"),
    )


#: Per loop element, the tags of its two ends. Their frame is an ``<origin xyz rpy>`` child (URDF+, and Drake's
#: MATLAB-era parser) or the end element's own ``xyz rpy`` attributes (Drake's C++ parser, RigidBodyDynamics.jl,
#: Isaac Sim), either in both dialects.
LOOP_ELEMENTS = {"loop_joint": ("link1", "link2"), "loop": ("predecessor", "successor")}


def _loop(element: Any, shown: str) -> LoopJoint:
    """One ``<loop_joint>`` or ``<loop>``; errors name the file, the loop and the field."""
    tag = str(element.tag)
    if "name" not in element.attrib:
        raise ModelError(f"a <{tag}> has no name attribute (line {element.sourceline})", file=shown, field="name")
    name = str(element.attrib["name"])
    read = _Reader(shown, f"{tag} '{name}'")
    kind = read.required(element, "type", "type", f"<{tag}>")
    first, second = LOOP_ELEMENTS[tag]
    links, origins = [], []
    for end in (first, second):
        sub = element.find(end)
        if sub is None or "link" not in sub.attrib:
            raise read.fail(f"missing <{end} link=...>", end)
        links.append(str(sub.attrib["link"]))
        child, own = sub.find("origin"), bool({"xyz", "rpy"} & set(sub.attrib))
        if child is not None and own:
            raise read.fail(f"<{end}> has both xyz/rpy attributes and an <origin>: give one", end)
        origins.append(read.origin(child if child is not None else sub if own else None, f"{end} "))
    if links[0] == links[1]:
        raise read.fail(f"a loop between link {links[0]!r} and itself (nothing to close)", second)
    axis_element = element.find("axis")
    axis = None if axis_element is None else read.numbers(axis_element, "xyz", 3, "axis xyz")
    return LoopJoint(name=name, type=kind, links=(links[0], links[1]), origins=(origins[0], origins[1]),
                     axis=np.array([1.0, 0.0, 0.0] if axis is None else axis), element=tag)


def _loops(root: Any, shown: str) -> tuple[LoopJoint, ...]:
    loops = tuple(_loop(element, shown) for tag in LOOP_ELEMENTS for element in root.findall(tag))
    seen: set[str] = set()
    for loop in loops:
        if loop.name in seen:
            raise ModelError("two loops have this name", file=shown, link=f"{loop.element} '{loop.name}'",
                             field="name")
        seen.add(loop.name)
    return loops


def _transmissions(root: Any) -> tuple[str, ...]:
    """The joints the ``<transmission>`` elements drive (``<joint name>``), each once, in file order."""
    names = [str(joint.attrib["name"]) for transmission in root.findall("transmission")
             for joint in transmission.findall("joint") if "name" in joint.attrib]
    return tuple(dict.fromkeys(names))


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


def read_robot(path: str | Path, shown: str | None = None, xacro_args: Mapping[str, Any] | None = None,
               package_paths: Sequence[str | Path] | None = None) -> Robot:
    """The robot of a URDF file (see the module docstring); ``shown``: the file's name in errors (the path). A
    xacro file (a ``.xacro`` suffix, or xacro's macros in the text) is expanded first, in memory, with
    ``xacro_args`` and ``package_paths`` (:func:`robodyn.formats.urdf_xacro.expand`)."""
    path = Path(path)
    shown = str(path) if shown is None else shown
    root = _root(path, shown, xacro_args, package_paths)
    joints = tuple(_joint(element, shown) for element in root.findall("joint"))  # joints' errors first
    links = tuple(_link(element, shown) for element in root.findall("link"))
    return Robot(name=str(root.attrib["name"]), links=links, joints=joints, loops=_loops(root, shown),
                 transmissions=_transmissions(root))


__all__ = ["Dynamics", "Inertial", "Joint", "Limit", "Link", "LoopJoint", "Mimic", "Robot", "read_robot"]

"""MuJoCo's MJCF, in and out, for fixed- and floating-base robots, through MuJoCo's own compiler (the optional
``mujoco`` package: ``pip install 'robodyn[mjcf]'``).

    robot = rd.load("arm.xml")                 # an .xml file whose root element is <mujoco>, or read_mjcf(path)
    write_mjcf(robot, "arm_out.xml")           # to_mjcf(robot) gives the text

:func:`read_mjcf` compiles the file with ``mujoco.MjModel.from_xml_path`` (so defaults and child classes,
``<compiler angle>``, ``fullinertia``/``diaginertia``/inertia from geoms, ``quat``/``euler``/``axisangle``/
``xyaxes``/``zaxis``, ``<include>`` and everything else MuJoCo resolves are MuJoCo's, not re-implemented) and reads
the *compiled* model: per body its placement in its parent (``body_pos``, ``body_quat``), mass, centre of mass and
principal inertia (``body_mass``, ``body_ipos``, ``body_iquat``, ``body_inertia``); per joint its type, axis and
anchor (``jnt_type``, ``jnt_axis``, ``jnt_pos``), its reference position (``qpos0``, MJCF's ``ref``), and per degree
of freedom the ``armature`` and ``damping``; the gravity ``opt.gravity`` (zero where ``<flag gravity="disable"/>``).
The robot is built by the shared frames builder (:mod:`robodyn.formats.frames`, as URDF and Pinocchio models are):

- ``hinge`` joints are revolute, ``slide`` joints prismatic; robodyn's q is MuJoCo's ``qpos`` (a joint with
  ``ref`` r is at its modelled pose when q = r), qd is ``qvel``, and the joints come in MuJoCo's order (its dofs).
- ``ball`` joints are spherical (a link's ``joint`` S, :mod:`robodyn.model.joints`: Pinocchio's
  ``JointModelSpherical``), turning about their anchor ``pos`` in the body's axes. Their 4 coordinates are
  MuJoCo's quaternion reordered: MuJoCo's ``qpos`` holds it **w first (w, x, y, z), robodyn x, y, z, w**
  (Pinocchio's order; :func:`from_mujoco` / :func:`to_mujoco` convert); their 3 velocities are ``qvel``'s as they
  are, the angular velocity in the body's (child) frame, as Pinocchio's. Their ``damping`` and ``armature`` (one
  value for the three dofs, as MJCF writes them) act on each velocity; the numeric engine
  (:mod:`robodyn.numeric.floating`) handles them, the paths of one coordinate per joint refuse them.
- A body with several joints is a chain of links, one per joint, in the body's joint order (MuJoCo applies them
  so), all but the last massless; each hinge turns about its anchor ``pos``.
- A body without joints is welded to its parent: its inertia joins the nearest moving body above it (bodies
  welded to the world are the base and carry no dynamics).
- ``armature`` goes to each link's armature (MuJoCo, too, adds it to M's diagonal), ``damping`` to its viscous
  damping: robodyn's tau contains + damping qd, MuJoCo's passive force is - damping qd.
- ``frictionloss`` f of a hinge or slide joint is its Coulomb friction ``coulomb`` = [f, -f] (``frictionloss=
  "coulomb"``, the default): robodyn's tau contains + f sign(qd), f for qd > 0, -f for qd < 0 and nothing at rest.
  MuJoCo solves frictionloss as a dry-friction *constraint*: a force up to f that holds the joint at rest and opposes
  its motion, found with the contacts and softened by ``solreffriction``/``solimpfriction``; away from rest, where it
  saturates, it is - f sign(qd) to the softness, so robodyn's ID, M and FD are MuJoCo's with constraints off plus
  f sign(qd) as a force; near rest (stiction) robodyn's simulation slides where MuJoCo's holds.
  ``frictionloss="ignore"`` drops it (one :class:`~robodyn.errors.ModelWarning` naming the joints), ``"refuse"``
  refuses it. A ball joint's frictionloss is refused unless ignored (robodyn's spherical joint has no Coulomb
  friction); a free joint's is dropped with the note.
- Fluid forces: MuJoCo applies them where ``<option density>`` or ``<option viscosity>`` is nonzero (to each
  body's equivalent inertia box, or by its geoms with ``fluidshape="ellipsoid"``). ``fluid="auto"`` (the default)
  drops a thin medium such as air (density at most :data:`THIN_DENSITY`, viscosity at most
  :data:`THIN_VISCOSITY`: its forces are below the uncertainty of a link's numbers) with one note, and refuses a
  denser one (water) and every robot body with an ellipsoid fluid shape; ``fluid="drop"`` drops all with the
  note; ``fluid="refuse"`` refuses any.
- ``<equality><joint joint1 joint2 polycoef="c0 c1 0 0 0">`` (q1 - q1_ref = c0 + c1 (q2 - q2_ref)) is a
  :class:`~robodyn.model.couplings.Coupling` of joint1 to joint2 (ratio c1), as a URDF mimic joint is; MuJoCo's
  URDF compiler writes a mimic joint so. A polynomial of higher degree, a joint equality without joint2, and
  ``connect``, ``weld``, ``tendon`` and ``flex`` equalities are refused in one line (closed chains: a later step).
  An equality inactive at start (``active="false"``) is left out.
- Contacts, actuators, sensors, sites, cameras, lights and geometry beyond its inertia are not dynamics of the
  tree and are not read.

The robot is chosen among the bodies of the file (a scene): ``root="name"`` reads the subtree of that body, placed
where the file puts it at ``qpos0`` (the joints above it, and everything outside it, left out). Without ``root``,
the robot is the subtrees of the world holding hinge, slide or ball joints (MuJoCo fuses a fixed base with the
world, so that a fixed robot's legs or arms are several such subtrees: one tree on the world), or the one floating
robot (a free joint with such joints below it). The free bodies beside it (props, targets, objects: a free joint
and no other moving joint below) are left out, named in one :class:`~robodyn.errors.ModelWarning`, their
attributes (damping, frictionloss, gravcomp...) not refused; equalities between bodies left out (a prop and the
world) are theirs. Several robots (two floating ones, or one beside joints fixed to the world) are refused in one
line suggesting ``root=``; a file of one free body and no moving joint is that body on a floating base.

A ``free`` joint is a floating base (:mod:`robodyn.model.joints`: Pinocchio's ``JointModelFreeFlyer``): its body
is the robot's base, carrying its own inertia and that of the bodies welded to it. The coordinates differ from
MuJoCo's in two ways, and
:func:`from_mujoco` / :func:`to_mujoco` convert: MuJoCo's ``qpos`` holds the base's quaternion w first (robodyn:
x, y, z, w), and its free joint's ``qvel`` holds the linear velocity of the body's origin in the *world* frame
(robodyn: in the body frame, as the angular velocity in both), so that v_mj = T v with T = diag(R, I, I) (R the
base's orientation), M = T^T M_mj T, tau = T^T tau_mj, and the accelerations differ by the derivative of T:
qacc_mj = T a + (R (omega x v_lin), 0). ``floating``: None (the default) follows the file (a free joint makes a
floating base), True requires a free joint, False drops free joints and fixes each free body where the file
places it (at its ``qpos0``: the robot's joints then keep their MuJoCo rows, the free body held at rest there;
its props are left out all the same). Damping or armature on a free joint's degrees of freedom has no robodyn
counterpart and is refused.

Refused, all at once in one line naming the file and per refused attribute the joints or bodies that have it (the
first two of each and how many more: ``not modelled by robodyn: body gravcomp 'hand', 'torso' and 19 more``): a
ball joint whose three dofs differ in damping or armature; damping or armature on a free joint; a ball or free
joint's spring (a hinge's or slide's ``stiffness`` and ``springref`` are the link's spring, k (q - springref)),
gravity compensation (``gravcomp``), tendon springs, damping or friction, which are passive forces robodyn does
not model yet; fluid forces and frictionloss as their options say;
``connect``, ``weld``, ``tendon`` and ``flex`` equalities and joint equalities that are not couplings (a
``connect`` or ``weld`` to a mocap body, a handle MuJoCo moves from outside to drag the robot, is a controller, as
an actuator: left out with one note). A file
MuJoCo does not compile is refused with MuJoCo's message on one line; MuJoCo's warnings while it compiles become
one :class:`~robodyn.errors.ModelWarning` (its own handler would write ``MUJOCO_LOG.TXT`` into the working
directory, which it never does here).

Before MuJoCo opens anything, the file and its includes are read by robodyn (:func:`_scan`) and refused in one line
where they would hang, exhaust memory or be read wrong: a FIFO, a device, a directory or another special file as
the model, an ``<include>`` or an asset (a mesh, a texture: checked with ``stat``, never opened); a file over
:data:`MAX_MJCF_BYTES` bytes, or a file and its includes together over it; more than :data:`MAX_MJCF_BODIES`
bodies (``<replicate>`` and ``<composite>`` counts multiplied out: a replicate of a million bodies takes MuJoCo
minutes and gigabytes); includes nested deeper than :data:`MAX_INCLUDE_DEPTH`, elements deeper than
:data:`MAX_MJCF_NESTING`; an entity declaration; and numbers
that are not finite (``nan``, ``inf``, ``1e999``) in any attribute, every such element and attribute named (MuJoCo
would compile them, with a warning).

:func:`to_mjcf` writes a robot (numeric, or with ``params``): per link a body at the numeric engine's joint frame (z
along the joint axis) with a ``hinge`` or ``slide`` joint about z, its inertia as ``fullinertia`` about its centre
of mass, its ``armature``, ``damping`` and Coulomb friction (``frictionloss``, its odd part (Tc+ - Tc-) / 2: an
asymmetric pair's even part is not written, and a warning says so); each coupling a joint equality
(``polycoef="offset ratio 0 0 0"``); the gravity in ``<option>``. A massless link with one child (a body with
several joints, read back) puts its joint into its child's body, before the child's own (MuJoCo refuses a massless
moving body). Every number is written in full (``repr``) and the text is checked by MuJoCo's compiler: MuJoCo's own
writers (``MjSpec.to_xml``, ``mj_saveLastXML``) write 6 significant digits, too few for a round trip.
:func:`read_mjcf` of the file gives back the same dynamics (to rounding) and joint names. The tip load and the tool
have no place in MJCF and are left out (a warning says so for a nonzero tip load). A floating robot is written with
a ``<freejoint/>`` in its base's body, which carries the base's inertia.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from robodyn.errors import ModelError, ModelWarning, clip, did_you_mean, printable
from robodyn.formats.frames import Body, JointFrame, manipulator_from_frames
from robodyn.model.couplings import Coupling
from robodyn.model.files import atomic_write, check_file_size, file_kind, path_exists, read_limited, shown_path
from robodyn.model.floats import bound_floats
from robodyn.model.manipulator import Manipulator
from robodyn.model.spatial import homogeneous, joint_screw, link_transforms

#: What ``import mujoco`` failing says.
MISSING = "reading MJCF needs the 'mujoco' package: pip install 'robodyn[mjcf]'"
#: Entries of an inertia below this times its trace are rounding (of MuJoCo's principal axes), read as 0.
INERTIA_NOISE = 1e-14
#: MuJoCo's joint types (mjtJoint) by value.
_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3
#: MuJoCo's tendon wrapping objects (mjtWrap) that belong to a body, by value.
_WRAP_JOINT, _WRAP_SITE, _WRAP_SPHERE, _WRAP_CYLINDER = 1, 3, 4, 5
#: The degrees of freedom of each joint type.
_DOFS = {_FREE: 6, _BALL: 3, _SLIDE: 1, _HINGE: 1}
#: MuJoCo's equality types (mjtEq) by value, named as MJCF's elements.
_EQUALITY = {0: "connect", 1: "weld", 2: "joint", 3: "tendon", 4: "flex"}
#: The largest MJCF file read, and the most bytes of a file and its includes together (MuJoCo's own robots, the
#: menagerie's humanoids included, are below 1 MB; a mesh given inline may take some megabytes): checked before
#: MuJoCo opens anything.
MAX_MJCF_BYTES = 10_000_000
#: The most bodies an MJCF file may make, its ``<replicate>`` and ``<composite>`` counts multiplied out (a robot has
#: at most :data:`robodyn.model.manipulator.MAX_LINKS` links; a scene of props some hundred bodies): checked before
#: MuJoCo compiles it, as a replicate of a million bodies would take minutes and gigabytes there.
MAX_MJCF_BODIES = 10_000
#: The deepest nesting of ``<include>`` read (a file including itself stops there).
MAX_INCLUDE_DEPTH = 16
#: The deepest nesting of elements in a file (a chain of :data:`robodyn.model.manipulator.MAX_LINKS` bodies written
#: as nested bodies is some 200 deep; robodyn's scan walks them recursively).
MAX_MJCF_NESTING = 400
#: The values of ``frictionloss=`` and ``fluid=`` (the first the default).
FRICTIONLOSS = ("coulomb", "ignore", "refuse")
FLUID = ("auto", "drop", "refuse")
#: A thin medium, whose fluid forces ``fluid="auto"`` drops: on a reference link (0.1 m across, 0.01 m^2 of cross
#: section, moving at 1 m/s) its quadratic drag 0.5 rho v^2 A and its viscous drag 3 pi mu d v (MuJoCo's inertia-box
#: model) are each at most 0.01 N, a thousandth of a 1 kg link's weight, below the uncertainty of the link's own
#: numbers: density at most 2 kg/m^3 (air: 1.2) and viscosity at most 0.01 Pa s (air: 1.8e-5; water's 1e-3, given
#: without its density, too). Water's density (1000 kg/m^3: 5 N there) is not a detail of the dynamics.
THIN_DENSITY = 2.0
THIN_VISCOSITY = 0.01
#: Attributes holding names or paths, not numbers (a body named "inf" is not a number that is not finite).
_TEXT_ATTRIBUTE = re.compile(r"(name|class|childclass|prefix|type|mode|content_type|model|key|.*file.*|.*dir|"
                             r"(joint|body|site|geom|tendon|flex|actuator|camera|light)\d?|mesh|material|texture|"
                             r"hfield|skin|target|objname|plugin|instance|refname)$")
#: An exponent of 3 digits (1e999), which may overflow to inf.
_BIG_EXPONENT = re.compile(r"e\+?\d{3}")
#: The first element of an XML text: after the declaration, comments, processing instructions and a DOCTYPE.
_FIRST_ELEMENT = re.compile(r"\A(?:\s|<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>)*<([A-Za-z_][\w.:-]*)", re.S)


def _mujoco() -> Any:
    try:
        import mujoco  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        raise ModelError(MISSING) from None
    return mujoco


def root_element(path: str | Path) -> str | None:
    """The name of the first element of the XML file ``path`` (``"mujoco"`` for MJCF, ``"robot"`` for URDF), read
    from its first 64 KiB; None if there is none there (not XML) or the file cannot be read. A FIFO, a device or a
    directory, or a file over :data:`MAX_MJCF_BYTES`, is one :class:`ModelError`, never opened."""
    check_file_size(Path(path), MAX_MJCF_BYTES, shown_path(path))
    try:
        with open(path, "rb") as handle:
            head = handle.read(65536).decode("utf-8", errors="replace")
    except OSError:
        return None
    match = _FIRST_ELEMENT.match(head.lstrip("\ufeff"))
    return match[1] if match else None


# -- before MuJoCo: the file and its includes scanned --------------------------------------------------------------
class _Scan:
    """What :func:`_scan` gathers over an MJCF file and its includes: the bytes read, the bodies the file makes
    (``<replicate>`` and ``<composite>`` counts multiplied out), the files it names (each with the directory of the
    file naming it), ``<compiler>``'s asset directories and the attributes holding a number that is not finite."""

    def __init__(self, main: Path) -> None:
        self.main = main
        self.bytes = 0
        self.bodies = 0
        self.files: list[tuple[str, str, Path]] = []  # (element, attribute value, directory of the naming file)
        self.directories: list[str] = []
        self.non_finite: list[str] = []


def _scan(path: Path, shown: str) -> None:
    """Refuse, before MuJoCo opens anything, what would hang, exhaust memory or be read wrong (one line each): a
    FIFO, a device or another special file as the model, an include or an asset (a mesh, a texture...); a file,
    or the file and its includes together, over :data:`MAX_MJCF_BYTES`; more than :data:`MAX_MJCF_BODIES`
    bodies; includes nested deeper than :data:`MAX_INCLUDE_DEPTH`, elements deeper than :data:`MAX_MJCF_NESTING`;
    an entity declaration; a number that is not finite (nan, inf) in any attribute, all such attributes named."""
    found = _Scan(path.parent)
    _scan_file(path, shown, path.parent, 1, found, 0, 0)
    if found.non_finite:
        raise ModelError(_listed("numbers that are not finite", found.non_finite), file=shown)
    for element, value, directory in found.files:
        for candidate in _candidates(value, directory, found.main, found.directories):
            _special(candidate, f"<{element} file='{value}'>", shown)


def _special(path: Path, what: str, shown: str) -> None:
    """Refuse ``path`` if it is a FIFO, a device, a directory or another special file (stat, never open); a
    missing one is left to MuJoCo, whose message names it."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return
    kind = file_kind(info.st_mode)
    if kind is not None:
        raise ModelError(f"{what} is {kind}, not a regular file (not opened)", file=shown)


def _scan_file(path: Path, shown: str, directory: Path, factor: int, found: _Scan, depth: int, level: int) -> None:
    from xml.etree import ElementTree as ET

    data = read_limited(path, MAX_MJCF_BYTES, shown_path(path))  # a special file: refused, not read
    found.bytes += len(data)
    if found.bytes > MAX_MJCF_BYTES:
        raise ModelError(f"the file and its includes are larger than {MAX_MJCF_BYTES} bytes together", file=shown)
    if b"<!ENTITY" in data:
        raise ModelError("an entity declaration is not allowed in an MJCF file", file=shown_path(path))
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ModelError(f"not valid XML ({printable(str(exc))})", file=shown_path(path)) from None
    _scan_element(root, shown, directory, factor, found, depth, level)


def _scan_element(element: Any, shown: str, directory: Path, factor: int, found: _Scan, depth: int,
                  level: int) -> None:
    """Gather what :func:`_scan` checks from ``element`` (``level`` deep, the elements of the files including it
    counted) and its children, the files it includes read in turn (``depth`` deep); ``factor``: the bodies each body
    stands for."""
    if level > MAX_MJCF_NESTING:
        raise ModelError(f"elements nested more than {MAX_MJCF_NESTING} deep", file=shown)
    tag = str(element.tag)
    for attribute, value in element.attrib.items():
        if _maybe_not_finite(value) and not _TEXT_ATTRIBUTE.match(attribute) and any(
                _non_finite(token) for token in value.split()):
            name = element.get("name")
            found.non_finite.append(f"<{tag}{f' name={clip(name)!r}' if name else ''}> {attribute}={clip(value)!r}")
        if attribute.startswith("file") and tag != "include":
            found.files.append((tag, value, directory))
    if tag == "compiler":
        found.directories += [element.get(key) for key in ("meshdir", "texturedir", "assetdir") if element.get(key)]
    count = _count(element.get("count")) if tag in ("replicate", "composite", "flexcomp") else 1
    factor *= count
    if tag == "body" or tag in ("composite", "flexcomp"):
        found.bodies += factor
    if found.bodies > MAX_MJCF_BODIES:
        raise ModelError(f"more than {MAX_MJCF_BODIES} bodies (<replicate> and <composite> counts multiplied "
                         "out): not compiled", file=shown)
    if tag == "include" and element.get("file"):
        if depth >= MAX_INCLUDE_DEPTH:
            raise ModelError(f"includes nested more than {MAX_INCLUDE_DEPTH} deep (an include of itself?)", file=shown)
        value = str(element.get("file"))
        for target in dict.fromkeys(_candidates(value, directory, found.main, [])):
            if path_exists(target):  # (a missing include: MuJoCo's message names it)
                _special(target, f"<include file='{value}'>", shown)
                _scan_file(target, shown, target.parent, factor, found, depth + 1, level)  # (its root stands in
                # for this element)
                break
    for child in element:
        _scan_element(child, shown, directory, factor, found, depth, level + 1)


def _count(text: str | None) -> int:
    """A ``count`` attribute's product (``"10 10 1"``: 100); 1 where it does not read (MuJoCo says why)."""
    try:
        return max(1, math.prod(int(token) for token in (text or "1").split()))
    except ValueError:
        return 1


def _maybe_not_finite(value: str) -> bool:
    """Whether ``value`` may hold a number that is not finite (nan, inf, 1e999): the others (a mesh's megabytes of
    vertices) are not split into numbers."""
    lowered = value.lower()
    return "nan" in lowered or "inf" in lowered or ("e" in lowered and _BIG_EXPONENT.search(lowered) is not None)


def _non_finite(token: str) -> bool:
    try:
        return not math.isfinite(float(token))
    except ValueError:
        return False


def _candidates(value: str, directory: Path, main: Path, assets: list[str]) -> list[Path]:
    """Where MuJoCo may look for a file named ``value`` in a file of ``directory`` (the main file's ``main``,
    ``<compiler>``'s asset directories)."""
    name = Path(value)
    if name.is_absolute():
        return [name]
    return [directory / name, main / name, *(main / asset / name for asset in assets)]


def _listed(what: str, items: list[str], shown: int = 3) -> str:
    """``what: a, b, c and 4 more`` (the first ``shown`` items, the rest counted)."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return f"{what}: {', '.join(items[:shown])}{more}"


def _compile(path: Path, shown: str) -> Any:
    """MuJoCo's model of the file; MuJoCo's warnings become one :class:`ModelWarning` (its handler, replaced while
    it compiles, would write MUJOCO_LOG.TXT into the working directory)."""
    mujoco = _mujoco()
    said: list[str] = []
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda message: said.append(printable(str(message))))
    try:
        model = mujoco.MjModel.from_xml_path(str(path))
    except ValueError as exc:  # MuJoCo's compiler (XML or model errors): its message on one line
        raise ModelError(f"MuJoCo cannot compile it: {printable(str(exc))}", file=shown) from None
    finally:
        mujoco.set_mju_user_warning(previous)
    if said:
        warnings.warn(f"{shown}: MuJoCo warns: {'; '.join(dict.fromkeys(said))}", ModelWarning, stacklevel=3)
    return model


def _rotation(quat: Any) -> np.ndarray:
    """The rotation matrix of a unit quaternion (w, x, y, z), MuJoCo's order."""
    w, x, y, z = (float(v) for v in quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _rotation_about(axis: np.ndarray, angle: float) -> np.ndarray:
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def _name(model: Any, kind: str, index: int) -> str:
    return str(getattr(model, kind)(index).name)


def _where_joint(model: Any, j: int) -> str:
    name = _name(model, "joint", j)
    return f"joint '{name}'" if name else f"joint {j} of body '{_name(model, 'body', int(model.jnt_bodyid[j]))}'"


def _quoted(model: Any, kind: str, index: int) -> str:
    """An element as a refusal lists it: its name quoted, or its number."""
    name = _name(model, kind, index)
    return repr(name) if name else f"#{index}"


# -- which bodies are the robot -------------------------------------------------------------------------------------
class _Robot(NamedTuple):
    """The bodies read as the robot (``bodies``, parents before children), the frame of the body above the first
    of them in the world at ``qpos0`` (``above``: the world's, the identity, without ``root=``) and the props left
    out (their names, quoted)."""

    bodies: tuple[int, ...]
    above: np.ndarray
    props: tuple[str, ...] = ()


def _subtree(model: Any, top: int) -> list[int]:
    """``top`` and the bodies below it, parents before children (MuJoCo numbers bodies so)."""
    inside = {top}
    for b in range(top + 1, model.nbody):
        if int(model.body_parentid[b]) in inside:
            inside.add(b)
    return sorted(inside)


def _moving(model: Any, bodies: list[int]) -> list[int]:
    """The hinge, slide and ball joints of ``bodies``."""
    return [j for b in bodies for j in range(int(model.body_jntadr[b]), int(model.body_jntadr[b])
                                             + int(model.body_jntnum[b])) if model.jnt_type[j] != _FREE]


def _select(model: Any, shown: str, root: str | None, floating: bool | None) -> _Robot:
    """The robot's bodies: the subtree of body ``root``; without it, the subtrees of the world holding moving joints
    (a tree on the world, as MuJoCo makes of a fixed base, whose bodies it fuses with the world) or the one floating
    robot (a free joint with moving joints below it), the free bodies beside it (props, targets: a free joint and
    no other moving joint below it) left out (:func:`read_mjcf` names them in one :class:`ModelWarning`). Several
    robots (two floating ones, or one beside moving joints fixed to the world) are refused: ``root=`` picks one (with
    ``floating=False`` every free joint is fixed, and all is one tree on the world). With no moving joint, a lone
    free body is the robot."""
    if root is not None:
        return _rooted(model, shown, root)
    tops = [b for b in range(1, model.nbody) if int(model.body_parentid[b]) == 0]
    subtrees: dict[int, list[int]] = {top: [] for top in tops}
    for b in range(1, model.nbody):  # (each body under its top: MuJoCo's body_rootid)
        subtrees[int(model.body_rootid[b])].append(b)
    moving = {top for top in tops if _moving(model, subtrees[top])}
    free = {top for top in tops if _FREE in model.jnt_type[model.body_jntadr[top]:model.body_jntadr[top]
                                                          + model.body_jntnum[top]]}
    props = [top for top in tops if top in free and top not in moving]
    names = {top: _quoted(model, "body", top) for top in tops}
    robots = [top for top in tops if top in moving and top in free and floating is not False]
    fixed = [top for top in tops if top in moving and top not in robots]
    if len(robots) + bool(fixed) > 1:
        listed = [names[top] for top in robots] + [f"{names[top]} on the world" for top in fixed[:1]]
        raise ModelError(_listed(f"{len(robots) + bool(fixed)} robots", listed, 2)
                         + f": robodyn reads one; pick it with root={names[robots[0]]}", file=shown)
    kept = robots or fixed
    if not kept and len(props) > 1:
        raise ModelError(_listed(f"{len(props)} free bodies and no moving joint", [names[top] for top in props])
                         + f": pick one with root={names[props[0]]}", file=shown)
    if not kept:
        kept, props = props, []
    return _Robot(tuple(sorted(b for top in kept for b in subtrees[top])), np.eye(4),
                  tuple(names[top] for top in props))


def _rooted(model: Any, shown: str, root: str) -> _Robot:
    """The subtree of the body named ``root``, placed where its parent is at ``qpos0``."""

    mujoco = _mujoco()
    names = [_name(model, "body", b) for b in range(1, model.nbody)]
    if root not in names:
        raise ModelError(f"no body named {root!r}{did_you_mean(root, names, most=3)}", file=shown, field="root")
    top = names.index(root) + 1
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)  # at qpos0
    parent = int(model.body_parentid[top])
    above = homogeneous(np.array(data.xmat[parent], dtype=float).reshape(3, 3),
                        np.array(data.xpos[parent], dtype=float))
    return _Robot(tuple(_subtree(model, top)), above)


# -- what robodyn does not model: every problem gathered, refused in one line ----------------------------------------
class _Problems:
    """The refused attributes of a file, grouped by what they are (``"joint stiffness"``) and the option that
    would read them, each with the names where they are (``"'hip'"``): :meth:`refuse` raises one line naming every
    group, the first two names of each and how many more."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str], list[str]] = {}

    def add(self, what: str, where: str, hint: str = "") -> None:
        self.groups.setdefault((what, hint), []).append(where)

    def refuse(self, shown: str) -> None:
        if not self.groups:
            return
        parts = []
        for (what, hint), where in self.groups.items():
            more = f" and {len(where) - 2} more" if len(where) > 2 else ""
            parts.append(f"{what} {', '.join(where[:2])}{more}{f' ({hint})' if hint else ''}")
        raise ModelError("not modelled by robodyn: " + "; ".join(parts), file=shown)


def _joint(model: Any, j: int) -> str:
    """A joint as a refusal lists it: its name quoted, or its number and body."""
    name = _name(model, "joint", j)
    return repr(name) if name else f"#{j} of body {_quoted(model, 'body', int(model.jnt_bodyid[j]))}"


def _joint_kinds(model: Any, robot: _Robot, shown: str, floating: bool | None, problems: _Problems) -> int | None:
    """The body of the robot's free joint (the floating base), or None for a fixed base: free joints dropped with
    ``floating=False`` (their bodies welded), required with ``floating=True``; a ball joint's dofs must share their
    damping and armature (robodyn's link has one of each), a free joint has neither."""
    free = None
    for b in robot.bodies:
        for j in range(int(model.body_jntadr[b]), int(model.body_jntadr[b]) + int(model.body_jntnum[b])):
            kind = int(model.jnt_type[j])
            start = int(model.jnt_dofadr[j])
            if kind == _BALL:
                for field in ("damping", "armature"):
                    if np.ptp(np.asarray(getattr(model, f"dof_{field}")[start:start + 3])) != 0:
                        problems.add(f"ball joint {field} differing among its dofs", _joint(model, j))
            if kind != _FREE or floating is False:
                continue
            free = b  # (MuJoCo puts free joints on bodies of the world only: the robot's top)
            for field in ("damping", "armature"):
                if np.any(np.asarray(getattr(model, f"dof_{field}")[start:start + 6]) != 0):
                    problems.add(f"free joint {field}", _joint(model, j))
    if floating and free is None:
        raise ModelError("floating=True, but the robot has no free joint: add <freejoint/> to its root body",
                         file=shown)
    return free


def _check_passive(model: Any, robot: _Robot, problems: _Problems, frictionloss: str) -> list[str]:
    """Gather the passive forces of the robot's joints and bodies robodyn does not model; the joints whose
    ``frictionloss`` is dropped (``frictionloss="ignore"``, or a free joint's)."""
    for b in robot.bodies:
        if float(getattr(model, "body_gravcomp", np.zeros(model.nbody))[b]) != 0:
            problems.add("body gravcomp", _quoted(model, "body", b))
    kept = set(robot.bodies)
    for field in ("tendon_stiffness", "tendon_damping", "tendon_frictionloss") if model.ntendon else ():
        values = np.asarray(getattr(model, field)).reshape(model.ntendon, -1)
        for t in np.flatnonzero(np.any(values != 0, axis=1)):
            if kept & _tendon_bodies(model, int(t)):  # (a tendon of bodies left out is theirs)
                problems.add(f"tendon {field.split('_', 1)[1]}", _quoted(model, "tendon", int(t)))
    dropped = []
    for j in _moving(model, list(robot.bodies)) + _free_joints(model, robot):
        if int(model.jnt_type[j]) in (_BALL, _FREE) and np.any(np.asarray(model.jnt_stiffness[j]) != 0):
            problems.add(f"{'ball' if int(model.jnt_type[j]) == _BALL else 'free'} joint stiffness", _joint(model, j))
        start, kind = int(model.jnt_dofadr[j]), int(model.jnt_type[j])
        if not np.any(np.asarray(model.dof_frictionloss[start:start + _DOFS[kind]]) != 0):
            continue
        if frictionloss == "refuse":
            problems.add("joint frictionloss", _joint(model, j), "frictionloss='coulomb'")
        elif frictionloss == "coulomb" and kind == _BALL:
            problems.add("ball joint frictionloss", _joint(model, j), "frictionloss='ignore'")
        elif frictionloss == "ignore" or kind == _FREE:
            dropped.append(_joint(model, j))
    return dropped


def _tendon_bodies(model: Any, t: int) -> set[int]:
    """The bodies tendon t passes: those of its joints (a fixed tendon), sites and wrapping geoms."""
    owner = {_WRAP_JOINT: model.jnt_bodyid, _WRAP_SITE: model.site_bodyid, _WRAP_SPHERE: model.geom_bodyid,
             _WRAP_CYLINDER: model.geom_bodyid}
    start = int(model.tendon_adr[t])
    return {int(owner[int(kind)][int(obj)]) for kind, obj in zip(model.wrap_type[start:start + model.tendon_num[t]],
                                                                 model.wrap_objid[start:start + model.tendon_num[t]],
                                                                 strict=True) if int(kind) in owner}


def _free_joints(model: Any, robot: _Robot) -> list[int]:
    return [j for b in robot.bodies for j in range(int(model.body_jntadr[b]), int(model.body_jntadr[b])
                                                   + int(model.body_jntnum[b])) if model.jnt_type[j] == _FREE]


def _check_fluid(model: Any, robot: _Robot, problems: _Problems, fluid: str) -> str | None:
    """Gather the fluid forces refused by ``fluid``; the note on those dropped (None where there are none).

    MuJoCo applies fluid forces where ``<option density>`` or ``<option viscosity>`` is nonzero: on each body by its
    inertia box, or by its geoms with ``fluidshape="ellipsoid"``. ``"auto"`` drops a thin medium (at most
    :data:`THIN_DENSITY` and :data:`THIN_VISCOSITY`) and refuses a denser one and every ellipsoid fluid shape;
    ``"drop"`` drops all; ``"refuse"`` refuses any."""
    density, viscosity = float(model.opt.density), float(model.opt.viscosity)
    if density == 0 and viscosity == 0:
        return None
    medium = f"density {density:g}, viscosity {viscosity:g}"
    if fluid == "refuse" or (fluid == "auto" and (density > THIN_DENSITY or viscosity > THIN_VISCOSITY)):
        problems.add("fluid forces of", medium, "fluid='drop'")
        return None
    if fluid == "auto":
        kept = set(robot.bodies)
        shaped = sorted({int(model.geom_bodyid[g]) for g in np.flatnonzero(np.asarray(model.geom_fluid)[:, 0])
                         if int(model.geom_bodyid[g]) in kept})
        for b in shaped:
            problems.add("body fluidshape='ellipsoid'", _quoted(model, "body", b), "fluid='drop'")
    return f"fluid forces (<option> {medium}) dropped: a thin medium, such as air"


def read_mjcf(path: str | Path, *, strict: bool = False, snap: bool = True, frictionloss: str = "coulomb",
              fluid: str = "auto", floating: bool | None = None, root: str | None = None) -> Manipulator:
    """A manipulator (a chain or a tree, on a fixed or a floating base) from an MJCF file, through MuJoCo's compiler
    (see the module docstring). ``frictionloss``: ``"coulomb"`` (the default: the joint's Coulomb friction),
    ``"ignore"`` (dropped, with a note) or ``"refuse"``; ``fluid``: ``"auto"`` (the default: a thin medium such as air
    dropped with a note, a denser one or an ellipsoid fluid shape refused), ``"drop"`` or ``"refuse"``;
    ``floating``: None (the default: a free joint makes a floating base), True (a free joint required) or False
    (free joints dropped, their bodies fixed where the file places them); ``root``: the name of the body whose
    subtree is the robot (None: the file's fixed tree or its one floating robot, free bodies beside it left out);
    ``snap`` and ``strict`` as :func:`robodyn.formats.urdf.read_urdf`."""
    path = Path(path)
    shown = shown_path(path)
    for option, value, allowed in (("frictionloss", frictionloss, FRICTIONLOSS), ("fluid", fluid, FLUID)):
        if value not in allowed:
            raise ModelError(f"{option}={value!r}: expected {', '.join(map(repr, allowed))}", file=shown)
    if floating not in (None, True, False):
        raise ModelError(f"floating must be None, True or False, got {type(floating).__name__}", file=shown)
    if root is not None and not isinstance(root, str):
        raise ModelError(f"root must be a body's name, got {type(root).__name__}", file=shown)
    _scan(path, shown)
    model = _compile(path, shown)
    robot = _select(model, shown, root, floating)
    problems = _Problems()
    free = _joint_kinds(model, robot, shown, floating, problems)
    dropped = _check_passive(model, robot, problems, frictionloss)
    note = _check_fluid(model, robot, problems, fluid)
    frames, index, base = _frames(model, snap, free, robot)
    couplings, driven = _couplings(model, index, robot, problems)
    problems.refuse(shown)
    if not frames and free is None:
        raise ModelError("an MJCF model with no moving joint (hinge, slide or ball)", file=shown)
    notes = {f"{len(robot.props)} free bodies beside the robot left out (props)": list(robot.props),
             "frictionloss (dry friction) dropped at joints": dropped,
             "equalities to mocap bodies left out (they drive the robot)": driven}
    for text in [_listed(what, items) for what, items in notes.items() if items] + ([note] if note else []):
        warnings.warn(f"{shown}: {text}", ModelWarning, stacklevel=2)
    gravity = [0.0, 0.0, 0.0] if model.opt.disableflags & _mujoco().mjtDisableBit.mjDSBL_GRAVITY else \
        [float(g) for g in model.opt.gravity]
    name = str(model.names[:model.names.index(b"\0")].decode()) if model.names else ""
    built = manipulator_from_frames(
        frames, name=name or path.stem, gravity=gravity, snap=snap, strict=strict, shown=shown, base=base,
        description=f"imported from {path.name} (MJCF model {name!r}, {'a floating base and ' if base else ''}"
                    f"{len(frames)} joints)")
    friction = {index[j]: float(model.dof_frictionloss[model.jnt_dofadr[j]]) for j in index
                if frictionloss == "coulomb" and model.jnt_type[j] in (_HINGE, _SLIDE)}
    links = tuple(dataclasses.replace(link, coulomb=(friction[k], -friction[k])) if friction.get(k) else link
                  for k, link in enumerate(built.links))
    if not couplings and links == built.links:
        return built
    with warnings.catch_warnings():  # the links were checked, and warned about, as the robot was built
        warnings.simplefilter("ignore", ModelWarning)
        try:
            return built.replace(links=links, couplings=couplings)
        except ModelError as exc:
            raise exc.located(file=shown) from None


def _frames(model: Any, snap: bool, free: int | None,
            robot: _Robot) -> tuple[list[JointFrame], dict[int, int], Body | None]:
    """The joint frames of the robot's bodies (MuJoCo's joint order), per hinge or slide joint its link, and the
    floating base's body (None without one: ``free`` None).

    MuJoCo moves a body's frame C by each of its joints in turn: a hinge (axis a, anchor p, reference r) by
    Trans(p) Rot(a, q - r) Trans(-p), a slide by Trans(a (q - r)). The joint's frame is C Trans(p) Rot(a, -r)
    (C Trans(-a r) for a slide), moving by Rot(a, q) (Trans(a q)) about its own origin; the body's frame, and the
    next joint's C, is then the moving frame times Trans(-p) (a slide: itself). A ball joint's frame is C Trans(p),
    not turned (its quaternion is in the body's axes), moving by its rotation about its own origin, as a hinge.
    MuJoCo keeps a body's inertia in principal axes (``body_iquat``, ``body_inertia``); turned back, entries below
    :data:`INERTIA_NOISE` times its trace are the rounding of that turn and are read as 0 (``snap=True``), so that a
    product of inertia that is 0 in the file stays 0 in the program. With a free joint on body ``free``, that body's
    frame is the base frame (MuJoCo's free joint sets it in the world: qpos), and the bodies welded to it make up
    the base's body."""
    where_of: dict[int, tuple[int, np.ndarray]] = {  # body -> (link, its frame in the link's)
        int(model.body_parentid[robot.bodies[0]]): (-1, robot.above)} if robot.bodies else {}
    base = None if free is None else Body()
    records: list[dict[str, Any]] = []
    bodies: list[Body] = []
    index: dict[int, int] = {}
    for b in robot.bodies:
        link, C = where_of[int(model.body_parentid[b])]
        C = np.eye(4) if b == free else C @ homogeneous(_rotation(model.body_quat[b]),
                                                        np.array(model.body_pos[b], dtype=float))
        for j in range(int(model.body_jntadr[b]), int(model.body_jntadr[b]) + int(model.body_jntnum[b])):
            if model.jnt_type[j] == _FREE:  # floating=False: welded where the file places it (its qpos0)
                continue
            ball = model.jnt_type[j] == _BALL
            axis = np.array([0.0, 0.0, 1.0] if ball else model.jnt_axis[j], dtype=float)
            axis /= np.linalg.norm(axis)
            ref = 0.0 if ball else float(model.qpos0[model.jnt_qposadr[j]])  # (a ball's qpos0: the identity)
            dof = int(model.jnt_dofadr[j])
            if model.jnt_type[j] in (_HINGE, _BALL):
                anchor = np.array(model.jnt_pos[j], dtype=float)
                origin = C @ homogeneous(_rotation_about(axis, -ref), anchor)
                C = homogeneous(np.eye(3), -anchor)
            else:
                origin = C @ homogeneous(np.eye(3), -ref * axis)
                C = np.eye(4)
            index[j] = len(records)
            records.append({"name": _name(model, "joint", j) or f"joint{j}", "prismatic": bool(model.jnt_type[j]
                            == _SLIDE), "spherical": bool(ball), "axis": axis, "parent": link, "origin": origin,
                            "where": _where_joint(model, j),
                            "damping": float(model.dof_damping[dof]), "armature": float(model.dof_armature[dof]),
                            # a hinge's or slide's spring, k (q - springref): MuJoCo's qpos_spring is in qpos, which
                            # is robodyn's q (its springref in degrees where the file's angles are)
                            "stiffness": 0.0 if ball else float(model.jnt_stiffness[j]),
                            "springref": 0.0 if ball else float(model.qpos_spring[model.jnt_qposadr[j]])})
            bodies.append(Body())
            link = len(records) - 1
        where_of[b] = (link, C)
        if link >= 0:
            bodies[link] = bodies[link] + _body_inertia(model, b, snap).moved(C)
        elif base is not None:  # welded to the floating base (the robot's bodies are its subtree)
            base = base + _body_inertia(model, b, snap).moved(C)
    frames = [JointFrame(body=body, **record) for record, body in zip(records, bodies, strict=True)]
    return frames, index, base


def _body_inertia(model: Any, b: int, snap: bool) -> Body:
    """Body b's inertia in its own frame, MuJoCo's principal axes turned back (snapped, see :func:`_frames`)."""
    R = _rotation(model.body_iquat[b])
    inertia = R @ np.diag(np.asarray(model.body_inertia[b], dtype=float)) @ R.T
    if snap:
        inertia[np.abs(inertia) <= INERTIA_NOISE * np.trace(inertia)] = 0.0
    return Body.from_com(float(model.body_mass[b]), np.array(model.body_ipos[b], dtype=float), inertia)


def _couplings(model: Any, index: dict[int, int], robot: _Robot,
               problems: _Problems) -> tuple[tuple[Coupling, ...], list[str]]:
    """The active joint equalities of the robot's joints as couplings, and the connect and weld equalities to a
    mocap body (a handle MuJoCo moves from outside, dragging the robot: a controller, as an actuator, left out);
    any other active equality touching the robot gathered as a problem (those of bodies left out, between props or
    a prop and the world, are theirs)."""
    out, driven, tendons = [], [], []
    kept = set(robot.bodies)
    for e in range(model.neq):
        if not model.eq_active0[e]:
            continue
        kind = _EQUALITY.get(int(model.eq_type[e]), str(int(model.eq_type[e])))
        where = _quoted(model, "equality", e)
        if kind == "tendon":
            tendons.append(e)
            continue
        if kind != "joint":
            bodies = _equality_bodies(model, e) if kind in ("connect", "weld") else []
            if bodies and not kept & set(bodies):
                continue
            if any(int(model.body_mocapid[b]) >= 0 for b in bodies):
                driven.append(f"{kind} {where}")
                continue
            problems.add(f"{kind} equality", where, "not read yet")
            continue
        j1, j2 = int(model.eq_obj1id[e]), int(model.eq_obj2id[e])
        inside = [j in index for j in (j1, j2) if j >= 0]
        if not any(inside) and not any(int(model.jnt_bodyid[j]) in kept for j in (j1, j2) if j >= 0):
            continue
        poly = [float(c) for c in model.eq_data[e][:5]]
        if j2 < 0:
            problems.add("joint equality without joint2", where, "lock the joint in the file")
        elif not all(inside):
            problems.add("joint equality of a joint outside the robot", where)
        elif any(c != 0 for c in poly[2:]) or poly[1] == 0:
            problems.add("joint equality", where, "polycoef beyond c0 c1 0 0 0: a coupling is linear")
        else:
            r1, r2 = (float(model.qpos0[model.jnt_qposadr[j]]) for j in (j1, j2))
            ratio, offset = poly[1], r1 + poly[0] - poly[1] * r2
            out.append(Coupling(index[j1], index[j2], _exact(ratio), _exact(offset)))
    coupled = {int(c.joint) for c in out}
    return (*out, *_tendon_couplings(model, index, tendons, coupled, problems)), driven


def _fixed_tendon(model: Any, t: int, index: dict[int, int]) -> dict[int, float] | None:
    """A fixed tendon's length as sum w_k q_k over the robot's links k (robodyn's indices): its joints' coefficients
    ({} for a tendon of none of the robot's joints); None where the tendon is not fixed (it wraps geoms or passes
    sites) or has joints both in and outside the robot."""
    joint = int(_mujoco().mjtWrap.mjWRAP_JOINT)
    wraps = range(int(model.tendon_adr[t]), int(model.tendon_adr[t]) + int(model.tendon_num[t]))
    inside = [int(model.wrap_objid[w]) in index and int(model.wrap_type[w]) == joint for w in wraps]
    if not any(inside):
        return {} if all(int(model.wrap_type[w]) == joint for w in wraps) else None
    if not all(inside):
        return None
    terms: dict[int, float] = {}
    for w in wraps:
        k = index[int(model.wrap_objid[w])]
        terms[k] = terms.get(k, 0.0) + float(model.wrap_prm[w])
    return terms


def _tendon_couplings(model: Any, index: dict[int, int], equalities: list[int], coupled: set[int],
                      problems: _Problems) -> list[Coupling]:
    """The tendon equalities of fixed tendons (L1 - L1_0 = c0 + c1 (L2 - L2_0), MuJoCo's, each length a sum of
    joint coordinates, L_0 at qpos0) as exact linear couplings: each equality is one linear relation of joint
    coordinates, solved for its deepest joint not yet solved for (a finger's distal joint), the earlier relations
    substituted (a chain of tendons: each distal joint in its independent leaders); a tendon that wraps or leaves
    the robot, a polynomial beyond c0 and c1, and a relation that fixes or repeats others gathered as problems."""
    solved: dict[int, tuple[dict[int, float], float]] = {}  # link -> (its leaders' ratios, offset)
    for e in equalities:
        where = _quoted(model, "equality", e)
        t1, t2 = int(model.eq_obj1id[e]), int(model.eq_obj2id[e])
        lengths = [_fixed_tendon(model, t, index) for t in (t1, t2) if t >= 0]
        if all(terms == {} for terms in lengths):  # (between tendons of joints left out: theirs)
            continue
        poly = [float(c) for c in model.eq_data[e][:5]]
        if any(terms is None for terms in lengths) or any(c != 0 for c in poly[2:]):
            problems.add("tendon equality", where, "only fixed tendons of the robot's joints, linearly, are read")
            continue
        relation = dict(lengths[0] or {})  # sum relation_k q_k = constant
        constant = float(model.tendon_length0[t1]) + poly[0]
        if t2 >= 0:
            for k, w in (lengths[1] or {}).items():
                relation[k] = relation.get(k, 0.0) - poly[1] * w
            constant -= poly[1] * float(model.tendon_length0[t2])
        for k in [k for k in relation if k in solved]:  # the joints solved for already, in their leaders
            w = relation.pop(k)
            leaders, offset = solved[k]
            constant -= w * offset
            for leader, ratio in leaders.items():
                relation[leader] = relation.get(leader, 0.0) + w * ratio
        free = [k for k, w in relation.items() if abs(w) > 1e-12 and k not in coupled]
        if not free or len([k for k, w in relation.items() if abs(w) > 1e-12]) < 2:
            problems.add("tendon equality", where, "it fixes a joint or repeats another relation")
            continue
        joint = max(free)
        w = relation.pop(joint)
        leaders = {k: -v / w for k, v in relation.items() if abs(v) > 1e-12}
        for other, (others, offset) in solved.items():  # the new one substituted into those that lead with it
            if joint in others:
                ratio = others.pop(joint)
                for k, r in leaders.items():
                    others[k] = others.get(k, 0.0) + ratio * r
                solved[other] = (others, offset + ratio * constant / w)
        solved[joint] = (leaders, constant / w)
    return [Coupling(k, leaders=[(j, _exact(r)) for j, r in sorted(leaders.items()) if r != 0], offset=_exact(offset))
            for k, (leaders, offset) in sorted(solved.items())]


def _equality_bodies(model: Any, e: int) -> list[int]:
    """The bodies a connect or weld equality holds together (a site's body for a site; 0 is the world)."""
    site = int(_mujoco().mjtObj.mjOBJ_SITE)
    objects = [int(model.eq_obj1id[e]), int(model.eq_obj2id[e])]
    if int(model.eq_objtype[e]) == site:
        return [int(model.site_bodyid[o]) for o in objects if o >= 0]
    return [o for o in objects if o >= 0]


def _exact(x: float) -> Any:
    """1.0, -1.0 and 0.0 as integers (couplings of most mimic joints then fold away in programs)."""
    return int(x) if x in (0.0, 1.0, -1.0) else x


# -- coordinates ----------------------------------------------------------------------------------------------


class State(NamedTuple):
    """One state in robodyn's coordinates (:func:`from_mujoco`) or MuJoCo's (:func:`to_mujoco`): positions,
    velocities, accelerations and generalised forces; None where not given."""

    q: np.ndarray
    v: np.ndarray | None = None
    a: np.ndarray | None = None
    tau: np.ndarray | None = None


def _vector(x: Any, length: int, what: str) -> np.ndarray:
    out = np.array(x, dtype=float)
    if out.shape != (length,):
        raise ValueError(f"{what}: expected a vector of {length}, got shape {out.shape}")
    return out


def _ball_quaternions(robot: Manipulator, q: np.ndarray, shift: int) -> np.ndarray:
    """q with each spherical joint's quaternion rolled by ``shift`` (-1: MuJoCo's w, x, y, z to x, y, z, w)."""
    for k in robot.spherical:
        at = robot.idx_q(k)
        q[at:at + 4] = np.roll(q[at:at + 4], shift)
    return q


def _base_rotation(quat_xyzw: np.ndarray) -> np.ndarray:
    x, y, z, w = quat_xyzw
    return _rotation((w, x, y, z))


def from_mujoco(robot: Manipulator, qpos: Any, qvel: Any = None, qacc: Any = None, qfrc: Any = None) -> State:
    """MuJoCo's ``qpos``, ``qvel``, ``qacc`` and a generalised force (``qfrc_*``) of a robot read by
    :func:`read_mjcf` in robodyn's coordinates (the module docstring): the same numbers for a fixed base, but each
    ball joint's quaternion reordered (w, x, y, z -> x, y, z, w); for a floating one the base's quaternion reordered
    too and the base's linear velocity, acceleration and force turned into the base frame (v = T^-1 v_mj,
    a = T^-1 (qacc - dT v), tau = T^T qfrc)."""
    q = _ball_quaternions(robot, _vector(qpos, robot.nq, "qpos"), -1)
    if not robot.floating:
        return State(q, *(None if x is None else _vector(x, robot.nv, name)
                          for x, name in ((qvel, "qvel"), (qacc, "qacc"), (qfrc, "qfrc"))))
    q[3:7] = np.roll(q[3:7], -1)
    R = _base_rotation(q[3:7])
    v = a = tau = None
    if qvel is not None:
        v = _vector(qvel, robot.nv, "qvel")
        v[:3] = R.T @ v[:3]
    if qacc is not None:
        if v is None:
            raise ValueError("qacc needs qvel (the base's acceleration depends on its velocity)")
        a = _vector(qacc, robot.nv, "qacc")
        a[:3] = R.T @ a[:3] - np.cross(v[3:6], v[:3])
    if qfrc is not None:
        tau = _vector(qfrc, robot.nv, "qfrc")
        tau[:3] = R.T @ tau[:3]
    return State(q, v, a, tau)


def to_mujoco(robot: Manipulator, q: Any, v: Any = None, a: Any = None, tau: Any = None) -> State:
    """The inverse of :func:`from_mujoco`: robodyn's q, v, a, tau as MuJoCo's qpos, qvel, qacc and qfrc."""
    qpos = _ball_quaternions(robot, _vector(q, robot.nq, "q"), 1)
    if not robot.floating:
        return State(qpos, *(None if x is None else _vector(x, robot.nv, name)
                             for x, name in ((v, "v"), (a, "a"), (tau, "tau"))))
    R = _base_rotation(qpos[3:7])
    qpos[3:7] = np.roll(qpos[3:7], 1)
    qvel = qacc = qfrc = None
    if v is not None:
        qvel = _vector(v, robot.nv, "v")
        qvel[:3] = R @ qvel[:3]
    if a is not None:
        if v is None:
            raise ValueError("a needs v (the base's acceleration depends on its velocity)")
        body_v = _vector(v, robot.nv, "v")
        qacc = _vector(a, robot.nv, "a")
        qacc[:3] = R @ (qacc[:3] + np.cross(body_v[3:6], body_v[:3]))
    if tau is not None:
        qfrc = _vector(tau, robot.nv, "tau")
        qfrc[:3] = R @ qfrc[:3]
    return State(qpos, qvel, qacc, qfrc)


# -- writing ----------------------------------------------------------------------------------------


def _quaternion(R: np.ndarray) -> np.ndarray:
    """The unit quaternion (w, x, y, z) of a rotation matrix (MuJoCo's mju_mat2Quat)."""
    mujoco = _mujoco()
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.ascontiguousarray(R, dtype=float).ravel())
    return quat


def _fmt(values: Any) -> str:
    return " ".join(repr(float(x)) for x in np.asarray(values, dtype=float).ravel())


def to_mjcf(robot: Manipulator, params: Mapping[Any, Any] | None = None) -> str:
    """MJCF text for ``robot`` (numeric data, or symbols bound by ``params``), every number written in full
    (``repr``) and the text checked by MuJoCo's compiler; see the module docstring."""
    from xml.etree import ElementTree as ET

    mujoco = _mujoco()
    if not isinstance(robot, Manipulator):
        raise TypeError(f"to_mjcf() expects a Manipulator, got {type(robot).__name__}")
    robot.check_one_dof("to_mjcf")
    floats = bound_floats(robot, params)
    if any(floats.scalar(x) != 0 for x in (*robot.tip_force, *robot.tip_moment)):
        warnings.warn(f"{robot.name}: MJCF has no tip load; not written", ModelWarning, stacklevel=2)
    root = ET.Element("mujoco", model=robot.name)
    root.append(ET.Comment(f" written by robodyn from {robot.name} ({robot.convention} DH) "))
    ET.SubElement(root, "compiler", angle="radian", autolimits="true")
    ET.SubElement(root, "option", gravity=_fmt([floats.scalar(g) for g in robot.gravity]))
    names = list(robot.joint_names)
    children = [[k for k, p in enumerate(robot.parents) if p == i] for i in range(robot.n)]
    world = ET.SubElement(root, "worldbody")
    host: dict[int, Any] = {-1: _base(ET, world, robot, floats) if robot.floating else world}  # per link: the body
    # carrying its frame
    chain: dict[int, tuple[Any, list[tuple[int, np.ndarray]]]] = {}  # per link: the massless links merged into
    # its body, each with its frame in the parent body's frame at q = 0, and that parent body
    C_of: dict[int, np.ndarray] = {-1: np.eye(4)}  # per link: C_i, from the numeric engine's joint frame to frame i
    for i, link in enumerate(robot.links):
        p = robot.parents[i]
        B, C_of[i] = link_transforms(floats, robot.convention, link)
        parent, joints = chain.pop(i) if i in chain else (host[p], [])
        above = joints[-1][1] if joints else np.eye(4)
        joints = [*joints, (i, above @ C_of[p] @ B @ joint_screw(floats, link))]
        body = Body()
        for b in robot.bodies(i):
            body = body + Body.from_com(floats.scalar(b.mass), floats.array(b.com, (3,)),
                                        floats.array(b.inertia, (3, 3))).moved(C_of[i])
        if body.m == 0 and not body.J.any() and len(children[i]) == 1:  # MuJoCo refuses a massless moving body:
            chain[children[i][0]] = (parent, joints)  # its joint goes into its only child's body, applied first
            continue
        host[i] = _body(ET, parent, link.name or f"link{i + 1}", joints, body, robot, names, floats)
    if robot.couplings:
        equality = ET.SubElement(root, "equality")
        for coupling in robot.couplings:
            if coupling.closure is not None:  # a four-bar's passive joint: not a polynomial of one joint
                raise ModelError(f"loop {coupling.loop!r} is a four-bar in closed form: MJCF's joint equalities are "
                                 "polynomials, not written", field="loops")
            if len(coupling.leaders) != 1:  # MJCF's joint equality has one joint2
                raise ModelError(f"a coupling of joint {names[int(coupling.joint)]!r} to {len(coupling.leaders)} "
                                 "leaders has no MJCF joint equality (one leader each)", field="couplings")
            (leader, ratio), = coupling.leaders
            ET.SubElement(equality, "joint", joint1=names[int(coupling.joint)], joint2=names[int(leader)],
                          polycoef=_fmt([floats.scalar(coupling.offset), floats.scalar(ratio), 0, 0, 0]))
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode") + "\n"
    try:
        mujoco.MjModel.from_xml_string(text)
    except ValueError as exc:
        raise ModelError(f"MuJoCo cannot compile the MJCF written: {printable(str(exc))}") from None
    return text


def _base(ET: Any, world: Any, robot: Manipulator, floats: Any) -> Any:
    """A floating robot's base: a body at the world's origin with a free joint and the base's inertia."""
    element = ET.SubElement(world, "body", name="base")
    ET.SubElement(element, "freejoint", name="base")
    if robot.base is not None and floats.scalar(robot.base.mass) > 0:
        _inertial(ET, element, floats.scalar(robot.base.mass), floats.array(robot.base.com, (3,)),
                  floats.array(robot.base.inertia, (3, 3)))
    return element


def _inertial(ET: Any, element: Any, mass: float, com: np.ndarray, inertia: np.ndarray) -> None:
    ET.SubElement(element, "inertial", pos=_fmt(com), mass=repr(float(mass)), fullinertia=_fmt(
        [inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2], inertia[1, 2]]))


def _body(ET: Any, parent: Any, name: str, joints: list[tuple[int, np.ndarray]], body: Body,
          robot: Manipulator, names: list[str], floats: Any) -> Any:
    """A body at the frame of the last of ``joints`` ((link, its frame in the parent body's frame at q = 0)), with
    a hinge or slide joint per link, each about its own frame's z, given in the body's frame."""
    frame = joints[-1][1]
    element = ET.SubElement(parent, "body", name=name, pos=_fmt(frame[:3, 3]), quat=_fmt(_quaternion(frame[:3, :3])))
    mass, com, inertia = body.com_form()
    if mass > 0:
        _inertial(ET, element, mass, com, inertia)
    inverse = np.linalg.inv(frame)
    for k, F in joints:
        link, relative = robot.links[k], inverse @ F
        ET.SubElement(element, "joint", name=names[k], type="hinge" if link.revolute else "slide",
                      pos=_fmt(relative[:3, 3]), axis=_fmt(relative[:3, 2]),
                      armature=repr(floats.scalar(link.armature)), damping=repr(floats.scalar(link.damping)),
                      **_frictionloss(link, floats, k))
    return element


def _frictionloss(link: Any, floats: Any, k: int) -> dict[str, str]:
    """A link's Coulomb friction [Tc+, Tc-] as MJCF's ``frictionloss``, its odd part (Tc+ - Tc-) / 2 (read back as
    [f, -f], :func:`read_mjcf`'s default); an even part (Tc+ + Tc-) / 2, a force while moving in either direction,
    has no MJCF counterpart: a warning says it is not written."""
    plus, minus = (floats.scalar(x) for x in link.coulomb)
    if plus + minus != 0:
        warnings.warn(f"link {k + 1}: Coulomb friction [{plus:g}, {minus:g}] is not symmetric: MJCF's frictionloss "
                      f"is its odd part {(plus - minus) / 2:g}; the even part {(plus + minus) / 2:g} is not written",
                      ModelWarning, stacklevel=4)
    return {"frictionloss": repr((plus - minus) / 2)} if plus != minus else {}


def write_mjcf(robot: Manipulator, path: str | Path, params: Mapping[Any, Any] | None = None) -> Path:
    """Write :func:`to_mjcf` text to ``path`` atomically."""
    return atomic_write(path, to_mjcf(robot, params))


__all__ = ["FLUID", "FRICTIONLOSS", "MISSING", "State", "from_mujoco", "read_mjcf", "root_element", "to_mjcf",
           "to_mujoco", "write_mjcf"]

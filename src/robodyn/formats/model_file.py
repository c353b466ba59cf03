"""Model files: YAML or JSON with one structure, read safely, written atomically.

::

    name: stanford_angeles
    convention: standard          # standard | modified | angeles (converted to modified here)
    gravity: [0, 0, -9.81]        # acceleration of gravity in the base frame, or [0, 0, -g]
    links:
      - joint: R                  # R, P or S (spherical: nq 4, a unit quaternion x, y, z, w; nv 3)
        a: 0
        alpha: -pi/2
        d: 0.0                    # (angeles: b instead of d)
        theta: 0                  # offset added to q for R; constant for P
        mass: 9.0
        com: [0, 0, -0.1]         # centre of mass in the link frame
        inertia: [[0.02, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]   # about the COM; or [Ixx, Iyy, Izz]
        damping: 0                # optional viscous coefficient b_i
        coulomb: [0.4, -0.43]     # optional Coulomb friction [Tc+, Tc-] (qd > 0, qd < 0), or c for [c, -c]
        armature: 0               # optional reflected rotor inertia G^2 Jm
        stiffness: 0              # optional joint spring k_i >= 0: tau_i gets k_i (q_i - springref) (R and P)
        springref: 0              # optional q where the spring is relaxed (MuJoCo's springref)
        placement: [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]  # optional fixed
                                  # transform before the DH transform: A = placement * A_DH
        name: shoulder            # optional: names the joint (for parent, messages)
        joint_name: l_arm/shoulder   # optional: the joint's name in the robot's source (URDF), any text, for
                                  # q_from and named (robot.joint_names); default: name
        inertia_note: only Izz is published   # optional: why this inertia breaks the triangle inequality
                                  # (published data kept as given): then no warning for this link
        parent: 0                 # optional: the link it hangs on, a name or its number from 1
                                  # (0 or base: the base); default: the link above it in the list

A ``parent`` makes the arm a kinematic tree (:class:`~robodyn.model.Manipulator`): list each link after its
parent; the row then describes the transform from the parent's frame.

``joint: S`` (or ``spherical``) is a ball joint anywhere in the tree (:attr:`~robodyn.model.Link.spherical`): the
row's frame with q = 0 (its ``theta``, ``d`` as offsets), turned about its origin by a unit quaternion (x, y, z,
w), its velocity the angular velocity in the link's frame (Pinocchio's ``JointModelSpherical``). The numeric
engine's inverse_dynamics, mass_matrix and forward_dynamics handle it; the other paths refuse it in one line.

Optional top-level keys: ``description``, ``source``, ``notes``, ``tip_load`` (``force``,
``moment``), ``payload`` (``mass``, ``com``, ``inertia``), ``tool`` (4x4), ``couplings`` (coupled joints,
:mod:`robodyn.model.couplings`: q_joint = ratio q_leader + offset, the robot's q then its independent joints')::

    couplings:
      - {joint: finger2, leader: finger1, ratio: 1, offset: 0}   # joint, leader: link names or numbers from 1
      - {joint: q3p, leaders: {q2: -1, q3: 1}, offset: 0}        # several leaders: q3p = -q2 + q3

``loops`` (loop closures, :mod:`robodyn.model.loops`: the tree plus closing joints) with ``actuated`` (the
robot's coordinates; every other joint of a loop is passive, fixed by the closures)::

    actuated: [q1, q2, q3, q4]                 # link names or numbers from 1
    loops:
      - name: lower                            # optional (default loop1, loop2, ...)
        links: [crank, rod]                    # the two links it closes: names or numbers from 1 (0: the base)
        joint: revolute                        # revolute, prismatic, spherical or weld
        axis: [0, 0, 1]                        # in the closing frame (revolute, prismatic); default z
        placements: [{xyz: [0.5, 0, 0], rpy: [0, 0, 0]}, {xyz: [1, 0, 0]}]   # the closing joint's frame on each
                                               # link (xyz, rpy as URDF's origin; or a 4x4); default: the link's

``floating: true`` puts a free joint at the root (a floating base: humanoids, quadrupeds, drones; q then starts
with the base's position and unit quaternion x, y, z, w, and v with its body-frame twist, as Pinocchio's free
flyer) and ``base`` (``mass``, ``com``, ``inertia``, in the base frame) is the body it carries; such a file may
have no ``links`` (a drone)::

    floating: true
    base: {mass: 1.5, com: [0, 0, 0], inertia: [0.02, 0.02, 0.04]}

and ``frames`` (named frames, :mod:`robodyn.model.frames`: a frame fixed to a link, at a placement in its frame;
``tool_pose``, the Jacobians, generated kinematics and ``ik.solve`` take them by name)::

    frames:
      - {name: flange, link: wrist3, placement: [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.1], [0, 0, 0, 1]]}
      - {name: camera, link: 0}                 # link: a link name or number from 1 (0 or base: the base)

Reading never runs code: YAML through ``yaml.safe_load`` (no object tags) and every
expression string through the whitelist parser of :mod:`robodyn.model.expr`.
"""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from robodyn.errors import ModelError, prefixed_warnings
from robodyn.model.couplings import Coupling
from robodyn.model.expr import to_expr
from robodyn.model.files import (
    SHOWN_PATH_CHARS,
    atomic_path,
    atomic_write,
    check_file_size,
    dumps,
    file_kind,
    manipulator_to_dict,
    path_exists,
    read_limited,
    read_text_limited,
    save,
    shown_path,
    write_all,
)
from robodyn.model.link import RigidBody
from robodyn.model.manipulator import MAX_LINKS, Link, Manipulator, Payload

MAX_FILE_BYTES = 2_000_000

TOP_KEYS = {
    "name", "convention", "gravity", "links", "description", "source", "notes",
    "tip_load", "payload", "tool", "couplings", "frames", "loops", "actuated", "floating", "base",
}
COUPLING_KEYS = {"joint", "leader", "ratio", "offset", "leaders"}
LOOP_KEYS = {"name", "links", "placements", "joint", "axis", "branch", "reference"}
LINK_KEYS = {"joint", "a", "alpha", "d", "theta", "mass", "com", "inertia", "damping", "armature", "placement",
             "name", "parent", "coulomb", "inertia_note", "joint_name", "stiffness", "springref"}
ANGELES_LINK_KEYS = (LINK_KEYS - {"d"}) | {"b"}
BODY_KEYS = {"mass", "com", "inertia"}


# -- reading ------------------------------------------------------------------------------
def read_model_file(path: str | Path, *, strict: bool = False) -> Manipulator:
    """Load a ``.yaml``/``.yml``/``.json`` model file; errors name the file, link and field."""
    path = Path(path)
    shown = str(path)
    text = read_text_limited(path, MAX_FILE_BYTES, shown)
    data = parse_text(text, json_format=path.suffix.lower() == ".json", file=shown)
    return build_located(data, shown, strict=strict)


def build_located(data: Any, shown: str, *, strict: bool) -> Manipulator:
    """:func:`manipulator_from_dict` with the file name put into errors and warnings."""
    try:
        with prefixed_warnings(shown):
            return manipulator_from_dict(data, strict=strict)
    except ModelError as exc:
        raise exc.located(file=shown) from None


#: Plain scalars that YAML 1.1 (PyYAML's default) and YAML 1.2 read differently as numbers: a leading zero
#: (1.1: octal, ``010`` is 8; 1.2: 10), sexagesimal (1.1: ``1:30`` is 90; 1.2: text), binary and digit
#: separators (1.1: numbers; 1.2: text), and YAML 1.1's dates and times (1.2: text, which robodyn's expression
#: language would then read as arithmetic: ``2001-12-14`` is 1975). A model file refuses them rather than guess.
_YAML11_TIMESTAMP = re.compile(
    r"""[0-9]{4}-[0-9]{2}-[0-9]{2}
    |[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?
     (?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?""",
    re.X,
)
_AMBIGUOUS_NUMBER = re.compile(
    r"""[-+]?0[0-9_]+
    |[-+]?[0-9][0-9_]*(?::[0-9_]+)+(?:\.[0-9_]*)?
    |[-+]?0b[0-1_]+
    |[-+]?(?:0x[0-9a-fA-F_]+|0o[0-7_]+|[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9_]+)?
             |\.[0-9][0-9_]*(?:[eE][-+]?[0-9_]+)?)""",
    re.X,
)
_AMBIGUOUS_TAG = "tag:robodyn,2024:ambiguous-number"


def _ambiguous_number(value: str) -> bool:
    if _YAML11_TIMESTAMP.fullmatch(value):
        return True
    if not _AMBIGUOUS_NUMBER.fullmatch(value):
        return False
    body = value.lstrip("+-")
    # the last alternative (decimal, hex, octal, float) is ambiguous only with a digit separator
    return "_" in value or ":" in value or body.startswith("0b") or (body[:1] == "0" and body[1:2].isdigit())


class _AmbiguousNumberError(yaml.constructor.ConstructorError):
    """A plain scalar that YAML 1.1 and 1.2 read differently; ``field`` is the mapping key it is under."""

    def __init__(self, value: str, mark: Any, field: str | None = None) -> None:
        shown = value if len(value) <= 40 else value[:40] + "..."
        super().__init__(
            None, None,
            f"{shown!r} is read differently by YAML 1.1 and 1.2: write a plain decimal number, 0x or 0o for "
            "hex or octal, or quote it for text",
            mark,
        )
        self.field = field


def _construct_int(loader: yaml.SafeLoader, node: Any) -> int:
    """A YAML 1.2 core-schema integer: decimal, ``0o`` octal or ``0x`` hexadecimal."""
    value = str(loader.construct_scalar(node))
    sign = -1 if value.startswith("-") else 1
    body = value.lstrip("+-")
    if body[:2] in ("0x", "0o"):
        return sign * int(body[2:], 16 if body[1] == "x" else 8)
    return sign * int(body)


def _refuse_ambiguous(loader: yaml.SafeLoader, node: Any) -> Any:
    raise _AmbiguousNumberError(str(node.value), node.start_mark)


def _first_ambiguous(node: Any, depth: int = 0) -> Any:
    """The first ambiguous plain scalar in ``node`` or the sequences inside it (a mapping inside checks its own)."""
    if isinstance(node, yaml.ScalarNode):
        return node if node.tag == _AMBIGUOUS_TAG else None
    if isinstance(node, yaml.SequenceNode) and depth < 100:
        for item in node.value:
            found = _first_ambiguous(item, depth + 1)
            if found is not None:
                return found
    return None


class _ModelLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` without aliases: a model file has no use for ``*name``, and alias
    trees ("billion laughs") would make the reader format exponentially large values.

    Plain scalars resolve as in the YAML 1.2 core schema (``yes``/``no``/``on``/``off`` and dates are text,
    ``0o17`` and ``1e3`` numbers), except those YAML 1.1 reads as other numbers (``010``, ``1:30``,
    ``1_000``, ``0b101``), which are refused naming their field. The resolver table is this class's own.
    """

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode and implicit[0] and isinstance(value, str) and _ambiguous_number(value):
            return _AMBIGUOUS_TAG
        return super().resolve(kind, value, implicit)

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not allowed in model files", event.start_mark
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        """Refuse a key given twice in one mapping (YAML would keep the last silently)."""
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:  # unhashable: the base class reports it
                    continue
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r}", key_node.start_mark
                    )
            for key_node, value_node in node.value:
                found = _first_ambiguous(value_node)
                if found is not None:
                    field = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
                    raise _AmbiguousNumberError(str(found.value), found.start_mark, str(field)[:40])
        return super().construct_mapping(node, deep=deep)


_TAG = "tag:yaml.org,2002:"
# YAML 1.2 core schema: this class's own copy of the resolver table, without 1.1's bool, int, float and
# timestamp forms, then the 1.2 ones (yaml.SafeLoader itself is left as it is)
_ModelLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers
            if tag not in {_TAG + "bool", _TAG + "int", _TAG + "float", _TAG + "timestamp"}]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_ModelLoader.add_implicit_resolver(_TAG + "bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_ModelLoader.add_implicit_resolver(
    _TAG + "int", re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)
_ModelLoader.add_implicit_resolver(
    _TAG + "float",
    re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
    list("-+.0123456789"),
)
_ModelLoader.add_constructor(_TAG + "int", _construct_int)


def _construct_str(loader: yaml.SafeLoader, node: Any) -> str:
    """A string with its UTF-16 surrogate pairs joined: ``"\\ud83e\\udd16"`` (how JSON writers escape an emoji)
    is one character, as in JSON; PyYAML leaves two lone surrogates, which are not text. A lone surrogate stays
    one, and the model refuses it (:func:`robodyn.model.expr.check_text`)."""
    value = str(loader.construct_scalar(node))
    if not any("\ud800" <= c <= "\udfff" for c in value):
        return value
    return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


_ModelLoader.add_constructor(_TAG + "str", _construct_str)
_ModelLoader.add_constructor(_AMBIGUOUS_TAG, _refuse_ambiguous)


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str, position: int) -> None:
        super().__init__(key)
        self.key, self.position = key, position


def _json_object(
    s_and_end: tuple[str, int], strict: bool, scan_once: Callable[[str, int], Any], *_: Any, **__: Any
) -> tuple[dict[str, Any], int]:
    """``json``'s object parser, refusing a key given twice (JSON would keep the last silently); the
    error carries the position of the repeated key's value."""
    starts: list[int] = []

    def scan(text: str, index: int) -> Any:
        starts.append(index)
        return scan_once(text, index)

    # json.decoder.JSONObject exists at run time, but typeshed leaves json's private parser functions out
    pairs, end = json.decoder.JSONObject(s_and_end, strict, scan, None, list)  # type: ignore[attr-defined]
    result: dict[str, Any] = {}
    for (key, value), start in zip(pairs, starts, strict=False):
        if key in result:
            raise _DuplicateKeyError(key, start)
        result[key] = value
    return result, end


def _json_loads(text: str) -> Any:
    decoder = json.JSONDecoder()
    # parse_object, scan_once and py_make_scanner are json's internals, real at run time but not in typeshed
    decoder.parse_object = _json_object  # type: ignore[attr-defined]
    # the C scanner would bypass parse_object
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    return decoder.decode(text)


def parse_text(text: str, *, json_format: bool, file: str | None = None) -> Any:
    try:
        if json_format:
            return _json_loads(text)
        return yaml.load(text, Loader=_ModelLoader)
    except _DuplicateKeyError as exc:
        line = text.count("\n", 0, exc.position) + 1
        raise ModelError(f"not valid JSON (line {line}: duplicate key {exc.key!r})", file=file) from None
    except json.JSONDecodeError as exc:
        raise ModelError(f"not valid JSON (line {exc.lineno}: {exc.msg})", file=file) from None
    except _AmbiguousNumberError as exc:
        where = f"line {exc.problem_mark.line + 1}: " if exc.problem_mark is not None else ""
        raise ModelError(f"{where}{exc.problem}", file=file, field=exc.field) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or exc.__class__.__name__
        raise ModelError(f"not valid YAML ({where}{problem})", file=file) from None
    except RecursionError:
        raise ModelError("document nested too deeply", file=file) from None
    except ValueError as exc:  # e.g. an integer literal longer than Python converts
        raise ModelError(f"unreadable value ({' '.join(str(exc).split())[:120]})", file=file) from None


def _require_mapping(value: Any, what: str, *, link: int | str | None = None) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ModelError(f"expected a mapping of fields, got {type(value).__name__}", link=link, field=what)
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise ModelError(f"field names must be strings, got {bad[0]!r}", link=link, field=what)
    return value


def _check_keys(data: Mapping[str, Any], allowed: set[str], *, link: int | str | None, what: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ModelError(
            f"unknown field (allowed: {', '.join(sorted(allowed))})", link=link, field=unknown[0]
        )


def angeles_to_modified(row: Mapping[str, Any]) -> dict[str, Any]:
    """Angeles, Ma and Rojas' HD notation (their eq. 7-8) to modified DH (Craig).

    Their Q_i = Rot(x, alpha_i) Rot(z, theta_i) and [a_i]_{i-1} = (a_i, b_i s(alpha_i), -b_i c(alpha_i))
    equal Craig's A_i with alpha_{i-1} = alpha_i, a_{i-1} = a_i and d_i = -b_i: the same frames,
    their b_i measured the other way along Z_i. So a prismatic joint's q_i here is -b_i.
    This is the one place where that conversion happens.
    """
    converted = {k: v for k, v in row.items() if k != "b"}
    b = row.get("b", 0)
    converted["d"] = f"-({b})" if isinstance(b, str) else -b
    return converted


def _file_parent(value: Any, k: int) -> int | str:
    """A model file's ``parent`` of link k (from 1): a name as it is, a link number from 1 (0: the base) as a
    0-based index (-1: the base), as :class:`~robodyn.model.Manipulator` takes them."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelError(f"expected a link name or number (0: the base), got {value!r:.40}", link=k, field="parent")
    if not 0 <= value < k:
        raise ModelError(f"{value} is not the number of a link listed before this one (0: the base)", link=k,
                         field="parent")
    return value - 1


def _inertia_note(value: Any, k: int) -> str:
    """A link's ``inertia_note``: why its published inertia breaks the triangle inequality (then not warned of)."""
    if not isinstance(value, str):
        raise ModelError(f"expected text (why the published inertia is kept as given), got {type(value).__name__}",
                         link=k, field="inertia_note")
    return value.strip()


def _joint_name(value: Any, k: int) -> str:
    """A link's ``joint_name``: the joint's name in the robot's source, any text ("" for the link's ``name``)."""
    if not isinstance(value, str):
        raise ModelError(f"expected text (the joint's name in its source), got {type(value).__name__}", link=k,
                         field="joint_name")
    return value


def _coupling_end(end: Any, key: str, n: int) -> int | str:
    """A coupling's joint or leader: a link name, or a number from 1 to ``n`` (made 0-based)."""
    if isinstance(end, bool) or not isinstance(end, int | str):
        raise ModelError(f"{key}: expected a link name or number from 1, got {end!r:.40}", field="couplings")
    if isinstance(end, int) and not 1 <= end <= n:
        raise ModelError(f"{key}: {end} is not a link number (1 to {n})", field="couplings")
    return end if isinstance(end, str) else end - 1


def _file_coupling(entry: Any, n: int) -> Coupling:
    entry = _require_mapping(entry, "couplings")
    _check_keys(entry, COUPLING_KEYS, link=None, what="coupling")
    if "joint" not in entry:
        raise ModelError("a coupling without 'joint'", field="couplings")
    joint = _coupling_end(entry["joint"], "joint", n)
    if "leaders" in entry:
        if "leader" in entry or "ratio" in entry:
            raise ModelError("a coupling with leaders has no leader or ratio (each leader maps to its ratio)",
                             field="couplings")
        leaders = entry["leaders"]
        if not isinstance(leaders, Mapping) or not leaders:
            raise ModelError("leaders: expected a mapping of leader (a link name or number from 1) to ratio",
                             field="couplings")
        terms = [(_coupling_end(k, "leaders", n), to_expr(r, "leaders")) for k, r in leaders.items()]
        return Coupling(joint, leaders=terms, offset=to_expr(entry.get("offset", 0), "offset"))
    if "leader" not in entry:
        raise ModelError("a coupling without 'leader' (or 'leaders')", field="couplings")
    return Coupling(joint, _coupling_end(entry["leader"], "leader", n), to_expr(entry.get("ratio", 1), "ratio"),
                    to_expr(entry.get("offset", 0), "offset"))


def _file_couplings(value: Any, n: int) -> list[Coupling]:
    """A model file's ``couplings``: joint and leader as link names, or numbers from 1 (made 0-based); several
    leaders as ``leaders: {q2: -1, q3: 1}`` (leader: ratio) instead of ``leader`` and ``ratio``. A refusal names
    the coupling: its place in the list and its joint as the file gives it."""
    if not isinstance(value, list):
        raise ModelError("expected a list of couplings ({joint, leader, ratio, offset} or {joint, leaders, "
                         "offset})", field="couplings")
    out = []
    for k, entry in enumerate(value, start=1):
        try:
            out.append(_file_coupling(entry, n))
        except ModelError as exc:
            joint = entry.get("joint") if isinstance(entry, Mapping) else None
            named = f" (joint {joint!r:.40})" if isinstance(joint, str | int) and not isinstance(joint, bool) else ""
            problem = exc.problem if exc.field in (None, "couplings") else f"{exc.field}: {exc.problem}"
            raise ModelError(f"coupling {k}{named}: {problem}", field="couplings") from None
    return out


def _loop_end(end: Any, name: str, n: int, what: str = "links") -> int | str:
    """One of a loop's links (``what``: the field, for messages): a name ("base": the base), or a number from 1
    (0: the base) made 0-based."""
    base = "; 0: the base" if what == "links" else ""
    if isinstance(end, bool) or not isinstance(end, int | str):
        raise ModelError(f"loop {name}: {what}: expected a link name or number (from 1{base}), got {end!r:.40}",
                         field="loops")
    if isinstance(end, int) and not 0 <= end <= n:
        raise ModelError(f"loop {name}: {what}: {end} is not a link number (1 to {n}{base})", field="loops")
    return end if isinstance(end, str) else end - 1


def _reference_joint(key: Any, name: str, n: int) -> int | str:
    """A joint of a loop's reference configuration: a link name or a number from 1, made 0-based."""
    if (key == 0 and not isinstance(key, bool)) or key == "base":
        raise ModelError(f"loop {name}: reference: {key!r} is the base, not a joint (joints: link names or numbers "
                         f"1 to {n})", field="loops")
    return _loop_end(key, name, n, "reference")


def _file_loops(value: Any, n: int) -> list[dict[str, Any]]:
    """A model file's ``loops``: each {name, links: [a, b], placements: [P_a, P_b], joint, axis}, its links made
    0-based (-1: the base); the rest is checked by the Manipulator (:mod:`robodyn.model.loops`)."""
    if not isinstance(value, list):
        raise ModelError("expected a list of loops ({name, links, placements, joint, axis})", field="loops")
    out = []
    for k, entry in enumerate(value, start=1):
        if not isinstance(entry, Mapping):
            raise ModelError(f"loop {k}: expected a mapping of fields ({{name, links, placements, joint, axis}}), "
                             f"got {type(entry).__name__}", field="loops")
        entry = _require_mapping(entry, "loops")
        name = repr(entry["name"])[:40] if isinstance(entry.get("name"), str) else str(k)
        unknown = sorted(set(entry) - LOOP_KEYS)
        if unknown:
            raise ModelError(f"loop {name}: unknown field {unknown[0]!r:.40} (allowed: "
                             f"{', '.join(sorted(LOOP_KEYS))})", field="loops")
        if "links" not in entry:
            raise ModelError(f"loop {name}: links: missing (the two links it closes)", field="loops")
        links = entry["links"]
        if not isinstance(links, list) or len(links) != 2:
            raise ModelError(f"loop {name}: links: expected two links (names, or numbers from 1; 0: the base)",
                             field="loops")
        extra = {}
        if isinstance(entry.get("reference"), dict):  # a four-bar's reference configuration: joints numbered from 1
            extra["reference"] = {_reference_joint(key, name, n): v for key, v in entry["reference"].items()}
        out.append({**entry, "links": [_loop_end(end, name, n) for end in links], **extra})
    return out


def _file_actuated(value: Any, n: int) -> list[int | str]:
    """A model file's ``actuated``: link names or numbers from 1 to ``n`` (made 0-based)."""
    if not isinstance(value, list):
        raise ModelError("expected a list of joints (link names or numbers from 1)", field="actuated")
    out: list[int | str] = []
    for entry in value:
        if isinstance(entry, bool) or not isinstance(entry, int | str):
            raise ModelError(f"expected a link name or number from 1, got {entry!r:.40}", field="actuated")
        if isinstance(entry, int) and not 1 <= entry <= n:
            raise ModelError(f"{entry} is not a link number (1 to {n})", field="actuated")
        out.append(entry if isinstance(entry, str) else entry - 1)
    return out


def _file_frames(value: Any, n: int) -> Any:
    """A model file's ``frames``: each ``link`` a link name, ``base``, or a number from 1 (0: the base) made
    0-based (-1: the base), as :class:`~robodyn.model.Manipulator` takes it; the rest is checked there."""
    if not isinstance(value, list):
        raise ModelError("expected a list of frames ({name, link, placement})", field="frames")
    out = []
    for entry in value:
        entry = _require_mapping(entry, "frames")
        link = entry.get("link")
        if isinstance(link, int) and not isinstance(link, bool):
            if not 0 <= link <= n:
                raise ModelError(f"frame {entry.get('name')!r:.60}: {link} is not a link number (1 to {n}; 0: the "
                                 "base)", field="frames")
            entry = {**entry, "link": link - 1}
        out.append(entry)
    return out


def _file_body(value: Any, key: str, kind: Callable[..., Any]) -> Any:
    """A ``payload`` or ``base`` entry: mass, com, inertia."""
    body = _require_mapping(value, key)
    _check_keys(body, BODY_KEYS, link=key, what=key)
    try:
        return kind(**body)
    except ModelError as exc:
        raise exc.located(link=key) from None


def _free_text(value: Any) -> str:
    """A free-text field: empty when absent or null (``description:`` with nothing after it), else its text."""
    return "" if value is None else str(value)


def manipulator_from_dict(data: Any, *, strict: bool = False) -> Manipulator:
    """Build a Manipulator from the model-file structure."""
    data = _require_mapping(data, "document")
    _check_keys(data, TOP_KEYS, link=None, what="document")
    floating = data.get("floating", False)
    if "links" not in data and floating is not True:
        raise ModelError("missing", field="links")
    rows = data.get("links", [])
    if not isinstance(rows, list) or not (rows or floating is True):  # (a floating base may carry no link: a drone)
        raise ModelError("expected a non-empty list of links", field="links")
    if len(rows) > MAX_LINKS:
        raise ModelError(f"{len(rows)} links: at most {MAX_LINKS} are accepted", field="links")
    convention = data.get("convention", "standard")
    angeles = convention == "angeles"
    allowed = ANGELES_LINK_KEYS if angeles else LINK_KEYS
    links = []
    parents: list[Any] = []
    notes: list[str] = []
    sources: list[str] = []
    for k, row in enumerate(rows, start=1):
        row = _require_mapping(row, "links", link=k)
        _check_keys(row, allowed, link=k, what="link")
        if "joint" not in row:
            raise ModelError("missing (R, P or S)", link=k, field="joint")
        fields = angeles_to_modified(row) if angeles else dict(row)
        parents.append(_file_parent(fields.pop("parent", k - 1), k))
        notes.append(_inertia_note(fields.pop("inertia_note", ""), k))
        sources.append(_joint_name(fields.pop("joint_name", ""), k))
        try:
            with prefixed_warnings(f"link {k}"):
                links.append(Link(**fields))
        except ModelError as exc:
            raise exc.located(link=k) from None
    kwargs: dict[str, Any] = {
        "convention": "modified" if angeles else convention,
        "name": data.get("name", "robot"),
        "description": _free_text(data.get("description")),
        "source": _free_text(data.get("source")),
    }
    if any(p != k - 1 for k, p in enumerate(parents)):
        kwargs["parent"] = parents
    if any(notes):
        kwargs["inertia_notes"] = notes
    if any(sources):
        kwargs["source_names"] = sources
    if data.get("couplings"):
        kwargs["couplings"] = _file_couplings(data["couplings"], len(rows))
    if data.get("loops"):  # loop closures (robodyn.model.loops): checked by the Manipulator
        kwargs["loops"] = _file_loops(data["loops"], len(rows))
    if data.get("actuated") is not None:
        kwargs["actuated"] = _file_actuated(data["actuated"], len(rows))
    if "gravity" in data:
        kwargs["gravity"] = data["gravity"]
    if "tool" in data:
        kwargs["tool"] = data["tool"]
    if data.get("frames") is not None:  # named frames (robodyn.model.frames): checked by the Manipulator
        kwargs["frames"] = _file_frames(data["frames"], len(links))
    if "tip_load" in data:
        load = _require_mapping(data["tip_load"], "tip_load")
        _check_keys(load, {"force", "moment"}, link=None, what="tip_load")
        kwargs["tip_force"] = load.get("force", [0, 0, 0])
        kwargs["tip_moment"] = load.get("moment", [0, 0, 0])
    if data.get("payload") is not None:
        kwargs["payload"] = _file_body(data["payload"], "payload", Payload)
    if "floating" in data:  # a free joint at the root (robodyn.model.joints); checked by the Manipulator
        kwargs["floating"] = floating
    if data.get("base") is not None:  # the floating base's body
        kwargs["base"] = _file_body(data["base"], "base", RigidBody)
    return Manipulator(links=tuple(links), strict=strict, **kwargs)

#: Reading is here; paths, writing and saving are :mod:`robodyn.model.files`, re-exported.
__all__ = [
    "MAX_FILE_BYTES",
    "SHOWN_PATH_CHARS",
    "angeles_to_modified",
    "atomic_path",
    "atomic_write",
    "build_located",
    "check_file_size",
    "dumps",
    "file_kind",
    "manipulator_from_dict",
    "manipulator_to_dict",
    "parse_text",
    "path_exists",
    "read_limited",
    "read_model_file",
    "read_text_limited",
    "save",
    "shown_path",
    "write_all",
]

"""Model files: YAML or JSON with one structure, read safely, written atomically.

::

    name: stanford_angeles
    convention: standard          # standard | modified | angeles (converted to modified here)
    gravity: [0, 0, -9.81]        # acceleration of gravity in the base frame, or [0, 0, -g]
    links:
      - joint: R                  # R or P
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
        placement: [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]  # optional fixed
                                  # transform before the DH transform: A = placement * A_DH
        name: shoulder            # optional: names the joint (for parent, messages)
        inertia_note: only Izz is published   # optional: why this inertia breaks the triangle inequality
                                  # (published data kept as given): then no warning for this link
        parent: 0                 # optional: the link it hangs on, a name or its number from 1
                                  # (0 or base: the base); default: the link above it in the list

A ``parent`` makes the arm a kinematic tree (:class:`~robodyn.model.Manipulator`): list each link after its
parent; the row then describes the transform from the parent's frame.

Optional top-level keys: ``description``, ``source``, ``notes``, ``tip_load`` (``force``,
``moment``), ``payload`` (``mass``, ``com``, ``inertia``), ``tool`` (4x4).

Reading never runs code: YAML through ``yaml.safe_load`` (no object tags) and every
expression string through the whitelist parser of :mod:`robodyn.model.expr`.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from robodyn.errors import ModelError, prefixed_warnings
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
from robodyn.model.manipulator import MAX_LINKS, Link, Manipulator, Payload

MAX_FILE_BYTES = 2_000_000

TOP_KEYS = {
    "name", "convention", "gravity", "links", "description", "source", "notes",
    "tip_load", "payload", "tool",
}
LINK_KEYS = {"joint", "a", "alpha", "d", "theta", "mass", "com", "inertia", "damping", "armature", "placement",
             "name", "parent", "coulomb", "inertia_note"}
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


class _ModelLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` without aliases: a model file has no use for ``*name``, and alias
    trees ("billion laughs") would make the reader format exponentially large values."""

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
        return super().construct_mapping(node, deep=deep)


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


def manipulator_from_dict(data: Any, *, strict: bool = False) -> Manipulator:
    """Build a Manipulator from the model-file structure."""
    data = _require_mapping(data, "document")
    _check_keys(data, TOP_KEYS, link=None, what="document")
    if "links" not in data:
        raise ModelError("missing", field="links")
    rows = data["links"]
    if not isinstance(rows, list) or not rows:
        raise ModelError("expected a non-empty list of links", field="links")
    if len(rows) > MAX_LINKS:
        raise ModelError(f"{len(rows)} links: at most {MAX_LINKS} are accepted", field="links")
    convention = data.get("convention", "standard")
    angeles = convention == "angeles"
    allowed = ANGELES_LINK_KEYS if angeles else LINK_KEYS
    links = []
    parents: list[Any] = []
    notes: list[str] = []
    for k, row in enumerate(rows, start=1):
        row = _require_mapping(row, "links", link=k)
        _check_keys(row, allowed, link=k, what="link")
        if "joint" not in row:
            raise ModelError("missing (R or P)", link=k, field="joint")
        fields = angeles_to_modified(row) if angeles else dict(row)
        parents.append(_file_parent(fields.pop("parent", k - 1), k))
        notes.append(_inertia_note(fields.pop("inertia_note", ""), k))
        try:
            with prefixed_warnings(f"link {k}"):
                links.append(Link(**fields))
        except ModelError as exc:
            raise exc.located(link=k) from None
    kwargs: dict[str, Any] = {
        "convention": "modified" if angeles else convention,
        "name": data.get("name", "robot"),
        "description": str(data.get("description", "")),
        "source": str(data.get("source", "")),
    }
    if any(p != k - 1 for k, p in enumerate(parents)):
        kwargs["parent"] = parents
    if any(notes):
        kwargs["inertia_notes"] = notes
    if "gravity" in data:
        kwargs["gravity"] = data["gravity"]
    if "tool" in data:
        kwargs["tool"] = data["tool"]
    if "tip_load" in data:
        load = _require_mapping(data["tip_load"], "tip_load")
        _check_keys(load, {"force", "moment"}, link=None, what="tip_load")
        kwargs["tip_force"] = load.get("force", [0, 0, 0])
        kwargs["tip_moment"] = load.get("moment", [0, 0, 0])
    if data.get("payload") is not None:
        body = _require_mapping(data["payload"], "payload")
        _check_keys(body, BODY_KEYS, link="payload", what="payload")
        try:
            kwargs["payload"] = Payload(**body)
        except ModelError as exc:
            raise exc.located(link="payload") from None
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

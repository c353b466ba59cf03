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
        armature: 0               # optional reflected rotor inertia G^2 Jm
        placement: [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]  # optional fixed
                                  # transform before the DH transform: A = placement * A_DH

Optional top-level keys: ``description``, ``source``, ``notes``, ``tip_load`` (``force``,
``moment``), ``payload`` (``mass``, ``com``, ``inertia``), ``tool`` (4x4).

Reading never runs code: YAML through ``yaml.safe_load`` (no object tags) and every
expression string through the whitelist parser of :mod:`robodyn.model.expr`.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sympy
import yaml

from robodyn.errors import ModelError
from robodyn.model.expr import format_expression
from robodyn.model.manipulator import Link, Manipulator, Payload

MAX_FILE_BYTES = 2_000_000
MAX_LINKS = 200

TOP_KEYS = {
    "name", "convention", "gravity", "links", "description", "source", "notes",
    "tip_load", "payload", "tool",
}
LINK_KEYS = {"joint", "a", "alpha", "d", "theta", "mass", "com", "inertia", "damping", "armature", "placement"}
ANGELES_LINK_KEYS = (LINK_KEYS - {"d"}) | {"b"}
BODY_KEYS = {"mass", "com", "inertia"}


# -- reading ------------------------------------------------------------------------------
def check_file_size(path: Path, limit: int, shown: str) -> None:
    """Refuse, with a :class:`ModelError` naming the file, a file that cannot be read or exceeds ``limit`` bytes."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ModelError(f"cannot read the file ({exc.strerror})", file=shown) from None
    if size > limit:
        raise ModelError(f"file is larger than {limit} bytes", file=shown)


def read_model_file(path: str | Path, *, strict: bool = False) -> Manipulator:
    """Load a ``.yaml``/``.yml``/``.json`` model file; errors name the file, link and field."""
    path = Path(path)
    shown = str(path)
    check_file_size(path, MAX_FILE_BYTES, shown)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"cannot read the file ({exc})", file=shown) from None
    data = parse_text(text, json_format=path.suffix.lower() == ".json", file=shown)
    return build_located(data, shown, strict=strict)


def build_located(data: Any, shown: str, *, strict: bool) -> Manipulator:
    """:func:`manipulator_from_dict` with the file name put into errors and warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            robot = manipulator_from_dict(data, strict=strict)
        except ModelError as exc:
            raise exc.located(file=shown) from None
    for w in caught:
        warnings.warn_explicit(f"{shown}: {w.message}", w.category, w.filename, w.lineno)
    return robot


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


def parse_text(text: str, *, json_format: bool, file: str | None = None) -> Any:
    try:
        if json_format:
            return json.loads(text)
        return yaml.load(text, Loader=_ModelLoader)
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
    """Angeles, Ma and Rojas' HD notation (seed 003, eq. 7-8) to modified DH (Craig).

    Their Q_i = Rot(x, alpha_i) Rot(z, theta_i) and [a_i]_{i-1} = (a_i, b_i s(alpha_i), -b_i c(alpha_i))
    equal Craig's A_i with alpha_{i-1} = alpha_i, a_{i-1} = a_i and d_i = -b_i: the same frames,
    their b_i measured the other way along Z_i. So a prismatic joint's q_i here is -b_i.
    This is the one place where that conversion happens.
    """
    converted = {k: v for k, v in row.items() if k != "b"}
    b = row.get("b", 0)
    converted["d"] = f"-({b})" if isinstance(b, str) else -b
    return converted


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
        raise ModelError(f"more than {MAX_LINKS} links", field="links")
    convention = data.get("convention", "standard")
    angeles = convention == "angeles"
    allowed = ANGELES_LINK_KEYS if angeles else LINK_KEYS
    links = []
    for k, row in enumerate(rows, start=1):
        row = _require_mapping(row, "links", link=k)
        _check_keys(row, allowed, link=k, what="link")
        if "joint" not in row:
            raise ModelError("missing (R or P)", link=k, field="joint")
        fields = angeles_to_modified(row) if angeles else dict(row)
        try:
            links.append(Link(**fields))
        except ModelError as exc:
            raise exc.located(link=k) from None
    kwargs: dict[str, Any] = {
        "convention": "modified" if angeles else convention,
        "name": str(data.get("name", "robot")),
        "description": str(data.get("description", "")),
        "source": str(data.get("source", "")),
    }
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


# -- writing ------------------------------------------------------------------------------
def _vector(values: tuple[sympy.Expr, ...]) -> list[Any]:
    return [format_expression(v) for v in values]


def _tensor(matrix: sympy.MatrixBase) -> list[Any]:
    return [[format_expression(matrix[i, j]) for j in range(matrix.cols)] for i in range(matrix.rows)]


def _body(body: Any) -> dict[str, Any]:
    return {"mass": format_expression(body.mass), "com": _vector(body.com), "inertia": _tensor(body.inertia)}


def manipulator_to_dict(robot: Manipulator) -> dict[str, Any]:
    """The model-file structure of ``robot`` (floats exact, expressions as strings)."""
    out: dict[str, Any] = {"name": robot.name}
    if robot.description:
        out["description"] = robot.description
    if robot.source:
        out["source"] = robot.source
    out["convention"] = robot.convention
    out["gravity"] = _vector(robot.gravity)
    links = []
    for link in robot.links:
        row: dict[str, Any] = {"joint": link.joint}
        for key in ("a", "alpha", "d", "theta"):
            row[key] = format_expression(getattr(link, key))
        row.update(_body(link))
        for key in ("damping", "armature"):
            value = getattr(link, key)
            if value != 0:
                row[key] = format_expression(value)
        if link.has_placement:
            row["placement"] = _tensor(link.placement)
        links.append(row)
    out["links"] = links
    if any(v != 0 for v in robot.tip_force + robot.tip_moment):
        out["tip_load"] = {"force": _vector(robot.tip_force), "moment": _vector(robot.tip_moment)}
    if robot.payload is not None:
        out["payload"] = _body(robot.payload)
    if robot.tool != sympy.eye(4):
        out["tool"] = _tensor(robot.tool)
    return out


def dumps(robot: Manipulator, *, json_format: bool = False) -> str:
    data = manipulator_to_dict(robot)
    if json_format:
        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=100)


def write_all(directory: str | Path, files: Mapping[str, str]) -> list[Path]:
    """Write ``files`` (name -> text) into ``directory`` (made if missing) all or nothing: each to a
    temporary beside its target, then the renames; on any failure the temporaries, the files renamed so
    far and the directories made here are removed and the error is raised again."""
    directory = Path(directory)
    made = [d for d in (directory, *directory.parents) if not d.exists()]  # deepest first
    temporaries: dict[Path, Path] = {}
    renamed: list[Path] = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for filename, text in files.items():
            target = directory / filename
            if target.is_dir():
                raise IsADirectoryError(errno.EISDIR, "is a directory", str(target))
            fd, tmp = tempfile.mkstemp(prefix=f".{filename}.", suffix=".tmp", dir=directory)
            temporaries[target] = Path(tmp)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.chmod(tmp, 0o666 & ~_UMASK)
        for target, tmp in temporaries.items():
            os.replace(tmp, target)
            renamed.append(target)
    except BaseException:
        for path in [*temporaries.values(), *renamed]:
            path.unlink(missing_ok=True)
        for made_dir in made:
            try:
                made_dir.rmdir()
            except OSError:
                break
        raise
    return renamed


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed onto ``path`` when the block succeeds,
    removed when it fails, so a reader never sees a half-written file."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix or ".tmp", dir=directory)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes it 0600; give it the usual permissions
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write(path: str | Path, text: str) -> Path:
    """Write ``text`` to a temporary file beside ``path``, then rename it into place."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once at import: os.umask is process-wide, not thread-safe to toggle


def save(robot: Manipulator, path: str | Path) -> Path:
    """Write ``robot`` as YAML (JSON for a ``.json`` path), atomically."""
    path = Path(path)
    return atomic_write(path, dumps(robot, json_format=path.suffix.lower() == ".json"))

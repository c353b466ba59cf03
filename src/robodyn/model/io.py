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
import json.scanner
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import sympy
import yaml

from robodyn.errors import ModelError, prefixed_warnings
from robodyn.model.expr import format_expression
from robodyn.model.manipulator import MAX_LINKS, Link, Manipulator, Payload

MAX_FILE_BYTES = 2_000_000

TOP_KEYS = {
    "name", "convention", "gravity", "links", "description", "source", "notes",
    "tip_load", "payload", "tool",
}
LINK_KEYS = {"joint", "a", "alpha", "d", "theta", "mass", "com", "inertia", "damping", "armature", "placement"}
ANGELES_LINK_KEYS = (LINK_KEYS - {"d"}) | {"b"}
BODY_KEYS = {"mass", "com", "inertia"}


# -- reading ------------------------------------------------------------------------------
SHOWN_PATH_CHARS = 200


def shown_path(path: str | Path | bytes) -> str:
    """``path`` for a one-line message: cut to :data:`SHOWN_PATH_CHARS` characters (``...`` marks the cut) and a
    NUL byte shown as ``\\0`` (other control characters are escaped by :func:`robodyn.errors.printable`)."""
    text = os.fsdecode(path) if isinstance(path, bytes) else str(path)
    if len(text) > SHOWN_PATH_CHARS:
        text = text[:SHOWN_PATH_CHARS] + "..."
    return text.replace("\0", "\\0")


def path_exists(path: str | Path, shown: str | None = None) -> bool:
    """Whether ``path`` names something (following links): False when nothing is there (or a component is
    not a directory). A path the system cannot even look up (too long, a loop of links, no permission on a
    directory, an embedded NUL) is one :class:`ModelError` naming ``shown`` (default: the path), cut short
    by :func:`shown_path`, never an ``OSError`` from ``Path.exists``."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except (OSError, ValueError) as exc:  # ValueError: an embedded NUL byte
        raise ModelError(f"cannot look up the path ({getattr(exc, 'strerror', None) or exc})",
                         file=shown_path(path if shown is None else shown)) from None
    return True


def file_kind(mode: int) -> str | None:
    """None for a regular file; otherwise what the ``st_mode`` describes ("a FIFO", "a directory"...)."""
    if stat.S_ISREG(mode):
        return None
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _check_input(info: os.stat_result, limit: int, shown: str) -> None:
    kind = file_kind(info.st_mode)
    if kind is not None:
        raise ModelError(f"is {kind}, not a regular file", file=shown)
    if info.st_size > limit:
        raise ModelError(f"file is larger than {limit} bytes", file=shown)


def check_file_size(path: Path, limit: int, shown: str) -> None:
    """Refuse, with a :class:`ModelError` naming the file, a file that cannot be read, is not a regular
    file (a FIFO, a device: reading would block or never end) or exceeds ``limit`` bytes."""
    try:
        info = os.stat(path)  # stat does not block on a FIFO; opening it would
    except OSError as exc:
        raise ModelError(f"cannot read the file ({exc.strerror})", file=shown) from None
    _check_input(info, limit, shown)


def read_limited(path: str | Path, limit: int, shown: str) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else is one :class:`ModelError`
    naming the file. Checked before reading (stat), opened without blocking, checked again on the open
    file and read to at most ``limit + 1`` bytes: a FIFO or a device swapped in meanwhile is refused too."""
    check_file_size(Path(path), limit, shown)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            _check_input(os.fstat(handle.fileno()), limit, shown)
            data = handle.read(limit + 1)
    except OSError as exc:
        raise ModelError(f"cannot read the file ({exc.strerror or exc})", file=shown) from None
    if len(data) > limit:
        raise ModelError(f"file is larger than {limit} bytes", file=shown)
    return data


def read_text_limited(path: str | Path, limit: int, shown: str) -> str:
    """:func:`read_limited` decoded as UTF-8 (an error names the file)."""
    try:
        return read_limited(path, limit, shown).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelError(f"not UTF-8 text (byte {exc.start})", file=shown) from None


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

    pairs, end = json.decoder.JSONObject(s_and_end, strict, scan, None, list)
    result: dict[str, Any] = {}
    for (key, value), start in zip(pairs, starts, strict=False):
        if key in result:
            raise _DuplicateKeyError(key, start)
        result[key] = value
    return result, end


def _json_loads(text: str) -> Any:
    decoder = json.JSONDecoder()
    decoder.parse_object = _json_object  # type: ignore[method-assign]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # the C scanner would bypass parse_object
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
        raise ModelError(f"{len(rows)} links: at most {MAX_LINKS} are accepted", field="links")
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


# Output paths. A missing or regular file is replaced atomically: written to a temporary file beside it,
# then renamed. A symlink is followed: its final target is written (atomically when it is or will be a regular
# file) and the link stays. A character device or a FIFO (/dev/null, /dev/stdout, a pipe) cannot be renamed
# onto: it is written through, opened without creating or truncating, flushed and fsynced, and any error
# (/dev/full: no space left) is raised. A directory, a block device or a socket is refused.
_WRITE_THROUGH = ("a character device", "a FIFO")


def _existing_kind(path: Path) -> str | None:
    """What ``path`` is, following symlinks: None when it is a regular file or does not exist."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return file_kind(info.st_mode)


def _refuse(path: Path, kind: str) -> OSError:
    if kind == "a directory":
        return IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    return OSError(errno.EINVAL, f"is {kind}; not writing to it", str(path))


def _replace_target(path: Path) -> Path:
    """The regular file that replacing ``path`` atomically must rename onto: ``path``, or the final target
    of the symlink ``path``. A directory or another kind of file is refused with an ``OSError``."""
    kind = _existing_kind(path)
    if kind is not None:
        raise _refuse(path, kind)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _keep_old(target: Path) -> Path | None:
    """A hard link (or, where links are not supported, a copy) of an existing ``target``, to put back if the
    set it belongs to cannot be written whole; None when there is no ``target``. It is made inside a private
    directory (``mkdtemp``: mode 0700, a fresh name) beside ``target``, so nothing planted meanwhile at a
    guessable name (a symlink) can redirect the copy; :func:`_discard_old` removes both."""
    if not target.is_file():
        return None
    private = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    kept = private / target.name
    try:
        try:
            os.link(target, kept)
        except OSError:
            shutil.copy2(target, kept)
    except BaseException:
        _discard_old(kept)
        raise
    return kept


def _discard_old(kept: Path) -> None:
    """Remove what :func:`_keep_old` made (the file, if still there, and its private directory)."""
    with suppress(OSError):
        kept.unlink(missing_ok=True)
    with suppress(OSError):
        kept.parent.rmdir()


def _distinct_targets(directory: Path, targets: Mapping[str, Path]) -> None:
    """Refuse (``OSError``) two names of a set that resolve to the same file (a symlink to another member of
    the set): both would be renamed onto it, one content lost, both reported written."""
    seen: dict[str, str] = {}
    for filename, target in targets.items():
        key = os.path.normcase(os.path.realpath(target))
        if key in seen:
            first = directory / seen[key]
            raise OSError(errno.EINVAL, f"the same file as {first}, through a link: writing both would lose one",
                          str(directory / filename))
        seen[key] = filename


def write_all(directory: str | Path, files: Mapping[str, str | bytes]) -> list[Path]:
    """Write ``files`` (name -> text or bytes) into ``directory`` (made if missing) all or nothing: each to a
    temporary beside its target (a symlink's final target), then the renames; on any failure the
    temporaries and the directories made here are removed, the files renamed so far are removed or, where
    they replaced a file, the previous file is put back, and the error is raised again. A target that is not
    a regular file (a directory, a device), and two names that resolve to one file (a symlink to another
    of the set), are refused (``OSError``) before anything is written."""
    directory = Path(directory)
    made = [d for d in (directory, *directory.parents) if not d.exists()]  # deepest first
    temporaries: dict[Path, Path] = {}
    old: dict[Path, Path | None] = {}
    renamed: list[Path] = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        targets = {filename: _replace_target(directory / filename) for filename in files}
        _distinct_targets(directory, targets)
        for filename, content in files.items():
            target = targets[filename]
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            temporaries[target] = Path(tmp)
            with os.fdopen(fd, "wb") as handle:
                handle.write(content if isinstance(content, bytes) else content.encode("utf-8"))
            os.chmod(tmp, 0o666 & ~_UMASK)
        for target in temporaries:
            old[target] = _keep_old(target)
        for target, tmp in temporaries.items():
            os.replace(tmp, target)
            renamed.append(target)
    except BaseException:
        for target in reversed(renamed):
            previous = old.get(target)
            with suppress(OSError):
                if previous:
                    os.replace(previous, target)
                else:
                    target.unlink(missing_ok=True)
        for path in temporaries.values():
            path.unlink(missing_ok=True)
        for kept in old.values():
            if kept:
                _discard_old(kept)
        for made_dir in made:
            try:
                made_dir.rmdir()
            except OSError:
                break
        raise
    for previous in old.values():
        if previous:
            _discard_old(previous)
    return [directory / filename for filename in files]


def _write_through(path: Path, data: bytes) -> None:
    """Write ``data`` into an existing character device or FIFO: no create, no truncate; a FIFO nobody reads
    is refused rather than waited on; flush and fsync errors are raised (fsync is skipped where the
    device does not support it)."""
    try:
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OSError(errno.ENXIO, _no_such_device(path), str(path)) from None
        raise
    os.set_blocking(fd, True)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        try:
            os.fsync(fd)
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EROFS):
                raise


def _no_such_device(path: Path) -> str:
    """What ENXIO on opening ``path`` for writing means, by the kind of file it is."""
    try:
        kind = _existing_kind(path)
    except OSError:
        kind = None
    if kind == "a FIFO":
        return "no process is reading this FIFO"
    if kind == "a character device":
        return "no device behind this character device (no such device or address)"
    return "no such device or address"


@contextmanager
def _through_temporary(path: Path) -> Iterator[Path]:
    """A temporary file (system temporary directory) whose content is written through into ``path``."""
    fd, tmp = tempfile.mkstemp(prefix="robodyn-", suffix=path.suffix or ".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        _write_through(path, Path(tmp).read_bytes())
    finally:
        Path(tmp).unlink(missing_ok=True)


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path to write to in place of ``path``. When the block succeeds it is renamed onto
    ``path`` (or onto the final target of the symlink ``path``); when it fails it is removed, so a reader
    never sees a half-written file. A character device or FIFO ``path`` is written through instead (see the
    rules above :func:`write_all`); a directory, block device or socket is refused (``OSError``)."""
    path = Path(path)
    kind = _existing_kind(path)
    if kind in _WRITE_THROUGH:
        with _through_temporary(path) as tmp:
            yield tmp
        return
    target = _replace_target(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix or ".tmp", dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes it 0600; give it the usual permissions
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` through :func:`atomic_path` (a temporary file renamed into place)."""
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

"""Files: paths shown in messages, size-bounded reading, atomic writing, and writing a model file.

No model class is needed here (a robot is read through its attributes), so :class:`robodyn.model.Manipulator`
can use it for ``to_dict`` and ``save``; reading a model file is :mod:`robodyn.formats.model_file` (which re-exports
these
names).
"""

from __future__ import annotations

import errno
import json
import json.scanner
import os
import re
import shutil
import stat
import tempfile
import unicodedata
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sympy
import yaml

from robodyn.errors import ModelError
from robodyn.model.expr import format_expression
from robodyn.model.names import default_names

if TYPE_CHECKING:
    from robodyn.model.manipulator import Manipulator

SHOWN_PATH_CHARS = 200


def shown_path(path: str | Path | bytes) -> str:
    """``path`` (or any value from the command line) for a one-line message: cut to :data:`SHOWN_PATH_CHARS`
    characters (``...`` marks the cut), a NUL byte shown as ``\\0`` and every other control or format character,
    and a lone surrogate (an undecodable byte of the file name), as its escape (``\\n``, ``\\x1b``, ``\\udcff``):
    a path holding a newline cannot forge a line of output, nor one holding an escape sequence drive the
    terminal."""
    text = os.fsdecode(path) if isinstance(path, bytes) else str(path)
    if len(text) > SHOWN_PATH_CHARS:
        text = text[:SHOWN_PATH_CHARS] + "..."
    text = text.replace("\0", "\\0")
    if text.isprintable():
        return text
    return "".join(ch if ch == " " or unicodedata.category(ch) not in _HIDDEN else ascii(ch)[1:-1] for ch in text)


_HIDDEN = ("Cc", "Cf", "Cs", "Zl", "Zp")  # control, format, lone surrogates, line and paragraph separators


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
    defaults = default_names(robot.links)
    for k, link in enumerate(robot.links):
        row: dict[str, Any] = {"joint": link.joint}
        if link.name:
            row["name"] = link.name
        if robot.source_names and robot.source_names[k] != defaults[k]:
            row["joint_name"] = robot.source_names[k]
        if robot.is_tree:
            p = robot.parents[k]
            row["parent"] = robot.links[p].name or p + 1 if p >= 0 else 0
        for key in ("a", "alpha", "d", "theta"):
            row[key] = format_expression(getattr(link, key))
        row.update(_body(link))
        if robot.inertia_notes and robot.inertia_notes[k]:
            row["inertia_note"] = robot.inertia_notes[k]
        for key in ("damping", "armature", "stiffness", "springref"):
            value = getattr(link, key)
            if value != 0:
                row[key] = format_expression(value)
        if link.has_coulomb:
            row["coulomb"] = [format_expression(v) for v in link.coulomb]
        if link.has_placement:
            row["placement"] = _tensor(link.placement)
        links.append(row)
    out["links"] = links
    if any(v != 0 for v in robot.tip_force + robot.tip_moment):
        out["tip_load"] = {"force": _vector(robot.tip_force), "moment": _vector(robot.tip_moment)}
    if robot.payload is not None:
        out["payload"] = _body(robot.payload)
    if robot.floating:
        out["floating"] = True
    if robot.base is not None:
        out["base"] = _body(robot.base)
    if robot.tool != sympy.eye(4):
        out["tool"] = _tensor(robot.tool)
    given = [c for c in robot.couplings if not c.loop]  # those derived from loops: the loops are written
    if given:  # joint and leader by name, else by number from 1 (as parent)
        out["couplings"] = [_coupling(robot, c) for c in given]
    out.update(_loops(robot))
    if robot.frames:  # named frames: the link by name, else by number from 1 (as parent), "base" for the base
        out["frames"] = [{"name": f.name, "link": "base" if f.link < 0 else robot.links[f.link].name or f.link + 1,
                          **({"placement": _tensor(f.placement)} if f.placement != sympy.eye(4) else {})}
                         for f in robot.frames]
    return out


def _end(robot: Manipulator, k: int) -> int | str:
    """A link in a model file: its name, else its number from 1 (0: the base)."""
    return "base" if k < 0 else robot.links[k].name or k + 1


def _coupling(robot: Manipulator, c: Any) -> dict[str, Any]:
    """One coupling: ``{joint, leader, ratio, offset}``, or ``{joint, leaders: {leader: ratio}, offset}``."""
    if len(c.leaders) == 1:
        return {"joint": _end(robot, int(c.joint)), "leader": _end(robot, int(c.leader)),
                "ratio": format_expression(c.ratio), "offset": format_expression(c.offset)}
    return {"joint": _end(robot, int(c.joint)),
            "leaders": {_end(robot, int(k)): format_expression(r) for k, r in c.leaders},
            "offset": format_expression(c.offset)}


def _loops(robot: Manipulator) -> dict[str, Any]:
    """``actuated`` and ``loops`` of a robot with loop closures (:mod:`robodyn.model.loops`); {} without."""
    if not getattr(robot, "loops", ()):
        return {}
    loops = []
    for loop in robot.loops:
        entry: dict[str, Any] = {"name": loop.name, "links": [_end(robot, k) for k in loop.links],
                                 "joint": loop.joint}
        if tuple(loop.axis) != (0, 0, 1):
            entry["axis"] = _vector(loop.axis)
        entry["placements"] = [_tensor(p) for p in loop.placements]
        if loop.branch is not None:
            entry["branch"] = loop.branch
        if loop.reference:
            entry["reference"] = {_end(robot, k): format_expression(v) for k, v in loop.reference}
        loops.append(entry)
    return {"actuated": [_end(robot, k) for k in robot.actuated], "loops": loops}


def dumps(robot: Manipulator, *, json_format: bool = False) -> str:
    data = manipulator_to_dict(robot)
    if json_format:
        return json.dumps(data, indent=2) + "\n"
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=100)


#: Plain scalars that a YAML 1.2 reader (robodyn's, :mod:`robodyn.formats.model_file`) takes for a number, a
#: boolean or null, and PyYAML's writer (YAML 1.1) would leave unquoted: ``1e3``, ``0o17``, ``.Inf`` ...
_YAML12_NOT_TEXT = re.compile(
    r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|0o[0-7]+|0x[0-9a-fA-F]+"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|true|True|TRUE|false|False|FALSE|null|Null|NULL|~|"
)


class _Dumper(yaml.SafeDumper):
    """``yaml.SafeDumper`` that also quotes the text a YAML 1.2 reader would take for another type (a name or a
    description such as ``1e3``): what robodyn writes, it reads back as written."""

    def represent_str(self, data: str) -> yaml.ScalarNode:
        if _YAML12_NOT_TEXT.fullmatch(data):
            return self.represent_scalar("tag:yaml.org,2002:str", data, style="'")
        return super().represent_str(data)


_Dumper.add_representer(str, _Dumper.represent_str)


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
        for target, temporary in temporaries.items():
            os.replace(temporary, target)
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
        with _through_temporary(path) as through:
            yield through
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

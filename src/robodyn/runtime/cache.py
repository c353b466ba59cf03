"""The compile cache: where :func:`robodyn.compile`'s entries live, what an entry must pass before it is loaded,
and how one is built and put in place.

The cache directory is ``$ROBODYN_CACHE``, else ``$XDG_CACHE_HOME/robodyn``, else ``~/.cache/robodyn``
(:func:`cache_dir`), with one entry per hash of the model, the requested outputs, the generator
version, robodyn's own source, the compiler command and, with ``-march=native``, the host's processor
(its model and feature flags: a cache shared by different machines never hands one a library built for
another's instructions); a second call, in this process or any later one, loads the library without
generating or compiling anything. Each compile works in a private temporary directory and renames the finished
entry into place (``os.rename`` of the directory), so processes and threads compiling the same model at once
never leave a torn entry. An entry's files are those of its backend (:mod:`robodyn.runtime.backends`: the C
source, header and library; or the generated NumPy or JAX module), and its manifest.

What the cache trusts, and why. A cache entry's ``spec.json`` records the cache key it was built for and the
SHA-256 of the entry's library, sources and of its own routine description; before ``dlopen`` the key is compared
with the one asked for (an entry of another model of the same name, copied to this one's path, is built again),
the files are read back and checked against their hashes, and the description is checked against the robot (the
module name, the number of joints, the routines asked for and their array shapes, the parameters of a robot not in
base parameters). A manifest that is not JSON, or is JSON nested too deep to parse, fails its check too. The
file names in ``spec.json`` are checked before anything is read: exactly the entry's ``NAME.c``,
``NAME.h`` and ``NAME.so``, so a manifest naming ``/etc/passwd`` or ``../x`` opens nothing outside the
entry; and reads are capped (1 MiB for ``spec.json``, 256 MiB for each other file). Each file is opened
once, relative to the opened entry directory, not following a link and without blocking (a FIFO is
refused, not waited on); its type, owner and mode are checked on that descriptor and its bytes hashed
from it; and the library is loaded from the same descriptor, by ``dlopen`` of ``/proc/self/fd/N``, which
opens the file that was hashed even if the entry's files have been renamed or replaced meanwhile: what is
loaded is what was checked (:func:`robodyn.runtime.compiled.load_library`). Where there is no ``/proc/self/fd``
(macOS, the BSDs) the library is loaded by its path after the check, and a replacement in between (by this
user: see below) is not excluded there.
An entry that fails any check, or cannot be read (missing, truncated, edited, not a plain file, too large),
is built again and replaced atomically (or, where the cache is not writable, the compile fails with one
line): so corruption, a truncated library, an edited spec (``n`` smaller than the robot's, which would let
the library write past the wrapper's arrays) or a library from another entry is never loaded. An entry
that passes every check but does not load (``dlopen`` fails, say a library built against another C
library in a cache shared between hosts, or it lacks the routines) is built again once, replacing it;
only a library just built that does not load either is an error. The hashes sit in the same entry as the
library, so they cannot stop someone who may write the entry from planting a library and its matching
hashes: that is prevented by permissions instead. The cache directory is created ``0700``, and the cache
directory, an entry and its files must belong to the current user and be writable by no other (no group
or world write bit), else the compile is refused with one line naming the path. Who can run code as this
user (or as root) can change the cache, as they can change robodyn itself; this is out of scope. The
directories above the cache directory are not checked (one that others may write is an ordinary setup:
``/tmp``, a group's shared project directory): whoever may rename one can point the cache path at another
directory, but that directory, its entries and their files must still belong to this user, be writable
by no other and match their hashes, so at most this user's own entries are found (or written) there.
The NumPy and JAX modules are checked the same way (see :mod:`robodyn.runtime.backends`): the bytes that were
hashed are the ones executed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robodyn.codegen.spec import GENERATOR_VERSION, KINDS, Array, ModuleSpec, Routine, output_shape
from robodyn.model.files import manipulator_to_dict
from robodyn.program import OperationCount
from robodyn.runtime.backends import RECORDS
from robodyn.runtime.compiled import CompiledDynamics
from robodyn.runtime.toolchain import FALLBACK, NATIVE, CompileError, host_fingerprint

__all__ = ["Expected", "cache_dir"]

CACHE_ENV = "ROBODYN_CACHE"


def cache_dir() -> Path:
    """Where compiled libraries are kept (see the module docstring)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "robodyn"


def _source_fingerprint() -> str:
    """A hash of robodyn's own Python source (read at every call, a millisecond): a changed generator
    or Program builder never reuses a stale library, even in a long-lived process."""
    root = Path(__file__).resolve().parents[1]  # (the robodyn package, not only this room)
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _cache_key(robot: Any, outputs: tuple[str, ...], command: list[str], base: bool = False,
               frames: tuple[str, ...] = ()) -> str:
    data: dict[str, Any] = {
        "model": manipulator_to_dict(robot),
        "outputs": outputs,
        "base": base,
        "generator": GENERATOR_VERSION,
        "source": _source_fingerprint(),
        "command": command,
        "host": host_fingerprint() if NATIVE in command else None,
    }
    if frames:  # the frames' routines (a key without them stays what it was)
        data["frames"] = list(frames)
    if getattr(robot, "floating", False):  # (not in the model file's dict: a fixed robot's key stays what it was)
        data["floating"] = repr(robot.base)
    text = json.dumps(data, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


# -- what an entry must pass before it is loaded ---------------------------------------------------

#: The manifest of an entry: its routine description and the hashes of its files.
SPEC_FILE = "spec.json"
#: The manifest layout; an entry with another one is built again (3: the manifest records the cache key).
MANIFEST_FORMAT = 3
#: The most bytes read of a manifest, and of each other file of an entry (a larger one: built again).
MAX_MANIFEST_BYTES = 1 << 20
MAX_FILE_BYTES = 1 << 28
#: How a file of an entry is opened: read-only, not following a link, not blocking on a FIFO, not inherited.
_OPEN_FILE = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
              | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0))
#: How an entry directory is opened, where its files can be opened relative to it (else by path).
_OPEN_DIR = (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
             if hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd else None)


class _UnloadableError(Exception):
    """An entry passes every check, but its library does not load (``dlopen`` fails, or routines are missing)."""


def _entry_files(name: str, backend: str = "c") -> list[str]:
    """The files of an entry besides its manifest, as :func:`_build` writes them: source, header, library (C);
    the module (NumPy, JAX). The last one is what is loaded."""
    return RECORDS[backend].files(name)


@dataclass(frozen=True)
class Expected:
    """What an entry for the robot being compiled must describe: the module name, the number of joints,
    the routines asked for and the parameter names (None: not checked, for a model in base parameters,
    whose names come from the identification), and the cache key (:func:`_cache_key`: the hash of the model,
    the outputs, the generator version, robodyn's source, the command...), which the entry's manifest must
    record: an entry of another model of the same name, number of joints and parameters (other numbers, say),
    copied or renamed to this one's path, is built again, never loaded."""

    name: str
    n: int
    kinds: tuple[str, ...]
    parameters: tuple[str, ...] | None
    key: str
    backend: str = "c"
    frames: tuple[str, ...] = ()
    #: The length of q where it is not ``n`` (a floating base: ``robot.nq``); None otherwise.
    nq: int | None = None

    def problem(self, spec: ModuleSpec) -> str | None:
        """What ``spec`` gets wrong, or None: every array shape the wrapper allocates by must be the robot's."""
        routines = tuple(r.name for r in spec.routines)
        if (spec.name, spec.n, routines) != (self.name, self.n, ("constants", *self.kinds)):
            return (f"module {spec.name!r} with {spec.n} joints and routines {', '.join(routines)}, not "
                    f"{self.name!r} with {self.n} joints and constants, {', '.join(self.kinds)}")
        if spec.frames != self.frames:
            return f"frames {spec.frames}, not {self.frames}"
        if spec.nq != self.nq:
            return f"q of {spec.nq or spec.n} entries, not {self.nq or self.n}"
        if self.parameters is not None and spec.parameters != self.parameters:
            return f"parameters {', '.join(spec.parameters) or 'none'}, not {', '.join(self.parameters) or 'none'}"
        for routine in spec.routines:
            arrays = [(a.name, a.shape) for a in routine.arrays]
            if arrays != self.arrays(routine.name, spec) or routine.batched != (routine.name != "constants"):
                return f"routine {routine.name} with arrays {arrays}"
        return None

    def arrays(self, routine: str, spec: ModuleSpec) -> list[tuple[str, tuple[int, ...]]]:
        """The arguments of ``routine`` for this robot, with their shapes."""
        k = ("k", (spec.n_constants,))
        if routine == "constants":
            return [("params", (len(spec.parameters),)), k]
        kind = next(kind for kind in KINDS if kind.name == routine)
        return [k, *((name, (self.nq if name == "q" and self.nq is not None else self.n,)) for name in kind.inputs),
                (kind.output, output_shape(kind.output, self.n, len(self.frames)))]


def _cache_root(cache: str | Path | None) -> Path:
    """The cache directory, created 0700 if missing; it must be this user's and writable by no other."""
    root = Path(cache if cache is not None else cache_dir())
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise CompileError(f"cannot create the compile cache {root} ({exc.strerror or exc}); set ${CACHE_ENV} "
                           f"to a writable directory, or {FALLBACK}") from None
    _check_private(root, os.stat(root), "the compile cache")
    return root


def _check_private(path: Path, info: os.stat_result, what: str) -> None:
    """Refuse ``path`` (one line) unless it belongs to this user and no other user may write it."""
    if not hasattr(os, "getuid"):  # (no POSIX ownership to check)
        return
    if info.st_uid != os.getuid():
        raise CompileError(f"refusing {what} {path}: it is owned by uid {info.st_uid}, not by this user "
                           f"(uid {os.getuid()}); remove it, or set ${CACHE_ENV} to a directory of your own")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CompileError(f"refusing {what} {path}: other users may write it (mode {stat.filemode(info.st_mode)}); "
                           f"remove it, or `chmod go-w` it")


def _open_private(name: str, where: Path, dir_fd: int | None) -> int:
    """A read-only descriptor of the plain file ``name`` (in the directory open as ``dir_fd``; ``where``
    is its path, for messages and where there is no ``dir_fd``), of this user's, that no other user may
    write: the checks are made on the descriptor. OSError if it cannot be opened (a link, say) or is not a
    plain file; CompileError if it is another user's or writable by others. The caller closes it."""
    fd = os.open(name if dir_fd is not None else where, _OPEN_FILE, dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{where} is not a plain file")
        _check_private(where, info, "the compile cache file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _chunks(fd: int, where: Path, limit: int) -> Iterable[bytes]:
    """The bytes of ``fd`` from its offset, in pieces; OSError past ``limit`` bytes (no more is read)."""
    if os.fstat(fd).st_size > limit:
        raise OSError(f"{where} is larger than {limit} bytes")
    total = 0
    while chunk := os.read(fd, min(1 << 20, limit + 1 - total)):
        total += len(chunk)
        if total > limit:
            raise OSError(f"{where} is larger than {limit} bytes")
        yield chunk


def _open_verified(entry: Path, expected: Expected) -> tuple[ModuleSpec, int | None, bytes | None] | None:
    """The spec of a cache entry that passes every check (see the module docstring), with the descriptor
    its library was hashed through (C: open, the caller loads from it, and closes it) or the bytes of its
    module that were hashed (NumPy, JAX); None where the entry is missing, unreadable or fails one (to be built
    again). A CompileError where the entry or one of its files belongs to another user or may be written by
    others."""
    try:
        info = os.lstat(entry)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None
    _check_private(entry, info, "the compile cache entry")
    dir_fd = library = None
    module: bytes | None = None
    try:
        if _OPEN_DIR is not None:
            dir_fd = os.open(entry, _OPEN_DIR)
            info = os.fstat(dir_fd)
            if not stat.S_ISDIR(info.st_mode):
                return None
            _check_private(entry, info, "the compile cache entry")
        fd = _open_private(SPEC_FILE, entry / SPEC_FILE, dir_fd)
        try:
            manifest = json.loads(b"".join(_chunks(fd, entry / SPEC_FILE, MAX_MANIFEST_BYTES)))
        finally:
            os.close(fd)
        files, names = manifest["files"], _entry_files(expected.name, expected.backend)
        # The names first: nothing is opened that is not one of the entry's own files.
        if (manifest["format"] != MANIFEST_FORMAT or manifest["key"] != expected.key or not isinstance(files, dict)
                or sorted(files) != sorted(names) or manifest["spec_sha256"] != _sha256(_canonical(manifest["spec"]))):
            return None
        python = not RECORDS[expected.backend].compiled
        for name in names:
            fd = _open_private(name, entry / name, dir_fd)
            loaded = name == names[-1]  # the library, or the module
            if loaded and not python:
                library = fd
            digest, kept = hashlib.sha256(), []
            try:
                for chunk in _chunks(fd, entry / name, MAX_FILE_BYTES):
                    digest.update(chunk)
                    if loaded and python:
                        kept.append(chunk)
            finally:
                if fd != library:
                    os.close(fd)
            if digest.hexdigest() != files[name]:
                return None
            if loaded and python:
                module = b"".join(kept)  # the bytes that were hashed are the ones executed
        spec = _spec_from_json(manifest["spec"])
        if expected.problem(spec) is not None or (library is None and module is None):
            return None
        opened, library = (spec, library, module), None
        return opened
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):  # unreadable, or not what
        return None  # was written (RecursionError: json's answer to a manifest of brackets nested too deep)
    finally:
        for still_open in (dir_fd, library):
            if still_open is not None:
                os.close(still_open)


def _checked_spec(entry: Path, expected: Expected) -> ModuleSpec | None:
    """The spec of a cache entry that passes every check (see the module docstring), or None where the
    entry is missing, unreadable or fails one (to be built again). A CompileError where the entry or
    one of its files belongs to another user or may be written by others."""
    opened = _open_verified(entry, expected)
    if opened is None:
        return None
    if opened[1] is not None:
        os.close(opened[1])
    return opened[0]


def _load_entry(entry: Path, expected: Expected) -> CompiledDynamics | None:
    """The entry's library, loaded from the descriptor it was hashed through, if the entry passes its
    checks; None if it does not (to be built), :class:`_UnloadableError` if it does but the library does not load."""
    opened = _open_verified(entry, expected)
    if opened is None:
        return None
    spec, fd, module = opened
    backend = RECORDS[expected.backend]
    try:
        return backend.load(entry, spec, fd, module)
    except backend.unloadable as exc:  # not a library for this host, or without the routines (or a module: hashed,
        # so only one another version wrote)
        raise _UnloadableError(" ".join(str(exc).split())) from None
    finally:
        if fd is not None:
            os.close(fd)


# -- building an entry -----------------------------------------------------------------------------


def _build(spec: ModuleSpec, entry: Path, command: list[str], expected: Expected, *, replace: bool = False) -> None:
    """Write the generated files, build (the backend's: the library, for C) and write the manifest in a private
    directory, then rename the directory to ``entry``: an entry is complete or absent. An entry already there
    that fails its checks (see the module docstring) is replaced, and so is any entry with ``replace``; one that
    passes them (another process just built it) is otherwise kept."""

    work = Path(tempfile.mkdtemp(prefix=f".{spec.name}-", dir=entry.parent))
    backend = RECORDS[expected.backend]
    try:
        files = backend.generate(spec)
        for filename, text in files.items():
            (work / filename).write_text(text, encoding="utf-8")
        built = backend.build(work, spec, command)  # (a Python module: nothing to compile)
        _seal(work, spec, [*files, *built], expected)
        _install(work, entry, expected, replace=replace)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _seal(work: Path, spec: ModuleSpec, files: Iterable[str], expected: Expected) -> None:
    """Make ``files`` private and write the manifest with the hashes of the entry's files."""
    for filename in files:
        os.chmod(work / filename, 0o600)
    names = _entry_files(spec.name, expected.backend)  # (what is checked)
    hashes = {f: _sha256((work / f).read_bytes()) for f in names}
    (work / SPEC_FILE).write_text(_spec_to_json(spec, hashes, expected.key), encoding="utf-8")
    os.chmod(work / SPEC_FILE, 0o600)


def _install(work: Path, entry: Path, expected: Expected, *, replace: bool = False) -> None:
    """Rename the finished ``work`` directory to ``entry``, moving a failing entry (any entry, with
    ``replace``) out of the way first."""
    try:
        os.rename(work, entry)
        return
    except OSError:
        if not entry.exists() and not entry.is_symlink():
            raise
    if not replace and _checked_spec(entry, expected) is not None:  # built meanwhile by another process: keep it
        return
    trash = Path(tempfile.mkdtemp(prefix=".stale-", dir=entry.parent))
    try:
        os.rename(entry, trash / "entry")
        os.rename(work, entry)
    finally:
        shutil.rmtree(trash, ignore_errors=True)



# -- the spec beside the library (what the wrapper needs, without regenerating) --------------------


def _spec_to_json(spec: ModuleSpec, hashes: Mapping[str, str], key: str) -> str:
    """The entry's manifest: the cache key it was built for, the routine description, its own hash and the hashes
    of the entry's files."""
    routines = [
        {"name": r.name, "arrays": [[a.name, list(a.shape)] for a in r.arrays], "batched": r.batched}
        for r in spec.routines
    ]
    data = {"name": spec.name, "robot": spec.robot, "n": spec.n, "parameters": list(spec.parameters),
            "n_constants": spec.n_constants, "version": spec.version, "routines": routines}
    if spec.frames:  # (a manifest without frames stays what it was)
        data["frames"] = list(spec.frames)
    if spec.nq is not None:  # (likewise without a floating base)
        data["nq"] = spec.nq
    if spec.quaternions:  # (likewise without a spherical joint)
        data["quaternions"] = [list(x) for x in spec.quaternions]
    if spec.planar:  # (likewise without a planar joint)
        data["planar"] = [list(x) for x in spec.planar]
    manifest = {"format": MANIFEST_FORMAT, "key": key, "spec": data, "spec_sha256": _sha256(_canonical(data)),
                "files": dict(sorted(hashes.items()))}
    return json.dumps(manifest, indent=1, sort_keys=True) + "\n"


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _spec_from_json(data: Mapping[str, Any]) -> ModuleSpec:
    routines = []
    for r in data["routines"]:
        arrays = [Array(name, tuple(shape)) for name, shape in r["arrays"]]
        routines.append(Routine(name=r["name"], summary="", inputs=tuple(arrays[:-1]), output=arrays[-1], loads=(),
                                assignments=(), stores=(), count=OperationCount(), batched=r["batched"]))
    return ModuleSpec(name=data["name"], robot=data["robot"], n=data["n"], parameters=tuple(data["parameters"]),
                      n_constants=data["n_constants"], routines=tuple(routines), version=data["version"],
                      frames=tuple(data.get("frames", ())), nq=data.get("nq"),
                      quaternions=tuple(tuple(x) for x in data.get("quaternions", ())),
                      planar=tuple(tuple(x) for x in data.get("planar", ())))

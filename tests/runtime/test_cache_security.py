"""The compile cache trusts nothing it reads back: hashes, the spec against the robot, ownership and modes.

Every test starts from a copy of one pristine entry (built once per module), tampers with it, and checks
that ``rd.compile`` either builds the entry again (and then computes the right numbers) or refuses it
with one line. Tests that give files to another user need root (they are skipped otherwise).
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib
import io
import json
import os
import shutil
import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.runtime.entry import CompiledDynamics, CompileError, find_compiler
from tests.conftest import load_quiet
from tests.helpers import has_c_compiler

compile_module = importlib.import_module("robodyn.runtime.entry")
cache_module = importlib.import_module("robodyn.runtime.cache")
compiled_module = importlib.import_module("robodyn.runtime.compiled")


pytestmark = pytest.mark.skipif(not has_c_compiler(), reason="no C compiler ($CC, cc or gcc)")
needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="os.chown needs root")
OUTPUTS = ["G", "tau"]
NOBODY = 65534


@pytest.fixture(scope="module", autouse=True)
def fixed_source() -> Iterator[None]:
    """robodyn's source, as the cache key sees it, does not change during these tests (an edit to the
    working tree meanwhile would give every compile another entry)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cache_module, "_source_fingerprint", lambda: "fixed for test_cache_security")
        yield


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache holding one entry for the PUMA 560 (six joints), built once."""
    root = tmp_path_factory.mktemp("pristine") / "cache"
    rd.compile(load_quiet("puma560"), outputs=OUTPUTS, cache=root)
    return root


@pytest.fixture
def cache(pristine: Path, tmp_path: Path) -> Path:
    """A private copy of the pristine cache (modes kept)."""
    root = tmp_path / "cache"
    shutil.copytree(pristine, root)
    return root


def entry_of(root: Path) -> Path:
    (entry,) = [p for p in root.iterdir() if not p.name.startswith(".")]
    return entry


def manifest(entry: Path) -> dict:
    return json.loads((entry / "spec.json").read_text())


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compile_and_check(root: Path) -> CompiledDynamics:
    """rd.compile from ``root``: it loads, its entry passes its own hashes, and gravity is the PUMA's."""
    robot = load_quiet("puma560")
    dyn = rd.compile(robot, outputs=OUTPUTS, cache=root)
    entry = entry_of(root)
    assert dyn.path == entry / "puma560.so" and dyn.n == 6
    files = manifest(entry)["files"]
    assert sorted(files) == ["puma560.c", "puma560.h", "puma560.so"]
    assert all(sha256(entry / name) == digest for name, digest in files.items())
    q = np.random.default_rng(1).uniform(-3, 3, (5, 6))
    assert np.allclose(dyn.gravity(q), numeric.gravity(robot, q), rtol=1e-12, atol=1e-12)
    assert [p.name for p in root.iterdir() if p.name.startswith(".")] == []  # no temporary left behind
    return dyn


def expected_of(entry: Path) -> Any:
    """What rd.compile expects of the PUMA's entry: its routines, and the cache key its path ends with."""
    return cache_module.Expected("puma560", 6, ("inverse_dynamics", "gravity"), (), entry.name.rpartition("-")[2])


def one_line_error(excinfo: pytest.ExceptionInfo[CompileError], *words: str) -> None:
    message = str(excinfo.value)
    assert "\n" not in message and all(word in message for word in words), message


# -- corruption and tampering: built again ------------------------------------------------------------------


def test_a_planted_library_is_replaced(cache: Path, tmp_path: Path) -> None:
    """Another robot's library (a valid shared object, with other routines) in place of the entry's."""
    other = tmp_path / "other"
    rd.compile(load_quiet("double_pendulum"), outputs=["G"], cache=other)
    entry = entry_of(cache)
    planted = entry_of(other) / "double_pendulum.so"
    shutil.copyfile(planted, entry / "puma560.so")
    compile_and_check(cache)
    assert sha256(entry / "puma560.so") != sha256(planted)


def test_a_truncated_library_is_rebuilt_not_an_oserror_forever(cache: Path) -> None:
    library = entry_of(cache) / "puma560.so"
    library.write_bytes(library.read_bytes()[:100])
    compile_and_check(cache)
    compile_and_check(cache)  # and the rebuilt entry is used as it is


def test_an_edited_spec_is_rebuilt(cache: Path) -> None:
    """n = 2 for a six-joint arm (the wrapper would allocate 2 entries per state and the library write 6)."""
    spec_file = entry_of(cache) / "spec.json"
    data = manifest(entry_of(cache))
    data["spec"]["n"] = 2
    spec_file.write_text(json.dumps(data))
    compile_and_check(cache)
    assert manifest(entry_of(cache))["spec"]["n"] == 6


def test_a_consistent_but_wrong_spec_is_checked_against_the_robot(cache: Path) -> None:
    """A spec edited with its hash updated still has to describe the robot: n, routines, parameters."""
    entry = entry_of(cache)
    robot = load_quiet("puma560")
    expected = expected_of(entry)
    assert cache_module._checked_spec(entry, expected) is not None
    edits = [("n", 2), ("parameters", ["m1"]), ("n_constants", 0 if manifest(entry)["spec"]["n_constants"] else 3)]
    drop_gravity = ("routines", manifest(entry)["spec"]["routines"][:2])
    for field, value in [*edits, drop_gravity]:
        data = manifest(entry)
        data["spec"][field] = value
        data["spec_sha256"] = cache_module._sha256(cache_module._canonical(data["spec"]))
        (entry / "spec.json").write_text(json.dumps(data))
        assert cache_module._checked_spec(entry, expected) is None, field
        dyn = compile_and_check(cache)  # built again
        assert dyn.routines == ("inverse_dynamics", "gravity") and dyn.n == robot.n
        assert cache_module._checked_spec(entry, expected) is not None


@pytest.mark.parametrize("damage", ["no spec", "garbage spec", "old format", "spec is a link", "entry is a file",
                                    "entry is a link", "no library", "library is a directory", "library is a fifo",
                                    "spec is a fifo"])
def test_an_unreadable_entry_is_rebuilt(cache: Path, damage: str) -> None:
    entry = entry_of(cache)
    spec_file, library = entry / "spec.json", entry / "puma560.so"
    if damage == "no spec":
        spec_file.unlink()
    elif damage == "garbage spec":
        spec_file.write_text("{not json")
    elif damage == "old format":  # robodyn's earlier spec.json: the spec alone, no hashes
        spec_file.write_text(json.dumps(manifest(entry)["spec"]))
    elif damage == "spec is a link":
        target = cache.parent / "elsewhere.json"
        shutil.copyfile(spec_file, target)
        spec_file.unlink()
        spec_file.symlink_to(target)
    elif damage == "entry is a file":
        shutil.rmtree(entry)
        entry.write_text("")
    elif damage == "entry is a link":
        elsewhere = cache.parent / "elsewhere"
        entry.rename(elsewhere)
        entry.symlink_to(elsewhere, target_is_directory=True)
    elif damage == "no library":
        library.unlink()
    elif damage in ("library is a fifo", "spec is a fifo"):  # (opened without blocking, then refused)
        path = library if damage == "library is a fifo" else spec_file
        path.unlink()
        os.mkfifo(path, 0o600)
    else:
        library.unlink()
        library.mkdir()
    compile_and_check(cache)


@pytest.mark.parametrize("nesting", ["[", "{\"a\":"])
def test_a_manifest_nested_too_deep_is_rebuilt_not_a_recursion_error(cache: Path, nesting: str) -> None:
    """json.loads raises RecursionError (not ValueError) on brackets nested 100000 deep: a failed check too."""
    spec_file = entry_of(cache) / "spec.json"
    spec_file.write_text(nesting * 100_000)
    with pytest.raises(RecursionError):
        json.loads(spec_file.read_text())
    assert cache_module._checked_spec(entry_of(cache), expected_of(entry_of(cache))) is None
    compile_and_check(cache)
    assert manifest(entry_of(cache))["format"] == cache_module.MANIFEST_FORMAT


ARM = """name: arm
gravity: [0, 0, -9.81]
links:
  - {{joint: R, a: {a1}, alpha: 0, d: 0, theta: 0, mass: {m1}, com: [0.1, 0, 0], inertia: [0.01, 0.02, 0.02]}}
  - {{joint: R, a: 0.4, alpha: 0.5, d: 0.1, theta: 0, mass: 0.8, com: [0.2, 0, 0], inertia: [0.01, 0.01, 0.02]}}
"""


def test_an_entry_of_another_model_of_the_same_name_is_rebuilt(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Two robots named "arm" (same joints and parameters, other numbers) in one cache: each entry's manifest
    records its key, so an entry copied over the other's path is built again, and each gets its own torques."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("ROBODYN_CACHE", str(cache))
    robots = []
    for i, (a1, m1) in enumerate([(0.5, 1.0), (0.9, 3.5)]):
        path = tmp_path / f"arm{i}.yaml"
        path.write_text(ARM.format(a1=a1, m1=m1))
        robots.append(rd.load(path))
    q, qd, qdd = np.random.default_rng(2).uniform(-2, 2, (3, 4, 2))
    reference = [numeric.inverse_dynamics(robot, q, qd, qdd) for robot in robots]
    assert not np.allclose(*reference)
    entries = []
    for robot, ref in zip(robots, reference, strict=True):
        assert np.allclose(rd.compile(robot, outputs=["tau"]).inverse_dynamics(q, qd, qdd), ref, rtol=1e-12)
        entries.append(next(p for p in cache.iterdir() if p not in entries and not p.name.startswith(".")))
    assert entries[0].name.startswith("arm-") and entries[1].name.startswith("arm-")
    key = manifest(entries[0])["key"]
    assert entries[0].name == f"arm-{key}" and manifest(entries[1])["key"] != key
    for source, target in [(0, 1), (1, 0)]:  # the other's entry (its own hashes all match) in place of one's own
        shutil.rmtree(entries[target])
        shutil.copytree(entries[source], entries[target])
        got = rd.compile(robots[target], outputs=["tau"]).inverse_dynamics(q, qd, qdd)
        assert np.allclose(got, reference[target], rtol=1e-12)
        assert manifest(entries[target])["key"] == entries[target].name.rpartition("-")[2]
        assert np.allclose(rd.compile(robots[source], outputs=["tau"]).inverse_dynamics(q, qd, qdd),
                           reference[source], rtol=1e-12)


def test_a_manifest_of_another_key_with_consistent_hashes_is_rebuilt(cache: Path) -> None:
    entry = entry_of(cache)
    data = manifest(entry)
    data["key"] = "0" * len(data["key"])
    (entry / "spec.json").write_text(json.dumps(data))
    assert cache_module._checked_spec(entry, expected_of(entry)) is None
    compile_and_check(cache)
    assert manifest(entry)["key"] == entry.name.rpartition("-")[2]


def test_a_manifest_too_large_is_not_read(cache: Path) -> None:
    """A spec.json over the cap (here valid JSON, padded) is refused and built again, not parsed."""
    spec_file = entry_of(cache) / "spec.json"
    spec_file.write_text(spec_file.read_text() + " " * (2 << 20))  # (2 MiB: the cap is 1 MiB)
    compile_and_check(cache)
    assert spec_file.stat().st_size < 1 << 16


def test_no_more_than_the_cap_is_read_of_a_file(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = entry_of(cache)
    expected = expected_of(entry)
    monkeypatch.setattr(cache_module, "MAX_FILE_BYTES", 1000)  # (the library is some 20 kB)
    read: list[int] = []
    real_read = os.read

    def counted(fd: int, size: int) -> bytes:
        data = real_read(fd, size)
        read.append(len(data))
        return data

    monkeypatch.setattr(os, "read", counted)
    assert cache_module._checked_spec(entry, expected) is None
    assert sum(read) <= (entry / "spec.json").stat().st_size + 3 * (1000 + 1)  # the manifest, then 1001 bytes at most


@pytest.mark.parametrize("listed", ["absolute", "parent", "instead of the header"])
def test_manifest_names_are_checked_before_any_file_is_read(cache: Path, tmp_path: Path, listed: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A manifest naming a file outside the entry (with its right hash) opens nothing there: rebuilt."""
    entry = entry_of(cache)
    outside = tmp_path / "outside.txt"
    outside.write_text("not the cache's to read")
    os.chmod(outside, 0o600)
    data = manifest(entry)
    name = {"absolute": str(outside), "parent": "../../outside.txt", "instead of the header": str(outside)}[listed]
    assert (entry / name).resolve() == outside
    files = {name: sha256(outside), **data["files"]}  # (first: read first by a check in manifest order)
    if listed == "instead of the header":
        del files["puma560.h"]
    data["files"] = files
    (entry / "spec.json").write_text(json.dumps(data))
    touched: list[str] = []

    def spy(function: Callable[..., Any]) -> Callable[..., Any]:
        def call(path: Any, *args: Any, **kwargs: Any) -> Any:
            touched.append(str(os.fspath(path)) if isinstance(path, str | os.PathLike) else repr(path))
            return function(path, *args, **kwargs)
        return call

    with monkeypatch.context() as patch:
        for module, function in [(os, "open"), (os, "lstat"), (os, "stat"), (io, "open")]:
            patch.setattr(module, function, spy(getattr(module, function)))
        rd.compile(load_quiet("puma560"), outputs=OUTPUTS, cache=cache)
    outside_read = [path for path in touched if "outside.txt" in path]
    assert touched and not outside_read
    compile_and_check(cache)  # built again, with its own three files


# -- what is loaded is what was checked -------------------------------------------------------------------

PLANTED_C = """#include <stddef.h>
void puma560_constants(const double *params, double *k) { (void)params; k[0] = 0.0; }
void puma560_gravity_batch(const double *k, const double *q, double *G, size_t N) {
    (void)k; (void)q; for (size_t i = 0; i < 6 * N; i++) G[i] = 4242.0;
}
void puma560_inverse_dynamics_batch(const double *k, const double *q, const double *qd, const double *qdd,
                                    double *tau, size_t N) {
    (void)k; (void)q; (void)qd; (void)qdd; for (size_t i = 0; i < 6 * N; i++) tau[i] = 4242.0;
}
"""


def planted_library(tmp_path: Path) -> Path:
    """A library with the PUMA entry's routines that answer 4242 (what a swap would slip in)."""
    source, library = tmp_path / "planted.c", tmp_path / "planted.so"
    source.write_text(PLANTED_C)
    command = find_compiler()
    assert command is not None
    subprocess.run([*command, "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    os.chmod(library, 0o600)
    return library


def puma_gravity_ok(dyn: CompiledDynamics) -> bool:
    q = np.random.default_rng(2).uniform(-3, 3, (4, 6))
    return bool(np.allclose(dyn.gravity(q), numeric.gravity(load_quiet("puma560"), q), rtol=1e-12, atol=1e-12))


def test_the_library_loaded_is_the_file_hashed(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry's library is swapped for another (with the same routines) after its hash is checked and
    before dlopen: the library loaded is still the one checked, through the descriptor it was read by."""
    planted, library = planted_library(tmp_path), entry_of(cache) / "puma560.so"
    checked = os.stat(library)
    real_cdll = ctypes.CDLL
    names: list[str] = []

    def swap_then_load(name: str, *args: object, **kwargs: object) -> ctypes.CDLL:
        names.append(str(name))
        if len(names) == 1:
            os.replace(planted, library)  # (a rename: the checked file lives on as long as a descriptor holds it)
            if str(name).startswith("/proc/self/fd/"):  # the descriptor the hash was read by, still open
                assert os.path.samestat(os.fstat(int(str(name).rsplit("/", 1)[1])), checked)
        return real_cdll(name, *args, **kwargs)

    monkeypatch.setattr(compiled_module.ctypes, "CDLL", swap_then_load)
    dyn = rd.compile(load_quiet("puma560"), outputs=OUTPUTS, cache=cache)
    assert puma_gravity_ok(dyn), "the library swapped in after the check was loaded"
    assert len(names) == 1 and dyn.path == library
    if os.path.isdir("/proc/self/fd"):
        assert names[0].startswith("/proc/self/fd/") and names[0] != str(library)


def test_without_proc_self_fd_the_library_is_loaded_by_its_path(cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    real_cdll = ctypes.CDLL
    names: list[str] = []

    def load(name: str, *args: object, **kwargs: object) -> ctypes.CDLL:
        names.append(str(name))
        return real_cdll(name, *args, **kwargs)

    monkeypatch.setattr(compiled_module, "PROC_FD", str(tmp_path / "no-proc"))
    monkeypatch.setattr(compiled_module.ctypes, "CDLL", load)
    dyn = compile_and_check(cache)
    assert names == [str(dyn.path)]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="no /proc/self/fd")
def test_descriptor_numbers_reused_never_give_an_earlier_library(cache: Path, tmp_path: Path) -> None:
    """glibc hands back a loaded library whose name is the one asked for: two libraries loaded in turn
    through the same descriptor number must still be two libraries."""
    entry = entry_of(cache)
    expected = expected_of(entry)
    spec = cache_module._checked_spec(entry, expected)
    assert spec is not None
    loaded = []
    number = None
    for path in (entry / "puma560.so", planted_library(tmp_path)):
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        if number is None:
            number = fd
        elif fd != number:
            os.dup2(fd, number)  # (free again: closed after the first load)
            os.close(fd)
            fd = number
        try:
            loaded.append(compiled_module.load_library(path, spec, fd=fd))
        finally:
            os.close(fd)
    assert puma_gravity_ok(loaded[0]) and np.all(loaded[1].gravity(np.zeros(6)) == 4242.0)


# -- an entry that passes its checks but does not load: built again, once ----------------------------------


def test_an_entry_that_passes_its_checks_but_does_not_load_is_rebuilt(cache: Path) -> None:
    """E.g. a library built against another host's C library: its hashes match, dlopen fails."""
    entry = entry_of(cache)
    library = entry / "puma560.so"
    library.write_bytes(b"\x7fELF" + bytes(60) + b" not a library for this host")
    data = manifest(entry)
    data["files"]["puma560.so"] = sha256(library)
    (entry / "spec.json").write_text(json.dumps(data))
    expected = expected_of(entry)
    assert cache_module._checked_spec(entry, expected) is not None  # every check passes
    compile_and_check(cache)
    compile_and_check(cache)  # and the rebuilt entry is used as it is


def test_a_library_just_built_that_does_not_load_is_one_error(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rebuilt once, not forever; the error names the library and says why dlopen failed."""
    builds: list[Path] = []
    real_build = cache_module._build

    def build(*args: object, **kwargs: object) -> None:
        builds.append(args[1])  # type: ignore[arg-type]
        real_build(*args, **kwargs)  # type: ignore[arg-type]

    def refuse(name: str, *args: object, **kwargs: object) -> None:
        raise OSError(f"{name}: wrong ELF class: ELFCLASS32")

    monkeypatch.setattr(cache_module, "_build", build)
    monkeypatch.setattr(compiled_module.ctypes, "CDLL", refuse)
    with pytest.raises(CompileError) as excinfo:
        rd.compile(load_quiet("puma560"), outputs=OUTPUTS, cache=cache)
    library = entry_of(cache) / "puma560.so"
    one_line_error(excinfo, "does not load", f"{library}: wrong ELF class", "backend='numpy'")
    assert "/proc/self" not in str(excinfo.value) and builds == [entry_of(cache)]


def test_the_cache_hit_checks_cost_little_and_compile_nothing(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled again")

    monkeypatch.setattr(subprocess, "run", refuse)
    monkeypatch.setattr(compile_module, "module_spec", refuse)
    compile_and_check(cache)


def test_an_unwritable_cache_refuses_a_bad_entry_in_one_line(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (entry_of(cache) / "puma560.so").write_bytes(b"\x7fELF")

    def denied(*args: object, **kwargs: object) -> str:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(cache_module.tempfile, "mkdtemp", denied)  # (root may write anywhere: simulated)
    with pytest.raises(CompileError) as excinfo:
        rd.compile(load_quiet("puma560"), outputs=OUTPUTS, cache=cache)
    one_line_error(excinfo, "cannot write the compile cache", "Permission denied", "backend='numpy'")


# -- permissions: created private, refused when not ----------------------------------------------------------


def test_the_cache_is_created_private(tmp_path: Path) -> None:
    root = tmp_path / "a" / "cache"
    old = os.umask(0)  # the most permissive umask: the modes below are robodyn's own
    try:
        rd.compile(load_quiet("double_pendulum"), outputs=["G"], cache=root)
    finally:
        os.umask(old)
    entry = entry_of(root)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700 and stat.S_IMODE(entry.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in entry.iterdir())
    assert all(p.stat().st_uid == os.getuid() for p in [root, entry, *entry.iterdir()])


@pytest.mark.parametrize("where", ["cache", "entry", "library", "spec"])
def test_writable_by_others_is_refused(cache: Path, where: str) -> None:
    entry = entry_of(cache)
    path = {"cache": cache, "entry": entry, "library": entry / "puma560.so", "spec": entry / "spec.json"}[where]
    for bits in (stat.S_IWOTH, stat.S_IWGRP):
        os.chmod(path, stat.S_IMODE(path.stat().st_mode) | bits)
        with pytest.raises(CompileError) as excinfo:
            rd.compile(load_quiet("puma560"), outputs=OUTPUTS, cache=cache)
        one_line_error(excinfo, "refusing", str(path), "other users may write it")
        os.chmod(path, stat.S_IMODE(path.stat().st_mode) & ~bits)
    compile_and_check(cache)


@needs_root
@pytest.mark.parametrize("where", ["cache", "entry", "library", "spec"])
def test_owned_by_another_user_is_refused(cache: Path, where: str) -> None:
    entry = entry_of(cache)
    path = {"cache": cache, "entry": entry, "library": entry / "puma560.so", "spec": entry / "spec.json"}[where]
    os.chown(path, NOBODY, NOBODY)
    with pytest.raises(CompileError) as excinfo:
        rd.compile(load_quiet("puma560"), outputs=OUTPUTS, cache=cache)
    one_line_error(excinfo, "refusing", str(path), f"owned by uid {NOBODY}", "not by this user")
    os.chown(path, os.getuid(), os.getgid())
    compile_and_check(cache)


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_the_python_backends_are_cached_and_checked(tmp_path: Path, backend: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The NumPy and JAX modules are entries like the library: the module and its manifest; a second compile
    executes the cached module without generating; an edited module is never executed, but rebuilt."""
    if backend == "jax":
        pytest.importorskip("jax")
    cache = tmp_path / "cache"
    robot = load_quiet("double_pendulum")
    dyn = rd.compile(robot, outputs=["G"], backend=backend, cache=cache)
    (entry,) = cache.iterdir()
    module = entry / ("double_pendulum.py" if backend == "numpy" else "double_pendulum_jax.py")
    assert sorted(p.name for p in entry.iterdir()) == sorted([module.name, "spec.json"])
    assert dyn.path is None and dyn.backend == backend
    params = {"L1": 1.0, "L2": 0.5, "g": 9.81, "m1": 2.0, "m2": 1.0}
    q = np.array([[0.3, -0.2], [1.0, 0.5]])
    expected = dyn.gravity(q, params=params)
    with monkeypatch.context() as patch:  # a cache hit generates nothing
        patch.setattr(compile_module, "module_spec", lambda *a, **k: pytest.fail("generated again"))
        again = rd.compile(robot, outputs=["G"], backend=backend, cache=cache)
    assert np.array_equal(again.gravity(q, params=params), expected)
    module.write_text(module.read_text() + "\nraise SystemExit('an edited module was executed')\n")
    rebuilt = rd.compile(robot, outputs=["G"], backend=backend, cache=cache)
    assert np.array_equal(rebuilt.gravity(q, params=params), expected)
    assert "SystemExit" not in module.read_text()
    for bad in (np.zeros(5), np.zeros((2, 3, 3)), np.zeros((3, 7))):
        with pytest.raises(ValueError, match="shape"):
            dyn.gravity(bad, params=params)

"""The compile cache trusts nothing it reads back: hashes, the spec against the robot, ownership and modes.

Every test starts from a copy of one pristine entry (built once per module), tampers with it, and checks
that ``rd.compile`` either builds the entry again (and then computes the right numbers) or refuses it
with one line. Tests that give files to another user need root (they are skipped otherwise).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.compile import CompiledDynamics, CompileError, find_compiler
from tests.conftest import load_quiet

compile_module = importlib.import_module("robodyn.compile")


def _has_compiler() -> bool:
    try:
        return find_compiler() is not None
    except CompileError:
        return False


pytestmark = pytest.mark.skipif(not _has_compiler(), reason="no C compiler ($CC, cc or gcc)")
needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="os.chown needs root")
OUTPUTS = ["G", "tau"]
NOBODY = 65534


@pytest.fixture(scope="module", autouse=True)
def fixed_source() -> Iterator[None]:
    """robodyn's source, as the cache key sees it, does not change during these tests (an edit to the
    working tree meanwhile would give every compile another entry)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compile_module, "_source_fingerprint", lambda: "fixed for test_cache_security")
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
    expected = compile_module.Expected("puma560", 6, ("inverse_dynamics", "gravity"), ())
    assert compile_module._checked_spec(entry, expected) is not None
    edits = [("n", 2), ("parameters", ["m1"]), ("n_constants", 0 if manifest(entry)["spec"]["n_constants"] else 3)]
    drop_gravity = ("routines", manifest(entry)["spec"]["routines"][:2])
    for field, value in [*edits, drop_gravity]:
        data = manifest(entry)
        data["spec"][field] = value
        data["spec_sha256"] = compile_module._sha256(compile_module._canonical(data["spec"]))
        (entry / "spec.json").write_text(json.dumps(data))
        assert compile_module._checked_spec(entry, expected) is None, field
        dyn = compile_and_check(cache)  # built again
        assert dyn.routines == ("inverse_dynamics", "gravity") and dyn.n == robot.n
        assert compile_module._checked_spec(entry, expected) is not None


@pytest.mark.parametrize("damage", ["no spec", "garbage spec", "old format", "spec is a link", "entry is a file",
                                    "no library", "library is a directory"])
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
    elif damage == "no library":
        library.unlink()
    else:
        library.unlink()
        library.mkdir()
    compile_and_check(cache)


def test_the_cache_hit_checks_cost_little_and_compile_nothing(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled again")

    monkeypatch.setattr(compile_module.subprocess, "run", refuse)
    monkeypatch.setattr(compile_module, "module_spec", refuse)
    compile_and_check(cache)


def test_an_unwritable_cache_refuses_a_bad_entry_in_one_line(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (entry_of(cache) / "puma560.so").write_bytes(b"\x7fELF")

    def denied(*args: object, **kwargs: object) -> str:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(compile_module.tempfile, "mkdtemp", denied)  # (root may write anywhere: simulated)
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


def test_the_numpy_backend_reads_and_writes_no_file(tmp_path: Path) -> None:
    dyn = rd.compile(load_quiet("double_pendulum"), outputs=["G"], backend="numpy", cache=tmp_path / "cache")
    assert dyn.path is None and not (tmp_path / "cache").exists()

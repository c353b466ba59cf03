"""robodyn.runtime.entry: shapes, parameters, the cache (shared by processes and threads), errors, fallback."""

from __future__ import annotations

import importlib
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.runtime.entry import CompileError, find_compiler, load_library
from tests.conftest import load_quiet, random_robot
from tests.helpers import assert_close, has_c_compiler

# robodyn.runtime.entry is the function; the module is reached through sys.modules
compile_module = importlib.import_module("robodyn.runtime.entry")
cache_module = importlib.import_module("robodyn.runtime.cache")


compiler = pytest.mark.skipif(not has_c_compiler(), reason="no C compiler ($CC, cc or gcc)")
DP = {"L1": 1.0, "L2": 0.5, "g": 9.81, "m1": 2.0, "m2": 1.0}


def states(n: int, N: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-3, 3, (N, n)), rng.uniform(-2, 2, (N, n)), rng.uniform(-5, 5, (N, n))


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@compiler
def test_one_state_batches_and_broadcasting(cache: Path) -> None:
    robot = random_robot(1, 3, "modified")  # damping, armature, tip load
    dyn = rd.compile(robot, cache=cache)
    q, qd, qdd = states(3, 5)
    tau = dyn.inverse_dynamics(q, qd, qdd)
    assert tau.shape == (5, 3)
    expected = numeric.inverse_dynamics(robot, q, qd, qdd)
    assert_close(tau, expected, 1e-12, scale=max(1.0, np.max(np.abs(expected))))  # compiled C against NumPy
    assert dyn.inverse_dynamics(q[2], qd[2], qdd[2]).shape == (3,)
    assert np.allclose(dyn.inverse_dynamics(q[2], qd[2], qdd[2]), tau[2], rtol=1e-14, atol=1e-14)
    assert np.allclose(dyn.inverse_dynamics(q, qd[0], qdd[0]), dyn.inverse_dynamics(q, qd[[0] * 5], qdd[[0] * 5]))
    assert dyn.mass_matrix(q).shape == (5, 3, 3) and dyn.mass_matrix(q[0]).shape == (3, 3)
    assert dyn.gravity(q.tolist()).shape == (5, 3)
    assert np.allclose(dyn.forward_dynamics(q, qd, tau), qdd, rtol=1e-9, atol=1e-9)
    assert dyn.inverse_dynamics(np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3))).shape == (0, 3)
    for bad in (np.zeros(5), np.zeros((2, 3, 3)), np.zeros((3, 7))):
        with pytest.raises(ValueError, match="shape"):
            dyn.gravity(bad)
    with pytest.raises(ValueError, match="do not match"):
        dyn.coriolis(np.zeros((3, 3)), np.zeros((2, 3)))


@pytest.mark.parametrize("backend", ["c", "numpy"])
def test_one_state_function_is_the_method(cache: Path, backend: str) -> None:
    """``one_state``: the routine on one state with the parameters bound, for loops of single calls."""
    if backend == "c" and not has_c_compiler():
        pytest.skip("no C compiler")
    robot = load_quiet("double_pendulum")
    dyn = rd.compile(robot, cache=cache, backend=backend)
    forward = dyn.one_state("forward_dynamics", params=DP)
    mass = dyn.one_state("mass_matrix", params=DP)
    q, qd, tau = states(2, 4)
    for i in range(4):
        assert np.array_equal(forward(q[i], qd[i], tau[i]), dyn.forward_dynamics(q[i], qd[i], tau[i], params=DP))
        assert np.array_equal(mass(q[i]), dyn.mass_matrix(q[i], params=DP))
    first = forward(q[0], qd[0], tau[0])
    forward(q[1], qd[1], tau[1])
    assert np.array_equal(first, forward(q[0], qd[0], tau[0]))  # a new array each call, not the work buffer
    tau_only = rd.compile(robot, cache=cache, backend=backend, outputs=["tau"])
    with pytest.warns(rd.BuildNote, match=r"gravity was not compiled with the rest: building it now .*'G'"):
        gravity = tau_only.one_state("gravity", params=DP)  # a routine left out: built on first use, said once
    assert np.array_equal(gravity(q[0]), dyn.gravity(q[0], params=DP))
    assert tau_only.routines == ("inverse_dynamics",)  # (what this object holds; the gravity is another's)
    alone = load_library(dyn.path, dyn._spec) if backend == "c" else None
    if alone is not None:  # a library loaded by itself cannot build more: the routines it has are named
        with pytest.raises(ValueError, match="was not generated"):
            alone.one_state("mass_matrix_packed")


@pytest.mark.parametrize("backend", ["c", "numpy"])
def test_out_arrays_are_written_and_returned(cache: Path, backend: str) -> None:
    """``out=``: the result written into the given array (batch or one state, the derivatives packed) and that
    array returned, bit for bit what the call without it returns; a wrong shape, dtype, layout or an
    overlap with an input is a ValueError naming what out must be."""
    if backend == "c" and not has_c_compiler():
        pytest.skip("no C compiler")
    robot = load_quiet("double_pendulum")
    dyn = rd.compile(robot, cache=cache, backend=backend, outputs=["tau", "M", "dqdd"])
    q, qd, qdd = states(2, 6)
    out = np.full((6, 2), np.nan)
    assert dyn.inverse_dynamics(q, qd, qdd, params=DP, out=out) is out
    assert np.array_equal(out, dyn.inverse_dynamics(q, qd, qdd, params=DP))
    one = np.full((2, 2), np.nan)
    assert dyn.mass_matrix(q[1], params=DP, out=one) is one
    assert np.array_equal(one, dyn.mass_matrix(q[1], params=DP))
    packed = np.full((6, 3, 2, 2), np.nan)
    views = dyn.forward_dynamics_derivatives(q, qd, qdd, params=DP, out=packed)
    for view, expected in zip(views, dyn.forward_dynamics_derivatives(q, qd, qdd, params=DP), strict=True):
        assert np.shares_memory(view, packed) and np.array_equal(view, expected)
    for bad in (np.zeros((5, 2)), np.zeros((6, 2), dtype=np.float32), np.zeros((2, 6)).T, [[0.0, 0.0]] * 6):
        with pytest.raises(ValueError, match=r"out must be a writeable C-contiguous float64 array of shape \(6, 2\)"):
            dyn.inverse_dynamics(q, qd, qdd, params=DP, out=bad)
    with pytest.raises(ValueError, match="must not overlap"):
        dyn.inverse_dynamics(q, qd, qdd, params=DP, out=qdd)


@compiler
def test_one_state_methods_are_the_batch_rows_in_every_thread(cache: Path) -> None:
    """A method on one state takes the bound one-state call (this thread's buffers; made again when the parameters
    change): bit for bit the batch's row, from several threads at once, for two parameter sets."""
    robot = load_quiet("double_pendulum")
    dyn = rd.compile(robot, cache=cache)
    other = {**DP, "m2": 3.0}
    q, qd, tau = states(2, 64)
    batch = {id(p): dyn.forward_dynamics(q, qd, tau, params=p) for p in (DP, other)}

    def one(i: int) -> bool:
        p = DP if i % 2 else other
        return np.array_equal(dyn.forward_dynamics(q[i], qd[i], tau[i], params=p), batch[id(p)][i])

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(one, range(64)))
    assert dyn.mass_matrix(q[0], params=DP).shape == (2, 2)


@compiler
def test_one_state_calls_skip_the_methods_python_layers(cache: Path) -> None:
    """A robot without parameters: after a method's first call on one state, the extension's call stands in for it
    on the instance (bit for bit the batch's row), runs plain batches (with or without ``out=``) and hands every
    other call (broadcasting, ``params=``, a wrong shape or ``out``, a list) to the method itself; the signature
    and help are the method's, and the instance is still collected (the cycle instance -> Caller -> bound method
    goes through the garbage collector)."""
    import gc
    import inspect
    import weakref

    from robodyn.runtime import compiled

    if compiled.Caller is None:
        pytest.skip("robodyn._fastcall was not built")
    robot = random_robot(1, 3, "modified")  # test_one_state_batches_and_broadcasting's library, from the cache
    dyn = rd.compile(robot, cache=cache)
    q, qd, qdd = states(3, 6, seed=3)
    batch = dyn.inverse_dynamics(q, qd, qdd)
    assert np.array_equal(dyn.inverse_dynamics(q[1], qd[1], qdd[1]), batch[1])
    stand_in = dyn.__dict__["inverse_dynamics"]
    assert type(stand_in).__name__ == "Caller" and "inverse_dynamics" in dyn.__dict__
    assert "mass_matrix" not in dyn.__dict__  # made on its method's first call
    for i in range(6):
        assert np.array_equal(dyn.inverse_dynamics(q[i], qd[i], qdd[i]), batch[i])
    assert np.array_equal(dyn.inverse_dynamics(q, qd, qdd), batch)  # a batch: the method
    out = np.full((6, 3), np.nan)
    assert dyn.inverse_dynamics(q, qd, qdd, out=out) is out and np.array_equal(out, batch)
    assert np.array_equal(dyn.inverse_dynamics(q[2].tolist(), qd[2], qdd[2]), batch[2])
    with pytest.raises(ValueError, match=r"shape \(3,\) or \(N, 3\)"):
        dyn.inverse_dynamics(np.zeros(5), qd[0], qdd[0])
    with pytest.raises(TypeError):
        dyn.inverse_dynamics(q[0], qd[0])
    assert list(inspect.signature(dyn.inverse_dynamics).parameters) == ["q", "qd", "qdd", "params", "out"]
    assert dyn.inverse_dynamics.__doc__ == compiled.CompiledDynamics.inverse_dynamics.__doc__
    M = dyn.mass_matrix(q)
    assert np.array_equal(dyn.mass_matrix(q[4]), M[4]) and np.array_equal(dyn.mass_matrix(q[4]), M[4])
    # a plain batch runs in the extension; broadcasting, params=, a wrong out or one overlapping an input, the method
    handed: list[tuple[int, tuple[str, ...]]] = []

    def method(*arrays: object, **given: object) -> str:
        handed.append((len(arrays), tuple(given)))
        return "the method's"

    caller = dyn._fast_call("mass_matrix", dyn.constants(), (3, 3), fallback=method)
    assert np.array_equal(caller(q), M) and np.array_equal(caller(q[4]), M[4])
    out = np.full((6, 3, 3), np.nan)
    assert caller(q, out=out) is out and np.array_equal(out, M) and handed == []
    for call in (lambda: caller(q[:, None, :]), lambda: caller(q, params={}), lambda: caller(q, out=out[:5]),
                 lambda: caller(q, out=out.transpose(0, 2, 1)), lambda: caller(np.asfortranarray(q)),
                 lambda: caller(q.astype(np.float32))):
        assert call() == "the method's"
    assert len(handed) == 6
    shared = np.zeros((6, 9))
    assert caller(shared[:, :3].copy(), out=shared.reshape(6, 3, 3)) is not None  # no overlap: a copy
    assert caller(shared[:, :3], out=shared.reshape(6, 3, 3)) == "the method's"  # not contiguous rows
    assert dyn.inverse_dynamics(q, qd[0], qdd[0]).shape == (6, 3)  # broadcast by the method
    with pytest.raises(ValueError, match="must not overlap"):
        dyn.inverse_dynamics(q, qd, qdd, out=qdd)
    class Checked(compiled.CompiledDynamics):  # a subclass's own method is not stood in for
        def gravity(self, q: object, **given: object) -> np.ndarray:
            return -super().gravity(q, **given)

    checked = Checked.__new__(Checked)
    checked.__dict__.update({k: v for k, v in dyn.__dict__.items() if k not in compiled._STAND_INS})
    checked._fast = {}
    assert np.array_equal(checked.gravity(q[0]), -dyn.gravity(q[0])) and "gravity" not in checked.__dict__
    alive = weakref.ref(dyn)
    del dyn, stand_in, checked
    gc.collect()
    assert alive() is None


@compiler
def test_parameters_by_name_or_in_order(cache: Path) -> None:
    robot = load_quiet("double_pendulum")
    dyn = rd.compile(robot, cache=cache)
    assert dyn.parameters == tuple(s.name for s in robot.parameters()) == ("L1", "L2", "g", "m1", "m2")
    q, qd, _ = states(2, 4)
    expected = numeric.gravity(robot, q, params=DP)
    scale = max(1.0, np.max(np.abs(expected)))  # the floor scales with G (tens of N m here)
    assert_close(dyn.gravity(q, params=DP), expected, 1e-13, scale=scale)
    assert_close(dyn.gravity(q, params=[DP[p] for p in dyn.parameters]), expected, 1e-13, scale=scale)
    assert np.allclose(dyn.constants(DP), dyn.constants(list(DP.values())))
    with pytest.raises(ValueError, match="symbolic parameters"):
        dyn.gravity(q)
    with pytest.raises(ValueError, match="unbound"):
        dyn.gravity(q, params={"L1": 1.0})
    with pytest.raises(ValueError, match="no parameter 'x'"):
        dyn.gravity(q, params={**DP, "x": 1.0})
    with pytest.raises(ValueError, match="takes 5 parameters"):
        dyn.gravity(q, params=[1.0, 2.0])
    numeric_arm = rd.compile(load_quiet("two_link_payload").replace(name="tlp"), cache=cache, outputs=["G"])
    assert numeric_arm.routines == ("gravity",)
    with pytest.warns(rd.BuildNote, match="inverse_dynamics was not compiled"):
        tau = numeric_arm.inverse_dynamics(q[0], qd[0], qd[0], params=np.ones(8))
    assert_close(tau, numeric.inverse_dynamics(load_quiet("two_link_payload"), q[0], qd[0], qd[0],
                                                params=dict(zip(numeric_arm.parameters, np.ones(8), strict=True))),
                 1e-13)


@compiler
def test_second_compile_comes_from_the_cache(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    robot = load_quiet("two_link_fu")
    first = rd.compile(robot, cache=cache)
    assert first.path is not None and first.path.exists()
    assert sorted(p.name for p in first.path.parent.iterdir()) == ["spec.json", "two_link_fu.c", "two_link_fu.h",
                                                                   "two_link_fu.so"]

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled again")

    monkeypatch.setattr(subprocess, "run", refuse)
    monkeypatch.setattr(compile_module, "module_spec", refuse)
    again = rd.compile(robot, cache=cache)
    assert again.path == first.path and again.parameters == first.parameters
    q, qd, qdd = states(2, 3)
    params = {"l": 1.0, "m1": 1.0, "m2": 2.0, "g": 9.81}
    params = {name: params.get(name, 1.5) for name in first.parameters}
    assert np.array_equal(again.inverse_dynamics(q, qd, qdd, params=params),
                          first.inverse_dynamics(q, qd, qdd, params=params))
    changed = robot.replace(gravity=(0, 0, -1))
    monkeypatch.undo()
    assert rd.compile(changed, cache=cache).path != first.path  # another model, another entry


CONCURRENT = """
import sys, warnings
import numpy as np
import robodyn as rd
warnings.simplefilter("ignore")
dyn = rd.compile(rd.load("double_pendulum"), cache=sys.argv[1], outputs=["tau", "G"])
print(repr(float(np.sum(dyn.gravity([0.3, -0.2], params=[1, 0.5, 9.81, 2, 1])))))
"""


@compiler
def test_concurrent_compiles_share_one_cache_entry(tmp_path: Path) -> None:
    """Three processes and four threads compile the same model into an empty cache at once."""
    fingerprint = cache_module._source_fingerprint()
    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT, str(tmp_path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    robot = load_quiet("double_pendulum")
    with ThreadPoolExecutor(4) as pool:
        threads = list(pool.map(lambda _: rd.compile(robot, cache=tmp_path, outputs=["tau", "G"]), range(4)))
    results = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in results]
    params = [1, 0.5, 9.81, 2, 1]
    expected = float(np.sum(numeric.gravity(robot, [0.3, -0.2], params=dict(zip(DP, params, strict=True)))))
    assert all(abs(float(out) - expected) < 1e-12 * max(abs(expected), 1) for out, _ in results)
    assert all(abs(float(np.sum(d.gravity([0.3, -0.2], params=params))) - expected) < 1e-12 * max(abs(expected), 1)
               for d in threads)
    entries = list(tmp_path.iterdir())
    assert all(e.is_dir() and not e.name.startswith(".") for e in entries), entries  # no temporary left behind
    for entry in entries:
        names = sorted(p.name for p in entry.iterdir())
        assert names == ["double_pendulum.c", "double_pendulum.h", "double_pendulum.so", "spec.json"]
    if cache_module._source_fingerprint() == fingerprint:  # (robodyn's source was not edited meanwhile)
        assert len(entries) == 1, entries


def test_missing_compiler_names_the_numpy_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compile_module, "find_compiler", lambda: None)
    with pytest.raises(CompileError, match=r"no C compiler.*backend='numpy'"):
        rd.compile(load_quiet("two_link_fu"), cache=tmp_path)


def test_find_compiler_respects_cc(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CC", raising=False)
    assert find_compiler() is None
    monkeypatch.setenv("CC", f"{sys.executable} -q")
    assert find_compiler() == [sys.executable, "-q"]


def test_cc_that_is_not_found_is_an_error_not_a_fallback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """$CC, when set, is the only compiler tried (with its options): one not found is a CompileError
    that names $CC and the NumPy fallback, even where cc and gcc exist."""
    monkeypatch.setenv("CC", "no-such-compiler-xyz -O1 -g")
    with pytest.raises(CompileError, match=r"\$CC='no-such-compiler-xyz -O1 -g'.*not found.*backend='numpy'"):
        find_compiler()
    with pytest.raises(CompileError, match=r"\$CC.*backend='numpy'"):
        rd.compile(load_quiet("two_link_fu"), cache=tmp_path)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.delenv("CC")
    unset = find_compiler()
    monkeypatch.setenv("CC", "  ")  # blank: as if unset
    assert find_compiler() == unset
    monkeypatch.setenv("CC", "'unbalanced")
    with pytest.raises(CompileError, match="not a command line"):
        find_compiler()


@compiler
def test_cc_options_reach_the_compiler(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """$CC's options are passed on (and are part of the cache key)."""
    cc = find_compiler()
    assert cc is not None
    log = tmp_path / "log"
    wrapper = tmp_path / "mycc"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {cc[0]} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("CC", f"{wrapper} -DROBODYN_TEST_FLAG=1")
    dyn = rd.compile(load_quiet("two_link_fu"), cache=tmp_path / "cache", outputs=["G"])
    assert "-DROBODYN_TEST_FLAG=1" in log.read_text() and "-O3" in log.read_text()
    monkeypatch.setenv("CC", f"{wrapper} -DROBODYN_TEST_FLAG=2")
    assert rd.compile(load_quiet("two_link_fu"), cache=tmp_path / "cache", outputs=["G"]).path != dyn.path


def test_failing_compiler_is_a_compile_error_naming_the_fallback(tmp_path: Path) -> None:
    with pytest.raises(CompileError, match=r"failed.*backend='numpy'"):
        rd.compile(load_quiet("two_link_fu"), cache=tmp_path, compiler=["false"])
    assert list(tmp_path.iterdir()) == []


@compiler
def test_march_native_is_keyed_by_the_host_and_dropped_if_refused(monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    """-march=native (where used) puts the host's processor into the cache key; a compiler that refuses
    it or -mprefer-vector-width compiles without both."""
    if not compile_module.native_flags():
        pytest.skip("no -march=native on this platform")
    cc = find_compiler()
    assert cc is not None
    picky = tmp_path / "picky-cc"
    picky.write_text('#!/bin/sh\nfor a in "$@"; do case "$a" in -march=native|-mprefer-vector-width=*) exit 1;; '
                     'esac; done\n'
                     f'exec {cc[0]} "$@"\n')
    picky.chmod(0o755)
    robot = load_quiet("two_link_fu")
    dyn = rd.compile(robot, cache=tmp_path / "cache", compiler=[str(picky)], outputs=["G"])
    params = {name: 1.0 for name in dyn.parameters}
    assert np.allclose(dyn.gravity([0.3, 0.2], params=params), numeric.gravity(robot, [0.3, 0.2], params=params))
    monkeypatch.setattr(cache_module, "host_fingerprint", lambda: "another-processor")
    other = rd.compile(robot, cache=tmp_path / "cache", compiler=[str(picky)], outputs=["G"])
    assert other.path != dyn.path


def test_numpy_backend_needs_no_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compile_module, "find_compiler", lambda: None)
    robot = load_quiet("double_pendulum")
    dyn = rd.compile(robot, backend="numpy")
    assert dyn.backend == "numpy" and dyn.path is None
    q, qd, qdd = states(2, 4)
    tau = dyn.inverse_dynamics(q, qd, qdd, params=DP)
    expected = numeric.inverse_dynamics(robot, q, qd, qdd, params=DP)
    assert_close(tau, expected, 1e-13, scale=max(1.0, np.max(np.abs(expected))))
    assert np.allclose(dyn.forward_dynamics(q, qd, tau, params=DP), qdd, rtol=1e-10, atol=1e-10)
    assert dyn.mass_matrix(q[0], params=DP).shape == (2, 2)
    with pytest.raises(ValueError, match="backend"):
        rd.compile(robot, backend="rust")
    with pytest.raises(ValueError, match="unknown output"):
        rd.compile(robot, outputs=["tau", "x"])


def test_the_methods_are_the_kinds_of_the_vocabulary() -> None:
    """CompiledDynamics has one method per kind of robodyn.codegen.spec.KINDS, taking the kind's joint arrays; a
    class that drifts from the vocabulary is refused when it is made."""
    from robodyn.codegen.spec import KINDS
    from robodyn.runtime import compiled

    for kind in KINDS:
        method = getattr(compiled.CompiledDynamics, kind.name)
        assert method.routine == kind.name
    compiled._check_methods(compiled.CompiledDynamics)

    class Missing(compiled.CompiledDynamics):
        pass

    Missing.gravity = compiled._routine(lambda self, q, qd: None)  # type: ignore[method-assign]
    Missing.gravity.__name__ = "gravity"
    with pytest.raises(TypeError, match=r"Missing's routine methods .* are not the kinds"):
        compiled._check_methods(Missing)


def test_the_backends_are_records() -> None:
    """BACKENDS is the records' names; each record says how its entry is generated, built and loaded."""
    from robodyn.runtime import backends

    assert backends.BACKENDS == ("c", "numpy", "jax", "cuda")
    assert tuple(backends.RECORDS) == (*backends.BACKENDS, "cuda-fp32")  # (precision="fp32" of backend="cuda")
    assert [b.compiled for b in backends.RECORDS.values()] == [True, False, False, False, False]
    assert backends.RECORDS["c"].files("arm") == ["arm.c", "arm.h", "arm.so"]
    assert backends.RECORDS["jax"].files("arm") == ["arm_jax.py"]
    with pytest.raises(AttributeError):
        backends.RECORDS["c"].name = "fortran"  # type: ignore[misc]  # frozen


def test_the_jax_backend_is_jitted(tmp_path: Path) -> None:
    """Each routine of rd.compile(robot, backend="jax") is wrapped in jax.jit once, at load (checked by its kind,
    not by timing); NumPy in, NumPy out, in float64 under jax_enable_x64, as the NumPy backend's numbers."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    robot = load_quiet("double_pendulum")
    dyn = rd.compile(robot, backend="jax", cache=tmp_path)
    functions = dyn._call.functions  # type: ignore[attr-defined]
    assert sorted(functions) == sorted(["constants", *dyn.routines])
    for name, f in functions.items():
        assert hasattr(f, "lower") and hasattr(f, "trace"), name  # a jax.jit-wrapped function
        assert type(f).__name__ != "function", name
    q, qd, qdd = states(2, 4)
    tau = dyn.inverse_dynamics(q, qd, qdd, params=DP)
    assert type(tau) is np.ndarray and tau.dtype == np.float64 and tau.shape == (4, 2)
    single = dyn.inverse_dynamics(q[0], qd[0], qdd[0], params=DP)
    assert type(single) is np.ndarray and single.shape == (2,)
    expected = numeric.inverse_dynamics(robot, q, qd, qdd, params=DP)
    assert_close(tau, expected, 1e-13, scale=max(1.0, np.max(np.abs(expected))))
    assert dyn._call.functions["inverse_dynamics"] is functions["inverse_dynamics"]  # type: ignore[attr-defined]
    out = np.empty((4, 2))
    assert dyn.inverse_dynamics(q, qd, qdd, params=DP, out=out) is out and np.array_equal(out, tau)

"""One state from Python: compiled routines called without ctypes (robodyn._fastcall), and the numeric engine's
hot path (its one-state calls handed to those routines once they are many: robodyn.numeric.hotpath).

The suite runs with ``$ROBODYN_HOT_CALLS=0`` (tests/conftest.py: no background compiles); the hot-path tests
here set it on robots of their own."""

from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.numeric import hotpath
from tests.conftest import load_quiet, random_tree
from tests.helpers import assert_close, has_c_compiler
from tests.runtime.test_compile import DP, compiler, states

compiled_module = importlib.import_module("robodyn.runtime.compiled")
fastcall = pytest.mark.skipif(compiled_module.Caller is None, reason="robodyn._fastcall was not built")

#: The numeric functions the hot path takes over, with the joint arrays each reads.
FUNCTIONS = {"inverse_dynamics": 3, "mass_matrix": 1, "coriolis": 2, "gravity": 1, "bias_forces": 2,
             "forward_dynamics": 3}


def coulomb_tree() -> rd.Manipulator:
    """A 4-joint tree (branches, placements, damping, armature, tip load) with Coulomb friction on every joint:
    a new object at each call, so a new compiled model and hot path."""
    robot = random_tree(3, 4, "standard")
    return robot.replace(links=tuple(link.replace(coulomb=[0.4, -0.25]) for link in robot.links))


def test_fastcall_is_built_where_python_has_its_headers() -> None:
    """The extension is optional (the install goes on without it), so a missing one must not go unseen where it
    can be built: with Python.h and a C compiler, it was."""
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists() or not has_c_compiler():
        pytest.skip("no Python.h or no C compiler: robodyn._fastcall cannot be built here")
    module = importlib.import_module("robodyn._fastcall")
    assert compiled_module.Caller is module.Caller


@pytest.fixture(scope="module")
def tree_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A compile cache for both ways of the next test: the second loads the library the first built (the one-state
    callers are made when a library is loaded, not built)."""
    return tmp_path_factory.mktemp("one-state-cache")


@compiler
@pytest.mark.parametrize("way", ["fastcall", "ctypes"])
def test_one_state_is_the_batch_row_from_any_float_arrays(way: str, monkeypatch: pytest.MonkeyPatch,
                                                          tree_cache: Path) -> None:
    """one_state and the methods on one state give the batch's row bit for bit, through the extension and
    through ctypes (without it), from float64 rows, lists, strided views and float32 (converted); a new
    array each call; a wrong length is a ValueError."""
    if way == "ctypes":
        monkeypatch.setattr(compiled_module, "Caller", None)  # as where the extension was not built
    elif compiled_module.Caller is None:
        pytest.skip("robodyn._fastcall was not built")
    robot = coulomb_tree()
    dyn = rd.compile(robot, cache=tree_cache)
    q, qd, qdd = states(4, 3)
    tau, M = dyn.inverse_dynamics(q, qd, qdd), dyn.mass_matrix(q)
    inverse, mass = dyn.one_state("inverse_dynamics"), dyn.one_state("mass_matrix")
    for i in range(3):
        assert np.array_equal(inverse(q[i], qd[i], qdd[i]), tau[i])
        assert np.array_equal(dyn.inverse_dynamics(q[i], qd[i], qdd[i]), tau[i])
        assert np.array_equal(mass(q[i]), M[i]) and np.array_equal(dyn.mass_matrix(q[i]), M[i])
    strided = np.asfortranarray(q)[1]
    assert not strided.flags.c_contiguous
    assert np.array_equal(inverse(strided, qd[1].tolist(), qdd[1]), tau[1])
    assert np.array_equal(dyn.inverse_dynamics(strided, qd[1].tolist(), qdd[1]), tau[1])
    single = q[2].astype(np.float32)
    assert np.array_equal(mass(single), dyn.mass_matrix(single.astype(float)))
    first = inverse(q[0], qd[0], qdd[0])
    inverse(q[1], qd[1], qdd[1])
    assert np.array_equal(first, tau[0])  # not overwritten by the next call
    with pytest.raises(ValueError, match="shape"):
        inverse(np.zeros(3), qd[0], qdd[0])
    with pytest.raises(ValueError, match=r"must have shape \(4,\) or \(N, 4\)"):
        dyn.inverse_dynamics(np.zeros(3), qd[0], qdd[0])


@fastcall
@compiler
def test_fastcall_refuses_what_is_not_one_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Wrong counts and shapes are one-line errors; a batch handed to a method is refused as it is, never
    converted first (the method's batch path converts it)."""
    converted: list[object] = []

    def spy(x: object) -> np.ndarray:
        converted.append(x)
        return np.ascontiguousarray(x, dtype=np.float64)

    monkeypatch.setattr(compiled_module, "_float_array", spy)
    robot = coulomb_tree()
    dyn = rd.compile(robot, cache=tmp_path, outputs=["tau"])
    batch = np.asfortranarray(states(4, 6)[0]).astype(np.float32)
    assert np.array_equal(dyn.inverse_dynamics(batch, batch, batch)[2], dyn.inverse_dynamics(*(batch[2],) * 3))
    assert [np.shape(x) for x in converted] == [(4,)] * 3  # the one-state call's rows only
    inverse = dyn.one_state("inverse_dynamics")
    q = np.zeros(4)
    with pytest.raises(TypeError, match="takes 3 joint arrays, got 2"):
        inverse(q, q)
    with pytest.raises(ValueError, match=r"one state of '.*' takes arrays of shape \(4,\)"):
        inverse(np.zeros((2, 4)), q, q)
    with pytest.raises(ValueError, match="could not convert"):
        inverse(["a"] * 4, q, q)
    assert "one-state call" in repr(inverse)


@fastcall
@compiler
def test_a_floating_base_s_one_call_takes_the_extension(tmp_path: Path) -> None:
    """A floating base (q of nq = n + 7, the others of nv = n + 6): one state goes through robodyn._fastcall (each
    array checked against its own length) and gives the batch's row bit for bit; lists are converted; q of nv, or
    v of nq, is a one-line error."""
    from robodyn.model import joints

    robot = random_tree(3, 4, "standard", extras=False).replace(floating=True)
    dyn = rd.compile(robot, cache=tmp_path, outputs=["tau", "forward"])
    nq, nv = dyn.nq, dyn.n
    assert (nq, nv) == (11, 10)
    rng = np.random.default_rng(5)
    q = np.stack([np.concatenate([joints.random_configuration(rng), rng.uniform(-1, 1, 4)]) for _ in range(3)])
    v, a = rng.uniform(-1, 1, (2, 3, nv))
    tau, qdd = dyn.inverse_dynamics(q, v, a), dyn.forward_dynamics(q, v, a)
    inverse, forward = dyn.one_state("inverse_dynamics"), dyn.one_state("forward_dynamics")
    assert isinstance(inverse, compiled_module.Caller) and isinstance(forward, compiled_module.Caller)
    for i in range(3):
        assert np.array_equal(inverse(q[i], v[i], a[i]), tau[i]) and np.array_equal(forward(q[i], v[i], a[i]), qdd[i])
        assert np.array_equal(dyn.inverse_dynamics(q[i], v[i], a[i]), tau[i])
        assert np.array_equal(dyn.forward_dynamics(q[i], v[i], a[i]), qdd[i])
    assert isinstance(dyn._fast["inverse_dynamics"], compiled_module.Caller)  # the methods' one state: the extension
    assert np.array_equal(inverse(q[1].tolist(), v[1], a[1].tolist()), tau[1])
    with pytest.raises(ValueError, match=r"takes arrays of shape \(11,\) as argument 1"):
        inverse(q[0][:nv], v[0], a[0])
    with pytest.raises(ValueError, match=r"takes arrays of shape \(10,\) as argument 2"):
        inverse(q[0], q[0], a[0])
    with pytest.raises(ValueError, match=r"q of 'tree3' must have shape \(11,\) or \(N, 11\)"):
        dyn.inverse_dynamics(q[0][:nv], v[0], a[0])


@fastcall
@compiler
def test_hot_path_hands_one_state_calls_to_the_compiled_routines(monkeypatch: pytest.MonkeyPatch) -> None:
    """After $ROBODYN_HOT_CALLS one-state calls, the six one-state functions (and the toolbox aliases over them)
    answer from the compiled C, to rounding of the float path; batches and calls with fext stay on NumPy."""
    reference = coulomb_tree()  # made under the suite's $ROBODYN_HOT_CALLS=0: floats throughout
    q, qd, qdd = states(4, 5, seed=3)
    args = {3: (q, qd, qdd), 2: (q, qd), 1: (q,)}
    expected = {f: [getattr(numeric, f)(reference, *(a[i] for a in args[k])) for i in range(5)]
                for f, k in FUNCTIONS.items()}
    monkeypatch.setenv(hotpath.HOT_CALLS_ENV, "3")
    robot = coulomb_tree()
    hot = numeric.hot_path(robot)
    assert hot.routines is None and hot.limit == 3
    for i in range(3):
        assert np.array_equal(numeric.gravity(robot, q[i]), expected["gravity"][i])  # over floats: the same
    assert hot.wait(timeout=300), hot.failure
    assert repr(hot) == "<HotPath compiled>"
    copied = pickle.loads(pickle.dumps(numeric.compile_model(robot)))  # a model pickles; its copy starts afresh
    assert copied.hot.routines is None and copied.hot.calls == 0
    assert np.array_equal(numeric.gravity(copied, q[0]), expected["gravity"][0])
    for f, k in FUNCTIONS.items():
        for i in range(5):
            got = getattr(numeric, f)(robot, *(a[i] for a in args[k]))
            assert got.shape == expected[f][i].shape
            assert_close(got, expected[f][i], 1e-12, scale=max(1.0, float(np.max(np.abs(expected[f][i])))))
    assert_close(rd.toolbox.rne(robot, q[0], qd[0], qdd[0]), expected["inverse_dynamics"][0], 1e-12,
                 scale=float(np.max(np.abs(expected["inverse_dynamics"][0]))))
    assert np.array_equal(numeric.inverse_dynamics(robot, q, qd, qdd), numeric.inverse_dynamics(reference, q, qd, qdd))
    w = np.array([1.0, -2.0, 0.5, 0.1, 0.2, -0.3])
    assert np.array_equal(numeric.inverse_dynamics(robot, q[0], qd[0], qdd[0], fext=w),
                          numeric.inverse_dynamics(reference, q[0], qd[0], qdd[0], fext=w))


@fastcall
@compiler
def test_hot_path_binds_parameters_and_keeps_the_singular_mass_matrix_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A robot with symbolic parameters: compiled once, its constants made from the call's params; a singular M
    (a massless distal link) is computed again over floats, which raise LinAlgError as before the switch."""
    monkeypatch.setenv(hotpath.HOT_CALLS_ENV, "2")
    robot = load_quiet("double_pendulum")
    q, qd, tau = states(2, 2, seed=5)
    floats = numeric.forward_dynamics(robot, q[0], qd[0], tau[0], params=DP)
    numeric.forward_dynamics(robot, q[1], qd[1], tau[1], params=DP)
    assert numeric.hot_path(robot, params=DP).wait(timeout=300)
    assert_close(numeric.forward_dynamics(robot, q[0], qd[0], tau[0], params=DP), floats, 1e-12,
                 scale=float(np.max(np.abs(floats))))
    massless = {**DP, "m2": 0.0}
    for i in range(2):
        with pytest.raises(np.linalg.LinAlgError):
            numeric.forward_dynamics(robot, q[i], qd[i], tau[i], params=massless)
    hot = numeric.hot_path(robot, params=massless)
    assert hot.wait(timeout=300)
    with pytest.raises(np.linalg.LinAlgError):
        numeric.forward_dynamics(robot, q[0], qd[0], tau[0], params=massless)


def test_hot_path_stays_on_floats_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls given a compiled NumericModel are not counted (there is no robot to compile); with a builder that
    fails (robodyn.runtime not importable, a $CC that is not there), the calls go on over floats, and ``failure``
    says why. A bad $ROBODYN_HOT_CALLS is one ValueError."""
    monkeypatch.setenv(hotpath.HOT_CALLS_ENV, "2")
    q = np.full(4, 0.3)
    robot = coulomb_tree()
    model = numeric.compile_model(robot)
    expected = numeric.gravity(model, q)
    for _ in range(3):
        assert np.array_equal(numeric.gravity(model, q), expected)
    assert model.hot.calls == 0 and model.hot.failure is None and model.hot is numeric.hot_path(robot)

    def no_runtime(robot: rd.Manipulator, params: object) -> dict[str, object]:
        raise ImportError("no module named 'robodyn.runtime'")

    robot = coulomb_tree()
    hotpath.register(no_runtime)  # (the test hook: as if the build could not import robodyn.runtime)
    try:
        for _ in range(3):
            assert np.array_equal(numeric.gravity(robot, q), expected)
        hot = numeric.hot_path(robot)
        assert not hot.wait(timeout=300)
        assert hot.failure == "ImportError: no module named 'robodyn.runtime'"
        assert np.array_equal(numeric.gravity(robot, q), expected)
    finally:
        hotpath.register(None)
    monkeypatch.undo()

    monkeypatch.setenv(hotpath.HOT_CALLS_ENV, "2")
    monkeypatch.setenv("CC", "/nonexistent/cc")
    robot = coulomb_tree()
    for _ in range(3):
        assert np.array_equal(numeric.gravity(robot, q), expected)
    hot = numeric.hot_path(robot)
    assert not hot.wait(timeout=300)
    assert hot.failure is not None and hot.failure.startswith("CompileError: ")
    assert "$CC" in hot.failure or compiled_module.Caller is None  # (without the extension: it says so first)
    assert np.array_equal(numeric.gravity(robot, q), expected)

    monkeypatch.setenv(hotpath.HOT_CALLS_ENV, "often")
    with pytest.raises(ValueError, match=r"\$ROBODYN_HOT_CALLS='often' is not a number of calls"):
        numeric.hot_path(coulomb_tree())


#: A plain process: robodyn and its numeric engine only (nothing imports robodyn.runtime first); the hot path must
#: still switch, by importing the runtime itself when its build starts.
PLAIN_PROCESS = """
import sys
import numpy as np
import robodyn as rd
from robodyn import numeric

assert "robodyn.runtime" not in sys.modules, "robodyn.runtime was imported by the face"
robot = rd.load("puma560")
rng = np.random.default_rng(7)
states = [tuple(rng.uniform(-1, 1, robot.n) for _ in range(3)) for _ in range(20)]
floats = [numeric.inverse_dynamics(numeric.compile_model(robot), *s) for s in states]  # (a model: not counted)
hot = numeric.hot_path(robot)
before = repr(hot)
for i in range(1500):
    numeric.inverse_dynamics(robot, *states[i % len(states)])
assert hot.wait(timeout=500), hot.failure
compiled = [numeric.inverse_dynamics(robot, *s) for s in states]
worst = max(float(np.max(np.abs(c - f)) / max(1.0, float(np.max(np.abs(f))))) for c, f in zip(compiled, floats))
print(before, "|", repr(hot), "|", repr(worst), "|", "robodyn.runtime" in sys.modules)
"""


@fastcall
@compiler
def test_hot_path_switches_in_a_plain_process(tmp_path: Path) -> None:
    """In a fresh process that imports nothing but robodyn and robodyn.numeric, 1500 one-state calls with
    $ROBODYN_HOT_CALLS=50 switch to the compiled routines (the build imports robodyn.runtime itself), which agree
    with the float path to 1e-12 relative."""
    env = {**os.environ, hotpath.HOT_CALLS_ENV: "50", "ROBODYN_CACHE": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, "-c", PLAIN_PROCESS], capture_output=True, text=True, env=env,
                            timeout=600, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    before, after, worst, imported = (part.strip() for part in result.stdout.strip().splitlines()[-1].split("|"))
    assert before == "<HotPath on floats, 0 of 50 calls>"
    assert after == "<HotPath compiled>" and imported == "True"
    assert float(worst) <= 1e-12, worst

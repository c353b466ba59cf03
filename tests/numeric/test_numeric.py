"""robodyn.numeric against the symbolic Equations (Newton-Euler and Lagrange-Euler), and against itself."""

from __future__ import annotations

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn import numeric
from robodyn.analysis.check import FLOOR, NumericSampler, evaluate, relative_difference
from robodyn.numeric import crba, rnea
from tests.conftest import load_quiet, random_params, random_robot, without_loops
from tests.helpers import assert_close

RTOL = 1e-10
SAMPLES = 12
PARTS = ("tau", "M", "h", "G", "damping", "load")


def _states(robot: rd.Manipulator, samples: int = SAMPLES, seed: int = 0) -> tuple[np.ndarray, dict[str, float]]:
    """Sampler points with one random positive binding of the parameters shared by every row."""
    sampler = NumericSampler(robot, samples, seed)
    points = sampler.points()
    params = random_params(robot, np.random.default_rng(seed + 1), 0.5, 1.5)  # physical inertia
    points[:, 3 * robot.n :] = list(params.values())
    return points, params


def _numeric_parts(robot: rd.Manipulator, points: np.ndarray, params: dict[str, float]) -> dict[str, np.ndarray]:
    n = robot.n
    q, qd, qdd = points[:, :n], points[:, n : 2 * n], points[:, 2 * n : 3 * n]
    return {
        "tau": numeric.inverse_dynamics(robot, q, qd, qdd, params=params),
        "M": numeric.mass_matrix(robot, q, params=params).reshape(len(q), n * n),
        "h": numeric.coriolis(robot, q, qd, params=params),
        "G": numeric.gravity(robot, q, params=params),
        "damping": numeric.friction(robot, qd, params=params),
        "load": numeric.tip_load(robot, q, params=params),
    }


def assert_agrees(robot: rd.Manipulator, method: str, samples: int = SAMPLES, seed: int = 0) -> None:
    eqs = rd.derive(robot, method)
    points, params = _states(robot, samples, seed)
    symbols = NumericSampler(robot).symbols()
    expected = {part: evaluate(eqs.raw(part), symbols, points) for part in PARTS}
    got = _numeric_parts(robot, points, params)
    floor = FLOOR * max(float(np.max(np.abs(v), initial=0.0)) for v in expected.values())
    for part in PARTS:
        rel = relative_difference(got[part], expected[part], floor)
        assert rel <= RTOL, f"{robot.name} {method} {part}: relative difference {rel:.3g}"
    n = robot.n
    bias = numeric.bias_forces(robot, points[:, :n], points[:, n : 2 * n], params=params)
    rest = expected["h"] + expected["G"] + expected["damping"] + expected["load"]
    assert relative_difference(bias, rest, floor) <= RTOL


@pytest.mark.parametrize("method", ["ne", "le", "gd", "kane"])
@pytest.mark.parametrize("name", without_loops(rd.library.names()))
def test_library_robots_agree_with_symbolic_equations(name: str, method: str) -> None:
    assert_agrees(load_quiet(name), method)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 5),
    convention=st.sampled_from(["standard", "modified"]),
    right_angled=st.booleans(),
)
def test_random_robots_agree_with_newton_euler(seed: int, n: int, convention: str, right_angled: bool) -> None:
    assert_agrees(random_robot(seed, n, convention, right_angled=right_angled), "ne", samples=6)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 4), convention=st.sampled_from(["standard", "modified"]))
def test_random_robots_agree_with_lagrange_euler(seed: int, n: int, convention: str) -> None:
    assert_agrees(random_robot(seed, n, convention), "le", samples=6)


def _random_state(n: int, N: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (N, n)), rng.uniform(-2, 2, (N, n)), rng.uniform(-5, 5, (N, n))


@pytest.mark.parametrize("name", ["puma560", "stanford_arm", "industrial_6r"])
def test_batch_equals_single_states(name: str) -> None:
    robot = load_quiet(name)
    q, qd, qdd = _random_state(robot.n, 7)
    batch = {
        "tau": numeric.inverse_dynamics(robot, q, qd, qdd),
        "M": numeric.mass_matrix(robot, q),
        "bias": numeric.bias_forces(robot, q, qd),
        "G": numeric.gravity(robot, q),
        "qdd": numeric.forward_dynamics(robot, q, qd, qdd),
    }
    assert batch["tau"].shape == (7, robot.n) and batch["M"].shape == (7, robot.n, robot.n)
    for k in range(len(q)):
        single = {
            "tau": numeric.inverse_dynamics(robot, q[k], qd[k], qdd[k]),
            "M": numeric.mass_matrix(robot, q[k]),
            "bias": numeric.bias_forces(robot, q[k], qd[k]),
            "G": numeric.gravity(robot, q[k]),
            "qdd": numeric.forward_dynamics(robot, q[k], qd[k], qdd[k]),
        }
        for key, value in single.items():
            assert value.shape == batch[key].shape[1:]
            # the floor scales with the part over the batch (tau of an industrial arm runs to thousands)
            assert_close(value, batch[key][k], 1e-12, scale=max(1.0, np.max(np.abs(batch[key]))), err_msg=key)


def test_single_state_broadcasts_against_a_batch() -> None:
    robot = load_quiet("puma560")
    q, qd, qdd = _random_state(robot.n, 5)
    tau = numeric.inverse_dynamics(robot, q[0], qd, qdd)
    assert_close(tau, numeric.inverse_dynamics(robot, np.tile(q[0], (5, 1)), qd, qdd), 1e-13)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 7), convention=st.sampled_from(["standard", "modified"]))
def test_forward_dynamics_inverts_inverse_dynamics(seed: int, n: int, convention: str) -> None:
    robot = random_robot(seed, n, convention)
    q, qd, qdd = _random_state(n, 20, seed)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    np.testing.assert_allclose(numeric.forward_dynamics(robot, q, qd, tau), qdd, rtol=1e-8, atol=1e-8)
    M = numeric.mass_matrix(robot, q)
    bias = numeric.bias_forces(robot, q, qd)
    assert_close(np.einsum("nij,nj->ni", M, qdd) + bias, tau, 1e-10, scale=max(1.0, np.max(np.abs(tau))))
    np.testing.assert_allclose(M, M.transpose(0, 2, 1), atol=1e-12 * max(1.0, np.max(np.abs(M))))
    assert np.all(np.linalg.eigvalsh(M) > 0)


def test_forward_dynamics_on_library_robots() -> None:
    for name in ("puma560", "stanford_arm", "industrial_6r"):
        robot = load_quiet(name)
        q, qd, qdd = _random_state(robot.n, 50)
        tau = numeric.inverse_dynamics(robot, q, qd, qdd)
        np.testing.assert_allclose(numeric.forward_dynamics(robot, q, qd, tau), qdd, rtol=1e-9, atol=1e-9)


def test_cholesky_solve_matches_numpy() -> None:
    rng = np.random.default_rng(3)
    A = rng.normal(size=(10, 5, 5))
    M = A @ A.transpose(0, 2, 1) + 5 * np.eye(5)
    b = rng.normal(size=(10, 5))
    assert_close(numeric.cholesky_solve(M, b), np.linalg.solve(M, b[..., None])[..., 0], 1e-12)


def test_unbound_symbols_are_named() -> None:
    robot = load_quiet("double_pendulum")
    with pytest.raises(rd.ModelError) as info:
        numeric.inverse_dynamics(robot, [0.1, 0.2], [0, 0], [0, 0])
    for name in ("L1", "L2", "g", "m1", "m2"):
        assert name in str(info.value)
    with pytest.raises(rd.ModelError, match="m2") as info:
        numeric.gravity(robot, [0.1, 0.2], params={"L1": 1, "L2": 1, "g": 9.81, "m1": 1})
    assert "L1" not in str(info.value).split("symbols")[1].split(";")[0]


def test_params_accept_strings_and_symbols() -> None:
    robot = load_quiet("double_pendulum")
    by_name = {"L1": 1.0, "L2": 0.5, "g": 9.81, "m1": 2.0, "m2": 1.0}
    by_symbol = {sympy.Symbol(k): v for k, v in by_name.items()}
    q = np.array([0.3, -0.4])
    np.testing.assert_array_equal(
        numeric.gravity(robot, q, params=by_name), numeric.gravity(robot, q, params=by_symbol)
    )
    substituted = robot.subs(by_name)
    assert_close(numeric.gravity(robot, q, params=by_name), numeric.gravity(substituted, q), 1e-14)


def test_compiled_model_is_cached_per_params() -> None:
    robot = load_quiet("two_link_fu")
    a = numeric.compile_model(robot, {"g": 9.81, "l": 1, "m1": 1, "m2": 2})
    b = numeric.compile_model(robot, {"m2": 2, "m1": 1, "l": 1.0, "g": 9.81})
    c = numeric.compile_model(robot, {"g": 9.81, "l": 1, "m1": 1, "m2": 3})
    assert a is b and a is not c
    assert numeric.compile_model(a) is a
    q = np.zeros(2)
    np.testing.assert_array_equal(numeric.gravity(a, q), numeric.gravity(robot, q, params={"g": 9.81, "l": 1,
                                                                                             "m1": 1, "m2": 2}))


def test_bad_shapes_are_rejected() -> None:
    robot = load_quiet("puma560")
    with pytest.raises(ValueError, match="shape"):
        numeric.inverse_dynamics(robot, np.zeros(5), np.zeros(5), np.zeros(5))
    with pytest.raises(ValueError, match="batch"):
        numeric.inverse_dynamics(robot, np.zeros((3, 6)), np.zeros((4, 6)), np.zeros(6))


def test_gravity_only_depends_on_gravity() -> None:
    """G(q) = tau at rest; a heavier gravity scales it linearly; no gravity, no G."""
    robot = random_robot(11, 4, "modified")
    q, _, _ = _random_state(4, 5)
    G = numeric.gravity(robot, q)
    doubled = robot.replace(gravity=[2 * float(x) for x in robot.gravity])
    assert_close(numeric.gravity(doubled, q), 2 * G, 1e-12)
    weightless = robot.replace(gravity=[0, 0, 0])
    np.testing.assert_allclose(numeric.gravity(weightless, q), 0, atol=1e-14)


def test_evaluation_modules_do_not_use_sympy() -> None:
    for module in (rnea, crba, numeric.api):
        assert "sympy" not in vars(module) and "symengine" not in vars(module) and "se" not in vars(module)


def test_blocked_batches_equal_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    robot = random_robot(7, 5, "standard")
    q, qd, qdd = _random_state(5, 23)
    whole = [numeric.inverse_dynamics(robot, q, qd, qdd), numeric.mass_matrix(robot, q),
             numeric.forward_dynamics(robot, q, qd, qdd), numeric.gravity(robot, q)]
    monkeypatch.setattr(numeric.api, "BLOCK", 4)
    blocked = [numeric.inverse_dynamics(robot, q, qd, qdd), numeric.mass_matrix(robot, q),
               numeric.forward_dynamics(robot, q, qd, qdd), numeric.gravity(robot, q)]
    for a, b in zip(whole, blocked, strict=True):
        assert a.shape == b.shape
        assert_close(a, b, 1e-13, scale=max(1.0, np.max(np.abs(b))))  # blocks of 4 and of 23: other BLAS calls


@pytest.mark.parametrize("name", ["puma560", "stanford_arm", "two_link_payload", "tree"])
def test_one_state_runs_the_scalar_kernels_and_matches_the_batch(name: str) -> None:
    """One state runs the traced recursion over Python floats (numeric.api's fast path): the same numbers as
    that state in a batch, to the last bits of libm's sines and cosines, for every function; a tree, prismatic
    joints, the tip load and bound parameters included."""
    from pathlib import Path

    tree = Path(__file__).parents[1] / "data" / "torso_two_arms.yaml"
    robot = rd.load(tree) if name == "tree" else load_quiet(name)
    params = {s.name: 1.0 + 0.1 * i for i, s in enumerate(robot.parameters())} or None
    rng = np.random.default_rng(8)
    q, qd, qdd = (rng.uniform(-2, 2, (3, robot.n)) for _ in range(3))
    calls = {
        "inverse_dynamics": (q, qd, qdd), "bias_forces": (q, qd), "coriolis": (q, qd), "gravity": (q,),
        "mass_matrix": (q,), "forward_dynamics": (q, qd, qdd),
    }
    for function, arrays in calls.items():
        batch = getattr(numeric, function)(robot, *arrays, params=params)
        for k in range(3):
            one = getattr(numeric, function)(robot, *(a[k] for a in arrays), params=params)
            assert one.shape == batch[k].shape
            np.testing.assert_allclose(one, batch[k], rtol=1e-13, atol=1e-13 * max(1.0, np.max(np.abs(batch[k]))))
        listed = getattr(numeric, function)(robot, *(a[0].tolist() for a in arrays), params=params)
        np.testing.assert_array_equal(listed, getattr(numeric, function)(robot, *(a[0] for a in arrays),
                                                                          params=params))

"""Kane's method (Angeles, Ma and Rojas 1989): symbolic, numeric batched, and operation counts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.analysis.check import NumericSampler, compare, evaluate
from robodyn.equations import Equations
from robodyn.numeric.kane import kane_inverse_dynamics
from robodyn.program.opcount import (
    EXPLANATION,
    comparison_table,
    count_general,
    format_table,
    formula,
    paper_formula,
)
from tests.conftest import load_quiet, random_robot

EXACT = ["double_pendulum", "two_link_fu", "two_link_payload", "stanford_modified"]
NUMERIC = ["puma560", "stanford_arm", "industrial_6r"]


def kane_equations(robot: rd.Manipulator) -> Equations:
    return rd.derive(robot, "kane")


def assert_agree(robot: rd.Manipulator, mode: str, samples: int = 30) -> None:
    results = compare(rd.derive(robot, "ne"), kane_equations(robot), mode=mode, samples=samples)
    assert all(c.agree for c in results), [(c.part, c.max_relative_difference) for c in results]
    if mode == "numeric":
        assert max(c.max_relative_difference for c in results) < 1e-10


@pytest.mark.parametrize("name", EXACT)
def test_symbolic_kane_equals_newton_euler_exactly(name):
    assert_agree(load_quiet(name), "exact")


def test_exact_with_tip_load_damping_armature_in_both_conventions():
    for convention in ("standard", "modified"):
        robot = rd.Manipulator.from_dh(
            [
                {
                    "joint": "R",
                    "a": "l1",
                    "alpha": "pi/2",
                    "d": "d1",
                    "mass": "m1",
                    "com": ["c1", 0, "e1"],
                    "inertia": ["I1x", "I1y", "I1z"],
                    "damping": "b1",
                    "armature": "J1",
                },
                {
                    "joint": "P",
                    "a": "l2",
                    "alpha": "-pi/2",
                    "d": "d2",
                    "theta": "pi/2",
                    "mass": "m2",
                    "com": [0, "c2", 0],
                    "inertia": ["I2x", "I2y", "I2z"],
                    "damping": "b2",
                },
            ],
            convention=convention,
            gravity=[0, "-g", 0],
            tip_force=["fx", "fy", "fz"],
            tip_moment=["nx", "ny", "nz"],
        )
        assert_agree(robot, "exact")


@pytest.mark.parametrize("name", NUMERIC)
def test_symbolic_kane_equals_newton_euler_numerically(name):
    assert_agree(load_quiet(name), "numeric")


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 7), convention=st.sampled_from(["standard", "modified"]))
def test_random_arms(seed, n, convention):
    assert_agree(random_robot(seed, n, convention), "numeric", samples=10)


@pytest.mark.parametrize("name", [*NUMERIC, "stanford_modified", "two_link_payload"])
def test_numeric_batch_equals_symbolic(name):
    robot = load_quiet(name)
    eqs = kane_equations(robot)
    sampler = NumericSampler(robot, samples=40, seed=3)
    symbols, points = sampler.symbols(), sampler.points()
    expected = evaluate(eqs.raw("tau"), symbols, points)
    n = robot.n
    params = {s.name: points[:, 3 * n + k] for k, s in enumerate(robot.parameters())}
    if params:  # one parameter set per call: the batch is over states
        got = np.array(
            [
                kane_inverse_dynamics(
                    robot, p[:n], p[n : 2 * n], p[2 * n : 3 * n], params={k: float(v[j]) for k, v in params.items()}
                )
                for j, p in enumerate(points)
            ]
        )
    else:
        got = kane_inverse_dynamics(robot, points[:, :n], points[:, n : 2 * n], points[:, 2 * n : 3 * n])
    assert got.shape == expected.shape
    assert np.max(np.abs(got - expected)) <= 1e-10 * np.max(np.abs(expected))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 7), convention=st.sampled_from(["standard", "modified"]))
def test_numeric_batch_random_arms(seed, n, convention):
    robot = random_robot(seed, n, convention)
    sampler = NumericSampler(robot, samples=20, seed=seed % 1000)
    points = sampler.points()
    expected = evaluate(kane_equations(robot).raw("tau"), sampler.symbols(), points)
    got = kane_inverse_dynamics(robot, points[:, :n], points[:, n : 2 * n], points[:, 2 * n : 3 * n])
    assert np.max(np.abs(got - expected)) <= 1e-10 * max(1.0, np.max(np.abs(expected)))


def test_numeric_shapes_and_errors():
    robot = load_quiet("puma560")
    q = np.zeros(6)
    assert kane_inverse_dynamics(robot, q, q, q).shape == (6,)
    assert kane_inverse_dynamics(robot, np.zeros((5, 6)), np.zeros((5, 6)), np.zeros((5, 6))).shape == (5, 6)
    with pytest.raises(ValueError):
        kane_inverse_dynamics(robot, np.zeros(5), np.zeros(5), np.zeros(5))
    with pytest.raises(rd.ModelError, match="m1"):
        kane_inverse_dynamics(load_quiet("two_link_fu"), np.zeros(2), np.zeros(2), np.zeros(2))


# -- operation counts -------------------------------------------------------------------------
@pytest.mark.parametrize("n", range(2, 13))
def test_operation_count_general_geometry(n):
    count = count_general(n)
    assert (count.multiplications, count.additions) == formula(n) == (105 * n - 110, 90 * n - 106)
    assert count.by_stage["stage 1"] == (0, 0)
    assert count.by_stage["stage 2"] == (50 * n - 50, 46 * n - 52)
    assert count.by_stage["stage 3"] == (55 * n - 60, 44 * n - 54)
    m, a = paper_formula(n)
    assert (m - count.multiplications, a - count.additions) == (1, 1)


@pytest.mark.parametrize("joints", ["RRP", "RRPRRR", "RRRRRP", "RRPPRR"])
def test_operation_count_prismatic(joints):
    count = count_general(len(joints), joints)
    assert (count.multiplications, count.additions) == formula(len(joints), joints.count("P"))


def test_operation_count_per_cycle_matches_paper_steps():
    """Each extra revolute link costs the paper's 50m + 46a (stage 2) and 55m + 44a (stage 3)."""
    c5, c6 = count_general(5), count_general(6)
    assert np.subtract(c6.by_stage["stage 2"], c5.by_stage["stage 2"]).tolist() == [50, 46]
    assert np.subtract(c6.by_stage["stage 3"], c5.by_stage["stage 3"]).tolist() == [55, 44]


def test_comparison_table():
    rows = comparison_table(load_quiet("puma560"))
    assert [(r.multiplications, r.additions) for r in rows[:7]] == [
        (2195, 1719),
        (852, 738),
        (800, 595),
        (688, 558),
        (646, 394),
        (538, 478),
        (521, 435),
    ]
    assert (rows[7].multiplications, rows[7].additions) == (520, 434)
    assert rows[8].multiplications < 520 and rows[8].additions < 434  # the PUMA's zeros and right angles
    text = format_table(rows)
    assert "Khalil" in text and "520" in text
    assert "105n - 110" in EXPLANATION

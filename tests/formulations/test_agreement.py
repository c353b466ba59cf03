"""Newton-Euler and Lagrange-Euler agree: exactly for symbolic arms, to 1e-10 on random states
for numeric ones, including random arms of 1..7 mixed R/P joints in both conventions."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.analysis.check import check, compare
from tests.conftest import load_quiet, random_robot


@pytest.mark.parametrize("name", ["double_pendulum", "two_link_fu", "two_link_payload", "stanford_modified"])
def test_exact_symbolic_agreement(name):
    result = check(rd.load(name), mode="exact")
    assert result.comparisons and all(c.mode == "exact" for c in result.comparisons)
    assert result.agree, result.comparisons


@pytest.mark.slow
def test_exact_agreement_puma560_symbolic():
    result = check(rd.load("puma560_symbolic"), ("newton-euler", "lagrange-euler"), mode="exact")
    assert result.agree


@pytest.mark.parametrize("name", ["puma560", "stanford_arm", "industrial_6r", "puma560_symbolic"])
def test_numeric_agreement(name):
    result = check(load_quiet(name), mode="numeric", samples=50, rtol=1e-10)
    assert result.agree, [(c.part, c.max_relative_difference) for c in result.comparisons]
    assert max(c.max_relative_difference for c in result.comparisons) < 1e-10


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 6), convention=st.sampled_from(["standard", "modified"]))
def test_random_arms_agree(seed, n, convention):
    """General twists and offsets (n <= 6 here: the 7-joint general case is in test_seven_joint_general_arm)."""
    robot = random_robot(seed, n, convention)
    ne, le = rd.derive(robot, "ne"), rd.derive(robot, "le")
    for c in compare(ne, le, mode="numeric", samples=10):
        assert c.max_relative_difference < 1e-10, (c.part, c.max_relative_difference)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 7), convention=st.sampled_from(["standard", "modified"]))
def test_random_right_angled_arms_agree(seed, n, convention):
    """Twists that are multiples of pi/2 take Lagrange-Euler's early-simplification path."""
    robot = random_robot(seed, n, convention, right_angled=True)
    ne, le = rd.derive(robot, "ne"), rd.derive(robot, "le")
    for c in compare(ne, le, mode="numeric", samples=10):
        assert c.max_relative_difference < 1e-10, (c.part, c.max_relative_difference)


def test_seven_joint_general_arm():
    """One 7-joint arm of general geometry (the top of the 1..7 range), mixed R/P, both conventions."""
    for convention in ("standard", "modified"):
        robot = random_robot(11, 7, convention)
        ne, le = rd.derive(robot, "ne"), rd.derive(robot, "le")
        for c in compare(ne, le, mode="numeric", samples=5):
            assert c.max_relative_difference < 1e-10, (convention, c.part, c.max_relative_difference)


def test_check_reports_disagreement():
    """The check is not vacuous: a different arm under the same name disagrees."""
    robot = rd.load("two_link_fu")
    other = robot.subs({"m2": 2 * rd.load("two_link_fu").parameters()[-1]})
    results = compare(rd.derive(robot, "ne"), rd.derive(other, "le"), mode="exact")
    assert not all(c.agree for c in results)
    numeric = compare(rd.derive(robot, "ne"), rd.derive(other, "le"), mode="numeric")
    assert not all(c.agree for c in numeric)

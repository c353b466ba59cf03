"""Forward kinematics and the geometric Jacobian; the tip load by virtual work; conventions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.analysis.check import compare
from robodyn.errors import ModelError
from robodyn.formulations import kinematics
from tests.conftest import load_quiet, random_robot
from tests.helpers import numeric, state_values

#: Copied verbatim from shared/reference/puma560_reference.json (Robotics Toolbox 1.5.0, agreeing
#: with Pinocchio 4.1.0 to 1e-14), so that the suite runs wherever the repository is cloned.
REFERENCE = Path(__file__).resolve().parents[1] / "data" / "puma560_reference.json"


def test_puma560_end_effector_pose_matches_reference():
    ref = json.loads(REFERENCE.read_text())
    T = kinematics.forward_kinematics(load_quiet("puma560"))
    for state in ref["states"][:10]:
        got = numeric(T, state_values(6, state["q"]))
        assert np.allclose(got, state["T_ee"], atol=1e-12)


def test_link_transforms_are_the_textbook_matrices():
    """Fu eq. 3.2-5 (standard) and Burdick eq. 1 (modified) for one link."""
    a, alpha, d, q1 = sympy.symbols("a alpha d q1")
    c, s, ca, sa = sympy.cos(q1), sympy.sin(q1), sympy.cos(alpha), sympy.sin(alpha)
    std = rd.Manipulator.from_dh([{"joint": "R", "a": "a", "alpha": "alpha", "d": "d"}])
    expected = sympy.Matrix([[c, -ca * s, sa * s, a * c], [s, ca * c, -sa * c, a * s], [0, sa, ca, d], [0, 0, 0, 1]])
    assert sympy.simplify(kinematics.link_transforms(std)[0] - expected) == sympy.zeros(4, 4)
    mod = std.replace(convention="modified")
    R = sympy.Matrix([[c, -s, 0], [s * ca, c * ca, -sa], [s * sa, c * sa, ca]])
    A = kinematics.link_transforms(mod)[0]
    assert sympy.simplify(A[:3, :3] - R) == sympy.zeros(3, 3)
    assert sympy.simplify(A[:3, 3] - sympy.Matrix([a, -sa * d, ca * d])) == sympy.zeros(3, 1)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 5), convention=st.sampled_from(["standard", "modified"]))
def test_jacobian_is_the_derivative_of_the_pose(seed, n, convention):
    robot = random_robot(seed, n, convention, extras=False)
    T = kinematics.forward_kinematics(robot)
    J = kinematics.jacobian(robot)
    rng = np.random.default_rng(seed)
    q = rng.uniform(-np.pi, np.pi, n)
    Jn = numeric(J, state_values(n, q))
    T0 = numeric(T, state_values(n, q))
    eps = 1e-6
    for i in range(n):
        dq = np.zeros(n)
        dq[i] = eps
        Tp, Tm = numeric(T, state_values(n, q + dq)), numeric(T, state_values(n, q - dq))
        dp = (Tp[:3, 3] - Tm[:3, 3]) / (2 * eps)
        dR = (Tp[:3, :3] - Tm[:3, :3]) / (2 * eps)
        W = dR @ T0[:3, :3].T  # skew(omega)
        omega = np.array([W[2, 1], W[0, 2], W[1, 0]])
        assert np.allclose(Jn[:3, i], dp, atol=1e-6)
        assert np.allclose(Jn[3:, i], omega, atol=1e-6)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 5), convention=st.sampled_from(["standard", "modified"]))
def test_tip_load_torques_are_J_transpose_wrench(seed, n, convention):
    """Newton-Euler's backward recursion from f_{n+1}, n_{n+1} equals J^T (f, n) in the base frame."""
    robot = random_robot(seed, n, convention)
    eqs = rd.derive(robot, "ne")
    rng = np.random.default_rng(seed + 1)
    q = rng.uniform(-np.pi, np.pi, n)
    values = state_values(n, q)
    T = numeric(kinematics.frame_transforms(robot)[-1], values)
    J = numeric(kinematics.jacobian(robot.replace(tool=None)), values)
    f0 = T[:3, :3] @ np.array(robot.tip_force, dtype=float)
    n0 = T[:3, :3] @ np.array(robot.tip_moment, dtype=float)
    expected = J.T @ np.concatenate([f0, n0])
    assert np.allclose(numeric(eqs.load, values).ravel(), expected, atol=1e-9)


def test_same_arm_in_both_conventions_by_hand():
    """An RP arm (a rod of length l1, then a slider) written by hand in standard and in modified DH.

    Modified frame 1 is standard frame 0 turned by q1, so the rod's centre (-l1/2, 0, 0) in
    standard frame 1 = Trans(x, l1) Rot(x, pi/2) of it is (l1/2, 0, 0); its tensor diag(0, I, I)
    keeps its form under Rot(x, pi/2); row 2 carries alpha_1 = pi/2 and a_1 = l1.
    """
    rod = "m1*l1**2/12"
    standard = rd.Manipulator.from_dh(
        [
            {"joint": "R", "a": "l1", "alpha": "pi/2", "mass": "m1", "com": ["-l1/2", 0, 0], "inertia": [0, rod, rod]},
            {"joint": "P", "a": 0, "alpha": 0, "d": "d2", "mass": "m2", "com": [0, 0, "-l2/2"], "inertia": [1, 1, 1]},
        ],
        convention="standard",
        gravity=[0, "-g", 0],
    )
    modified = rd.Manipulator.from_dh(
        [
            {"joint": "R", "a": 0, "alpha": 0, "mass": "m1", "com": ["l1/2", 0, 0], "inertia": [0, rod, rod]},
            {"joint": "P", "a": "l1", "alpha": "pi/2", "d": "d2", "mass": "m2", "com": [0, 0, "-l2/2"],
             "inertia": [1, 1, 1]},
        ],
        convention="modified",
        gravity=[0, "-g", 0],
    )
    a, b = rd.derive(standard), rd.derive(modified)
    assert all(c.agree for c in compare(a, b, mode="exact"))
    assert {sympy.Symbol("m1"), sympy.Symbol("m2"), sympy.Symbol("l1")} <= b.tau.free_symbols
    assert a.tau != sympy.zeros(2, 1) and a.G[0] != 0


@pytest.mark.filterwarnings("ignore::robodyn.errors.ModelWarning")
@pytest.mark.parametrize("name", ["puma560", "stanford_modified", "two_link_payload"])
def test_conversion_to_modified_keeps_the_dynamics(name):
    robot = load_quiet(name)
    other = robot.to_convention("modified")
    assert other.convention == "modified"
    assert all(c.agree for c in compare(rd.derive(robot), rd.derive(other)))
    back = other.to_convention("standard")
    assert all(c.agree for c in compare(rd.derive(robot), rd.derive(back)))


def test_conversion_to_standard_needs_joint_one_at_the_base():
    robot = rd.Manipulator.from_dh([{"joint": "R", "a": 1, "alpha": 0}], convention="modified")
    with pytest.raises(ModelError, match=r"link 1.*'a'"):
        robot.to_convention("standard")

"""The generalized d'Alembert formulation (Fu eq. 3.4-24 to 3.4-28) equals Newton-Euler: exactly for
the symbolic arms, to 1e-10 on random states for numeric and random ones (R and P joints, payloads,
tip loads, both conventions); its rotational/translational split reproduces Fu's example 3.4.2."""

from __future__ import annotations

import numpy as np
import pytest
import symengine as se
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import Matrix, cos, sin

import robodyn as rd
from robodyn.algebra import canonical, matrix_to_sympy
from robodyn.analysis.check import FLOOR, NumericSampler, evaluate, has_floats, relative_difference
from robodyn.equations import Equations
from robodyn.formulations import dalembert
from robodyn.symbols import joint_symbols
from tests.conftest import load_quiet, random_robot
from tests.helpers import equivalent

PARTS = ("tau", "M", "h", "G", "load", "damping")


def derive_gd(robot: rd.Manipulator) -> Equations:
    """An Equations from the d'Alembert components, as formulations._lagrange_euler builds one."""
    return rd.derive(robot, "dalembert")


def split(robot: rd.Manipulator) -> dict[str, se.DenseMatrix]:
    n = robot.n
    q = [se.Symbol(f"q{i}") for i in range(1, n + 1)]
    qd = [se.Symbol(f"qd{i}") for i in range(1, n + 1)]
    return dalembert.components(robot, q, qd)


def assert_numeric_agreement(robot: rd.Manipulator, samples: int = 30) -> None:
    ne, gd = rd.derive(robot, "ne"), derive_gd(robot)
    sampler = NumericSampler(robot, samples, seed=1)
    symbols, points = sampler.symbols(), sampler.points()
    values = {p: (evaluate(ne.raw(p), symbols, points), evaluate(gd.raw(p), symbols, points)) for p in PARTS}
    floor = FLOOR * max(float(np.max(np.abs(a), initial=0.0)) for a, _ in values.values())
    for part, (a, b) in values.items():
        assert relative_difference(a, b, floor) < 1e-10, (robot.name, part, relative_difference(a, b, floor))


@pytest.mark.parametrize("name", ["double_pendulum", "two_link_fu", "two_link_payload", "stanford_modified"])
def test_exact_agreement_with_newton_euler(name):
    robot = rd.load(name)
    ne, gd = rd.derive(robot, "ne"), derive_gd(robot)
    q = ne.symbols.q
    for part in PARTS:
        a, b = ne.canonical(part), gd.canonical(part)
        assert all(canonical(a[i, j] - b[i, j], q) == 0 for i in range(a.rows) for j in range(a.cols)), part


@pytest.mark.parametrize("name", ["puma560", "stanford_arm", "industrial_6r"])
def test_numeric_agreement_with_newton_euler(name):
    assert_numeric_agreement(load_quiet(name))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 7), convention=st.sampled_from(["standard", "modified"]))
def test_random_arms_agree(seed, n, convention):
    """Mixed R/P joints, payloads, tip loads, damping and armature, general twists."""
    assert_numeric_agreement(random_robot(seed, n, convention), samples=10)


def assert_zero(matrix: se.DenseMatrix, robot: rd.Manipulator, whole: se.DenseMatrix | None = None) -> None:
    """Exactly zero for exact arms; below 1e-12 of the scale on random states for float arms: the scale is
    the largest entry of ``whole`` (the quantity the residue is a difference of) on the same states, at least
    1 (the industrial arm's h runs to thousands of N m, where a rounding residue is not below 1e-12)."""
    q = joint_symbols(robot.n).q
    if not has_floats(robot):
        assert all(canonical(x, q) == 0 for x in matrix)
        return
    sampler = NumericSampler(robot, 10, seed=2)
    values = evaluate(matrix, sampler.symbols(), sampler.points())
    scale = 1.0 if whole is None else max(1.0, float(np.max(np.abs(evaluate(whole, sampler.symbols(),
                                                                              sampler.points())))))
    assert float(np.max(np.abs(values))) < 1e-12 * scale


@pytest.mark.parametrize("name", ["two_link_payload", "stanford_modified", "puma560", "industrial_6r"])
def test_split_sums_to_the_whole(name):
    """M = D_rot + D_tran + diag(armature), h = h_rot + h_tran, c = G (eq. 3.4-24, 3.4-25)."""
    robot = load_quiet(name)
    parts = split(robot)
    armature = se.diag(*[se.sympify(link.armature) for link in robot.links])
    assert_zero(parts["M"] - (parts["D_rot"] + parts["D_tran"] + armature), robot, parts["M"])
    assert_zero(parts["h"] - (parts["h_rot"] + parts["h_tran"]), robot, parts["h"])
    assert_zero(parts["G"] - parts["c"], robot, parts["G"])
    for key in ("D_rot", "D_tran"):  # symmetric parts
        assert_zero(parts[key] - parts[key].T, robot, parts[key])


def test_split_matches_lagrange_euler_inertia_matrix():
    """D_rot + D_tran equals the Lagrange-Euler D (eq. 3.2-31) of the symbolic Stanford arm."""
    robot = rd.load("stanford_modified")
    parts = split(robot)
    le = rd.derive(robot, "le")
    assert equivalent(matrix_to_sympy(parts["D_rot"] + parts["D_tran"]), le.M, robot.n)


def test_prismatic_joint_has_no_rotational_part():
    """Extension to P joints: a sliding joint turns nothing, so its rows of D_rot and h_rot vanish."""
    robot = rd.load("stanford_modified")  # RRP
    parts = split(robot)
    q = joint_symbols(3).q
    assert all(canonical(parts["D_rot"][2, j], q) == 0 for j in range(3))
    assert canonical(parts["h_rot"][2, 0], q) == 0
    assert canonical(parts["D_tran"][2, 2], q) != 0


@pytest.fixture(scope="module")
def parts():
    """The d'Alembert split of Fu's two-link arm, as sympy matrices."""
    return {k: matrix_to_sympy(v) for k, v in split(rd.load("two_link_fu")).items()}


class TestFuTwoLinkExample:
    """Fu et al. section 3.4.2 (seed 002), term by term. The OCR prints cbar_s as `\\dot{c}_s` in
    eq. 3.4-7 and drops the bar of rbar_s in eq. 3.4-26; the results below, as printed, agree with
    the corrected equations (the tests prove it), so the printed example has no typo in its results.
    h_1^tran is printed as four terms whose first two cancel; we compare with their sum."""

    ell, m1, m2, g = sympy.symbols("l m1 m2 g")
    q1, q2 = sympy.symbols("q1 q2")
    qd1, qd2 = sympy.symbols("qd1 qd2")
    C1, C2, S2, C12 = cos(q1), cos(q2), sin(q2), cos(q1 + q2)

    def test_D_rot(self, parts):
        ell, m1, m2 = self.ell, self.m1, self.m2
        # (sR0 z0)^T I_s (sR0 z0) etc.: only I_zz = m l^2/12 contributes
        expected = Matrix([[(m1 + m2) * ell**2 / 12, m2 * ell**2 / 12], [m2 * ell**2 / 12, m2 * ell**2 / 12]])
        assert equivalent(parts["D_rot"], expected, 2)

    def test_D_tran(self, parts):
        ell, m1, m2, C2 = self.ell, self.m1, self.m2, self.C2
        expected = Matrix(
            [
                [m1 * ell**2 / 4 + m2 * (ell**2 + ell**2 / 4 + ell**2 * C2), m2 * ell**2 / 4 + m2 * ell**2 * C2 / 2],
                [m2 * ell**2 / 4 + m2 * ell**2 * C2 / 2, m2 * ell**2 / 4],
            ]
        )
        assert equivalent(parts["D_tran"], expected, 2)

    def test_D_total(self, parts):
        ell, m1, m2, C2 = self.ell, self.m1, self.m2, self.C2
        D = Matrix(
            [
                [m1 * ell**2 / 3 + 4 * m2 * ell**2 / 3 + m2 * ell**2 * C2, m2 * ell**2 / 3 + m2 * C2 * ell**2 / 2],
                [m2 * ell**2 / 3 + m2 * C2 * ell**2 / 2, m2 * ell**2 / 3],
            ]
        )
        assert equivalent(parts["M"], D, 2)
        assert equivalent(parts["D_rot"] + parts["D_tran"], D, 2)

    def test_h_parts(self, parts):
        ell, m2, S2, qd1, qd2 = self.ell, self.m2, self.S2, self.qd1, self.qd2
        h1_tran = (m2 * ell**2 * S2 * qd1**2 / 2 - m2 * ell**2 * S2 * qd1**2 / 2
                   - m2 * ell**2 * S2 * qd2**2 / 2 - m2 * ell**2 * S2 * qd1 * qd2)
        h2_tran = m2 * ell**2 * S2 * qd1**2 / 2
        assert equivalent(parts["h_tran"], Matrix([h1_tran, h2_tran]), 2)
        assert equivalent(parts["h_rot"], Matrix([0, 0]), 2)  # "h_1^rot = h_2^rot = 0"
        assert equivalent(parts["h"], Matrix([h1_tran, h2_tran]), 2)

    def test_c(self, parts):
        ell, m1, m2, g, C1, C12 = self.ell, self.m1, self.m2, self.g, self.C1, self.C12
        c = Matrix([(m1 / 2 + m2) * g * ell * C1 + m2 * g * ell * C12 / 2, m2 * g * ell * C12 / 2])
        assert equivalent(parts["c"], c, 2)
        assert equivalent(parts["G"], c, 2)

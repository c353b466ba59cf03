"""The default form of robodyn.derive decided before expanding (robodyn.equations: EXPAND_BUDGET), the coefficient
floor of the expanded form (COEFFICIENT_FLOOR) and the time the equations report."""

from __future__ import annotations

import numpy as np
import symengine as se
import sympy

import robodyn as rd
from robodyn.algebra import canonical, matrix_to_sympy
from robodyn.equations import (
    COEFFICIENT_FLOOR,
    EXPAND_BUDGET,
    BoundedExpansion,
    drop_float_noise,
    expansion_work,
)
from tests.conftest import load_quiet


def right_angled_chain(n: int) -> rd.Manipulator:
    """A numeric chain with twists of -pi/2 and pi/2 in turn (exact), float lengths and inertias: right-angled, so
    the geometric half of the default rule lets it through, and its expanded form doubles with every joint."""
    links = [{"joint": "R", "a": 0.1 + 0.01 * i, "alpha": "pi/2" if i % 2 else "-pi/2", "d": 0.05 * (i % 3),
              "mass": 1.0 + 0.1 * i, "com": [0.01, 0.02 * (i % 2), 0.03],
              "inertia": [[0.01, 0.001, 0.0], [0.001, 0.02, 0.0], [0.0, 0.0, 0.015]]} for i in range(n)]
    return rd.Manipulator.from_dh(links, convention="modified", name=f"chain{n}")


def test_floor_drops_a_float_just_below_and_keeps_one_just_above() -> None:
    a, b, c = se.symbols("a b c")
    low, high = 0.999 * COEFFICIENT_FLOOR, 1.001 * COEFFICIENT_FLOOR
    out = drop_float_noise([2.0 * a + 2.0 * low * b + 2.0 * high * c, se.Rational(1, 10**15) * b + low * c])
    assert out[0] == 2.0 * a + 2.0 * high * c  # relative to the largest coefficient, 2.0
    # the floor is relative to the whole part: the second entry's float term is noise against the first's 2.0,
    # its exact coefficient (1e-15, far below) is never dropped
    assert out[1] == se.Rational(1, 10**15) * b
    assert drop_float_noise([low * a]) == [low * a]  # alone, it is the largest: kept


def test_exact_arm_is_unchanged_by_the_floor() -> None:
    for name in ("double_pendulum", "stanford_modified", "two_link_payload"):
        eqs = rd.derive(load_quiet(name))
        assert eqs.expanded
        for part in ("tau", "M", "h", "G"):
            assert getattr(eqs, part) == matrix_to_sympy(eqs.canonical(part)), (name, part)


def test_numeric_arm_loses_only_noise() -> None:
    """The PUMA's expanded torques without the floor carry terms of 1e-16 and below; with it none below 1e-12 of
    the largest coefficient, and the values agree with the full canonical form at random states."""
    eqs = rd.derive(load_quiet("puma560"))
    assert eqs.expanded
    full, shown = eqs.canonical("tau"), eqs.tau
    coefficients = [abs(float(c)) for x in shown for c in sympy.Add.make_args(x)
                    for c in [c.as_coeff_Mul()[0]] if isinstance(c, sympy.Float)]
    assert min(coefficients) >= COEFFICIENT_FLOOR * max(coefficients)
    assert sum(len(sympy.Add.make_args(x)) for x in shown) < sum(len(se.Add.make_args(x)) for x in full)
    symbols = [*eqs.symbols.q, *eqs.symbols.qd, *eqs.symbols.qdd]
    f_full = se.Lambdify([se.Symbol(s.name) for s in symbols], list(full))
    f_shown = sympy.lambdify(symbols, list(shown))
    rng = np.random.default_rng(1)
    for _ in range(5):
        x = rng.uniform(-2, 2, len(symbols))
        a, b = np.ravel(f_full(x)), np.array(f_shown(*x), dtype=float)
        assert np.max(np.abs(a - b)) <= 1e-11 * np.max(np.abs(a))


def test_bounded_expansion_is_the_canonical_form() -> None:
    robot = load_quiet("puma560_symbolic")  # exact: the same polynomial, term for term
    eqs = rd.derive(robot, expand=False)
    expand = BoundedExpansion()
    for x in eqs.raw("M"):
        assert expand(x, EXPAND_BUDGET) == canonical(x)
    assert BoundedExpansion()(eqs.raw("tau")[0], 100) is None  # gives up past its budget


def test_default_rule_estimates_before_expanding() -> None:
    puma, chain = rd.derive(load_quiet("puma560")), rd.derive(right_angled_chain(6))
    assert expansion_work(puma.raw("tau")) is not None and puma.expanded and puma.form_note() == ""
    assert expansion_work(chain.raw("tau")) is None  # its expanded torques have 17,652 terms
    assert not chain.expanded and "estimated before expanding" in chain.form_note()
    assert "more than 7 joints" in rd.derive(right_angled_chain(8)).form_note("--expand")
    assert "--expand forces" in rd.derive(right_angled_chain(8)).form_note("--expand")
    assert rd.derive(right_angled_chain(3), expand=True).expanded  # asked for: honoured, with the floor


def test_time_counts_the_forms_computed() -> None:
    """``total_seconds`` (the CLI header's time) adds the expansion and display done after the derivation (a small
    arm: the Stanford arm's expansion takes seconds and proves nothing more)."""
    eqs = rd.derive(load_quiet("two_link_fu"))
    assert eqs.form_seconds == 0.0
    eqs.to_text()
    assert eqs.form_seconds > 0.0 and eqs.total_seconds == eqs.seconds + eqs.form_seconds


def test_nested_M_is_symmetric_as_shown() -> None:
    eqs = rd.derive(right_angled_chain(8))
    M = eqs.M
    assert all(M[i, j] == M[j, i] for i in range(8) for j in range(i))

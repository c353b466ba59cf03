"""EMDEG's method (seed 001): exact agreement, each structure rule on random arms, the elements
program against the Christoffel symbols, and the operation count against Burdick's."""

from __future__ import annotations

import numpy as np
import pytest
import symengine as se
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from robodyn.algebra import canonical
from robodyn.formulations import derive, emdeg
from robodyn.program import build
from robodyn.symbols import joint_symbols
from tests.conftest import load_quiet, random_robot


@pytest.mark.parametrize("name", ["double_pendulum", "two_link_payload", "stanford_modified", "puma560_symbolic"])
def test_emdeg_equals_newton_euler_exactly(name):
    robot = load_quiet(name)
    a, b = derive(robot, "emdeg"), derive(robot, "newton-euler")
    q = a.symbols.q
    for part in ("M", "h", "G", "load", "tau"):
        for x, y in zip(a.canonical(part), b.canonical(part), strict=True):
            assert canonical(x - y, q) == 0, part


def _christoffel(robot):
    eqs = derive(robot, "newton-euler")
    M = eqs.canonical("M")
    q = [se.Symbol(s.name) for s in eqs.symbols.q]
    n = robot.n
    dM = [[[M[i, j].diff(q[k]) for k in range(n)] for j in range(n)] for i in range(n)]
    return q, dM


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 4), convention=st.sampled_from(["standard", "modified"]))
def test_structure_rules_on_random_arms(seed, n, convention):
    """Eq. 26 (zero derivatives) and 27-29 (c and b from the derivatives of M, with the relations
    between elements) on random R/P arms; numbers compared after canonical expansion."""
    robot = random_robot(seed, n, convention)
    q, dM = _christoffel(robot)
    for i in range(n):
        for j in range(n):
            for k in range(min(i, j) + 1):
                assert _small(canonical(dM[i][j][k], q))  # eq. 26
    el = emdeg.elements(robot, q)

    def close(x, y):
        return _small(canonical(se.expand(x - y), q))

    for i in range(n):
        for j in range(n):
            gamma_ijj = dM[i][j][j] - dM[j][j][i] / 2
            assert close(el.element(f"c{i + 1}{j + 1}{j + 1}"), gamma_ijj)  # eq. 27
            for k in range(j + 1, n):
                b = dM[i][j][k] + dM[i][k][j] - dM[j][k][i]
                assert close(el.element(f"b{i + 1}{j + 1}{k + 1}"), b)  # eq. 28, 29


def _small(expr, samples=5):
    """Zero, or numerically zero at random angles (floating-point models leave rounding residues)."""
    if expr == 0:
        return True
    symbols = sorted(expr.free_symbols, key=str)
    if not symbols:
        return abs(float(expr)) < 1e-9
    rng = np.random.default_rng(0)
    f = se.Lambdify(symbols, [expr])
    return all(abs(float(f(rng.uniform(-2, 2, len(symbols)))[0])) < 1e-9 for _ in range(samples))


def test_parallel_joints_rule_34():
    """b_{i,p,k} = b_{i,p+1,k} for successive parallel revolute joints p, p+1 (PUMA's 2 and 3, i < p)."""
    robot = load_quiet("puma560_symbolic")
    q = joint_symbols(6).symengine()[0]
    el = emdeg.elements(robot, q)
    for k in range(4, 7):
        x, y = el.element(f"b12{k}"), el.element(f"b13{k}")
        assert canonical(x - y, q) == 0


def test_elements_program_is_the_christoffel_form():
    robot = load_quiet("puma560_symbolic")
    program = build(robot, ("elements",))
    assert program.route == "emdeg"
    eqs = derive(robot, "newton-euler")
    form = eqs.emdeg_form()
    rng = np.random.default_rng(5)
    values = {s.name: float(rng.uniform(0.5, 2)) for s in robot.parameters()}
    values.update({f"q{i + 1}": float(rng.uniform(-2, 2)) for i in range(6)})
    got = program.evaluate(values)
    sym = {sympy.Symbol(k): v for k, v in values.items()}
    for name, xs in got.items():
        expected = float(sympy.sympify(_form_element(form, name)).xreplace(sym))
        assert abs(xs[0] - expected) <= 1e-10 * max(1.0, abs(expected)), name


def _form_element(form, name):
    """An element of :meth:`Equations.emdeg_form` by Burdick's name (M12, c211, b123, g2)."""
    kind, ix = name[0], tuple(int(c) for c in name[1:])
    if kind == "M":
        return form.M[ix[0] - 1, ix[1] - 1]
    if kind == "c":
        return form.c[ix[:2]]
    if kind == "b":
        return form.b[ix]
    return form.g[ix[0] - 1]


def test_elements_count_beats_emdeg():
    """Burdick: 291 multiplications and 131 additions for all distinct M, c, b, g of the PUMA."""
    c = build(load_quiet("puma560_symbolic"), ("elements",)).count()["evaluation"]
    assert c.multiplications <= 291 and c.additions <= 131


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_parallel_joints_rule_34_on_random_arms(seed):
    """Eq. 34 on random 4-joint arms whose joints 2 and 3 are parallel revolute joints."""
    robot = random_robot(seed, 4, "modified", right_angled=True)
    links = list(robot.links)
    links[1] = links[1].replace(joint="R")
    links[2] = links[2].replace(joint="R", alpha=0)
    robot = robot.replace(links=tuple(links))
    q = joint_symbols(4).symengine()[0]
    el = emdeg.elements(robot, q)
    assert _small(canonical(el.element("b124") - el.element("b134"), q))

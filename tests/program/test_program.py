"""The straight-line program: evaluates to the equations, counts by the documented rules."""

from __future__ import annotations

import numpy as np
import pytest
import symengine as se

import robodyn as rd
from robodyn.analysis.check import NumericSampler, evaluate
from robodyn.program import count_operations, from_equations
from tests.conftest import load_quiet

x, y, z = se.symbols("x y z")
q1 = se.Symbol("q1")


@pytest.mark.parametrize(
    ("expr", "mults", "adds"),
    [
        (x * y, 1, 0),
        (2 * x * y, 2, 0),  # a numeric factor other than +-1 counts
        (-x * y, 1, 0),  # negation is free
        (x / y, 1, 0),
        (1 / x, 1, 0),
        (1 / (x * y), 2, 0),
        (x**2, 1, 0),
        (x**3, 2, 0),
        (x + y - z, 0, 2),
        (-x, 0, 0),
        (x * (y + z), 1, 1),
    ],
)
def test_counting_rules(expr, mults, adds):
    c = count_operations(expr)
    assert (c.multiplications, c.additions) == (mults, adds)


def test_trig_of_joint_angles_counted_apart():
    c = count_operations(se.sin(q1) * x + se.cos(q1), angles=[q1])
    assert (c.multiplications, c.additions, c.trig, c.functions) == (1, 1, 2, 0)


def test_an_angle_sum_is_charged_once():
    """sin(q1 + q2) and cos(q1 + q2): two trig evaluations and one addition (the sum), however often used."""
    from robodyn.program import Assignment, Program

    q2 = se.Symbol("q2")
    s, c = se.sin(q1 + q2), se.cos(q1 + q2)
    program = Program(inputs={"q": [q1, q2]}, constants=[], body=[Assignment("x1", s * x)],
                      outputs={"tau": [se.Symbol("x1") + c, c * y]}, angles=[q1, q2])
    run = program.count()["evaluation"]
    assert (run.multiplications, run.additions, run.trig) == (2, 2, 3)  # x1 + c, and q1 + q2 once


@pytest.mark.parametrize("name", ["double_pendulum", "two_link_payload", "stanford_modified", "puma560"])
@pytest.mark.parametrize("parts", [("tau",), ("M", "h", "G")])
def test_program_evaluates_to_the_equations(name, parts):
    eqs = rd.derive(load_quiet(name))
    program = from_equations(eqs, parts)
    sampler = NumericSampler(eqs.robot, 3, seed=4)
    symbols, points = sampler.symbols(), sampler.points()
    for k, point in enumerate(points):
        got = program.evaluate({s.name: float(v) for s, v in zip(symbols, point, strict=True)})
        for part in parts:
            expected = evaluate(eqs.raw(part), symbols, points[k : k + 1])[0]
            assert np.allclose(got[part], expected, rtol=1e-12, atol=1e-12 * max(1.0, np.max(np.abs(expected))))


def test_constants_depend_on_parameters_only():
    eqs = rd.derive(rd.load("puma560_symbolic"))
    program = from_equations(eqs, ("M",))
    params = set(program.inputs["parameters"]) | {se.Symbol(a.name) for a in program.constants}
    assert program.constants
    for a in program.constants:
        assert a.expr.free_symbols <= params
    counts = program.count()
    assert counts["evaluation"].multiplications > 0 and counts["evaluation"].trig > 0
    assert "multiplications" in str(program)


def test_builder_merges_constants_equal_up_to_sign():
    """Two parameter-only expressions with the same value in the parameters (or opposite values) are one
    constant of the constants block; the run-time products that use them are then shared."""
    from robodyn.program.builder import Builder

    a, b, c = se.symbols("a b c")
    ops = Builder([a, b, c])
    k1 = ops.value((a + b) * c)
    k2 = ops.value(a * c + b * c)
    k3 = ops.value(-a * c - b * c)
    assert k1.expr == k2.expr and k3.expr == -k1.expr and len(ops.constants) == 1
    total = ops.add(ops.mul(k1, x), ops.mul(k3, x * 1))  # k x - k x
    assert total.is_zero()
    assert ops.value(a * 1 + 0 * b).expr == a  # a plain parameter needs no constant


def test_sums_sharing_a_pair_compute_it_once():
    from robodyn.program import Assignment
    from robodyn.program.peephole import share_pairs

    w = se.Symbol("w")
    body = [Assignment("x1", x * y)]
    outputs = {"tau": [se.Symbol("x1") + 2 * z + w, 3 - se.Symbol("x1") - 2 * z, w * (se.Symbol("x1") + 2 * z)]}
    names = iter(f"t{i}" for i in range(1, 10))
    new_body, new_outputs = share_pairs(body, outputs, names)
    t1 = se.Symbol("t1")
    assert [a.name for a in new_body] == ["x1", "t1"] and new_body[1].expr == se.Symbol("x1") + 2 * z
    assert new_outputs["tau"] == [t1 + w, 3 - t1, w * t1]
    before = sum((count_operations(e) for e in [*outputs["tau"], body[0].expr]), count_operations(se.Integer(0)))
    after = sum((count_operations(e) for e in [*new_outputs["tau"], *(a.expr for a in new_body)]),
                count_operations(se.Integer(0)))
    assert (before.multiplications - after.multiplications, before.additions - after.additions) == (2, 2)


def test_a_sum_holding_a_term_twice_is_left_alone():
    """x1 = a - (a + b) keeps its meaning (-b) although other sums share a - b."""
    from robodyn.program import Assignment
    from robodyn.program.peephole import _flatten, share_pairs

    a, b, w = se.symbols("a b w")
    odd = se.Add(a, se.Mul(-1, se.Add(a, b), evaluate=False), evaluate=False)
    assert len(_flatten([odd])) == 3  # a, -a, -b: not simplified
    body = [Assignment("x1", odd)]
    outputs = {"tau": [a - b + w, (a - b) * w]}
    new_body, new_outputs = share_pairs(body, outputs, iter(f"t{i}" for i in range(1, 9)))
    values = {a: 2.0, b: 3.0, w: 5.0}
    env = dict(values)
    for assignment in new_body:
        env[se.Symbol(assignment.name)] = float(assignment.expr.xreplace(env))
    assert env[se.Symbol("x1")] == -3.0
    assert [float(x.xreplace(env)) for x in new_outputs["tau"]] == [4.0, -5.0]


def test_marginal_cost_restores_the_builder():
    from robodyn.program.builder import Builder

    p, r = se.symbols("p r")
    ops = Builder([p, r])
    base = ops.mul(ops.value(p * r), x)
    state = (list(ops.constants), list(ops.body), dict(ops._memo), set(ops.known), dict(ops._by_value))
    cost = ops.marginal_cost(lambda: ops.add(ops.mul(ops.value(p * r + 1), y), ops.mul(base, z)))
    assert cost == 3  # two products and a sum; the constant p r + 1 is free
    assert (list(ops.constants), list(ops.body), dict(ops._memo), set(ops.known), dict(ops._by_value)) == state

    def broken() -> None:
        ops.mul(ops.value(p - r), y)
        raise RuntimeError("inside the trial")

    with pytest.raises(RuntimeError):
        ops.marginal_cost(broken)
    assert (list(ops.constants), list(ops.body), dict(ops._memo), set(ops.known), dict(ops._by_value)) == state

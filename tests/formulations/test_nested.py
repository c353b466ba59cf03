"""Nested equations (issue 13, item 6): rd.derive keeps the recursion's expressions, their common subexpressions
shared, where expanding them would blow up, and they are the same functions as the expanded canonical form."""

from __future__ import annotations

import json

import numpy as np
import pytest
import symengine as se
import sympy
from typer.testing import CliRunner

import robodyn as rd
from robodyn import numeric
from robodyn.algebra import NestedConverter, canonical, to_se, to_sympy
from robodyn.cli import app
from robodyn.equations import expands_cheaply, read_dict
from robodyn.model.params import random_values
from robodyn.program.opcount import general_arm
from tests.conftest import load_quiet, random_robot

#: A 3-joint arm with general twists written exactly (cos(1/3) stays exact): small enough to expand, so nested
#: (asked for) and expanded can be compared exactly.
EXACT_GENERAL = [
    {"joint": "R", "a": "1/2", "alpha": "1/3", "d": "1/5", "mass": 2, "com": ["1/10", 0, "1/7"], "inertia": [1, 1, 1]},
    {"joint": "P", "a": "1/4", "alpha": "-2/3", "theta": "1/2", "mass": 1, "com": [0, "1/9", 0],
     "inertia": ["1/2", "1/3", "1/4"]},
    {"joint": "R", "a": "1/3", "alpha": "1/5", "mass": "3/2", "com": ["1/8", 0, 0], "inertia": ["1/5", "1/5", "1/6"]},
]


@pytest.fixture(scope="module")
def exact_arm() -> rd.Manipulator:
    return rd.Manipulator.from_dh(EXACT_GENERAL, convention="modified", name="exact_general")


def test_the_nested_converter_agrees_with_sympy_and_shares_subexpressions() -> None:
    x, y = se.symbols("x y")
    shared = se.sin(x) * y + se.Rational(2, 3)
    expr = shared ** 2 * se.cos(shared) + se.sqrt(3) * se.sin(shared) / 7
    convert = NestedConverter()
    out = convert(expr)
    assert sympy.simplify(out - to_sympy(expr)) == 0
    pieces = [node for node in sympy.preorder_traversal(out) if node == to_sympy(shared)]
    assert len(pieces) == 3 and len({id(p) for p in pieces}) == 1  # one object, used three times


def test_which_equations_are_expanded_by_default(exact_arm: rd.Manipulator) -> None:
    assert expands_cheaply(load_quiet("puma560")) and expands_cheaply(load_quiet("stanford_arm"))
    assert expands_cheaply(random_robot(1, 3, "standard")) and expands_cheaply(exact_arm)  # up to three joints
    assert not expands_cheaply(general_arm("RRRR")) and not expands_cheaply(random_robot(2, 5, "standard"))
    assert rd.derive(load_quiet("puma560")).expanded and not rd.derive(general_arm("RRRR")).expanded
    assert not rd.derive(exact_arm, expand=False).expanded
    assert not rd.derive(load_quiet("puma560"), expand=False).expanded


@pytest.mark.parametrize("method", ["newton-euler", "lagrange-euler", "dalembert"])
def test_nested_and_expanded_are_the_same_functions_exactly(exact_arm: rd.Manipulator, method: str) -> None:
    nested, expanded = rd.derive(exact_arm, method, expand=False), rd.derive(exact_arm, method)
    q = nested.symbols.q
    for part in ("tau", "M", "h", "G"):
        for a, b in zip(getattr(nested, part), getattr(expanded, part), strict=True):
            assert canonical(to_se(a - b), q) == 0, (method, part)


def test_printed_nested_equations_round_trip_through_json(exact_arm: rd.Manipulator) -> None:
    eqs = rd.derive(exact_arm, expand=False)
    data = json.loads(json.dumps(eqs.to_dict()))
    assert data["definitions"] and all(name.startswith("x") for name in data["definitions"])
    back = read_dict(data)
    q = eqs.symbols.q
    for part in ("tau", "M", "G"):
        for a, b in zip(back[part], getattr(eqs, part), strict=True):
            assert canonical(to_se(a - b), q) == 0, part
    text = eqs.to_text()
    assert text.startswith("x1 = ") and "tau[3] = " in text
    assert eqs.to_latex().startswith("x_{1} = ")


def _evaluate(eqs: rd.Equations, values: dict[sympy.Symbol, float]) -> dict[str, np.ndarray]:
    """tau, M of the equations at one point, through their shared subexpressions (linear in their size)."""
    definitions, matrices = eqs.shown_matrices("tau")
    env = dict(values)
    for symbol, expr in definitions:
        env[symbol] = float(expr.xreplace(env))
    return {name: np.array(matrices[name].xreplace(env), dtype=float) for name in ("tau", "M")}


def test_a_seven_joint_arm_of_general_geometry_is_nested_and_right() -> None:
    """The issue's example: before, tau of such an arm ran for more than 15 minutes (expanding); now the
    nested equations agree with the numeric engine."""
    robot = random_robot(2, 7, "standard", extras=False)
    eqs = rd.derive(robot, "newton-euler")
    assert not eqs.expanded
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.normal(size=(3, robot.n))
    s = eqs.symbols
    values = dict(zip((*s.q, *s.qd, *s.qdd), (*q, *qd, *qdd), strict=True))
    got = _evaluate(eqs, values)
    assert np.allclose(got["tau"].ravel(), numeric.inverse_dynamics(robot, q, qd, qdd), rtol=1e-9, atol=1e-9)
    assert np.allclose(got["M"], numeric.mass_matrix(robot, q), rtol=1e-9, atol=1e-9)


def test_a_six_joint_fully_symbolic_arm_by_newton_euler() -> None:
    robot = general_arm("RRPRRR")
    eqs = rd.derive(robot, "newton-euler")
    assert not eqs.expanded
    params = random_values(robot, np.random.default_rng(3))
    rng = np.random.default_rng(4)
    q, qd, qdd = rng.normal(size=(3, robot.n))
    s = eqs.symbols
    values = {**{sympy.Symbol(k): v for k, v in params.items()},
              **dict(zip((*s.q, *s.qd, *s.qdd), (*q, *qd, *qdd), strict=True))}
    got = _evaluate(eqs, values)
    expected = numeric.inverse_dynamics(robot, q, qd, qdd, params=params)
    assert np.allclose(got["tau"].ravel(), expected, rtol=1e-9, atol=1e-9)


def test_cli_expand_and_nested(exact_arm: rd.Manipulator, tmp_path) -> None:
    path = exact_arm.save(tmp_path / "exact.yaml")
    nested = CliRunner().invoke(app, ["derive", str(path), "--nested"])
    expanded = CliRunner().invoke(app, ["derive", str(path)])
    puma = CliRunner().invoke(app, ["derive", "puma560", "--nested"])
    assert nested.exit_code == expanded.exit_code == puma.exit_code == 0
    assert "x1 = " in nested.output and "x1 = " not in expanded.output and "x1 = " in puma.output

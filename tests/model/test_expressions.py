"""The whitelist expression parser: what it accepts, and that it never runs code."""

from __future__ import annotations

import pytest
import sympy

from robodyn.errors import ModelError
from robodyn.model.expr import format_expression, parse_expression, to_expr

m2, l2, a = sympy.symbols("m2 l2 a")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pi/2", sympy.pi / 2),
        ("-pi/2", -sympy.pi / 2),
        ("m2*l2**2/12", m2 * l2**2 / 12),
        ("sqrt(2)*a", sympy.sqrt(2) * a),
        ("sin(a) + cos(a)", sympy.sin(a) + sympy.cos(a)),
        ("(1 + a)*(1 - a)", (1 + a) * (1 - a)),
        ("0.6718299999999999", sympy.Float(0.6718299999999999)),
        ("1e-3", sympy.Float(0.001)),
        ("+a", a),
        ("1/3", sympy.Rational(1, 3)),
    ],
)
def test_accepts_the_whitelist(text, expected):
    assert parse_expression(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('echo pwned')",
        "open('/etc/passwd').read()",
        "exec('import os')",
        "eval('1')",
        "a.__class__",
        "().__class__.__bases__[0].__subclasses__()",
        "lambda: 1",
        "[x for x in (1, 2)]",
        "a if a else 1",
        "a[0]",
        "f'{a}'",
        "a == 1",
        "a and 1",
        "'text'",
        "sympy.pi",
        "Symbol('x')",
        "exp(a)",
        "sin(a, a)",
        "sin(x=1)",
        "a // 2",
        "a % 2",
        "a @ a",
        "2**2**2**100",
        "a**1000",
        "1/0",
        "q1 + 1",
        "qd2",
        "_private",
        "1e999",
        "",
        "-" * 200 + "a",
        "sin(" * 100 + "a" + ")" * 100,
        "a" + "+a" * 2000,
        "True",
        "None",
    ],
)
def test_refuses_everything_else(text):
    with pytest.raises(ModelError) as info:
        parse_expression(text, field="alpha")
    assert "alpha" in str(info.value)
    assert "\n" not in str(info.value)


def test_nothing_was_executed(tmp_path, monkeypatch):
    target = tmp_path / "pwned"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelError):
        parse_expression(f"__import__('os').system('touch {target}')")
    with pytest.raises(ModelError):
        parse_expression(f"open('{target}', 'w')")
    assert not target.exists()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), True, None, [1], {"a": 1}])
def test_non_numbers_and_non_finite(value):
    with pytest.raises(ModelError):
        to_expr(value, "mass")


@pytest.mark.parametrize("expr", [sympy.Float(0.1), sympy.Float(0.6718299999999999), m2 * l2**2 / 12,
                                  sympy.Float(1e-300) * a, -sympy.pi / 2, sympy.sqrt(3) / 7 + sympy.Float(2.5) * a])
def test_format_round_trips_exactly(expr):
    written = format_expression(expr)
    back = to_expr(written)
    assert back == expr

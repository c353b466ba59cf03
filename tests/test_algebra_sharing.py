"""Expressions that share their parts (a recursion's, 2^k paths through k levels) are walked once per node: the
nested conversion to sympy (robodyn.algebra.NestedConverter) and the expression-keyed memo (ShapeMemo) never
compare two expressions whole, which is exponential on such expressions built apart."""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap

import symengine as se
import sympy

from robodyn.algebra import NestedConverter, ShapeMemo, to_sympy


def rotations(levels: int, last: se.Basic | None = None) -> se.Basic:
    """x after ``levels`` plane rotations by q0, q1, ...: each level uses both coordinates of the one before,
    so the tree has 2^levels paths; ``last`` replaces the last angle's cosine (a perturbed copy)."""
    x, y = se.symbols("x y")
    for i in range(levels):
        q = se.Symbol(f"q{i}")
        c = last if last is not None and i == levels - 1 else se.cos(q)
        x, y = c * x - se.sin(q) * y, se.sin(q) * x + c * y
    return x


def test_the_conversion_of_a_shared_expression_is_sympys_own() -> None:
    expr = rotations(6)
    out = NestedConverter()(expr)
    assert out == to_sympy(expr)  # the same tree as sympy's conversion, which walks every path
    assert sympy.expand(out - to_sympy(se.expand(expr))) == 0


def test_equal_expressions_built_apart_convert_to_one_object() -> None:
    a, b = rotations(5), rotations(5)  # equal, no node in common but the symbols
    out = NestedConverter()(se.Function("f")(a) + se.Function("g")(b))  # f, g: no evaluation in sympy
    f_a, g_b = sorted(out.args, key=lambda f: f.func.__name__)
    assert f_a.args[0] is g_b.args[0] and f_a.args[0] == to_sympy(a)
    assert NestedConverter()(rotations(5)) is f_a.args[0]  # another converter, later: the same object again


def test_shapes_are_equality() -> None:
    memo: ShapeMemo[str] = ShapeMemo()
    a, b, other = rotations(6), rotations(6), rotations(6, last=se.Symbol("c"))
    assert a == b and a != other
    assert memo.shape(a) == memo.shape(b) != memo.shape(other)
    x, y = se.symbols("x y")
    assert memo.shape(x * y + 2) == memo.shape(2 + y * x) != memo.shape(x * y + 3)
    memo[a] = "a"
    assert b in memo and memo[b] == "a" and other not in memo


def test_a_deep_shared_expression_converts_in_bounded_time() -> None:
    """40 levels: 2^40 paths; a walk per path, or a comparison of the two copies whole, would not end. The child
    runs under a CPU-time limit (a hang guard, far above what it needs)."""
    code = textwrap.dedent(
        """
        import symengine as se
        from robodyn.algebra import NestedConverter, ShapeMemo
        from tests.test_algebra_sharing import rotations
        a, b = rotations(40), rotations(40)
        memo = ShapeMemo()
        assert memo.shape(a) == memo.shape(b) != memo.shape(rotations(40, last=se.Symbol("c")))
        out = NestedConverter()(se.Function("f")(a) + se.Function("g")(b))
        assert out.args[0].args[0] is out.args[1].args[0]
        again = NestedConverter()(rotations(40))
        assert again is out.args[0].args[0]
        print("ok")
        """
    )

    def limit_cpu() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (120, 120))

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=limit_cpu,
                          timeout=600, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]

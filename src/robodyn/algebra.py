"""The symbolic engine under the formulations, and the trigonometric canonical form.

Formulations build their expressions with symengine (a C++ library with sympy's
semantics): the PUMA's Newton-Euler recursion takes milliseconds there against tenths
of a second in sympy, and expanding tau_1 (11,500 terms) a quarter of a second
against minutes. The public API speaks sympy; :func:`to_sympy` converts at the door.

Canonical form. Joint angles only ever enter as sin(q_i) and cos(q_i) of single
coordinates (link transforms write cos(theta0 + q) as cos(theta0) cos(q) - sin(theta0) sin(q)),
and symbolic twists or offsets as sin and cos of single parameters. Expanding and then
reducing every sin(x)^k, k >= 2, with sin^2 = 1 - cos^2 leaves a polynomial in which each
sine has degree at most one. For independent arguments these monomials are linearly
independent functions, so two expressions are equal exactly when their canonical forms are
identical: this is the exact zero test used to show that formulations agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import symengine as se
import sympy

SeExpr = Any  # symengine.Basic; symengine ships no type stubs


def to_se(value: Any) -> SeExpr:
    """A sympy expression (or number) as a symengine expression."""
    return se.sympify(value)


def to_sympy(value: Any) -> sympy.Expr:
    """A symengine expression as a sympy expression."""
    return sympy.sympify(value)


def matrix_to_sympy(matrix: Any, *, nested: bool = False) -> sympy.ImmutableMatrix:
    """A symengine matrix as a sympy matrix; ``nested``: by :class:`NestedConverter` (one conversion per distinct
    subexpression, shared between entries), for expressions built without expansion."""
    convert = NestedConverter() if nested else to_sympy
    rows = [[convert(matrix[i, j]) for j in range(matrix.cols)] for i in range(matrix.rows)]
    return sympy.ImmutableMatrix(rows) if rows else sympy.ImmutableMatrix.zeros(matrix.rows, matrix.cols)


class NestedConverter:
    """symengine -> sympy for expressions as a recursion builds them (nested, their subexpressions shared): each
    distinct node is converted once and the sympy result shares it too, so the cost follows the number of
    distinct subexpressions, not the size of the expanded tree (sympy's own conversion walks every path)."""

    _ARGUMENT = se.Symbol("_robodyn_argument")

    def __init__(self) -> None:
        self.done: dict[Any, sympy.Expr] = {}

    def __call__(self, expr: Any) -> sympy.Expr:
        stack, done = [to_se(expr)], self.done
        while stack:  # post-order without recursion: the nesting may be deeper than Python's stack
            node = stack[-1]
            if node in done:
                stack.pop()
                continue
            pending = [a for a in node.args if a not in done]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            done[node] = self._node(node, [done[a] for a in node.args])
        return done[to_se(expr)]

    def _node(self, node: Any, args: list[sympy.Expr]) -> sympy.Expr:
        if not args:
            return to_sympy(node)
        if isinstance(node, se.Add):
            return sympy.Add(*args)
        if isinstance(node, se.Mul):
            return sympy.Mul(*args)
        if isinstance(node, se.Pow):
            return sympy.Pow(*args)
        template = node.func(*([self._ARGUMENT] * len(args)))._sympy_()  # sin, cos, ...: sympy's class
        return template.func(*args)


def vector(values: Iterable[Any]) -> se.DenseMatrix:
    """A symengine column vector."""
    return se.DenseMatrix([[to_se(v)] for v in values])


def zeros(rows: int, cols: int = 1) -> se.DenseMatrix:
    return se.zeros(rows, cols)


def cross(a: se.DenseMatrix, b: se.DenseMatrix) -> se.DenseMatrix:
    """a x b for symengine 3-vectors, skipping products with exact zeros."""
    return se.DenseMatrix(
        [
            [_mul(a[1], b[2]) - _mul(a[2], b[1])],
            [_mul(a[2], b[0]) - _mul(a[0], b[2])],
            [_mul(a[0], b[1]) - _mul(a[1], b[0])],
        ]
    )


def dot(a: se.DenseMatrix, b: se.DenseMatrix) -> SeExpr:
    return sum((_mul(a[k], b[k]) for k in range(a.rows)), se.Integer(0))


def _mul(x: SeExpr, y: SeExpr) -> SeExpr:
    return se.Integer(0) if x == 0 or y == 0 else x * y


def trig_reduction(expr: SeExpr) -> dict[SeExpr, SeExpr]:
    """The replacements sin(x)^k -> sin(x)^(k mod 2) (1 - cos(x)^2)^(k div 2) present in expr,
    for every argument x: joint angles, and symbolic twists or offsets alike."""
    replacements = {}
    for power in expr.atoms(se.Pow):
        base, exponent = power.args
        if isinstance(base, se.sin) and exponent.is_integer and int(exponent) >= 2:
            k = int(exponent)
            replacements[power] = base ** (k % 2) * (1 - se.cos(base.args[0]) ** 2) ** (k // 2)
    return replacements


def canonical(expr: Any, angles: Sequence[Any] = ()) -> SeExpr:
    """Expanded, with every sine of degree at most one (see the module docstring).

    ``angles`` is kept for callers that name the joint angles; every sin(x)^2 is reduced, whatever
    x is (a symbolic twist alpha_i enters as cos(alpha_i), sin(alpha_i) too)."""
    result = se.expand(to_se(expr))
    for _ in range(4):  # one pass suffices; the loop is a guard
        replacements = trig_reduction(result)
        if not replacements:
            return result
        result = se.expand(result.xreplace(replacements))
    return result


def is_zero(expr: Any, angles: Sequence[Any]) -> bool:
    """Exact test that ``expr`` vanishes for all joint angles and parameters (see module doc)."""
    return canonical(expr, angles) == 0


def count_terms(expr: Any) -> int:
    """Number of terms of an expanded expression (1 for a non-sum)."""
    e = to_se(expr)
    return len(e.args) if isinstance(e, se.Add) else (0 if e == 0 else 1)

"""Factoring common factors out of the sums of a finished program (a peephole pass).

After inlining, a sum such as 0.4318*x + 0.4318*y*z or c2*a + c2*b pays one multiplication
per term for a factor the terms share. :func:`factor_sums` takes out, greedily, the factor
(a symbol, or a number up to sign) common to the most terms of every sum, recursively, as
Horner's rule does; the result is the same expression and never costs more.
"""

from __future__ import annotations

from collections import Counter

import symengine as se

from robodyn.algebra import SeExpr


def factor_sums(expr: SeExpr) -> SeExpr:
    """``expr`` with common factors taken out of each of its sums (recursively)."""
    if expr.is_Atom:
        return expr
    if isinstance(expr, se.Add):
        return _factor(list(expr.args))
    args = [factor_sums(a) for a in expr.args]
    return expr.func(*args)


def _parts(term: SeExpr) -> tuple[SeExpr, Counter]:
    """(number, Counter of other factors) of a product."""
    number: SeExpr = se.Integer(1)
    factors: Counter = Counter()
    for f in term.args if isinstance(term, se.Mul) else (term,):
        if f.is_Number:
            number = number * f
        elif isinstance(f, se.Pow) and f.args[1].is_Integer and int(f.args[1]) > 0 and f.args[0].is_Symbol:
            factors[f.args[0]] += int(f.args[1])
        else:
            factors[factor_sums(f)] += 1
    return number, factors


def _flatten(terms: list[SeExpr]) -> list[SeExpr]:
    """The terms of a sum with nested sums and negated sums (-(a + b)) opened: the additions and the free
    negations are the same, and factors shared across the parentheses become visible."""
    out: list[SeExpr] = []
    for t in terms:
        if isinstance(t, se.Add):
            out += _flatten(list(t.args))
        elif isinstance(t, se.Mul) and len(t.args) == 2 and t.args[0] == -1 and isinstance(t.args[1], se.Add):
            out += _flatten([-a for a in t.args[1].args])
        else:
            out.append(t)
    return out


def _factor(terms: list[SeExpr]) -> SeExpr:
    parts = [_parts(t) for t in _flatten(terms)]
    counts: Counter = Counter()
    for number, factors in parts:
        for f in factors:
            counts[f] += 1
        if float(abs(number)) != 1.0:
            counts[abs(number)] += 1
    best = max(counts, key=lambda f: (counts[f], str(f)), default=None) if counts else None
    if best is None or counts[best] < 2:
        return se.Add(*[_rebuild(number, factors) for number, factors in parts])
    inner, rest = [], []
    for number, factors in parts:
        if best.is_Number and abs(number) == best:
            inner.append(_rebuild(se.Integer(1 if number > 0 else -1), factors))
        elif not best.is_Number and factors[best]:
            reduced = factors.copy()
            reduced[best] -= 1
            inner.append(_rebuild(number, reduced))
        else:
            rest.append(_rebuild(number, factors))
    factored = se.Mul(best, _factor(inner))
    return se.Add(factored, _factor(rest)) if rest else factored


def _rebuild(number: SeExpr, factors: Counter) -> SeExpr:
    out = number
    for f, k in factors.items():
        if k:
            out = out * (f**k if k > 1 else f)
    return out

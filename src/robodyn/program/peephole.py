"""Factoring common factors out of the sums of a finished program (a peephole pass).

After inlining, a sum such as 0.4318*x + 0.4318*y*z or c2*a + c2*b pays one multiplication
per term for a factor the terms share. :func:`factor_sums` takes out, greedily, the factor
(a symbol, or a number up to sign) common to the most terms of every sum, recursively, as
Horner's rule does; the result is the same expression and never costs more.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import symengine as se

from robodyn.algebra import SeExpr
from robodyn.program.core import Assignment


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


# -- sums that share pairs of terms --------------------------------------------------------------------
#: Sums with more terms than this are left alone (the pair count grows with the square of the terms).
PAIR_LIMIT = 40


def _signed(term: SeExpr) -> tuple[int, SeExpr]:
    """(sign, core) with the core's leading number positive: -3*x -> (-1, 3*x)."""
    if term.is_Number:
        return (-1, -term) if term < 0 else (1, term)
    if isinstance(term, se.Mul) and term.args[0].is_Number and term.args[0] < 0:
        return -1, -term
    return 1, term


def _sums(expr: SeExpr, out: list[list[tuple[int, SeExpr]]]) -> None:
    """Every sum in ``expr`` (flattened, as signed terms), inner sums first; not inside sin/cos arguments."""
    if expr.is_Atom or isinstance(expr, (se.sin, se.cos)):
        return
    if isinstance(expr, se.Add):
        terms = _flatten(list(expr.args))
        for t in terms:
            _sums(t, out)
        out.append([_signed(t) for t in terms])
        return
    for a in expr.args:
        _sums(a, out)


def _pair_counts(exprs: list[SeExpr]) -> Counter:
    """(a, b, relative sign) -> the number of sums holding both a and b with that relative sign."""
    sums: list[list[tuple[int, SeExpr]]] = []
    for e in exprs:
        _sums(e, sums)
    counts: Counter = Counter()
    for terms in sums:
        if len(terms) > PAIR_LIMIT or _repeats(terms):
            continue
        signs = {core: sign for sign, core in terms}
        cores = sorted(signs, key=str)
        for i, a in enumerate(cores):
            for b in cores[i + 1 :]:
                if not (a.is_Number and b.is_Number):
                    counts[(a, b, signs[a] * signs[b])] += 1
    return counts


def _repeats(terms: list[tuple[int, SeExpr]]) -> bool:
    """A sum holding a term twice (up to sign) is left alone: its pairs are ambiguous."""
    return len({core for _, core in terms}) < len(terms)


def _replace_pair(expr: SeExpr, a: SeExpr, b: SeExpr, relative: int, t: se.Symbol) -> SeExpr:
    """``expr`` with every sum holding +-(a + relative b) using t = a + relative b instead."""
    if expr.is_Atom or isinstance(expr, (se.sin, se.cos)):
        return expr
    if isinstance(expr, se.Add):
        terms = [_replace_pair(x, a, b, relative, t) for x in _flatten(list(expr.args))]
        signed = [_signed(x) for x in terms]
        signs = {core: sign for sign, core in signed}
        if a in signs and b in signs and signs[a] * signs[b] == relative and not _repeats(signed):
            rest = [x for x in terms if _signed(x)[1] not in (a, b)]
            return se.Add(*rest, signs[a] * t)
        return se.Add(*terms)
    return expr.func(*[_replace_pair(x, a, b, relative, t) for x in expr.args])


def share_pairs(body: list, outputs: dict[str, list[SeExpr]], names: Any) -> tuple[list, dict[str, list[SeExpr]]]:
    """Sums that hold the same two terms (up to sign) compute them once: the pair most sums share becomes a
    temporary t = a + b (one addition, and the multiplications inside a and b, paid once instead of in every
    sum), then the next, until no pair is in two sums (the Macsyma ``fortbigopt`` step for sums). ``body`` is
    a list of :class:`Assignment`; ``names`` yields fresh temporary names. A new temporary is placed just
    before its first use."""
    exprs = [a.expr for a in body] + [x for xs in outputs.values() for x in xs]
    shared: list[tuple[se.Symbol, SeExpr]] = []
    per = [_pair_counts([e]) for e in exprs]  # counted per expression: a rewrite recounts only its own
    counts: Counter = Counter()
    for mine in per:
        counts.update(mine)
    order: dict[tuple, tuple] = {}  # tie-break (shorter terms first, then a fixed order), computed once a pair

    def rank(pair: tuple) -> tuple:
        if pair not in order:
            text = (str(pair[0]), str(pair[1]))
            order[pair] = (-len(text[0]) - len(text[1]), text, pair[2])
        return (counts[pair], *order[pair])

    frequent = {pair for pair, c in counts.items() if c >= 2}  # the only pairs worth a temporary

    while frequent:
        best = max(frequent, key=rank)
        a, b, relative = best
        t = se.Symbol(next(names))
        shared.append((t, a + relative * b))
        for i, mine in enumerate(per):
            if best in mine:
                exprs[i] = _replace_pair(exprs[i], a, b, relative, t)
                counts.subtract(mine)  # in place (``-=`` rebuilds the whole counter)
                per[i] = _pair_counts([exprs[i]])
                counts.update(per[i])
                for pair in (*mine, *per[i]):
                    if counts.get(pair, 0) <= 0:
                        counts.pop(pair, None)
                    if counts.get(pair, 0) >= 2:
                        frequent.add(pair)
                    else:
                        frequent.discard(pair)
    if not shared:
        return body, outputs
    new_body = [Assignment(a.name, e) for a, e in zip(body, exprs, strict=False)]
    k = len(body)
    new_outputs = {}
    for name, xs in outputs.items():
        new_outputs[name] = exprs[k : k + len(xs)]
        k += len(xs)
    return _order(_place(new_body, shared)), new_outputs


def _place(body: list, shared: list[tuple[se.Symbol, SeExpr]]) -> list:
    """``body`` with each shared pair (t, value) inserted just before the first statement that uses it, the
    last pair first (a pair may use earlier pairs: then it may be placed before such a pair). Each statement's
    symbols are read once: ``groups[i]`` holds the pairs placed just before body statement i, in order."""
    first: dict[SeExpr, int] = {}  # symbol -> the first body statement using it
    for i, a in enumerate(body):
        for s in a.expr.free_symbols:
            first.setdefault(s, i)
    users: dict[SeExpr, list[se.Symbol]] = {}  # t -> the pairs whose value uses it
    for t, value in shared:
        for s in value.free_symbols:
            users.setdefault(s, []).append(t)
    groups: dict[int, list[se.Symbol]] = {}
    group_of: dict[se.Symbol, int] = {}
    for t, _ in reversed(shared):
        spots = [(first[t], math.inf, None)] if t in first else []  # a body statement comes after its group
        spots += [(group_of[u], groups[group_of[u]].index(u), u) for u in users.get(t, ()) if u in group_of]
        where, _, before = min(spots, default=(len(body), math.inf, None))
        group = groups.setdefault(where, [])
        group.insert(len(group) if before is None else group.index(before), t)
        group_of[t] = where
    values = dict(shared)
    out: list = []
    for i in range(len(body) + 1):
        out += [Assignment(str(t), values[t]) for t in groups.get(i, ())]
        if i < len(body):
            out.append(body[i])
    return out


def _order(body: list) -> list:
    """The assignments in an order where each follows what it uses (stable otherwise)."""
    defined = {se.Symbol(a.name) for a in body}
    done: set = set()
    out: list = []
    pending = list(body)
    while pending:
        rest = []
        for a in pending:
            if (a.expr.free_symbols & defined) <= done:
                out.append(a)
                done.add(se.Symbol(a.name))
            else:
                rest.append(a)
        if len(rest) == len(pending):
            raise RuntimeError("circular assignments")
        pending = rest
    return out

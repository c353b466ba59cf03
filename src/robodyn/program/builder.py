"""Scalars that write a straight-line program as they are computed.

A recursive formulation run on :class:`Value` scalars (instead of symengine expressions)
leaves behind one assignment per non-trivial operation: this is how a *customised* recursion
is generated (Khalil and Kleinfinger's customised Newton-Euler): multiplications by 0, 1 and -1
and additions of 0 vanish as the recursion runs, numbers are folded, changes of sign are carried
along for free, and an operation whose operands depend on the parameters only goes to the
constants block (computed once, not charged per evaluation). Identical operations are computed
once (hash-consing), so subexpressions shared between outputs are shared in the program.

:meth:`Builder.program` then keeps only what the outputs need (dead-code elimination) and
inlines temporaries used once, for readable output; neither changes the operation count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import symengine as se

from robodyn.algebra import SeExpr, to_se
from robodyn.program.core import Assignment, Program, count_operations
from robodyn.program.peephole import factor_sums, share_pairs

Number = int | float


class Value:
    """A scalar of the program being built: a number, a symbol, or minus a symbol."""

    __slots__ = ("builder", "expr")

    def __init__(self, builder: Builder, expr: SeExpr) -> None:
        self.builder, self.expr = builder, _normal(expr)

    def __add__(self, other: Any) -> Value:
        return self.builder.add(self, other)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Value:
        return self.builder.add(self, self.builder.neg(other))

    def __rsub__(self, other: Any) -> Value:
        return self.builder.add(other, self.builder.neg(self))

    def __mul__(self, other: Any) -> Value:
        return self.builder.mul(self, other)

    __rmul__ = __mul__

    def __neg__(self) -> Value:
        return self.builder.neg(self)

    def is_zero(self) -> bool:
        return self.expr == 0

    def __repr__(self) -> str:
        return str(self.expr)


def _normal(e: SeExpr) -> SeExpr:
    """Floating-point 0.0, 1.0 and -1.0 as integers, so that they fold (symengine's 0.0 != 0)."""
    if e.is_Number and not (e.is_Integer or e.is_Rational):
        x = float(e)
        if x in (0.0, 1.0, -1.0):
            return se.Integer(int(x))
    return e


def _split(e: SeExpr) -> tuple[int, SeExpr]:
    """(sign, atom) with atom a non-negative number or a symbol."""
    if e.is_Number:
        return (-1, -e) if e < 0 else (1, e)
    if isinstance(e, se.Mul):  # -x
        return -1, e.args[1] if e.args[0] == -1 else e.args[0]
    return 1, e


def fresh_prefix(prefix: str, names: Iterable[str]) -> str:
    """``prefix``, or ``prefix`` with underscores added, such that no name in ``names`` is the prefix
    followed by digits (a robot's parameter named ``k1`` or ``x1`` must not meet a constant or temporary
    of the program)."""
    taken = set(names)
    while any(re.fullmatch(re.escape(prefix) + r"\d+", name) for name in taken):
        prefix += "_"
    return prefix


#: Constants whose value in the parameters has more terms are not compared with one another.
FULL_VALUE_TERMS = 400


class Builder:
    """Scalar operations that append to a program (see the module docstring).

    ``parameters``: the symbols known before run time (their combinations are constants).
    """

    def __init__(self, parameters: Iterable[se.Symbol] = (), *, prefix: str = "x", constant_prefix: str = "k") -> None:
        self.known: set[SeExpr] = set(parameters)
        self.parameters = list(parameters)
        self.constants: list[Assignment] = []
        self.body: list[Assignment] = []
        self._memo: dict[Any, SeExpr] = {}
        self._parameter_set = set(self.parameters)
        self._values: dict[SeExpr, SeExpr | None] = {}  # constant symbol -> its value in the parameters
        self._by_value: dict[SeExpr, se.Symbol] = {}
        taken = {str(s) for s in self.parameters}
        self._prefix, self._constant_prefix = fresh_prefix(prefix, taken), fresh_prefix(constant_prefix, taken)

    # -- trying alternatives ------------------------------------------------------------------
    def marginal_cost(self, make: Any) -> int:
        """Multiplications + additions (and trig evaluations) that ``make()`` adds to the run-time block,
        given everything already built (what it can share costs nothing); the builder is then restored.
        Constants are free (computed once)."""
        mark = (len(self.constants), len(self.body), len(self._memo))
        try:
            make()
            cost = 0
            for a in self.body[mark[1]:]:
                c = count_operations(a.expr)
                cost += c.multiplications + c.additions + c.trig + c.functions
            return cost
        finally:
            self._rollback(mark)

    def _rollback(self, mark: tuple[int, int, int]) -> None:
        """Forget everything made since ``mark`` (lengths of the constants, the body and the memo)."""
        for a in self.constants[mark[0]:]:
            symbol = se.Symbol(a.name)
            self.known.discard(symbol)
            full = self._values.pop(symbol, None)
            if full is not None and self._by_value.get(full) == symbol:
                del self._by_value[full]
        del self.constants[mark[0]:], self.body[mark[1]:]
        for _ in range(len(self._memo) - mark[2]):
            self._memo.popitem()

    # -- making values -----------------------------------------------------------------------
    def value(self, x: Any) -> Value:
        """A Value of a Value, a Python number, or a symengine/sympy expression (an expression
        that is not a number or a symbol is assigned to a constant or a temporary first)."""
        if isinstance(x, Value):
            return x
        e = to_se(x)
        if e.is_Number or e.is_Symbol:
            return Value(self, e)
        sign, atom = _split(e) if isinstance(e, se.Mul) and e.args[0] == -1 and len(e.args) == 2 else (1, e)
        if atom.is_Symbol:
            return Value(self, sign * atom)
        return Value(self, sign * self._assign(("expr", atom), atom))

    def trig(self, angle: Any) -> tuple[Value, Value]:
        """cos and sin of an angle (one trig evaluation each, shared)."""
        a = to_se(angle)
        return self.value(se.cos(a)), self.value(se.sin(a))

    def _assign(self, key: Any, expr: SeExpr) -> SeExpr:
        """The symbol computing ``expr`` (a constant or a temporary), made once per ``key``; a constant
        whose value in the parameters equals an earlier constant, or minus it, is that one (or minus it)."""
        if key in self._memo:
            return self._memo[key]
        constant = expr.free_symbols <= self.known
        if constant:
            full = self._full_value(expr)
            if full is not None:
                same = self._by_value.get(full)
                if same is None and (minus := self._by_value.get(se.expand(-full))) is not None:
                    same = -minus
                if same is None and (full.is_Number or full in self._parameter_set):
                    same = full
                if same is not None:
                    self._memo[key] = same
                    return same
        target = self.constants if constant else self.body
        prefix = self._constant_prefix if constant else self._prefix
        symbol = se.Symbol(f"{prefix}{len(target) + 1}")
        target.append(Assignment(str(symbol), expr))
        if constant:
            self.known.add(symbol)
            full = self._full_value(expr)
            self._values[symbol] = full
            if full is not None:
                self._by_value.setdefault(full, symbol)
        self._memo[key] = symbol
        return symbol

    def _full_value(self, expr: SeExpr) -> SeExpr | None:
        """A constant's value expanded in the parameters (None when too large to compare cheaply)."""
        subs = {}
        for s in expr.free_symbols:
            if s in self._values:
                if self._values[s] is None:
                    return None
                subs[s] = self._values[s]
        full = se.expand(expr.xreplace(subs) if subs else expr)
        return full if len(full.args) <= FULL_VALUE_TERMS else None

    # -- operations --------------------------------------------------------------------------
    def neg(self, x: Any) -> Value:
        return Value(self, -self.value(x).expr)

    def mul(self, x: Any, y: Any) -> Value:
        (sx, ax), (sy, ay) = _split(self.value(x).expr), _split(self.value(y).expr)
        sign = sx * sy
        if ax == 0 or ay == 0:
            return Value(self, se.Integer(0))
        if ax.is_Number and ay.is_Number:
            return Value(self, sign * ax * ay)
        if ax == 1:
            return Value(self, sign * ay)
        if ay == 1:
            return Value(self, sign * ax)
        a, b = sorted((ax, ay), key=str)
        return Value(self, sign * self._assign(("*", a, b), a * b))

    def add(self, x: Any, y: Any) -> Value:
        ex, ey = self.value(x).expr, self.value(y).expr
        if ex == 0:
            return Value(self, ey)
        if ey == 0:
            return Value(self, ex)
        if ex.is_Number and ey.is_Number:
            return Value(self, ex + ey)
        (sx, ax), (sy, ay) = _split(ex), _split(ey)
        if ax == ay:
            return Value(self, se.Integer(0)) if sx != sy else self.mul(2 * sx, ax)
        if sx == sy:  # a + b, or -(a + b)
            a, b = sorted((ax, ay), key=str)
            return Value(self, sx * self._assign(("+", a, b), a + b))
        plus, minus = (ax, ay) if sx > 0 else (ay, ax)  # plus - minus
        return Value(self, self._assign(("-", plus, minus), plus - minus))

    def reciprocal(self, x: Any) -> Value:
        """1 / x: one multiplication (a division) unless x is a number."""
        sx, ax = _split(self.value(x).expr)
        if ax == 0:
            raise ValueError("a division by an expression that is identically zero (a massless link without "
                             "armature?)")
        if ax.is_Number:
            return Value(self, sx / ax)
        return Value(self, sx * self._assign(("1/", ax), 1 / ax))

    def sign(self, x: Any) -> Value:
        """sign(x) (-1, 0, 1): one function, shared; sign(-a) = -sign(a)."""
        sx, ax = _split(self.value(x).expr)
        if ax.is_Number:
            return Value(self, se.sign(sx * ax))
        return Value(self, sx * self._assign(("sign", ax), se.sign(ax)))

    def dot(self, xs: Sequence[Any], ys: Sequence[Any]) -> Value:
        total: Any = 0
        for x, y in zip(xs, ys, strict=True):
            total = self.add(total, self.mul(x, y))
        return self.value(total)

    def _fresh_names(self, body: Sequence[Assignment]) -> Iterator[str]:
        """Temporary names after every one used so far."""
        used = [int(a.name[len(self._prefix):]) for a in [*self.body, *body]
                if a.name.startswith(self._prefix) and a.name[len(self._prefix):].isdigit()]
        k = max(used, default=0)
        while True:
            k += 1
            yield f"{self._prefix}{k}"

    # -- the program ---------------------------------------------------------------------------
    def program(
        self,
        inputs: Mapping[str, list[se.Symbol]],
        outputs: Mapping[str, Sequence[Any]],
        angles: Sequence[se.Symbol] = (),
        *,
        inline: bool = True,
    ) -> Program:
        """The program computing ``outputs`` (dead code removed; temporaries used once inlined)."""
        out = {name: [self.value(x).expr for x in xs] for name, xs in outputs.items()}
        constants, body = _live(self.constants, self.body, out)
        if inline:
            constants, body, out = _inline(constants, body, out)
            body = [Assignment(a.name, factor_sums(a.expr)) for a in body]
            out = {name: [factor_sums(x) for x in xs] for name, xs in out.items()}
            body, out = share_pairs(body, out, self._fresh_names(body))
        return Program(inputs=dict(inputs), constants=constants, body=body, outputs=out, angles=list(angles))


def _live(
    constants: list[Assignment], body: list[Assignment], outputs: Mapping[str, list[SeExpr]]
) -> tuple[list[Assignment], list[Assignment]]:
    needed: set[SeExpr] = set()
    for xs in outputs.values():
        for x in xs:
            needed |= x.free_symbols
    kept: list[Assignment] = []
    for a in reversed([*constants, *body]):
        symbol = se.Symbol(a.name)
        if symbol in needed:
            kept.append(a)
            needed |= a.expr.free_symbols
    live = {a.name for a in kept}
    return [a for a in constants if a.name in live], [a for a in body if a.name in live]


def _inline(
    constants: list[Assignment], body: list[Assignment], outputs: dict[str, list[SeExpr]]
) -> tuple[list[Assignment], list[Assignment], dict[str, list[SeExpr]]]:
    """Substitute every temporary used exactly once into its single use (within its block)."""
    uses: dict[SeExpr, int] = {}
    every = [a.expr for a in constants + body] + [x for xs in outputs.values() for x in xs]
    for e in every:
        for s in e.free_symbols:
            uses[s] = uses.get(s, 0) + 1
    constant_names = {a.name for a in constants}
    replace: dict[SeExpr, SeExpr] = {}

    def keep(block: list[Assignment]) -> list[Assignment]:
        kept = []
        for a in block:
            expr = _substituted(a.expr, replace)
            symbol = se.Symbol(a.name)
            # a constant is not pushed into run-time code, where it would be recomputed
            inlinable = uses.get(symbol, 0) == 1 and _size(expr) <= INLINE_LIMIT
            if inlinable and not (a.name in constant_names and _used_at_run_time(symbol, body, outputs)):
                replace[symbol] = expr
            else:
                kept.append(Assignment(a.name, expr))
        return kept

    new_constants = keep(constants)
    new_body = keep(body)
    new_outputs = {name: [_substituted(x, replace) for x in xs] for name, xs in outputs.items()}
    return new_constants, new_body, new_outputs


def _substituted(expr: SeExpr, replace: dict[SeExpr, SeExpr]) -> SeExpr:
    """``expr`` with its symbols in ``replace`` replaced (only those: a map of the whole program costs its size)."""
    sub = {s: replace[s] for s in expr.free_symbols if s in replace}
    return expr.xreplace(sub) if sub else expr


#: A temporary is inlined only while the expression it joins stays this small (readable, and
#: shallow enough for recursive tree walks).
INLINE_LIMIT = 40


def _size(expr: SeExpr) -> int:
    c = count_operations(expr)
    return c.multiplications + c.additions


def _used_at_run_time(symbol: se.Symbol, body: list[Assignment], outputs: Mapping[str, list[SeExpr]]) -> bool:
    return any(symbol in a.expr.free_symbols for a in body) or any(
        symbol in x.free_symbols for xs in outputs.values() for x in xs
    )

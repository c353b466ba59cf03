"""Forward-mode differentiation of any recursion of :mod:`robodyn.recursions`, over any scalar type.

A :class:`Dual` carries a value and its partial derivatives, d = {direction: dvalue/ddirection}, both scalars
of an underlying ``ops`` (:mod:`robodyn.recursions.scalars`). Arithmetic is the chain rule,

    d(a + b) = da + db,   d(a b) = da b + a db,   d cos(theta + q) = -sin(theta + q) dq,
    d sin(theta + q) = cos(theta + q) dq,   d(1 / x) = -(1 / x)^2 dx,

and :class:`DualOps` is the scalar interface on duals. Running a recursion written once (Newton-Euler, the
composite-body M, ...) on duals seeded with dq_j / dq_k = [j == k] gives its derivatives along with its value,
as the recursion itself computes them: on the program builder's scalars the derivative statements share
every value statement, and a direction that does not reach a quantity (q_k of a link that is not an ancestor)
never appears in its ``d``, so nothing is computed for it. The literal 0 and 1 of the recursions stay
literals here too (a product with 0 is 0, with 1 the dual itself).
"""

from __future__ import annotations

import contextlib
from collections.abc import Hashable, Sequence
from typing import Any

from robodyn.recursions.scalars import ScalarOps

Scalar = Any


def _zero(x: Any) -> bool:
    """An exact zero: the literal 0 or a scalar that knows it is (the program builder's)."""
    if isinstance(x, int | float):
        return x == 0
    is_zero = getattr(x, "is_zero", None)
    return bool(is_zero()) if callable(is_zero) else False


def _sum(d: dict[Hashable, Scalar], key: Hashable, x: Scalar) -> None:
    """d[key] += x, keeping no exact zero."""
    if _zero(x):
        return
    total = d[key] + x if key in d else x
    if _zero(total):
        d.pop(key, None)
    else:
        d[key] = total


class Dual:
    """A value and its derivatives along named directions (module docstring)."""

    __slots__ = ("d", "value")

    def __init__(self, value: Scalar, d: dict[Hashable, Scalar] | None = None) -> None:
        self.value, self.d = value, d or {}

    def __add__(self, other: Any) -> Dual:
        if not isinstance(other, Dual):
            return self if _zero(other) else Dual(self.value + other, self.d)
        d = dict(self.d)
        for key, x in other.d.items():
            _sum(d, key, x)
        return Dual(self.value + other.value, d)

    __radd__ = __add__

    def __neg__(self) -> Dual:
        return Dual(-self.value, {key: -x for key, x in self.d.items()})

    def __sub__(self, other: Any) -> Dual:
        return self + (-other)

    def __rsub__(self, other: Any) -> Dual:
        return (-self) + other

    def __mul__(self, other: Any) -> Any:
        if not isinstance(other, Dual):
            if isinstance(other, int) and other in (0, 1):
                return self if other == 1 else 0
            return Dual(self.value * other, _nonzero({key: x * other for key, x in self.d.items()}))
        d = _nonzero({key: x * other.value for key, x in self.d.items()})
        for key, x in other.d.items():
            _sum(d, key, self.value * x)
        return Dual(self.value * other.value, d)

    __rmul__ = __mul__

    def is_zero(self) -> bool:
        return _zero(self.value) and not self.d

    def derivative(self, direction: Hashable) -> Scalar:
        """d value / d direction (the literal 0 where the direction does not reach it)."""
        return self.d.get(direction, 0)

    def __repr__(self) -> str:
        return f"Dual({self.value!r}, {self.d!r})"


def _nonzero(d: dict[Hashable, Scalar]) -> dict[Hashable, Scalar]:
    return {key: x for key, x in d.items() if not _zero(x)}


class DualOps:
    """The scalar interface of :mod:`robodyn.recursions.scalars` on duals over ``base`` (another ops)."""

    def __init__(self, base: ScalarOps) -> None:
        self.base = base

    def number(self, value: Any) -> Dual:
        return Dual(self.base.number(value))

    def cos_sin(self, offset: Any, q: Dual | None) -> tuple[Dual, Dual]:
        c, s = self.base.cos_sin(offset, None if q is None else q.value)
        if q is None or not q.d:
            return Dual(c), Dual(s)
        return (Dual(c, _nonzero({key: -(s * x) for key, x in q.d.items()})),
                Dual(s, _nonzero({key: c * x for key, x in q.d.items()})))

    def stage(self, name: str) -> contextlib.AbstractContextManager[None]:
        return self.base.stage(name)

    def sign(self, x: Dual) -> Dual:
        """sign(x), whose derivative is 0 wherever it has one (x != 0): Coulomb friction adds nothing to dtau/dqd."""
        return Dual(self.base.sign(x.value))

    def reciprocal(self, x: Dual) -> Dual:
        r = self.base.reciprocal(x.value)  # type: ignore[attr-defined]
        if not x.d:
            return Dual(r)
        minus_r2 = -(r * r)
        return Dual(r, _nonzero({key: minus_r2 * dx for key, dx in x.d.items()}))


def seeded(values: Sequence[Scalar], name: str) -> list[Dual]:
    """``values`` as duals, the j-th with derivative 1 along (name, j): the independent variables."""
    return [Dual(v, {(name, j): 1}) for j, v in enumerate(values)]


def constant(values: Sequence[Scalar]) -> list[Dual]:
    """``values`` as duals with no derivative."""
    return [Dual(v) for v in values]


def jacobian(duals: Sequence[Any], name: str, n: int) -> list[list[Scalar]]:
    """[[d duals[i] / d (name, j) for j < n] for each i]; a plain scalar (or literal) has none."""
    return [[x.derivative((name, j)) if isinstance(x, Dual) else 0 for j in range(n)] for x in duals]

"""A robot's expressions as floats under one parameter binding (the numeric engine's compiler, the URDF and
Pinocchio writers, the regressor's checks all bind parameters this one way)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import sympy

from robodyn.model.manipulator import Manipulator
from robodyn.model.params import check_bound, check_names, symbol_values

#: A parameter binding as users pass it: names (str) or sympy Symbols to numbers.
Params = Mapping[str | sympy.Symbol, Any]


class Floats:
    """Evaluate sympy expressions of one robot as floats under one parameter binding."""

    def __init__(self, mapping: Mapping[sympy.Symbol, float]) -> None:
        self.mapping = dict(mapping)
        self._floats = {s: sympy.Float(v) for s, v in self.mapping.items()}

    def scalar(self, expr: Any) -> float:
        expr = sympy.sympify(expr)
        if expr.free_symbols:
            expr = expr.xreplace(self._floats)
        return float(sympy.N(expr, 17))

    def array(self, values: Iterable[Any], shape: tuple[int, ...]) -> np.ndarray:
        return np.array([self.scalar(v) for v in values], dtype=float).reshape(shape)


def bound_floats(robot: Manipulator, params: Params | None) -> Floats:
    """The evaluator of ``robot``'s expressions under ``params``; a :class:`ModelError` names what is unbound."""
    mapping = symbol_values(params)
    check_names(robot, mapping)
    check_bound(robot, mapping)
    return Floats(mapping)


__all__ = ["Floats", "Params", "bound_floats"]

"""Four-bars in closed form (:mod:`robodyn.model.fourbars`) over floats: each one's positions, rates and
curvatures as one NumPy function of its actuated angle (the steps substituted, common subexpressions shared), the
robot's parameters bound. :mod:`robodyn.numeric.couplings` maps the robot's coordinates to the tree's with them."""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy

from robodyn.model.fourbars import ANGLE, FourBar


class Bar:
    """One four-bar's closed form over floats: ``column`` (the actuated joint's column in q), ``joints`` (its
    passive tree joints), and ``__call__(x)``: (positions, rates, curvatures) of those joints, each (..., 2)."""

    def __init__(self, bar: FourBar, column: int, floats: dict[sympy.Symbol, float]) -> None:
        self.loop, self.column, self.joints = bar.loop, column, np.array(bar.joints)
        bound = {s: sympy.Float(v) for s, v in floats.items()}
        known: dict[sympy.Symbol, sympy.Expr] = {}
        for symbol, expr in bar.steps:  # each step in the angle alone, then one function (cse) of them all
            known[symbol] = expr.xreplace(known).xreplace(bound)
        outputs = [known[bar.discriminant]] + [e.xreplace(known).xreplace(bound)
                                               for e in (*bar.position, *bar.rate, *bar.curvature)]
        self._function = sympy.lambdify([ANGLE], outputs, "numpy", cse=True)

    def __call__(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x = np.asarray(x, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            discriminant, *out = (np.broadcast_to(v, x.shape) for v in self._function(x))
        if np.any(discriminant < 0):
            bad = float(np.ravel(x)[int(np.argmax(np.ravel(discriminant) < 0))])
            raise ValueError(f"loop {self.loop!r}: the four-bar does not assemble at its actuated angle {bad:.6g} "
                             "(no real closure)")
        k = len(self.joints)
        return (np.stack(out[:k], -1), np.stack(out[k:2 * k], -1), np.stack(out[2 * k:], -1))


def bars(robot: Any, floats: dict[sympy.Symbol, float]) -> tuple[Bar, ...]:
    """The robot's four-bars over floats (() without)."""
    return tuple(Bar(bar, column, floats) for column, bar in robot.closure_map().bars)


__all__ = ["Bar", "bars"]

"""Test helpers: symbolic equivalence and numeric evaluation of sympy results."""

from __future__ import annotations

import numpy as np
import sympy

from robodyn.algebra import is_zero
from robodyn.symbols import joint_symbols


def equivalent(a, b, n: int) -> bool:
    """a == b as functions (angle sums expanded, then the exact canonical-form test)."""
    q = joint_symbols(n).q
    a, b = sympy.Matrix(a) if hasattr(a, "shape") else a, sympy.Matrix(b) if hasattr(b, "shape") else b
    diff = sympy.expand_trig(sympy.expand(a - b))
    if isinstance(diff, sympy.MatrixBase):
        return all(is_zero(x, q) for x in diff)
    return is_zero(diff, q)


def numeric(expr, values: dict) -> np.ndarray:
    """Evaluate a sympy matrix at numeric values (dict of sympy symbol -> float)."""
    return np.array(sympy.Matrix(expr).subs(values).evalf(), dtype=float)


def state_values(n: int, q, qd=None, qdd=None) -> dict:
    s = joint_symbols(n)
    values = {s.q[i]: float(q[i]) for i in range(n)}
    if qd is not None:
        values.update({s.qd[i]: float(qd[i]) for i in range(n)})
    if qdd is not None:
        values.update({s.qdd[i]: float(qdd[i]) for i in range(n)})
    return values

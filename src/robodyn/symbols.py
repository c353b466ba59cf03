"""The symbols every part of robodyn shares.

Joint coordinates ``q1..qn``, velocities ``qd1..qdn``, accelerations ``qdd1..qddn``
and the gravity magnitude ``g``: fixed names, plain sympy symbols (no assumptions),
so that expressions from any formulation, file or user compare equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import symengine as se
import sympy

g = sympy.Symbol("g")


@dataclass(frozen=True)
class JointSymbols:
    """The joint variables of an n-joint arm as tuples of sympy symbols."""

    q: tuple[sympy.Symbol, ...]
    qd: tuple[sympy.Symbol, ...]
    qdd: tuple[sympy.Symbol, ...]

    @property
    def n(self) -> int:
        return len(self.q)

    def all(self) -> tuple[sympy.Symbol, ...]:
        return self.q + self.qd + self.qdd

    def symengine(self) -> tuple[list[Any], list[Any], list[Any]]:
        """The same symbols as symengine lists (q, qd, qdd), for the formulations' engine."""
        return tuple([se.Symbol(s.name) for s in group] for group in (self.q, self.qd, self.qdd))  # type: ignore[return-value]


def joint_symbols(n: int) -> JointSymbols:
    """``q1..qn``, ``qd1..qdn`` and ``qdd1..qddn``."""
    return JointSymbols(
        q=tuple(sympy.Symbol(f"q{i}") for i in range(1, n + 1)),
        qd=tuple(sympy.Symbol(f"qd{i}") for i in range(1, n + 1)),
        qdd=tuple(sympy.Symbol(f"qdd{i}") for i in range(1, n + 1)),
    )

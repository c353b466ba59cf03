"""The symbols every part of robodyn shares.

Joint coordinates ``q1..qn``, velocities ``qd1..qdn``, accelerations ``qdd1..qddn``
and the gravity magnitude ``g``: fixed names, plain sympy symbols (no assumptions),
so that expressions from any formulation, file or user compare equal.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def joint_symbols(n: int) -> JointSymbols:
    """``q1..qn``, ``qd1..qdn`` and ``qdd1..qddn``."""
    return JointSymbols(
        q=tuple(sympy.Symbol(f"q{i}") for i in range(1, n + 1)),
        qd=tuple(sympy.Symbol(f"qd{i}") for i in range(1, n + 1)),
        qdd=tuple(sympy.Symbol(f"qdd{i}") for i in range(1, n + 1)),
    )

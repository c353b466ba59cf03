"""The one small scalar interface every recursion of :mod:`robodyn.recursions` is written against.

A recursion computes with ``+``, ``-``, unary ``-`` and ``*`` on its scalars, the literal Python ``0`` and ``1``
standing for the zeros and ones of the algorithm (omega_0 = 0, the joint axis (0, 0, 1), ...), so that every
scalar type can fold them. Beyond that it asks its ``ops`` for the few things below. The implementations:

- :class:`SymengineOps` (here): symengine expressions, for the symbolic formulations;
- :class:`robodyn.numeric.kane.NumpyOps`: NumPy arrays of a batch of states;
- :class:`robodyn.numeric._codegen.TracerOps`: floats and row nodes, traced into the numeric engine's kernels;
- :class:`robodyn.program.routes.BuilderOps`: scalars that write a straight-line program;
- :class:`robodyn.program.opcount.CountingOps`: scalars that count operations, stage by stage.
"""

from __future__ import annotations

import contextlib
from typing import Protocol

import symengine as se
import sympy

from robodyn.algebra import SeExpr, to_se
from robodyn.model.dh import cos_sin_of_sum
from robodyn.recursions.vec3 import Scalar


class ScalarOps(Protocol):
    """What a recursion asks of a scalar type beyond + - * (see the module docstring)."""

    def number(self, value: sympy.Expr) -> Scalar:
        """A model parameter (a sympy number or expression, or a float) as a scalar."""

    def cos_sin(self, offset: sympy.Expr, q: Scalar | None) -> tuple[Scalar, Scalar]:
        """cos and sin of offset + q (of the constant offset when q is None)."""

    def stage(self, name: str) -> contextlib.AbstractContextManager[None]:
        """A context in which the operations belong to ``name`` (for counting; else a no-op)."""

    def sign(self, x: Scalar) -> Scalar:
        """-1, 0 or 1 as x is negative, zero or positive (the Coulomb friction of a joint: its only use)."""


class SymengineOps:
    """Symengine expressions; q enters only as sin(q), cos(q) (see :mod:`robodyn.algebra`)."""

    def number(self, value: sympy.Expr) -> SeExpr:
        return to_se(value)

    def cos_sin(self, offset: sympy.Expr, q: SeExpr | None) -> tuple[SeExpr, SeExpr]:
        return cos_sin_of_sum(to_se(offset), q)

    def stage(self, name: str) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def reciprocal(self, x: SeExpr) -> SeExpr:
        """1 / x (the one division of :mod:`robodyn.recursions.aba`)."""
        return 1 / x

    def sign(self, x: SeExpr) -> SeExpr:
        return se.sign(x)

"""The straight-line program: one intermediate form for emitters and operation counts.

A :class:`Program` has inputs (q, qd, qdd and the parameters), a block of parameter-only
constants computed once, a block of run-time assignments, and named outputs. :func:`build` returns the
cheapest it finds among its routes: ``recursive`` (Khalil and Kleinfinger's customised Newton-Euler and the
composite-body M run on scalars that write the program, with the inertial parameters regrouped), ``factored``
(the canonical equations factored, EMDEG's K and T), ``emdeg`` (Burdick's distinct elements and structure
rules) and ``expanded`` (common-subexpression elimination of the expanded equations, the Macsyma ``fortbigopt``
step); forward dynamics also by the articulated-body algorithm. :attr:`Program.route` says which.

Counting rules (used everywhere): each binary ``*`` or ``/`` is one multiplication (also by a
numeric constant other than 1 or -1; ``x**2`` is one, ``x**k`` is k - 1, ``x**-k`` is k); each
binary ``+`` or ``-`` is one addition; negation is free; sin and cos of the joint angles are
counted apart (``trig``), the additions of an angle sum such as sin(q2 + q3) once per distinct
sum; other function calls (sqrt, ...) apart (``functions``); the constants block is reported
apart and not charged per evaluation, as EMDEG and the Macsyma appendix did.

The names (outputs, routes) are those of :mod:`robodyn.program.outputs`, the one vocabulary, which imports nothing
heavy; the routes and the Program type are loaded on first use, so that ``import robodyn.program.outputs`` (the
command line's start-up) does not import symengine, sympy or NumPy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# the names, from the one vocabulary: OUTPUTS, what build() can produce; ROUTES, the routes it knows; LDLT and ABA,
# the two ways to forward in Program.candidates and ``robodyn count``
from robodyn.program.outputs import ABA, LDLT, OUTPUTS, ROUTES

if TYPE_CHECKING:  # loaded on first use (below): the vocabulary, robodyn.program.outputs, imports nothing heavy
    from robodyn.program.choice import FACTORED_LIMIT, FACTORED_PARTS, FACTORED_TERMS, build, emdeg_text
    from robodyn.program.core import Assignment, OperationCount, Program, count_operations
    from robodyn.program.routes import from_equations, right_angled

__all__ = [
    "ABA",
    "FACTORED_LIMIT",
    "FACTORED_PARTS",
    "FACTORED_TERMS",
    "LDLT",
    "OUTPUTS",
    "ROUTES",
    "Assignment",
    "OperationCount",
    "Program",
    "build",
    "count_operations",
    "emdeg_text",
    "from_equations",
    "right_angled",
]


#: name -> the module that defines it, loaded on first use: ``import robodyn.program`` (and so the vocabulary,
#: which the command line reads at start-up) does not import symengine, sympy or NumPy.
_LAZY = {
    "Assignment": "robodyn.program.core", "OperationCount": "robodyn.program.core", "Program": "robodyn.program.core",
    "count_operations": "robodyn.program.core",
    "from_equations": "robodyn.program.routes", "right_angled": "robodyn.program.routes",
    "build": "robodyn.program.choice", "emdeg_text": "robodyn.program.choice",
    "FACTORED_LIMIT": "robodyn.program.choice", "FACTORED_PARTS": "robodyn.program.choice",
    "FACTORED_TERMS": "robodyn.program.choice",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # once
        return value
    raise AttributeError(f"module 'robodyn.program' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})

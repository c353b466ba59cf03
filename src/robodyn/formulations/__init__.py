"""The symbolic formulations, one module each, behind one entry point: :func:`derive`.

Every formulation returns the same :class:`~robodyn.equations.Equations`:
tau = M qdd + h + G + damping + load, with M including the armature, h the Coriolis and
centrifugal vector, G gravity, damping = b qd and load the torques that the tip load demands.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import symengine as se

from robodyn.algebra import SeExpr, to_se
from robodyn.equations import Equations
from robodyn.errors import DerivationError
from robodyn.formulations import lagrange_euler, newton_euler
from robodyn.model.manipulator import Manipulator

#: Canonical method names and the aliases the CLI and users may type.
METHODS = {
    "newton-euler": "newton-euler",
    "ne": "newton-euler",
    "newton_euler": "newton-euler",
    "lagrange-euler": "lagrange-euler",
    "le": "lagrange-euler",
    "lagrange_euler": "lagrange-euler",
}
#: Formulations available, in the order ``robodyn check`` runs them.
AVAILABLE = ("newton-euler", "lagrange-euler")

Progress = Callable[[str], None]


def method_name(method: str) -> str:
    key = method.strip().lower()
    if key not in METHODS:
        raise DerivationError(
            f"unknown method {method!r}; available: {', '.join(AVAILABLE)} (aliases: ne, le)"
        )
    return METHODS[key]


def _joint_se(n: int) -> tuple[list[SeExpr], list[SeExpr], list[SeExpr]]:
    q = [se.Symbol(f"q{i}") for i in range(1, n + 1)]
    qd = [se.Symbol(f"qd{i}") for i in range(1, n + 1)]
    qdd = [se.Symbol(f"qdd{i}") for i in range(1, n + 1)]
    return q, qd, qdd


def _column(values: list[SeExpr]) -> se.DenseMatrix:
    return se.DenseMatrix([[v] for v in values])


def _newton_euler(robot: Manipulator, progress: Progress | None) -> dict[str, se.DenseMatrix]:
    """Split the Newton-Euler torques by linearity: tau is linear in qdd, gravity and the
    tip load and quadratic in qd, so each part is one run of the recursion with the
    other inputs at zero (each run takes milliseconds)."""
    n = robot.n
    q, qd, qdd = _joint_se(n)
    zero = [se.Integer(0)] * n
    zero3 = [se.Integer(0)] * 3
    gravity = [to_se(x) for x in robot.gravity]
    tip_f = [to_se(x) for x in robot.tip_force]
    tip_n = [to_se(x) for x in robot.tip_moment]

    def run(qd_: list, qdd_: list, g_: list, f_: list, n_: list) -> se.DenseMatrix:
        return _column(newton_euler.inverse_dynamics(robot, q, qd_, qdd_, g_, f_, n_, progress))

    damping = _column([to_se(link.damping) * qd[i] for i, link in enumerate(robot.links)])
    return {
        "tau": run(qd, qdd, gravity, tip_f, tip_n),
        "M": run(zero, qdd, zero3, zero3, zero3).jacobian(_column(qdd)),
        "h": run(qd, zero, zero3, zero3, zero3) - damping,
        "G": run(zero, zero, gravity, zero3, zero3),
        "load": run(zero, zero, zero3, tip_f, tip_n),
        "damping": damping,
    }


def _lagrange_euler(robot: Manipulator, progress: Progress | None) -> dict[str, se.DenseMatrix]:
    n = robot.n
    q, qd, qdd = _joint_se(n)
    parts = lagrange_euler.components(robot, q, qd, progress)
    parts["damping"] = _column([to_se(link.damping) * qd[i] for i, link in enumerate(robot.links)])
    parts["tau"] = parts["M"] * _column(qdd) + parts["h"] + parts["G"] + parts["damping"] + parts["load"]
    return parts


_BUILDERS = {"newton-euler": _newton_euler, "lagrange-euler": _lagrange_euler}


def derive(robot: Manipulator, method: str = "newton-euler", *, progress: Progress | None = None) -> Equations:
    """Derive the equations of motion of ``robot`` symbolically.

    ``method``: ``"newton-euler"`` (``"ne"``) or ``"lagrange-euler"`` (``"le"``).
    ``progress``, if given, is called with a short description after each step.
    """
    if not isinstance(robot, Manipulator):
        raise TypeError(f"derive() expects a Manipulator, got {type(robot).__name__}")
    name = method_name(method)
    start = time.perf_counter()
    parts = _BUILDERS[name](robot, progress)
    return Equations(robot, name, seconds=time.perf_counter() - start, **parts)

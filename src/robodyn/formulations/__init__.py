"""The symbolic formulations, one module each, behind one entry point: :func:`derive`.

Every formulation returns the same :class:`~robodyn.equations.Equations`:
tau = M qdd + h + G + damping + spring + load, with M including the armature, h the Coriolis and
centrifugal vector, G gravity, damping = b qd (and Coulomb friction), spring = k (q - q_ref) the joint springs and
load the torques that the tip load demands. The springs are added here, once, to every method's tau (each
formulation's own recursion leaves them out).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import symengine as se

from robodyn.algebra import SeExpr, to_se
from robodyn.equations import EXPAND_AUTO_MAX_JOINTS as EXPAND_AUTO_MAX_JOINTS  # re-exported (its old home)
from robodyn.equations import PARTS, Equations
from robodyn.errors import DerivationError, ModelError
from robodyn.formulations import dalembert, emdeg, kane, lagrange_euler, newton_euler
from robodyn.model.manipulator import MAX_LINKS, Manipulator
from robodyn.recursions.arm import coulomb_scalars, joint_friction, link_spring
from robodyn.recursions.scalars import SymengineOps
from robodyn.symbols import joint_symbols

#: Canonical method names and the aliases the CLI and users may type.
METHODS = {
    "newton-euler": "newton-euler",
    "ne": "newton-euler",
    "newton_euler": "newton-euler",
    "lagrange-euler": "lagrange-euler",
    "le": "lagrange-euler",
    "lagrange_euler": "lagrange-euler",
    "dalembert": "dalembert",
    "gd": "dalembert",
    "kane": "kane",
    "emdeg": "emdeg",
    "burdick": "emdeg",
}
#: Formulations available, in the order ``robodyn check`` runs them.
AVAILABLE = ("newton-euler", "lagrange-euler", "dalembert", "kane", "emdeg")

Progress = Callable[[str], None]

#: The most links :func:`derive` accepts (a robot may have up to :data:`robodyn.model.manipulator.MAX_LINKS` for
#: loading, showing and the numeric routines): the symbolic recursion and what is done with it grow quickly with n.
#: Measured on a chain of float links, nested form, 2 shared cores: Newton-Euler with ``eqs.tau`` 13 s at 20 links,
#: about 85 s at 30, 93 s of CPU and 3.3 GB at 50, more than 6 GB at 100; ``robodyn simulate --t-end 0.1`` 22 s at
#: 10 links and more than 120 s of CPU at 20; 200 links took 5 GB in 240 s without finishing.
MAX_DERIVE_LINKS = 20


def method_name(method: str) -> str:
    key = method.strip().lower()
    if key not in METHODS:
        raise DerivationError(
            f"unknown method {method!r}; available: {', '.join(AVAILABLE)} (aliases: ne, le, gd)"
        )
    return METHODS[key]


def _joint_se(n: int) -> tuple[list[SeExpr], list[SeExpr], list[SeExpr]]:
    return joint_symbols(n).symengine()


def _column(values: list[SeExpr]) -> se.DenseMatrix:
    return se.DenseMatrix([[v] for v in values])


InverseDynamics = Callable[..., list[SeExpr]]
Components = Callable[..., dict[str, se.DenseMatrix]]


def _damping(robot: Manipulator, qd: list[SeExpr]) -> se.DenseMatrix:
    """The joint friction: b qd and the Coulomb friction (:func:`robodyn.recursions.arm.joint_friction`)."""
    ops = SymengineOps()
    return _column([joint_friction(ops, to_se(link.damping), coulomb_scalars(ops, link.coulomb_parts), qd[i])
                    for i, link in enumerate(robot.links)])


def _spring(robot: Manipulator, q: list[SeExpr]) -> se.DenseMatrix:
    """The joint springs: k (q - q_ref) (:func:`robodyn.recursions.arm.link_spring`), 0 where a joint has none."""
    ops = SymengineOps()
    return _column([to_se(link_spring(ops, link, q[i])) for i, link in enumerate(robot.links)])


def split_inverse_dynamics(
    robot: Manipulator, inverse_dynamics: InverseDynamics, progress: Progress | None = None
) -> dict[str, se.DenseMatrix]:
    """The parts of tau from a recursive inverse-dynamics algorithm (Newton-Euler, Kane).

    tau is linear in qdd, gravity and the tip load and quadratic in qd, so each part is one
    run of the recursion with the other inputs at zero (each run takes milliseconds).
    """
    n = robot.n
    q, qd, qdd = _joint_se(n)
    zero = [se.Integer(0)] * n
    zero3 = [se.Integer(0)] * 3
    gravity = [to_se(x) for x in robot.gravity]
    tip_f = [to_se(x) for x in robot.tip_force]
    tip_n = [to_se(x) for x in robot.tip_moment]

    def run(qd_: list, qdd_: list, g_: list, f_: list, n_: list) -> se.DenseMatrix:
        return _column(inverse_dynamics(robot, q, qd_, qdd_, g_, f_, n_, progress))

    damping, spring = _damping(robot, qd), _spring(robot, q)
    return {
        "tau": run(qd, qdd, gravity, tip_f, tip_n) + spring,
        "M": run(zero, qdd, zero3, zero3, zero3).jacobian(_column(qdd)),
        "h": run(qd, zero, zero3, zero3, zero3) - damping,
        "G": run(zero, zero, gravity, zero3, zero3),
        "load": run(zero, zero, zero3, tip_f, tip_n),
        "damping": damping,
        "spring": spring,
    }


def assemble_components(
    robot: Manipulator, components: Components, progress: Progress | None = None
) -> dict[str, se.DenseMatrix]:
    """tau = M qdd + h + G + damping + spring + load from a method that gives M, h, G and load directly
    (Lagrange-Euler, d'Alembert, EMDEG); any further parts it returns are kept as extras."""
    n = robot.n
    q, qd, qdd = _joint_se(n)
    parts = dict(components(robot, q, qd, progress))
    parts["damping"], parts["spring"] = _damping(robot, qd), _spring(robot, q)
    parts["tau"] = (parts["M"] * _column(qdd) + parts["h"] + parts["G"] + parts["damping"] + parts["spring"]
                    + parts["load"])
    return parts


_BUILDERS: dict[str, Callable[[Manipulator, Progress | None], dict[str, se.DenseMatrix]]] = {
    "newton-euler": lambda robot, progress: split_inverse_dynamics(robot, newton_euler.inverse_dynamics, progress),
    "lagrange-euler": lambda robot, progress: assemble_components(robot, lagrange_euler.components, progress),
    "dalembert": lambda robot, progress: assemble_components(robot, dalembert.components, progress),
    "kane": lambda robot, progress: split_inverse_dynamics(robot, kane.inverse_dynamics, progress),
    "emdeg": lambda robot, progress: assemble_components(robot, emdeg.components, progress),
}


def derive(robot: Manipulator, method: str = "newton-euler", *, progress: Progress | None = None,
           expand: bool | None = None) -> Equations:
    """Derive the equations of motion of ``robot`` symbolically.

    ``method``: ``"newton-euler"`` (``"ne"``), ``"lagrange-euler"`` (``"le"``), ``"dalembert"``
    (``"gd"``, generalized d'Alembert; its rotational/translational split is in ``eqs.extras``)
    ``"kane"`` (Angeles, Ma and Rojas' algorithm) or ``"emdeg"`` (Burdick's structure-exploiting
    method: M from composite quantities, c and b by the Christoffel structure rules).
    ``progress``, if given, is called with a short description after each step. ``expand``: the form of
    ``eqs.tau``, ``eqs.M``, ... (:mod:`robodyn.equations`): ``True`` expanded (canonical), ``False`` nested
    (the recursion's expressions, common subexpressions shared: fast and small for any arm), ``None`` expanded
    where that stays small (the default rule of :mod:`robodyn.equations`: up to three joints or every fixed angle
    a multiple of pi/2, at most :data:`EXPAND_AUTO_MAX_JOINTS` joints, and an estimate made before expanding
    within :data:`robodyn.equations.EXPAND_BUDGET`), else nested. Expanded, float coefficients below
    :data:`robodyn.equations.COEFFICIENT_FLOOR` of the largest of their part are dropped as rounding noise (exact
    ones never).

    Every method handles kinematic trees (``robot.parents``): each recursion runs over the parent
    array, and joints on different branches are uncoupled in M (M[i, k] = 0 unless one of i, k is an
    ancestor of the other). A robot of more than :data:`MAX_DERIVE_LINKS` links is refused in one line.
    Kane's method, written in Angeles' HD notation, refuses links with a fixed
    ``placement`` (which many trees need to put two branches on one link) in one line.
    """
    if not isinstance(robot, Manipulator):
        raise TypeError(f"derive() expects a Manipulator, got {type(robot).__name__}")
    name = method_name(method)
    robot.check_fixed_base()
    if robot.n > MAX_DERIVE_LINKS:
        raise ModelError(f"{robot.n} links: symbolic derivation is limited to {MAX_DERIVE_LINKS} (it grows quickly "
                         f"with n; the numeric routines take up to {MAX_LINKS})", field="links")
    start = time.perf_counter()
    parts = _BUILDERS[name](robot, progress)
    if robot.couplings:  # the tree's equations, in the independent coordinates and projected
        parts = _coupled(robot, parts)
    main = {key: parts.pop(key) for key in PARTS}
    return Equations(robot, name, seconds=time.perf_counter() - start, extras=parts, expand=expand, **main)


def _coupled(robot: Manipulator, parts: dict[str, se.DenseMatrix]) -> dict[str, se.DenseMatrix]:
    """The parts of the tree (in its joints' q, qd, qdd) for coupled coordinates (:mod:`robodyn.model.couplings`):
    q_tree = g(q), qd_tree = W qd, qdd_tree = W qdd + Wdot qd substituted (linear couplings: g = G q + c, W = G,
    Wdot = 0), every column projected with W^T and M as W^T M W; with four-bars, h gains W^T M_tree Wdot qd."""
    tree, free = joint_symbols(robot.n).symengine(), joint_symbols(robot.nv).symengine()
    closure = robot.closure_map()
    G_, c_ = closure.G, closure.c
    G = se.DenseMatrix(robot.n, robot.nv, [to_se(x) for x in G_])
    closed = closure.closed_rows(list(free[0]), to_se)
    if closed:  # the four-bars' rows: W's entries, and the tree's accelerations' part in qd^2
        G = se.DenseMatrix(G)
        for j, (_, r, _, column) in closed.items():
            G[j, column] = r
    mapping: dict[SeExpr, SeExpr] = {}
    for tree_symbols, free_symbols, offset in zip(tree, free, (c_, None, None), strict=True):
        values = G * se.DenseMatrix(robot.nv, 1, list(free_symbols))
        for k, symbol in enumerate(tree_symbols):
            mapping[symbol] = values[k] + (to_se(offset[k]) if offset is not None else 0)
    bias = se.zeros(robot.n, 1)
    for j, (p, _, curvature, column) in closed.items():
        mapping[tree[0][j]] = p
        mapping[tree[2][j]] = mapping[tree[2][j]] + curvature * free[1][column] ** 2
        bias[j] = curvature * free[1][column] ** 2
    out = {}
    for key, matrix in parts.items():
        if matrix.rows != robot.n:  # not a joint-indexed part (none of the main ones)
            continue
        substituted = matrix.xreplace(mapping)
        out[key] = G.T * substituted * G if matrix.cols == robot.n else G.T * substituted
        if closed and key == "h":
            out[key] = out[key] + G.T * (parts["M"].xreplace(mapping) * bias)
    return out

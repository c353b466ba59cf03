"""Planar four-bars that are not parallelograms, eliminated in closed form: the classical position solution.

A loop of :mod:`robodyn.model.parallelograms`' kind (revolute joints about parallel axes n, a revolute closing
joint about n) with four bodies, each carrying a side of nonzero length, and three tree joints, one of them
actuated, is a four-bar. Walking the loop (bodies b_0..b_3, side w_k of b_k at q = 0 from joint J_k to J_k+1, J_0
= J_4 the closing joint, J_1..J_3 the tree joints), the actuated joint J_m fixes the dyad b_m-1, b_m: in b_m-1's
frame (psi_m-1 taken out, 2-D coordinates in the plane normal to n)

    a_m-1 = w_m-1,   a_m = Rot(kappa x) w_m   (x the actuated angle, kappa = +-1),
    f = -(a_m-1 + a_m)   (from J_m+1 to J_m-1),   d2 = f.f,

and the other dyad closes the triangle of sides d, l1 = |w_m+1|, l2 = |w_m+2|:

    A = d2 + l1^2 - l2^2,   D = 4 l1^2 d2 - A^2 (>= 0: the loop assembles),
    u = (A f + sigma sqrt(D) J f) / (2 d2),   v = f - u          (J: a quarter turn about n)

with sigma = +-1 the assembly branch (the side of the diagonal f that J_m+2 lies on: sigma = sign(f x u)). Each
passive joint's angle is the angle between the sides it joins, less theirs at q = 0, one atan2: for the joint at
J_i, q_j = eps_i atan2(p x a_i, p . a_i), p = (w_i-1 . w_i) a_i-1 + (w_i-1 x w_i) J a_i-1 (a_i-1 turned by the
sides' angle at q = 0; eps_i = +-1 as the walk goes down or up the tree at J_i).

The rates come from the loop Jacobian (the closure e + u + v = 0 differentiated, u and v turning with their
bodies): per unit of xd, the bodies turn at omega_m = kappa,

    omega_m+1 = -kappa (a_m x v) / (u x v),   omega_m+2 = kappa (a_m x u) / (u x v),

and the accelerations' part in xd^2 (c0 = -a_m - u omega_m+1^2 - v omega_m+2^2)

    alpha_m+1 = -(c0 . v) / (u x v),   alpha_m+2 = (c0 . u) / (u x v),

so that a passive joint's qd = W(x) xd (W = eps_i (omega_i - omega_i-1) = dq/dx) and qdd = W xdd + W'(x) xd^2
(W' = eps_i (alpha_i - alpha_i-1)). u x v = 0 is a dead point (D = 0), where W is singular.

The branch: ``branch`` on the loop, +1 or -1 (sigma), or ``"reference"`` (the default: the branch of the loop's
``reference`` configuration, joint angles of the tree, by default the tree's q = 0, which must then close the
loop) or ``"other"`` (the other one). Everything here is
exact where the description is (sympy expressions of x and the robot's parameters), and the closure is a short
straight-line program (:class:`FourBar`): its steps, then each passive joint's position, rate and curvature.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from robodyn.errors import ModelError

#: The actuated angle in a four-bar's expressions (substituted by each consumer with its own q).
ANGLE = sympy.Symbol("__fourbar_angle")
#: The names of a loop's branches, besides +1 and -1.
BRANCH_NAMES = ("reference", "other")


@dataclass(frozen=True, repr=False)
class FourBar:
    """One four-bar's closed form: ``leader`` (the actuated joint, 0-based), ``joints`` (its two passive ones),
    ``steps`` ((symbol, expression) in order, each of :data:`ANGLE`, the parameters and the earlier steps'
    symbols), and per passive joint its ``position``, ``rate`` (dq/dx) and ``curvature`` (d2q/dx2) in the steps'
    symbols; ``discriminant``: the step that is negative where the loop does not assemble; ``branch``: sigma."""

    loop: str
    leader: int
    joints: tuple[int, ...]
    steps: tuple[tuple[sympy.Symbol, sympy.Expr], ...]
    position: tuple[sympy.Expr, ...]
    rate: tuple[sympy.Expr, ...]
    curvature: tuple[sympy.Expr, ...]
    discriminant: sympy.Symbol
    branch: int

    def __repr__(self) -> str:
        return f"FourBar(loop={self.loop!r}, leader={self.leader}, joints={self.joints}, branch={self.branch:+d})"

    def evaluate(self, x: Any, convert: Callable[[Any], Any] | None = None, value: Callable[[Any], Any] | None = None
                 ) -> tuple[list[Any], list[Any], list[Any]]:
        """(positions, rates, curvatures) at x: each step substituted in turn. ``convert``: applied to every
        expression first (``robodyn.algebra.to_se`` for symengine; x must then be one); ``value`` (if given) to each
        step's result (e.g. a program builder's temporary)."""
        to = convert if convert is not None else (lambda e: e)
        known: dict[Any, Any] = {to(ANGLE): x}

        def at(expr: Any) -> Any:
            return to(expr).xreplace(known)

        for symbol, expr in self.steps:
            out = at(expr)
            known[to(symbol)] = value(out) if value is not None else out
        return [at(p) for p in self.position], [at(r) for r in self.rate], [at(c) for c in self.curvature]


def _cross(a: Sequence[Any], b: Sequence[Any]) -> Any:
    return a[0] * b[1] - a[1] * b[0]


def _dot(a: Sequence[Any], b: Sequence[Any]) -> Any:
    return a[0] * b[0] + a[1] * b[1]


def _quarter(a: Sequence[Any]) -> tuple[Any, Any]:
    return (-a[1], a[0])


def _refuse(name: str, problem: str) -> ModelError:
    return ModelError(f"loop {name!r}: {problem}", field="loops")


def plane(n: sympy.Matrix) -> tuple[sympy.Matrix, sympy.Matrix]:
    """(e1, e2): a right-handed basis of the plane normal to the unit vector n (e2 = n x e1)."""
    pick = min(range(3), key=lambda i: abs(float(sympy.sympify(n[i]).evalf())))
    t = sympy.Matrix([1 if i == pick else 0 for i in range(3)])
    e1 = t - n * (n.T * t)[0]
    norm = sympy.sqrt((e1.T * e1)[0])
    e1 = e1 / norm if e1.has(sympy.Float) else sympy.simplify(e1 / norm)
    return e1, n.cross(e1)


def four_bar(name: str, walk: Sequence[tuple[int, Any]], steps_of: Callable[[int], tuple[int, int]],
             actuated: int, branch: Any, closed: Callable[[Sequence[Any]], bool],
             reference: Sequence[Any] | None = None) -> FourBar:
    """The closed form of one four-bar (see the module docstring). ``walk``: the four bodies in walking order with
    their sides (2-D, sympy), ``steps_of(i)``: (the tree joint at J_i, eps_i) for i = 1, 2, 3, ``actuated``: the
    walk's index m of the actuated joint, ``branch``: the loop's field, ``closed(sides)``: whether sides close the
    loop (exactly or within the tolerance); ``reference``: the sides at the loop's reference configuration (None:
    those at q = 0)."""
    w = [tuple(side) for _, side in walk]
    m = actuated
    ip, i1, i2 = (m - 1) % 4, (m + 1) % 4, (m + 2) % 4
    leader, kappa = steps_of(m)
    sigma = _branch(name, branch, [tuple(x) for x in reference] if reference is not None else w, i1, i2, closed,
                    "the loop's reference configuration" if reference is not None else "the tree's q = 0 configuration")
    sym = {key: sympy.Symbol(f"__fourbar_{key}") for key in (
        "c", "s", "amx", "amy", "fx", "fy", "d2", "A", "D", "r", "h", "ux", "uy", "vx", "vy", "iC", "w1", "w2",
        "c0x", "c0y")}
    l1, l2 = _dot(w[i1], w[i1]), _dot(w[i2], w[i2])
    c, s = sym["c"], sym["s"]
    am = (sym["amx"], sym["amy"])
    f = (sym["fx"], sym["fy"])
    u, v = (sym["ux"], sym["uy"]), (sym["vx"], sym["vy"])
    steps: list[tuple[sympy.Symbol, Any]] = [
        (c, sympy.cos(ANGLE)), (s, kappa * sympy.sin(ANGLE)),
        (am[0], c * w[m][0] - s * w[m][1]), (am[1], s * w[m][0] + c * w[m][1]),
        (f[0], -(w[ip][0] + am[0])), (f[1], -(w[ip][1] + am[1])),
        (sym["d2"], _dot(f, f)), (sym["A"], sym["d2"] + l1 - l2),
        (sym["D"], 4 * l1 * sym["d2"] - sym["A"] ** 2), (sym["r"], sigma * sympy.sqrt(sym["D"])),
        (sym["h"], 1 / (2 * sym["d2"])),
        (u[0], sym["h"] * (sym["A"] * f[0] - sym["r"] * f[1])), (u[1], sym["h"] * (sym["A"] * f[1] + sym["r"] * f[0])),
        (v[0], f[0] - u[0]), (v[1], f[1] - u[1]),
        (sym["iC"], 1 / _cross(u, v)),
    ]
    a: dict[int, tuple[Any, Any]] = {ip: w[ip], m: am, i1: u, i2: v}
    steps += [(sym["w1"], -kappa * _cross(am, v) * sym["iC"]), (sym["w2"], kappa * _cross(am, u) * sym["iC"])]
    omega = {ip: 0, m: kappa, i1: sym["w1"], i2: sym["w2"]}
    c0 = (sym["c0x"], sym["c0y"])
    steps += [(c0[k], -am[k] - u[k] * sym["w1"] ** 2 - v[k] * sym["w2"] ** 2) for k in (0, 1)]
    alpha = {ip: 0, m: 0, i1: -_dot(c0, v) * sym["iC"], i2: _dot(c0, u) * sym["iC"]}
    joints, position, rate, curvature = [], [], [], []
    for i in (1, 2, 3):
        if i == m:
            continue
        joint, eps = steps_of(i)
        before = a[i - 1]
        cosine, sine = sympy.simplify(_dot(w[i - 1], w[i])), sympy.simplify(_cross(w[i - 1], w[i]))
        p = tuple(cosine * before[k] + sine * _quarter(before)[k] for k in (0, 1))
        joints.append(joint)
        position.append(eps * sympy.atan2(_cross(p, a[i]), _dot(p, a[i])))
        rate.append(eps * (omega[i] - omega[i - 1]))
        curvature.append(eps * (alpha[i] - alpha[i - 1]))
    return FourBar(name, leader, tuple(joints), tuple((k, sympy.sympify(e)) for k, e in steps),
                   tuple(position), tuple(sympy.sympify(x) for x in rate), tuple(sympy.sympify(x) for x in curvature),
                   sym["D"], sigma)


def _branch(name: str, branch: Any, w: Sequence[Any], i1: int, i2: int, closed: Callable[[Sequence[Any]], bool],
            where: str) -> int:
    """sigma from the loop's ``branch`` field: +1, -1, or the reference configuration's (``w``: its sides, ``where``:
    which configuration that is) or its other."""
    if branch in (1, -1) and not isinstance(branch, bool):
        return int(branch)
    if branch is None:
        branch = "reference"
    if branch not in BRANCH_NAMES:
        raise _refuse(name, f"branch: {branch!r:.40} is not +1, -1, {' or '.join(BRANCH_NAMES)}")
    if not closed(w):
        raise _refuse(name, f"{where} does not close this four-bar: give its branch (+1 or -1) or a reference")
    # at the reference, u = w_m+1 and v = w_m+2: sigma = sign(f x u) = sign(v x u)
    side = sympy.sympify(_cross(w[i2], w[i1]))
    value = float(side.evalf()) if not side.free_symbols else None
    if value is None or value == 0:
        raise _refuse(name, f"{where} is a dead point (or has parameters): give its branch (+1 or -1)")
    reference = 1 if value > 0 else -1
    return reference if branch == "reference" else -reference


__all__ = ["ANGLE", "BRANCH_NAMES", "FourBar", "four_bar", "plane"]

"""Parallelograms, detected and eliminated exactly: a loop closure becomes linear couplings of its passive joints.

A planar loop (every joint of it revolute, every axis parallel to one direction n, the closing joint revolute
about n too) moves in the plane normal to n. Walking the loop from the closing frame on its first link, through
the tree to the second link and back through the closing joint, each body of the loop carries one side: the
vector, normal to n, from the joint axis the walk enters it by to the one it leaves it by (two coaxial joints on
one body give a side of length zero, which drops out). A body's orientation about n is psi = sum s_j q_j + its
orientation at q = 0, over the joints j between it and the loop's common ancestor, s_j = +-1 as joint j's axis
points along n or against it: rotations about parallel axes add. The loop is closed when its sides, each turned
by its psi, add up to zero.

When the loop has four sides of nonzero length, the opposite ones of equal length, it is a parallelogram, and it
stays one (the branch every palletizer runs on; its other branch, the anti-parallelogram, is reached only through
the flat configuration): opposite sides stay antiparallel, Rot(n, psi_c) w_c = -Rot(n, psi_a) w_a, so

    psi_c(q) - psi_a(q) = the angle from w_c to -w_a about n     (w: the sides at q = 0)

for both pairs: two equations, linear in the joint angles with coefficients +-1, which are exactly the loop's two
planar constraints. The equations of every loop, solved for the passive joints (the joints of the loops that are
neither actuated nor coupled), give each passive angle as +-q_i +-q_j + const: linear couplings (a
:class:`~robodyn.model.couplings.Coupling` with several leaders, ``loop`` set), and the robot is a coupled tree:
every coupled path (derive, programs and code, compile, the numeric engine, forward dynamics, simulation,
linearisation) works unchanged on it.

Signs, sides and constants come from the geometry (the tree's transforms at q = 0, in the loop's common
ancestor's frame), never by hand. Where the description is exact (integers, rationals, pi, sqrt, parameters)
every test (parallel axes, equal sides, the closing frames at one height along n) is exact (``sympy.simplify``
to zero); where it holds floats, a test passes within :data:`TOLERANCE` relative to the loop's size.

A loop of four sides that is no parallelogram, its four bodies joined by three tree joints and the closing one, is
a planar four-bar: its two passive joints are given in closed form of its actuated one (atan2 and sqrt, the
assembly branch from the loop's ``branch`` or the tree's q = 0 configuration; :mod:`robodyn.model.fourbars`), as
couplings that carry the closed form (``closure``). A loop that is neither (a planar five-bar, a loop in space, a
prismatic or spherical joint in it) is left as it is: an *implicit* loop (:func:`eliminate_loops` names it), whose
constraints phi(q_tree) = 0 the numeric engine solves (:mod:`robodyn.numeric.closed_chains`); its passive joints
are then none of the robot's coordinates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sympy

from robodyn.errors import ModelError
from robodyn.model.couplings import Coupling, resolve
from robodyn.model.fourbars import four_bar, plane
from robodyn.model.link import Link
from robodyn.model.loops import Loop, loop_joints

#: Relative tolerance of the geometric tests where the description holds floats (lengths compared with the
#: loop's largest side, axes as unit vectors): tight enough that only a parallelogram by design passes.
TOLERANCE = 1e-9


def _rot_z(theta: Any) -> sympy.Matrix:
    c, s = sympy.cos(theta), sympy.sin(theta)
    return sympy.Matrix([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])


def _rot_x(alpha: Any) -> sympy.Matrix:
    c, s = sympy.cos(alpha), sympy.sin(alpha)
    return sympy.Matrix([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1]])


def _trans(x: Any, y: Any, z: Any) -> sympy.Matrix:
    T = sympy.eye(4)
    T[:3, 3] = sympy.Matrix([x, y, z])
    return T


def _split(link: Link, convention: str) -> tuple[sympy.Matrix, sympy.Matrix]:
    """(B, S C) of the link's transform at q = 0 (:mod:`robodyn.model.dh`): the joint's axis is z after B."""
    screw = _rot_z(link.theta) * _trans(0, 0, link.d)
    if convention == "standard":
        B, rest = sympy.eye(4), screw * _trans(link.a, 0, 0) * _rot_x(link.alpha)
    else:
        B, rest = _rot_x(link.alpha) * _trans(link.a, 0, 0), screw
    if link.has_placement:
        B = sympy.Matrix(link.placement) * B
    return B, rest


class _Geometry:
    """The tree at q = 0: each link's frame and its joint's axis frame, in the base frame."""

    def __init__(self, links: Sequence[Link], convention: str, parents: Sequence[int]) -> None:
        self.frames: list[sympy.Matrix] = []
        self.axes: list[sympy.Matrix] = []
        for link, p in zip(links, parents, strict=True):
            B, rest = _split(link, convention)
            before = (self.frames[p] if p >= 0 else sympy.eye(4)) * B
            self.axes.append(before)
            self.frames.append(before * rest)

    def frame(self, k: int) -> sympy.Matrix:
        return self.frames[k] if k >= 0 else sympy.eye(4)


def _floating(expr: sympy.Expr) -> bool:
    return bool(expr.has(sympy.Float))


def _is_zero(expr: Any, scale: Any = 1) -> bool:
    """expr == 0: exactly (simplified) where it holds no float, else within TOLERANCE * scale."""
    expr = sympy.sympify(expr)
    if _floating(expr) and not expr.free_symbols:
        return abs(complex(expr.evalf())) <= TOLERANCE * max(1.0, abs(complex(sympy.sympify(scale).evalf())))
    if expr.is_number and not _floating(expr):
        return bool(sympy.simplify(expr) == 0)
    return bool(sympy.simplify(expr) == 0)


def _refuse(loop: Loop, problem: str) -> ModelError:
    return ModelError(f"loop {loop.name!r}: {problem}", field="loops")


class NotParallelogramError(ModelError):
    """A loop that is no parallelogram: not eliminated here (an implicit loop, :func:`eliminate_loops`)."""


def _unsupported(loop: Loop, why: str) -> ModelError:
    return NotParallelogramError(f"loop {loop.name!r}: {why}: not a parallelogram", field="loops")


class _LoopEquations:
    """One loop's geometry: its bodies in walking order, their sides and psi, and its two linear equations."""

    def __init__(self, loop: Loop, geometry: _Geometry, links: Sequence[Link], parents: Sequence[int]) -> None:
        self.loop = loop
        up_a, ancestor, up_b = loop_joints(loop, parents)
        self.up_a, self.up_b = up_a, up_b
        self.joints = up_a + up_b
        a, b = loop.links
        anc = geometry.frame(ancestor)
        to_anc = anc.inv() if ancestor >= 0 else sympy.eye(4)

        def local(T: sympy.Matrix) -> sympy.Matrix:
            return sympy.simplify(to_anc * T) if not _floating(T) else to_anc * T

        # the closing frames, and each joint's axis frame, in the ancestor's frame at q = 0
        close_a = local(geometry.frame(a) * sympy.Matrix(loop.placements[0]))
        close_b = local(geometry.frame(b) * sympy.Matrix(loop.placements[1]))
        axis = {j: local(geometry.axes[j]) for j in self.joints}
        for j in self.joints:
            if not links[j].revolute:
                raise _unsupported(loop, f"joint {j + 1} is prismatic")
        if loop.joint != "revolute":
            raise _unsupported(loop, f"its closing joint is {loop.joint}")
        direction = sympy.Matrix(loop.axis)
        n = close_a[:3, :3] * direction / sympy.sqrt(sum(x**2 for x in direction))
        self.n = n
        for j in self.joints:
            if not self._parallel(axis[j][:3, 2]):
                raise _unsupported(loop, f"joint {j + 1}'s axis is not parallel to the closing joint's (a loop in "
                                         "space)")
        if not self._parallel(close_b[:3, :3] * direction):
            raise _refuse(loop, "the closing joint's axis on the second link is not parallel to the one on the first")
        # signs: +1 where a joint turns about n, -1 where about -n
        self.sign = {j: 1 if sympy.sympify((axis[j][:3, 2].T * n)[0]).evalf() > 0 else -1 for j in self.joints}
        size = max([1, *(abs(float(x)) for j in self.joints for x in axis[j][:3, 3] if x.is_number)])
        height = (close_a[:3, 3] - close_b[:3, 3]).T * n
        if not _is_zero(height[0], size):
            raise _refuse(loop, f"the closing frames are {sympy.nsimplify(height[0])} apart along the joint axis: "
                                "the loop cannot close")
        # the walk: closing point on a, up a's branch to the ancestor, down b's branch, to the closing point on b
        points = [close_a[:3, 3]] + [axis[j][:3, 3] for j in up_a] + [axis[j][:3, 3] for j in reversed(up_b)] + \
            [close_b[:3, 3]]
        bodies = [*up_a, ancestor, *reversed(up_b)]
        self.psi = {k: self._psi(k, ancestor, parents) for k in bodies}
        sides = []
        for body, start, end in zip(bodies, points[:-1], points[1:], strict=True):
            w = end - start
            w = w - n * (n.T * w)[0]
            if not _floating(w):
                w = sympy.simplify(w)
            sides.append((body, w))
        scale = max([1.0, *(abs(complex(x.evalf())) for _, w in sides for x in w if x.is_number)])
        self.walk = sides  # every body of the loop in walking order, with its side (zero or not)
        self.sides = [(body, w) for body, w in sides if not all(_is_zero(x, scale) for x in w)]
        if len(self.sides) != 4:
            raise _unsupported(loop, f"{len(self.sides)} sides of nonzero length, not a four-bar's four")
        self.scale = scale
        #: opposite sides of equal length: a parallelogram (linear couplings); else a four-bar in closed form
        #: (:mod:`robodyn.model.fourbars`)
        self.parallelogram = all(_is_zero((u.T * u)[0] - (v.T * v)[0], scale**2)
                                 for (_, u), (_, v) in (self.sides[i::2] for i in (0, 1)))
        if not self.parallelogram and (len(self.walk) != 4 or len(self.joints) != 3):
            raise _unsupported(loop, "its opposite sides are not of equal length, and it is no four-bar of three "
                                     "tree joints")

    def _parallel(self, v: sympy.Matrix) -> bool:
        cross = self.n.cross(v)
        return all(_is_zero(x) for x in cross)

    def _psi(self, k: int, ancestor: int, parents: Sequence[int]) -> dict[int, int]:
        out: dict[int, int] = {}
        while k != ancestor:
            out[k] = self.sign[k]
            k = parents[k]
        return out

    def equations(self) -> list[tuple[dict[int, int], sympy.Expr]]:
        """psi_c - psi_a = angle(w_c -> -w_a) about n, for the two pairs of opposite sides: ({joint: coefficient},
        constant)."""
        out = []
        for i in (0, 1):
            (body_a, u), (body_c, w) = self.sides[i], self.sides[i + 2]
            coefficients: dict[int, int] = {}
            for j, s in self.psi[body_c].items():
                coefficients[j] = coefficients.get(j, 0) + s
            for j, s in self.psi[body_a].items():
                coefficients[j] = coefficients.get(j, 0) - s
            target = -u
            sine = (self.n.T * w.cross(target))[0]
            cosine = (w.T * target)[0]
            angle = sympy.atan2(sine, cosine) if not _floating(sine + cosine) else sympy.Float(
                sympy.atan2(sine, cosine).evalf(17))
            if not _floating(angle):
                angle = sympy.simplify(angle)
            out.append(({j: c for j, c in coefficients.items() if c != 0}, angle))
        return out

    def constraints(self) -> int:
        return 3 - self.loop.dof  # planar


def close_loops(links: Sequence[Link], convention: str, parents: Sequence[int], loops: Sequence[Loop],
                actuated: Sequence[int], couplings: Sequence[Coupling]) -> tuple[Coupling, ...]:
    """The robot's couplings: those given (``couplings``, resolved, none derived from a loop) and, with
    ``loops``, each passive joint's coupling derived from the parallelograms (see the module docstring)."""
    return eliminate_loops(links, convention, parents, loops, actuated, couplings)[0]


def eliminate_loops(links: Sequence[Link], convention: str, parents: Sequence[int], loops: Sequence[Loop],
                    actuated: Sequence[int], couplings: Sequence[Coupling]) -> tuple[tuple[Coupling, ...],
                                                                                   tuple[str, ...]]:
    """(:func:`close_loops`'s couplings, the names of the implicit loops: those that are no parallelogram, left to
    :mod:`robodyn.numeric.closed_chains`)."""
    names = [link.name for link in links]
    given = resolve([c for c in couplings if not c.loop], names)
    if not loops:
        if actuated and set(actuated) != {k for k in range(len(links)) if k not in {c.joint for c in given}}:
            raise ModelError("actuated joints are given without loops: every joint that no coupling moves is "
                             "actuated (give loops, or leave actuated out)", field="actuated")
        return given, ()
    derived, implicit = _derived(links, convention, parents, loops, actuated, given)
    return resolve(list(given) + derived, names), implicit


def _label(links: Sequence[Link], k: int) -> str:
    return f"{links[k].name!r}" if links[k].name else f"{k + 1}"


def _derived(links: Sequence[Link], convention: str, parents: Sequence[int], loops: Sequence[Loop],
             actuated: Sequence[int], given: Sequence[Coupling]) -> tuple[list[Coupling], tuple[str, ...]]:
    if not actuated:
        raise ModelError("a robot with loops needs its actuated joints (the others of each loop are passive)",
                         field="actuated")
    coupled = {int(c.joint): c for c in given}
    for k in actuated:
        if k in coupled:
            raise ModelError(f"joint {_label(links, k)} follows another (couplings) and cannot be actuated",
                             field="actuated")
    known = set(actuated)
    for loop in loops:  # the topology first: a loop with no actuated joint, whatever its geometry
        up_a, _, up_b = loop_joints(loop, parents)
        if not known & {*up_a, *up_b}:
            listed = ", ".join(_label(links, j) for j in sorted({*up_a, *up_b}))
            raise _refuse(loop, f"none of its joints ({listed}) is actuated")
    geometry = _Geometry(links, convention, parents)
    per_loop, implicit = [], []
    for loop in loops:
        try:
            per_loop.append(_LoopEquations(loop, geometry, links, parents))
        except NotParallelogramError:  # an implicit loop: its passive joints stay the tree's, solved numerically
            implicit.append(_implicit(loop, parents, known, coupled))
    passive: list[int] = []
    for eq in per_loop:
        mine = [j for j in eq.joints if j not in known and j not in coupled]
        if eq.constraints() > len(mine):
            raise _refuse(eq.loop, f"over-constrained: {eq.constraints()} constraints on {len(mine)} passive "
                                   f"joint{'s' if len(mine) != 1 else ''}")
        passive += [j for j in mine if j not in passive]
    held = {j for loop in implicit for j in _passive(loop, parents, known, coupled)}
    free = [k for k in range(len(links)) if k not in known and k not in coupled and k not in passive and k not in held]
    if free:
        raise ModelError(f"joint {_label(links, free[0])} is neither actuated, coupled nor in a loop",
                         field="actuated")
    names = tuple(loop.name for loop in implicit)
    if held & set(passive):
        raise ModelError(f"loop {names[0]!r} shares a passive joint with a parallelogram: not handled in this version",
                         field="loops")
    bars = [eq for eq in per_loop if not eq.parallelogram]  # four-bars, in closed form (robodyn.model.fourbars)
    per_loop = [eq for eq in per_loop if eq.parallelogram]
    closed_form = _four_bars(bars, per_loop, held, known, coupled)
    passive = [j for j in passive if not any(j in eq.joints for eq in bars)]
    if not per_loop:
        return closed_form, names
    rows: list[tuple[dict[int, sympy.Expr], sympy.Expr]] = []
    for eq in per_loop:
        for coefficients, angle in eq.equations():  # the given couplings substituted: q_j = sum r q_l + c
            row: dict[int, sympy.Expr] = {}
            constant = angle
            for j, a in coefficients.items():
                if j in coupled:
                    for leader, r in coupled[j].leaders:
                        row[int(leader)] = row.get(int(leader), 0) + a * r
                    constant = constant - a * coupled[j].offset
                else:
                    row[j] = row.get(j, 0) + a
            rows.append((row, constant))
    if len(rows) != len(passive):
        which = ", ".join(_label(links, j) for j in passive)
        raise ModelError(f"the loops' {len(rows)} constraints cannot fix the {len(passive)} passive joints "
                         f"({which}): actuate {'more' if len(rows) < len(passive) else 'fewer'} joints",
                         field="loops")
    A = sympy.Matrix([[row.get(j, 0) for j in passive] for row, _ in rows])
    if A.det() == 0:
        raise ModelError("the loops' constraints do not fix the passive joints "
                         f"({', '.join(_label(links, j) for j in passive)}): they depend on one another",
                         field="loops")
    inverse = A.inv()
    others = sorted({j for row, _ in rows for j in row if j not in passive})
    B = sympy.Matrix([[row.get(j, 0) for j in others] for row, _ in rows])
    constants = sympy.Matrix([constant for _, constant in rows])
    X, x0 = -inverse * B, inverse * constants  # q_passive = X q_others + x0
    owner = {j: next(eq.loop.name for eq in per_loop if j in eq.joints) for j in passive}
    out = []
    for i, j in enumerate(passive):
        terms = tuple((others[m], sympy.nsimplify(X[i, m]) if not _floating(X[i, m]) else X[i, m])
                      for m in range(len(others)) if X[i, m] != 0)
        offset = x0[i] if _floating(x0[i]) else sympy.simplify(x0[i])
        out.append(Coupling(j, leaders=terms, offset=offset, loop=owner[j]))
    return out + closed_form, names


def _four_bars(bars: Sequence[_LoopEquations], others: Sequence[_LoopEquations], held: set[int], known: set[int],
               coupled: Mapping[int, Coupling]) -> list[Coupling]:
    """Each four-bar's passive joints, in closed form of its actuated one (:mod:`robodyn.model.fourbars`)."""
    out = []
    for eq in bars:
        loop = eq.loop
        shared = set(eq.joints) & ({j for other in (*bars, *others) if other is not eq for j in other.joints} | held)
        if shared or set(eq.joints) & set(coupled):
            raise _refuse(loop, "a four-bar that shares a joint with another loop or a coupling: not handled in this "
                                "version")
        bodies = [body for body, _ in eq.walk]
        e1, e2 = plane(eq.n)
        walk = [(body, ((e1.T * w)[0], (e2.T * w)[0])) for body, w in eq.walk]

        def joint_at(i: int, bodies: list[int] = bodies, eq: _LoopEquations = eq) -> tuple[int, int]:
            """(the tree joint at J_i, eps_i): the walk goes up the tree (child to parent) or down at J_i."""
            up = bodies[i - 1] in eq.up_a
            joint = bodies[i - 1] if up else bodies[i]
            return joint, -eq.sign[joint] if up else eq.sign[joint]

        def closes(w: Sequence[Any], scale: Any = eq.scale) -> bool:
            return all(_is_zero(sum(x[k] for x in w), scale) for k in (0, 1))

        actuated = [i for i in (1, 2, 3) if joint_at(i)[0] in known]
        closure = four_bar(loop.name, walk, joint_at, actuated[0], loop.branch, closes, _at_reference(eq, walk))
        out += [Coupling(j, closure.leader, 1, 0, loop=loop.name, closure=closure) for j in closure.joints]
    return out


def _at_reference(eq: _LoopEquations, walk: Sequence[tuple[int, tuple[Any, Any]]]) -> list[tuple[Any, Any]] | None:
    """The loop's sides (2-D) at its reference configuration (each turned by its body's psi there); None without
    one (the tree's q = 0: the sides as they are)."""
    if not eq.loop.reference:
        return None
    angle = dict(eq.loop.reference)
    out = []
    for body, (x, y) in walk:
        psi = sum((s * angle.get(j, 0) for j, s in eq.psi[body].items()), sympy.Integer(0))
        c, s = sympy.cos(psi), sympy.sin(psi)
        out.append((c * x - s * y, s * x + c * y))
    return out


def _passive(loop: Loop, parents: Sequence[int], known: set[int], coupled: Mapping[int, Coupling]) -> list[int]:
    up_a, _, up_b = loop_joints(loop, parents)
    return [j for j in up_a + up_b if j not in known and j not in coupled]


def _implicit(loop: Loop, parents: Sequence[int], known: set[int], coupled: Mapping[int, Coupling]) -> Loop:
    """An implicit loop, once it is seen to have a passive joint (the numeric engine checks its Jacobian)."""
    if not _passive(loop, parents, known, coupled):
        raise _refuse(loop, "over-constrained: every one of its joints is actuated or coupled")
    return loop


__all__ = ["TOLERANCE", "NotParallelogramError", "close_loops", "eliminate_loops"]

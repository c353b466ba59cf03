"""Linear couplings of joints: coupled coordinates (mimic joints, gears, parallelograms), the linear case of closed
chains.

A :class:`Coupling` says that joint ``joint`` follows one joint or several: q_joint = sum_k r_k q_{l_k} + offset.
With one leader, ``Coupling(joint, leader, ratio, offset)``: q_joint = ratio q_leader + offset (URDF's ``<mimic
joint multiplier offset>``; a gear pair); with several, ``Coupling(joint, leaders={l1: r1, l2: r2}, offset=c)``
(a parallelogram's passive angle, +-q_i +-q_j + const). The robot's links stay a tree, and every recursion runs on
that tree; the couplings map the robot's *independent* coordinates q (the joints that follow none, in link order)
to the tree's:

    q_tree = G q + c,   qd_tree = G qd,   qdd_tree = G qdd,

G of n x nv (a 1 per independent joint, the ratios at each coupled joint's row in its leaders' columns) and c the
offsets. The generalised forces are projected with G^T (the principle of virtual work): tau = G^T tau_tree,
M = G^T M_tree G, h, G(q), damping and load likewise, so that M qdd + bias = tau with the independent q
(docs/guide/trees.md). So does Pinocchio's mimic model (``buildModelFromUrdf(path,
mimic=True)``); the same numbers, joints matched by name.

:func:`resolve` checks a robot's couplings (one-line ModelErrors) and resolves chains: a joint that follows a
joint that follows a third follows the third, the ratios multiplied and the terms of one leader added. A coupling
derived from a loop closure (:mod:`robodyn.model.parallelograms`) carries the loop's name in ``loop``; model files
write the loop, not its couplings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from robodyn.errors import ModelError
from robodyn.model.expr import expression_text, shown, to_expr


@dataclass(frozen=True)
class Coupling:
    """q_joint = sum ratio_k * q_leader_k + offset. ``joint`` and the leaders are links (0-based indices or link
    names; a Manipulator stores the indices); the ratios and ``offset`` numbers or expressions of the robot's
    parameters (rad or m, as the joints' own coordinates).

    One leader: ``Coupling(joint, leader, ratio, offset)``. Several: ``Coupling(joint, leaders={leader: ratio,
    ...}, offset=offset)`` (a mapping, or a sequence of (leader, ratio) pairs). ``leaders`` always holds every
    term, as (leader, ratio) pairs; ``leader`` and ``ratio`` are the first term's (the only one for a mimic joint
    or a gear; None and 0 for a joint the couplings hold constant). ``loop``: the loop closure the coupling was
    derived from ("" for a coupling given as such)."""

    joint: int | str
    leader: int | str | None = None
    ratio: Any = 1
    offset: Any = 0
    leaders: Any = None
    loop: str = ""
    #: A four-bar's passive joint: its closed form (:class:`robodyn.model.fourbars.FourBar`) of the one leader, the
    #: actuated joint (the ratio and offset then mean nothing: :func:`closure_map` reads the closed form).
    closure: Any = None

    def __post_init__(self) -> None:
        if self.leaders is None:
            if self.leader is None:
                raise ModelError(f"joint {shown(self.joint)}: a coupling needs a leader (or leaders)",
                                 field="couplings")
            terms: tuple[tuple[Any, sympy.Expr], ...] = ((self.leader, _number(self.ratio, "ratio", self.joint)),)
        else:
            if self.leader is not None:
                raise ModelError(f"joint {shown(self.joint)}: give leader and ratio, or leaders, not both",
                                 field="couplings")
            terms = _terms(self.leaders, self.joint)
        object.__setattr__(self, "leaders", terms)
        object.__setattr__(self, "leader", terms[0][0] if terms else None)
        object.__setattr__(self, "ratio", terms[0][1] if terms else sympy.Integer(0))
        object.__setattr__(self, "offset", _number(self.offset, "offset", self.joint))

    def subs(self, mapping: Any) -> Coupling:
        return Coupling(self.joint, leaders=tuple((k, r.subs(mapping)) for k, r in self.leaders),
                        offset=self.offset.subs(mapping), loop=self.loop, closure=self.closure)

    def describe(self, label: Any = None) -> str:
        """``joint 5 = -1 x joint 2 + 1 x joint 3 + pi/2`` (joints numbered from 1, or as ``label(k)`` names
        them)."""
        def name(k: Any) -> str:
            return label(k) if label is not None else f"joint {int(k) + 1}"

        if self.closure is not None:
            return f"{name(self.joint)} = closed form of {name(self.leader)} (four-bar {self.loop!r}, branch " \
                   f"{self.closure.branch:+d})"

        terms = " + ".join(f"{expression_text(r)} x {name(k)}" for k, r in self.leaders)
        return f"{name(self.joint)} = {terms + ' + ' if terms else ''}{expression_text(self.offset)}"


def _terms(value: Any, joint: object) -> tuple[tuple[Any, sympy.Expr], ...]:
    """``leaders`` as (leader, ratio) pairs, in the order given: from a mapping or a sequence of pairs."""
    pairs = list(value.items()) if isinstance(value, Mapping) else value
    if isinstance(pairs, str) or not isinstance(pairs, Iterable):
        raise ModelError(f"joint {shown(joint)}: leaders must map each leader to its ratio", field="couplings")
    out = []
    for pair in pairs:
        if isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2:
            raise ModelError(f"joint {shown(joint)}: leaders must map each leader to its ratio", field="couplings")
        out.append((pair[0], _number(pair[1], "ratio", joint)))
    return tuple(out)


def _number(value: Any, what: str, joint: object) -> sympy.Expr:
    """A coupling's ratio or offset as an expression; a refusal names the coupling by its joint."""
    try:
        return to_expr(value, what)
    except ModelError as exc:
        raise ModelError(f"joint {shown(joint)}: {what}: {exc.problem}", field="couplings") from None


def _index(entry: object, names: dict[str, int], n: int, what: str) -> int:
    if isinstance(entry, str):
        if entry not in names:
            raise ModelError(f"{what}: no link is named {shown(entry)}", field="couplings")
        return names[entry]
    if isinstance(entry, bool) or not isinstance(entry, int) or not 0 <= entry < n:
        raise ModelError(f"{what}: {shown(entry)} is not a link index (0 to {n - 1}) or a link name",
                         field="couplings")
    return entry


def resolve(value: object, link_names: Sequence[str]) -> tuple[Coupling, ...]:
    """``couplings`` checked and resolved: Couplings (or mappings with keys joint, leader, ratio, offset, leaders)
    to Couplings of link indices, sorted by joint, every leader an independent joint (chains resolved), the leaders
    of each in link order."""
    if value is None:
        return ()
    if isinstance(value, str | Coupling) or not isinstance(value, Iterable):
        raise ModelError("expected a sequence of Couplings", field="couplings")
    n = len(link_names)
    names = {name: k for k, name in enumerate(link_names) if name}

    def label(k: int) -> str:  # the link's name where it has one (URDF joints do), else its number from 1
        return shown(link_names[k]) if link_names[k] else f"{k + 1}"

    direct: dict[int, Coupling] = {}
    for entry in value:
        if isinstance(entry, dict):
            try:
                entry = Coupling(**entry)
            except TypeError as exc:
                raise ModelError(str(exc).replace("__init__() ", ""), field="couplings") from None
        if not isinstance(entry, Coupling):
            raise ModelError(f"expected a Coupling, got {type(entry).__name__}", field="couplings")
        joint = _index(entry.joint, names, n, "joint")
        terms: dict[int, sympy.Expr] = {}
        for leader_entry, ratio in entry.leaders:
            leader = _index(leader_entry, names, n, f"joint {label(joint)}: leader")
            if leader == joint:
                raise ModelError(f"joint {label(joint)} cannot follow itself", field="couplings")
            if leader in terms:
                raise ModelError(f"joint {label(joint)}: leader {label(leader)} is given twice", field="couplings")
            if ratio == 0 and not entry.loop:
                raise ModelError(f"joint {label(joint)}: a ratio of 0 (lock the joint instead)", field="couplings")
            terms[leader] = ratio
        if not terms and not entry.loop:
            raise ModelError(f"joint {label(joint)}: a coupling without a leader", field="couplings")
        if joint in direct:
            raise ModelError(f"joint {label(joint)} is coupled twice", field="couplings")
        direct[joint] = Coupling(joint, leaders=tuple(terms.items()), offset=entry.offset, loop=entry.loop,
                                 closure=entry.closure)
    resolved: dict[int, tuple[dict[int, sympy.Expr], sympy.Expr]] = {}

    def expand(joint: int, path: tuple[int, ...]) -> tuple[dict[int, sympy.Expr], sympy.Expr]:
        """q_joint over independent joints: q_j = sum r_l (its own terms) + o_j, each leader expanded in turn."""
        if joint in resolved:
            return resolved[joint]
        if joint in path:
            cycle = " -> ".join(label(k) for k in (*path[path.index(joint):], joint))
            raise ModelError(f"the couplings form a cycle: links {cycle}", field="couplings")
        terms: dict[int, sympy.Expr] = {}
        offset = direct[joint].offset
        for leader, ratio in direct[joint].leaders:
            if direct[joint].closure is not None and leader in direct:
                raise ModelError(f"joint {label(joint)}: a four-bar's actuated joint {label(leader)} cannot follow "
                                 "another", field="couplings")
            if leader not in direct:
                terms[leader] = terms.get(leader, 0) + ratio
                continue
            inner, inner_offset = expand(leader, (*path, joint))  # q_j = r (sum r_m q_m + o_l) + ...
            for k, r in inner.items():
                terms[k] = terms.get(k, 0) + ratio * r
            offset = offset + ratio * inner_offset
        single = len(direct[joint].leaders) == 1 and direct[joint].leaders[0][0] not in direct
        if not single:  # a chain or several leaders: expanded (one direct leader stays exactly as given)
            terms = {k: sympy.expand(r) for k, r in terms.items()}
            terms = {k: r for k, r in terms.items() if r != 0}
            offset = sympy.expand(offset)
        resolved[joint] = (terms, offset)
        return resolved[joint]

    out = []
    for joint in sorted(direct):
        terms, offset = expand(joint, ())
        leaders = tuple(sorted(terms.items()))
        if len(leaders) == 1:
            out.append(Coupling(joint, leaders[0][0], leaders[0][1], offset, loop=direct[joint].loop,
                                closure=direct[joint].closure))
        else:
            out.append(Coupling(joint, leaders=leaders, offset=offset, loop=direct[joint].loop))
    return tuple(out)


def independent(n: int, couplings: Sequence[Coupling]) -> tuple[int, ...]:
    """The links that follow none, in link order: the robot's independent coordinates."""
    coupled = {c.joint for c in couplings}
    return tuple(k for k in range(n) if k not in coupled)


def coupling_map(n: int, couplings: Sequence[Coupling]) -> tuple[sympy.Matrix, sympy.Matrix]:
    """(G, c) with q_tree = G q + c: G of n x nv (0, 1 and the ratios), c of n x 1 (the offsets). Linear couplings
    only: a four-bar's closed form is :func:`closure_map`'s (a one-line ModelError here)."""
    closed = next((c for c in couplings if c.closure is not None), None)
    if closed is not None:
        raise ModelError(f"loop {closed.loop!r} is a four-bar, in closed form: its map q_tree = g(q) is not linear "
                         "(robodyn.model.couplings.closure_map)", field="loops")
    closure = closure_map(n, couplings)
    return closure.G, closure.c


@dataclass(frozen=True)
class ClosureMap:
    """The map from the robot's independent coordinates to the tree's, in one place (docs/guide/trees.md):
    q_tree = g(q), qd_tree = W(q) qd, qdd_tree = W(q) qdd + b(q, qd) (b = Wdot qd), and every
    generalised force projected with W^T. Linear couplings (mimic joints, gears, parallelograms) are the linear
    part, g(q) = G q + c, W = G, b = 0; a four-bar's passive joints (:mod:`robodyn.model.fourbars`) its rows in
    closed form of their actuated joint: ``bars``, each (the leader's column in q, the closed form)."""

    G: sympy.Matrix
    c: sympy.Matrix
    bars: tuple[tuple[int, Any], ...] = ()

    @property
    def linear(self) -> bool:
        return not self.bars

    def closed_rows(self, q: Sequence[Any], convert: Any = None, value: Any = None
                    ) -> dict[int, tuple[Any, Any, Any, int]]:
        """{tree joint: (its position, rate dq/dx, curvature d2q/dx2, the leader's column)} of every four-bar's
        passive joint at ``q`` (expressions of the independent coordinates): see
        :meth:`robodyn.model.fourbars.FourBar.evaluate` for ``convert`` and ``value``."""
        out: dict[int, tuple[Any, Any, Any, int]] = {}
        for column, bar in self.bars:
            positions, rates, curvatures = bar.evaluate(q[column], convert, value)
            for j, p, r, k in zip(bar.joints, positions, rates, curvatures, strict=True):
                out[j] = (p, r, k, column)
        return out


def closure_map(n: int, couplings: Sequence[Coupling]) -> ClosureMap:
    """The :class:`ClosureMap` of a robot's couplings (linear ones and four-bars' closed forms)."""
    linear = [c for c in couplings if c.closure is None]
    closed = [c for c in couplings if c.closure is not None]
    free = independent(n, couplings)
    column = {k: j for j, k in enumerate(free)}
    G = sympy.zeros(n, len(free))
    c = sympy.zeros(n, 1)
    for k in free:
        G[k, column[k]] = 1
    for coupling in linear:
        for leader, ratio in coupling.leaders:
            G[int(coupling.joint), column[int(leader)]] = ratio
        c[int(coupling.joint)] = coupling.offset
    bars: dict[str, tuple[int, Any]] = {}
    for coupling in closed:
        bars.setdefault(coupling.loop, (column[int(coupling.closure.leader)], coupling.closure))
    return ClosureMap(G, c, tuple(bars.values()))


def refuse_coupled(robot: Any, feature: str, instead: str = "") -> None:
    """One ModelError (field ``couplings``) where ``robot`` has couplings and ``feature`` is not yet offered for
    coupled joints: a one-line refusal rather than an answer in the tree's coordinates."""
    if getattr(robot, "couplings", ()):
        raise ModelError(f"{feature} is not available with coupled joints ({robot.name} has "
                         f"{len(robot.couplings)}){'; ' + instead if instead else ''}", field="couplings")


__all__ = ["ClosureMap", "Coupling", "closure_map", "coupling_map", "independent", "refuse_coupled", "resolve"]

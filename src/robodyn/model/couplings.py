"""Linear couplings of joints: coupled coordinates (mimic joints, gears), the linear case of closed chains.

A :class:`Coupling` says that joint ``joint`` follows joint ``leader``: q_joint = ratio q_leader + offset
(URDF's ``<mimic joint multiplier offset>``; a gear pair; a parallelogram's passive angle). The robot's links stay
a tree, and every recursion runs on that tree; the couplings map the robot's *independent* coordinates q (the
joints that follow none, in link order) to the tree's:

    q_tree = G q + c,   qd_tree = G qd,   qdd_tree = G qdd,

G of n x nv (a 1 per independent joint, the ratio at each coupled joint's row in its leader's column) and c the
offsets. The generalised forces are projected with G^T (the principle of virtual work): tau = G^T tau_tree,
M = G^T M_tree G, h, G(q), damping and load likewise, so that M qdd + bias = tau with the independent q
(ARCHITECTURE.md, "Couplings and loops"). So does Pinocchio's mimic model (``buildModelFromUrdf(path,
mimic=True)``); the same numbers, joints matched by name.

:func:`resolve` checks a robot's couplings (one-line ModelErrors) and resolves chains: a joint that follows a
joint that follows a third follows the third, with the ratios multiplied.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from robodyn.errors import ModelError
from robodyn.model.expr import shown, to_expr


@dataclass(frozen=True)
class Coupling:
    """q_joint = ratio * q_leader + offset: ``joint`` and ``leader`` are links (0-based indices or link names;
    a Manipulator stores the indices), ``ratio`` and ``offset`` numbers or expressions of the robot's
    parameters (rad or m, as the joints' own coordinates)."""

    joint: int | str
    leader: int | str
    ratio: Any = 1
    offset: Any = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "ratio", to_expr(self.ratio, "ratio"))
        object.__setattr__(self, "offset", to_expr(self.offset, "offset"))

    def subs(self, mapping: Any) -> Coupling:
        return Coupling(self.joint, self.leader, self.ratio.subs(mapping), self.offset.subs(mapping))


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
    """``couplings`` checked and resolved: Couplings (or mappings with keys joint, leader, ratio, offset) to
    Couplings of link indices, sorted by joint, each leader an independent joint (chains resolved)."""
    if value is None:
        return ()
    if isinstance(value, str | Coupling) or not isinstance(value, Iterable):
        raise ModelError("expected a sequence of Couplings", field="couplings")
    n = len(link_names)
    names = {name: k for k, name in enumerate(link_names) if name}

    def label(k: int) -> str:  # the link's name where it has one (URDF joints do), else its index
        return shown(link_names[k]) if link_names[k] else f"{k}"

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
        leader = _index(entry.leader, names, n, "leader")
        if joint == leader:
            raise ModelError(f"joint {label(joint)} cannot follow itself", field="couplings")
        if joint in direct:
            raise ModelError(f"joint {label(joint)} is coupled twice", field="couplings")
        if entry.ratio == 0:
            raise ModelError(f"joint {label(joint)}: a ratio of 0 (lock the joint instead)", field="couplings")
        direct[joint] = Coupling(joint, leader, entry.ratio, entry.offset)
    out = []
    for joint in sorted(direct):
        ratio, offset, leader, seen = direct[joint].ratio, direct[joint].offset, int(direct[joint].leader), [joint]
        while leader in direct:  # a chain: q_j = r_j (r_l q_m + o_l) + o_j
            if leader in seen:
                cycle = " -> ".join(label(k) for k in (*seen, leader))
                raise ModelError(f"the couplings form a cycle: links {cycle}", field="couplings")
            seen.append(leader)
            step = direct[leader]
            ratio, offset, leader = sympy.expand(ratio * step.ratio), sympy.expand(ratio * step.offset + offset), \
                int(step.leader)
        out.append(Coupling(joint, leader, ratio, offset))
    return tuple(out)


def independent(n: int, couplings: Sequence[Coupling]) -> tuple[int, ...]:
    """The links that follow none, in link order: the robot's independent coordinates."""
    coupled = {c.joint for c in couplings}
    return tuple(k for k in range(n) if k not in coupled)


def coupling_map(n: int, couplings: Sequence[Coupling]) -> tuple[sympy.Matrix, sympy.Matrix]:
    """(G, c) with q_tree = G q + c: G of n x nv (0, 1 and the ratios), c of n x 1 (the offsets)."""
    free = independent(n, couplings)
    column = {k: j for j, k in enumerate(free)}
    G = sympy.zeros(n, len(free))
    c = sympy.zeros(n, 1)
    for k in free:
        G[k, column[k]] = 1
    for coupling in couplings:
        G[int(coupling.joint), column[int(coupling.leader)]] = coupling.ratio
        c[int(coupling.joint)] = coupling.offset
    return G, c


def refuse_coupled(robot: Any, feature: str, instead: str = "") -> None:
    """One ModelError (field ``couplings``) where ``robot`` has couplings and ``feature`` is not yet offered for
    coupled joints: a one-line refusal rather than an answer in the tree's coordinates."""
    if getattr(robot, "couplings", ()):
        raise ModelError(f"{feature} is not available with coupled joints ({robot.name} has "
                         f"{len(robot.couplings)}){'; ' + instead if instead else ''}", field="couplings")


__all__ = ["Coupling", "coupling_map", "independent", "refuse_coupled", "resolve"]

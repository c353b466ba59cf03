"""Operation counts of Kane's algorithm (Angeles, Ma and Rojas 1989, sec. 6), measured, not estimated.

The code of :mod:`robodyn.formulations.kane` runs on :class:`Counted` scalars, which build the
straight-line program as a graph: a careful hand count's rules are applied as it is built
(multiplications by 0, 1, -1 and additions of 0 are free, and so is a change of sign; a
subtraction is an addition). Only the operations the torques depend on are counted, so unneeded
components (e.g. of v_1, w_1 in the last cycle of stage 3) cost nothing, as the paper assumes.
sin and cos of the joint angles and of alpha_i are inputs (not counted), as in the paper; so are
[a_i]_{i-1} of revolute joints (constants, computed off line, eq. 52) and the conversion of our q_i.

"General geometry": every HD parameter, mass-centre coordinate, inertia entry (a full symmetric
tensor) and gravity component is a distinct nonzero symbol.

Measured for n >= 2 revolute joints (see ``tests/formulations/test_kane.py`` and :func:`stage_table`):

    stage 1: 0                         (paper eq. 52: M1 = 2p, A1 = 0)
    stage 2: 50n - 50 m, 46n - 52 a    (paper eq. 56: 50n - 47, 46n - 47)
    stage 3: 55n - 60 m, 44n - 54 a    (paper eq. 57: 55n - 62, 44n - 58)
    total:  105n - 110 m, 90n - 106 a  (paper eq. 58-59: 105n - 109, 90n - 105)

The per-cycle costs agree exactly with the paper's step costs (stage 2: 8m+5a, 10m+7a, 6m+9a,
26m+25a; stage 3: 24m+18a, 3m, 8m+4a, 12m+12a, 8m+7a, 3a); only the savings at the ends of the
recursions differ, see :data:`EXPLANATION`. A prismatic joint among joints 3..n adds 2m (stage 1)
and nothing net in stage 2 (it saves 1a in omega_i and 2m+3a in omega_i', and costs 2m+4a in
eq. 20), so M = 105n - 110 + 2p, A = 90n - 106; the paper's eq. 52 and 56 give 105n - 109 + 4p.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import sympy

from robodyn.model.manipulator import Link, Manipulator
from robodyn.recursions.kane import joint_torques

STAGES = ("stage 1", "stage 2", "stage 3")
_current_stage = ["conversion"]


class Counted:
    """A node of the straight-line program: a leaf (an input), '*', '+', or a free 'neg'."""

    __slots__ = ("args", "kind", "name", "stage")

    def __init__(self, kind: str, args: tuple[Any, ...] = (), name: str = "") -> None:
        self.kind, self.args, self.name = kind, args, name
        self.stage = _current_stage[0]

    def __add__(self, other: Any) -> Any:
        return add(self, other)

    def __radd__(self, other: Any) -> Any:
        return add(other, self)

    def __sub__(self, other: Any) -> Any:
        return add(self, neg(other))

    def __rsub__(self, other: Any) -> Any:
        return add(other, neg(self))

    def __mul__(self, other: Any) -> Any:
        return mul(self, other)

    def __rmul__(self, other: Any) -> Any:
        return mul(other, self)

    def __neg__(self) -> Any:
        return neg(self)

    def __repr__(self) -> str:
        return self.name or f"<{self.kind}>"


def _is(x: Any, value: int) -> bool:
    return type(x) is int and x == value


def mul(x: Any, y: Any) -> Any:
    """x * y; free when a factor is 0, 1 or -1."""
    if _is(x, 0) or _is(y, 0):
        return 0
    if _is(x, 1):
        return y
    if _is(y, 1):
        return x
    if _is(x, -1):
        return neg(y)
    if _is(y, -1):
        return neg(x)
    if type(x) is int and type(y) is int:
        return x * y
    return Counted("*", (x, y))


def add(x: Any, y: Any) -> Any:
    """x + y; free when a term is 0."""
    if _is(x, 0):
        return y
    if _is(y, 0):
        return x
    if type(x) is int and type(y) is int:
        return x + y
    return Counted("+", (x, y))


def neg(x: Any) -> Any:
    """-x, free (a change of sign is folded into the next addition)."""
    if type(x) is int:
        return -x
    if x.kind == "neg":
        return x.args[0]
    return Counted("neg", (x,))


class CountingOps:
    """The scalar ops of :mod:`robodyn.formulations.kane` on counting scalars.

    Model numbers equal to 0, 1, -1 become those integers (so they fold); every other number or
    expression becomes one leaf (the same leaf for the same expression: the symmetric inertia)."""

    def __init__(self) -> None:
        self._leaves: dict[Any, Any] = {}

    def leaf(self, key: Any) -> Any:
        if key not in self._leaves:
            self._leaves[key] = Counted("leaf", name=str(key))
        return self._leaves[key]

    def number(self, value: sympy.Expr) -> Any:
        value = sympy.sympify(value)
        for special in (0, 1, -1):
            if value == special:
                return special
        return self.leaf(value)

    def cos_sin(self, offset: sympy.Expr, q: Any | None) -> tuple[Any, Any]:
        if q is None:
            angle = sympy.sympify(offset)
            return self.number(sympy.cos(angle)), self.number(sympy.sin(angle))
        return self.leaf(f"cos({offset}+{q})"), self.leaf(f"sin({offset}+{q})")

    def sign(self, x: Any) -> Any:
        return Counted("sign", (x,))

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        previous, _current_stage[0] = _current_stage[0], name
        try:
            yield
        finally:
            _current_stage[0] = previous


@dataclass(frozen=True)
class OpCount:
    """Multiplications and additions, in total and per stage (stage 1..3 and the conversion)."""

    multiplications: int
    additions: int
    by_stage: dict[str, tuple[int, int]] = field(default_factory=dict)


def tally(outputs: Iterable[Any]) -> OpCount:
    """Count the '*' and '+' nodes the outputs depend on, by stage; the conversion is left out of the total."""
    seen: set[int] = set()
    stack = [x for x in outputs if isinstance(x, Counted)]
    counts: dict[str, list[int]] = {}
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.kind in ("*", "+"):
            counts.setdefault(node.stage, [0, 0])[0 if node.kind == "*" else 1] += 1
        stack.extend(a for a in node.args if isinstance(a, Counted))
    by_stage = {stage: tuple(counts.get(stage, [0, 0])) for stage in (*STAGES, "conversion")}
    m = sum(by_stage[s][0] for s in STAGES)
    a = sum(by_stage[s][1] for s in STAGES)
    return OpCount(m, a, by_stage)  # type: ignore[arg-type]


def general_arm(joints: str) -> Manipulator:
    """A modified-DH arm of general geometry: every parameter a distinct symbol (see module doc)."""
    links = []
    for i, joint in enumerate(joints.upper(), start=1):
        s = [f"{name}{i}" for name in ("a", "alpha", "d", "theta", "m", "cx", "cy", "cz")]
        inertia = [[f"I{i}{min(r, c)}{max(r, c)}" for c in "xyz"] for r in "xyz"]
        links.append(Link(joint=joint, a=s[0], alpha=s[1], d=s[2], theta=s[3], mass=s[4], com=s[5:8], inertia=inertia))
    return Manipulator(links=tuple(links), convention="modified", gravity=("gx", "gy", "gz"), name="general")


def count_operations(robot: Manipulator) -> OpCount:
    """Operations of Kane's algorithm for this model's geometry (its 0, 1, -1 fold; other numbers do not),
    no tip load, payload, friction or armature (the paper's phi_d = 0). A serial chain: a kinematic tree is refused in
    one line (Angeles, Ma and Rojas' recursion runs down one chain; ``robodyn count`` without ``--method kane``
    counts trees)."""
    ops = CountingOps()
    n = robot.n
    q = [ops.leaf(f"q{i}") for i in range(1, n + 1)]
    qd = [ops.leaf(f"qd{i}") for i in range(1, n + 1)]
    qdd = [ops.leaf(f"qdd{i}") for i in range(1, n + 1)]
    with warnings.catch_warnings():  # the model's own warnings were given when it was loaded
        warnings.simplefilter("ignore")
        bare = robot.replace(links=tuple(link.replace(damping=0, armature=0, coulomb=0, stiffness=0)
                                         for link in robot.links), payload=None)
    gravity = [ops.number(x) for x in robot.gravity]
    with ops.stage("conversion"):
        tau = joint_torques(bare, q, qd, qdd, gravity, (0, 0, 0), (0, 0, 0), ops)
    return tally(tau)


def count_general(n: int, joints: str | None = None) -> OpCount:
    """Operations for n joints of general geometry (all revolute unless ``joints``, e.g. "RRPRRR")."""
    return count_operations(general_arm(joints or "R" * n))


def formula(n: int, p: int = 0) -> tuple[int, int]:
    """The measured totals for n >= 2 joints of general geometry, p of them prismatic (among joints 3..n)."""
    return 105 * n - 110 + 2 * p, 90 * n - 106


def paper_formula(n: int) -> tuple[int, int]:
    """Eq. 58-59."""
    return 105 * n - 109, 90 * n - 105


#: Paper's stage formulas (eq. 52, 56, 57) with p = 0, and ours measured for n >= 3 revolute joints.
PAPER_STAGES = {"stage 1": ((0, 0), (0, 0)), "stage 2": ((50, -47), (46, -47)), "stage 3": ((55, -62), (44, -58))}
OUR_STAGES = {"stage 1": ((0, 0), (0, 0)), "stage 2": ((50, -50), (46, -52)), "stage 3": ((55, -60), (44, -54))}

EXPLANATION = """\
Per-cycle step costs agree with the paper (stage 2: 50m + 46a, stage 3: 55m + 44a); the constants
differ only in what the first and last cycles save (measured cycle by cycle, general geometry, all R):
stage 2, cycle 1: 13m + 8a, paper 13m + 9a: the third component of W_1 rho_1 is 0, adding it is free.
stage 2, cycle 2: 37m + 32a instead of 50m + 46a. omega_1 = (0, 0, theta_1'), omega_1' = (0, 0, theta_1'')
  make Q_2^T omega_1 and Q_2^T omega_1' 4m + 0a each (saves 8m + 8a); W_1 has a zero third row and
  column, so W_1 (a_2 - rho_1) is 4m + 2a, its z component and (a_2 - rho_1)_z are not needed, and
  adding it to p_1'' costs 2a (saves 5m + 6a). The paper's -47 credits cycle 2 with only 10m + 10a.
  M2 = 50n - 50, A2 = 46n - 52 (paper 50n - 47, 46n - 47).
stage 3, cycle n: 33m + 24a, since v_{n+1} = w_{n+1} = 0 (saves 22m + 20a; the paper's -38 = 16 for
  h_1' + 22 assumes 22a).
stage 3, cycle 1 (tau_1 = w_1z only): 17m + 10a, paper 15m + 10a: (Q_2 w_2)_z 4m + 2a, the x, y
  components of Q_2 v_2 6m + 3a, (a_2 x Q_2 v_2)_z 2m + 1a, u_1x, u_1y 2m, (rho_1 x u_1)_z 2m + 1a,
  h_1z' = I_1zz theta_1'' 1m, sums 3a. M3 = 55n - 60, A3 = 44n - 54 (paper 55n - 62, 44n - 58; by its
  own step counts the paper's A3 would be 44n - 54 with 22a replaced by 20a above).
Total: 105n - 110 multiplications (paper 105n - 109) and 90n - 106 additions (paper 90n - 105), for
every n >= 2: for n = 6, 520 and 434 against 521 and 435. Not exploited (as in the paper): the constant
a_i - rho_{i-1} of a revolute joint (3a per cycle) and the symmetry of I_i."""

#: Table 1 of the paper: (author, method, multiplications, additions) for n = 6.
TABLE1 = (
    ("Hollerbach [3]", "EL", 2195, 1719),
    ("Luh et al. [2]", "NE", 852, 738),
    ("Walker and Orin [20]", "NE", 800, 595),
    ("Hollerbach [21]", "NE", 688, 558),
    ("Kane and Levinson [13]", "Kane", 646, 394),
    ("Khalil et al. [10]", "NE", 538, 478),
    ("Angeles, Ma and Rojas", "Kane", 521, 435),
)


@dataclass(frozen=True)
class TableRow:
    author: str
    method: str
    multiplications: int
    additions: int


def comparison_table(robot: Manipulator | None = None, n: int = 6) -> list[TableRow]:
    """Table 1 for n = 6, plus our measured count for general geometry (n joints, all R) and,
    if ``robot`` is given, for that model's geometry."""
    rows = [TableRow(*row) for row in TABLE1]
    general = count_general(n)
    rows.append(TableRow(f"robodyn, measured (general, n = {n})", "Kane", general.multiplications, general.additions))
    if robot is not None:
        own = count_operations(robot)
        label = f"robodyn, measured ({robot.name}, {robot.joint_types})"
        rows.append(TableRow(label, "Kane", own.multiplications, own.additions))
    return rows


def format_table(rows: Iterable[TableRow]) -> str:
    """A plain-text table (what ``robodyn count MODEL --method kane`` prints)."""
    rows = list(rows)
    width = max(len(r.author) for r in rows)
    lines = [f"{'author':<{width}}  {'method':<6}  {'mult.':>6}  {'add.':>6}"]
    lines += [f"{r.author:<{width}}  {r.method:<6}  {r.multiplications:>6}  {r.additions:>6}" for r in rows]
    return "\n".join(lines)


def stage_table(n: int) -> str:
    """Measured per-stage counts for n revolute joints of general geometry beside eq. 52, 56, 57."""
    count = count_general(n)
    lines = [f"n = {n}: stage  measured (m, a)  paper (m, a)"]
    for stage in STAGES:
        (pm, pm0), (pa, pa0) = PAPER_STAGES[stage]
        lines.append(f"  {stage}: {count.by_stage[stage]}  ({pm * n + pm0}, {pa * n + pa0})")
    lines.append(f"  total: ({count.multiplications}, {count.additions})  {paper_formula(n)}")
    return "\n".join(lines)

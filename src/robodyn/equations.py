"""The result of every formulation, and every conversion between the forms communities use.

tau = M(q) qdd + h(q, qd) + G(q) + damping(qd) + spring(q) + load(q)

- ``M`` the inertia matrix (armature included), ``h`` Coriolis and centrifugal torques,
  ``G`` gravity torques, ``damping`` = b qd (Fu table 3.2) and the Coulomb friction, ``spring`` = k (q - q_ref)
  the joint springs (a term of its own: not in G, as MuJoCo's bias force holds no spring either), ``load`` the
  torques the tip load demands (zero unless the model has one). The bias (everything but M qdd) is the sum of
  :data:`BIAS_PARTS`.
- Christoffel symbols of the first kind (Burdick eq. 15), with the index order
  Gamma[i, j, k] = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i), so h_i = sum_jk Gamma_ijk qd_j qd_k.
- ROBMAT's configuration-space form (Horn and Linge sec. 4.2): F = M qdd + 2 B qq + C q2 + G with
  qq = (qd1 qd2, ..., qd1 qdn, qd2 qd3, ..., qd_{n-1} qdn), q2 = (qd1^2, ..., qdn^2),
  B[i, (j,k)] = Gamma_ijk (j < k), C[i, j] = Gamma_ijj.
- Fu's form (eq. 3.2-25): D = M, h_ikm = Gamma_ikm (Fu's trace formula 3.2-33 equals the
  Christoffel symbol), c = G.
- EMDEG's form (Burdick eq. 12-14): M, c_ijj = Gamma_ijj, b_ijk = 2 Gamma_ijk (j < k), g = G.

Internally the matrices are symengine expressions as the formulation built them. The public attributes
(``tau``, ``M``, ``h``, ``G``, ...) are sympy matrices, computed on first use, in one of two forms:

- *expanded*: the canonical form (expanded, sin(q_i) of degree at most one: see :mod:`robodyn.algebra`), in
  which two expressions are equal exactly when they are identical. Expanding multiplies out every product of
  the recursion: each general twist angle splits every term it meets, so the expanded torques of a 6-joint
  arm of general geometry run to hundreds of thousands of terms (minutes, gigabytes);
- *nested*: the expressions as the formulation built them, with their common subexpressions shared
  (:class:`~robodyn.algebra.NestedConverter`): seconds for any 7-joint numeric arm, the size of the recursion.

``expand=None`` (the default of :func:`robodyn.derive`) takes the expanded form where it stays small, and the
nested form otherwise; ``True`` or ``False`` asks for one. "Small" is decided before anything is expanded, in two
steps: the arm must have up to three joints or fixed angles that are all multiples of pi/2
(:func:`robodyn.model.dh.right_angled`: the PUMA, the Stanford arm, most industrial arms) and at most
:data:`EXPAND_AUTO_MAX_JOINTS` joints, and the estimate of
:func:`expansion_work` must stay within :data:`EXPAND_BUDGET`: tau is expanded bottom-up, each shared subexpression
once, and the estimate gives up as soon as the terms produced pass the budget (or one product's factors could
give more), so it costs at most about a second or two whatever the arm (a right-angled numeric chain of 6 to 20
joints, whose expanded form doubles with every joint, is caught there). :meth:`Equations.form_note` says which
form was taken and how to force the other.

Coefficient floor. Expanding a numeric arm multiplies out floating-point products that cancel in exact arithmetic
and leave rounding noise (6e-17 times a mass, 1e-18 times a product of sines). In the expanded public form every
term whose coefficient is a float of magnitude below :data:`COEFFICIENT_FLOOR` times the largest coefficient of
the same part (the whole matrix M, the whole vector h, ...) is dropped (:func:`drop_float_noise`); exact
coefficients (integers, rationals, symbols) are never dropped, so the equations of an exact or symbolic arm are
unchanged. :meth:`Equations.canonical` (the exact comparisons and the generated programs use it) keeps every
term, at its cost.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Concatenate, ParamSpec, TypeVar

import symengine as se
import sympy

from robodyn.algebra import (
    NestedConverter,
    SeExpr,
    canonical,
    count_terms,
    matrix_to_sympy,
    to_se,
    to_sympy,
    trig_reduction,
)
from robodyn.errors import ModelError
from robodyn.model.dh import right_angled
from robodyn.model.expr import check_name, check_parameter_name, expression_text, read_expression
from robodyn.model.manipulator import Manipulator
from robodyn.symbols import JointSymbols, joint_symbols

P = ParamSpec("P")
R = TypeVar("R")

PARTS = ("tau", "M", "h", "G", "damping", "spring", "load")
#: The parts of the bias, tau at qdd = 0 (h + G + damping + spring + load).
BIAS_PARTS = ("h", "G", "damping", "spring", "load")
FORMS = ("tau", "config-space", "fu", "christoffel", "emdeg")
#: Elements with more operations than this are shown in canonical (expanded) form.
DISPLAY_SIMPLIFY_LIMIT = 150
#: ``expand=None`` takes the nested form above this many joints without estimating: the expanded torques of a
#: right-angled chain double with every joint (cos(q1+...+qk) splits into 2**k terms). Measured with Newton-Euler
#: and ``eqs.tau`` on a planar chain of float links (2 shared cores): 6 joints 0.5 s, 8 joints 8.8 s, 10 joints more
#: than 60 s of CPU. Every built-in robot has at most 6 joints.
EXPAND_AUTO_MAX_JOINTS = 7
#: The default form is expanded only if expanding tau bottom-up (:func:`expansion_work`) produces at most this many
#: terms in all. Measured with Newton-Euler (2 shared cores): the built-in right-angled arms take 5,111 (Stanford
#: arm) to 35,406 (the symbolic PUMA) and expand in 0.1 to 5 s; a right-angled numeric 6-joint chain takes 103,499
#: (its expanded torques have 17,652 terms, about 30 s and 2 MB of text) and is left nested; the estimate gives up
#: after 1 to 3 s on 6- to 20-joint chains and the Panda.
EXPAND_BUDGET = 50_000
#: In the expanded public form, float coefficients below this fraction of the largest coefficient of the same part
#: are rounding noise and dropped (see the module docstring); exact coefficients are always kept.
COEFFICIENT_FLOOR = 1e-12


@dataclass(frozen=True)
class ConfigSpace:
    """ROBMAT's (M, B, C, G) with the velocity-product vectors qq and q2."""

    M: sympy.ImmutableMatrix
    B: sympy.ImmutableMatrix
    C: sympy.ImmutableMatrix
    G: sympy.ImmutableMatrix
    qq: sympy.ImmutableMatrix
    q2: sympy.ImmutableMatrix

    def force(self, qdd: sympy.MatrixBase) -> sympy.Matrix:
        """F = M qdd + 2 B qq + C q2 + G (rigid-body part, without damping and tip load)."""
        return self.M * qdd + 2 * self.B * self.qq + self.C * self.q2 + self.G

    def __repr__(self) -> str:
        return _form_repr("ConfigSpace", {"M": self.M, "B": self.B, "C": self.C, "G": self.G})

    def _repr_latex_(self) -> str:
        """F = M qdd + 2 B qq + C qd_sq + G, then each matrix (qq: the products qd_i qd_j, i < j; qd_sq: the
        squares qd_i^2)."""
        lines = [r"F = M \ddot{q} + 2 B\,\dot{q}\dot{q} + C\,\dot{q}^2 + G"]
        lines += [f"{name} = {sympy.latex(value)}" for name, value in
                  (("M", self.M), ("B", self.B), ("C", self.C), ("G", self.G))]
        return "$\\begin{gathered}" + " \\\\\n".join(lines) + "\\end{gathered}$"


@dataclass(frozen=True)
class FuForm:
    """Fu et al.'s (D, h_ikm, c): ``H[i]`` is the matrix H_{i,v} of eq. 3.2-36, H[i][k, m] = h_ikm."""

    D: sympy.ImmutableMatrix
    H: tuple[sympy.ImmutableMatrix, ...]
    c: sympy.ImmutableMatrix

    def h(self, qd: sympy.MatrixBase) -> sympy.Matrix:
        """h_i = qd^T H_{i,v} qd (eq. 3.2-38)."""
        return sympy.Matrix([(qd.T * Hi * qd)[0, 0] for Hi in self.H])

    def __repr__(self) -> str:
        return _form_repr("FuForm", {"D": self.D, **{f"H{i + 1}": H for i, H in enumerate(self.H)}, "c": self.c})


@dataclass(frozen=True)
class EmdegForm:
    """Burdick's M, c_ijj, b_ijk (j < k) and g, elements keyed by 1-based index tuples."""

    M: sympy.ImmutableMatrix
    c: dict[tuple[int, int], sympy.Expr]
    b: dict[tuple[int, int, int], sympy.Expr]
    g: sympy.ImmutableMatrix

    def __repr__(self) -> str:
        nonzero = sum(1 for x in [*self.c.values(), *self.b.values()] if x != 0)
        return (f"EmdegForm(n={self.M.rows}: M {self.M.rows}x{self.M.cols}, {len(self.c)} c_ijj, {len(self.b)} b_ijk "
                f"({nonzero} of them nonzero), g {self.g.rows}x1)")


def sum_parts(part: Callable[[str], se.DenseMatrix], names: Iterable[str]) -> se.DenseMatrix:
    """The sum of the named parts, each taken by ``part`` (e.g. ``eqs.raw`` or ``eqs.canonical``), in order; a zero
    part adds nothing (x + 0 is x), so that a robot without springs keeps its expressions."""
    matrices = [part(name) for name in names]
    total = matrices[0]
    for m in matrices[1:]:
        total = total + m
    return total


def _form_repr(kind: str, matrices: dict[str, Any]) -> str:
    """``Kind(M 2x2 (5 terms), ...)``: the shape and size of each matrix, not its entries."""
    parts = [f"{name} {m.rows}x{m.cols} ({sum(len(sympy.Add.make_args(x)) for x in m if x != 0)} terms)"
             for name, m in matrices.items()]
    return f"{kind}({', '.join(parts)})"


def expands_cheaply(robot: Manipulator) -> bool:
    """The geometric half of the default rule (see the module docstring): up to three joints, or every fixed
    angle a multiple of pi/2. Such arms are then expanded if :func:`expansion_work` stays within the budget."""
    return robot.n <= 3 or right_angled(robot)


def _terms(expr: SeExpr) -> int:
    return len(expr.args) if isinstance(expr, se.Add) else (0 if expr == 0 else 1)


class BoundedExpansion:
    """The canonical form (:func:`robodyn.algebra.canonical`) computed bottom-up: each distinct subexpression of a
    nested expression is expanded once, from its expanded arguments, and its sines reduced; the results are kept
    and shared between calls. A call gives up (returns None) once the terms it produced pass its budget, or
    before a product whose factors' term counts multiply past it, so its cost is bounded whatever the
    expression. Exact expressions give the same result as ``canonical``; floating-point ones the same up to
    rounding (the floating-point operations are done in another order)."""

    def __init__(self) -> None:
        self.done: dict[Any, SeExpr] = {}
        self.work = 0  # terms produced by the last call

    def __call__(self, expr: Any, budget: int) -> SeExpr | None:
        root = to_se(expr)
        stack, done, self.work = [root], self.done, 0
        while stack:  # post-order without recursion (see robodyn.algebra.NestedConverter)
            node = stack[-1]
            if node in done:
                stack.pop()
                continue
            pending = [a for a in node.args if a not in done]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            result = self._node(node, [done[a] for a in node.args], budget)
            if result is None:
                return None
            done[node] = result
        return done[root]

    def _node(self, node: SeExpr, args: list[SeExpr], budget: int) -> SeExpr | None:
        if not args:
            return node
        if isinstance(node, se.Mul):
            bound = math.prod(max(_terms(a), 1) for a in args)
        elif isinstance(node, se.Pow) and args[1].is_integer and int(args[1]) > 0:
            bound = max(_terms(args[0]), 1) ** int(args[1])
        else:
            bound = sum(_terms(a) for a in args)
        if self.work + bound > budget:
            return None
        result = node.func(*args)
        if isinstance(node, (se.Mul, se.Pow)):
            result = se.expand(result)
            reduction = trig_reduction(result)
            if reduction:
                result = se.expand(result.xreplace(reduction))
        self.work += _terms(result)
        return None if self.work > budget else result


def expansion_work(exprs: Iterable[Any], budget: int = EXPAND_BUDGET) -> int | None:
    """The estimate of the default rule: the terms produced in expanding ``exprs`` bottom-up
    (:class:`BoundedExpansion`), or None once they pass ``budget``: computed before, and instead of, the
    expansion itself, at a cost bounded by the budget."""
    expand, total = BoundedExpansion(), 0
    for expr in exprs:
        if expand(expr, budget - total) is None:
            return None
        total += expand.work
    return total


def _coefficient(term: SeExpr) -> SeExpr:
    """The numeric factor of one term of an expanded sum (1 if it has none)."""
    if term.is_Number:
        return term
    if isinstance(term, se.Mul) and term.args[0].is_Number:
        return term.args[0]
    return se.Integer(1)


def drop_float_noise(exprs: Iterable[Any], floor: float = COEFFICIENT_FLOOR) -> list[SeExpr]:
    """Expanded expressions (the entries of one part) without the terms whose coefficient is a float of magnitude
    below ``floor`` times the largest coefficient of them all (exact coefficients count for the largest and are
    never dropped): rounding noise such as 6e-17 times a mass (see the module docstring)."""
    values = [to_se(x) for x in exprs]
    sums = [se.Add.make_args(x) if isinstance(x, se.Add) else (x,) for x in values]
    sizes = [abs(float(_coefficient(t))) for terms in sums for t in terms if t != 0]
    threshold = floor * max(sizes, default=0.0)
    out = []
    for value, terms in zip(values, sums, strict=True):
        kept = [t for t in terms if not _noise(_coefficient(t), threshold)]
        out.append(value if len(kept) == len(terms) else se.Add(*kept))
    return out


def _noise(coefficient: SeExpr, threshold: float) -> bool:
    return isinstance(coefficient, se.Float) and abs(float(coefficient)) < threshold


def _clocked(method: Callable[Concatenate[Equations, P], R]) -> Callable[Concatenate[Equations, P], R]:
    """A method of :class:`Equations` whose time counts in :attr:`Equations.form_seconds`."""

    @functools.wraps(method)
    def clocked(self: Equations, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._clock():
            return method(self, *args, **kwargs)

    return clocked


class Equations:
    """Equations of motion of one manipulator by one method. See the module docstring."""

    def __init__(
        self,
        robot: Manipulator,
        method: str,
        *,
        tau: se.DenseMatrix,
        M: se.DenseMatrix,
        h: se.DenseMatrix,
        G: se.DenseMatrix,
        damping: se.DenseMatrix,
        spring: se.DenseMatrix,
        load: se.DenseMatrix,
        seconds: float = 0.0,
        extras: dict[str, se.DenseMatrix] | None = None,
        expand: bool | None = None,
    ) -> None:
        self.robot = robot
        self._expand = expand
        self._default_note = ""
        self.method = method
        #: Wall time of the derivation (building the expressions; expansion and conversion are done on first use).
        self.seconds = seconds
        #: Wall time spent since on the public forms: the default rule's estimate, expansion, conversion to sympy,
        #: shared parts and display (:attr:`total_seconds` adds the two).
        self.form_seconds = 0.0
        self._clock_running = False
        self._raw = {"tau": tau, "M": M, "h": h, "G": G, "damping": damping, "spring": spring, "load": load}
        self.extra_names = tuple(extras or ())
        self._raw.update(extras or {})
        self._canonical: dict[str, se.DenseMatrix] = {}
        #: The nested parts are converted by one converter: what they share stays one sympy object.
        self._converter = NestedConverter()

    # -- the form -------------------------------------------------------------------------
    @cached_property
    def expanded(self) -> bool:
        """True: the public attributes are in canonical (expanded) form; False: nested. ``expand=None`` decides by
        the default rule (see the module docstring) on first use, before expanding anything."""
        if self._expand is not None:
            return bool(self._expand)
        with self._clock():
            if any(c.closure is not None for c in self.robot.couplings):
                self._default_note = "a four-bar's closed form (atan2, sqrt, quotients) has no useful expanded form"
                return False
            if not expands_cheaply(self.robot):
                self._default_note = ("fixed angles that are not multiples of pi/2 and more than 3 joints (each "
                                      "such angle splits every term it meets)")
                return False
            if self.robot.n > EXPAND_AUTO_MAX_JOINTS:
                self._default_note = (f"more than {EXPAND_AUTO_MAX_JOINTS} joints (a right-angled chain's expanded "
                                      "form doubles with every joint)")
                return False
            if expansion_work(self._raw["tau"]) is None:
                self._default_note = (f"expanding tau would produce more than {EXPAND_BUDGET:,} terms (estimated "
                                      "before expanding)")
                return False
            return True

    def form_note(self, force: str = "expand=True") -> str:
        """One line on the form of the public attributes: '' when expanded; when nested, why (if the default rule
        decided) and that ``force`` (``--expand`` on the command line) asks for the expanded form."""
        if self.expanded:
            return ""
        why = f": {self._default_note}" if self._default_note else ""
        return f"nested form (shared parts x1, x2, ...){why}; {force} forces the expanded form, at its cost"

    @property
    def total_seconds(self) -> float:
        """Wall time of the derivation and of every form computed since (:attr:`seconds` + :attr:`form_seconds`)."""
        return self.seconds + self.form_seconds

    @contextmanager
    def _clock(self) -> Iterator[None]:
        """Add the time of the enclosed work to :attr:`form_seconds` (once, when such blocks nest)."""
        if self._clock_running:
            yield
            return
        self._clock_running = True
        start = time.perf_counter()
        try:
            yield
        finally:
            self._clock_running = False
            self.form_seconds += time.perf_counter() - start

    # -- basics -------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.robot.nv  # the independent coordinates (robot.n without couplings)

    @cached_property
    def symbols(self) -> JointSymbols:
        return joint_symbols(self.n)

    def raw(self, part: str) -> se.DenseMatrix:
        """A part as the formulation built it (symengine, unexpanded)."""
        return self._raw[part]

    def canonical(self, part: str) -> se.DenseMatrix:
        """A part in canonical form (symengine): expanded, each sin(q_i) of degree <= 1."""
        if part not in self._canonical:
            raw = self._raw[part]
            q = self.symbols.q
            out = se.zeros(raw.rows, raw.cols)
            for i in range(raw.rows):
                for j in range(raw.cols):
                    if part == "M" and j < i:
                        out[i, j] = out[j, i]
                    else:
                        out[i, j] = canonical(raw[i, j], q)
            self._canonical[part] = out
        return self._canonical[part]

    def _sympy(self, part: str) -> sympy.ImmutableMatrix:
        with self._clock():
            if self.expanded:
                full = self.canonical(part)
                return matrix_to_sympy(se.DenseMatrix(full.rows, full.cols, drop_float_noise(full)))
            raw = self._raw[part]
            if part == "M":  # symmetric: the upper triangle mirrored (the lower one may be built far less shared)
                raw = se.DenseMatrix(raw.rows, raw.cols, [raw[min(i, j), max(i, j)] for i in range(raw.rows)
                                                          for j in range(raw.cols)])
            return matrix_to_sympy(raw, nested=self._converter)

    def extra(self, name: str) -> sympy.ImmutableMatrix:
        """A method-specific part (in the form of :attr:`expanded`), e.g. d'Alembert's ``D_rot``, ``D_tran``,
        ``h_rot``, ``h_tran`` (see :attr:`extra_names`)."""
        if name not in self.extra_names:
            raise KeyError(f"{self.method} gives no part {name!r}; it gives {', '.join(self.extra_names) or 'none'}")
        return self._sympy(name)

    @property
    def extras(self) -> dict[str, sympy.ImmutableMatrix]:
        """Every method-specific part (in the form of :attr:`expanded`)."""
        return {name: self.extra(name) for name in self.extra_names}

    @cached_property
    def tau(self) -> sympy.ImmutableMatrix:
        """Joint torques/forces, n x 1."""
        return self._sympy("tau")

    @cached_property
    def M(self) -> sympy.ImmutableMatrix:
        """Inertia matrix, n x n, symmetric (armature on the diagonal)."""
        return self._sympy("M")

    @cached_property
    def h(self) -> sympy.ImmutableMatrix:
        """Coriolis and centrifugal torques, n x 1 (quadratic in qd)."""
        return self._sympy("h")

    @cached_property
    def G(self) -> sympy.ImmutableMatrix:
        """Gravity torques, n x 1."""
        return self._sympy("G")

    @cached_property
    def damping(self) -> sympy.ImmutableMatrix:
        """Joint friction torques b_i qd_i (and the Coulomb friction), n x 1."""
        return self._sympy("damping")

    @cached_property
    def spring(self) -> sympy.ImmutableMatrix:
        """Joint spring torques k_i (q_i - q_ref,i), n x 1 (zero where a joint has no spring)."""
        return self._sympy("spring")

    @cached_property
    def load(self) -> sympy.ImmutableMatrix:
        """Torques due to the tip load, n x 1."""
        return self._sympy("load")

    # -- Christoffel symbols and the forms ------------------------------------------------
    @cached_property
    def _christoffel_se(self) -> list[list[list[Any]]]:
        n = self.n
        M = self.canonical("M")
        q = [se.Symbol(s.name) for s in self.symbols.q]
        dM = [[[M[i, j].diff(q[k]) for k in range(n)] for j in range(n)] for i in range(n)]
        gamma: list[list[list[Any]]] = [[[0] * n for _ in range(n)] for _ in range(n)]
        for i in range(n):
            for j in range(n):
                for k in range(j, n):
                    value = canonical((dM[i][j][k] + dM[i][k][j] - dM[j][k][i]) / 2, self.symbols.q)
                    gamma[i][j][k] = gamma[i][k][j] = value
        return gamma

    def christoffel(self) -> sympy.ImmutableDenseNDimArray:
        """Gamma[i, j, k] (0-based), Christoffel symbols of the first kind of M (expanded; float noise below
        :data:`COEFFICIENT_FLOOR` of the largest coefficient dropped)."""
        n = self.n
        with self._clock():
            values = drop_float_noise(self._christoffel_se[i][j][k] for i in range(n) for j in range(n)
                                      for k in range(n))
            return sympy.ImmutableDenseNDimArray([to_sympy(x) for x in values], (n, n, n))

    def coriolis_matrix(self) -> sympy.ImmutableMatrix:
        """C(q, qd) with C_ij = sum_k Gamma_ijk qd_k, so h = C qd and dM/dt - 2C is skew."""
        gamma = self.christoffel()
        qd = self.symbols.qd
        n = self.n
        return sympy.ImmutableMatrix(n, n, lambda i, j: sum(gamma[i, j, k] * qd[k] for k in range(n)))

    def config_space(self) -> ConfigSpace:
        """ROBMAT's configuration-space matrices (M, B, C, G) and the vectors qq, q2."""
        n = self.n
        gamma = self.christoffel()
        pairs = [(j, k) for j in range(n) for k in range(j + 1, n)]
        qd = self.symbols.qd
        B = sympy.ImmutableMatrix(n, len(pairs), lambda i, c: gamma[i, pairs[c][0], pairs[c][1]])
        C = sympy.ImmutableMatrix(n, n, lambda i, j: gamma[i, j, j])
        qq = sympy.ImmutableMatrix([qd[j] * qd[k] for j, k in pairs]) if pairs else sympy.ImmutableMatrix.zeros(0, 1)
        q2 = sympy.ImmutableMatrix([x**2 for x in qd])
        return ConfigSpace(self.M, B, C, self.G, qq, q2)

    def fu_form(self) -> FuForm:
        """Fu et al.'s (D, H_{i,v}, c)."""
        n = self.n
        gamma = self.christoffel()
        H = tuple(sympy.ImmutableMatrix(n, n, lambda k, m, i=i: gamma[i, k, m]) for i in range(n))
        return FuForm(self.M, H, self.G)

    def emdeg_form(self) -> EmdegForm:
        """Burdick's (M, c_ijj, b_ijk, g), distinct elements only (1-based keys)."""
        n = self.n
        gamma = self.christoffel()
        c = {(i + 1, j + 1): gamma[i, j, j] for i in range(n) for j in range(n)}
        b = {
            (i + 1, j + 1, k + 1): 2 * gamma[i, j, k]
            for i in range(n)
            for j in range(n)
            for k in range(j + 1, n)
        }
        return EmdegForm(self.M, c, b, self.G)

    # -- output ---------------------------------------------------------------------------
    def terms(self) -> dict[str, int]:
        """Number of terms of each part in canonical form (tau summed over joints)."""
        return {
            part: sum(count_terms(x) for x in self.canonical(part))
            for part in ("tau", "M", "h", "G")
        }

    def form_matrices(self, form: str = "tau") -> dict[str, Any]:
        """The named sympy objects of one form (see :data:`FORMS`)."""
        out: dict[str, Any] = {"tau": self.tau, "M": self.M, "h": self.h, "G": self.G}
        if any(x != 0 for x in self.damping):
            out["damping"] = self.damping
        if any(x != 0 for x in self.spring):
            out["spring"] = self.spring
        if any(x != 0 for x in self.load):
            out["load"] = self.load
        if form == "tau":
            return out
        if form == "config-space":
            cs = self.config_space()
            # ROBMAT's q2 (the squared rates) is shown as qd_sq: q2 is the second joint's symbol
            out.update(B=cs.B, C=cs.C, qq=cs.qq, qd_sq=cs.q2)
            return out
        if form == "fu":
            fu = self.fu_form()
            out.update(D=fu.D, **{f"H{i + 1}": Hi for i, Hi in enumerate(fu.H)}, c=fu.c)
            return out
        if form == "christoffel":
            out["christoffel"] = self.christoffel()
            return out
        if form == "emdeg":
            em = self.emdeg_form()
            out.update({f"c_{i}{j}{j}": v for (i, j), v in em.c.items() if v != 0})
            out.update({f"b_{i}{j}{k}": v for (i, j, k), v in em.b.items() if v != 0})
            out["g"] = em.g
            return out
        raise ValueError(f"unknown form {form!r}; choose one of {', '.join(FORMS)}")

    @_clocked
    def to_dict(self, form: str = "tau") -> dict[str, Any]:
        """JSON-ready: expressions as strings of the model-file expression language (floats exact); read them
        back with :func:`read_dict`, which takes every name as the symbol listed here (not sympy's ``I``,
        ``E``, ``S``... constants)."""
        data: dict[str, Any] = {
            "robot": self.robot.name,
            "method": self.method,
            "form": form,
            "n": self.n,
            "joints": self.robot.joint_types,
            "q": [s.name for s in self.symbols.q],
            "qd": [s.name for s in self.symbols.qd],
            "qdd": [s.name for s in self.symbols.qdd],
            "parameters": [s.name for s in self.robot.parameters()],
        }
        definitions, matrices = self.shown_matrices(form)
        if definitions:
            data["definitions"] = {symbol.name: expression_text(expr) for symbol, expr in definitions}
        for name, value in matrices.items():
            data[name] = _nested_strings(value)
        return data

    @_clocked
    def shown_matrices(self, form: str = "tau") -> tuple[list[tuple[sympy.Symbol, sympy.Expr]], dict[str, Any]]:
        """What the text, LaTeX and JSON print: the matrices of :meth:`form_matrices` and, for nested equations,
        their shared subexpressions as definitions ``x1 = ...`` in order of use (sympy's ``cse``: printing a
        nested expression whole would repeat every shared part wherever it is used, exponentially in the
        number of joints); no definitions for expanded equations."""
        matrices = self.form_matrices(form)
        if self.expanded:
            return [], matrices
        taken = {s.name for s in (*self.symbols.q, *self.symbols.qd, *self.symbols.qdd, *self.robot.parameters())}
        return _shared(matrices, taken)

    @_clocked
    def to_latex(self, form: str = "tau") -> str:
        """LaTeX of every matrix of one form, one ``name = ...`` equation per line."""
        definitions, matrices = self.shown_matrices(form)
        lines = [f"{sympy.latex(symbol)} = {sympy.latex(expr)}" for symbol, expr in definitions]
        for name, value in matrices.items():
            shown = _display_object(value)
            lines.append(f"{_latex_name(name)} = {sympy.latex(shown)}")
        return " \\\\\n".join(lines)

    @_clocked
    def to_text(self, form: str = "tau") -> str:
        """Plain text, one element per line (``M[1,2] = ...``), 1-based indices; nested equations start with their
        shared subexpressions (``x1 = ...``)."""
        definitions, matrices = self.shown_matrices(form)
        lines = [f"{symbol} = {expr}" for symbol, expr in definitions]
        for name, value in matrices.items():
            lines.extend(_text_lines(name, value))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Equations(robot={self.robot.name!r}, method={self.method!r}, n={self.n})"

    def _repr_latex_(self) -> str:
        """Every matrix of the ``tau`` form (and the shared parts of nested equations), one per line."""
        return "$\\begin{gathered}" + self.to_latex("tau") + "\\end{gathered}$"


def _shared(matrices: dict[str, Any], taken: set[str]) -> tuple[list[tuple[sympy.Symbol, sympy.Expr]], dict[str, Any]]:
    """The common subexpressions of every entry of ``matrices`` (sympy's ``cse``, names ``x1, x2, ...`` that no
    symbol of the equations has), and the matrices rewritten in them."""
    names = (sympy.Symbol(f"x{k}") for k in range(1, 10**9) if f"x{k}" not in taken)
    entries = {name: list(value) if isinstance(value, sympy.MatrixBase) else list(value.flat) if isinstance(
        value, sympy.NDimArray) else [value] for name, value in matrices.items()}
    flat = [x for values in entries.values() for x in values]
    definitions, reduced = sympy.cse(flat, symbols=names, optimizations=None, order="none")
    out: dict[str, Any] = {}
    start = 0
    for name, value in matrices.items():
        part = reduced[start:start + len(entries[name])]
        start += len(part)
        if isinstance(value, sympy.MatrixBase):
            out[name] = sympy.ImmutableMatrix(value.rows, value.cols, part)
        elif isinstance(value, sympy.NDimArray):
            out[name] = sympy.ImmutableDenseNDimArray(part, value.shape)
        else:
            out[name] = part[0]
    return definitions, out


# -- display helpers (small elements are trig-simplified and factored for people) ---------
def display(expr: sympy.Expr) -> sympy.Expr:
    """A readable equivalent of ``expr``: angle sums recombined and common factors pulled
    out when the element is small; large elements stay in canonical form."""
    if expr == 0 or sympy.count_ops(expr) > DISPLAY_SIMPLIFY_LIMIT:
        return expr
    return sympy.factor_terms(sympy.trigsimp(expr))


def _display_object(value: Any) -> Any:
    if isinstance(value, sympy.NDimArray):
        return value.applyfunc(display)
    if isinstance(value, sympy.MatrixBase):
        return value.applyfunc(display)
    return display(value)


def _nested_strings(value: Any) -> Any:
    shown = _display_object(value)
    if isinstance(shown, sympy.NDimArray):
        return [_nested_strings(shown[i]) for i in range(shown.shape[0])]
    if isinstance(shown, sympy.MatrixBase):
        if shown.cols == 1:
            return [expression_text(x) for x in shown]
        return [[expression_text(shown[i, j]) for j in range(shown.cols)] for i in range(shown.rows)]
    return expression_text(shown)


#: The keys of the JSON of :meth:`Equations.to_dict` (and of ``robodyn linearize --symbolic -f json``) that list
#: the names of the symbols, and those that hold neither symbols nor expressions.
SYMBOL_KEYS = ("q", "qd", "qdd", "inputs", "parameters")
METADATA_KEYS = ("robot", "method", "form", "n", "joints", "output", "dt", "discretisation")


def read_dict(data: Mapping[str, Any]) -> dict[str, Any]:
    """The expressions of :meth:`Equations.to_dict` (after a JSON round trip) as sympy objects: a list of
    strings becomes a column matrix, a list of lists a matrix, deeper nesting an N-dim array; the
    ``definitions`` of nested equations are put back in place (the result shares them).

    Every name is read as the symbol listed under ``q``, ``qd``, ``qdd``, ``inputs`` or ``parameters`` (a
    parameter named ``I``, ``E``, ``S``, ``N``, ``O`` or ``Q`` stays a parameter, where ``sympify`` would read a
    constant), through the whitelist parser of :mod:`robodyn.model.expr`: nothing is evaluated. Anything but a
    mapping, or lists nested deeper than :data:`MAX_NESTING`, is one :class:`ModelError`."""
    if not isinstance(data, Mapping):
        raise ModelError(f"expected a mapping (JSON object) of equations, got {type(data).__name__}",
                         field="equations")
    names: list[str] = []
    for key in SYMBOL_KEYS:
        listed = data.get(key, [])
        if not isinstance(listed, list):
            raise ModelError("expected a list of names", field=key)
        check = check_parameter_name if key == "parameters" else check_name
        names += [check(name, key) for name in listed]
    symbols: dict[str, Any] = {name: sympy.Symbol(name) for name in names}
    definitions = data.get("definitions", {})
    if not isinstance(definitions, Mapping):
        raise ModelError("expected a mapping of names to expressions", field="definitions")
    for name, text in definitions.items():  # nested equations: each shared part in terms of the earlier ones
        if name in symbols:
            raise ModelError(f"{name!r} is defined twice or is also a symbol", field="definitions")
        symbols[check_name(name, "definitions")] = read_expression(text, symbols, f"definitions.{name}")
    skip = (*SYMBOL_KEYS, *METADATA_KEYS, "definitions")
    return {key: _read_nested(value, symbols, key) for key, value in data.items() if key not in skip}


def _read_nested(value: Any, symbols: Mapping[str, sympy.Symbol], key: str) -> Any:
    if isinstance(value, str):
        return read_expression(value, symbols, key)
    leaves, depth = _read_leaves(value, symbols, key)
    try:
        return sympy.ImmutableMatrix(leaves) if depth <= 2 else sympy.ImmutableDenseNDimArray(leaves)
    except ValueError:
        raise ModelError("the nested lists do not form a matrix or an array", field=key) from None


#: :func:`read_dict` refuses lists nested deeper than this (equations have matrices and 3-index arrays).
MAX_NESTING = 100


def _read_leaves(value: Any, symbols: Mapping[str, sympy.Symbol], key: str, level: int = 0) -> tuple[Any, int]:
    """Nested lists of strings as nested lists of expressions, and their depth (the same at every leaf)."""
    if isinstance(value, str):
        return read_expression(value, symbols, key), 0
    if not isinstance(value, list) or not value:
        raise ModelError("expected an expression or a non-empty list of them", field=key)
    if level >= MAX_NESTING:
        raise ModelError(f"lists nested more than {MAX_NESTING} deep", field=key)
    parts = [_read_leaves(v, symbols, key, level + 1) for v in value]
    depths = {depth for _, depth in parts}
    if len(depths) != 1:
        raise ModelError("the nested lists do not form a matrix or an array", field=key)
    return [x for x, _ in parts], depths.pop() + 1


def _latex_name(name: str) -> str:
    special = {"tau": "\\tau", "christoffel": "\\Gamma", "qq": "\\dot q\\dot q", "qd_sq": "\\dot q^2"}
    if name in special:
        return special[name]
    if "_" in name:
        head, tail = name.split("_", 1)
        return f"{head}_{{{tail}}}"
    return name if len(name) == 1 else f"\\mathrm{{{name}}}"


def _text_lines(name: str, value: Any) -> list[str]:
    shown = _display_object(value)
    if isinstance(shown, sympy.NDimArray):
        n = shown.shape[0]
        return [
            f"{name}[{i + 1},{j + 1},{k + 1}] = {shown[i, j, k]}"
            for i in range(n)
            for j in range(n)
            for k in range(n)
            if shown[i, j, k] != 0
        ]
    if isinstance(shown, sympy.MatrixBase):
        if shown.cols == 1:
            return [f"{name}[{i + 1}] = {shown[i]}" for i in range(shown.rows)]
        return [
            f"{name}[{i + 1},{j + 1}] = {shown[i, j]}" for i in range(shown.rows) for j in range(shown.cols)
        ]
    return [f"{name} = {shown}"]

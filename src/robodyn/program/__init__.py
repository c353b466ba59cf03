"""The straight-line program: one intermediate form for emitters and operation counts.

A :class:`Program` has inputs (q, qd, qdd and the parameters), a block of parameter-only
constants computed once, a block of run-time assignments, and named outputs. This first
version is built from any :class:`~robodyn.equations.Equations` with symengine's common
subexpression elimination (shared across all requested outputs, the Macsyma ``fortbigopt``
step); EMDEG's structure rules, parameter grouping and customised recursions belong to the
efficient-equations issue and will produce the same type.

Counting rules (used everywhere): each binary ``*`` or ``/`` is one multiplication (also by a
numeric constant other than 1 or -1; ``x**2`` is one, ``x**k`` is k - 1, ``x**-k`` is k); each
binary ``+`` or ``-`` is one addition; negation is free; sin and cos of the joint angles are
counted apart (``trig``), the additions of an angle sum such as sin(q2 + q3) once per distinct
sum; other function calls (sqrt, ...) apart (``functions``); the constants block is reported
apart and not charged per evaluation, as EMDEG and the Macsyma appendix did.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import symengine as se

from robodyn.algebra import SeExpr, to_se

__all__ = [
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


@dataclass(frozen=True)
class Assignment:
    """``name = expr``."""

    name: str
    expr: SeExpr

    def __str__(self) -> str:
        return f"{self.name} = {self.expr}"


@dataclass(frozen=True)
class OperationCount:
    multiplications: int = 0
    additions: int = 0
    trig: int = 0
    functions: int = 0

    def __add__(self, other: OperationCount) -> OperationCount:
        return OperationCount(
            self.multiplications + other.multiplications,
            self.additions + other.additions,
            self.trig + other.trig,
            self.functions + other.functions,
        )


def _is_unit(x: SeExpr) -> bool:
    return x.is_Number and abs(float(x)) == 1.0


def count_operations(expr: SeExpr, angles: Iterable[SeExpr] = ()) -> OperationCount:
    """Operations of one expression tree by the module's rules (shared subtrees counted each time)."""
    return _count(expr, frozenset(angles), in_product=False)


def _count(e: SeExpr, angles: frozenset, in_product: bool) -> OperationCount:
    if e.is_Atom:
        return OperationCount()
    args = list(e.args)
    if isinstance(e, se.Add):
        own = OperationCount(additions=len(args) - 1)
        return sum((_count(a, angles, False) for a in args), own)
    if isinstance(e, se.Mul):
        factors = [a for a in args if not _is_unit(a)]
        reciprocal_only = all(_reciprocal(a) for a in factors)
        # a * b / c: one operation per factor after the first; 1/(b c) also pays for its division
        own = OperationCount(multiplications=max(len(factors) - 1, 0) + (1 if reciprocal_only else 0))
        return sum((_count(a, angles, True) for a in factors), own)
    if isinstance(e, se.Pow):
        base, exponent = args
        if exponent.is_integer:
            k = int(exponent)
            own = k - 1 if k > 0 else -k - 1 + (0 if in_product else 1)  # x**-k = 1/(x ... x)
            return _count(base, angles, False) + OperationCount(multiplications=own)
        return _count(base, angles, False) + OperationCount(functions=1)
    if isinstance(e, (se.sin, se.cos)) and args[0].free_symbols <= angles:
        return OperationCount(trig=1)
    return sum((_count(a, angles, False) for a in args), OperationCount(functions=1))


def _trig_arguments(e: SeExpr, angles: Iterable[SeExpr]) -> set[SeExpr]:
    """The arguments of the sin and cos of joint angles (and their sums) in ``e``."""
    known = frozenset(angles)
    return {f.args[0] for f in e.atoms(se.sin, se.cos) if f.args[0].free_symbols <= known}


def _reciprocal(x: SeExpr) -> bool:
    return isinstance(x, se.Pow) and x.args[1].is_Number and x.args[1] < 0


@dataclass
class Program:
    """Inputs, parameter-only constants, run-time assignments and named outputs."""

    inputs: dict[str, list[se.Symbol]]
    constants: list[Assignment]
    body: list[Assignment]
    outputs: dict[str, list[SeExpr]]
    angles: list[se.Symbol] = field(default_factory=list)
    route: str = ""
    #: outputs defined as a multiple of another (printed, not computed): {name: "factor * other"}
    references: dict[str, str] = field(default_factory=dict)

    def unused_parameters(self) -> list[se.Symbol]:
        """The parameter inputs that no constant, assignment or output uses: they cannot act on these
        outputs (for the PUMA's tau, link 1's tensor but ZZ1; for a right-angled arm, what regrouping or
        the zeros of the geometry cancel). They stay inputs, so that the parameter vector keeps its order."""
        used: set = set()
        for a in [*self.constants, *self.body]:
            used |= a.expr.free_symbols
        for xs in self.outputs.values():
            for x in xs:
                used |= x.free_symbols
        return [s for s in self.inputs.get("parameters", []) if s not in used]

    def count(self) -> dict[str, OperationCount]:
        """Per-evaluation count (body and outputs) and the constants block, apart. The sum of angles in
        sin(q2 + q3) is charged once per distinct sum (its additions), however many sin and cos use it."""
        run = sum((count_operations(a.expr, self.angles) for a in self.body), OperationCount())
        run = sum(
            (count_operations(x, self.angles) for xs in self.outputs.values() for x in xs), run
        )
        sums = {arg for a in self.body for arg in _trig_arguments(a.expr, self.angles) if isinstance(arg, se.Add)}
        sums |= {arg for xs in self.outputs.values() for x in xs for arg in _trig_arguments(x, self.angles)
                 if isinstance(arg, se.Add)}
        run = sum((count_operations(s) for s in sums), run)
        constants = sum((count_operations(a.expr, self.angles) for a in self.constants), OperationCount())
        return {"evaluation": run, "constants": constants}

    def evaluate(self, values: Mapping[str, float]) -> dict[str, np.ndarray]:
        """Run the program on numbers (for tests): ``values`` maps input names to floats."""
        env: dict[Any, Any] = {se.Symbol(k): v for k, v in values.items()}

        def value(e: SeExpr) -> float:  # only the symbols e uses: a dict of the whole env costs its size each time
            used = {s: env[s] for s in e.free_symbols if s in env}
            return float(e.xreplace(used)) if used else float(e)

        for a in [*self.constants, *self.body]:
            env[se.Symbol(a.name)] = value(a.expr)
        return {name: np.array([value(x) for x in xs]) for name, xs in self.outputs.items()}

    def __str__(self) -> str:
        lines = ["# constants (computed once)"]
        lines += [str(a) for a in self.constants]
        lines += ["# run time"]
        lines += [str(a) for a in self.body]
        for name, xs in self.outputs.items():
            lines += [f"{name} = {xs[0]}"] if len(xs) == 1 else [f"{name}[{i + 1}] = {x}" for i, x in enumerate(xs)]
        if self.references:
            lines.append("# references (not computed)")
            lines += [f"{name} = {ref}" for name, ref in self.references.items()]
        c = self.count()
        e, k = c["evaluation"], c["constants"]
        lines.append(
            f"# {e.multiplications} multiplications, {e.additions} additions, {e.trig} sin/cos per evaluation; "
            f"constants {k.multiplications} multiplications, {k.additions} additions"
        )
        return "\n".join(lines)


def _entries(matrix: se.DenseMatrix) -> list[SeExpr]:
    return [matrix[i, j] for i in range(matrix.rows) for j in range(matrix.cols)]


def from_equations(eqs: Any, outputs: Sequence[str] = ("tau",), *, canonical: bool = True) -> Program:
    """A Program for the named parts of ``eqs`` (``tau``, ``M``, ``h``, ``G``...), with common
    subexpressions shared across all of them; ``canonical`` starts from the expanded forms
    (else from the formulation's own nested expressions)."""
    q, qd, qdd = eqs.symbols.symengine()
    params = [se.Symbol(s.name) for s in eqs.robot.parameters()]
    exprs: list[SeExpr] = []
    sizes = []
    for part in outputs:
        matrix = eqs.canonical(part) if canonical else eqs.raw(part)
        entries = _entries(matrix)
        exprs += entries
        sizes.append((part, len(entries)))
    # symengine's cse names its temporaries x0, x1, ...: a parameter of that form is renamed around it
    from robodyn.program.builder import fresh_prefix

    names = [str(s) for s in params]
    safe = fresh_prefix("p", names)
    clash = {s: se.Symbol(f"{safe}{i}") for i, s in enumerate(params) if re.fullmatch(r"x\d+", str(s))}
    replacements, reduced = se.cse([e.xreplace(clash) for e in exprs] if clash else exprs)
    if clash:  # the parameters back, and cse's temporaries under names no parameter has
        temporary = fresh_prefix("x", names)
        rename = {v: k for k, v in clash.items()}
        rename.update({s: se.Symbol(f"{temporary}{i}") for i, (s, _) in enumerate(replacements)})
        replacements = [(s.xreplace(rename), v.xreplace(rename)) for s, v in replacements]
        reduced = [e.xreplace(rename) for e in reduced]
    # cse returns the replacements in dependency order: parameter-only ones go to the constants
    known = set(params)
    constants, body = [], []
    for symbol, value in replacements:
        if value.free_symbols <= known:
            constants.append((symbol, value))
            known.add(symbol)
        else:
            body.append((symbol, value))
    out: dict[str, list[SeExpr]] = {}
    k = 0
    for part, size in sizes:
        out[part] = list(reduced[k : k + size])
        k += size
    return Program(
        inputs={"q": q, "qd": qd, "qdd": qdd, "parameters": params},
        constants=[Assignment(str(s), v) for s, v in constants],
        body=[Assignment(str(s), v) for s, v in body],
        outputs=out,
        angles=q,
    )


#: What :func:`build` can produce: the parts of tau = M qdd + h + G + damping + load,
#: ``bias`` = tau at qdd = 0 (h + G + damping + load), ``forward`` = qdd = M^-1 (tau - bias), and
#: ``elements``: Burdick's distinct M_ij, c_ijj, b_ijk, g_i (one output each, named M12, c211, ...).
OUTPUTS = ("tau", "M", "h", "G", "bias", "forward", "elements")

#: The routes :func:`build` knows (see :mod:`robodyn.program.routes`).
ROUTES = ("recursive", "factored", "expanded", "emdeg")

#: Up to this many joints ``route="auto"`` also tries the factored route for every part;
#: beyond, only for the configuration-only parts M and G (whose canonical forms stay small;
#: the velocity terms of a 6-joint arm do not, and the recursion has always been cheaper).
FACTORED_LIMIT = 3
FACTORED_PARTS = ("M", "G")
#: ... and only while the part has at most this many terms in canonical form (a 3-joint arm
#: of general geometry, every parameter a symbol, has about 12,000: factoring them takes
#: minutes and the recursion wins anyway).
FACTORED_TERMS = 3000


def _unit_or_zero(x: Any) -> bool:
    e = to_se(x)
    return bool(e.is_Number) and float(e) in (0.0, 1.0, -1.0)


def right_angled(robot: Any) -> bool:
    """Every fixed angle of the geometry a multiple of pi/2 exactly: the twists between joint axes, the
    joint offsets theta and the rotations of placements have sines and cosines 0 or +-1 (not 6e-17 as
    for a floating-point pi/2), so they do not multiply the terms of the canonical forms (each general
    angle splits every term it meets in two or more). In modified DH; the first link's twist (base to
    joint 1) only turns gravity and is not looked at. A cheap test, made before any expansion."""
    from robodyn.formulations.customised_ne import modified

    for k, link in enumerate(modified(robot).links):
        angles = [to_se(link.theta)] + ([to_se(link.alpha)] if k else [])
        if not all(_unit_or_zero(se.sin(a)) and _unit_or_zero(se.cos(a)) for a in angles):
            return False
        if getattr(link, "has_placement", False) and not all(
            _unit_or_zero(link.placement[r, c]) for r in range(3) for c in range(3)
        ):
            return False
    return True


def build(robot: Any, outputs: Sequence[str] = ("tau",), route: str = "auto", *, base: bool = False) -> Program:
    """The cheapest Program for ``outputs`` of ``robot`` (the stable entry point for emitters).

    ``base=True`` builds the model in the robot's base parameters
    (:func:`robodyn.identification.base_parameters`) by the recursive route: its ``parameters`` input is
    the base parameters (``b.names`` order: feed it identified values, or ``b.numeric_values()``), then any
    symbols of the geometry, gravity and tip load; no parameter that cannot act is computed with, which
    makes it the cheapest inverse dynamics there is (Khalil and Kleinfinger).

    ``route``: ``"auto"`` picks, part by part (tau, M, h, G, bias; ``forward`` is made of M and
    bias), the cheaper of the recursive and factored routes by multiplications + additions;
    or one of :data:`ROUTES` for the whole program. ``program.route`` says what was taken
    (e.g. ``"M: factored, bias: recursive"``). ``inputs``: ``q``, ``qd``, ``qdd`` (n symbols
    each; ``tau`` too for ``forward``) and ``parameters`` (the robot's free symbols in
    :meth:`~robodyn.Manipulator.parameters` order; empty for a numeric robot, whose numbers are
    folded in). ``outputs[name]``: n entries, or n*n row-major for M; for ``elements`` one output
    per distinct element.
    """
    from robodyn.program import routes

    outputs = tuple(outputs)
    unknown = [name for name in outputs if name not in OUTPUTS]
    if unknown:
        raise ValueError(f"unknown output {unknown[0]!r}; choose from {', '.join(OUTPUTS)}")
    if route not in ("auto", *ROUTES):
        raise ValueError(f"unknown route {route!r}; choose from auto, {', '.join(ROUTES)}")
    if "elements" in outputs:
        if outputs != ("elements",) or route not in ("auto", "emdeg"):
            raise ValueError("'elements' is built alone, by the emdeg route")
        route = "emdeg"
    if base:
        return _build_base(robot, outputs, route)
    if route != "auto":
        program = getattr(routes, route)(robot, outputs)
        program.route = program.route or route  # a route may say more (emdeg: "emdeg (unfactored: ...)")
        return program
    ctx = routes.Context(robot)
    needed = sorted({p for o in outputs for p in (("M", "bias") if o == "forward" else (o,))})
    plan = {part: _cheapest_route(ctx, part) for part in needed}
    program = routes.assemble(ctx, outputs, plan)
    program.route = ", ".join(f"{part}: {r}" for part, r in plan.items()) if len(set(plan.values())) > 1 else (
        next(iter(plan.values()))
    )
    return program


def _build_base(robot: Any, outputs: tuple[str, ...], route: str) -> Program:
    from robodyn.identification import base_parameters
    from robodyn.program import routes

    if route not in ("auto", "recursive") or "elements" in outputs:
        raise ValueError("the base-parameter model is built by the recursive route (outputs tau, M, h, G, bias, "
                         "forward)")
    ctx = routes.Context(robot, base_parameters(robot))
    needed = {p for o in outputs for p in (("M", "bias") if o == "forward" else (o,))}
    program = routes.assemble(ctx, outputs, dict.fromkeys(needed, "recursive"))
    program.route = "recursive, base parameters"
    return program


def _cheapest_route(ctx: Any, part: str) -> str:
    from robodyn.program import routes

    if ctx.robot.n > FACTORED_LIMIT and part not in FACTORED_PARTS:
        return "recursive"
    if any(not link.alpha.is_number for link in ctx.robot.links):  # sin, cos of every twist multiply the terms
        return "recursive"
    # decided before any expansion: a 7-joint arm with twists of general angle took minutes to expand,
    # and the recursion won anyway (each such angle multiplies the terms of the entries it enters)
    if ctx.robot.n > FACTORED_LIMIT and not right_angled(ctx.robot):
        return "recursive"
    if routes.canonical_terms(ctx, part) > FACTORED_TERMS:
        return "recursive"
    return min(("recursive", "factored"), key=lambda r: routes.part_cost(ctx, part, r))


def emdeg_text(robot: Any) -> str:
    """EMDEG's elements the way its appendix II prints them: the configuration-independent
    constants (computed once), the configuration-dependent terms, the distinct elements, and
    the elements that are multiples of others."""
    program = build(robot, ("elements",))
    c = program.count()
    run, constants = c["evaluation"], c["constants"]
    how = "factored" if program.route == "emdeg" else program.route.removeprefix("emdeg (").rstrip(")")
    lines = [f"# {robot.name}: Burdick's M_ij, c_ijj, b_ijk, g_i (EMDEG, seed 001), {how}"]
    lines.append("# configuration-independent terms, computed once and stored as constants:")
    lines += [str(a) for a in program.constants]
    lines.append("# configuration-dependent terms, computed in real time:")
    lines += [str(a) for a in program.body]
    lines.append("# the distinct elements:")
    lines += [f"{name} = {xs[0]}" for name, xs in program.outputs.items()]
    lines.append("# the other elements (not computed):")
    lines += [f"{name} = {ref}" for name, ref in program.references.items()]
    lines.append(
        f"# {run.multiplications} multiplications, {run.additions} additions, {run.trig} sin/cos per evaluation; "
        f"constants: {constants.multiplications} multiplications, {constants.additions} additions"
    )
    return "\n".join(lines)

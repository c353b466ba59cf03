"""The choice of a program's route: :func:`build` returns the cheapest :class:`~robodyn.program.core.Program` it
finds among the routes of :mod:`robodyn.program.routes` (see :mod:`robodyn.program` for the routes and the counting
rules), and :func:`emdeg_text` prints EMDEG's elements as its appendix II does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from robodyn.errors import ModelError
from robodyn.formulations import MAX_DERIVE_LINKS
from robodyn.model.structure import IMPLICIT, PROJECTED, TREE, refuse, structure
from robodyn.program import coupled, floating, routes
from robodyn.program.core import Program
from robodyn.program.outputs import (
    ABA,
    AUTO,
    CENTROIDAL_OUTPUTS,
    DERIVATIVE_GROUPS,
    DERIVATIVES,
    FRAME_OUTPUTS,
    LDLT,
    OUTPUTS,
    ROUTES,
    is_frame_output,
)
from robodyn.program.progress import stage

__all__ = ["ABA", "BUILDERS", "FACTORED_ESTIMATE", "FACTORED_LIMIT", "FACTORED_PARTS", "FACTORED_TERMS",
           "FACTORED_WORK", "FLOAT_TERM_COST", "LDLT", "build", "emdeg_text"]


#: Up to this many joints ``route="auto"`` also tries the factored route for every part;
#: beyond, only for the configuration-only parts M and G (whose canonical forms stay small;
#: the velocity terms of a 6-joint arm do not, and the recursion has always been cheaper).
FACTORED_LIMIT = 3
FACTORED_PARTS = ("M", "G")
#: ... and only while the part has at most this many terms in canonical form (a 3-joint arm
#: of general geometry, every parameter a symbol, has about 12,000: factoring them takes
#: minutes and the recursion wins anyway).
FACTORED_TERMS = 3000
#: The canonical form is not computed where :func:`robodyn.program.routes.term_estimate` (no expansion) gives more
#: terms than this: the estimate was 1.1 to 15 times the count of the factored entries' terms on every arm measured
#: (the built-in arms, right-angled chains, the iiwa), so such a part has more than FACTORED_TERMS, and expanding it
#: is what took minutes (a right-angled chain's M: 23,570 terms at 8 joints (1.9 s), 265,765 at 10 (55 s); a
#: 20-joint chain's M is estimated at 1e11 terms in 0.2 s).
FACTORED_ESTIMATE = 45_000
#: Beyond FACTORED_LIMIT joints, the work of factoring a part (:func:`robodyn.program.routes.factored_size`: its
#: entries times their terms, each entry being tried against every earlier one) is capped: beyond this the
#: recursion is taken without trying. The symbolic PUMA's M (19 entries, 688 terms: 13,072), which the factored
#: route wins (125 operations against 218), factors in about 2 s; the iiwa's M from its URDF (27 entries, 745
#: terms: 20,115), which it loses (948 against 268), took 7 s.
FACTORED_WORK = 15_000
#: Below the fewest operations per canonical term (:func:`robodyn.program.routes.factored_size`) the factored route
#: gave on a right-angled arm with floating-point numbers beyond FACTORED_LIMIT joints: 0.34 (M and G of the
#: built-in arms, the iiwa's URDF, a 6-joint chain and 30 random right-angled arms of 4 to 6 joints; 0.85 and more
#: but for arms with parallel joints, whose angle sums shorten the sums). Floating-point coefficients cancel
#: exactly neither in the expansion nor between entries (the PUMA 560 with its numbers made rational: M of 262
#: terms, factored into 125 operations; with floats, 423 terms and 415 operations), so such a part whose
#: recursion costs at most this many operations per term is left to the recursion without factoring (the
#: chains' and the large random arms' G: 0.05 to 0.2).
FLOAT_TERM_COST = 0.3


def build(robot: Any, outputs: Sequence[str] = ("tau",), route: str = "auto", *, base: Any = None) -> Program:
    """The cheapest Program for ``outputs`` of ``robot`` (the stable entry point for emitters).

    ``base=b``, the robot's base parameters ``b = robodyn.identification.base_parameters(robot)``, builds the
    model in them by the recursive route (the program layer sits beside identification and does not import
    it; :func:`robodyn.codegen.module_spec` and :func:`robodyn.runtime.compile` take ``base=True``): its ``parameters``
    input is
    the base parameters (``b.names`` order: feed it identified values, or ``b.numeric_values()``), then any
    symbols of the geometry, gravity and tip load; no parameter that cannot act is computed with, which
    makes it the cheapest inverse dynamics there is (Khalil and Kleinfinger).

    ``route``: ``"auto"`` picks, part by part (tau, M, h, G, bias), the cheaper of the recursive and
    factored routes by multiplications + additions; ``forward`` is then built both ways, by an L D L^T
    solve over M and bias and by Featherstone's articulated-body algorithm (O(n): cheaper from about a
    dozen joints), and the cheaper whole program is kept (a tie keeps L D L^T), both counts in
    ``program.candidates``; or one of :data:`ROUTES` for the whole program (``"aba"``: ``forward`` by the
    articulated-body algorithm, the other parts as ``"auto"`` picks them). ``program.route`` says what
    was taken (e.g. ``"M: factored, bias: recursive"``; ``"aba"`` where the articulated-body algorithm
    gives ``forward``). ``inputs``: ``q``, ``qd``, ``qdd`` (n symbols
    each; ``tau`` too for ``forward``) and ``parameters`` (the robot's free symbols in
    :meth:`~robodyn.Manipulator.parameters` order; empty for a numeric robot, whose numbers are
    folded in). ``outputs[name]``: n entries, or n*n row-major for M; for ``elements`` one output
    per distinct element.

    A kinematic tree (:attr:`~robodyn.Manipulator.parents`) is built by every route, planned as a chain is:
    M's entries of two links on different branches are exact zeros (never computed by the recursive route),
    and the L D L^T solve of ``forward`` is Featherstone's LTDL, which visits only the ancestors of each link
    (no fill-in).
    """
    outputs = tuple(outputs)
    unknown = [name for name in outputs if name not in OUTPUTS and not is_frame_output(name)]
    if unknown:
        raise ValueError(f"unknown output {unknown[0]!r}; choose from {', '.join(OUTPUTS)}, or a frame's "
                         f"{', '.join(FRAME_OUTPUTS)} (of the frame F: 'pose:F')")
    if route not in (AUTO, *ROUTES):
        raise ValueError(f"unknown route {route!r}; choose from {AUTO}, {', '.join(ROUTES)}")
    shape = structure(robot)
    builder = BUILDERS.get((shape.kind, shape.manifold))
    if builder is None:
        raise refuse(robot, "a program (rd.compile)", what=f"{shape.variety} and {shape.kind} loops")
    return builder(robot, outputs, route, base)


def _build_floating(robot: Any, outputs: tuple[str, ...], route: str, base: Any) -> Program:
    """nq != nv (a floating base, spherical or planar joints): :mod:`robodyn.program.floating`; every program, code
    generator and rd.compile comes here."""
    floating.check(robot, outputs, route, base)
    _check_size(robot, outputs)
    return floating.build(robot, outputs, route, base)


def _fixed_checks(robot: Any, outputs: tuple[str, ...], route: str, base: Any) -> str:
    """What a robot of one coordinate per joint is checked for before its program is built; the route (``emdeg``
    for ``elements``)."""
    if set(outputs) & set(CENTROIDAL_OUTPUTS):
        raise ValueError(f"{robot.name}: the centroidal outputs ({', '.join(CENTROIDAL_OUTPUTS)}) are built for a "
                         "floating base (floating=True) so far")
    if "elements" in outputs:
        if outputs != ("elements",) or route not in ("auto", "emdeg"):
            raise ValueError("'elements' is built alone, by the emdeg route")
        route = "emdeg"
    _check_size(robot, outputs)
    if base is True:
        raise TypeError("build(..., base=b) takes the robot's base parameters, "
                        "b = robodyn.identification.base_parameters(robot)")
    return route


def _build_projected(robot: Any, outputs: tuple[str, ...], route: str, base: Any) -> Program:
    """Coupled coordinates: the tree's program, projected (:mod:`robodyn.program.coupled`)."""
    route = _fixed_checks(robot, outputs, route, base)
    if base is not None and base is not False:
        raise ValueError(f"{robot.name} has coupled joints: no base-parameter program yet (its base parameters "
                         "and their regressor: robodyn.identification.base_parameters)")
    return coupled.build(robot, outputs, route)


def _build_tree(robot: Any, outputs: tuple[str, ...], route: str, base: Any) -> Program:
    """A tree of one-coordinate joints (implicit loops are refused on the way, in one line, by the routes)."""
    route = _fixed_checks(robot, outputs, route, base)
    if base is not None and base is not False:
        return _build_base(robot, outputs, route, base)
    if route == "aba":  # forward by the articulated-body algorithm, the other parts as auto plans them
        ctx = routes.Context(robot)
        plan = {part: _cheapest_route(ctx, part) for part in _needed(outputs, forward=False)}
        plan["forward"] = "aba"
        program = routes.assemble(ctx, outputs, plan)
        program.route = _route_name(plan)
        return program
    if route != "auto":
        program = getattr(routes, route)(robot, outputs)
        program.route = program.route or route  # a route may say more (emdeg: "emdeg (unfactored: ...)")
        return program
    ctx = routes.Context(robot)
    plan = {part: _cheapest_route(ctx, part) for part in _needed(outputs)}
    if "forward" not in outputs:
        program = routes.assemble(ctx, outputs, plan)
        program.route = _route_name(plan)
        return program
    # forward by L D L^T and by the articulated-body algorithm (the other outputs' parts as planned), in one
    # builder: the parts both share are built once
    program, articulated = routes.forward_candidates(ctx, outputs, plan, ("ldlt", "aba"))
    program.route = _route_name(plan)
    others = {part: plan[part] for part in _needed(outputs, forward=False)}
    articulated.route = _route_name({**others, "forward": "aba"})
    candidates = {LDLT: (program.route, program.count()["evaluation"]),
                  ABA: (articulated.route, articulated.count()["evaluation"])}
    best = articulated if routes.program_cost(articulated) < routes.program_cost(program) else program
    best.candidates = candidates
    return best


#: The program's builder of each structure, by (:attr:`~robodyn.model.structure.Structure.kind`,
#: :attr:`~robodyn.model.structure.Structure.manifold`): the one dispatch of :func:`build`.
BUILDERS: dict[tuple[str, bool], Callable[[Any, tuple[str, ...], str, Any], Program]] = {
    (TREE, False): _build_tree,
    (PROJECTED, False): _build_projected,
    (IMPLICIT, False): _build_tree,
    (TREE, True): _build_floating,
    (PROJECTED, True): _build_floating,
}


def _needed(outputs: Sequence[str], *, forward: bool = True) -> list[str]:
    """The parts (tau, M, h, G, bias) that ``outputs`` are made of (``forward=False``: but for ``forward``)."""
    return sorted({p for o in outputs if forward or o != "forward" for p in routes.parts_of(o)})


def _route_name(plan: dict[str, str]) -> str:
    """``"recursive"`` when every part took one route, else ``"M: factored, bias: recursive"``; ``"recursive"``
    for a program of derivatives alone (which the recursions give)."""
    if len(set(plan.values())) > 1:
        return ", ".join(f"{part}: {r}" for part, r in plan.items())
    return next(iter(plan.values()), "recursive")


def _build_base(robot: Any, outputs: tuple[str, ...], route: str, base: Any) -> Program:
    if route not in (AUTO, "recursive") or "elements" in outputs or set(outputs) & set(DERIVATIVES):
        raise ValueError("the base-parameter model is built by the recursive route (outputs tau, M, h, G, bias, "
                         "forward)")
    if base.robot is not robot and base.robot != robot:
        raise ValueError(f"base= holds the base parameters of {base.robot.name}, not of {robot.name}")
    ctx = routes.Context(robot, base)
    program = routes.assemble(ctx, outputs, dict.fromkeys(_needed(outputs), "recursive"))
    program.route = "recursive, base parameters"
    return program


#: The longest chain of links (a link and its ancestors) whose programs beyond ``tau`` are built: M has depth^2
#: entries and the L D L^T solve depth^3 operations along a chain. Measured on a chain of general geometry (tau, M,
#: h, bias, G and forward, 2 shared cores): 40 links 8.6 s of CPU and 30,000 multiplications, 80 links 37 s and
#: 87,000 (then the C compiler's time on that much code); a 200-link chain ran for minutes. Trees go by their
#: longest chain: a 101-joint humanoid with hands of short chains is built.
MAX_PROGRAM_DEPTH = 80
#: The largest derivative programs (dtau, dqdd) built, in :func:`derivative_work`: a chain of 40 links' (40 x 820).
#: dtau's entry (i, j) is nonzero only where one coordinate is the other's ancestor (the analytic recursion of
#: :mod:`robodyn.recursions.rnea_derivatives`, forward mode on a floating base), and dqdd solves M for every
#: coordinate's column, each solve along the ancestors: both grow as nv times the ancestor pairs. Measured (chain of
#: general geometry, 2 shared cores): 30 links dtau 15 s of CPU; 40 links dtau 17 s (28,132 multiplications), dqdd
#: 88 s (214,649); trees weigh less than chains of as many links: alex_psyonic_hands (45 coordinates on a floating
#: base, 26,910) dtau and dqdd 6.5 min of build and -O1 compile on loaded cores.
MAX_DERIVATIVE_WORK = 40 * 820
#: The same for dtau alone (no dqdd asked for), which builds some five times faster at equal work (the 40-link
#: chain's dtau 17 s against dqdd's 88 s): romeo (55 joints on a floating base, 43,798) builds tau, M, the centroidal
#: outputs and dtau in 174 s of CPU and 1.3 GB at -O3 (2 shared cores; its dtau alone, since in the analytic
#: floating-base form of 13,565 multiplications, in 110 s and 1.25 GB); a 46-link chain (49,726) passes, 47
#: (53,016) not.
MAX_DTAU_WORK = 50_000


def derivative_work(robot: Any) -> int:
    """nv times the pairs (a coordinate, one of its ancestors or itself): n^2 (n + 1) / 2 for a chain; a floating
    base's six coordinates are ancestors of every joint (and a chain among themselves)."""
    pairs = sum(len(robot.ancestors(k)) for k in range(robot.n))
    if getattr(robot, "floating", False):
        pairs += 6 * robot.n + 21
    return robot.nv * pairs


def _check_size(robot: Any, outputs: Sequence[str]) -> None:
    """One line, before any work, for a program that would take more than minutes to build (``tau`` alone is
    O(n) and always built)."""
    if set(outputs) <= {"tau"}:
        return
    asked = set(outputs) & set(DERIVATIVES)
    dtau_only = asked <= set(DERIVATIVE_GROUPS["dtau"])
    limit = MAX_DTAU_WORK if dtau_only else MAX_DERIVATIVE_WORK
    if asked and (work := derivative_work(robot)) > limit:
        raise ModelError(f"{robot.n} links: {'dtau' if dtau_only else 'dqdd'} programs are built up to a chain of "
                         f"{46 if dtau_only else 40} links' size (nv times the ancestor pairs: {limit:,}; this robot "
                         f"{work:,})", field="links")
    depth = max((len(robot.ancestors(k)) for k in range(robot.n)), default=0)  # (a floating body alone: none)
    if depth > MAX_PROGRAM_DEPTH:
        raise ModelError(f"a chain of {depth} links: programs beyond tau are built for chains of at most "
                         f"{MAX_PROGRAM_DEPTH} links (M grows as n^2, its solve as n^3)", field="links")


def _cheapest_route(ctx: Any, part: str) -> str:
    stage(f"choosing the route of {part}")
    if ctx.robot.n > FACTORED_LIMIT and part not in FACTORED_PARTS:
        return "recursive"
    if any(not link.alpha.is_number for link in ctx.robot.links):  # sin, cos of every twist multiply the terms
        return "recursive"
    if ctx.robot.n > MAX_DERIVE_LINKS:  # the factored route needs the symbolic equations, refused past this
        return "recursive"
    # decided before any expansion: a 7-joint arm with twists of general angle took minutes to expand,
    # and the recursion won anyway (each such angle multiplies the terms of the entries it enters)
    if ctx.robot.n > FACTORED_LIMIT and not routes.right_angled(ctx.robot):
        return "recursive"
    # what remains is decided before any expansion too, by an estimate of the terms (milliseconds): expanding a
    # 10-joint right-angled chain's M took a minute, a 20-joint one's did not end
    if routes.term_estimate(ctx, part) > FACTORED_ESTIMATE:
        return "recursive"
    if routes.canonical_terms(ctx, part) > FACTORED_TERMS:
        return "recursive"
    if ctx.robot.n <= FACTORED_LIMIT:  # small: both routes built and compared
        return min(("recursive", "factored"), key=lambda r: routes.part_cost(ctx, part, r))
    terms, entries = routes.factored_size(ctx, part)
    if terms * entries > FACTORED_WORK:
        return "recursive"
    recursive = routes.part_cost(ctx, part, "recursive")
    if ctx.robot.has_floats and recursive[0] <= FLOAT_TERM_COST * terms:
        return "recursive"
    return "factored" if routes.part_cost(ctx, part, "factored") < recursive else "recursive"


def emdeg_text(robot: Any) -> str:
    """EMDEG's elements the way its appendix II prints them: the configuration-independent
    constants (computed once), the configuration-dependent terms, the distinct elements, and
    the elements that are multiples of others."""
    program = build(robot, ("elements",))
    c = program.count()
    run, constants = c["evaluation"], c["constants"]
    how = "factored" if program.route == "emdeg" else program.route.removeprefix("emdeg (").rstrip(")")
    lines = [f"# {robot.name}: Burdick's M_ij, c_ijj, b_ijk, g_i (EMDEG), {how}"]
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

"""Routes to a Program; :func:`robodyn.program.build` picks the cheapest for each part.

- ``recursive``: the customised Newton-Euler and composite-body recursions of
  :mod:`robodyn.recursions` run on program-building scalars
  (:mod:`robodyn.program.builder`), parameters regrouped;
- ``factored``: the canonical Newton-Euler parts as grouped-constant sums of products in the
  best angle basis, factored (:mod:`robodyn.program.factor`);
- ``expanded``: the canonical parts with common subexpressions shared (the baseline);
- ``emdeg``: Burdick's distinct elements, factored.

``recursive`` and ``factored`` build *parts* (tau, M, h, G, bias) into one shared builder, so a
program may take M from one route and the bias from the other; ``forward`` is then an
unrolled L D L^T solve over the chosen M and bias (O(n^3); on a kinematic tree Featherstone's L^T D L, which
visits only the ancestors of each link, :func:`ldlt_solve`), or, by the ``aba`` route, Featherstone's
articulated-body algorithm (:mod:`robodyn.recursions.aba`, O(n)) run on the builder's scalars.

Kinematic trees (:attr:`~robodyn.Manipulator.parents`): every route takes them. The recursions propagate from
each link's parent, and M's entries of links on different branches are exact zeros, never computed; the
factored, expanded and emdeg routes start from the symbolic equations, which :func:`robodyn.derive` gives for
trees too.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any, cast

import symengine as se
import sympy

from robodyn.algebra import SeExpr, ShapeMemo, canonical, to_se
from robodyn.equations import BIAS_PARTS, sum_parts
from robodyn.formulations import derive
from robodyn.formulations import emdeg as burdick
from robodyn.model.dh import modified, right_angled
from robodyn.model.manipulator import Manipulator
from robodyn.model.params import geometry_symbols
from robodyn.program import factor
from robodyn.program.builder import Builder, fresh_prefix
from robodyn.program.core import Assignment, Program
from robodyn.program.frames import frame_outputs
from robodyn.program.outputs import DERIVATIVE_GROUPS as DERIVATIVE_GROUPS  # the one vocabulary's, re-exported
from robodyn.program.outputs import DERIVATIVES, FORWARD_ROUTES, PARTS, is_frame_output
from robodyn.program.progress import stage
from robodyn.recursions import aba as featherstone
from robodyn.recursions import composite, newton_euler, rnea_derivatives
from robodyn.recursions.arm import ArmData, Inertial, arm_data
from robodyn.recursions.forward_mode import DualOps, constant, jacobian, seeded
from robodyn.recursions.parameters import INERTIAL, TENSOR_INDEX, per_link
from robodyn.recursions.vec3 import Mat, Vec
from robodyn.symbols import joint_symbols


def solves(output: str) -> bool:
    """Whether ``output`` solves M qdd = tau - bias (``forward``, the forward-dynamics derivatives): tau an input."""
    return output == "forward" or output.startswith("dqdd_")


def parts_of(output: str) -> tuple[str, ...]:
    """The parts an output is made of: ``forward`` and the forward-dynamics derivatives of M and bias (solved
    by L D L^T), the inverse-dynamics derivatives of none (the recursion on duals), a part of itself."""
    if solves(output):
        return ("M", "bias")
    return () if output.startswith("dtau_") or is_frame_output(output) else (output,)


#: Candidates for M whose untidied count is within this factor of the least are tidied and counted again
#: (:attr:`Context.mass_matrix`); the passes took 0 to 9 % off the counts measured (the built-in arms, the tree
#: tests/data/torso_two_arms.yaml, chains of general geometry of 6 to 40 joints).
TIDY_MARGIN = 1.15


class Context:
    """One robot's inputs, and what the routes derive from it, computed once.

    With ``base`` (the robot's :class:`~robodyn.identification.BaseParameters`), the links carry the base
    parameters as symbols instead of the robot's own values: the inputs ``parameters`` are then the base
    parameters (in ``base.names`` order), followed by the symbols of the geometry, gravity and tip load,
    if any (sorted by name), and only the recursive route applies.
    """

    def __init__(self, robot: Manipulator, base: Any = None) -> None:
        self.robot = robot
        self.base = base
        q, qd, qdd = joint_symbols(robot.n).symengine()
        if base is None:
            self.params = [se.Symbol(s.name) for s in robot.parameters()]
            self.arm = modified(robot)
        else:
            self.arm = base.frames
            self.params = [se.Symbol(name) for name in base.names] + [
                se.Symbol(s.name) for s in sorted(_known_symbols(base.frames), key=lambda s: s.name)]
            if len({str(s) for s in self.params}) < len(self.params):
                raise ValueError(f"{robot.name}: a symbol of the geometry has the name of a base parameter")
        tau = [se.Symbol(f"tau{i + 1}") for i in range(robot.n)]
        self.inputs = {"q": q, "qd": qd, "qdd": qdd, "tau": tau, "parameters": self.params}

    def link_parameters(self, ops: Builder) -> list[Inertial] | None:
        """The links' parameters with the base parameters as symbols (None: the robot's own)."""
        if self.base is None:
            return None
        return base_link_parameters(self.base, ops)

    @cached_property
    def arm_data(self) -> ArmData:
        return arm_data(self.arm)

    @cached_property
    def mass_matrix(self) -> Callable[..., list[list[Any]]]:
        """The recursion that gives M the cheapest here (multiplications + additions, then multiplications, as
        :func:`part_cost`; each built alone, a tie keeping the earlier): the composite-body algorithm with each
        column's wrench carried through the ancestors' frames (:func:`robodyn.recursions.composite.inertia_matrix`,
        the programs of every arm before this choice), the same with the composite bodies carried a factor of the
        modified-DH transform at a time (``dh_steps``: cheaper on every built-in arm), or with the columns
        projected in the tree root's frame (:func:`~robodyn.recursions.composite.inertia_matrix_root_frame`,
        about 6 multiplications an entry where carrying takes 10 to 22: it wins on longer chains).

        The programs are counted as built (dead code removed), and only those within :data:`TIDY_MARGIN` of the
        cheapest are tidied (:meth:`Builder.program`'s passes, most of the time: a 40-joint chain's M is built in
        3.8 s of CPU, 5.7 s when every candidate was tidied, 2.0 s for the carried wrenches alone) and counted
        again to decide."""
        stage("choosing the recursion of M")
        candidates: list[Callable[..., list[list[Any]]]] = [
            composite.inertia_matrix, functools.partial(composite.inertia_matrix, dh_steps=True),
            composite.inertia_matrix_root_frame]
        built = []
        for recursion in candidates:
            ops = Builder(self.params)
            q = [ops.value(x) for x in self.inputs["q"]]
            M = recursion(self.arm_data, BuilderOps(ops), q, parameters=self.link_parameters(ops))
            built.append((ops, {"M": [x for row in M for x in row]}))
        untidied = [program_cost(ops.program(self.inputs, out, inline=False)) for ops, out in built]
        least = min(untidied)[0]
        close = [k for k, cost in enumerate(untidied) if cost[0] <= TIDY_MARGIN * least]
        if len(close) == 1:
            return candidates[close[0]]
        return candidates[min(close, key=lambda k: program_cost(self.program(*built[k])))]

    @cached_property
    def equations(self) -> Any:
            return derive(self.robot, "newton-euler")

    @cached_property
    def prepare(self) -> Callable[[SeExpr], dict]:
        return _preparation(self.robot, self.inputs)

    def program(self, ops: Builder, out: dict[str, list[Any]]) -> Program:
        used = {k: v for k, v in self.inputs.items() if k != "tau" or any(solves(name) for name in out)}
        return ops.program(used, out, angles=self.inputs["q"])


def recursive_part(ctx: Context, ops: Builder, name: str, bias: Sequence[Any] | None = None) -> list[Any]:
    """One part by the customised recursions (:mod:`robodyn.recursions.newton_euler`,
    :mod:`robodyn.recursions.composite`) on the builder's scalars, specialised to the arm as they run. ``bias``:
    the tree's accelerations at qdd = 0 where they are not zero (a four-bar's Wdot qd), taken by h and bias."""
    arm, scalars = ctx.arm_data, BuilderOps(ops)
    q, qd, qdd = ([ops.value(x) for x in ctx.inputs[k]] for k in ("q", "qd", "qdd"))
    if bias is not None and name in ("h", "bias"):
        at = [ops.value(x) for x in bias]
        if name == "bias":
            return newton_euler.inverse_dynamics(arm, scalars, q, qd, at, parameters=ctx.link_parameters(ops))
        return newton_euler.inverse_dynamics(arm, scalars, q, qd, at, parameters=ctx.link_parameters(ops),
                                             tip_load=False, friction=False, gravity=False)
    given = ctx.link_parameters(ops)
    if name == "M":
        return [x for row in ctx.mass_matrix(arm, scalars, q, parameters=given) for x in row]
    if name not in ("tau", "h", "G", "bias"):
        raise ValueError(f"unknown part {name!r}")
    rates = {"tau": (qd, qdd), "h": (qd, None), "G": (None, None), "bias": (qd, None)}[name]
    if name in ("tau", "bias"):
        return newton_euler.inverse_dynamics(arm, scalars, q, *rates, parameters=given)
    return newton_euler.inverse_dynamics(arm, scalars, q, *rates, parameters=given, tip_load=False, friction=False,
                                         gravity=name != "h")


def base_link_parameters(base: Any, ops: Builder) -> list[Inertial]:
    """Each link's J, MS, M, armature and damping with the base parameter b_k, as a symbol, in the place of
    the standard parameter whose column it carries (``base.indices``) and 0 elsewhere: the recursion then
    computes Y_b b exactly (the other columns' parameters are grouped into these or have no effect); the joint
    springs, known torques, are the robot's."""
    if base.coulomb:
        raise ValueError("the base-parameter program has no Coulomb friction: use base_parameters(coulomb=False)")
    per = per_link(False)
    entries = [[ops.value(0)] * per for _ in range(base.frames.n)]
    for name, index in zip(base.names, base.indices, strict=True):
        link, column = divmod(index, per)
        entries[link][column] = ops.value(se.Symbol(name))
    MX, M = INERTIAL.index("MX"), INERTIAL.index("M")
    IA, FV = len(INERTIAL), len(INERTIAL) + 1  # the joint parameters follow the ten inertial ones
    out = []
    for e, link in zip(entries, base.frames.links, strict=True):
        J = [[ops.value(0)] * 3 for _ in range(3)]
        for column, (r, c) in enumerate(TENSOR_INDEX):
            J[r][c] = J[c][r] = e[column]
        # cast: 3x3 and 3 entries, which tuple() does not tell the checker
        out.append(Inertial(J=cast(Mat, tuple(map(tuple, J))), MS=cast(Vec, tuple(e[MX : MX + 3])), M=e[M],
                            armature=e[IA], damping=e[FV], **_spring_scalars(link, ops)))
    return out


def _spring_scalars(link: Any, ops: Builder) -> dict[str, Any]:
    """A link's spring (a known torque, no base parameter) as the builder's scalars; none where it has none."""
    if link.stiffness == 0:
        return {}
    springref = 0 if link.springref == 0 else ops.value(link.springref)
    return {"stiffness": ops.value(link.stiffness), "springref": springref}


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


def _known_symbols(robot: Manipulator) -> set[Any]:
    """The symbols of the geometry, gravity and tip load (what the base-parameter program needs besides b)."""
    out = set(geometry_symbols(robot))
    for x in (*robot.tip_force, *robot.tip_moment):
        out |= x.free_symbols
    return out


def factored_part(ctx: Context, ops: Builder, name: str) -> list[Any]:
    """One part from the canonical equations, factored (M's lower triangle refers to the upper)."""
    exprs = _canonical_part(ctx.equations, name)
    return _through_differences(ops, exprs, ctx.params, ctx.prepare, symmetric=name == "M", n=ctx.robot.n)


PART_ROUTES: dict[str, Callable[[Context, Builder, str], list[Any]]] = {
    "recursive": recursive_part,
    "factored": factored_part,
}


class BuilderOps:
    """The scalar interface of :mod:`robodyn.recursions` (:class:`~robodyn.recursions.aba.ArticulatedOps`)
    on a :class:`Builder`: the recursions written once run on program-building scalars."""

    def __init__(self, builder: Builder) -> None:
        self.builder = builder

    def number(self, value: Any) -> Any:
        return self.builder.value(value)

    def cos_sin(self, offset: Any, q: Any) -> tuple[Any, Any]:
        if q is None:
            return self.builder.value(sympy.cos(offset)), self.builder.value(sympy.sin(offset))
        return self.builder.trig(to_se(offset) + self.builder.value(q).expr)  # the joint angle's, shared

    def stage(self, name: str) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def reciprocal(self, x: Any) -> Any:
        return self.builder.reciprocal(x)

    def sign(self, x: Any) -> Any:
        return self.builder.sign(x)


def aba_forward(ctx: Context, ops: Builder) -> list[Any]:
    """qdd by the articulated-body algorithm (:mod:`robodyn.recursions.aba`) on the builder's scalars."""
    if ctx.base is not None:
        raise ValueError("the base-parameter program solves forward dynamics by L D L^T (route recursive)")
    q, qd, tau = ([ops.value(x) for x in ctx.inputs[k]] for k in ("q", "qd", "tau"))
    return featherstone.joint_accelerations(ctx.arm_data, q, qd, tau, BuilderOps(ops))


def assemble(ctx: Context, outputs: Sequence[str], plan: dict[str, str]) -> Program:
    """The program for ``outputs`` with each part built by the route ``plan[part]``; ``plan["forward"]``,
    if given, is ``"ldlt"`` (the default: M and bias by their routes, then :func:`ldlt_solve`) or ``"aba"``."""
    return forward_candidates(ctx, outputs, plan, (plan.get("forward", "ldlt"),))[0]


def forward_candidates(ctx: Context, outputs: Sequence[str], plan: dict[str, str],
                       forward_routes: Sequence[str] = FORWARD_ROUTES) -> list[Program]:
    """The program for ``outputs`` once per route of ``forward`` in ``forward_routes``, all made in one builder:
    the other parts are built once and shared, and each program keeps only the statements it uses."""
    ops = Builder(ctx.params)
    parts: dict[str, list[Any]] = {}

    def part(name: str) -> list[Any]:
        if name not in parts:
            stage(f"building {name} ({plan[name]})")
            parts[name] = PART_ROUTES[plan[name]](ctx, ops, name)
        return parts[name]

    @functools.cache
    def ldlt() -> tuple[Callable[..., list[Any]], list[Any]]:  # made once, for forward and dqdd alike
        return _ldlt_forward(ctx, ops, part)

    common = {name: part(name) for name in outputs
              if name != "forward" and name not in DERIVATIVES and not is_frame_output(name)}
    if any(is_frame_output(name) for name in outputs):  # the named frames' kinematics (robodyn.program.frames)
        stage("building the frames' kinematics")
        common.update(frame_outputs(ctx, ops, BuilderOps(ops), [o for o in outputs if is_frame_output(o)]))
    if any(name in DERIVATIVES for name in outputs):
        stage(f"building {', '.join(o for o in outputs if o in DERIVATIVES)} (forward-mode or analytic derivatives)")
        common.update(derivative_outputs(ctx, ops, [o for o in outputs if o in DERIVATIVES], ldlt))
    programs = []
    for route in forward_routes if "forward" in outputs else ("ldlt",):
        out: dict[str, list[Any]] = {}
        for name in outputs:
            if name != "forward":
                out[name] = common[name]
            elif route == "aba":
                stage("forward by the articulated-body algorithm")
                out[name] = aba_forward(ctx, ops)
            else:
                stage("forward by L D L^T")
                out[name] = ldlt()[1]
        stage("tidying the program")
        programs.append(ctx.program(ops, out))
    return programs


def _id_jacobians(ctx: Context, ops: Builder, q: list[Any], qd: list[Any], qdd: list[Any],
                  directions: Sequence[str], analytic: Sequence[str] = ()) -> dict[str, list[list[Any]]]:
    """{d: dID/dd} for d in ``directions`` (of "q", "qd"), at (q, qd, qdd): the Newton-Euler recursion on duals
    seeded along those directions, those of ``analytic`` by :func:`rnea_derivatives.id_jacobians`."""
    out: dict[str, list[list[Any]]] = {}
    if any(d in analytic for d in directions):  # issue 33
        chosen = [d for d in directions if d in analytic]
        out = rnea_derivatives.id_jacobians(ctx.arm_data, BuilderOps(ops), q, qd, qdd, chosen)
        directions = [d for d in directions if d not in analytic]
    if not directions:
        return out
    x = [seeded(v, name) if name in directions else constant(v) for name, v in (("q", q), ("qd", qd))]
    tau = newton_euler.inverse_dynamics(ctx.arm_data, DualOps(BuilderOps(ops)), x[0], x[1], constant(qdd))
    return {**{d: jacobian(tau, d, ctx.robot.n) for d in directions}, **out}


def _ldlt_forward(ctx: Context, ops: Builder, part: Callable[[str], list[Any]]) -> tuple[Callable[..., list[Any]],
                                                                                            list[Any]]:
    """M's L D L^T solve (:func:`ldlt_factor`) and qdd = M^-1 (tau - bias), from the parts M and bias."""
    n = ctx.robot.n
    flat = part("M")
    rhs = [ops.value(t) - b for t, b in zip(ctx.inputs["tau"], part("bias"), strict=True)]  # (before the factors,
    solve = ldlt_factor(ops, [flat[i * n : (i + 1) * n] for i in range(n)], ctx.robot.parents)  # as it always was)
    return solve, solve(rhs)


def derivative_outputs(ctx: Context, ops: Builder, names: Sequence[str],
                       ldlt: Callable[[], tuple[Callable[..., list[Any]], list[Any]]], *,
                       jacobian: Callable[[list[list[Any]]], list[list[Any]]] | None = None,
                       to_tree: Callable[[list[Any]], list[Any]] | None = None,
                       n: int | None = None) -> dict[str, list[Any]]:
    """The derivatives ``names`` (of :data:`DERIVATIVES`) on the builder's scalars.

    The inverse dynamics ID(q, qd, qdd) is the customised Newton-Euler recursion run on duals
    (:mod:`robodyn.recursions.forward_mode`) seeded along q and qd: the derivative statements share the value
    statements, and a joint's rate reaches only its subtree's forward pass. The forward dynamics follows from
    differentiating ID(q, qd, FD(q, qd, tau)) = tau (Carpentier and Mansard, RSS 2018, sec. IV):

        dFD/dq = -M^-1 dID/dq,   dFD/dqd = -M^-1 dID/dqd,   dFD/dtau = M^-1,

    with ID differentiated at qdd = FD(q, qd, tau), each column solved with the L D L^T factors of M that
    ``forward`` uses (``ldlt()``: :func:`_ldlt_forward`'s solve and qdd, made once per builder).

    Coupled coordinates (:mod:`robodyn.program.coupled`) pass ``jacobian`` (the tree's Jacobian projected,
    G^T J G), ``to_tree`` (the independent accelerations as the tree's, G qdd) and ``n`` (the independent
    coordinates); by default the Jacobians are the tree's own.

    dID/dqd, and dID/dq with it, are also built by :func:`robodyn.recursions.rnea_derivatives.id_jacobians`
    (Carpentier and Mansard's analytic form, in the base frame): forward mode, dID/dqd analytic, both analytic,
    all in the same builder, and the cheapest program kept (multiplications + additions, then multiplications;
    a tie keeps the earlier; counted untidied, and those within :data:`TIDY_MARGIN` of the least tidied and
    counted again, as :attr:`Context.mass_matrix`)."""
    # issue 33: the analytic ID derivatives, chosen by count against forward mode
    rates = {"dtau_dq", "dtau_dqd", "dqdd_dq", "dqdd_dqd"} & set(names)
    variants = [_derivative_outputs(ctx, ops, names, ldlt, analytic, jacobian, to_tree, n)
                for analytic in (ANALYTIC_VARIANTS if rates else ANALYTIC_VARIANTS[:1])]
    return cheapest(ops, ctx.inputs, variants, lambda out: ctx.program(ops, out))


def cheapest(ops: Builder, inputs: dict[str, list[Any]], variants: Sequence[dict[str, list[Any]]],
             tidied: Callable[[dict[str, list[Any]]], Program]) -> dict[str, list[Any]]:
    """The cheapest of ``variants`` (outputs built in the same builder): multiplications + additions, then
    multiplications; a tie keeps the earlier; counted untidied, and those within :data:`TIDY_MARGIN` of the least
    counted again as ``tidied`` makes their program (as :attr:`Context.mass_matrix`)."""
    if len(variants) == 1:
        return variants[0]
    untidied = [program_cost(ops.program(inputs, out, inline=False)) for out in variants]
    close = [k for k, cost in enumerate(untidied) if cost[0] <= TIDY_MARGIN * min(untidied)[0]]
    if len(close) == 1:
        return variants[close[0]]
    return variants[min(close, key=lambda k: program_cost(tidied(variants[k])))]


#: The directions whose ID derivatives are analytic (:mod:`robodyn.recursions.rnea_derivatives`), each a
#: candidate of :func:`derivative_outputs`; the rest in forward mode.
ANALYTIC_VARIANTS: tuple[tuple[str, ...], ...] = ((), ("qd",), ("q", "qd"))


def _derivative_outputs(ctx: Context, ops: Builder, names: Sequence[str],
                        ldlt: Callable[[], tuple[Callable[..., list[Any]], list[Any]]], analytic: Sequence[str],
                        jacobian: Callable[[list[list[Any]]], list[list[Any]]] | None,
                        to_tree: Callable[[list[Any]], list[Any]] | None, n: int | None) -> dict[str, list[Any]]:
    """:func:`derivative_outputs` with dID along the directions ``analytic`` in the analytic form."""
    n, wanted = (ctx.robot.n if n is None else n), set(names)
    project = jacobian or (lambda jac: jac)
    q, qd, qdd = ([ops.value(x) for x in ctx.inputs[k]] for k in ("q", "qd", "qdd"))
    out: dict[str, list[Any]] = {}
    directions = [d for d in ("q", "qd") if f"dtau_d{d}" in wanted]
    for d, jac in _id_jacobians(ctx, ops, q, qd, qdd, directions, analytic).items():
        out[f"dtau_d{d}"] = [entry for row in project(jac) for entry in row]
    if wanted & {"dqdd_dq", "dqdd_dqd", "dqdd_dtau"}:
        solve, qdd_fd = ldlt()
        directions = [d for d in ("q", "qd") if f"dqdd_d{d}" in wanted]
        qdd_tree = qdd_fd if to_tree is None else to_tree(qdd_fd)
        jacobians = {d: project(jac) for d, jac in _id_jacobians(ctx, ops, q, qd, qdd_tree, directions,
                                                                  analytic).items()}
        out.update(solved_derivatives(solve, n, jacobians, "dqdd_dtau" in wanted))
    return {name: out[name] for name in names}


def solved_derivatives(solve: Callable[[list[Any]], list[Any]], n: int, jacobians: dict[str, list[list[Any]]],
                       inverse: bool) -> dict[str, list[Any]]:
    """dqdd/dd = -M^-1 dID/dd for each direction d of ``jacobians`` (dID at qdd = FD, n x n), a column at a time
    with ``solve`` (M's L D L^T factors), and with ``inverse`` dqdd/dtau = M^-1 (its columns solved for the unit
    vectors, each entry taken from the column that has it above the diagonal), all n x n row-major."""
    out: dict[str, list[Any]] = {}
    for d, J in jacobians.items():
        columns = [solve([-J[i][j] for i in range(n)]) for j in range(n)]
        out[f"dqdd_d{d}"] = [columns[j][i] for i in range(n) for j in range(n)]
    if inverse:
        columns = [solve([1 if i == j else 0 for i in range(n)]) for j in range(n)]
        out["dqdd_dtau"] = [columns[j][i] if i <= j else columns[i][j] for i in range(n) for j in range(n)]
    return out


def canonical_terms(ctx: Context, name: str) -> int:
    """Terms of a part in canonical form (the size the factored route works on)."""
    return sum(len(e.args) if isinstance(e, se.Add) else 1 for e in _canonical_part(ctx.equations, name))


def factored_size(ctx: Context, name: str) -> tuple[int, int]:
    """(terms, entries) of what the factored route factors: the nonzero entries of a part in canonical form (M's
    upper triangle only; the lower refers to it) and their terms. :func:`_through_differences` tries each entry
    against every one before it, so its work grows as their product."""
    n = ctx.robot.n
    entries = _canonical_part(ctx.equations, name)
    kept = [e for k, e in enumerate(entries) if e != 0 and (name != "M" or k // n <= k % n)]
    return sum(len(e.args) if isinstance(e, se.Add) else 1 for e in kept), len(kept)


def term_estimate(ctx: Context, name: str) -> int:
    """The terms of a part in canonical form, estimated from the formulation's nested expressions without
    expanding them (milliseconds, where the expansion of a long chain's M takes minutes): a sum has the terms
    of its summands, a product the product of its factors' terms, x**k those of a product of k copies of x
    (C(t + k - 1, k)). Cancellations and s^2 + c^2 = 1 make the canonical form smaller (the estimate is 1.1 to 15
    times :func:`factored_size`'s terms on the built-in arms and right-angled chains; each sin^2 -> 1 - cos^2 can
    make it larger): an estimate for deciding whether to expand, not a bound. M's upper triangle is counted."""
    eqs = ctx.equations
    memo: dict[int, int] = {}
    total = 0
    for part in BIAS_PARTS if name == "bias" else (name,):
        matrix = eqs.raw(part)
        for i in range(matrix.rows):
            for j in range(i if part == "M" else 0, matrix.cols):
                total += _terms_of(matrix[i, j], memo)
    return total


def _terms_of(expr: SeExpr, memo: dict[int, int]) -> int:
    """:func:`term_estimate` of one expression. The nested expressions share subtrees that are equal but not
    the same object, and symengine compares such trees node by node with no memo (exponential on a DAG): the
    memo is keyed by symengine's structural hash instead (a collision, improbable, only misestimates)."""
    stack: list[tuple[SeExpr, bool]] = [(expr, False)]
    while stack:
        e, ready = stack.pop()
        key = hash(e)
        if key in memo:
            continue
        args: tuple[SeExpr, ...] = e.args if isinstance(e, (se.Add, se.Mul, se.Pow)) else ()
        if not ready and args:
            stack.append((e, True))
            stack.extend((a, False) for a in args)
            continue
        if isinstance(e, se.Add):
            terms = sum(memo[hash(a)] for a in args)
        elif isinstance(e, se.Mul):
            terms = 1
            for a in args:
                terms *= memo[hash(a)]
        elif isinstance(e, se.Pow) and args[1].is_Integer and int(args[1]) > 0:
            terms = math.comb(memo[hash(args[0])] + int(args[1]) - 1, int(args[1]))
        else:  # a number (0: no term), a symbol, sin or cos of anything: one factor
            terms = 0 if e.is_Number and e == 0 else 1
        memo[key] = terms
    return memo[hash(expr)]


def part_cost(ctx: Context, name: str, route: str) -> tuple[int, int]:
    """(multiplications + additions, multiplications) of one part alone by one route."""
    ops = Builder(ctx.params)
    c = ctx.program(ops, {name: PART_ROUTES[route](ctx, ops, name)}).count()["evaluation"]
    return c.multiplications + c.additions, c.multiplications


def program_cost(program: Program) -> tuple[int, int]:
    """(multiplications + additions, multiplications) per evaluation: what :func:`part_cost` compares."""
    c = program.count()["evaluation"]
    return c.multiplications + c.additions, c.multiplications


def recursive(robot: Manipulator, outputs: Sequence[str] = ("tau",)) -> Program:
    """Every part by the customised recursions (forward: L D L^T over M and bias)."""
    return assemble(Context(robot), outputs, dict.fromkeys(PARTS, "recursive"))


def aba(robot: Manipulator, outputs: Sequence[str] = ("forward",)) -> Program:
    """Forward dynamics by the articulated-body algorithm; any other part by the customised recursions."""
    return assemble(Context(robot), outputs, {**dict.fromkeys(PARTS, "recursive"), "forward": "aba"})


def factored(robot: Manipulator, outputs: Sequence[str] = ("tau",)) -> Program:
    """Every part from the canonical equations, factored."""
    return assemble(Context(robot), outputs, dict.fromkeys(PARTS, "factored"))


def ldlt_solve(ops: Any, M: list[list[Any]], rhs: list[Any], parents: Sequence[int] | None = None) -> list[Any]:
    """x with M x = rhs by :func:`ldlt_factor`."""
    return ldlt_factor(ops, M, parents)(rhs)


def ldlt_factor(ops: Any, M: list[list[Any]], parents: Sequence[int] | None = None) -> Callable[[list[Any]],
                                                                                                 list[Any]]:
    """The solve x = M^-1 rhs by an L D L^T factorisation (unit lower L), unrolled, that visits only the entries
    of links related on the tree ``parents`` (one an ancestor of the other; None: every entry, dense): the
    factorisation is made here, once; each call of the function returned makes the two substitutions.

    The columns are eliminated in an order with no fill-in, each as Golub and Van Loan's algorithm 4.1.2 does
    (v = L_jk D_k, D_j = M_jj - L_j. v, L_ij = (M_ij - L_i. v) / D_j; each division by D_j one reciprocal and
    then multiplications), over the related k only. On a tree the order is Featherstone's (Rigid Body Dynamics
    Algorithms, sec. 6.5, Table 6.3, the LTDL factorisation M = L^T D L): the last link first, so that link
    i's row of L has entries at its ancestors lambda(i), lambda(lambda(i)), ... only, and an entry of two links
    on different branches stays an exact zero through the factorisation and both substitutions. A serial
    chain (or ``parents`` None) has no zero to keep: any order fills nothing, and the natural order is kept
    (the programs of chains as they were)."""
    n = len(M)
    tree = parents is not None and tuple(parents) != tuple(range(-1, n - 1))
    order = list(reversed(range(n))) if tree else list(range(n))  # order[a]: the link eliminated a-th
    related = _related(parents, n)
    A = [[M[order[a]][order[b]] for b in range(n)] for a in range(n)]
    before = [[k for k in range(a) if related[order[a]][order[k]]] for a in range(n)]  # row a of L
    after = [[i for i in range(a + 1, n) if related[order[i]][order[a]]] for a in range(n)]  # column a of L
    L: dict[tuple[int, int], Any] = {}
    D: list[Any] = [0] * n
    inv: list[Any] = [0] * n
    for j in range(n):
        row = before[j]
        v = {k: L[j, k] * D[k] for k in row}
        D[j] = A[j][j] - ops.dot([L[j, k] for k in row], [v[k] for k in row]) if row else ops.value(A[j][j])
        if D[j].is_zero():
            link = order[j] + 1
            raise ValueError(f"M[{link}, {link}] is identically zero after elimination (a massless link without "
                             "armature): forward dynamics is undefined")
        inv[j] = ops.reciprocal(D[j])
        for i in after[j]:
            shared = [k for k in row if related[order[i]][order[k]]]
            L[i, j] = ((A[i][j] - ops.dot([L[i, k] for k in shared], [v[k] for k in shared])) * inv[j] if shared
                       else A[i][j] * inv[j])

    def solve(rhs: list[Any]) -> list[Any]:
        y = [rhs[link] for link in order]
        for i in range(n):  # L y = rhs
            row = before[i]
            y[i] = y[i] - ops.dot([L[i, k] for k in row], [y[k] for k in row]) if row else ops.value(y[i])
        x: list[Any] = [0] * n
        for i in reversed(range(n)):  # D L^T x = y
            x[i] = y[i] * inv[i] - ops.dot([L[k, i] for k in after[i]], [x[k] for k in after[i]])
        out: list[Any] = [0] * n
        for a, link in enumerate(order):
            out[link] = x[a]
        return out

    return solve


def _related(parents: Sequence[int] | None, n: int) -> list[list[bool]]:
    """related[i][k]: i == k or one of links i, k an ancestor of the other (every pair when ``parents`` is None)."""
    if parents is None:
        return [[True] * n for _ in range(n)]
    related = [[i == k for k in range(n)] for i in range(n)]
    for i in range(n):
        k = parents[i]
        while k >= 0:
            related[i][k] = related[k][i] = True
            k = parents[k]
    return related


def expanded(robot: Manipulator, outputs: Sequence[str] = ("tau",)) -> Program:
    """Common subexpressions of the canonical Newton-Euler parts (no factoring): the baseline."""
    if "forward" in outputs or set(outputs) & set(DERIVATIVES) or any(map(is_frame_output, outputs)):
        raise ValueError("the expanded route gives tau, M, h, G and bias; use the recursive route for forward "
                         "dynamics, the derivatives and the frames' kinematics")
    eqs = derive(robot, "newton-euler")
    if "bias" in outputs:
        eqs._raw["bias"] = sum_parts(eqs.raw, BIAS_PARTS)
    return from_equations(eqs, outputs)


#: Beyond this many joints, an arm with a twist or offset that is not a multiple of pi/2 has its elements
#: built without factoring: their canonical forms run to thousands of terms (a 5-joint random arm took
#: six minutes to factor, into 13,520 multiplications; 4-joint ones up to 40 s).
EMDEG_FACTORED_LIMIT = 3


def emdeg(robot: Manipulator, outputs: Sequence[str] = ("elements",)) -> Program:
    """Burdick's distinct elements M_ij, c_ijj, b_ijk, g_i (:mod:`robodyn.formulations.emdeg`),
    factored; each element may be an earlier one of its kind plus a difference (EMDEG's
    M12 = M13 + ...). The relations between elements are kept as references, not computed.

    An arm of more than :data:`EMDEG_FACTORED_LIMIT` joints whose twists and offsets are not all multiples
    of pi/2 (decided before any expansion, :func:`robodyn.program.right_angled`) gets the elements
    unexpanded, with their common subexpressions shared and parameter-only operations in the constants
    (``program.route``: ``"emdeg (unfactored: general angles)"``)."""
    if tuple(outputs) != ("elements",):
        raise ValueError("the emdeg route gives the output 'elements' (all distinct M, c, b, g)")
    ctx = Context(robot)
    if robot.n > EMDEG_FACTORED_LIMIT and not right_angled(robot):
        return _emdeg_unfactored(ctx)
    q, params = ctx.inputs["q"], ctx.params
    el = burdick.elements(robot, q)
    prepare = ctx.prepare
    ops = Builder(params)
    out: dict[str, list[Any]] = {}
    for kind in ("M", "c", "b", "g"):
        names = [name for name in el.values if name[0] == kind]
        exprs = [el.values[name] for name in names]
        values = _through_differences(ops, exprs, params, prepare, symmetric=False, n=robot.n)
        out.update({name: [v] for name, v in zip(names, values, strict=True)})
    program = ops.program({"q": q, "parameters": params}, out, angles=q)
    program.references = _references(el.relations)
    return program


def _references(relations: dict[str, tuple[Any, str | None]]) -> dict[str, str]:
    return {name: ("0" if other is None else f"{factor_} * {other}") for name, (factor_, other) in relations.items()}


def _emdeg_unfactored(ctx: Context) -> Program:
    """The elements by Burdick's rules (eq. 17-21 for M and g, the structure rules eq. 26-29 for c and b,
    the same relations as :func:`robodyn.formulations.emdeg.elements`) from the unexpanded expressions:
    every expression tree is run through one :class:`Builder`, which computes each distinct operation
    once (common subexpressions across all elements), folds 0, 1 and -1, and moves parameter-only
    operations to the constants. Nothing is expanded, so the size stays that of the trees."""
    q, params = ctx.inputs["q"], ctx.params
    el = burdick.elements(ctx.robot, q, expand=False)
    values, relations = el.values, dict(el.relations)
    ops = Builder(params)
    memo: ShapeMemo[Any] = ShapeMemo()  # a dict would compare shared expressions whole: exponential
    out: dict[str, list[Any]] = {}
    for element, expr in values.items():
        value = _tree(ops, expr, memo)
        if value.is_zero():  # zero however the angles are (the tree folded to 0): an element that is 0
            relations[element] = (se.Integer(0), None)
        else:
            out[element] = [value]
    # not tidied by the peephole passes (their pair search grows too fast for programs this size)
    program = ops.program({"q": q, "parameters": params}, out, angles=q, inline=False)
    program.references = _references(relations)
    program.route = "emdeg (unfactored: general angles)"
    return program


def _tree(ops: Builder, expr: SeExpr, memo: ShapeMemo[Any]) -> Any:
    """An expression tree as builder operations, each distinct subtree once (no expansion)."""
    if expr in memo:
        return memo[expr]
    if expr.is_Number or expr.is_Symbol:
        value = ops.value(expr)
    elif isinstance(expr, se.Add):
        value = ops.value(0)
        for arg in expr.args:
            value = ops.add(value, _tree(ops, arg, memo))
    elif isinstance(expr, se.Mul):
        value = ops.value(1)
        for arg in expr.args:
            value = ops.mul(value, _tree(ops, arg, memo))
    elif isinstance(expr, se.Pow) and expr.args[1].is_integer and int(expr.args[1]) > 0:
        base = _tree(ops, expr.args[0], memo)
        value = base
        for _ in range(int(expr.args[1]) - 1):
            value = ops.mul(value, base)
    else:  # sin, cos (of a joint angle: run time; of a parameter: a constant) and anything else whole
        value = ops.value(expr.func(*[_tree(ops, arg, memo).expr for arg in expr.args]))
    memo[expr] = value
    return value


def _preparation(robot: Manipulator, inputs: dict[str, list[se.Symbol]]) -> Any:
    """expr -> the sum of products (:mod:`robodyn.program.factor`) in the angle basis with the
    fewest terms (the joint angles, or absolute angles of runs of parallel revolute joints),
    with rules 1 and 2 applied."""
    q, qd, qdd = inputs["q"], inputs["qd"], inputs["qdd"]
    known = set(inputs["parameters"])
    revolute = [q[i] for i, link in enumerate(robot.links) if link.joint == "R"]
    angle_pairs = [(a, b) for i, a in enumerate(revolute) for b in revolute[i + 1 :]]
    rate_pairs = [(x[i], x[j]) for x in (qd, qdd) for i in range(robot.n) for j in range(i + 1, robot.n)]
    bases = factor.angle_sum_bases(modified(robot), q)

    def prepare(expr: SeExpr) -> dict:
        candidates = []
        for basis in bases:
            e = canonical(expr.xreplace(basis), q) if basis else se.expand(expr)
            poly = factor.to_poly(e, known)
            candidates.append(factor.contract_rates(factor.contract_angles(poly, angle_pairs), rate_pairs))
        return min(candidates, key=len)

    return prepare


def _canonical_part(eqs: Any, name: str) -> list[Any]:
    parts = BIAS_PARTS if name == "bias" else (name,)
    total = None
    for part in parts:
        m = eqs.canonical(part)
        total = m if total is None else total + m
    assert total is not None  # parts is never empty
    return [se.expand(total[i, j]) for i in range(total.rows) for j in range(total.cols)]


def _through_differences(
    ops: Builder, exprs: list, params: list, prepare: Any, *, symmetric: bool, n: int
) -> list[Any]:
    """Each entry factored on its own or as an earlier entry plus a difference, whichever is
    cheaper (entries done from the last to the first, as the backward recursion goes)."""
    values: list[Any] = [None] * len(exprs)
    done: list[int] = []
    for index in reversed(range(len(exprs))):
        if symmetric and index // n > index % n:  # lower triangle of M: the upper entry
            continue
        stage(f"factoring entry {len(done) + 1} of {len(exprs) if not symmetric else n * (n + 1) // 2}")
        poly = prepare(exprs[index])
        # costs in the shared builder (what the entry can share with those built before costs nothing),
        # of plain Horner (no lookahead: the same choices here, at a fraction of the time)
        best, best_cost = None, ops.marginal_cost(lambda poly=poly: factor.horner(ops, poly, 0))
        for other in done:
            difference = prepare(se.expand(exprs[index] - exprs[other]))
            c = ops.marginal_cost(lambda d=difference, o=other: ops.add(values[o], factor.horner(ops, d, 0)))
            if c < best_cost:
                best, best_cost = (other, difference), c
        values[index] = (
            factor.horner(ops, poly) if best is None else ops.add(values[best[0]], factor.horner(ops, best[1]))
        )
        done.append(index)
    if symmetric:
        for index in range(len(exprs)):
            i, j = divmod(index, n)
            if i > j:
                values[index] = values[j * n + i]
    return values

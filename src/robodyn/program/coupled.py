"""The program of a robot with coupled coordinates (:mod:`robodyn.model.couplings`): one wrapper over the routes.

The program's inputs are the independent coordinates (``q``, ``qd``, ``qdd``, ``tau`` of ``robot.nv`` entries);
the tree's are expressions of them, q_tree = G q + c (each coupled joint's angle ``ratio * q_i + offset``, one
multiplication and one addition at most; no trigonometric function beyond the tree's own), on which the
customised recursions of :mod:`robodyn.program.routes` run unchanged. The parts come back projected with G^T:
tau, h, G, bias as G^T x, M as G^T M G; ``forward`` solves the projected M qdd = tau - bias by an unrolled
L D L^T (dense over the independent joints; the articulated-body algorithm runs on the tree, and does not
apply); the derivatives by the chain rule, dtau/dq = G^T dtau_tree/dq_tree G (likewise in qd), and
dqdd/dx = -M^-1 dtau/dx at qdd = forward. Every part is built by the recursive route.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import symengine as se

from robodyn.algebra import to_se
from robodyn.model.manipulator import Manipulator
from robodyn.model.structure import refuse
from robodyn.program import routes
from robodyn.program.builder import Builder
from robodyn.program.core import Program
from robodyn.program.frames import frame_outputs
from robodyn.program.outputs import AUTO, DERIVATIVES, is_frame_output
from robodyn.symbols import joint_symbols


def build(robot: Manipulator, outputs: Sequence[str], route: str) -> Program:
    """The program of ``outputs`` for a robot with couplings (see the module docstring)."""
    if route not in (AUTO, "recursive"):
        raise refuse(robot, f"route {route!r} (its program is built by the recursive route: 'auto' or 'recursive')",
                     what="coupled joints")
    if "elements" in outputs:
        raise refuse(robot, "the elements program (Burdick's elements are those of independent joints)",
                     what="coupled joints")
    n, nv = robot.n, robot.nv
    ctx = routes.Context(robot)  # the tree's arm and parameters (the couplings' symbols among them)
    q, qd, qdd = joint_symbols(nv).symengine()
    tau = [se.Symbol(f"tau{i + 1}") for i in range(nv)]
    closure = robot.closure_map()
    G_, c_ = closure.G, closure.c
    G = [[to_se(G_[j, a]) for a in range(nv)] for j in range(n)]
    c = [to_se(c_[j]) for j in range(n)]
    closed: dict[int, Any] = {}
    if not closure.linear:  # four-bars: their steps as the program's values, W's entries among them
        if any(name in DERIVATIVES or (is_frame_output(name) and name.split(":")[0].endswith("_dot"))
               for name in outputs):
            raise refuse(robot, "building its derivative programs (dtau, dqdd, jacobian_dot; robodyn.numeric and "
                         "linearize give them)", what="a four-bar in closed form")
        early = Builder(ctx.params)
        closed = closure.closed_rows(q, to_se, lambda e: early.value(e).expr)
        closed = {j: (*(early.value(x).expr for x in row[:3]), row[3]) for j, row in closed.items()}
        for j, (_, rate, _, column) in closed.items():
            G[j][column] = rate

    def spread(x: Sequence[Any], offset: Sequence[Any] | None = None) -> list[Any]:
        return [sum((G[j][a] * x[a] for a in range(nv) if G[j][a] != 0), offset[j] if offset else se.Integer(0))
                for j in range(n)]

    def spread_values(x: Sequence[Any]) -> list[Any]:  # G x for values of the program (forward's qdd)
        return [ops.dot([G[j][a] for a in range(nv) if G[j][a] != 0], [x[a] for a in range(nv) if G[j][a] != 0])
                for j in range(n)]

    # the tree's inputs as expressions of the independent ones: the recursions take them as they are
    ctx.inputs = {"q": spread(q, c), "qd": spread(qd), "qdd": spread(qdd), "tau": tau, "parameters": ctx.params}
    ops = Builder(ctx.params) if not closed else early
    bias: list[Any] | None = None
    if closed:  # q_tree = g(q), qdd_tree = W qdd + Wdot qd (the curvature times the actuated rate squared)
        bias = [se.Integer(0)] * n
        for j, (position, _, curvature, column) in closed.items():
            ctx.inputs["q"][j] = position
            bias[j] = ops.mul(curvature, ops.mul(qd[column], qd[column])).expr
            ctx.inputs["qdd"][j] = ctx.inputs["qdd"][j] + bias[j]
    column = [[(j, G[j][a]) for j in range(n) if G[j][a] != 0] for a in range(nv)]

    def project(x: Sequence[Any]) -> list[Any]:
        return [ops.dot([g for _, g in column[a]], [x[j] for j, _ in column[a]]) for a in range(nv)]

    def project_matrix(flat: Sequence[Any]) -> list[list[Any]]:
        MG = [[ops.dot([g for _, g in column[b]], [flat[i * n + j] for j, _ in column[b]]) for b in range(nv)]
              for i in range(n)]
        return [[ops.dot([g for _, g in column[a]], [MG[i][b] for i, _ in column[a]]) if b >= a else None
                 for b in range(nv)] for a in range(nv)]

    parts: dict[str, Any] = {}

    def part(name: str) -> Any:
        if name not in parts:
            tree = routes.recursive_part(ctx, ops, name, bias)
            if name == "M":
                upper = project_matrix(tree)
                parts[name] = [[upper[min(a, b)][max(a, b)] for b in range(nv)] for a in range(nv)]
            else:
                parts[name] = project(tree)
        return parts[name]

    solver: list[Any] = []

    def ldlt() -> tuple[Any, list[Any]]:
        if not solver:
            solve = routes.ldlt_factor(ops, part("M"), None)
            solver.extend([solve, solve([ops.value(t) - b for t, b in zip(tau, part("bias"), strict=True)])])
        return solver[0], solver[1]

    out: dict[str, list[Any]] = {}
    for name in outputs:
        if name == "M":
            out[name] = [x for row in part("M") for x in row]
        elif name == "forward":
            out[name] = ldlt()[1]
        elif name not in DERIVATIVES and not is_frame_output(name):
            out[name] = part(name)
    frames = [name for name in outputs if is_frame_output(name)]
    if frames:  # the frames' kinematics on the tree, their Jacobians' columns J_tree G
        def columns(J: list[list[Any]]) -> list[list[Any]]:
            return [[ops.dot([g for _, g in column[a]], [row[j] for j, _ in column[a]]) for a in range(nv)]
                    for row in J]

        out.update(frame_outputs(ctx, ops, routes.BuilderOps(ops), frames, columns))
    wanted = [name for name in outputs if name in DERIVATIVES]
    if wanted:
        out.update(_derivatives(ctx, ops, wanted, spread_values, project, ldlt, nv))
    inputs: dict[str, list[Any]] = {"q": q, "qd": qd, "qdd": qdd}
    if any(routes.solves(name) for name in outputs):
        inputs["tau"] = tau
    inputs["parameters"] = ctx.params
    program = ops.program(inputs, {name: out[name] for name in outputs}, angles=q)
    program.route = "recursive, coupled"
    return program


def _derivatives(ctx: routes.Context, ops: Builder, names: Sequence[str], spread: Any, project: Any, ldlt: Any,
                 nv: int) -> dict[str, list[Any]]:
    """dtau/dq = G^T J_tree G (J_tree: the tree's Newton-Euler on duals), and dqdd/dx = -M^-1 dtau/dx at
    qdd = forward, dqdd/dtau = M^-1 with the projected M's L D L^T: the routes' derivatives with the projection."""

    def projected(jac: list[list[Any]]) -> list[list[Any]]:  # G^T J G, row a, column b
        columns = [project([row[j] for row in jac]) for j in range(len(jac))]  # G^T J's columns
        rows = [[columns[j][a] for j in range(len(jac))] for a in range(nv)]
        return [project(row) for row in rows]

    return routes.derivative_outputs(ctx, ops, names, ldlt, jacobian=projected, to_tree=spread, n=nv)


__all__ = ["build"]

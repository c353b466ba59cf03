"""Routes to a Program: each builds the same outputs a different way; :func:`cheapest` picks.

- ``recursive``: the customised Newton-Euler and composite-body recursions of
  :mod:`robodyn.formulations.customised_ne` run on program-building scalars
  (:mod:`robodyn.program.builder`);
- ``expanded``: the canonical (expanded) Newton-Euler equations with common subexpressions
  shared across outputs (:func:`robodyn.program.from_equations`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import symengine as se

from robodyn.formulations import customised_ne as cne
from robodyn.model.manipulator import Manipulator
from robodyn.program import Program
from robodyn.program.builder import Builder
from robodyn.symbols import joint_symbols


def _inputs(robot: Manipulator) -> tuple[dict[str, list[se.Symbol]], list[se.Symbol]]:
    q, qd, qdd = joint_symbols(robot.n).symengine()
    params = [se.Symbol(s.name) for s in robot.parameters()]
    tau = [se.Symbol(f"tau{i + 1}") for i in range(robot.n)]
    return {"q": q, "qd": qd, "qdd": qdd, "tau": tau, "parameters": params}, params


def recursive(robot: Manipulator, outputs: Sequence[str] = ("tau",)) -> Program:
    """The customised recursions, specialised to ``robot`` as they run (one shared builder)."""
    inputs, params = _inputs(robot)
    arm = cne.modified(robot)
    ops = Builder(params)
    q, qd, qdd = inputs["q"], inputs["qd"], inputs["qdd"]
    out: dict[str, list[Any]] = {}
    for name in outputs:
        out[name] = _recursive_part(arm, ops, name, q, qd, qdd, inputs["tau"])
    used = {k: v for k, v in inputs.items() if k != "tau" or "forward" in outputs}
    return ops.program(used, out, angles=q)


def _recursive_part(arm: Manipulator, ops: Builder, name: str, q: list, qd: list, qdd: list, tau: list) -> list[Any]:
    if name == "tau":
        return cne.inverse_dynamics(arm, ops, q, qd, qdd)
    if name == "M":
        return [x for row in cne.inertia_matrix(arm, ops, q) for x in row]
    if name == "h":
        return cne.inverse_dynamics(arm, ops, q, qd, None, gravity=False, tip_load=False, friction=False)
    if name == "G":
        return cne.inverse_dynamics(arm, ops, q, None, None, tip_load=False, friction=False)
    if name == "bias":
        return cne.inverse_dynamics(arm, ops, q, qd, None)
    if name == "forward":
        M = cne.inertia_matrix(arm, ops, q)
        bias = cne.inverse_dynamics(arm, ops, q, qd, None)
        return ldlt_solve(ops, M, [ops.value(t) - b for t, b in zip(tau, bias, strict=True)])
    raise ValueError(f"unknown output {name!r}")


def ldlt_solve(ops: Any, M: list[list[Any]], rhs: list[Any]) -> list[Any]:
    """x with M x = rhs by M = L D L^T (unit lower L), unrolled; each division by D_j is one
    reciprocal and then multiplications (Golub and Van Loan, algorithm 4.1.2)."""
    n = len(rhs)
    L = [[0] * n for _ in range(n)]
    D: list[Any] = [0] * n
    inv: list[Any] = [0] * n
    for j in range(n):
        v = [L[j][k] * D[k] for k in range(j)]
        D[j] = M[j][j] - ops.dot(L[j][:j], v) if j else ops.value(M[j][j])
        inv[j] = ops.reciprocal(D[j])
        for i in range(j + 1, n):
            L[i][j] = (M[i][j] - ops.dot(L[i][:j], v)) * inv[j] if j else M[i][j] * inv[j]
    y = list(rhs)
    for i in range(n):  # L y = rhs
        y[i] = y[i] - ops.dot(L[i][:i], y[:i]) if i else ops.value(y[i])
    x: list[Any] = [0] * n
    for i in reversed(range(n)):  # D L^T x = y
        x[i] = y[i] * inv[i] - ops.dot([L[k][i] for k in range(i + 1, n)], x[i + 1 :])
    return x


def factored(robot: Manipulator, outputs: Sequence[str] = ("tau",)) -> Program:
    """The canonical equations as grouped-constant sums of products, factored
    (:mod:`robodyn.program.factor`); M's lower triangle refers to the upper one."""
    from robodyn.formulations import derive
    from robodyn.program import factor

    inputs, params = _inputs(robot)
    eqs = derive(robot, "newton-euler")
    known = set(params)
    q, qd, qdd = inputs["q"], inputs["qd"], inputs["qdd"]
    revolute = [q[i] for i, link in enumerate(robot.links) if link.joint == "R"]
    angle_pairs = [(a, b) for i, a in enumerate(revolute) for b in revolute[i + 1 :]]
    rate_pairs = [(x[i], x[j]) for x in (qd, qdd) for i in range(robot.n) for j in range(i + 1, robot.n)]
    ops = Builder(params)
    out: dict[str, list[Any]] = {}
    parts: dict[str, list[Any]] = {}
    for name in sorted({p for o in outputs for p in (("M", "bias") if o == "forward" else (o,))}):
        exprs = _canonical_part(eqs, name)
        polys = [factor.to_poly(e, known) for e in exprs]

        def contract(poly: dict) -> dict:
            return factor.contract_rates(factor.contract_angles(poly, angle_pairs), rate_pairs)

        parts[name] = _through_differences(ops, polys, params, contract, symmetric=name == "M", n=robot.n)
    for name in outputs:
        if name == "forward":
            n = robot.n
            M = [parts["M"][i * n : (i + 1) * n] for i in range(n)]
            rhs = [ops.value(t) - b for t, b in zip(inputs["tau"], parts["bias"], strict=True)]
            out[name] = ldlt_solve(ops, M, rhs)
        else:
            out[name] = parts[name]
    return ops.program({k: v for k, v in inputs.items() if k != "tau" or "forward" in outputs}, out, angles=q)


def expanded(robot: Manipulator, outputs: Sequence[str] = ("tau",)) -> Program:
    """Common subexpressions of the canonical Newton-Euler parts (no factoring): the baseline."""
    from robodyn.formulations import derive
    from robodyn.program import from_equations

    if "forward" in outputs:
        raise ValueError("the expanded route gives tau, M, h, G and bias; use the recursive route for forward")
    eqs = derive(robot, "newton-euler")
    if "bias" in outputs:
        eqs._raw["bias"] = eqs.raw("h") + eqs.raw("G") + eqs.raw("damping") + eqs.raw("load")
    return from_equations(eqs, outputs)


def _canonical_part(eqs: Any, name: str) -> list[Any]:
    parts = ("h", "G", "damping", "load") if name == "bias" else (name,)
    total = None
    for part in parts:
        m = eqs.canonical(part)
        total = m if total is None else total + m
    return [se.expand(total[i, j]) for i in range(total.rows) for j in range(total.cols)]


def _through_differences(
    ops: Builder, polys: list, params: list, contract: Any, *, symmetric: bool, n: int
) -> list[Any]:
    """Each entry factored on its own or as an earlier entry plus a difference, whichever is
    cheaper (entries done from the last to the first, as the backward recursion goes)."""
    from robodyn.program import factor

    values: list[Any] = [None] * len(polys)
    done: list[int] = []
    for index in reversed(range(len(polys))):
        if symmetric and index // n > index % n:  # lower triangle of M: the upper entry
            continue
        poly = contract(polys[index])
        best, best_cost = None, factor.cost(poly, params)
        for other in done:
            difference = contract(_subtract(polys[index], polys[other]))
            c = factor.cost(difference, params) + 1
            if c < best_cost:
                best, best_cost = (other, difference), c
        values[index] = (
            factor.horner(ops, poly) if best is None else ops.add(values[best[0]], factor.horner(ops, best[1]))
        )
        done.append(index)
    if symmetric:
        for index in range(len(polys)):
            i, j = divmod(index, n)
            if i > j:
                values[index] = values[j * n + i]
    return values


def _subtract(a: dict, b: dict) -> dict:
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, se.Integer(0)) - c
    return {m: se.expand(c) for m, c in out.items() if se.expand(c) != 0}

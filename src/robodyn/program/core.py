"""The Program type and the operation counts (the data of :mod:`robodyn.program`, re-exported there).

The counting rules are those of the package docstring of :mod:`robodyn.program`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import symengine as se

from robodyn.algebra import SeExpr


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
            products = k - 1 if k > 0 else -k - 1 + (0 if in_product else 1)  # x**-k = 1/(x ... x)
            return _count(base, angles, False) + OperationCount(multiplications=products)
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
    #: when :func:`robodyn.program.build` tried several ways to ``forward``: each one's route and count
    #: ({"LDL^T": ("recursive", OperationCount), "ABA": ("aba", OperationCount)}), the cheaper kept
    candidates: dict[str, tuple[str, OperationCount]] = field(default_factory=dict)

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

    def __repr__(self) -> str:
        """One line: outputs and their sizes, inputs, the count per evaluation and the route (``str``: the listing)."""
        outputs = ", ".join(f"{name}[{len(xs)}]" for name, xs in self.outputs.items())
        inputs = ", ".join(f"{name}[{len(xs)}]" for name, xs in self.inputs.items())
        c = self.count()
        e, k = c["evaluation"], c["constants"]
        return (f"<Program {outputs} from {inputs}: {e.multiplications} multiplications, {e.additions} additions, "
                f"{e.trig} sin/cos per evaluation; constants {k.multiplications}, {k.additions}; "
                f"{len(self.body)} run-time statements; route {self.route or '-'}>")

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

"""The main job on a built-in robot: derive by every method, check they agree, build the cheapest
straight-line programs with their operation counts, write the equations and the generated code.

``robodyn demo`` (and ``./scripts/demo``) runs :func:`run` on ``puma560_symbolic``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import symengine as se

from robodyn import codegen, numeric
from robodyn.analysis.check import compare, has_floats
from robodyn.equations import Equations
from robodyn.formats import load as loading
from robodyn.formulations import derive
from robodyn.model.files import atomic_write, write_all
from robodyn.model.manipulator import Manipulator
from robodyn.model.params import random_values
from robodyn.program.targets import count_summary
from robodyn.runtime import CompileError, compile

#: The demo's methods; ``robodyn check`` runs every available one.
DEMO_METHODS = ("newton-euler", "lagrange-euler")


@dataclass
class MethodSummary:
    method: str
    derive_seconds: float
    canonical_seconds: float
    terms: dict[str, int]
    operations: int  # operations of tau in canonical (expanded) form, before any CSE


@dataclass
class ProgramSummary:
    """The cheapest program for one output: its counts per evaluation and the published figures."""

    output: str
    route: str
    multiplications: int
    additions: int
    trig: int
    seconds: float
    published: list[dict]


@dataclass
class CodeSummary:
    """The generated C: its files, and (where a C compiler is found) the compiled code checked against
    the numeric engine at random states and parameter values."""

    files: list[Path] = field(default_factory=list)
    compiled: bool = False
    max_relative_difference: float | None = None
    note: str = ""


@dataclass
class DemoSummary:
    """What :func:`run` did; ``ok`` when the methods agree and the compiled code (if any) agrees."""

    robot: str
    n: int
    parameters: int
    methods: list[MethodSummary] = field(default_factory=list)
    agree: bool = False
    mode: str = ""
    check_seconds: float = 0.0
    programs: list[ProgramSummary] = field(default_factory=list)
    code: CodeSummary = field(default_factory=CodeSummary)
    outputs: list[Path] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        difference = self.code.max_relative_difference
        return self.agree and (difference is None or difference <= CODE_TOLERANCE)


def _summarise(eqs: Equations) -> MethodSummary:
    start = time.perf_counter()
    terms = eqs.terms()
    canonical_seconds = time.perf_counter() - start
    operations = int(sum(se.count_ops(x) for x in eqs.canonical("tau")))
    return MethodSummary(eqs.method, eqs.seconds, canonical_seconds, terms, operations)


def run(model: str = "puma560_symbolic", output: Path = Path("robodyn-out"), progress=None) -> DemoSummary:
    """Derive ``model`` with every method, compare them, write JSON and LaTeX to ``output``."""
    robot = loading.load(model)
    summary = DemoSummary(robot.name, robot.n, len(robot.parameters()))
    derived = []
    for method in DEMO_METHODS:
        if progress:
            progress(f"deriving by {method}")
        eqs = derive(robot, method)
        derived.append(eqs)
        summary.methods.append(_summarise(eqs))
    if progress:
        progress("comparing")
    start = time.perf_counter()
    # As ``robodyn check`` compares: exactly where the data are integers, rationals or symbols (the symbolic PUMA
    # too, whatever its size), numerically at random states where they are floating-point numbers (whose rounding
    # differs between methods, so an exact comparison would report a difference of 1e-16 as a disagreement).
    mode = "numeric" if has_floats(robot) else "exact"
    results = [c for other in derived[1:] for c in compare(derived[0], other, mode=mode)]
    summary.check_seconds = time.perf_counter() - start
    summary.agree = all(c.agree for c in results)
    summary.mode = results[0].mode if results else ""
    output.mkdir(parents=True, exist_ok=True)
    reference = derived[0]
    if progress:
        progress("writing")
    json_path = output / f"{robot.name}_equations.json"
    atomic_write(json_path, json.dumps(reference.to_dict("tau"), indent=1) + "\n")
    text_path = output / f"{robot.name}_equations.txt"
    atomic_write(text_path, reference.to_text("tau") + "\n")
    summary.outputs = [json_path, text_path]
    for name in PROGRAM_OUTPUTS:
        if name == "elements" and robot.couplings:  # Burdick's elements are those of independent joints
            continue
        if progress:
            progress(f"building the cheapest program for {name}")
        summary.programs.append(_program(robot, name))
    if progress:
        progress("generating C")
    summary.code = _code(robot, output / "codegen")
    return summary


#: The programs the demo builds: inverse dynamics, and EMDEG's distinct elements M, c, b, g.
PROGRAM_OUTPUTS = ("tau", "elements")


def _program(robot: Manipulator, output: str) -> ProgramSummary:
    start = time.perf_counter()
    s = count_summary(robot, output)
    return ProgramSummary(output, s["route"], s["multiplications"], s["additions"], s["trig"],
                          time.perf_counter() - start, s["published"])


def _code(robot: Manipulator, directory: Path) -> CodeSummary:
    """Write the C of every routine to ``directory``; compile it and compare with robodyn.numeric."""

    spec = codegen.module_spec(robot)
    code = CodeSummary(files=write_all(directory, codegen.generate(robot, "c", spec=spec)))
    try:
        dyn = compile(robot, spec=spec)
    except CompileError as exc:
        code.note = " ".join(str(exc).split())
        return code
    rng = np.random.default_rng(0)
    params = {**random_values(robot, rng, 0.1, 1.0), **({"g": 9.81} if "g" in dyn.parameters else {})}
    q, qd, qdd = (rng.uniform(-2.0, 2.0, (100, robot.nv)) for _ in range(3))  # the independent coordinates
    got = dyn.inverse_dynamics(q, qd, qdd, params=params or None)
    ref = numeric.inverse_dynamics(robot, q, qd, qdd, params=params or None)
    code.compiled = True
    code.max_relative_difference = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
    return code


#: The compiled code must agree with the numeric engine to this relative difference.
CODE_TOLERANCE = 1e-10

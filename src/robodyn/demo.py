"""The main job on a built-in robot: derive by every method, check they agree, write the results.

``robodyn demo`` (and ``./scripts/demo``) runs :func:`run` on ``puma560_symbolic``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import symengine as se

from robodyn import loading
from robodyn.check import compare
from robodyn.equations import Equations
from robodyn.formulations import derive
from robodyn.model.io import atomic_write

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
class DemoSummary:
    robot: str
    n: int
    parameters: int
    methods: list[MethodSummary] = field(default_factory=list)
    agree: bool = False
    mode: str = ""
    check_seconds: float = 0.0
    outputs: list[Path] = field(default_factory=list)


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
    results = [c for other in derived[1:] for c in compare(derived[0], other, mode="exact")]
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
    return summary

"""Cross-checks between formulations: exact where the arm allows it, numeric otherwise.

Exact: for arms whose numbers are all integers, rationals or symbols, the difference of
two formulations' parts is brought to the canonical form of :mod:`robodyn.algebra`; it
must be identically zero. Numeric: for arms with floating-point data, both parts are
compiled (symengine ``Lambdify`` with common subexpressions) and compared on random
states (and random parameter values for any symbols left) to a relative tolerance.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import symengine as se

from robodyn.algebra import canonical
from robodyn.analysis.trajectories import check_samples
from robodyn.equations import Equations
from robodyn.errors import ModelError
from robodyn.formulations import AVAILABLE, derive, method_name
from robodyn.model.manipulator import Manipulator

CHECKED_PARTS = ("tau", "M", "h", "G")
#: In "auto" mode, arms without floating-point data and at most this many joints are compared
#: exactly; larger ones numerically (an exact comparison of the symbolic PUMA by every method
#: takes minutes: pass mode="exact" for it).
EXACT_AUTO_MAX_JOINTS = 3
#: The most random states of the numeric comparison (``samples``). Each state is evaluated on its own, for every
#: checked part of every method: the PUMA 560 takes 12 s for 5,000 samples on 2 shared cores (2.4 ms a state), so
#: 10,000 about 25 s, and a general 5-link chain 1.4 ms a state for EMDEG alone: about a minute in all; the bound
#: of the analyses (:data:`robodyn.analysis.samples.MAX_SAMPLES`, 1,000,000) would take about 40 minutes.
MAX_CHECK_SAMPLES = 10_000
#: The most links :func:`check` takes: it derives with every method and compiles and evaluates each part of each,
#: far more than one derivation (:data:`robodyn.formulations.MAX_DERIVE_LINKS`). Measured on a chain of float links
#: of general twist (the worst case: nested form), 50 samples, 2 shared cores: 5 links 2.5 s; 6 links 65 s (EMDEG:
#: derivation 6 s, comparison 58 s; the other methods 0.4 s); 7 links more than 300 s of CPU in EMDEG alone (the
#: other methods 0.7 s); 8 and 10 links more than 120 s (1.4 and 1.8 GB); 20 links 300 s and 3.9 GB. 7 keeps every
#: built-in robot and the 7-joint test tree (right-angled arms take seconds); a general 6- or 7-link arm is slow
#: through EMDEG only.
MAX_CHECK_LINKS = 7


@dataclass(frozen=True)
class Comparison:
    """One part of one method against the reference method."""

    method: str
    part: str
    mode: str  # "exact" or "numeric"
    max_relative_difference: float  # 0.0 in exact mode when identical
    agree: bool


@dataclass
class CheckResult:
    robot: str
    reference: str
    methods: tuple[str, ...]
    comparisons: list[Comparison] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    #: Methods left out because they do not apply to this robot, with the reason ("kane": "not applicable
    #: (fixed placements)").
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def agree(self) -> bool:
        return all(c.agree for c in self.comparisons)

    #: The columns of :meth:`rows` (what ``robodyn check`` prints).
    COLUMNS = ("method", "part", "mode", "max relative difference", "agree")

    def rows(self) -> list[tuple[str, str, str, str, str]]:
        """One row per comparison (and per method left out, with the reason), as ``robodyn check`` prints them."""
        out = []
        for c in self.comparisons:
            diff = "0 (identical)" if c.mode == "exact" and c.agree else f"{c.max_relative_difference:.3g}"
            out.append((c.method, c.part, c.mode, diff, "yes" if c.agree else "NO"))
        out += [(method, "-", "-", reason, "-") for method, reason in self.skipped.items()]
        return out

    def verdict(self) -> str:
        return "all methods agree" if self.agree else "methods disagree"

    def __repr__(self) -> str:
        """The table ``robodyn check`` prints, as plain text."""
        rows = [self.COLUMNS, *self.rows()]
        widths = [max(len(row[k]) for row in rows) for k in range(len(self.COLUMNS))]
        lines = [f"{self.robot}: every method against {self.reference}"]
        lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
        return "\n".join([*lines, self.verdict()])

    def _repr_html_(self) -> str:
        cells = "".join(f"<th>{html.escape(c)}</th>" for c in self.COLUMNS)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in self.rows())
        caption = html.escape(f"{self.robot}: every method against {self.reference}; {self.verdict()}")
        return f"<table><caption>{caption}</caption><tr>{cells}</tr>{body}</table>"


def has_floats(robot: Manipulator) -> bool:
    """True if any number in the description is a floating-point number."""
    return robot.has_floats


@dataclass(frozen=True)
class NumericSampler:
    """Random states and parameter values, reproducible from ``seed``."""

    robot: Manipulator
    samples: int = 50
    seed: int = 0

    def symbols(self) -> list[se.Symbol]:
        names = [f"q{i}" for i in range(1, self.robot.n + 1)]
        names += [f"qd{i}" for i in range(1, self.robot.n + 1)]
        names += [f"qdd{i}" for i in range(1, self.robot.n + 1)]
        names += [s.name for s in self.robot.parameters()]
        return [se.Symbol(name) for name in names]

    def points(self) -> np.ndarray:
        n, p = self.robot.n, len(self.robot.parameters())
        rng = np.random.default_rng(self.seed)
        return np.hstack(
            [
                rng.uniform(-np.pi, np.pi, (self.samples, n)),
                rng.uniform(-2.0, 2.0, (self.samples, n)),
                rng.uniform(-5.0, 5.0, (self.samples, n)),
                rng.uniform(0.5, 1.5, (self.samples, p)),
            ]
        )


def evaluate(matrix: se.DenseMatrix, symbols: Sequence[se.Symbol], points: np.ndarray) -> np.ndarray:
    """Values of every entry of ``matrix`` at each row of ``points``: shape (N, entries)."""
    entries = [matrix[i, j] for i in range(matrix.rows) for j in range(matrix.cols)]
    f = se.Lambdify(list(symbols), entries, cse=True, backend="lambda")
    return np.array([np.asarray(f(x), dtype=float).ravel() for x in points])


#: A part that vanishes identically (h of a one-joint arm) is measured against this
#: fraction of the largest part instead of its own rounding noise.
FLOOR = 1e-6


def relative_difference(a: np.ndarray, b: np.ndarray, floor: float = 0.0) -> float:
    """``max |a - b| / max(max |a|, max |b|, floor)`` over all samples and entries."""
    scale = max(float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)), floor)
    diff = float(np.max(np.abs(a - b), initial=0.0))
    return diff / scale if scale > 0 else diff


def check_check_samples(samples: object) -> int:
    """``samples`` as an int from 1 to :data:`MAX_CHECK_SAMPLES`; otherwise one :class:`ModelError` naming it."""
    count = check_samples(samples, 1)
    if count > MAX_CHECK_SAMPLES:
        raise ModelError(f"must be an integer from 1 to {MAX_CHECK_SAMPLES} for the cross-check (each state is "
                         f"evaluated on its own), got {count}", field="samples")
    return count


def compare(
    reference: Equations,
    other: Equations,
    *,
    mode: str = "auto",
    samples: int = 50,
    rtol: float = 1e-10,
    seed: int = 0,
) -> list[Comparison]:
    """Compare tau, M, h and G of two derivations of the same robot."""
    if mode == "auto":
        exact = not has_floats(reference.robot) and reference.robot.n <= EXACT_AUTO_MAX_JOINTS
        mode = "exact" if exact else "numeric"
    if mode == "exact":
        out = []
        for part in CHECKED_PARTS:
            a, b = reference.canonical(part), other.canonical(part)
            same = all(
                canonical(a[i, j] - b[i, j], reference.symbols.q) == 0
                for i in range(a.rows)
                for j in range(a.cols)
            )
            out.append(Comparison(other.method, part, mode, 0.0 if same else float("inf"), same))
        return out
    sampler = NumericSampler(reference.robot, check_check_samples(samples), seed)
    symbols, points = sampler.symbols(), sampler.points()
    values = {
        part: (evaluate(reference.raw(part), symbols, points), evaluate(other.raw(part), symbols, points))
        for part in CHECKED_PARTS
    }
    floor = FLOOR * max(float(np.max(np.abs(a), initial=0.0)) for a, _ in values.values())
    out = []
    for part, (a, b) in values.items():
        rel = relative_difference(a, b, floor)
        out.append(Comparison(other.method, part, mode, rel, rel <= rtol))
    return out


#: Why a method cannot derive a robot's equations, if it cannot (checked before deriving).
PLACEMENTS_NOTE = "not applicable (fixed placements)"


def not_applicable(robot: Manipulator, method: str) -> str | None:
    """The reason ``method`` does not apply to ``robot`` (Kane's algorithm in Angeles' HD notation cannot
    express the fixed placements of URDF imports), or None."""
    if method_name(method) == "kane" and robot.has_placements:
        return PLACEMENTS_NOTE
    return None


def check(
    robot: Manipulator,
    methods: Sequence[str] | None = None,
    *,
    mode: str = "auto",
    samples: int = 50,
    rtol: float = 1e-10,
    seed: int = 0,
) -> CheckResult:
    """Derive with every method and compare each with the first.

    ``methods=None`` means every available method that applies to the robot: those that do not (Kane's
    algorithm for a robot with fixed placements) are left out, with the reason in
    :attr:`CheckResult.skipped` (the CLI prints it). Methods named explicitly are all derived (a method that
    cannot handle the robot raises its :class:`~robodyn.errors.DerivationError`). More than
    :data:`MAX_CHECK_SAMPLES` samples or :data:`MAX_CHECK_LINKS` links are refused in one line, before any work."""
    check_check_samples(samples)
    if robot.n > MAX_CHECK_LINKS:
        raise ModelError(f"{robot.n} links: the cross-check of every method is limited to {MAX_CHECK_LINKS} "
                         "(derive one method for more)", field="links")
    skipped: dict[str, str] = {}
    if methods is None:
        methods = []
        for name in AVAILABLE:
            reason = not_applicable(robot, name)
            if reason is None:
                methods.append(name)
            else:
                skipped[name] = reason
    names = tuple(method_name(m) for m in methods)
    if not names:
        raise ValueError("check needs at least one method")
    derived = {name: derive(robot, name) for name in names}
    result = CheckResult(robot.name, names[0], names, skipped=skipped)
    result.seconds = {name: eqs.seconds for name, eqs in derived.items()}
    for name in names[1:]:
        result.comparisons.extend(
            compare(derived[names[0]], derived[name], mode=mode, samples=samples, rtol=rtol, seed=seed)
        )
    return result

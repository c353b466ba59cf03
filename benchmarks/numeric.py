"""Per-state time of robodyn.numeric on the PUMA 560 (prints a markdown table; never asserts).

    python benchmarks/numeric.py [--sizes 1 100 10000 100000] [--robot puma560] [--repeats 5]

Ends with a summary at the largest N: us/state and states/s, and the ratios (a)/(b) (batched robodyn
vs Pinocchio's rnea in a loop) and (a)/(c) (vs rneaInParallel on one thread).

For each batch size N: microseconds per state of ``inverse_dynamics`` (recursive Newton-Euler),
``mass_matrix`` (composite rigid body algorithm) and ``forward_dynamics`` (CRBA + RNEA + Cholesky),
best of several interleaved rounds, the model already compiled (cached); also Kane's O(n) algorithm
(``robodyn.numeric.kane``). Where Pinocchio is installed, the same
arm built from the DH table (robodyn.formats.pinocchio.to_pinocchio) is timed for comparison: ``rnea``/``crba``/``aba``
(and ``computeAllTerms``) called in a Python loop over the states, and ``rneaInParallel`` on one
thread for the whole batch.
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

import robodyn as rd
from robodyn import numeric
from robodyn.numeric.kane import kane_inverse_dynamics

ROOT = Path(__file__).resolve().parents[1]


def best_times(
    calls: list[tuple[str, int, Callable[[], object]]], budget_s: float = 0.3, repeats: int = 5
) -> list[tuple[str, int, float]]:
    """Best wall time per state of each call, the calls interleaved round by round (so that a slow
    moment of the machine hits all of them alike): ``repeats`` rounds, each repeating a call to fill
    about budget_s / repeats (at least once)."""
    inner = []
    for _, _, call in calls:
        start = time.perf_counter()
        call()
        once = max(time.perf_counter() - start, 1e-7)
        inner.append(max(1, min(10_000, int(budget_s / repeats / once))))
    best = [float("inf")] * len(calls)
    for _ in range(repeats):
        for k, (_, _, call) in enumerate(calls):
            start = time.perf_counter()
            for _ in range(inner[k]):
                call()
            best[k] = min(best[k], (time.perf_counter() - start) / inner[k])
    return [(label, N, t / N) for (label, N, _), t in zip(calls, best, strict=True)]


def states(n: int, N: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (N, n)), rng.uniform(-2, 2, (N, n)), rng.uniform(-5, 5, (N, n))


ID = "robodyn inverse_dynamics"
KANE = "robodyn kane_inverse_dynamics"
PIN_LOOP = "pinocchio rnea (Python loop)"
PIN_BATCH = "pinocchio rneaInParallel (1 thread)"


def robodyn_calls(robot: rd.Manipulator, sizes: list[int]) -> list[tuple[str, int, Callable[[], object]]]:
    model = numeric.compile_model(robot)
    calls: list[tuple[str, int, Callable[[], object]]] = []
    for N in sizes:
        q, qd, qdd = states(robot.n, N)
        tau = numeric.inverse_dynamics(model, q, qd, qdd)
        calls += [
            (ID, N, lambda q=q, qd=qd, qdd=qdd: numeric.inverse_dynamics(model, q, qd, qdd)),
            (KANE, N, lambda q=q, qd=qd, qdd=qdd: kane_inverse_dynamics(robot, q, qd, qdd)),
            ("robodyn mass_matrix", N, lambda q=q: numeric.mass_matrix(model, q)),
            ("robodyn forward_dynamics", N, lambda q=q, qd=qd, tau=tau: numeric.forward_dynamics(model, q, qd, tau)),
        ]
    return calls


def pinocchio_calls(robot: rd.Manipulator, sizes: list[int]) -> list[tuple[str, int, Callable[[], object]]]:
    if importlib.util.find_spec("pinocchio") is None:
        return []
    import pinocchio as pin

    from robodyn.formats.pinocchio import to_pinocchio

    model = to_pinocchio(robot)
    data = model.createData()
    calls: list[tuple[str, int, Callable[[], object]]] = []
    for N in sizes:
        q, qd, qdd = states(robot.n, N)
        tau = numeric.inverse_dynamics(robot, q, qd, qdd)

        def loop(f: Callable[..., object], *arrays: np.ndarray) -> Callable[[], None]:
            def run() -> None:
                for k in range(len(arrays[0])):
                    f(model, data, *(a[k] for a in arrays))

            return run

        calls.append((PIN_LOOP, N, loop(pin.rnea, q, qd, qdd)))
        calls.append(("pinocchio crba (Python loop)", N, loop(pin.crba, q)))
        calls.append(("pinocchio computeAllTerms (Python loop)", N, loop(pin.computeAllTerms, q, qd)))
        calls.append(("pinocchio aba (Python loop)", N, loop(pin.aba, q, qd, tau)))
        pool = pin.ModelPool(model, 1)
        qT, qdT, qddT = (np.asfortranarray(a.T) for a in (q, qd, qdd))
        out = np.zeros((robot.n, N), order="F")
        calls.append(
            (
                PIN_BATCH,
                N,
                lambda qT=qT, qdT=qdT, qddT=qddT, out=out, pool=pool: pin.rneaInParallel(1, pool, qT, qdT, qddT, out),
            )
        )
    return calls


def table(rows: list[tuple[str, int, float]], sizes: list[int]) -> str:
    labels = list(dict.fromkeys(label for label, _, _ in rows))
    values = {(label, N): t for label, N, t in rows}
    lines = ["| function | " + " | ".join(f"N = {N:,} (us/state)" for N in sizes) + " |"]
    lines.append("|---|" + "---:|" * len(sizes))
    for label in labels:
        cells = [f"{values[label, N] * 1e6:.2f}" if (label, N) in values else "" for N in sizes]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="puma560")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 100, 10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=5, help="interleaved rounds (best of)")
    parser.add_argument("--no-pinocchio", action="store_true", help="time robodyn only")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        robot = rd.load(args.robot)
    calls = robodyn_calls(robot, args.sizes)
    if not args.no_pinocchio:
        calls += pinocchio_calls(robot, args.sizes)
    rows = best_times(calls, repeats=args.repeats)
    print(f"# robodyn.numeric, {robot.name} (n = {robot.n})\n")
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, NumPy {np.__version__}\n")
    print(table(rows, args.sizes))
    print(summary(rows, max(args.sizes)))


def summary(rows: list[tuple[str, int, float]], N: int) -> str:
    """Per-state time and states/s at the largest N, with the ratios to Pinocchio."""
    values = {label: t for label, size, t in rows if size == N}
    lines = [f"\n## Inverse dynamics and mass matrix at N = {N:,}\n", "| function | us/state | states/s |"]
    lines.append("|---|---:|---:|")
    for label, t in values.items():
        lines.append(f"| {label} | {t * 1e6:.3f} | {1 / t:,.0f} |")
    a = values.get(ID)
    for other, what in ((PIN_LOOP, "(a)/(b)"), (PIN_BATCH, "(a)/(c)")):
        if a is not None and other in values:
            lines.append(
                f"\n{what}: robodyn batched runs {values[other] / a:.2f}x the states/s of {other} "
                f"({a * 1e6:.3f} vs {values[other] * 1e6:.3f} us/state)"
            )
    if "robodyn mass_matrix" in values and "pinocchio crba (Python loop)" in values:
        ratio = values["pinocchio crba (Python loop)"] / values["robodyn mass_matrix"]
        lines.append(f"\nmass_matrix: {ratio:.2f}x the states/s of pinocchio crba (Python loop)")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

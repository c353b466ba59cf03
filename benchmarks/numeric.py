"""Per-state time of robodyn.numeric on the PUMA 560 (prints a markdown table; never asserts).

    python benchmarks/numeric.py [--sizes 1 100 10000 100000] [--robot puma560]

For each batch size N: microseconds per state of ``inverse_dynamics`` (recursive Newton-Euler),
``mass_matrix`` (composite rigid body algorithm) and ``forward_dynamics`` (CRBA + RNEA + Cholesky),
best of several repeats, the model already compiled (cached). Where Pinocchio is installed, the same
arm built from the DH table (tests/test_pinocchio.py) is timed for comparison: ``rnea``/``crba``/``aba``
called in a Python loop over the states, and ``rneaInParallel`` on one thread for the whole batch.
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

import robodyn as rd
from robodyn import numeric

ROOT = Path(__file__).resolve().parents[1]


def best_time(call: Callable[[], object], budget_s: float = 0.5, repeats: int = 5) -> float:
    """Best wall time of one call over ``repeats`` rounds, each round repeating it to fill the budget."""
    start = time.perf_counter()
    call()
    once = max(time.perf_counter() - start, 1e-7)
    inner = max(1, min(10_000, int(budget_s / repeats / once)))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            call()
        best = min(best, (time.perf_counter() - start) / inner)
    return best


def states(n: int, N: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (N, n)), rng.uniform(-2, 2, (N, n)), rng.uniform(-5, 5, (N, n))


def robodyn_rows(robot: rd.Manipulator, sizes: list[int]) -> list[tuple[str, int, float]]:
    model = numeric.compile_model(robot)
    rows = []
    for N in sizes:
        q, qd, qdd = states(robot.n, N)
        tau = numeric.inverse_dynamics(model, q, qd, qdd)
        calls = {
            "robodyn inverse_dynamics": lambda: numeric.inverse_dynamics(model, q, qd, qdd),  # noqa: B023
            "robodyn mass_matrix": lambda: numeric.mass_matrix(model, q),  # noqa: B023
            "robodyn forward_dynamics": lambda: numeric.forward_dynamics(model, q, qd, tau),  # noqa: B023
        }
        rows += [(label, N, best_time(call) / N) for label, call in calls.items()]
    return rows


def pinocchio_rows(robot: rd.Manipulator, sizes: list[int]) -> list[tuple[str, int, float]]:
    if importlib.util.find_spec("pinocchio") is None:
        return []
    import pinocchio as pin

    sys.path.insert(0, str(ROOT))
    from tests.test_pinocchio import pinocchio_model

    model = pinocchio_model(robot)
    data = model.createData()
    rows = []
    for N in sizes:
        q, qd, qdd = states(robot.n, N)
        tau = numeric.inverse_dynamics(robot, q, qd, qdd)

        def loop(f: Callable[..., object], *arrays: np.ndarray) -> Callable[[], None]:
            def run() -> None:
                for k in range(len(arrays[0])):
                    f(model, data, *(a[k] for a in arrays))

            return run

        rows.append(("pinocchio rnea (Python loop)", N, best_time(loop(pin.rnea, q, qd, qdd)) / N))
        rows.append(("pinocchio crba (Python loop)", N, best_time(loop(pin.crba, q)) / N))
        rows.append(("pinocchio aba (Python loop)", N, best_time(loop(pin.aba, q, qd, tau)) / N))
        pool = pin.ModelPool(model, 1)
        qT, qdT, qddT = (np.asfortranarray(a.T) for a in (q, qd, qdd))
        out = np.zeros((robot.n, N), order="F")
        rows.append(
            (
                "pinocchio rneaInParallel (1 thread)",
                N,
                best_time(lambda: pin.rneaInParallel(1, pool, qT, qdT, qddT, out)) / N,  # noqa: B023
            )
        )
    return rows


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
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 100, 10_000])
    parser.add_argument("--no-pinocchio", action="store_true", help="time robodyn only")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        robot = rd.load(args.robot)
    rows = robodyn_rows(robot, args.sizes)
    if not args.no_pinocchio:
        rows += pinocchio_rows(robot, args.sizes)
    print(f"# robodyn.numeric, {robot.name} (n = {robot.n})\n")
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, NumPy {np.__version__}\n")
    print(table(rows, args.sizes))


if __name__ == "__main__":
    main()

"""Wall time and peak memory to produce the cheapest program (issue 4; EMDEG needed 10 CPU
minutes on a VAX 11/780 for the PUMA's elements).

    python benchmarks/generate.py [--max-n 12]

Rows: puma560_symbolic (tau, and all distinct elements), then chains of n revolute joints of
general geometry (every DH and inertial parameter a symbol, :func:`robodyn.opcount.general_arm`)
with their tau counts per joint, so that the growth with n is visible. Peak memory is Python's
(tracemalloc), measured in the same process run by run.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings

import robodyn as rd
from robodyn.opcount import general_arm
from robodyn.program import build


def measure(robot: rd.Manipulator, outputs: tuple[str, ...]) -> tuple[float, float, int, int]:
    """Seconds of one build, then the peak of a second build under tracemalloc (which slows it)."""
    start = time.perf_counter()
    program = build(robot, outputs)
    seconds = time.perf_counter() - start
    tracemalloc.start()
    build(robot, outputs)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    c = program.count()["evaluation"]
    return seconds, peak, c.multiplications, c.additions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--max-n", type=int, default=12)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print(f"{'arm':<22} {'output':<9} {'s':>7} {'peak MiB':>9} {'mult':>6} {'add':>6} {'mult/n':>7} {'add/n':>6}")
    puma = rd.load("puma560_symbolic")
    for outputs in (("tau",), ("elements",), ("M", "bias")):
        s, peak, m, a = measure(puma, outputs)
        print(f"{'puma560_symbolic':<22} {'+'.join(outputs):<9} {s:>7.2f} {peak:>9.1f} {m:>6} {a:>6}")
    for n in range(2, args.max_n + 1):
        s, peak, m, a = measure(general_arm("R" * n), ("tau",))
        label = f"general {n}R chain"
        print(f"{label:<22} {'tau':<9} {s:>7.2f} {peak:>9.1f} {m:>6} {a:>6} {m / n:>7.1f} {a / n:>6.1f}")


if __name__ == "__main__":
    main()

"""The overhead of distribution: states per second per core of a sweep on Dask against the single-process compiled C.

    python benchmarks/distributed_sweep.py [--states 1000000] [--samples 8] [--workers 1,2] [--chunks 100000,1000000]

The robot is the PUMA 560 with its six link lengths symbolic (:func:`puma_lengths`: d1, a2, a3, d3, d4, d6), its
inverse dynamics compiled (``rd.compile``); the reference is one process looping over the samples, each a
``dyn.inverse_dynamics(q, qd, qdd, params=...)`` on all the states. The sweep (:func:`robodyn.distributed.sweep`)
runs the same samples on a LocalCluster of 1 and 2 single-threaded worker processes, for each chunk size: the time
from submitting to having every result back in this process (the cluster's start is apart, reported once; the
workers' first compile or cache load is inside the first run and warmed by one untimed run). Figures only, no
assertions. The full acceptance size of the issue, 6 lengths x 8 values over 10^5 states (48 samples), is
``--samples 8 --states 100000``; ``--chunks`` beyond what memory allows are skipped (a chunk of 10^7 PUMA states is
1.4 GB of inputs and 0.5 GB of torques per task). (Not named ``distributed.py``: run as a script, it would shadow
the ``distributed`` package.)
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
import warnings
from typing import Any

import numpy as np
import sympy as sp

import robodyn as rd

#: The PUMA's link lengths made symbols: (0-based link, DH field); the symbols are the field and the link number.
LENGTHS = ((0, "d"), (1, "a"), (2, "a"), (2, "d"), (3, "d"), (5, "d"))


def puma_lengths() -> tuple[rd.Manipulator, dict[str, float]]:
    """The PUMA 560 with its six link lengths symbolic (d1, a2, a3, d3, d4 and the flange offset d6), and their
    nominal values."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)  # the published inertias break the triangle inequality
        robot = rd.load("puma560")
    links = list(robot.links)
    nominal = {}
    for i, field in LENGTHS:
        name = f"{field}{i + 1}"
        nominal[name] = float(getattr(robot.links[i], field))
        links[i] = dataclasses.replace(links[i], **{field: sp.Symbol(name)})
    return robot.replace(links=tuple(links), name="puma560_lengths"), nominal


def length_samples(nominal: dict[str, float], values: int) -> list[dict[str, float]]:
    """Each length over ``values`` values (0.8 to 1.2 of nominal; d6 from 0 to 0.2 m), one at a time."""
    from robodyn.distributed import one_at_a_time

    ranges = {name: (np.linspace(0.8, 1.2, values) * value if value else np.linspace(0.0, 0.2, values))
              for name, value in nominal.items()}
    return one_at_a_time(nominal, ranges)


def states(count: int, n: int = 6, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {name: rng.uniform(-np.pi, np.pi, (count, n)) for name in ("q", "qd", "qdd")}


def single_process(dyn: Any, samples: list[dict[str, float]], given: dict[str, np.ndarray]) -> float:
    out = np.empty_like(given["q"])
    start = time.perf_counter()
    for sample in samples:
        dyn.inverse_dynamics(given["q"], given["qd"], given["qdd"], params=sample, out=out)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=10**6)
    parser.add_argument("--samples", type=int, default=2, help="values per length (6 lengths: 6x this many samples)")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--chunks", default="100000,1000000,10000000")
    parser.add_argument("--memory-gb", type=float, default=4.0, help="skip chunks whose task needs more than this")
    args = parser.parse_args(argv)
    import dask.array as da
    from distributed import Client, LocalCluster

    from robodyn.distributed import sweep, uniform_states

    robot, nominal = puma_lengths()
    samples = length_samples(nominal, args.samples)
    given = states(args.states)
    dyn = rd.compile(robot, outputs=["tau"])
    total = len(samples) * args.states
    single_process(dyn, samples[:1], given)
    reference = single_process(dyn, samples, given)
    print(f"{os.cpu_count()} cores; PUMA inverse dynamics, {len(samples)} samples x {args.states} states = {total:.2e}")
    print(f"single process (compiled C): {reference:.2f} s, {total / reference:.3g} states/s")
    print("shipped: NumPy states sent with the graph, every torque gathered back here; peaks: the same, only the "
          "peaks gathered; on workers: the states made by the workers (a da.random array), only the peaks gathered; "
          "drawn: the same, by uniform_states (seeded per chunk)")
    print(f"{'workers':>7} {'mode':>10} {'chunk':>9} {'tasks':>6} {'s':>7} {'states/s':>10} {'per core':>10} "
          f"{'vs C':>6}")
    for workers in (int(w) for w in args.workers.split(",")):
        start = time.perf_counter()
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
                Client(cluster) as client:
            started = time.perf_counter() - start
            sweep(robot, samples[:1], {k: v[:1000] for k, v in given.items()}, client=client)  # (warm the workers)
            for chunk in (int(c) for c in args.chunks.split(",")):
                if chunk > args.states:
                    continue
                if chunk * 6 * 8 * 4 > args.memory_gb * 1e9 / workers:
                    print(f"{workers:>7} {chunk:>9} skipped: a task would need {chunk * 192 / 1e9:.1f} GB")
                    continue
                for mode in ("shipped", "peaks", "on workers", "drawn"):
                    start = time.perf_counter()
                    if mode in ("shipped", "peaks"):
                        result = sweep(robot, samples, given, chunk=chunk, client=client)
                        if mode == "shipped":
                            result.arrays["tau"].compute()
                    elif mode == "drawn":
                        result = sweep(robot, samples, uniform_states(args.states, seed=0), chunk=chunk, client=client)
                    else:
                        rng = da.random.default_rng(0)
                        made = {k: rng.uniform(-np.pi, np.pi, (args.states, 6), chunks=(chunk, 6))
                                for k in ("q", "qd", "qdd")}
                        result = sweep(robot, samples, made, chunk=chunk, client=client)
                    seconds = time.perf_counter() - start
                    del result
                    tasks = len(samples) * -(-args.states // chunk)
                    rate = total / seconds
                    print(f"{workers:>7} {mode:>10} {chunk:>9} {tasks:>6} {seconds:7.2f} {rate:10.3g} "
                          f"{rate / workers:10.3g} {rate / workers / (total / reference):6.2f}", flush=True)
        print(f"  (the LocalCluster of {workers} started in {started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Simulated seconds per wall-clock second of ``robodyn.simulate`` (prints JSON and a markdown table; never asserts).

    python benchmarks/simulate.py [--robot puma560] [--t-end 10] [--repeats 3] [--engines numpy lambdify compiled]

A free swing of the arm (no torques) from q0 = (0.1, -0.5, 0.3, 0.2, 0.4, 0.1) over ``--t-end`` seconds, for
each forward-dynamics engine of :func:`robodyn.analysis.simulation.dynamics`:

- ``numpy``: :func:`robodyn.numeric.forward_dynamics` (composite rigid body + Newton-Euler + Cholesky) called
  once per right-hand side (the engine is built for batches; one state pays its NumPy overheads);
- ``lambdify``: the Newton-Euler M and bias compiled by symengine's Lambdify, then a LAPACK solve;
- ``compiled``: :func:`robodyn.runtime.compile`'s generated C (where a C compiler exists);
- ``pinocchio`` (the peer, when Pinocchio is installed): a plain ``scipy.integrate.solve_ivp`` over ``pinocchio.aba``
  on the same arm (:func:`robodyn.formats.pinocchio.to_pinocchio`), with the same integrator, tolerances and
  samples, and no guards.

The arm is simulated without friction (:func:`robodyn.analysis.toolbox.nofriction`: Pinocchio's ``aba`` applies no
damping), so every engine integrates the same equations and takes the same steps.

Each with two integrator settings: RK45 at robodyn's default tolerances (rtol 1e-8, atol 1e-10) and DOP853 at
rtol = atol = 1e-12 (the energy-conservation setting). The one-off build (derivation, Lambdify or the C compile,
cached afterwards) is timed apart; the rate is the best of ``--repeats`` runs with the engine already built.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings

import numpy as np

import robodyn as rd
from robodyn.analysis import simulation, toolbox

SETTINGS = {"RK45 default": {"method": "RK45"}, "DOP853 1e-12": {"method": "DOP853", "rtol": 1e-12, "atol": 1e-12}}
Q0 = [0.1, -0.5, 0.3, 0.2, 0.4, 0.1]


def run(robot: rd.Manipulator, engine: str, t_end: float, repeats: int) -> list[dict[str, object]]:
    start = time.perf_counter()
    simulation.dynamics(robot, None, engine)  # build (and cache) the engine
    build = time.perf_counter() - start
    rows = []
    for label, options in SETTINGS.items():
        best, result = float("inf"), None
        for _ in range(repeats):
            start = time.perf_counter()
            result = simulation.simulate(robot, t_end, Q0[: robot.n], engine=engine, samples=2, **options)
            best = min(best, time.perf_counter() - start)
        assert result is not None
        rows.append({
            "engine": engine,
            "integrator": label,
            "build_s": round(build, 3),
            "wall_s": round(best, 4),
            "simulated_s_per_wall_s": round(t_end / best, 2),
            "evaluations": result.nfev,
            "us_per_evaluation": round(best / result.nfev * 1e6, 1),
            "energy_drift": float(f"{result.energy_drift():.3g}"),
        })
    return rows


def run_pinocchio(robot: rd.Manipulator, t_end: float, repeats: int) -> list[dict[str, object]]:
    """The peer: solve_ivp over pinocchio.aba, as a user would write it (no guards, no result processing)."""
    import pinocchio
    from scipy.integrate import solve_ivp

    from robodyn.formats.pinocchio import to_pinocchio

    model = to_pinocchio(robot)
    data = model.createData()
    n, zeros = robot.n, np.zeros(robot.n)

    def rhs(t: float, x: np.ndarray) -> np.ndarray:
        return np.concatenate((x[n:], pinocchio.aba(model, data, x[:n], x[n:], zeros)))

    x0 = np.concatenate((np.array(Q0[:n], dtype=float), zeros))
    rows = []
    for label, options in SETTINGS.items():
        tolerances = {"rtol": options.get("rtol", 1e-8), "atol": options.get("atol", 1e-10)}
        best, sol = float("inf"), None
        for _ in range(repeats):
            start = time.perf_counter()
            sol = solve_ivp(rhs, (0.0, t_end), x0, method=options["method"], t_eval=np.linspace(0.0, t_end, 2),
                            **tolerances)
            best = min(best, time.perf_counter() - start)
        assert sol is not None
        rows.append({"engine": "pinocchio", "integrator": label, "build_s": 0.0, "wall_s": round(best, 4),
                     "simulated_s_per_wall_s": round(t_end / best, 2), "evaluations": int(sol.nfev),
                     "us_per_evaluation": round(best / sol.nfev * 1e6, 1), "energy_drift": float("nan")})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="puma560")
    parser.add_argument("--t-end", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--engines", nargs="+", default=["numpy", "lambdify", "compiled", "pinocchio"])
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        robot = toolbox.nofriction(rd.load(args.robot))
    rows, skipped = [], {}
    for engine in args.engines:
        try:
            rows += run_pinocchio(robot, args.t_end, args.repeats) if engine == "pinocchio" else run(
                robot, engine, args.t_end, args.repeats)
        except (rd.ModelError, RuntimeError, ImportError) as exc:  # no C compiler, no Pinocchio
            skipped[engine] = " ".join(str(exc).split())
    cpu = platform.processor() or platform.machine()
    machine = f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"
    print(json.dumps({"robot": robot.name, "t_end": args.t_end, "machine": machine, "numpy": np.__version__,
                      "results": rows, "skipped": skipped}, indent=2))
    print()
    print(f"{robot.name}, free swing over {args.t_end:g} s ({machine})")
    print()
    print("| engine | integrator | simulated s / wall s | evaluations | us / evaluation | build (s) | energy drift |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['engine']} | {r['integrator']} | {r['simulated_s_per_wall_s']} | {r['evaluations']} | "
              f"{r['us_per_evaluation']} | {r['build_s']} | {r['energy_drift']} |")
    peer = {r["integrator"]: r["wall_s"] for r in rows if r["engine"] == "pinocchio"}
    for r in rows:
        if r["engine"] == "compiled" and r["integrator"] in peer:
            ratio = float(r["wall_s"]) / float(peer[r["integrator"]])
            print(f"\ncompiled / pinocchio wall time, {r['integrator']}: {ratio:.2f}")
    for engine, why in skipped.items():
        print(f"| {engine} | skipped: {why} | | | | | |")


if __name__ == "__main__":
    main()

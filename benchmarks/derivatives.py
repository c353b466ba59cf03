"""The derivatives of the dynamics against Pinocchio's: operation counts and per-state speed (prints markdown).

    python benchmarks/derivatives.py [--states 100000] [--loop 20000] [--robots puma560 panda]

For each robot: the operation counts of the generated derivative routines (``dtau``: dtau/dq and dtau/dqd;
``dqdd``: dqdd/dq, dqdd/dqd and M^-1; robodyn.program.build's counts, the forward-mode Newton-Euler recursion
as a straight-line program), then the per-state time of ``robodyn.runtime``'s C batch routines over N states
(into preallocated ``out=`` arrays, as a control loop calls them; Pinocchio writes into its ``Data``)
against Pinocchio's ``computeRNEADerivatives`` / ``computeABADerivatives`` called in a Python loop (its wheel
has no batch call for derivatives; ``rneaInParallel`` exists for tau only), with the ratios. Pinocchio's model
is read from the same URDF (the Panda) or built by :func:`robodyn.formats.pinocchio.to_pinocchio` (the PUMA). Pinocchio
reports no operation count, so its column holds times only. Times are the best of interleaved rounds
(benchmarks/codegen.py's ``steady_times``).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

import robodyn as rd
from robodyn import program
from robodyn.program.routes import DERIVATIVE_GROUPS

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.calls import load_plain  # noqa: E402 - the repository root is on the path now
from benchmarks.codegen import steady_times  # noqa: E402
from benchmarks.urdf_survey import robots_directory  # noqa: E402


def load(name: str) -> tuple[rd.Manipulator, object]:
    """The robot (:func:`benchmarks.calls.load_plain`) and Pinocchio's model of it (the Panda's from its URDF)."""
    import pinocchio as pin

    from robodyn.formats.pinocchio import to_pinocchio

    robot = load_plain(name)
    if name == "panda":
        directory = robots_directory()
        assert directory is not None  # load_plain found it
        return robot, pin.buildModelFromUrdf(str(directory / "panda_description" / "urdf" / "panda.urdf"))
    return robot, to_pinocchio(robot)


def counts(robot: rd.Manipulator) -> dict[str, tuple[int, int, float]]:
    """{group: (multiplications, additions, seconds to build)}."""
    out = {}
    for group, outputs in DERIVATIVE_GROUPS.items():
        start = time.perf_counter()
        c = program.build(robot, outputs).count()["evaluation"]
        out[group] = (c.multiplications, c.additions, time.perf_counter() - start)
    return out


def run(name: str, N: int, loop: int) -> str:
    import pinocchio as pin

    robot, model = load(name)
    data = model.createData()  # type: ignore[attr-defined]
    n = robot.n
    ops = counts(robot)
    start = time.perf_counter()
    dyn = rd.compile(robot, outputs=("tau", "dtau", "dqdd"))
    compile_s = time.perf_counter() - start
    rng = np.random.default_rng(0)
    rows = max(N, loop)  # the C batch takes the first N states, Pinocchio's loop the first `loop`
    q, qd, qdd = (rng.uniform(-1, 1, (rows, n)) for _ in range(3))
    tau = dyn.inverse_dynamics(q, qd, qdd)
    damping = np.array([float(link.damping) for link in robot.links])
    lq, lqd, lqdd, ltau = q[:loop], qd[:loop], qdd[:loop], tau[:loop] - damping * qd[:loop]
    q, qd, qdd, tau = q[:N], qd[:N], qdd[:N], tau[:N]

    def rnea_loop() -> None:
        for k in range(loop):
            pin.computeRNEADerivatives(model, data, lq[k], lqd[k], lqdd[k])

    def aba_loop() -> None:
        for k in range(loop):
            pin.computeABADerivatives(model, data, lq[k], lqd[k], ltau[k])

    dtau_out, dqdd_out = np.empty((N, 2, n, n)), np.empty((N, 3, n, n))  # written again each call, as in a loop
    calls = [
        ("C dtau", N, lambda: dyn.inverse_dynamics_derivatives(q, qd, qdd, out=dtau_out)),
        ("C dqdd", N, lambda: dyn.forward_dynamics_derivatives(q, qd, tau, out=dqdd_out)),
        ("pin rnea derivatives", loop, rnea_loop),
        ("pin aba derivatives", loop, aba_loop),
    ]
    t = {label: s for label, _, s in steady_times(calls, budget_s=1.0)}
    us = {label: s * 1e6 for label, s in t.items()}
    lines = [
        f"\n## {robot.name} (n = {n}{', a tree' if robot.is_tree else ''})\n",
        f"Program build: dtau {ops['dtau'][2]:.1f} s, dqdd {ops['dqdd'][2]:.1f} s; rd.compile (or the cache) "
        f"{compile_s:.1f} s.\n",
        "| derivatives | robodyn mult, add | robodyn C batch us/state | Pinocchio us/state (Python loop) | ratio |",
        "|---|---:|---:|---:|---:|",
        f"| inverse dynamics (dtau/dq, dtau/dqd) | {ops['dtau'][0]}, {ops['dtau'][1]} | {us['C dtau']:.3f} | "
        f"{us['pin rnea derivatives']:.3f} (computeRNEADerivatives) | "
        f"{t['pin rnea derivatives'] / t['C dtau']:.1f}x |",
        f"| forward dynamics (dqdd/dq, dqdd/dqd, M^-1) | {ops['dqdd'][0]}, {ops['dqdd'][1]} | {us['C dqdd']:.3f} | "
        f"{us['pin aba derivatives']:.3f} (computeABADerivatives) | "
        f"{t['pin aba derivatives'] / t['C dqdd']:.1f}x |",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=100_000, help="states per C batch call")
    parser.add_argument("--loop", type=int, default=20_000, help="states per Pinocchio Python loop")
    parser.add_argument("--robots", nargs="+", default=["puma560", "panda"])
    args = parser.parse_args()
    import pinocchio as pin

    print(f"# Derivatives: robodyn {rd.__version__} against Pinocchio {pin.__version__}")
    print(f"\n{platform.processor() or platform.machine()}, Python {platform.python_version()}, one thread.")
    for name in args.robots:
        print(run(name, args.states, args.loop))


if __name__ == "__main__":
    main()

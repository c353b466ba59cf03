"""Every floating robot of example-robot-data in compiled C against Pinocchio (issue 31's acceptance: "ID, M, FD,
derivatives, A_G against Pinocchio to 1e-9 at random states, numeric engine and compiled C"); prints markdown.

    python benchmarks/floating_compiled.py [--robots solo12.urdf ...] [--no-derivatives] [--opt -O1] [--states 2]

For each robot of tests/numeric/test_floating.py's list (those Pinocchio builds with a ``JointModelFreeFlyer``
root), in one process: ``rd.compile(robot, outputs=...)`` of tau, M, forward, com, com_jacobian, centroidal_map,
centroidal_bias (and dtau, dqdd unless ``--no-derivatives``), its C compiled with ``cc ... <opt>`` (the last -O
wins over robodyn's -O3: ``-O1`` by default, as the derivative programs of the humanoids take gcc minutes at -O3
and the sweep checks numbers, not speed), then at ``--states`` random states with random unit quaternions the
largest difference of each output relative to max(1, |Pinocchio's|): rnea (plus the URDF's joint damping and
Coulomb friction),
crba, aba, computeRNEADerivatives, computeABADerivatives, centerOfMass, jacobianCenterOfMass,
computeCentroidalMap, and computeCentroidalMapTimeVariation's dA_G times v. The build time (program, C and
compiler, on this machine) is printed with each robot. The numeric engine's sweep: benchmarks/floating_numeric.py
--sweep. A robot whose M is singular (romeo's massless fingers: robodyn refuses the solve in one line), or whose dqdd
program the size cap refuses (romeo too), is built and compared without the forward dynamics and its derivatives. The
forward dynamics' derivatives are also compared M-weighted (M times the difference, relative to |M| max(1,
|Pinocchio's|), max norms: the solve's normwise backward error); where cond(M) > 1e7 that one judges them, as no
double-precision solve (Pinocchio's included) can give the plain ones to 1e-9 there.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

import robodyn as rd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.floating_numeric import load, pinocchio_q, states  # noqa: E402 - the repository root is on the path
from benchmarks.urdf_survey import robots_directory  # noqa: E402

OUTPUTS = ["tau", "M", "forward", "com", "com_jacobian", "centroidal_map", "centroidal_bias"]
DERIVATIVES = ["dtau", "dqdd"]
TOLERANCE = 1e-9
#: What needs M^-1: left out where M is singular (a massless link without armature: romeo's fingers).
SOLVES = ("forward", "dqdd")
#: The plain differences of the forward dynamics' derivatives: judged by their M-weighted twins where cond(M) > 1e7.
PLAIN_SOLVES = ("dqdd/dq", "dqdd/dv", "dqdd/dtau")


def short(name: str) -> str:
    """anymal_b_simple_description/robots/anymal.urdf -> anymal_b_simple/anymal (two anymals, two alexes...)."""
    first = name.split("/")[0].removesuffix("_description")
    return f"{first}/{Path(name).stem}"


def quick_compiler(opt: str, directory: Path) -> list[str]:
    """A compiler command whose last -O is ``opt`` (a wrapper script: rd.compile puts its own flags first)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        sys.exit("no C compiler")
    wrapper = directory / f"cc{opt}"
    wrapper.write_text(f'#!/bin/sh\nexec {cc} "$@" {opt}\n')
    os.chmod(wrapper, 0o755)
    return [str(wrapper)]


def relative(x: Any, reference: Any) -> float:
    x, reference = np.asarray(x, dtype=float), np.asarray(reference, dtype=float)
    return float(np.abs(x - reference).max() / max(1.0, float(np.abs(reference).max())))


def compare(dyn: Any, robot: rd.Manipulator, model: Any, count: int, derivatives: bool) -> dict[str, float]:
    """The largest relative difference of each output at ``count`` random states."""
    import pinocchio as pin

    data = model.createData()
    damping = np.concatenate([np.zeros(6), model.damping[6:]])
    friction = np.concatenate([np.zeros(6), model.friction[6:]])  # (constant away from v = 0: in no derivative)
    worst: dict[str, float] = {}

    def note(key: str, x: Any, reference: Any) -> None:
        worst[key] = max(worst.get(key, 0.0), relative(x, reference))

    rng = np.random.default_rng(len(robot.name))
    for q, v, a in zip(*states(robot, rng, count), strict=True):
        qp = pinocchio_q(model, q)
        tau = pin.rnea(model, data, qp, v, a)
        passive = damping * v + friction * np.sign(v)
        note("tau", dyn.inverse_dynamics(q, v, a), tau + passive)
        M = pin.crba(model, data, qp)
        M = np.triu(M) + np.triu(M, 1).T
        note("M", dyn.mass_matrix(q), M)
        worst["cond(M)"] = max(worst.get("cond(M)", 0.0), float(np.linalg.cond(M)))
        regular = "forward_dynamics" in dyn.routines and np.linalg.eigvalsh(M).min() > 1e-12 * np.abs(M).max()
        if regular:
            note("forward (M-weighted)", M @ (dyn.forward_dynamics(q, v, tau + passive) - a) /
                 max(1.0, float(np.abs(tau).max())), np.zeros_like(a))
        note("com", dyn.center_of_mass(q), pin.centerOfMass(model, data, qp))
        note("com_jacobian", dyn.center_of_mass_jacobian(q), pin.jacobianCenterOfMass(model, data, qp))
        note("centroidal_map", dyn.centroidal_map(q), pin.computeCentroidalMap(model, model.createData(), qp))
        dA = pin.computeCentroidalMapTimeVariation(model, model.createData(), qp, v)  # (a fresh Data: see the note)
        note("centroidal_bias", dyn.centroidal_bias(q, v), dA @ v)
        if not derivatives or "inverse_dynamics_derivatives" not in dyn.routines:
            continue
        fresh = model.createData()
        dq, dv, _ = pin.computeRNEADerivatives(model, fresh, qp, v, a)
        ours = dyn.inverse_dynamics_derivatives(q, v, a)
        note("dtau/dq", ours[0], dq)
        note("dtau/dv", ours[1], dv + np.diag(damping))
        if regular:
            fresh = model.createData()
            pin.computeABADerivatives(model, fresh, qp, v, tau)
            ours = dyn.forward_dynamics_derivatives(q, v, tau + passive)
            M_inv = np.triu(fresh.Minv) + np.triu(fresh.Minv, 1).T
            references = (fresh.ddq_dq, fresh.ddq_dv - M_inv @ np.diag(damping), M_inv)  # (robodyn's: damping in)
            for key, x, reference in zip(("dqdd/dq", "dqdd/dv", "dqdd/dtau"), ours, references, strict=True):
                note(key, x, reference)
                # the same difference as M times it, relative to |M| |reference| (max norms): the solve's normwise
                # backward error, which stays at rounding where cond(M) is large (icub: 1.6e10), where the plain one
                # cannot
                scale = float(np.abs(M).max() * max(1.0, float(np.abs(reference).max())))
                note(f"{key} (M-weighted)", M @ (x - reference) / scale, np.zeros_like(x))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", help="paths under example-robot-data's robots directory (default all)")
    parser.add_argument("--no-derivatives", action="store_true", help="leave out dtau and dqdd")
    parser.add_argument("--opt", default="-O1", help="the optimisation flag the C is compiled with (default -O1)")
    parser.add_argument("--states", type=int, default=2)
    parser.add_argument("--cache", help="rd.compile's cache directory (default: a temporary one)")
    args = parser.parse_args()
    robots = robots_directory()
    if robots is None:
        sys.exit("example-robot-data is not installed")
    from tests.numeric.test_floating import FLOATING

    derivatives = not args.no_derivatives
    outputs = OUTPUTS + (DERIVATIVES if derivatives else [])
    with tempfile.TemporaryDirectory() as scratch:
        compiler = quick_compiler(args.opt, Path(scratch))
        cache = args.cache or str(Path(scratch) / "cache")
        print(f"Compiled C ({args.opt}) against Pinocchio, {args.states} random states each; outputs: "
              f"{', '.join(outputs)}; differences relative to max(1, |Pinocchio's|), tolerance {TOLERANCE:g}.\n")
        print("| robot | nq | nv | build s | cond(M) | largest difference | where | within |\n"
              "|---|---:|---:|---:|---:|---:|---|---|")
        overall: dict[str, tuple[float, str]] = {}
        for name in args.robots or FLOATING:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                robot, model = load(robots / name)
            start = time.perf_counter()
            try:
                try:
                    dyn = rd.compile(robot, outputs=outputs, compiler=compiler, cache=cache)
                except ValueError as exc:  # M singular (romeo's massless fingers), or dqdd past the size cap (romeo
                    # again): the rest without the solves
                    if "identically zero" not in str(exc) and "dqdd programs are built up to" not in str(exc):
                        raise
                    dyn = rd.compile(robot, outputs=[o for o in outputs if o not in SOLVES], compiler=compiler,
                                     cache=cache)
            except Exception as exc:  # (reported and the sweep goes on)
                print(f"| {short(name)} | {robot.nq} | {robot.nv} | - | - | not built: "
                      f"{str(exc).splitlines()[0][:90]} | | no |", flush=True)
                continue
            seconds = time.perf_counter() - start
            worst = compare(dyn, robot, model, args.states, derivatives)
            condition = worst.pop("cond(M)", 1.0)
            judged = {k: v for k, v in worst.items()  # (the plain dqdd differences where M is ill-conditioned: the
                      if not (condition > 1e7 and k in PLAIN_SOLVES)}  # M-weighted ones judge the solve there)
            key = max(judged, key=judged.__getitem__)
            for k, value in worst.items():
                if value >= overall.get(k, (-1.0, ""))[0]:
                    overall[k] = (value, short(name))
            print(f"| {short(name)} | {robot.nq} | {robot.nv} | {seconds:.0f} | {condition:.1e} | {judged[key]:.1e} | "
                  f"{key} | {'yes' if judged[key] <= TOLERANCE else 'NO'} |", flush=True)
        print("\n| output | largest relative difference | robot |\n|---|---:|---|")
        for k, (value, robot_name) in overall.items():
            print(f"| {k} | {value:.1e} | {robot_name} |")


if __name__ == "__main__":
    main()

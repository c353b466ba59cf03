"""Floating-base robots (issue 31's benchmark): operation counts beside Pinocchio on CasADi SX, the compiled C's batch
speed per state and its one-call time from Python, against Pinocchio's Python calls in the same run (prints markdown).

    python benchmarks/floating.py [--robots solo12 talos_reduced] [--states 10000 100000] [--number 20000]
                                  [--no-counts] [--no-derivatives] [--peer-python /tmp/pinsx/bin/python]

Robots: example-robot-data's URDFs (``benchmarks.urdf_survey.robots_directory()``) read with ``floating=True`` (a free
joint at the root: q of nq = n + 7, base position then unit quaternion (x, y, z, w); v, a, tau of nv = n + 6).

1. Operation counts (the counting rules of ``benchmarks/pinocchio_sx.py``): robodyn's cheapest programs
   (``robodyn.program.build``) of tau (ID), M, forward (FD) and, where robodyn builds them for a floating base, the
   derivative groups dtau (dtau/dq, dtau/dv) and dqdd (dqdd/dq, dqdd/dv, M^-1); beside Pinocchio 2.6 on CasADi SX
   (casadi_kin_dyn with a ``FREE_FLYER`` root, run in the interpreter of ``--peer-python`` as pinocchio_sx.py does):
   ``rnea``, ``crba``, ``aba``, and CasADi's jacobians of rnea (in q and v) and aba (in q, v, tau), the q-direction
   taken in the tangent (``jacobian(f(integrate(q, dq)), dq)`` at dq = 0, Pinocchio's convention), counted as traced
   and after ``casadi.cse``, the smaller kept.
2. Batch: robodyn's compiled C (``rd.compile``) on N random states (``out=`` given, no allocation), time per state,
   against Pinocchio 4's Python calls on one state (``rnea``, ``aba``, ``crba`` beside M and M_packed, M's upper
   triangle, which is what crba fills; ``computeRNEADerivatives``,
   ``computeABADerivatives`` beside dtau / dqdd) in the same process: the issue's goal is a ratio of at least 10.
3. One call: ``dyn.inverse_dynamics(q, v, a)``, ``dyn.forward_dynamics(q, v, tau)``, ``dyn.mass_matrix(q)`` on one
   state (through ``robodyn._fastcall`` where it was built) against ``pinocchio.rnea`` / ``aba`` / ``crba``: the
   issue's goal is a ratio of at most 0.35.

Times: the best of 5 rounds (:mod:`timeit`). The first batch result is checked against Pinocchio (tau with the
joints' damping b v and Coulomb friction f sign(v) added, as robodyn's tau has them) and the largest difference
printed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import timeit
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PEER_PYTHON = "/tmp/pinsx/bin/python"
URDFS = {"solo12": "solo_description/robots/solo12.urdf", "talos_reduced": "talos_data/robots/talos_reduced.urdf"}


# -- the peer's side (Pinocchio 2.6 on CasADi SX; imports no robodyn) ---------------------------------------------
def peer(paths: list[str], derivatives: bool) -> None:
    """Counts of Pinocchio<SX>'s rnea, crba, aba (and their jacobians in the tangent) with a free-flyer root, as
    JSON lines."""
    import casadi as cs
    from casadi_kin_dyn import casadi_kin_dyn as ckd

    sys.path.insert(0, str(ROOT))
    from benchmarks.pinocchio_sx import count_both

    for path in paths:
        kindyn = ckd.CasadiKinDyn(Path(path).read_text(), ckd.CasadiKinDyn.JointType.FREE_FLYER)
        nq, nv = kindyn.nq(), kindyn.nv()
        row: dict[str, Any] = {"path": path, "nq": nq, "nv": nv}
        rnea, aba = kindyn.rnea(), kindyn.aba()
        row["rnea"], row["crba"], row["aba"] = count_both(rnea), count_both(kindyn.crba()), count_both(aba)
        if derivatives:
            q, dq = cs.SX.sym("q", nq), cs.SX.sym("dq", nv)
            v, a = cs.SX.sym("v", nv), cs.SX.sym("a", nv)
            moved = kindyn.integrate()(q, dq)  # q (+) dq: the tangent direction
            zero = cs.DM.zeros(nv)
            d_rnea, d_aba = (cs.substitute(cs.jacobian(f(moved, v, a), dq), dq, zero) for f in (rnea, aba))
            tau, qdd = rnea(q, v, a), aba(q, v, a)  # (a: the torques for aba)
            row["drnea"] = count_both(cs.Function("drnea", [q, v, a], [d_rnea, cs.jacobian(tau, v)]))
            row["daba"] = count_both(cs.Function("daba", [q, v, a], [d_aba, cs.jacobian(qdd, v),
                                                                      cs.jacobian(qdd, a)]))
        print(json.dumps(row), flush=True)


def peer_counts(python: str, paths: list[Path], derivatives: bool) -> dict[str, dict[str, Any]]:
    """The peer's rows by URDF path (run under ``python``: benchmarks.pinocchio_sx.run_peer)."""
    from benchmarks.pinocchio_sx import run_peer

    rows = run_peer(python, __file__, paths, derivatives)
    return {row["path"]: row for row in rows}


# -- robodyn's side ---------------------------------------------------------------------------------------------
def per_call(fn: Callable[[], object], number: int) -> float:
    """Microseconds per call: the best of 5 rounds."""
    fn()
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def robodyn_counts(robot: Any, derivatives: bool) -> dict[str, Any]:
    """robodyn's cheapest program of each part (None where it is not built for a floating base)."""
    from robodyn.program import build
    from robodyn.program.outputs import DERIVATIVE_GROUPS

    groups: dict[str, tuple[str, ...]] = {"ID": ("tau",), "M": ("M",), "FD": ("forward",)}
    if derivatives:
        groups |= {"dID": DERIVATIVE_GROUPS["dtau"], "dFD": DERIVATIVE_GROUPS["dqdd"]}
    out: dict[str, Any] = {}
    for name, outputs in groups.items():
        try:
            c = build(robot, outputs).count()["evaluation"]
        except Exception as exc:  # (reported in the table, the run goes on)
            out[name] = f"not built: {str(exc).splitlines()[0][:60]}"
            continue
        out[name] = {"multiplications": c.multiplications, "additions": c.additions}
    return out


def best(row: dict[str, Any]) -> dict[str, int]:
    """The peer's smaller count (after cse where there is one)."""
    return min(row.values(), key=lambda c: (c["multiplications"] + c["additions"], c["multiplications"]))


def count_lines(name: str, ours: dict[str, Any], theirs: dict[str, Any] | None) -> list[str]:
    peers = {"ID": "rnea", "M": "crba", "FD": "aba", "dID": "drnea", "dFD": "daba"}
    lines = [f"#### {name}: operations per evaluation (multiplications + additions)", "",
             "| part | robodyn | Pinocchio 2.6 on SX (smaller of traced, cse) | robodyn / Pinocchio (mul, add) |",
             "|---|---|---|---|"]
    for part, peer_name in peers.items():
        mine = ours.get(part)
        if mine is None:
            continue
        other = best(theirs[peer_name]) if theirs is not None and peer_name in theirs else None
        shown = mine if isinstance(mine, str) else f"{mine['multiplications']} M + {mine['additions']} A"
        peer_shown = "-" if other is None else f"{other['multiplications']} M + {other['additions']} A"
        ratio = "-" if other is None or isinstance(mine, str) else (
            f"{mine['multiplications'] / other['multiplications']:.2f}, {mine['additions'] / other['additions']:.2f}")
        lines.append(f"| {part} | {shown} | {peer_shown} | {ratio} |")
    return lines


class Robot:
    """robodyn's robot and Pinocchio 4's model of one URDF, and random states."""

    def __init__(self, name: str, path: Path) -> None:
        import pinocchio as pin

        import robodyn as rd

        self.name, self.path = name, path
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.robot = rd.load(str(path), floating=True, mimic="independent")
        self.model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        self.data = self.model.createData()

    def states(self, N: int, seed: int = 0) -> tuple[Any, Any, Any]:
        import numpy as np

        from robodyn.model import joints

        rng = np.random.default_rng(seed)
        q = np.stack([np.concatenate([joints.random_configuration(rng), rng.uniform(-1, 1, self.robot.n)])
                      for _ in range(N)])
        return q, rng.uniform(-1, 1, (N, self.robot.nv)), rng.uniform(-1, 1, (N, self.robot.nv))

    def pinocchio_q(self, q: Any) -> Any:
        """robodyn's q as Pinocchio's (a continuous joint: cos, sin)."""
        import numpy as np

        parts = [q[:7]]
        for k, joint in enumerate(self.model.joints[2:]):
            angle = q[7 + k]
            parts.append(np.array([np.cos(angle), np.sin(angle)]) if joint.nq == 2 else np.array([angle]))
        return np.concatenate(parts)


def timings(case: Robot, sizes: list[int], number: int, derivatives: bool) -> list[str]:
    import numpy as np
    import pinocchio as pin

    import robodyn as rd

    outputs = ["tau", "M", "M_packed", "forward"] + (["dtau", "dqdd"] if derivatives else [])
    try:
        dyn = rd.compile(case.robot, outputs=outputs)
    except Exception as exc:  # (without the derivatives, where they are not built yet)
        print(f"({case.name}: {outputs[4:]} not compiled: {str(exc).splitlines()[0][:80]})", file=sys.stderr)
        outputs, derivatives = outputs[:4], False
        dyn = rd.compile(case.robot, outputs=outputs)
    model, data = case.model, case.data
    q1, v1, a1 = (x[0] for x in case.states(1, seed=1))
    pq = case.pinocchio_q(q1)
    damping = np.concatenate([np.zeros(6), model.damping[6:] * v1[6:] + model.friction[6:] * np.sign(v1[6:])])
    error = max(float(np.abs(dyn.inverse_dynamics(q1, v1, a1) - pin.rnea(model, data, pq, v1, a1) - damping).max()),
                float(np.abs(dyn.forward_dynamics(q1, v1, a1) - pin.aba(model, data, pq, v1, a1 - damping)).max()))
    pins = {"rnea": per_call(lambda: pin.rnea(model, data, pq, v1, a1), number),
            "aba": per_call(lambda: pin.aba(model, data, pq, v1, a1), number),
            "crba": per_call(lambda: pin.crba(model, data, pq), number)}
    if derivatives:
        pins["computeRNEADerivatives"] = per_call(lambda: pin.computeRNEADerivatives(model, data, pq, v1, a1),
                                                  max(1, number // 10))
        pins["computeABADerivatives"] = per_call(lambda: pin.computeABADerivatives(model, data, pq, v1, a1),
                                                 max(1, number // 10))
    fast = dyn._fast_call is not None  # (the extension's one-state path; ctypes otherwise)
    lines = [f"#### {case.name}: nq {dyn.nq}, nv {dyn.n}; one_call through robodyn._fastcall: "
             f"{'yes' if fast else 'no'}; robodyn vs Pinocchio at a random state: {error:.1e}", "",
             "Pinocchio 4 from Python, one call: " + ", ".join(f"{k} {us:.2f} us" for k, us in pins.items()), "",
             "| robodyn compiled C | N | us per state | Pinocchio's call | Pinocchio / robodyn |",
             "|---|---:|---:|---|---:|"]
    batch: list[tuple[str, str, str, Callable[..., Any], int]] = [
        ("inverse_dynamics", "ID", "rnea", dyn.inverse_dynamics, 3),
        ("forward_dynamics", "FD", "aba", dyn.forward_dynamics, 3),
        ("mass_matrix", "M", "crba", dyn.mass_matrix, 1),
        ("mass_matrix_packed", "M_packed", "crba", dyn.mass_matrix_packed, 1)]
    if derivatives:
        batch += [("inverse_dynamics_derivatives", "dID", "computeRNEADerivatives",
                   dyn.inverse_dynamics_derivatives, 3),
                  ("forward_dynamics_derivatives", "dFD", "computeABADerivatives",
                   dyn.forward_dynamics_derivatives, 3)]
    for N in sizes:
        q, v, a = case.states(N)
        for method, part, peer_name, fn, inputs in batch:
            args = (q, v, a)[:inputs]
            result = fn(*args)
            # into a preallocated out= (a loop over batches allocates nothing; the derivatives' tuple is views of
            # one ([N,] k, n, n) array, which out= takes)
            out = result if isinstance(result, np.ndarray) else np.empty((N, len(result), case.robot.nv,
                                                                           case.robot.nv))
            seconds = min(timeit.repeat(lambda f=fn, x=args, o=out: f(*x, out=o), number=1, repeat=5))
            us = seconds / N * 1e6
            lines.append(f"| {method} ({part}) | {N} | {us:.3f} | {peer_name} {pins[peer_name]:.2f} us | "
                         f"**{pins[peer_name] / us:.1f}x** |")
    lines += ["", "| one call from Python | us | Pinocchio's call | robodyn / Pinocchio (goal <= 0.35) |",
              "|---|---:|---|---:|"]
    for label, fn, peer_name in (("dyn.inverse_dynamics(q, v, a)", lambda: dyn.inverse_dynamics(q1, v1, a1), "rnea"),
                                 ("dyn.forward_dynamics(q, v, tau)", lambda: dyn.forward_dynamics(q1, v1, a1), "aba"),
                                 ("dyn.mass_matrix(q)", lambda: dyn.mass_matrix(q1), "crba")):
        us = per_call(fn, number)
        ratio = us / pins[peer_name]
        lines.append(f"| `{label}` | {us:.2f} | {peer_name} {pins[peer_name]:.2f} us | **{ratio:.2f}** |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", nargs="+", choices=sorted(URDFS), default=["solo12", "talos_reduced"])
    parser.add_argument("--states", type=int, nargs="+", default=[10_000, 100_000], help="batch sizes N")
    parser.add_argument("--number", type=int, default=20_000, help="one-state calls per timed round")
    parser.add_argument("--no-counts", action="store_true", help="leave out the operation counts")
    parser.add_argument("--no-derivatives", action="store_true", help="leave out dtau / dqdd and their peers")
    parser.add_argument("--peer-python", default=PEER_PYTHON, help="the interpreter with casadi_kin_dyn")
    parser.add_argument("--peer", nargs="+", help=argparse.SUPPRESS)  # the peer's side: count these URDFs
    parser.add_argument("--derivatives", action="store_true", help=argparse.SUPPRESS)  # (the peer's)
    args = parser.parse_args()
    if args.peer:
        peer(args.peer, args.derivatives)
        return
    sys.path.insert(0, str(ROOT))
    import pinocchio as pin
    from benchmarks.urdf_survey import robots_directory

    import robodyn as rd

    directory = robots_directory()
    if directory is None:
        raise SystemExit("example-robot-data is not installed (pip install example-robot-data)")
    derivatives = not args.no_derivatives
    print(f"### Floating bases: robodyn {rd.__version__}, Pinocchio {pin.__version__}, {platform.processor() or ''} "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}\n")
    cases = [Robot(name, Path(directory) / URDFS[name]) for name in args.robots]
    theirs: dict[str, dict[str, Any]] = {}
    if not args.no_counts:
        if Path(args.peer_python).exists():
            theirs = peer_counts(args.peer_python, [case.path for case in cases], derivatives)
        else:
            print(f"(no {args.peer_python}: Pinocchio's SX counts left out; see benchmarks/pinocchio_sx.py)\n")
    for case in cases:
        if not args.no_counts:
            print("\n".join(count_lines(case.name, robodyn_counts(case.robot, derivatives),
                                        theirs.get(str(case.path)))), end="\n\n", flush=True)
        print("\n".join(timings(case, args.states, args.number, derivatives)), end="\n\n", flush=True)


if __name__ == "__main__":
    main()

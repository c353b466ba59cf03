"""A floating robot in the numeric engine (NumPy) against Pinocchio's Python calls: time per call and the largest
differences (prints markdown).

    python benchmarks/floating_numeric.py [--robots solo12 talos_reduced] [--batch 256] [--seconds 0.3]
    python benchmarks/floating_numeric.py --sweep     # the largest differences on every floating robot

For each robot, in one process: the time of one call of robodyn.numeric's floating-base routines (one state; and
per state in a batch of ``--batch`` states) beside the Pinocchio call (or calls) that computes the same thing, from
Python, on the model Pinocchio reads from the same URDF with a ``JointModelFreeFlyer`` root; then the largest
difference of each quantity relative to max(1, |Pinocchio's|) at random states, and M's condition number (M^-1
and the forward dynamics' derivatives lose about cond(M) eps relative to M^-1's size, robodyn's and Pinocchio's
alike). Times are the median of rounds of ``--seconds`` each. ``--sweep`` runs the differences over every robot
of tests/numeric/test_floating.py's list.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import robodyn as rd
from robodyn import numeric
from robodyn.model import joints
from robodyn.numeric import floating

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.urdf_survey import robots_directory  # noqa: E402 - the repository root is on the path now

SHORT = {"solo12": "solo_description/robots/solo12.urdf", "talos_reduced": "talos_data/robots/talos_reduced.urdf",
         "anymal": "anymal_b_simple_description/robots/anymal.urdf", "go2": "go2_description/urdf/go2.urdf"}
#: A foot or hand of each robot, for the frame Jacobians (else the last link's name).
FRAMES = {"solo": "FL_FOOT", "talos": "left_sole_link", "anymal": "RH_FOOT", "go2": "FL_foot"}


def per_call(f: Callable[[], Any], seconds: float, rounds: int = 3) -> float:
    """The median over ``rounds`` of the mean time of f() over ``seconds``."""
    f()
    times = []
    for _ in range(rounds):
        k, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            f()
            k += 1
        times.append((time.perf_counter() - start) / k)
    return float(np.median(times))


def load(path: Path) -> tuple[rd.Manipulator, Any]:
    import pinocchio as pin

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = rd.load(str(path), floating=True, mimic="independent")
    return robot, pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())


def pinocchio_q(model: Any, q: np.ndarray) -> np.ndarray:
    parts = [q[:7]]
    for k, joint in enumerate(model.joints[2:]):
        parts.append(np.array([np.cos(q[7 + k]), np.sin(q[7 + k])]) if joint.nq == 2 else q[7 + k: 8 + k])
    return np.concatenate(parts)


def states(robot: rd.Manipulator, rng: np.random.Generator, N: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q = np.concatenate([joints.random_configuration(rng, N), rng.uniform(-1, 1, (N, robot.nq - 7))], 1)
    return q, rng.uniform(-1, 1, (N, robot.nv)), rng.uniform(-1, 1, (N, robot.nv))


def frame_of(robot: rd.Manipulator) -> str:
    key = next((k for k in FRAMES if robot.name.startswith(k)), None)
    return FRAMES[key] if key and FRAMES[key] in robot.frame_names else robot.frame_names[0]


def pairs(robot: rd.Manipulator, model: Any, frame: str) -> list[tuple[str, Callable[..., Any], Callable[..., Any]]]:
    """(name, robodyn's call (q, v, a), Pinocchio's call (q, v, a, data)), Pinocchio's q its own."""
    import pinocchio as pin

    fid = model.getFrameId(frame)
    world = pin.LOCAL_WORLD_ALIGNED

    def jacobian(qp: Any, v: Any, a: Any, d: Any) -> Any:
        pin.computeJointJacobians(model, d, qp)
        pin.updateFramePlacements(model, d)
        return pin.getFrameJacobian(model, d, fid, world)

    def jacobian_dot(qp: Any, v: Any, a: Any, d: Any) -> Any:
        pin.computeJointJacobiansTimeVariation(model, d, qp, v)
        pin.updateFramePlacements(model, d)
        return pin.getFrameJacobianTimeVariation(model, d, fid, world)

    return [
        ("rnea / inverse_dynamics", lambda q, v, a: numeric.inverse_dynamics(robot, q, v, a),
         lambda qp, v, a, d: pin.rnea(model, d, qp, v, a)),
        ("crba / mass_matrix", lambda q, v, a: numeric.mass_matrix(robot, q),
         lambda qp, v, a, d: pin.crba(model, d, qp)),
        ("aba / forward_dynamics (ABA)", lambda q, v, a: floating.forward_dynamics(robot, q, v, a, method="aba"),
         lambda qp, v, a, d: pin.aba(model, d, qp, v, a)),
        ("aba / forward_dynamics (Cholesky)",
         lambda q, v, a: floating.forward_dynamics(robot, q, v, a, method="cholesky"),
         lambda qp, v, a, d: pin.aba(model, d, qp, v, a)),
        ("computeRNEADerivatives", lambda q, v, a: numeric.inverse_dynamics_derivatives(robot, q, v, a),
         lambda qp, v, a, d: pin.computeRNEADerivatives(model, d, qp, v, a)),
        ("computeABADerivatives", lambda q, v, a: numeric.forward_dynamics_derivatives(robot, q, v, a),
         lambda qp, v, a, d: pin.computeABADerivatives(model, d, qp, v, a)),
        ("jacobianCenterOfMass", lambda q, v, a: numeric.center_of_mass_jacobian(robot, q),
         lambda qp, v, a, d: pin.jacobianCenterOfMass(model, d, qp)),
        (f"getFrameJacobian ({frame})", lambda q, v, a: numeric.frame_jacobian(robot, q, frame), jacobian),
        (f"getFrameJacobianTimeVariation ({frame})", lambda q, v, a: numeric.frame_jacobian_dot(robot, q, v, frame),
         jacobian_dot),
        ("computeCentroidalMapTimeVariation", lambda q, v, a: numeric.centroidal_map_dot(robot, q, v),
         lambda qp, v, a, d: pin.computeCentroidalMapTimeVariation(model, d, qp, v)),
    ]


def timings(name: str, path: Path, batch: int, seconds: float) -> None:
    robot, model = load(path)
    data = model.createData()
    q, v, a = states(robot, np.random.default_rng(0), batch)
    qp = pinocchio_q(model, q[0])
    print(f"\n### {name} (nq {robot.nq}, nv {robot.nv})\n")
    print(f"| quantity | Pinocchio one call | robodyn one state | ratio | robodyn per state, batch of {batch} |")
    print("|---|---:|---:|---:|---:|")
    for label, ours, theirs in pairs(robot, model, frame_of(robot)):
        t_pin = per_call(lambda: theirs(qp, v[0], a[0], data), seconds)  # noqa: B023 - called at once
        t_one = per_call(lambda: ours(q[0], v[0], a[0]), seconds)  # noqa: B023
        t_batch = per_call(lambda: ours(q, v, a), seconds) / batch  # noqa: B023
        print(f"| {label} | {t_pin * 1e6:.1f} us | {t_one * 1e6:.0f} us | {t_one / t_pin:.0f}x | "
              f"{t_batch * 1e6:.1f} us |")


def differences(path: Path, count: int = 2) -> dict[str, float]:
    """The largest difference per quantity, relative to max(1, |Pinocchio's|), at ``count`` random states."""
    import pinocchio as pin

    robot, model = load(path)
    data = model.createData()
    damping = np.diag(np.concatenate([np.zeros(6), model.damping[6:]]))
    friction = np.concatenate([np.zeros(6), model.friction[6:]])  # (constant away from v = 0: in no derivative)
    out: dict[str, float] = {}

    def note(key: str, x: Any, reference: Any) -> None:
        x, reference = np.asarray(x), np.asarray(reference)
        out[key] = max(out.get(key, 0.0), float(np.abs(x - reference).max() / max(1.0, np.abs(reference).max())))

    rng = np.random.default_rng(len(str(path)))
    frame = frame_of(robot)
    fid = model.getFrameId(frame)
    for q, v, a in zip(*states(robot, rng, count), strict=True):
        qp = pinocchio_q(model, q)
        dq, dv, da = pin.computeRNEADerivatives(model, data, qp, v, a)
        ours = numeric.inverse_dynamics_derivatives(robot, q, v, a)
        note("dtau/dq", ours[0], dq)
        note("dtau/dv", ours[1], dv + damping)
        note("dtau/da", ours[2], np.triu(da) + np.triu(da, 1).T)
        tau = pin.rnea(model, data, qp, v, a)
        passive = damping @ v + friction * np.sign(v)
        M = ours[2]
        if np.linalg.eigvalsh(M).min() > 1e-12 * np.abs(M).max():  # (romeo's massless fingers: M singular)
            out["cond(M)"] = max(out.get("cond(M)", 0.0), float(np.linalg.cond(M)))
            qdd_pin = pin.aba(model, data, qp, v, tau)
            for method in floating.FORWARD_METHODS:
                qdd = floating.forward_dynamics(robot, q, v, tau + passive, method=method)
                note(f"M (v' - aba's), {method}", M @ (qdd - qdd_pin) / max(1.0, np.abs(tau).max()), 0 * qdd)
            Aq, Av, Atau = pin.computeABADerivatives(model, data, qp, v, tau)
            fd = numeric.forward_dynamics_derivatives(robot, q, v, tau + passive)
            note("dv'/dq", fd[0], Aq)
            note("dv'/dv", fd[1], Av - Atau @ damping)
            note("dv'/dtau", fd[2], Atau)
        note("J_com", numeric.center_of_mass_jacobian(robot, q), pin.jacobianCenterOfMass(model, data, qp))
        pin.computeJointJacobiansTimeVariation(model, data, qp, v)
        pin.updateFramePlacements(model, data)
        for reference in ("local", "world", "local_world_aligned"):
            pin_reference = getattr(pin.ReferenceFrame, reference.upper())
            note(f"J {reference}", numeric.frame_jacobian(robot, q, frame, reference=reference),
                 pin.getFrameJacobian(model, data, fid, pin_reference))
            note(f"dJ/dt {reference}", numeric.frame_jacobian_dot(robot, q, v, frame, reference=reference),
                 pin.getFrameJacobianTimeVariation(model, data, fid, pin_reference))
        dA = pin.computeCentroidalMapTimeVariation(model, data, qp, v)
        note("dA_G/dt v", numeric.centroidal_map_dot(robot, q, v) @ v, dA @ v)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["solo12", "talos_reduced"])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--seconds", type=float, default=0.3)
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args()
    robots = robots_directory()
    if robots is None:
        sys.exit("example-robot-data is not installed")
    if args.sweep:
        from tests.numeric.test_floating import FLOATING

        worst: dict[str, tuple[float, str]] = {}
        for name in FLOATING:
            for key, value in differences(robots / name).items():
                if value >= worst.get(key, (-1.0, ""))[0]:
                    worst[key] = (value, Path(name).stem)
        print("| quantity | largest relative difference | robot |\n|---|---:|---|")
        for key, (value, robot) in worst.items():
            print(f"| {key} | {value:.1e} | {robot} |")
        return
    for name in args.robots:
        path = robots / SHORT.get(name, name)
        timings(name, path, args.batch, args.seconds)
        print("\n| quantity | largest relative difference |\n|---|---:|")
        for key, value in differences(path).items():
            print(f"| {key} | {value:.1e} |")


if __name__ == "__main__":
    main()

"""Every URDF shipped by example-robot-data through robodyn's reader, against Pinocchio's (prints a table).

    python benchmarks/urdf_survey.py [--samples 5] [--directory DIR]

For each URDF: loaded or refused (with the reason, the first words of robodyn's one-line ModelError), the number
of moving joints, chain or tree, and for a loaded one the largest relative difference between Pinocchio's
``rnea``, ``crba`` and ``aba`` (see :func:`compare`) on ``pinocchio.buildModelFromUrdf(path)`` (fixed base) and on
``robodyn.formats.pinocchio.to_pinocchio(rd.load(path))`` (the model robodyn built, whatever its frames) at random
states.
Joints are matched by name (Pinocchio's order may differ from robodyn's depth-first order); Pinocchio stores a
continuous joint's q as (cos q, sin q). Neither side applies damping. ``engine``: robodyn's own numeric engine
(:mod:`robodyn.numeric`: inverse dynamics less the damping, M, and forward dynamics weighted by M as for aba)
against the same Pinocchio model of the file. tests/test_urdf_trees.py runs the same survey and asserts its
counts and a bound on every difference.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

import robodyn as rd
from robodyn import numeric
from robodyn.formats.frames import distinct_names
from robodyn.formats.pinocchio import to_pinocchio

ROBOTS = Path("share") / "example-robot-data" / "robots"
PARTS = ("rnea", "crba", "aba", "engine", "qdd")
MODEL_PARTS = PARTS[:4]  # what the models disagree on; qdd adds the conditioning of M


def robots_directory() -> Path | None:
    """example-robot-data's ``robots`` directory: from its Python package if importable, else from the
    installed distribution's files, else beside Pinocchio's cmeel prefix; None if none is found."""
    try:
        import example_robot_data

        candidate = Path(example_robot_data.getModelPath("ur_description/urdf/ur5_robot.urdf"))
        if candidate.is_dir():
            return candidate
    except (ImportError, AttributeError, OSError, ValueError):
        pass
    try:
        dist = importlib.metadata.distribution("example-robot-data")
        for f in dist.files or []:
            parts = Path(str(f)).parts
            if "robots" in parts and str(f).endswith(".urdf"):
                located = Path(dist.locate_file(f))
                return located.parents[len(parts) - parts.index("robots") - 2]
    except importlib.metadata.PackageNotFoundError:
        pass
    try:
        import pinocchio
    except ImportError:
        return None
    for prefix in Path(pinocchio.__file__).resolve().parents:
        if (prefix / ROBOTS).is_dir():
            return prefix / ROBOTS
    return None


def urdf_files(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.urdf"))


@dataclass
class Outcome:
    """One URDF: loaded (``differences`` per part) or refused (``reason``, the error's text)."""

    path: Path
    n: int = 0
    tree: bool = False
    reason: str = ""
    differences: dict[str, float] = field(default_factory=dict)

    @property
    def loaded(self) -> bool:
        return not self.reason

    @property
    def worst(self) -> float:
        """The largest of the rnea, crba and aba differences."""
        return max((self.differences[p] for p in MODEL_PARTS), default=0.0)


def refusal_kind(message: str) -> str:
    """A short key for a refusal's reason, for grouping: ``mimic``, ``floating``, ``planar``, ... ."""
    for key in ("mimic", "floating", "planar", "inertia", "closed chain", "not one tree", "no moving joint",
                "no name"):
        if key in message:
            return key
    return "other"


def relative(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| / max |b| (or the absolute difference where b is 0)."""
    return size(a - b) / max(size(b), np.finfo(float).tiny)


def size(x: np.ndarray) -> float:
    return float(np.abs(x).max())


def symmetric(M: np.ndarray) -> np.ndarray:
    """The whole of a mass matrix of which crba filled the upper triangle."""
    return np.triu(M) + np.triu(M, 1).T


def matched_joints(robot: rd.Manipulator, model: Any) -> list[int]:
    """For each robodyn link, the id of Pinocchio's joint of the same URDF joint (names mapped as read_urdf
    maps them, in robodyn's order)."""
    names = list(model.names)[1:]
    identifiers = dict(zip(distinct_names(names, ("base",)), range(1, len(names) + 1), strict=True))
    ids = [identifiers.get(link.name, -1) for link in robot.links]
    if -1 in ids or len(set(ids)) != len(ids) or len(ids) != model.njoints - 1:
        raise AssertionError(f"robodyn's joints {[link.name for link in robot.links]} are not Pinocchio's {names}")
    return ids


def numeric_engine(robot: rd.Manipulator) -> SimpleNamespace:
    """robodyn.numeric's inverse dynamics, M and forward dynamics of ``robot``, called as rd.compile's are."""
    return SimpleNamespace(inverse_dynamics=partial(numeric.inverse_dynamics, robot),
                           mass_matrix=partial(numeric.mass_matrix, robot),
                           forward_dynamics=partial(numeric.forward_dynamics, robot))


def engine_difference(robot: rd.Manipulator, engine: Any, state: tuple[np.ndarray, ...], tau: np.ndarray,
                      M: np.ndarray) -> float:
    """An engine of robodyn (:func:`numeric_engine`, or ``rd.compile(robot)``) against Pinocchio's tau (without
    damping) and M of the same state, in robodyn's joint order: the largest relative difference of the inverse
    dynamics (its damping taken off), of M, and of the forward dynamics of tau (plus the damping) weighted by M."""
    q, qd, qdd = state
    damping = np.array([float(link.damping) for link in robot.links]) * qd
    engine_tau = engine.inverse_dynamics(q, qd, qdd) - damping
    out = max(relative(engine_tau, tau), relative(engine.mass_matrix(q), M))
    if np.linalg.eigvalsh(M)[0] <= 1e-12 * size(M):  # a massless branch (a mimic finger read as independent):
        return out  # no forward dynamics
    engine_qdd = engine.forward_dynamics(q, qd, tau + damping)
    return max(out, size(M @ (engine_qdd - qdd)) / max(size(tau), np.finfo(float).tiny))


def compare(robot: rd.Manipulator, path: Path, samples: int, seed: int = 0, compiled: bool = False) -> dict[str, float]:
    """Largest relative differences between Pinocchio's model of ``path`` and ``to_pinocchio(robot)`` at
    ``samples`` random states (q, qd, qdd uniform in [-1, 1]): ``rnea`` (tau), ``crba`` (M, from the upper
    triangles), ``aba``: the difference of the accelerations for the same tau weighted by the mass matrix,
    M (qdd - qdd_pin), relative to tau (the backward error: what the models disagree on, in torque), and ``qdd``:
    the raw relative difference of the accelerations, the same up to cond(M) (which tiny finger links make large)."""
    import pinocchio as pin

    reference = pin.buildModelFromUrdf(str(path))
    ours = to_pinocchio(robot)
    data_ref, data_ours = reference.createData(), ours.createData()
    ids = matched_joints(robot, reference)
    joints = [reference.joints[j] for j in ids]
    v_index = np.array([joint.idx_v for joint in joints])
    rng = np.random.default_rng(seed)
    worst = dict.fromkeys(PARTS, 0.0)
    engines = {"engine": numeric_engine(robot)}
    if compiled:
        worst["compiled"] = 0.0
        engines["compiled"] = rd.compile(robot)
    for _ in range(samples):
        q, qd, qdd = rng.uniform(-1, 1, (3, robot.n))
        q_ref = pin.neutral(reference)
        for joint, value in zip(joints, q, strict=True):
            q_ref[joint.idx_q:joint.idx_q + joint.nq] = [np.cos(value), np.sin(value)] if joint.nq == 2 else value
        v_ref, a_ref = np.zeros(reference.nv), np.zeros(reference.nv)
        v_ref[v_index], a_ref[v_index] = qd, qdd
        tau = pin.rnea(ours, data_ours, q, qd, qdd).copy()  # Pinocchio returns views of data, which aba reuses
        tau_file = pin.rnea(reference, data_ref, q_ref, v_ref, a_ref)[v_index].copy()
        worst["rnea"] = max(worst["rnea"], relative(tau, tau_file))
        M, M_ref = symmetric(pin.crba(ours, data_ours, q)), symmetric(pin.crba(reference, data_ref, q_ref))
        worst["crba"] = max(worst["crba"], relative(M, M_ref[np.ix_(v_index, v_index)]))
        tau_ref = np.zeros(reference.nv)
        tau_ref[v_index] = tau
        qdd_ref = pin.aba(reference, data_ref, q_ref, v_ref, tau_ref)[v_index]
        qdd_ours = pin.aba(ours, data_ours, q, qd, tau)
        weighted = M_ref[np.ix_(v_index, v_index)] @ (qdd_ours - qdd_ref)
        worst["aba"] = max(worst["aba"], size(weighted) / max(size(tau), np.finfo(float).tiny))
        worst["qdd"] = max(worst["qdd"], relative(qdd_ours, qdd_ref))
        M_file = M_ref[np.ix_(v_index, v_index)]
        for key, engine in engines.items():
            worst[key] = max(worst[key], engine_difference(robot, engine, (q, qd, qdd), tau_file, M_file))
    return worst


def survey_one(path: Path, samples: int, mimic: str = "refuse", compiled: bool = False) -> Outcome:
    outcome = Outcome(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rd.ModelWarning)
            robot = rd.load(path, mimic=mimic)
    except rd.ModelError as exc:
        outcome.reason = str(exc)
        return outcome
    outcome.n, outcome.tree = robot.n, robot.is_tree
    outcome.differences = compare(robot, path, samples, compiled=compiled)
    return outcome


def survey(directory: Path, samples: int, mimic: str = "refuse", compiled: bool = False) -> list[Outcome]:
    return [survey_one(path, samples, mimic, compiled) for path in urdf_files(directory)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--samples", type=int, default=5, help="random states per robot")
    parser.add_argument("--directory", type=Path, default=None, help="a robots directory (default: found)")
    parser.add_argument("--compiled", action="store_true",
                        help="also rd.compile each robot (the generated C) and compare it (minutes)")
    parser.add_argument("--mimic", choices=("refuse", "independent"), default="refuse",
                        help="mimic joints: refused, or read as independent joints (as Pinocchio's reader does)")
    args = parser.parse_args()
    directory = args.directory or robots_directory()
    if directory is None:
        raise SystemExit("example-robot-data's robots directory was not found; give --directory")
    start = time.perf_counter()
    outcomes = survey(directory, args.samples, args.mimic, args.compiled)
    parts = (*PARTS, "compiled") if args.compiled else PARTS
    print(f"| URDF | result | joints | shape | {' | '.join(parts)} |")
    print(f"|---|---|---:|---|{'---:|' * len(parts)}")
    for o in outcomes:
        name = str(o.path.relative_to(directory))
        if o.loaded:
            diffs = " | ".join(f"{o.differences[p]:.1e}" for p in parts)
            print(f"| {name} | loaded | {o.n} | {'tree' if o.tree else 'chain'} | {diffs} |")
        else:
            reason = o.reason.replace(str(o.path) + ": ", "").replace("|", "/")
            print(f"| {name} | refused: {reason} | | | {' | '.join('' for _ in parts)} |")
    loaded = [o for o in outcomes if o.loaded]
    kinds = Counter(refusal_kind(o.reason) for o in outcomes if not o.loaded)
    print(f"\n{len(outcomes)} URDFs: {len(loaded)} load ({sum(o.tree for o in loaded)} trees), "
          f"{len(outcomes) - len(loaded)} refused ({', '.join(f'{k}: {v}' for k, v in sorted(kinds.items()))})")
    if loaded:
        worst = max(loaded, key=lambda o: o.worst)
        worst_qdd = max(loaded, key=lambda o: o.differences["qdd"])
        print(f"worst relative difference (rnea, crba, aba, engine) {worst.worst:.1e} "
              f"({worst.path.relative_to(directory)}), of qdd {worst_qdd.differences['qdd']:.1e} "
              f"({worst_qdd.path.relative_to(directory)}); {args.samples} states per robot, "
              f"{time.perf_counter() - start:.1f} s")
        if args.compiled:
            print(f"worst of the compiled C: {max(o.differences['compiled'] for o in loaded):.1e}")


if __name__ == "__main__":
    main()

"""Every URDF shipped by example-robot-data (and, with ``--pybullet``, some of PyBullet's) through robodyn's reader,
against Pinocchio's (prints a table).

    python benchmarks/urdf_survey.py [--samples 5] [--directory DIR] [--no-compiled] [--pybullet]

For each URDF: loaded with the default options (mimic joints coupled) or refused (with the reason, robodyn's
one-line ModelError), the number of moving joints and of independent coordinates (``nv``), chain or tree, and for a
loaded one the largest relative differences at random states (q, qd, qdd uniform in [-1, 1], ``nv`` each) between
robodyn and Pinocchio's model of the same file, ``pinocchio.buildModelFromUrdf(path, mimic=True)`` where the file
has mimic joints (see :class:`Reference`):

- ``id``: the inverse dynamics tau; ``M``: the mass matrix (independent coordinates: G^T M G); ``fd``: the forward
  dynamics of Pinocchio's tau, which must give back the qdd Pinocchio's tau was computed from, weighted by M:
  max |M (qdd - qdd_pin)| / max |tau| (the backward error, in torque; ``qdd`` is the raw relative difference of the
  accelerations, the same up to cond(M), which tiny finger links make large), of robodyn's numeric engine
  (:mod:`robodyn.numeric`);
- ``C id``, ``C M``, ``C fd``: the same of the compiled C (``rd.compile(robot)``, the tau, M and forward routines,
  default cache: a second run is quick); robots beyond what rd.compile derives (its link limit) or with more
  than ``--compiled-max-links`` joints are noted and skipped;
- ``writer``: ``to_pinocchio(robot)`` (the Pinocchio model robodyn writes, whatever its frames) against Pinocchio's
  model of the file (rnea, crba and aba, the last weighted by M), for robots without couplings.

Joints are matched by name (``robot.joint_names``, the URDF's own names); the order of robodyn's links and of
Pinocchio's joints should agree too (both depth-first, siblings by name): a row says ``order differs`` where they
do not. Pinocchio stores a continuous joint's q as (cos q, sin q). Pinocchio's rnea applies no damping nor
friction: the URDF's ``<dynamics damping friction>`` (as Pinocchio reads them, ``model.damping`` and
``model.friction``) are added on Pinocchio's side, b qd + f sign(qd) for each joint, for a mimic joint
s^2 b qd_leader + |s| f sign(qd_leader) on its leader (its scaling s). Where Pinocchio refuses ``mimic=True`` (romeo and
talos_full_v2: a joint mimics one that comes after it in Pinocchio's tree) its model of independent joints is
projected with robodyn's coupling map G (tau = G^T tau_tree, M = G^T M_tree G; q_tree = G q + c), and the row says
so. tests/formats/test_urdf_trees.py runs the same survey and asserts its counts and a bound on every difference.
"""

from __future__ import annotations

import argparse
import glob
import importlib.metadata
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

import robodyn as rd
from robodyn import numeric
from robodyn.formats.pinocchio import to_pinocchio
from robodyn.runtime.entry import CompileError

ROBOTS = Path("share") / "example-robot-data" / "robots"
ENGINE_PARTS = ("id", "M", "fd")
COMPILED_PARTS = ("C id", "C M", "C fd")
MODEL_PARTS = (*ENGINE_PARTS, *COMPILED_PARTS, "writer")  # what the models disagree on; qdd adds cond(M)
PARTS = (*MODEL_PARTS, "qdd")
TOLERANCE = 1e-9
#: PyBullet's URDFs the survey reads (``--pybullet``): relative to pybullet_data's directory, globs allowed.
PYBULLET = ("franka_panda/panda.urdf", "xarm/xarm6_with_gripper.urdf", "**/minitaur*.urdf", "**/diff_ring*.urdf")


def robots_directory() -> Path | None:
    """example-robot-data's ``robots`` directory: from its Python package if importable, else from the
    installed distribution's files, else beside Pinocchio's cmeel prefix; None if none is found."""
    try:
        import example_robot_data  # type: ignore[import-not-found, unused-ignore]

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
                located = Path(str(dist.locate_file(f)))
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


def pybullet_files() -> tuple[Path, list[Path]]:
    """pybullet_data's directory and the files of :data:`PYBULLET` in it (ImportError without pybullet)."""
    import pybullet_data  # type: ignore[import-untyped, import-not-found, unused-ignore]

    directory = Path(pybullet_data.getDataPath())
    found: list[Path] = []
    for pattern in PYBULLET:
        for name in sorted(glob.glob(str(directory / pattern), recursive=True)):
            if Path(name) not in found:
                found.append(Path(name))
    return directory, found


@dataclass
class Outcome:
    """One URDF: loaded (``differences`` per part) or refused (``reason``, the error's text); ``notes``: how it
    was compared where that is not the plain way (Pinocchio's mimic model, the compiled C)."""

    path: Path
    n: int = 0
    nv: int = 0
    tree: bool = False
    reason: str = ""
    order: bool = True
    notes: list[str] = field(default_factory=list)
    differences: dict[str, float] = field(default_factory=dict)

    @property
    def loaded(self) -> bool:
        return not self.reason

    @property
    def worst(self) -> float:
        """The largest difference of ID, M and FD, numeric and compiled, and of the written model."""
        return max((self.differences[p] for p in MODEL_PARTS if p in self.differences), default=0.0)

    @property
    def compiled(self) -> bool:
        return COMPILED_PARTS[0] in self.differences


def refusal_kind(message: str) -> str:
    """A short key for a refusal's reason, for grouping: ``mimic``, ``floating``, ``inertia``, ... ."""
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


def numeric_engine(robot: rd.Manipulator) -> SimpleNamespace:
    """robodyn.numeric's inverse dynamics, M and forward dynamics of ``robot``, called as rd.compile's are."""
    return SimpleNamespace(inverse_dynamics=partial(numeric.inverse_dynamics, robot),
                           mass_matrix=partial(numeric.mass_matrix, robot),
                           forward_dynamics=partial(numeric.forward_dynamics, robot))


class Reference:
    """Pinocchio's model of a URDF in robodyn's independent coordinates: ``buildModelFromUrdf(path, mimic=True)``
    where ``robot`` has couplings (or, where Pinocchio refuses that, its model of independent joints projected with
    robodyn's G: ``projected``), joints matched by name; ``state(q, qd, qdd)`` gives tau (the URDF damping and
    friction added), M and whether M is positive definite (no forward dynamics of a massless branch)."""

    def __init__(self, robot: rd.Manipulator, path: Path) -> None:
        import pinocchio as pin

        self.pin = pin
        self.projected, self.note = False, ""
        try:
            self.model = pin.buildModelFromUrdf(str(path), mimic=bool(robot.couplings))
        except (RuntimeError, ValueError) as exc:  # romeo, talos_full_v2: a joint mimics one after it
            self.model, self.projected = pin.buildModelFromUrdf(str(path)), True
            self.note = (f"Pinocchio refuses mimic=True ({str(exc).strip().splitlines()[0][:70]}): its model of "
                         "independent joints, projected with robodyn's G")
        model, names = self.model, list(robot.joint_names)
        self.order = list(model.names)[1:] == names
        ids = [model.getJointId(name) for name in names]
        if any(j >= model.njoints for j in ids):  # getJointId answers njoints for a name it does not know
            raise AssertionError(f"robodyn's joints {names} are not Pinocchio's {list(model.names)[1:]}")
        keep = range(robot.n) if self.projected else robot.independent
        self.joints = [model.joints[ids[k]] for k in keep]
        self.v = np.array([joint.idx_v for joint in self.joints], dtype=int)
        if sorted(self.v) != list(range(model.nv)) or any(joint.nv != 1 for joint in self.joints):
            raise AssertionError(f"Pinocchio's coordinates of {path.name} are not robodyn's {names}")
        G, c = robot.coupling_map()
        self.G, self.c = np.array(G, dtype=float), np.array(c, dtype=float).ravel()
        self.damping = self._joint_side(robot, path, names, "damping")
        self.friction = self._joint_side(robot, path, names, "friction")

    def _joint_side(self, robot: rd.Manipulator, path: Path, names: list[str], field: str) -> np.ndarray:
        """The damping or Coulomb friction (n,) of Pinocchio's model (``model.damping``, ``model.friction``), per
        coordinate; a mimic joint's on its leader's, s^2 b for damping and |s| f for friction (its scaling s)."""
        model = self.model
        if self.projected or not robot.couplings:
            return np.array(getattr(model, field))
        plain = self.pin.buildModelFromUrdf(str(path))  # mimic=True keeps neither of the mimic joints
        out = np.zeros(model.nv)
        for name in names:
            joint = model.joints[model.getJointId(name)]
            value = getattr(plain, field)[plain.joints[plain.getJointId(name)].idx_v]
            s = joint.extract().scaling if joint.shortname() == "JointModelMimic" else 1.0
            out[joint.idx_v] += (s * s if field == "damping" else abs(s)) * value
        return out

    def state(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        pin, model = self.pin, self.model
        data = model.createData()
        if self.projected:
            q, qd, qdd = self.G @ q + self.c, self.G @ qd, self.G @ qdd
        q_ref = pin.neutral(model)
        for joint, value in zip(self.joints, q, strict=True):
            q_ref[joint.idx_q:joint.idx_q + joint.nq] = [np.cos(value), np.sin(value)] if joint.nq == 2 else value
        v, a = np.zeros(model.nv), np.zeros(model.nv)
        v[self.v], a[self.v] = qd, qdd
        tau = (pin.rnea(model, data, q_ref, v, a) + self.damping * v + self.friction * np.sign(v))[self.v]
        M = symmetric(pin.crba(model, data, q_ref))[np.ix_(self.v, self.v)]
        if self.projected:
            tau, M = self.G.T @ tau, self.G.T @ M @ self.G
        return tau, M, bool(np.linalg.eigvalsh(M)[0] > 1e-12 * size(M))


def engine_differences(engine: Any, state: tuple[np.ndarray, ...], tau: np.ndarray, M: np.ndarray,
                       definite: bool) -> dict[str, float]:
    """An engine of robodyn (:func:`numeric_engine`, or ``rd.compile(robot)``) against Pinocchio's tau and M of
    the same state: relative differences of ID, M and FD (weighted by M; none where M is singular), and qdd's."""
    q, qd, qdd = state
    out = {"id": relative(engine.inverse_dynamics(q, qd, qdd), tau), "M": relative(engine.mass_matrix(q), M),
           "fd": 0.0, "qdd": 0.0}
    if definite:
        engine_qdd = engine.forward_dynamics(q, qd, tau)
        out["fd"] = size(M @ (engine_qdd - qdd)) / max(size(tau), np.finfo(float).tiny)
        out["qdd"] = relative(engine_qdd, qdd)
    return out


def writer_difference(robot: rd.Manipulator, reference: Reference, state: tuple[np.ndarray, ...]) -> float:
    """``to_pinocchio(robot)`` against Pinocchio's model of the file (rnea, crba, aba weighted by M), no damping."""
    pin, model = reference.pin, reference.model
    ours = to_pinocchio(robot)
    q, qd, qdd = state
    data, data_ours = model.createData(), ours.createData()
    q_ref = pin.neutral(model)
    for joint, value in zip(reference.joints, q, strict=True):
        q_ref[joint.idx_q:joint.idx_q + joint.nq] = [np.cos(value), np.sin(value)] if joint.nq == 2 else value
    v, a = np.zeros(model.nv), np.zeros(model.nv)
    v[reference.v], a[reference.v] = qd, qdd
    tau = pin.rnea(ours, data_ours, q, qd, qdd).copy()  # Pinocchio returns views of data, which aba reuses
    worst = relative(tau, pin.rnea(model, data, q_ref, v, a)[reference.v])
    M = symmetric(pin.crba(model, data, q_ref))[np.ix_(reference.v, reference.v)]
    worst = max(worst, relative(symmetric(pin.crba(ours, data_ours, q)), M))
    if np.linalg.eigvalsh(M)[0] > 1e-12 * size(M):
        tau_ref = np.zeros(model.nv)
        tau_ref[reference.v] = tau
        qdd_ref = pin.aba(model, data, q_ref, v, tau_ref)[reference.v]
        weighted = M @ (pin.aba(ours, data_ours, q, qd, tau) - qdd_ref)
        worst = max(worst, size(weighted) / max(size(tau), np.finfo(float).tiny))
    return worst


def build_compiled(robot: rd.Manipulator, max_links: int) -> tuple[Any, str]:
    """``rd.compile(robot)`` (tau, M and forward; default cache) and "", or None and why it was skipped."""
    if robot.n > max_links:
        return None, f"compiled C skipped: {robot.n} joints > --compiled-max-links {max_links}"
    try:
        return rd.compile(robot, outputs=("tau", "M", "forward")), ""
    except (rd.ModelError, CompileError, ValueError) as exc:  # ValueError: forward undefined (a massless link)
        return None, f"compiled C skipped: {str(exc).splitlines()[0][:90]}"


def compare(robot: rd.Manipulator, path: Path, samples: int, seed: int = 0, compiled: bool = False,
            max_links: int = 1000, outcome: Outcome | None = None) -> dict[str, float]:
    """Largest relative differences (see the module docstring) between robodyn's ``robot`` read from ``path``
    and Pinocchio's model of ``path`` at ``samples`` random states; ``outcome`` (if given) takes the notes and
    whether the joint orders agree."""
    reference = Reference(robot, path)
    engines: dict[str, Any] = {"": numeric_engine(robot)}
    notes = [reference.note] if reference.note else []
    if compiled:
        engine, note = build_compiled(robot, max_links)
        if engine is not None:
            engines["C "] = engine
        else:
            notes.append(note)
    rng = np.random.default_rng(seed)
    worst: dict[str, float] = {}

    def keep(key: str, value: float) -> None:
        worst[key] = max(worst.get(key, 0.0), value)

    for _ in range(samples):
        q, qd, qdd = rng.uniform(-1, 1, (3, robot.nv))
        state = (q, qd, qdd)
        tau, M, definite = reference.state(q, qd, qdd)
        for prefix, engine in engines.items():
            for key, value in engine_differences(engine, state, tau, M, definite).items():
                if prefix and key == "qdd":
                    continue
                keep(prefix + key, value)
        if not robot.couplings:
            keep("writer", writer_difference(robot, reference, state))
    if outcome is not None:
        outcome.order, outcome.notes = reference.order, notes
    return worst


def survey_one(path: Path, samples: int, mimic: str = "couple", compiled: bool = False,
               max_links: int = 1000) -> Outcome:
    outcome = Outcome(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rd.ModelWarning)
            robot = rd.load(path, mimic=mimic)
    except rd.ModelError as exc:
        outcome.reason = str(exc)
        return outcome
    outcome.n, outcome.nv, outcome.tree = robot.n, robot.nv, robot.is_tree
    outcome.differences = compare(robot, path, samples, compiled=compiled, max_links=max_links, outcome=outcome)
    return outcome


def survey(directory: Path | list[Path], samples: int, mimic: str = "couple", compiled: bool = False,
           max_links: int = 1000, progress: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """:func:`survey_one` of every URDF under ``directory`` (or of the files given)."""
    out = []
    for path in urdf_files(directory) if isinstance(directory, Path) else directory:
        out.append(survey_one(path, samples, mimic, compiled, max_links))
        if progress is not None:
            progress(out[-1])
    return out


def print_table(outcomes: list[Outcome], directory: Path, samples: int, seconds: float) -> None:
    """The table, the worst difference and the counts of a survey."""
    print(f"\n| URDF | result | joints (nv) | shape | {' | '.join(PARTS)} | notes |")
    print(f"|---|---|---:|---|{'---:|' * len(PARTS)}---|")
    for o in outcomes:
        name = str(o.path.relative_to(directory))
        if o.loaded:
            diffs = " | ".join(f"{o.differences[p]:.1e}" if p in o.differences else "" for p in PARTS)
            notes = "; ".join([*([] if o.order else ["order differs"]), *o.notes]).replace("|", "/")
            print(f"| {name} | loaded | {o.n} ({o.nv}) | {'tree' if o.tree else 'chain'} | {diffs} | {notes} |")
        else:
            reason = o.reason.replace(str(o.path) + ": ", "").replace("|", "/")
            print(f"| {name} | refused: {reason} | | | {' | '.join('' for _ in PARTS)} | |")
    loaded = [o for o in outcomes if o.loaded]
    kinds = Counter(refusal_kind(o.reason) for o in outcomes if not o.loaded)
    agree = [o for o in loaded if o.worst < TOLERANCE]
    print(f"\n{len(outcomes)} URDFs: {len(loaded)} load ({sum(o.tree for o in loaded)} trees, "
          f"{sum(o.nv < o.n for o in loaded)} with coupled joints), {len(outcomes) - len(loaded)} refused"
          f"{' (' + ', '.join(f'{k}: {v}' for k, v in sorted(kinds.items())) + ')' if kinds else ''}; "
          f"{len(agree)} of {len(loaded)} agree with Pinocchio to {TOLERANCE:.0e} "
          f"(compiled C checked on {sum(o.compiled for o in loaded)}); joint orders differ on "
          f"{sum(not o.order for o in loaded)}")
    for o in loaded:
        if o.worst >= TOLERANCE:
            print(f"  beyond {TOLERANCE:.0e}: {o.path.relative_to(directory)} {o.worst:.1e}")
    if loaded:
        for label, parts in (("numeric", ENGINE_PARTS), ("compiled", COMPILED_PARTS), ("writer", ("writer",))):
            values = [(max(o.differences.get(p, 0.0) for p in parts), o) for o in loaded
                      if any(p in o.differences for p in parts)]
            if values:
                value, o = max(values, key=lambda item: item[0])
                print(f"worst relative difference, {label}: {value:.1e} ({o.path.relative_to(directory)})")
        worst_qdd = max(loaded, key=lambda o: o.differences.get("qdd", 0.0))
        print(f"worst raw qdd: {worst_qdd.differences.get('qdd', 0.0):.1e} ({worst_qdd.path.relative_to(directory)});"
              f" {samples} states per robot, {seconds:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--samples", type=int, default=5, help="random states per robot")
    parser.add_argument("--directory", type=Path, default=None, help="a robots directory (default: found)")
    parser.add_argument("--compiled", action=argparse.BooleanOptionalAction, default=True,
                        help="also rd.compile each robot (the generated C, default cache) and compare it")
    parser.add_argument("--compiled-max-links", type=int, default=1000,
                        help="skip the compiled check of robots with more joints than this")
    parser.add_argument("--mimic", choices=("couple", "independent", "refuse"), default="couple",
                        help="mimic joints: coupled coordinates (the default), independent joints, or refused")
    parser.add_argument("--pybullet", action="store_true",
                        help="survey PyBullet's Panda, xArm, minitaur family and diff_ring instead")
    parser.add_argument("--verbose", action="store_true", help="one line per robot as it is done")
    args = parser.parse_args()
    if args.pybullet:
        try:
            directory, files = pybullet_files()
        except ImportError:
            raise SystemExit("--pybullet needs pybullet (pip install pybullet)") from None
        targets: Path | list[Path] = files
    else:
        found = args.directory or robots_directory()
        if found is None:
            raise SystemExit("example-robot-data's robots directory was not found; give --directory")
        directory = targets = found

    def progress(o: Outcome) -> None:
        if args.verbose:
            result = o.reason or f"{o.worst:.1e} {'; '.join(o.notes)}"
            print(f"{o.path.relative_to(directory)}: {result} ({time.perf_counter() - start:.0f} s)", flush=True)

    start = time.perf_counter()
    outcomes = survey(targets, args.samples, args.mimic, args.compiled, args.compiled_max_links, progress)
    print_table(outcomes, directory, args.samples, time.perf_counter() - start)


if __name__ == "__main__":
    main()

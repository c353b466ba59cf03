"""Joint-space trajectories: samples of q(t), qd(t), qdd(t), the one home of trajectory code in robodyn.

A :class:`Trajectory` holds t of shape (N,) and q, qd, qdd of shape (N, n). Sources:

- :func:`angeles_family`: Angeles, Ma and Rojas' smooth ramp (their section 7.1),
  theta_i(t) = theta_i(0) + A_i (t - sin(Bt)/B), with the analytic derivatives
  qd_i = A_i (1 - cos Bt) and qdd_i = A_i B sin Bt (zero velocity and acceleration at t = 0).
- :func:`angeles1`: their example 1 (the Stanford arm, t in [0, 10] s, B = 2 pi/10, theta_2(0) = pi/2,
  A = pi/30 for joints 1, 4, 5, 6, -pi/60 for joint 2 and b_3 = A_3 (t - sin(Bt)/B) with A_3 = 0.01 m).
  The paper writes the prismatic coordinate as b_3; robodyn converts Angeles' notation to modified DH
  with d_i = -b_i (:func:`robodyn.formats.model_file.angeles_to_modified`), so on the built-in ``stanford_arm``
  the joint coordinate is q_3 = -b_3(t), and likewise qd_3 = -bd_3, qdd_3 = -bdd_3. :func:`angeles1`
  applies that mapping to every prismatic joint (``prismatic_sign=-1``). ``stanford_example1`` is an
  alias of the name ``angeles1`` that every command and function uses (kept for scripts that name it). A robot
  with implicit loops (the built-in ``fivebar``) starts at its reference assembly instead, where its loops close,
  with the amplitudes halved until they close at every sample.
- :func:`angeles2`: their example 2 (the industrial arm's straight Cartesian line over 1 s), built by the
  numeric inverse kinematics of :mod:`robodyn.analysis.ik` (see :func:`robodyn.analysis.ik.angeles2` for the start and
  end).
- :func:`quintic`: point-to-point quintic polynomial, zero velocity and acceleration at both ends.
- :func:`trajectory_from_csv`: tabulated samples, columns t, q1..qn and optionally qd1..qdn,
  qdd1..qddn (a header row is optional; missing derivatives come from second-order finite differences,
  ``numpy.gradient`` with ``edge_order=2``). :meth:`Trajectory.to_csv` writes the same format.

Built-in names are in :data:`TRAJECTORIES`; :func:`load_trajectory` accepts a name, a CSV path or a
:class:`Trajectory`. Problems raise :class:`TrajectoryError` (a :class:`~robodyn.errors.ModelError`), one
line naming the file and column.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from robodyn.analysis.ik import angeles2 as _angeles2
from robodyn.analysis.samples import MAX_SAMPLES as MAX_SAMPLES  # re-exported: the type lives below robodyn.analysis.ik
from robodyn.analysis.samples import Trajectory as Trajectory
from robodyn.analysis.samples import TrajectoryError as TrajectoryError
from robodyn.analysis.samples import check_samples as check_samples
from robodyn.errors import ModelError
from robodyn.model.files import path_exists, read_text_limited
from robodyn.model.manipulator import Manipulator
from robodyn.numeric import closed_chains

#: Angeles, Ma and Rojas' example 1 (their sec. 7.1): B = 2 pi / 10 rad/s, t in [0, 10] s.
ANGELES1_B = 2 * math.pi / 10
ANGELES1_DURATION = 10.0


#: A trajectory CSV file larger than this is refused before it is read.
MAX_TRAJECTORY_BYTES = 50_000_000


# -- analytic families ----------------------------------------------------------------------------


def angeles_family(
    q0: Sequence[float] | np.ndarray,
    A: Sequence[float] | np.ndarray,
    B: float = ANGELES1_B,
    duration: float = ANGELES1_DURATION,
    samples: int = 101,
    name: str = "angeles",
) -> Trajectory:
    """q_i(t) = q0_i + A_i (t - sin(Bt)/B) on ``samples`` equally spaced t in [0, duration] (Angeles et al. sec. 7.1).

    Derivatives are analytic: qd_i = A_i (1 - cos Bt), qdd_i = A_i B sin Bt.
    """
    if B <= 0 or duration <= 0:
        raise TrajectoryError(f"B and duration must be positive, got B={B}, duration={duration}")
    q0 = np.asarray(q0, dtype=float)
    A = np.asarray(A, dtype=float)
    if q0.shape != A.shape or q0.ndim != 1:
        raise TrajectoryError(f"q0 and A must be 1-d of the same length, got {q0.shape} and {A.shape}")
    t = np.linspace(0.0, duration, samples)
    Bt = B * t
    q = q0 + A * (t - np.sin(Bt) / B)[:, None]
    qd = A * (1.0 - np.cos(Bt))[:, None]
    qdd = A * (B * np.sin(Bt))[:, None]
    return Trajectory(t, q, qd, qdd, name=name)


def angeles1(
    robot: Manipulator | str, samples: int = 101, duration: float = ANGELES1_DURATION, prismatic_sign: float = -1.0
) -> Trajectory:
    """Angeles, Ma and Rojas' example 1 (their sec. 7.1) in robodyn's joint coordinates.

    In the paper's notation: theta_i = theta_i(0) + A_i (t - sin(Bt)/B) for the revolute joints and
    b_i = A_i (t - sin(Bt)/B) for the prismatic ones, B = 2 pi/10, t in [0, 10] s, theta_2(0) = pi/2,
    theta_i(0) = 0 otherwise, A_i = pi/30 except A_2 = -pi/60, and A_3 = 0.01 m for the boom.
    A prismatic joint's robodyn coordinate is ``prismatic_sign * b_i``: -b_i (default) for an arm given
    in Angeles' notation such as the built-in ``stanford_arm`` (converted with d_i = -b_i), +1 for an arm
    whose d_i is the paper's b_i. Any arm is accepted (``robot`` may also be a joint-type string "RRPRRR"):
    joint 2, if revolute, gets the paper's theta_2 values, the others theirs by joint type.
    """
    # a coupled robot's trajectory is in its independent coordinates: their joints' types
    types = robot if isinstance(robot, str) else "".join(robot.joint_types[j] for j in robot.independent)
    n = len(types)
    q0 = np.zeros(n)
    A = np.array([math.pi / 30 if kind == "R" else prismatic_sign * 0.01 for kind in types])
    if not isinstance(robot, str) and robot.implicit:
        return _closing(robot, A, duration, samples)
    if n >= 2 and types[1] == "R":
        q0[1], A[1] = math.pi / 2, -math.pi / 60
    return angeles_family(q0, A, ANGELES1_B, duration, samples, name="angeles1")


#: The smallest fraction of :func:`angeles1`'s amplitudes tried on a robot with implicit loops.
SMALLEST_SCALE = 1 / 64


def _closing(robot: Manipulator, A: np.ndarray, duration: float, samples: int) -> Trajectory:
    """:func:`angeles1` for a robot with implicit loops: from its reference assembly (q = 0, where the model file
    closes its loops), the amplitudes A halved until the loops close at every sample (Newton's method from the
    reference, as the numeric calls solve them), down to :data:`SMALLEST_SCALE` of A; a robot whose parameters are
    still symbols is not tried (its loops' geometry is unknown): the reference and A."""
    scale = 1.0
    while True:
        trajectory = angeles_family(np.zeros(len(A)), scale * A, ANGELES1_B, duration, samples, name="angeles1")
        try:
            closed_chains.positions(robot, trajectory.q)
        except ModelError as exc:
            if exc.unbound:
                return trajectory
            if scale <= SMALLEST_SCALE:
                raise TrajectoryError(f"{robot.name}: angeles1 leaves the workspace of its loops even at "
                                      f"{SMALLEST_SCALE:g} of its amplitudes ({exc.problem})",
                                      field="trajectory") from None
            scale /= 2
            continue
        return trajectory


#: Old name of :func:`angeles1`, used by :mod:`robodyn.analysis.simplified`.
stanford_example1 = angeles1


def quintic(
    q_start: Sequence[float] | np.ndarray,
    q_end: Sequence[float] | np.ndarray,
    duration: float,
    samples: int = 101,
    name: str = "quintic",
) -> Trajectory:
    """Point-to-point quintic: q = q_start + (q_end - q_start)(10 s^3 - 15 s^4 + 6 s^5), s = t / duration,
    with zero velocity and acceleration at both ends (rest to rest)."""
    q_start = np.asarray(q_start, dtype=float)
    q_end = np.asarray(q_end, dtype=float)
    if q_start.shape != q_end.shape or q_start.ndim != 1:
        raise TrajectoryError(f"q_start and q_end must be 1-d of the same length, got {q_start.shape}, {q_end.shape}")
    if duration <= 0:
        raise TrajectoryError(f"duration must be positive, got {duration}")
    t = np.linspace(0.0, duration, samples)
    s = (t / duration)[:, None]
    delta = q_end - q_start
    q = q_start + delta * (10 * s**3 - 15 * s**4 + 6 * s**5)
    qd = delta * (30 * s**2 - 60 * s**3 + 30 * s**4) / duration
    qdd = delta * (60 * s - 180 * s**2 + 120 * s**3) / duration**2
    return Trajectory(t, q, qd, qdd, name=name)


def angeles2(robot: Manipulator, samples: int = 101) -> Trajectory:
    """Angeles, Ma and Rojas' example 2 (their sec. 7.2): a straight Cartesian line by numeric inverse
    kinematics; see :func:`robodyn.analysis.ik.angeles2`."""
    return _angeles2(robot, samples)


#: Built-in trajectories by name: functions of (robot, samples).
TRAJECTORIES: dict[str, Callable[[Manipulator, int], Trajectory]] = {
    "angeles1": angeles1,
    "stanford_example1": stanford_example1,
    "angeles2": angeles2,
}


# -- tabulated samples ----------------------------------------------------------------------------


def _shown_error(exc: Exception) -> str:
    return " ".join(str(exc).split())[:120]


def _read_rows(path: Path) -> tuple[list[str] | None, np.ndarray]:
    try:
        text = read_text_limited(path, MAX_TRAJECTORY_BYTES, str(path))  # no FIFO, no device, bounded
    except ModelError as exc:
        raise TrajectoryError(exc.problem, file=exc.file) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[list[str]] = []
    try:  # counted while reading: one header row and at most MAX_SAMPLES samples
        for r in reader:
            if r and any(c.strip() for c in r):
                rows.append(r)
                if len(rows) > MAX_SAMPLES + 1:
                    break
    except csv.Error as exc:  # e.g. a field longer than csv.field_size_limit()
        raise TrajectoryError(f"not a readable CSV table (line {reader.line_num}: {_shown_error(exc)})",
                              file=str(path)) from None
    if not rows:
        raise TrajectoryError("the file is empty", file=str(path))
    header = None
    try:
        float(rows[0][0])
    except ValueError:
        header, rows = [c.strip() for c in rows[0]], rows[1:]
    if len(rows) > MAX_SAMPLES:
        raise TrajectoryError(f"more than {MAX_SAMPLES} rows of samples", file=str(path))
    if not rows:
        raise TrajectoryError("no data rows after the header", file=str(path))
    if header is not None:
        seen: set[str] = set()
        for name in header:
            if name.lower() in seen:
                raise TrajectoryError("column given twice in the header", file=str(path), field=name[:40])
            seen.add(name.lower())
    if len({len(r) for r in rows} | ({len(header)} if header else set())) != 1:
        raise TrajectoryError("rows have different numbers of columns", file=str(path))
    try:
        data = np.array([[float(c) for c in r] for r in rows], dtype=float)
    except ValueError as exc:
        raise TrajectoryError(f"not a number: {_shown_error(exc)}", file=str(path)) from None
    return header, data


def _columns(header: list[str] | None, data: np.ndarray, n: int, path: Path) -> dict[str, np.ndarray]:
    """t, q and (when present) qd, qdd, by header names if there is a header, else by position."""
    groups = {p: [f"{p}{i}" for i in range(1, n + 1)] for p in ("q", "qd", "qdd")}
    if header is None:
        count = data.shape[1]
        if count not in (1 + n, 1 + 2 * n, 1 + 3 * n):
            raise TrajectoryError(
                f"expected 1 + {n}, 1 + {2 * n} or 1 + {3 * n} columns, got {count}", file=str(path)
            )
        out = {"t": data[:, 0]}
        for k, key in enumerate(("q", "qd", "qdd")[: (count - 1) // n]):
            out[key] = data[:, 1 + k * n : 1 + (k + 1) * n]
        return out
    index = {name.lower(): k for k, name in enumerate(header)}
    if "t" not in index:
        raise TrajectoryError("no column 't'", file=str(path), field="t")
    out = {"t": data[:, index["t"]]}
    for key, names in groups.items():
        present = [name in index for name in names]
        if all(present):
            out[key] = data[:, [index[name] for name in names]]
        elif any(present) or key == "q":
            missing = next(name for name, p in zip(names, present, strict=True) if not p)
            raise TrajectoryError(f"no column '{missing}'", file=str(path), field=missing)
    return out


def trajectory_from_csv(path: str | Path, n: int) -> Trajectory:
    """Read t, q1..qn[, qd1..qdn[, qdd1..qddn]] from a CSV file; differentiate what is missing."""
    path = Path(path)
    header, data = _read_rows(path)
    cols = _columns(header, data, n, path)
    t = cols["t"]
    if t.size < 3 or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise TrajectoryError("t must be strictly increasing, with at least 3 samples", file=str(path), field="t")
    for key, values in cols.items():
        if not np.all(np.isfinite(values)):
            raise TrajectoryError("contains a value that is not finite", file=str(path), field=key)
    qd = cols.get("qd")
    qd = np.gradient(cols["q"], t, axis=0, edge_order=2) if qd is None else qd
    qdd = cols.get("qdd")
    qdd = np.gradient(qd, t, axis=0, edge_order=2) if qdd is None else qdd
    return Trajectory(t, cols["q"], qd, qdd, name=path.stem)


def load_trajectory(spec: str | Path | Trajectory, robot: Manipulator, samples: int = 101) -> Trajectory:
    """A :class:`Trajectory`, a built-in name from :data:`TRAJECTORIES` or a CSV path, checked against ``robot``
    (one coordinate per joint on a fixed base: a floating base or a spherical or planar joint is refused in one
    line)."""
    robot.check_one_dof("the joint trajectories (one coordinate per joint)")
    if robot.floating:
        raise TrajectoryError(f"{robot.name}: floating base: the joint trajectories are a fixed base's (q of "
                              f"{robot.nq} entries is not a joint vector; rd.simulate integrates a floating robot)",
                              field="trajectory")
    if isinstance(spec, Trajectory):
        trajectory = spec
    elif str(spec) in TRAJECTORIES:
        trajectory = TRAJECTORIES[str(spec)](robot, check_samples(samples, 3))
    elif path_exists(spec):  # not only regular files: a FIFO or a directory gets a one-line refusal
        trajectory = trajectory_from_csv(spec, robot.nv)
    else:
        raise TrajectoryError(
            f"{str(spec)!r} is neither a file nor a built-in trajectory ({', '.join(TRAJECTORIES)})",
            field="trajectory",
        )
    if trajectory.n != robot.nv:  # the independent coordinates of a coupled robot (robot.n without couplings)
        what = f"{robot.nv} independent coordinates" if robot.couplings else f"{robot.n}"
        raise TrajectoryError(f"the trajectory has {trajectory.n} joints, the robot {what}", field="trajectory")
    return trajectory

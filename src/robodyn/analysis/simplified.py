"""Fu et al.'s empirical simplified dynamic model (section 3.4.1, figures 3.10 and 3.11).

The generalized d'Alembert equations (:mod:`robodyn.formulations.dalembert`, eq. 3.4-24 to 3.4-28)
split every inertia element D_ij and every velocity term h_i into a rotational and a translational
part. Along a given trajectory each part is evaluated at every set point; an element is

- ``translational`` when its rotational part is negligible,
- ``rotational`` when its translational part is negligible,
- ``both`` when neither is, and ``zero`` when both vanish along the trajectory,

where a part is *negligible* when its largest magnitude along the trajectory is below
``threshold`` (default 10%) times the largest magnitude of the other part. The simplified model
keeps only the dominant parts (gravity, armature, damping, springs and tip load are kept whole):

    tau_simplified_i = sum_j D~_ij qdd_j + h~_i + c_i (+ armature, damping, load)

and its worst torque error along the trajectory is reported, absolute and relative to the peak
torque of the joint. As Fu stresses, the simplification holds for that trajectory only.

Units on the plots assume SI model data: D_ij in kg m^k (k = number of revolute joints among
i and j), h_i in N m for a revolute joint i and N for a prismatic one.

Trajectories come from :mod:`robodyn.analysis.trajectories`: a built-in name (:data:`TRAJECTORIES`, e.g.
``angeles1`` alias ``stanford_example1``, Angeles, Ma and Rojas' example 1: theta_i = theta_i(0) +
A_i (t - sin(Bt)/B), Angeles et al. sec. 7.1, usable on any arm) or a CSV file with columns t, q1..qn and
optionally qd1..qdn and qdd1..qddn (a header row is optional; missing derivatives are obtained by
second-order finite differences).
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import symengine as se

from robodyn.algebra import to_se
from robodyn.analysis.plots import plain_suptitle
from robodyn.analysis.trajectories import TRAJECTORIES as TRAJECTORIES  # re-exported: trajectories used to live here
from robodyn.analysis.trajectories import Trajectory as Trajectory
from robodyn.analysis.trajectories import TrajectoryError as TrajectoryError
from robodyn.analysis.trajectories import load_trajectory as load_trajectory
from robodyn.analysis.trajectories import stanford_example1 as stanford_example1
from robodyn.analysis.trajectories import trajectory_from_csv as trajectory_from_csv
from robodyn.formulations import dalembert
from robodyn.model.couplings import refuse_coupled
from robodyn.model.files import atomic_path, write_all
from robodyn.model.manipulator import Manipulator
from robodyn.model.params import bind_parameters, bound_robot
from robodyn.symbols import joint_symbols

CLASSES = ("translational", "rotational", "both", "zero")
#: Parameter values used when the model leaves them symbolic and the caller gives none.
DEFAULT_PARAMETERS: dict[str, float] = {"g": 9.81}
#: Both parts below this fraction of the largest part of the model: the element is "zero".
ZERO_TOLERANCE = 1e-12


# -- evaluation along the trajectory --------------------------------------------------------------


def parameter_values(robot: Manipulator, params: Mapping[str, float] | None = None) -> dict[str, float]:
    """Values for the free parameters of ``robot``: ``params`` (checked: :mod:`robodyn.model.params`), with
    ``g`` defaulting to 9.81."""
    return bind_parameters(robot, params, DEFAULT_PARAMETERS)


@dataclass(frozen=True)
class Samples:
    """The d'Alembert parts at every set point: D_* of shape (N, n, n), h_*, c, load of shape (N, n)."""

    D_rot: np.ndarray
    D_tran: np.ndarray
    h_rot: np.ndarray
    h_tran: np.ndarray
    c: np.ndarray
    load: np.ndarray


def evaluate_split(robot: Manipulator, split: Mapping[str, se.DenseMatrix], trajectory: Trajectory) -> Samples:
    """Compile the split with symengine Lambdify (common subexpressions) and evaluate it along the
    trajectory, all set points at once."""
    n = robot.n
    q, qd, _ = joint_symbols(n).symengine()
    symbols = q + qd
    keys = ("D_rot", "D_tran", "h_rot", "h_tran", "c", "load")
    entries = [split[k][i, j] for k in keys for i in range(split[k].rows) for j in range(split[k].cols)]
    f = se.Lambdify(symbols, entries, cse=True, backend="lambda")
    points = np.hstack([trajectory.q, trajectory.qd])
    values = np.asarray(f(points), dtype=float).reshape(len(points), -1)
    out, start = {}, 0
    for k in keys:
        rows, cols = split[k].rows, split[k].cols
        out[k] = values[:, start: start + rows * cols].reshape(len(points), rows, cols)
        start += rows * cols
    return Samples(out["D_rot"], out["D_tran"], out["h_rot"][:, :, 0], out["h_tran"][:, :, 0],
                   out["c"][:, :, 0], out["load"][:, :, 0])


# -- classification -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Element:
    """One D_ij (i <= j) or h_i, 1-based indices, with its dominance class."""

    name: str  # "D12", "h3"
    index: tuple[int, ...]
    rot_max: float
    tran_max: float
    dominance: str  # one of CLASSES

    @property
    def keeps_rot(self) -> bool:
        return self.dominance in ("rotational", "both")

    @property
    def keeps_tran(self) -> bool:
        return self.dominance in ("translational", "both")


def classify(rot_max: float, tran_max: float, threshold: float, zero: float) -> str:
    """A part is negligible when its largest magnitude is below ``threshold`` times the other's
    (or below ``zero``: a part that vanishes along the trajectory is negligible at any threshold)."""
    if max(rot_max, tran_max) <= zero:
        return "zero"
    if rot_max <= zero or rot_max < threshold * tran_max:
        return "translational"
    if tran_max <= zero or tran_max < threshold * rot_max:
        return "rotational"
    return "both"


def classify_all(samples: Samples, threshold: float) -> list[Element]:
    n = samples.h_rot.shape[1]
    peaks = [np.max(np.abs(a), initial=0.0) for a in (samples.D_rot, samples.D_tran, samples.h_rot, samples.h_tran)]
    zero = ZERO_TOLERANCE * max(1.0, *peaks)
    out = []
    for i in range(n):
        for j in range(i, n):
            r, t = np.max(np.abs(samples.D_rot[:, i, j])), np.max(np.abs(samples.D_tran[:, i, j]))
            out.append(Element(f"D{i + 1}{j + 1}", (i + 1, j + 1), float(r), float(t), classify(r, t, threshold, zero)))
    for i in range(n):
        r, t = np.max(np.abs(samples.h_rot[:, i])), np.max(np.abs(samples.h_tran[:, i]))
        out.append(Element(f"h{i + 1}", (i + 1,), float(r), float(t), classify(r, t, threshold, zero)))
    return out


def masks(elements: Sequence[Element], n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """0/1 weights of D_rot, D_tran (n x n, symmetric) and h_rot, h_tran (n) in the simplified model."""
    D_rot, D_tran, h_rot, h_tran = np.zeros((n, n)), np.zeros((n, n)), np.zeros(n), np.zeros(n)
    for e in elements:
        if len(e.index) == 2:
            i, j = e.index[0] - 1, e.index[1] - 1
            D_rot[i, j] = D_rot[j, i] = float(e.keeps_rot)
            D_tran[i, j] = D_tran[j, i] = float(e.keeps_tran)
        else:
            h_rot[e.index[0] - 1], h_tran[e.index[0] - 1] = float(e.keeps_rot), float(e.keeps_tran)
    return D_rot, D_tran, h_rot, h_tran


def torques(robot: Manipulator, samples: Samples, trajectory: Trajectory,
            weights: tuple[np.ndarray, ...] | None = None) -> np.ndarray:
    """tau = (D_rot + D_tran + armature) qdd + h_rot + h_tran + c + b qd + k (q - q_ref) + load (eq. 3.4-24 and the
    joint terms), (N, n); ``weights`` (from :func:`masks`) keep only the dominant parts."""
    wDr, wDt, whr, wht = weights if weights is not None else (1.0, 1.0, 1.0, 1.0)
    armature, damping, stiffness, springref = (np.array([float(getattr(link, name)) for link in robot.links])
                                               for name in ("armature", "damping", "stiffness", "springref"))
    D = samples.D_rot * wDr + samples.D_tran * wDt
    tau = np.einsum("kij,kj->ki", D, trajectory.qdd) + armature * trajectory.qdd
    joint_terms = damping * trajectory.qd + stiffness * (trajectory.q - springref)
    return tau + samples.h_rot * whr + samples.h_tran * wht + samples.c + joint_terms + samples.load


# -- plots ----------------------------------------------------------------------------------------


def _units(robot: Manipulator, index: tuple[int, ...]) -> str:
    revolute = sum(robot.links[k - 1].revolute for k in index)
    if len(index) == 1:
        return "N m" if revolute else "N"
    return {0: "kg", 1: "kg m", 2: "kg m$^2$"}[revolute]


def _save_png(fig: object, path: Path) -> Path:
    """savefig atomically (:func:`robodyn.model.files.atomic_path`)."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100)  # type: ignore[attr-defined]
    return path


def _png_bytes(fig: object) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)  # type: ignore[attr-defined]
    return buffer.getvalue()


def _panel(ax: object, t: np.ndarray, rot: np.ndarray, tran: np.ndarray, element: Element, unit: str) -> None:
    ax.plot(t, tran, label="translational", color="tab:blue")  # type: ignore[attr-defined]
    ax.plot(t, rot, label="rotational", color="tab:red", linestyle="--")  # type: ignore[attr-defined]
    ax.plot(t, rot + tran, label="total", color="black", linewidth=0.8, alpha=0.6)  # type: ignore[attr-defined]
    ax.set_title(f"{element.name}: {element.dominance}", fontsize=9)  # type: ignore[attr-defined]
    ax.set_xlabel("time (s)", fontsize=8)  # type: ignore[attr-defined]
    ax.set_ylabel(f"{element.name} ({unit})", fontsize=8)  # type: ignore[attr-defined]
    ax.tick_params(labelsize=7)  # type: ignore[attr-defined]


def plot_inertia(robot: Manipulator, samples: Samples, trajectory: Trajectory, elements: Sequence[Element],
                 path: Path) -> Path:
    """Fu's figure 3.10 (:func:`inertia_figure`) written to ``path``."""
    return _save_png(inertia_figure(robot, samples, trajectory, elements), path)


def inertia_figure(robot: Manipulator, samples: Samples, trajectory: Trajectory, elements: Sequence[Element]) -> Any:
    """Fu's figure 3.10: D_ij^rot, D_ij^tran and their sum along the trajectory, panel (i, j) for i <= j."""
    from matplotlib.figure import Figure  # object-oriented: no pyplot, no global backend switch

    n = robot.n
    fig = Figure(figsize=(2.8 * n + 1, 2.2 * n + 1))
    axes = fig.subplots(n, n, squeeze=False)
    by_index = {e.index: e for e in elements}
    for i in range(n):
        for j in range(n):
            ax = axes[i][j]
            if j < i:
                ax.axis("off")
                continue
            e = by_index[(i + 1, j + 1)]
            _panel(ax, trajectory.t, samples.D_rot[:, i, j], samples.D_tran[:, i, j], e, _units(robot, e.index))
    axes[0][0].legend(fontsize=7)
    plain_suptitle(fig, f"{robot.name}: acceleration-related elements D_ij along {trajectory.name} (Fu fig. 3.10)")
    fig.tight_layout()
    return fig


def plot_velocity(robot: Manipulator, samples: Samples, trajectory: Trajectory, elements: Sequence[Element],
                  path: Path) -> Path:
    """Fu's figure 3.11 (:func:`velocity_figure`) written to ``path``."""
    return _save_png(velocity_figure(robot, samples, trajectory, elements), path)


def velocity_figure(robot: Manipulator, samples: Samples, trajectory: Trajectory, elements: Sequence[Element]) -> Any:
    """Fu's figure 3.11: h_i^rot, h_i^tran and their sum along the trajectory, one panel per joint."""
    from matplotlib.figure import Figure  # object-oriented: no pyplot, no global backend switch

    n = robot.n
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(3.6 * cols + 1, 2.6 * rows + 1))
    axes = fig.subplots(rows, cols, squeeze=False)
    by_index = {e.index: e for e in elements}
    for k, ax in enumerate(axes.ravel()):
        if k >= n:
            ax.axis("off")
            continue
        e = by_index[(k + 1,)]
        _panel(ax, trajectory.t, samples.h_rot[:, k], samples.h_tran[:, k], e, _units(robot, e.index))
    axes[0][0].legend(fontsize=7)
    plain_suptitle(fig, f"{robot.name}: Coriolis and centrifugal terms h_i along {trajectory.name} (Fu fig. 3.11)")
    fig.tight_layout()
    return fig


# -- the result -----------------------------------------------------------------------------------


@dataclass
class SimplifiedModel:
    """Classification, the simplified model's torque error along the trajectory, and the plots."""

    robot: Manipulator
    trajectory: Trajectory
    threshold: float
    elements: list[Element]
    samples: Samples
    tau: np.ndarray  # (N, n) full model
    tau_simplified: np.ndarray  # (N, n)
    figures: list[Path] = field(default_factory=list)
    report: Path | None = None

    @property
    def error(self) -> np.ndarray:
        """Largest ``|tau - tau_simplified|`` of each joint along the trajectory, (n,)."""
        return np.max(np.abs(self.tau - self.tau_simplified), axis=0)

    @property
    def peak_torque(self) -> np.ndarray:
        """Largest ``|tau|`` of each joint along the trajectory, (n,)."""
        return np.max(np.abs(self.tau), axis=0)

    @property
    def relative_error(self) -> np.ndarray:
        """error / peak torque for each joint (0 where the joint's torque vanishes and so does its error)."""
        peak = self.peak_torque
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(peak > 0, self.error / np.where(peak > 0, peak, 1.0), np.where(self.error > 0, np.inf, 0))

    @property
    def worst_error(self) -> float:
        return float(np.max(self.error))

    @property
    def worst_relative_error(self) -> float:
        return float(np.max(self.relative_error))

    def dominance(self, name: str) -> str:
        """The class of one element, e.g. ``model.dominance("D12")``."""
        return next(e.dominance for e in self.elements if e.name == name)

    def table(self) -> str:
        """The classification and error report as plain text."""
        lines = [
            f"Simplified d'Alembert model of {self.robot.name} along {self.trajectory.name} "
            f"({len(self.trajectory.t)} set points, t = {self.trajectory.t[0]:g}..{self.trajectory.t[-1]:g} s)",
            f"a part is negligible when its peak magnitude is below {self.threshold:g} x the other part's peak",
            "",
            f"{'element':<8} {'max |rot|':>12} {'max |tran|':>12}  dominance",
        ]
        lines += [f"{e.name:<8} {e.rot_max:12.4g} {e.tran_max:12.4g}  {e.dominance}" for e in self.elements]
        lines += ["", f"{'joint':<8} {'max |error|':>12} {'peak |tau|':>12} {'relative':>10}"]
        lines += [
            f"{i + 1:<8} {err:12.4g} {peak:12.4g} {rel:10.3%}"
            for i, (err, peak, rel) in enumerate(zip(self.error, self.peak_torque, self.relative_error, strict=True))
        ]
        lines += ["", f"worst torque error: {self.worst_error:.4g} (absolute), "
                      f"{self.worst_relative_error:.3%} of the joint's peak torque"]
        return "\n".join(lines) + "\n"


def symbolic_split(robot: Manipulator) -> dict[str, se.DenseMatrix]:
    """The d'Alembert components of ``robot`` in q1..qn, qd1..qdn."""
    refuse_coupled(robot, "Fu's simplified d'Alembert model")
    q, qd, _ = joint_symbols(robot.n).symengine()
    return dalembert.components(robot, q, qd)


def simplify_model(
    robot: Manipulator,
    trajectory: str | Path | Trajectory = "angeles1",
    threshold: float = 0.1,
    output_dir: str | Path | None = None,
    *,
    params: Mapping[str, float] | None = None,
    split: Mapping[str, se.DenseMatrix] | None = None,
    samples: int = 101,
) -> SimplifiedModel:
    """Fu section 3.4.1 for ``robot`` along ``trajectory`` (a :class:`Trajectory`, built-in name or CSV).

    ``threshold``: a part is negligible when its peak magnitude along the trajectory is below
    ``threshold`` times the other part's. ``params`` binds symbolic parameters (``g`` defaults to
    9.81). ``split``: the d'Alembert components (:func:`dalembert.components`), if already derived;
    ``params`` are substituted into them.
    ``output_dir``: where to write ``dalembert_D.png`` (Fu fig. 3.10), ``dalembert_h.png`` (fig. 3.11)
    and ``simplified_model.txt``; created if missing. ``samples``: set points of a built-in trajectory.
    """
    refuse_coupled(robot, "Fu's simplified d'Alembert model")  # its D_ij, h_i split the tree's joints
    if not 0 <= threshold < 1:
        raise ValueError(f"threshold must be in [0, 1), got {threshold}")
    bindings = parameter_values(robot, params)
    robot = bound_robot(robot, bindings)
    path = load_trajectory(trajectory, robot, samples)
    if split is None:
        parts = symbolic_split(robot)
    else:
        substitution = {se.Symbol(k): to_se(v) for k, v in bindings.items()}
        parts = {k: v.subs(substitution) for k, v in split.items()}
    values = evaluate_split(robot, parts, path)
    elements = classify_all(values, threshold)
    model = SimplifiedModel(
        robot=robot,
        trajectory=path,
        threshold=threshold,
        elements=elements,
        samples=values,
        tau=torques(robot, values, path),
        tau_simplified=torques(robot, values, path, masks(elements, robot.n)),
    )
    if output_dir is not None:
        write_outputs(model, Path(output_dir))
    return model


def write_outputs(model: SimplifiedModel, directory: Path) -> list[Path]:
    """The two PNG figures and the text report, all or none (:func:`robodyn.model.files.write_all`: on a
    failure, a full or read-only disk, no file is left and the ``OSError`` is raised)."""
    args = (model.robot, model.samples, model.trajectory, model.elements)
    files: dict[str, str | bytes] = {
        "dalembert_D.png": _png_bytes(inertia_figure(*args)),
        "dalembert_h.png": _png_bytes(velocity_figure(*args)),
        "simplified_model.txt": model.table(),
    }
    written = write_all(directory, files)
    model.figures, model.report = written[:2], written[2]
    return written

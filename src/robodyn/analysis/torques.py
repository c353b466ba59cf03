"""Joint torque and force histories along a trajectory (Angeles, Ma and Rojas, section 7.1, figure 5).

    from robodyn.analysis.torques import torque_history
    history = torque_history(rd.load("stanford_arm"), "angeles1")   # or a Trajectory, or a CSV path
    history.tau             # (N, n): N m for revolute joints, N for prismatic ones
    history.write_csv("example1.csv"); history.plot("example1.png")

The torques come from :func:`robodyn.numeric.inverse_dynamics` (recursive Newton-Euler) called once on
the whole batch of set points, so they include gravity, damping, springs, armature, payload and tip load exactly
as :class:`robodyn.Equations` does. The paper's example 1 is the Stanford arm along theta_i =
theta_i(0) + A_i (t - sin(Bt)/B), t in [0, 10] s (:func:`robodyn.analysis.trajectories.angeles1`; on the built-in
``stanford_arm`` the boom coordinate is q_3 = -b_3). The CSV has a header row ``t,tau1,tau2,f3,...``
(``tau`` for a revolute joint's torque in N m, ``f`` for a prismatic joint's force in N) and one row per
sample; the PNG has one panel per joint like their figure 5. Both are written atomically.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from robodyn import numeric
from robodyn.analysis.plots import save, torque_figure
from robodyn.analysis.trajectories import Trajectory, load_trajectory
from robodyn.errors import ModelError
from robodyn.model.files import atomic_write
from robodyn.model.manipulator import Manipulator
from robodyn.model.params import bind_parameters

#: Parameter values used when the model leaves them symbolic and the caller gives none.
DEFAULT_PARAMETERS: dict[str, float] = {"g": 9.81}


def _bind(robot: Manipulator, params: Mapping[str, float] | None) -> dict[str, float] | None:
    return bind_parameters(robot, params, DEFAULT_PARAMETERS) or None


@dataclass(frozen=True)
class TorqueHistory:
    """tau (N, n) of ``robot`` at every sample of ``trajectory``."""

    robot: Manipulator
    trajectory: Trajectory
    tau: np.ndarray

    @property
    def columns(self) -> list[str]:
        """``tau{i}`` for a revolute joint (torque, N m), ``f{i}`` for a prismatic one (force, N); a coupled
        robot's columns are its independent joints' (``robot.independent``), numbered as the links."""
        links = self.robot.links
        return [f"tau{j + 1}" if links[j].revolute else f"f{j + 1}" for j in self.robot.independent]

    @property
    def units(self) -> list[str]:
        return ["N m" if self.robot.links[j].revolute else "N" for j in self.robot.independent]

    @property
    def peak(self) -> np.ndarray:
        """Largest ``|tau_i|`` along the trajectory, (n,)."""
        return np.max(np.abs(self.tau), axis=0)

    @property
    def peak_time(self) -> np.ndarray:
        """The time of each joint's peak ``|tau_i|``, (n,)."""
        return self.trajectory.t[np.argmax(np.abs(self.tau), axis=0)]

    def summary(self) -> str:
        """One line per joint: peak ``|tau|`` or ``|f|``, its time, and the range."""
        traj = self.trajectory
        lines = [
            f"{self.robot.name} along {traj.name}: {len(traj.t)} samples, t = {traj.t[0]:g}..{traj.t[-1]:g} s",
            f"{'joint':<6} {'peak |tau|':>12}  {'unit':<4} {'at t (s)':>9} {'min':>12} {'max':>12}",
        ]
        for k, (name, unit) in enumerate(zip(self.columns, self.units, strict=True)):
            col = self.tau[:, k]
            lines.append(
                f"{name:<6} {self.peak[k]:12.5g}  {unit:<4} {self.peak_time[k]:9.3g} "
                f"{col.min():12.5g} {col.max():12.5g}"
            )
        return "\n".join(lines) + "\n"

    def to_csv_text(self) -> str:
        """Header ``t,tau1,...,f3,...`` then one row per sample, full precision."""
        data = np.hstack([self.trajectory.t[:, None], self.tau])
        rows = [",".join(f"{x:.17g}" for x in row) for row in data]
        return "\n".join([",".join(["t", *self.columns]), *rows]) + "\n"

    def write_csv(self, path: str | Path) -> Path:
        """Write :meth:`to_csv_text` atomically (temporary file beside ``path``, then ``os.replace``)."""
        return atomic_write(Path(path), self.to_csv_text())

    def figure(self) -> Any:
        """Angeles et al.'s figure 5: one panel per joint, tau_i (N m) or f_i (N) against t (s)."""

        return torque_figure(self)

    def plot(self, path: str | Path, dpi: int = 100) -> Path:
        """Write :meth:`figure` to ``path`` atomically (the suffix chooses the image format)."""

        return save(self.figure(), path, dpi=dpi)


def torque_history(
    robot: Manipulator,
    trajectory: Trajectory | str | Path = "angeles1",
    params: Mapping[str, float] | None = None,
    *,
    samples: int = 101,
) -> TorqueHistory:
    """tau at every sample of ``trajectory`` (a :class:`Trajectory`, built-in name or CSV path), computed by
    :func:`robodyn.numeric.inverse_dynamics` on the whole (N, n) batch at once.

    ``params`` binds symbolic parameters (``g`` defaults to 9.81); a parameter left free raises a
    :class:`~robodyn.errors.ModelError` naming it. ``samples``: set points of a built-in trajectory.
    """
    path = load_trajectory(trajectory, robot, samples)
    with np.errstate(all="ignore"):
        tau = np.asarray(numeric.inverse_dynamics(robot, path.q, path.qd, path.qdd, params=_bind(robot, params)),
                         dtype=float)
    bad = np.flatnonzero(~np.all(np.isfinite(tau), axis=-1))
    if bad.size:
        raise ModelError(f"the torques are not finite at t = {path.t[bad[0]]:g} s: the trajectory's values there "
                         "are too large", field="trajectory")
    return TorqueHistory(robot=robot, trajectory=path, tau=tau)

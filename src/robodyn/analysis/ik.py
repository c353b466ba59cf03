"""Numeric inverse kinematics and Cartesian straight-line paths, with Angeles, Ma and Rojas' example 2.

    from robodyn.analysis import ik
    sol = ik.solve(robot, p_target, R_target, q_guess)           # damped least squares, any arm
    path = ik.straight_line(robot, q_start, p_end, duration=1.0)  # joint trajectory with qd, qdd
    traj = ik.angeles2(rd.load("industrial_6r"))                  # example 2 (Angeles et al. sec. 7.2)

**Inverse kinematics** (:func:`solve`) iterates damped least squares on the geometric Jacobian
(Wampler 1986; Nakamura and Hanafusa 1986)::

    dq = J^T (J J^T + lambda^2 I)^-1 e,   e = (p_d - p; log(R_d R^T)),

where log(R_d R^T) is the rotation vector taking the current orientation to the desired one, in the base
frame like the Jacobian's angular rows (:mod:`robodyn.numeric.kinematics`). It works for any arm, also
one with fewer joints than task coordinates (then it converges to the least-squares pose) or with more.

**Straight lines** (:func:`straight_line`): p(t) = p_0 + (p_1 - p_0) s(t) with the quintic time law
s = 10 tau^3 - 15 tau^4 + 6 tau^5, tau = t / T (zero velocity and acceleration at both ends, like the
paper's "normal spline"), orientation fixed. At every sample q solves the pose to 1e-13 m (warm-started
from the previous sample), and the derivatives come from differentiating the kinematics exactly,

    J(q) qd = (pdot; 0),   J(q) qdd = (pddot; 0) - Jdot(q, qd) qd,

so q, qd, qdd are one consistent trajectory (no finite differences). The task Jacobian must be square
(6 joints with orientation, 3 without) and nonsingular along the path.

**Example 2** (:func:`angeles2`): see its docstring for the data and for what the paper leaves open.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robodyn.analysis.plots import joint_figure, save
from robodyn.analysis.samples import Trajectory, TrajectoryError
from robodyn.errors import ModelError
from robodyn.model.manipulator import Manipulator
from robodyn.numeric.kinematics import jacobian, jacobian_dot, tool_pose
from robodyn.numeric.model import Params

#: Table 3's "initial theta" column (degrees): the start of example 2's trajectory.
ANGELES2_Q0_DEG = (0.0, 68.5, -135.0, 39.6, 90.0, 90.0)
#: Example 2 lasts one second (Angeles et al. sec. 7.2).
ANGELES2_DURATION = 1.0
#: Our choice of the end of s(t) (the paper gives it only in its figure 6): y goes from 0 to 0.5 m.
ANGELES2_STROKE = 0.5


@dataclass(frozen=True)
class IKResult:
    """A solution of :func:`solve`: joint values, whether the tolerances were met, and the final errors."""

    q: np.ndarray
    converged: bool
    iterations: int
    position_error: float
    orientation_error: float


def pose_error(
    R: np.ndarray, p: np.ndarray, R_target: np.ndarray | None, p_target: np.ndarray
) -> np.ndarray:
    """e = (p_d - p; log(R_d R^T)) of shape (6,) (the rotation part 0 when ``R_target`` is None)."""
    e = np.zeros(6)
    e[:3] = p_target - p
    if R_target is not None:
        from scipy.spatial.transform import Rotation  # on use: scipy.spatial takes about 0.25 s to import

        e[3:] = Rotation.from_matrix(R_target @ R.T).as_rotvec()
    return e


def dls_step(J: np.ndarray, e: np.ndarray, damping: float) -> np.ndarray:
    """dq = J^T (J J^T + lambda^2 I)^-1 e (damped least squares)."""
    JJt = J @ J.T
    JJt[np.diag_indices_from(JJt)] += damping**2
    return J.T @ np.linalg.solve(JJt, e)


def solve(
    robot: Manipulator,
    p_target: Sequence[float] | np.ndarray,
    R_target: np.ndarray | None = None,
    q_guess: Sequence[float] | np.ndarray | None = None,
    *,
    params: Params | None = None,
    damping: float = 1e-3,
    tol: float = 1e-13,
    max_iterations: int = 200,
    max_step: float = 0.5,
    frame: str | None = None,
) -> IKResult:
    """Joint values putting the tool frame at ``p_target`` (and orientation ``R_target``, if given) by
    damped least squares from ``q_guess`` (zeros by default). ``frame``: a named frame to place instead
    (:meth:`~robodyn.Manipulator.frame`: ``frame="panda_hand"``, a URDF link; None: the tool frame, link frame n
    times ``robot.tool``, :func:`robodyn.numeric.kinematics.tool_pose`).

    Converged when the position error is below ``tol`` (m) and the orientation error below ``tol`` (rad);
    a step longer than ``max_step`` (in joint units) is shortened. ``converged`` is False where the target
    is out of reach or a singularity stalls the iteration; ``q`` is then the last (least-squares) iterate.
    """
    q = np.zeros(robot.nv) if q_guess is None else np.array(q_guess, dtype=float)
    p_target = np.asarray(p_target, dtype=float)
    rows = slice(0, 6) if R_target is not None else slice(0, 3)
    e = np.zeros(6)
    for iteration in range(max_iterations + 1):
        R, p = tool_pose(robot, q, params, frame=frame)
        e = pose_error(R, p, R_target, p_target)
        if np.linalg.norm(e[:3]) < tol and np.linalg.norm(e[3:]) < tol:
            return IKResult(q, True, iteration, float(np.linalg.norm(e[:3])), float(np.linalg.norm(e[3:])))
        if iteration == max_iterations:
            break
        dq = dls_step(jacobian(robot, q, params, frame=frame)[rows], e[rows], damping)
        size = np.linalg.norm(dq)
        if size > max_step:
            dq *= max_step / size
        if size < 1e-16:
            break
        q = q + dq
    return IKResult(q, False, iteration, float(np.linalg.norm(e[:3])), float(np.linalg.norm(e[3:])))


def quintic_time_law(t: np.ndarray, duration: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """s, ds/dt, d2s/dt2 of s = 10 tau^3 - 15 tau^4 + 6 tau^5, tau = t / duration (s from 0 to 1)."""
    tau = np.asarray(t, dtype=float) / duration
    s = tau**3 * (10 - 15 * tau + 6 * tau**2)
    sd = 30 * tau**2 * (1 - tau) ** 2 / duration
    sdd = 60 * tau * (1 - tau) * (1 - 2 * tau) / duration**2
    return s, sd, sdd


@dataclass(frozen=True)
class CartesianPath:
    """A straight-line path: the joint ``trajectory`` and the Cartesian set points it tracks.

    ``position``, ``velocity``, ``acceleration`` (N, 3) are p_d(t) and its derivatives; ``rotation`` the
    fixed orientation (3, 3) (None for a position-only path); ``iterations`` the IK iterations per sample.
    """

    trajectory: Trajectory
    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    rotation: np.ndarray | None
    iterations: np.ndarray

    def tracking_error(self, robot: Manipulator, params: Params | None = None) -> tuple[float, float]:
        """The largest position error (m) and orientation error (rad) of FK(q(t)) along the path."""
        R, p = tool_pose(robot, self.trajectory.q, params)
        position = float(np.max(np.linalg.norm(p - self.position, axis=1)))
        if self.rotation is None:
            return position, 0.0
        from scipy.spatial.transform import Rotation

        angles = Rotation.from_matrix(self.rotation[None] @ np.transpose(R, (0, 2, 1))).magnitude()
        return position, float(np.max(angles))


def _square_task(robot: Manipulator, orientation: bool) -> slice:
    rows = 6 if orientation else 3
    if robot.nv != rows:
        raise ModelError(
            f"a Cartesian path with exact joint rates needs as many joints as task coordinates "
            f"({rows}: position{' and orientation' if orientation else ''}); {robot.name} has {robot.nv} "
            f"(use ik.solve pose by pose instead)",
            field="trajectory",
        )
    return slice(0, rows)


def straight_line(
    robot: Manipulator,
    q_start: Sequence[float] | np.ndarray,
    p_end: Sequence[float] | np.ndarray,
    duration: float,
    samples: int = 101,
    *,
    orientation: bool = True,
    params: Params | None = None,
    name: str = "straight line",
) -> CartesianPath:
    """The tool moves on the segment from FK(q_start) to ``p_end`` in ``duration`` seconds with the quintic
    time law, keeping the orientation of q_start (``orientation=True``): see the module docstring.

    Raises :class:`~robodyn.errors.ModelError` if IK fails at a sample (out of reach, singular).
    """
    if duration <= 0 or samples < 3:
        raise TrajectoryError(f"need duration > 0 and samples >= 3, got {duration}, {samples}")
    rows = _square_task(robot, orientation)
    q = np.array(q_start, dtype=float)
    R0, p0 = tool_pose(robot, q, params)
    R_target = R0 if orientation else None
    t = np.linspace(0.0, duration, samples)
    s, sd, sdd = quintic_time_law(t, duration)
    delta = np.asarray(p_end, dtype=float) - p0
    position = p0 + s[:, None] * delta
    velocity, acceleration = sd[:, None] * delta, sdd[:, None] * delta
    Q, QD, QDD = (np.empty((samples, robot.nv)) for _ in range(3))
    iterations = np.zeros(samples, dtype=int)
    qd = np.zeros(robot.nv)
    for k in range(samples):
        guess = q + qd * (t[k] - t[k - 1]) if k else q
        sol = solve(robot, position[k], R_target, guess, params=params, damping=1e-6)
        if not sol.converged:
            raise ModelError(
                f"inverse kinematics failed at t = {t[k]:g} s (position error {sol.position_error:.3g} m): "
                "the path leaves the workspace or crosses a singularity",
                field="trajectory",
            )
        q, iterations[k] = sol.q, sol.iterations
        J = jacobian(robot, q, params)[rows]
        twist = np.concatenate([velocity[k], np.zeros(3)])[rows]
        qd = np.linalg.solve(J, twist)  # J qd = (pdot; 0)
        bias = (jacobian_dot(robot, q, qd, params) @ qd)[rows]
        twist_dot = np.concatenate([acceleration[k], np.zeros(3)])[rows]
        Q[k], QD[k], QDD[k] = q, qd, np.linalg.solve(J, twist_dot - bias)  # J qdd = (pddot; 0) - Jdot qd
    trajectory = Trajectory(t, Q, QD, QDD, name=name)
    return CartesianPath(trajectory, position, velocity, acceleration, R_target, iterations)


def angeles2_path(
    robot: Manipulator,
    samples: int = 101,
    stroke: float = ANGELES2_STROKE,
    params: Params | None = None,
) -> CartesianPath:
    """Example 2 of Angeles, Ma and Rojas as a :class:`CartesianPath` (see :func:`angeles2`)."""
    if robot.nv != 6:
        raise TrajectoryError(f"angeles2 is a path of a six-axis arm; {robot.name} has {robot.nv} joints",
                              field="trajectory")
    q0 = np.radians(ANGELES2_Q0_DEG)
    _, p0 = tool_pose(robot, q0, params)
    p_end = p0 + np.array([0.0, stroke, 0.0])
    return straight_line(robot, q0, p_end, ANGELES2_DURATION, samples, params=params, name="angeles2")


def angeles2(robot: Manipulator, samples: int = 101, stroke: float = ANGELES2_STROKE) -> Trajectory:
    """Angeles, Ma and Rojas' example 2 (their sec. 7.2, figures 6-8): the industrial arm's tool moves
    along a straight line parallel to the base y axis, x and z fixed, orientation fixed, over 1 s.

    - Start: the forward kinematics of table 3's initial angles (0, 68.5, -135, 39.6, 90, 90) degrees.
      On the built-in ``industrial_6r`` (table 3 as printed, converted by the paper's own eq. 7-8) that is
      x = 1.3246, y = 0, z = 1.2376 m. The paper says x = 1.33, z = 1.80: x agrees, z does not, and no
      reading of table 3 (the sign of any b_i, alpha_i or theta_i, the base offset b_1) gives both; the
      nearest, a mirror image of the arm with every twist negated, gives z = 1.7624. We keep table 3 and
      its initial angles and start the line where they put the tool: x = 1.3246, z = 1.2376.
    - s(t): the paper's "normal spline" with zero end velocities and accelerations is shown only in its
      figure 6; we use the quintic s(t) = y_0 + L (10 tau^3 - 15 tau^4 + 6 tau^5), tau = t / 1 s, from
      y_0 = 0 to y_0 + L with L = ``stroke`` = 0.5 m (our choice: the Jacobian stays well conditioned,
      smallest singular value above 0.3, and the peak speed 0.94 m/s suits an arm of this size).
    - The joint trajectory (their figure 7) comes from :func:`straight_line`: exact IK at each sample,
      qd and qdd from J qd = (v; 0) and J qdd = (a; 0) - Jdot qd. ``robodyn torques industrial_6r
      --trajectory angeles2`` gives their figure 8.
    """
    return angeles2_path(robot, samples, stroke).trajectory


def plot_joint_trajectory(trajectory: Trajectory, robot: Manipulator, path: str | Path | None = None) -> object:
    """q_i(t) in degrees (revolute) or metres (prismatic), one panel per joint (Angeles et al. fig. 4, 7);
    returns the matplotlib Figure and writes it atomically to ``path`` if given."""

    figure = {"angeles1": "fig. 4", "angeles2": "fig. 7"}.get(trajectory.name)
    title = f"{robot.name}: joint trajectory {trajectory.name}" + (
        f" (cf. Angeles, Ma and Rojas {figure})" if figure else "")
    fig = joint_figure(trajectory.t, trajectory.q, robot, title=title)
    if path is not None:
        save(fig, path)
    return fig

"""Simulations of robots as users bring them (issue 43, point 5). One that stops part of the way keeps what it
integrated: the SimulationError's ``result`` is the trajectory up to the last step the integrator took, the same
numbers as an integration that ends there, and the one-line message still names the time (and the state, where it
is no longer finite). Coulomb friction (read from URDF and MJCF files now) is integrated regularised, so that a
joint that stops does not stall the integrator."""

from __future__ import annotations

import numpy as np
import pytest

from robodyn import numeric
from robodyn.analysis.simulation import SimulationError, simulate
from tests.conftest import load_quiet

DOUBLE = {"L1": 1.0, "L2": 0.5, "m1": 2.0, "m2": 1.0, "g": 9.81}


@pytest.mark.parametrize("method", ["RK45", "Radau", "LSODA"])
def test_a_motion_that_blows_up_keeps_its_trajectory_up_to_the_last_step(method: str) -> None:
    robot = load_quiet("double_pendulum")
    with pytest.raises(SimulationError, match=r"at t = 0\.49.*the trajectory up to t = 0\.4\d* s is kept") as info:
        simulate(robot, 1.0, [0.5, 0.5], torque=lambda t, q, qd: [1 / (0.5 - t) ** 3, 0.0], params=DOUBLE,
                 engine="numpy", method=method, max_evaluations=200_000)
    kept = info.value.result
    assert kept is not None and "\n" not in str(info.value)
    assert 0.4 < kept.t[-1] < 0.5 and np.all(np.diff(kept.t) > 0) and np.all(np.isfinite(kept.q))
    assert np.allclose(kept.t[:-1], np.linspace(0.0, 1.0, 501)[: len(kept.t) - 1])  # the output times up to there
    again = simulate(robot, (0.0, kept.t[-1]), [0.5, 0.5], torque=lambda t, q, qd: [1 / (0.5 - t) ** 3, 0.0],
                     params=DOUBLE, engine="numpy", method=method, t_eval=kept.t)
    assert np.array_equal(again.q, kept.q) and np.array_equal(again.qd, kept.qd)


def test_a_failure_before_the_first_step_keeps_nothing() -> None:
    robot = load_quiet("double_pendulum")
    with pytest.raises(SimulationError, match=r"the torque function returned \[inf, 0\.0\] at t = ") as info:
        simulate(robot, 1.0, [0.5, 0.5], torque=lambda t, q, qd: [np.inf, 0.0] if t > 0 else [0.0, 0.0],
                 params=DOUBLE, engine="numpy")  # (refused inside the first step: nothing was integrated)
    assert info.value.result is None and "is kept" not in str(info.value)


def test_coulomb_friction_is_regularised_so_a_joint_that_stops_does_not_stall_the_integrator() -> None:
    """puma560_rtb's joints carry the Toolbox's Coulomb friction: from rest under gravity the sign stalls RK45 (the
    evaluation bound spent in the first milliseconds), tanh(qd / 0.01) runs; tau is the torque applied (zero), and
    qdd is the regularised friction's: M qdd + bias_without_coulomb + c tanh(qd / 0.01) = tau."""
    robot = load_quiet("puma560_rtb")
    q0 = [0.0, 0.3, -0.2, 0.0, 0.4, 0.0]
    with pytest.raises(SimulationError, match="Coulomb friction jumps"):
        simulate(robot, 0.2, q0, coulomb_velocity=None, max_evaluations=20_000, engine="numpy")
    result = simulate(robot, 0.2, q0, max_evaluations=200_000, engine="numpy", samples=5)
    assert result.nfev < 200_000 and np.all(result.tau == 0.0)
    odd, even = (np.array([float(link.coulomb_parts[i]) for link in robot.links]) for i in (0, 1))
    smooth = np.tanh(result.qd / 0.01)
    exact = numeric.inverse_dynamics(robot, result.q, result.qd, result.qdd)
    expected = exact - (odd * np.sign(result.qd) + even * np.sign(result.qd) ** 2) + odd * smooth + even * smooth**2
    assert np.allclose(expected, 0.0, atol=1e-8)

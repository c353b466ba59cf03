"""A simulation that stops part of the way keeps what it integrated (issue 43, point 5): the SimulationError's
``result`` is the trajectory up to the last step the integrator took, the same numbers as an integration that ends
there, and the one-line message still names the time (and the state, where it is no longer finite)."""

from __future__ import annotations

import numpy as np
import pytest

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

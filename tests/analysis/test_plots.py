"""The noise floor of the figures (robodyn.analysis.plots.RELATIVE_FLOOR, ABSOLUTE_FLOOR): data constant but for
rounding noise are drawn flat and titled constant, not autoscaled into a curve."""

from __future__ import annotations

import numpy as np

from robodyn.analysis import plots
from tests.conftest import load_quiet


def test_constant_level_sees_noise_and_not_signal() -> None:
    t = np.linspace(0.0, 1.0, 101)
    noise = np.random.default_rng(0).standard_normal(t.size)
    level = plots.constant_level(2.0 + 1e-16 * noise)
    assert level is not None and abs(level - 2.0) < 1e-15
    assert plots.constant_level(1e-16 * noise) is not None  # about zero: the absolute floor
    assert plots.constant_level(3.0 + 1e-6 * np.sin(t)) is None  # a real (small) variation
    assert plots.constant_level(1e-11 * np.sin(t)) is None  # above the absolute floor of 1e-12
    assert plots.constant_level(np.array([np.nan])) is None


def test_joint_figure_draws_a_noisy_constant_flat() -> None:
    robot = load_quiet("double_pendulum")
    t = np.linspace(0.0, 1.0, 51)
    q = np.column_stack([np.sin(t), 0.5 + 1e-17 * np.cos(40 * t)])
    fig = plots.joint_figure(t, q, robot, "noise")
    moving, still = fig.axes[0], fig.axes[1]
    assert "constant" not in moving.get_title() and still.get_title() == "joint 2 (constant)"
    low, high = still.get_ylim()
    assert high - low >= 0.1 * np.degrees(0.5)  # a wide band, not 1e-15 wide

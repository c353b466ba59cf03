"""rd.simulate on a floating base (robodyn.analysis.simulation.FloatingDynamics): the configuration moves on the
manifold (position by R v, quaternion by 1/2 quat (x) omega), and the physics holds: with no gravity and no torque
the centroidal momentum (Pinocchio's computeCentroidalMomentum) is conserved; under gravity the linear momentum
grows by m g t and the energy is conserved; one-line refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric

pin = pytest.importorskip("pinocchio")


def _urdf() -> str:
    from benchmarks.urdf_survey import robots_directory

    directory = robots_directory()
    if directory is None:
        pytest.skip("example-robot-data is not installed")
    return str(directory / "solo_description/robots/solo12.urdf")


@pytest.fixture(scope="module")
def solo() -> rd.Manipulator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        return rd.load(_urdf(), floating=True)


def _start(robot: rd.Manipulator) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    quaternion = rng.normal(size=4)
    q0 = np.concatenate([[0.1, -0.2, 0.3], quaternion / np.linalg.norm(quaternion), rng.uniform(-0.5, 0.5, robot.n)])
    return q0, rng.uniform(-1, 1, robot.nv)


def _pinocchio_momentum(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """h_G by Pinocchio reading the same URDF with a JointModelFreeFlyer root (the same joint order)."""
    model = pin.buildModelFromUrdf(_urdf(), pin.JointModelFreeFlyer())
    data = model.createData()
    return np.array([pin.computeCentroidalMomentum(model, data, qk, vk).vector for qk, vk in zip(q, v, strict=True)])


def test_without_gravity_the_centroidal_momentum_is_conserved(solo: rd.Manipulator) -> None:
    free = solo.replace(gravity=(0, 0, 0))
    q0, v0 = _start(free)
    res = rd.simulate(free, 1.0, q0, v0, method="DOP853", rtol=1e-11, atol=1e-11, samples=11)
    assert res.q.shape == (11, free.nq) and res.qd.shape == (11, free.nv)
    assert np.abs(np.linalg.norm(res.q[:, 3:7], axis=1) - 1).max() < 1e-15  # unit quaternions
    h = _pinocchio_momentum(res.q, res.qd)
    assert np.abs(h - h[0]).max() < 1e-9 * np.abs(h[0]).max()
    assert np.allclose(numeric.centroidal_momentum(free, res.q, res.qd), h, rtol=0, atol=1e-12)
    assert res.energy_drift() < 1e-9
    assert np.abs(res.q[-1] - q0).max() > 0.1  # it moved


def test_under_gravity_momentum_grows_by_m_g_t_and_energy_is_conserved(solo: rd.Manipulator) -> None:
    q0, v0 = _start(solo)
    res = rd.simulate(solo, 0.5, q0, v0, method="DOP853", rtol=1e-11, atol=1e-11, samples=6)
    h = numeric.centroidal_momentum(solo, res.q, res.qd)
    mass = numeric.mass_matrix(solo, q0)[0, 0]
    assert np.abs(h[:, :3] - h[0, :3] - np.outer(res.t, mass * np.array([0, 0, -9.81]))).max() < 1e-8
    assert res.energy_drift() < 1e-9
    # the centre of mass falls as a stone: c(t) = c(0) + c'(0) t + g t^2 / 2
    c = numeric.center_of_mass(solo, res.q)
    expected = c[0] + np.outer(res.t, h[0, :3] / mass) + np.outer(res.t ** 2 / 2, [0, 0, -9.81])
    assert np.abs(c - expected).max() < 1e-9
    header = res.to_csv_text().splitlines()[0].split(",")
    assert header[1:1 + solo.nq] == [f"q{i}" for i in range(1, solo.nq + 1)] and header[1 + solo.nq] == "qd1"


def test_what_cannot_be_simulated_is_refused_in_one_line(solo: rd.Manipulator) -> None:
    q0, v0 = _start(solo)
    with pytest.raises(rd.simulation.SimulationError, match="no joint torques hold it at rest"):
        rd.simulate(solo, 0.1, q0, v0, torque="gravity")
    with pytest.raises(rd.simulation.SimulationError, match="q0 must be 19 finite numbers"):
        rd.simulate(solo, 0.1, q0[:18], v0)
    with pytest.raises(rd.simulation.SimulationError, match=r"quaternion .* is zero"):
        rd.simulate(solo, 0.1, np.concatenate([q0[:3], [0, 0, 0, 0], q0[7:]]), v0)
    rest = rd.simulate(solo.replace(gravity=(0, 0, 0)), 0.1, samples=3)  # the default start: at rest, level
    assert np.allclose(rest.q[:, 6], 1.0) and np.abs(rest.qd).max() == 0.0

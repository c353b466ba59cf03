"""Planar joints (robodyn.model.joints' PLANAR, a link's ``joint`` planar, Pinocchio's ``JointModelPlanar``) read from
a URDF ``type="planar"`` joint, with a revolute child, on a fixed and a floating base: inverse dynamics, M and
forward dynamics against ``pinocchio.buildModelFromUrdf`` of the same file (with and without a
``JointModelFreeFlyer`` root; the same q: (x, y, cos theta, sin theta) for the planar joint); the joint's manifold
functions against ``pinocchio.integrate`` / ``difference`` / ``neutral``; rd.simulate against Pinocchio's forward
dynamics integrated on its manifold; the one-line refusals."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn.errors import ModelError
from robodyn.formats.urdf import to_urdf
from robodyn.model import joints
from robodyn.numeric import floating

pin = pytest.importorskip("pinocchio")

TOL = 1e-10

URDF = """<robot name="slider">
  <link name="base"><inertial><mass value="2.0"/><origin xyz="0.1 0 0.05"/>
    <inertia ixx="0.2" iyy="0.25" izz="0.3" ixy="0.01" ixz="0" iyz="0.02"/></inertial></link>
  <link name="body"><inertial><mass value="1.5"/><origin xyz="0.05 -0.02 0.1" rpy="0.1 0.2 0.3"/>
    <inertia ixx="0.05" iyy="0.06" izz="0.07" ixy="0.001" ixz="0.002" iyz="0.003"/></inertial></link>
  <link name="arm"><inertial><mass value="0.7"/><origin xyz="0.2 0.01 0"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.015" ixy="0" ixz="0.001" iyz="0"/></inertial></link>
  <joint name="slide" type="planar"><parent link="base"/><child link="body"/>
    <origin xyz="0.1 0.2 0.3" rpy="0.3 -0.2 0.5"/><axis xyz="0 0 1"/><dynamics damping="0"/></joint>
  <joint name="elbow" type="revolute"><parent link="body"/><child link="arm"/>
    <origin xyz="0.3 0 0.1" rpy="0 0.4 0"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="5"/></joint>
</robot>
"""


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("planar") / "slider.urdf"
    out.write_text(URDF)
    return out


@pytest.fixture(scope="module", params=[False, True], ids=["fixed", "floating"])
def pair(request: pytest.FixtureRequest, path: Path) -> tuple[rd.Manipulator, object]:
    robot = rd.load(path, floating=request.param)
    model = (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if request.param
             else pin.buildModelFromUrdf(str(path)))
    return robot, model


def _states(robot: rd.Manipulator, model: object, count: int = 3) -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(7)
    out = []
    for _ in range(count):
        q = np.zeros(robot.nq)
        if robot.floating:
            q[:7] = joints.random_configuration(rng)
        at = robot.idx_q(0)
        q[at:at + 4] = joints.random_configuration(rng, joint="planar")
        q[robot.idx_q(1)] = rng.uniform(-np.pi, np.pi)
        out.append((q, *rng.standard_normal((3, robot.nv))))
    return out


def test_sizes_match_pinocchio(pair: tuple[rd.Manipulator, object]) -> None:
    robot, model = pair
    assert [link.joint for link in robot.links] == ["planar", "R"] and robot.planar == (0,)
    assert (robot.nq, robot.nv) == (model.nq, model.nv)
    assert [robot.idx_q(k) for k in range(2)] == [model.joints[k + (2 if robot.floating else 1)].idx_q
                                                  for k in range(2)]
    assert [robot.idx_v(k) for k in range(2)] == [model.joints[k + (2 if robot.floating else 1)].idx_v
                                                  for k in range(2)]
    assert model.joints[2 if robot.floating else 1].shortname() == "JointModelPlanar"


def test_dynamics_match_pinocchio(pair: tuple[rd.Manipulator, object]) -> None:
    """rnea, crba and aba (the Cholesky solve here) at random states, to 1e-10."""
    robot, model = pair
    data = model.createData()
    for q, v, a, tau in _states(robot, model):
        assert np.allclose(rd.numeric.inverse_dynamics(robot, q, v, a), pin.rnea(model, data, q, v, a),
                           rtol=TOL, atol=TOL)
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        assert np.allclose(rd.numeric.mass_matrix(robot, q), M, rtol=TOL, atol=TOL)
        assert np.allclose(rd.numeric.forward_dynamics(robot, q, v, tau), pin.aba(model, data, q, v, tau),
                           rtol=TOL, atol=TOL)
    batch = np.array([s[0] for s in _states(robot, model)])
    assert np.allclose(rd.numeric.mass_matrix(robot, batch)[1], rd.numeric.mass_matrix(robot, batch[1]), rtol=0,
                       atol=1e-14)


def test_bias_coriolis_and_gravity_match_pinocchio(pair: tuple[rd.Manipulator, object]) -> None:
    """nonLinearEffects, computeGeneralizedGravity and their difference, to 1e-10."""
    robot, model = pair
    data = model.createData()
    for q, v, _, _ in _states(robot, model):
        nle, gravity = pin.nonLinearEffects(model, data, q, v), pin.computeGeneralizedGravity(model, data, q)
        assert np.allclose(rd.numeric.bias_forces(robot, q, v), nle, rtol=TOL, atol=TOL)
        assert np.allclose(rd.numeric.coriolis(robot, q, v), nle - gravity, rtol=TOL, atol=TOL)
        assert np.allclose(rd.numeric.gravity(robot, q), gravity, rtol=TOL, atol=TOL)


def test_manifold_matches_pinocchio() -> None:
    model = pin.Model()
    model.addJoint(0, pin.JointModelPlanar(), pin.SE3.Identity(), "planar")
    rng = np.random.default_rng(3)
    assert np.array_equal(joints.neutral("planar"), pin.neutral(model))
    q0 = joints.random_configuration(rng, size=4, box=2.0, joint="planar")
    q1 = joints.random_configuration(rng, size=4, joint="planar")
    v = rng.standard_normal((4, 3)) * 2
    assert joints.is_normalized(q0, joint="planar")
    assert np.allclose(joints.integrate(q0, v, 0.7, joint="planar"),
                       [pin.integrate(model, a, b * 0.7) for a, b in zip(q0, v, strict=True)], rtol=0, atol=1e-14)
    assert np.allclose(joints.difference(q0, q1, joint="planar"),
                       [pin.difference(model, a, b) for a, b in zip(q0, q1, strict=True)], rtol=0, atol=1e-13)
    assert joints.motion_subspace("planar").tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0],
                                                          [0, 0, 1]]


def test_simulate_matches_pinocchio(path: Path) -> None:
    """rd.simulate (the planar configuration integrated as (x, y) by Rot(z, theta) (vx, vy), (cos, sin) by omega)
    against RK4 stages on Pinocchio's manifold (pinocchio.integrate) with pinocchio.aba: the stages' tangent
    vectors are combined without transport, second order in the step on the group, hence its small step."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = rd.load(path)
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    q0 = np.array([0.1, -0.2, np.cos(0.3), np.sin(0.3), 0.4])
    v0 = np.array([0.5, -0.3, 1.0, 0.2])
    result = rd.simulate(robot, (0, 0.1), q0=q0, qd0=v0, method="DOP853", rtol=1e-12, atol=1e-12, samples=2)
    q, v, h = q0.copy(), v0.copy(), 1e-4

    def step(x: np.ndarray, dx: np.ndarray, dt: float) -> np.ndarray:
        return pin.integrate(model, x, dx * dt)

    for _ in range(1000):
        k1 = (v, pin.aba(model, data, q, v, np.zeros(4)))
        k2 = (v + k1[1] * h / 2, pin.aba(model, data, step(q, k1[0], h / 2), v + k1[1] * h / 2, np.zeros(4)))
        k3 = (v + k2[1] * h / 2, pin.aba(model, data, step(q, k2[0], h / 2), v + k2[1] * h / 2, np.zeros(4)))
        k4 = (v + k3[1] * h, pin.aba(model, data, step(q, k3[0], h), v + k3[1] * h, np.zeros(4)))
        q = step(q, (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]) / 6, h)
        v = v + (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]) * h / 6
    assert np.allclose(result.q[-1], q, rtol=0, atol=1e-9)
    assert np.allclose(result.qd[-1], v, rtol=0, atol=1e-9)  # (2e-8 apart with h = 1e-3)
    assert np.allclose(np.hypot(result.q[:, 2], result.q[:, 3]), 1.0, rtol=0, atol=1e-12)


def _one_line(exc: pytest.ExceptionInfo[BaseException], *words: str) -> None:
    text = str(exc.value)
    assert "\n" not in text and all(word in text for word in words), text


def test_refusals(path: Path, tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = rd.load(path)
    for call in (rd.derive, lambda r: rd.program.build(r, ("tau",), route="emdeg")):  # (the recursive route takes it)
        with pytest.raises(ModelError) as exc:
            call(robot)
        _one_line(exc, "link 'slide'", "planar joint")
    with pytest.raises(ModelError) as exc:
        to_urdf(robot)
    _one_line(exc, "link 'slide'", "planar joint", "to_urdf")
    with pytest.raises(ModelError) as exc:
        floating.forward_dynamics(robot, np.r_[0, 0, 1, 0, 0.0], np.zeros(4), np.zeros(4), method="aba")
    _one_line(exc, "planar", "cholesky")
    with pytest.raises(ModelError) as exc:
        rd.numeric.inverse_dynamics(robot, np.r_[0, 0, 1, 0, 0.0], np.zeros(4), np.zeros(4), fext=np.zeros(6))
    _one_line(exc, "planar joint", "fext")
    with pytest.raises(ValueError) as exc_value:
        rd.numeric.inverse_dynamics(robot, np.r_[0, 0, 2, 0, 0.0], np.zeros(4), np.zeros(4))
    _one_line(exc_value, "planar joint 1", "unit length")
    with pytest.raises(ModelError) as exc:
        rd.load(path, lock={"slide": 0.1})
    _one_line(exc, "joint 'slide'", "locked")
    tilted = tmp_path / "tilted.urdf"
    tilted.write_text(URDF.replace('<axis xyz="0 0 1"/><dynamics', '<axis xyz="1 0 0"/><dynamics'))
    with pytest.raises(ModelError) as exc:
        rd.load(tilted)
    _one_line(exc, "tilted.urdf", "joint 'slide'", "axis", "(0 0 1)")

"""Floating bases in the numeric engine (robodyn.numeric.floating) and the free joint (robodyn.model.joints):
every example-robot-data robot that its loaders build with a free-flyer root, against Pinocchio's model of the
same URDF with a ``JointModelFreeFlyer`` root (rnea, crba, aba, computeCentroidalMap, centerOfMass); momentum
conserved in a free simulation; the symbolic paths' one-line refusals."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from benchmarks.urdf_survey import robots_directory

import robodyn as rd
from robodyn import numeric
from robodyn.errors import ModelError
from robodyn.model import joints
from robodyn.numeric import floating

pin = pytest.importorskip("pinocchio")
ROBOTS = robots_directory()
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")

#: The robots example-robot-data's loaders build with a free-flyer root (robots_loader.py), whose URDF Pinocchio
#: and robodyn read (romeo_laas_small's links break the positivity of inertia: robodyn refuses it).
FLOATING = (
    "a1_description/urdf/a1.urdf", "alex_description/urdf/alex_nub_hands.urdf",
    "alex_description/urdf/alex_psyonic_hands.urdf", "alex_description/urdf/alex_sake_hands.urdf",
    "alexander_description/urdf/alexander_v1.lowerBodyOnly.urdf", "anymal_b_simple_description/robots/anymal.urdf",
    "anymal_b_simple_description/robots/anymal-kinova.urdf", "anymal_c_simple_description/urdf/anymal.urdf",
    "b1_description/urdf/b1.urdf", "b1_description/urdf/b1-z1.urdf", "bolt_description/robots/bolt.urdf",
    "borinot_description/urdf/borinot_flying_arm_2.urdf", "centauro_description/urdf/centauro.urdf",
    "g1_description/urdf/g1_29dof_rev_1_0.urdf", "g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf",
    "go1_description/urdf/go1.urdf", "go2_description/urdf/go2.urdf", "hector_description/robots/quadrotor_base.urdf",
    "hextilt_description/urdf/hextilt_flying_arm_5.urdf", "human_description/robots/human.urdf",
    "hyq_description/robots/hyq_no_sensors.urdf", "icub_description/robots/icub.urdf",
    "icub_description/robots/icub_reduced.urdf", "iris_description/robots/iris.urdf",
    "iris_description/robots/iris_simple.urdf", "laikago_description/urdf/laikago.urdf",
    "quadruped_description/urdf/quadruped.urdf", "romeo_description/urdf/romeo.urdf",
    "romeo_description/urdf/romeo_small.urdf", "simple_humanoid_description/urdf/simple_humanoid.urdf",
    "simple_humanoid_description/urdf/simple_humanoid_classical.urdf", "solo_description/robots/solo.urdf",
    "solo_description/robots/solo12.urdf", "talos_data/robots/talos_full_v2.urdf",
    "talos_data/robots/talos_full_v2_box.urdf", "talos_data/robots/talos_reduced.urdf",
    "talos_data/robots/talos_reduced_box.urdf", "talos_data/robots/talos_reduced_corrected.urdf",
)
TOLERANCE = 1e-9
SOLO12 = "solo_description/robots/solo12.urdf"


def _path(name: str) -> Path:
    assert ROBOTS is not None
    return ROBOTS / name


def _load(name: str, **kwargs: object) -> rd.Manipulator:
    with warnings.catch_warnings():  # (doubtful inertia, dropped mimic relations: the survey's business)
        warnings.simplefilter("ignore")
        return rd.load(str(_path(name)), floating=True, mimic="independent", **kwargs)  # type: ignore[arg-type]


def _pinocchio_q(model: object, q: np.ndarray) -> np.ndarray:
    """robodyn's q (base pose, one angle per joint) as Pinocchio's (a continuous joint: cos, sin)."""
    parts = [q[:7]]
    for k, joint in enumerate(model.joints[2:]):  # type: ignore[attr-defined]
        angle = q[7 + k]
        parts.append(np.array([np.cos(angle), np.sin(angle)]) if joint.nq == 2 else np.array([angle]))
    return np.concatenate(parts)


def _relative(x: np.ndarray, reference: np.ndarray) -> float:
    return float(np.abs(x - reference).max() / max(1.0, float(np.abs(reference).max())))


@pytest.mark.parametrize("name", FLOATING, ids=[Path(f).stem for f in FLOATING])
def test_against_pinocchio(name: str) -> None:
    robot = _load(name)
    model = pin.buildModelFromUrdf(str(_path(name)), pin.JointModelFreeFlyer())
    data = model.createData()
    assert (robot.nq, robot.nv) == (robot.n + 7, model.nv)
    assert list(model.names[2:]) == list(robot.joint_names)
    rng = np.random.default_rng(len(name))
    for _ in range(2):
        q = np.concatenate([joints.random_configuration(rng), rng.uniform(-1, 1, robot.n)])
        v, a = rng.uniform(-1, 1, robot.nv), rng.uniform(-1, 1, robot.nv)
        qp = _pinocchio_q(model, q)
        passive = np.concatenate([np.zeros(6), model.damping[6:] * v[6:] + model.friction[6:] * np.sign(v[6:])])
        tau = pin.rnea(model, data, qp, v, a) + passive  # robodyn's tau has the URDF's b qd + f sign(qd)
        assert _relative(numeric.inverse_dynamics(robot, q, v, a), tau) < TOLERANCE
        M_pin = pin.crba(model, data, qp)
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        M = numeric.mass_matrix(robot, q)
        assert _relative(M, M_pin) < TOLERANCE
        assert _relative(floating.centroidal_map(robot, q), pin.computeCentroidalMap(model, data, qp)) < TOLERANCE
        assert _relative(floating.center_of_mass(robot, q), pin.centerOfMass(model, data, qp)) < TOLERANCE
        hg = pin.computeCentroidalMomentum(model, data, qp, v)
        assert _relative(numeric.centroidal_momentum(robot, q, v), np.concatenate([hg.linear, hg.angular])) < TOLERANCE
        if np.linalg.eigvalsh(M).min() > 1e-12 * np.abs(M).max():  # romeo's massless finger links: M singular
            qdd_pin = pin.aba(model, data, qp, v, tau - passive)
            qdd = numeric.forward_dynamics(robot, q, v, tau)
            scale = max(1.0, float(np.abs(tau).max()))
            assert np.abs(M @ (qdd - a)).max() < TOLERANCE * scale  # backward error, in torque
            assert np.abs(M @ (qdd - qdd_pin)).max() < TOLERANCE * scale


@pytest.mark.parametrize("name", [SOLO12, "talos_data/robots/talos_reduced.urdf"], ids=["solo12", "talos"])
def test_bias_coriolis_gravity(name: str) -> None:
    """numeric.bias_forces, coriolis, gravity and friction of a floating robot: Pinocchio's nonLinearEffects (plus the
    joints' damping b v and Coulomb friction f sign(v), read from the URDF by both), computeGeneralizedGravity, their
    difference, the model's damping and friction, and inverse dynamics at zero acceleration."""
    robot = _load(name)
    model = pin.buildModelFromUrdf(str(_path(name)), pin.JointModelFreeFlyer())
    data = model.createData()
    rng = np.random.default_rng(3)
    N = 3
    q = np.concatenate([joints.random_configuration(rng, N), rng.uniform(-1, 1, (N, robot.n))], 1)
    v = rng.uniform(-1, 1, (N, robot.nv))
    bias, h, G = numeric.bias_forces(robot, q, v), numeric.coriolis(robot, q, v), numeric.gravity(robot, q)
    assert bias.shape == h.shape == G.shape == (N, robot.nv)
    for k in range(N):
        qp = _pinocchio_q(model, q[k])
        damping = np.concatenate([np.zeros(6), model.damping[6:] * v[k, 6:]  # the URDF's damping and friction
                                  + model.friction[6:] * np.sign(v[k, 6:])])
        nle, gravity = pin.nonLinearEffects(model, data, qp, v[k]), pin.computeGeneralizedGravity(model, data, qp)
        assert _relative(G[k], gravity) < TOLERANCE
        assert _relative(h[k], nle - gravity) < TOLERANCE
        assert _relative(bias[k], nle + damping) < TOLERANCE
        np.testing.assert_array_equal(bias[k], numeric.inverse_dynamics(robot, q[k], v[k], np.zeros(robot.nv)))
        np.testing.assert_allclose(numeric.friction(robot, v[k]), damping, rtol=0, atol=1e-14)
        np.testing.assert_allclose(h[k] + G[k] + damping, bias[k], rtol=0, atol=1e-12 * np.abs(bias[k]).max())
        for one, batch in ((numeric.bias_forces(robot, q[k], v[k]), bias), (numeric.coriolis(robot, q[k], v[k]), h),
                           (numeric.gravity(robot, q[k]), G)):
            np.testing.assert_array_equal(one, batch[k])  # one state as in the batch


def test_batches_and_shapes() -> None:
    robot = _load(SOLO12)
    rng = np.random.default_rng(1)
    N = 5
    q = np.concatenate([joints.random_configuration(rng, N), rng.uniform(-1, 1, (N, robot.n))], 1)
    v, a = rng.uniform(-1, 1, (N, robot.nv)), rng.uniform(-1, 1, (N, robot.nv))
    tau = numeric.inverse_dynamics(robot, q, v, a)
    M = numeric.mass_matrix(robot, q)
    assert tau.shape == (N, 18) and M.shape == (N, 18, 18)
    for k in range(N):
        np.testing.assert_allclose(tau[k], numeric.inverse_dynamics(robot, q[k], v[k], a[k]), rtol=0, atol=1e-12)
        np.testing.assert_allclose(M[k] @ a[k] + floating.bias_forces(robot, q[k], v[k]), tau[k], atol=1e-10)
    np.testing.assert_allclose(numeric.forward_dynamics(robot, q, v, tau), a, atol=1e-9)
    with pytest.raises(ValueError, match="nq = 19"):
        numeric.inverse_dynamics(robot, q[:, 1:], v, a)
    with pytest.raises(ValueError, match="unit length"):
        numeric.mass_matrix(robot, np.ones(19))


def _step(q: np.ndarray, v: np.ndarray, dt: float) -> np.ndarray:
    """The configuration moved by v dt: the base on SE(3) (the joint model's integrate), the joints additively."""
    return np.concatenate([joints.integrate(q[:7], v[:6], dt), q[7:] + v[6:] * dt])


def test_momentum_is_conserved_without_gravity_and_torque() -> None:
    """RK4 with the manifold update; the centroidal momentum h_G = A_G v is constant to the integrator's error."""
    robot = _load(SOLO12).replace(gravity=(0, 0, 0))
    rng = np.random.default_rng(2)
    q = np.concatenate([joints.random_configuration(rng), rng.uniform(-1, 1, robot.n)])
    v = rng.uniform(-1, 1, robot.nv)
    zero = np.zeros(robot.nv)

    def f(q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return numeric.forward_dynamics(robot, q, v, zero)

    h0 = numeric.centroidal_momentum(robot, q, v)
    dt = 1e-3
    for _ in range(100):
        k1 = (v, f(q, v))
        k2 = (v + dt / 2 * k1[1], f(_step(q, k1[0], dt / 2), v + dt / 2 * k1[1]))
        k3 = (v + dt / 2 * k2[1], f(_step(q, k2[0], dt / 2), v + dt / 2 * k2[1]))
        k4 = (v + dt * k3[1], f(_step(q, k3[0], dt), v + dt * k3[1]))
        q = _step(q, (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]) / 6, dt)
        v = v + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    assert joints.is_normalized(q)
    h1 = numeric.centroidal_momentum(robot, q, v)
    assert np.abs(h1 - h0).max() < 1e-6 * np.abs(h0).max()
    assert np.abs(h0).max() > 0.1  # (a motion that has momentum)


def test_free_joint_against_pinocchio() -> None:
    model = pin.Model()
    model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root")
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = joints.random_configuration(rng)
        v = rng.uniform(-2, 2, 6)
        q1 = joints.integrate(q, v, 0.7)
        ref = pin.integrate(model, q, v * 0.7)
        assert np.abs(q1[:3] - ref[:3]).max() < 1e-12
        assert min(np.abs(q1[3:] - ref[3:]).max(), np.abs(q1[3:] + ref[3:]).max()) < 1e-12  # (q and -q: one rotation)
        np.testing.assert_allclose(joints.difference(q, q1), v * 0.7, atol=1e-10)
        np.testing.assert_allclose(joints.difference(q, q1), pin.difference(model, q, q1), atol=1e-10)
        R, p = joints.free_transform(q)
        placement = pin.XYZQUATToSE3(q)
        np.testing.assert_allclose(R, placement.rotation, atol=1e-14)
        np.testing.assert_allclose(joints.free_configuration(R, p)[3:] * np.sign(q[6]), q[3:] * np.sign(q[6]),
                                   atol=1e-14)
    assert joints.is_normalized(joints.neutral()) and not joints.is_normalized(np.ones(7))
    assert joints.FREE.nq == 7 and joints.FREE.nv == 6
    np.testing.assert_array_equal(joints.motion_subspace("free"), np.eye(6))


def test_drones_load() -> None:
    for name in ("iris_description/robots/iris_simple.urdf", "hector_description/robots/quadrotor_base.urdf"):
        with pytest.raises(ModelError, match="no moving joint"):
            rd.load(str(_path(name)))
        robot = _load(name)
        assert (robot.n, robot.nq, robot.nv) == (0, 7, 6)
        mass = float(robot.base.mass)  # type: ignore[union-attr]
        tau = numeric.inverse_dynamics(robot, joints.neutral(), np.zeros(6), np.zeros(6))
        np.testing.assert_allclose(tau, [0, 0, 9.81 * mass, 0, 0, 0], atol=1e-12)  # hovering: its weight


REFUSAL = "floating base: not handled here so far (robodyn.numeric, rd.simulate and rd.compile's programs handle it)"


def test_symbolic_paths_refuse_it() -> None:
    from robodyn import program

    robot = _load(SOLO12)
    with pytest.raises(ModelError) as info:
        rd.derive(robot)
    assert str(info.value) == f"solo: {REFUSAL}"
    # (the programs of tau, M, h, G, bias and forward, their C and rd.compile: tests/program/test_floating_programs.py)
    with pytest.raises(ModelError, match=r"^solo: floating base: no program of 'elements'; its programs give tau, M"):
        program.build(robot, ("elements",))
    with pytest.raises(ModelError, match=r"^solo: floating base: rd.compile builds it with backend='c', 'numpy' or"):
        rd.compile(robot, backend="cuda")  # (C, Fortran, NumPy, JAX: tests/codegen/test_floating_languages.py)
    with pytest.raises(ModelError, match=r"^solo: floating base: robodyn\.numeric\.tip_load is not handled yet$"):
        numeric.tip_load(robot, joints.neutral())  # (bias_forces, coriolis and gravity: test_bias_coriolis_gravity)
    # (model files describe it: tests/formats/test_floating_model_file.py; simulate integrates it on the
    # manifold: tests/analysis/test_floating_simulation.py)


@pytest.mark.parametrize(("command", "refusal"), [("derive", REFUSAL)])  # (codegen: every output is built)
def test_cli_refuses_it(command: str, refusal: str, tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "robodyn", command, str(_path(SOLO12)), "--floating",
                             "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"solo: {refusal}" in lines[0]  # (the CLI shortens the list of what it gives)


def test_a_symbolic_base_body_takes_its_values() -> None:
    """The base body's parameters bind like the links' (params): forward and inverse dynamics and M of a floating
    robot whose base mass is a symbol equal those of the same robot with the number in its place."""
    from robodyn.model.manipulator import Link, Manipulator, RigidBody

    def robot(mass):
        return Manipulator(links=[Link(joint="R", a=0.3, alpha=0.4, mass="m1", com=[0.1, 0, 0.02],
                                       inertia=[0.01, 0.02, 0.03])],
                           floating=True, base=RigidBody(mass=mass, com=[0, 0.01, 0.1], inertia=[0.2, 0.3, 0.4]),
                           gravity=[0, 0, -9.81])

    symbolic, numbers = robot("mb"), robot(3.1)
    rng = np.random.default_rng(3)
    q = np.concatenate([joints.random_configuration(rng), [0.4]])
    v, tau = rng.uniform(-1, 1, (2, 7))
    for call in (numeric.forward_dynamics, numeric.inverse_dynamics):
        np.testing.assert_allclose(call(symbolic, q, v, tau, params={"mb": 3.1, "m1": 0.8}),
                                   call(numbers, q, v, tau, params={"m1": 0.8}), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(numeric.mass_matrix(symbolic, q, params={"mb": 3.1, "m1": 0.8}),
                               numeric.mass_matrix(numbers, q, params={"m1": 0.8}), rtol=1e-13, atol=1e-13)

"""Joint springs (a link's ``stiffness`` k and ``springref`` q_ref: tau gets k (q - q_ref)) in every layer: the model
file against a hand computation, the numeric engine, the compiled C and every symbolic formulation equal, the
articulated-body algorithm, the analytic derivatives against central differences, the floating engine against
Pinocchio (which has no springs: k added on its side), MuJoCo's passive force, and the refusals."""

from __future__ import annotations

import dataclasses
import shutil
import warnings

import numpy as np
import pytest
import sympy

import robodyn as rd
from robodyn import numeric
from robodyn.errors import ModelError
from robodyn.model.manipulator import Link, Manipulator
from robodyn.numeric import floating
from robodyn.numeric.kane import NumpyOps
from robodyn.recursions import rnea_derivatives
from robodyn.recursions.arm import arm_data

#: A hinge, a slide and a hinge (MuJoCo bodies along x, the axes along z), each with a spring; the first damped and
#: with an armature. The same robot as :data:`MJCF`, in modified DH (the MJCF reader is not what is tested here).
MODEL = """
name: springs
convention: modified
gravity: [0, -9.81, 0]
links:
  - {joint: R, a: 0, alpha: 0, d: 0, theta: 0, mass: 1.5, com: [0.2, 0, 0], inertia: [0.01, 0.02, 0.03],
     stiffness: 3, springref: 0.4, damping: 0.2, armature: 0.05}
  - {joint: P, a: 0.5, alpha: 0, d: 0, theta: 0, mass: 0.8, com: [0, 0.1, 0], inertia: [0.02, 0.01, 0.03],
     stiffness: 7, springref: -0.1}
  - {joint: R, a: 0.3, alpha: 0, d: 0, theta: 0, mass: 0.6, com: [0.1, 0.05, 0], inertia: [0.01, 0.01, 0.02],
     stiffness: 2, springref: 1.0}
"""
MJCF = """
<mujoco>
  <compiler angle="radian"/>
  <option gravity="0 -9.81 0"/>
  <worldbody>
    <body name="b1">
      <joint name="j1" type="hinge" axis="0 0 1" stiffness="3" springref="0.4" damping="0.2" armature="0.05"/>
      <inertial pos="0.2 0 0" mass="1.5" diaginertia="0.01 0.02 0.03"/>
      <body name="b2" pos="0.5 0 0">
        <joint name="j2" type="slide" axis="0 0 1" stiffness="7" springref="-0.1"/>
        <inertial pos="0 0.1 0" mass="0.8" diaginertia="0.02 0.01 0.03"/>
        <body name="b3" pos="0.3 0 0">
          <joint name="j3" type="hinge" axis="0 0 1" stiffness="2" springref="1.0"/>
          <inertial pos="0.1 0.05 0" mass="0.6" diaginertia="0.01 0.01 0.02"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
K, Q_REF = np.array([3.0, 7.0, 2.0]), np.array([0.4, -0.1, 1.0])


@pytest.fixture(scope="module")
def robot(tmp_path_factory: pytest.TempPathFactory) -> Manipulator:
    path = tmp_path_factory.mktemp("springs") / "springs.yaml"
    path.write_text(MODEL)
    return rd.load(str(path))


def _states(n: int, count: int, seed: int = 3) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [tuple(rng.uniform(-1, 1, n) for _ in range(3)) for _ in range(count)]  # type: ignore[misc]


def test_the_model_file_gives_k_times_q_minus_q_ref_at_rest_without_gravity(robot: Manipulator) -> None:
    assert [float(link.stiffness) for link in robot.links] == list(K)
    assert [float(link.springref) for link in robot.links] == list(Q_REF)
    weightless = robot.replace(gravity=(0, 0, 0))
    zero = np.zeros(3)
    for q, _, _ in _states(3, 3):
        expected = K * (q - Q_REF)  # by hand: nothing else acts at rest without gravity
        assert np.allclose(numeric.inverse_dynamics(weightless, q, zero, zero), expected, rtol=0, atol=1e-14)
        assert np.allclose(numeric.bias_forces(weightless, q, zero), expected, rtol=0, atol=1e-14)
    assert np.array_equal(numeric.gravity(weightless, np.ones(3)), zero)  # the spring is not in G


def test_save_writes_the_spring_back(robot: Manipulator, tmp_path: pytest.TempPathFactory) -> None:
    path = tmp_path / "again.yaml"  # type: ignore[operator]
    robot.save(str(path))
    again = rd.load(str(path))
    assert [link.stiffness for link in again.links] == [link.stiffness for link in robot.links]
    assert [link.springref for link in again.links] == [link.springref for link in robot.links]


def test_numeric_engines_and_the_split(robot: Manipulator) -> None:
    for q, qd, qdd in _states(3, 4):
        tau = numeric.inverse_dynamics(robot, q, qd, qdd)
        spring = K * (q - Q_REF)
        parts = (numeric.mass_matrix(robot, q) @ qdd + numeric.coriolis(robot, q, qd) + numeric.gravity(robot, q)
                 + numeric.friction(robot, qd) + spring)
        assert np.allclose(tau, parts, rtol=0, atol=1e-12)
        assert np.allclose(numeric.forward_dynamics(robot, q, qd, tau), qdd, rtol=0, atol=1e-11)
        assert np.allclose(numeric.aba_forward_dynamics(robot, q, qd, tau), qdd, rtol=0, atol=1e-11)
    Q, QD, QDD = (np.array(x) for x in zip(*_states(3, 5), strict=True))  # a batch as the states one by one
    assert np.allclose(numeric.inverse_dynamics(robot, Q, QD, QDD),
                       [numeric.inverse_dynamics(robot, *s) for s in zip(Q, QD, QDD, strict=True)], rtol=0, atol=1e-13)


@pytest.mark.parametrize("method", ["newton-euler", "lagrange-euler", "dalembert", "kane", "emdeg"])
def test_every_formulation_has_the_spring_term(robot: Manipulator, method: str) -> None:
    eqs = rd.derive(robot, method)
    q = eqs.symbols.q
    assert eqs.spring == sympy.ImmutableMatrix([sympy.Integer(k) * (qi - sympy.Float(r)) for k, qi, r in
                                                zip(K, q, Q_REF, strict=True)]).expand()
    for state in _states(3, 2):
        values = dict(zip((*eqs.symbols.q, *eqs.symbols.qd, *eqs.symbols.qdd), np.concatenate(state), strict=True))
        tau = np.array(eqs.tau.subs(values), dtype=float).ravel()
        assert np.allclose(tau, numeric.inverse_dynamics(robot, *state), rtol=0, atol=1e-10)


def test_a_robot_without_springs_has_a_zero_spring_part() -> None:
    eqs = rd.derive(rd.load("double_pendulum"), "newton-euler")
    assert all(x == 0 for x in eqs.spring)
    assert "spring" not in eqs.form_matrices()


def test_analytic_derivatives_have_the_stiffness_on_the_diagonal(robot: Manipulator) -> None:
    arm, eps = arm_data(robot), 1e-6
    for q, qd, qdd in _states(3, 2):
        analytic = rnea_derivatives.id_jacobians(arm, NumpyOps(), list(q), list(qd), list(qdd), ["q"])["q"]
        columns = [(numeric.inverse_dynamics(robot, q + eps * e, qd, qdd)
                    - numeric.inverse_dynamics(robot, q - eps * e, qd, qdd)) / (2 * eps) for e in np.eye(3)]
        assert np.allclose(np.array(analytic, dtype=float), np.array(columns).T, rtol=0, atol=1e-8)
        without = robot.replace(links=tuple(link.replace(stiffness=0) for link in robot.links))
        rigid = rnea_derivatives.id_jacobians(arm_data(without), NumpyOps(), list(q), list(qd), list(qdd), ["q"])
        assert np.allclose(np.array(analytic, dtype=float) - np.array(rigid["q"], dtype=float), np.diag(K),
                           rtol=0, atol=1e-12)


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_compiled_c_equals_the_numeric_engine(robot: Manipulator) -> None:
    compiled = rd.compile(robot, outputs=["tau", "bias", "forward", "dtau", "dqdd"])
    eps = 1e-6
    for q, qd, qdd in _states(3, 3):
        tau = numeric.inverse_dynamics(robot, q, qd, qdd)
        assert np.allclose(compiled.inverse_dynamics(q, qd, qdd), tau, rtol=0, atol=1e-12)
        assert np.allclose(compiled.bias_forces(q, qd), numeric.bias_forces(robot, q, qd), rtol=0, atol=1e-12)
        assert np.allclose(compiled.forward_dynamics(q, qd, tau), qdd, rtol=0, atol=1e-11)
        dq = compiled.inverse_dynamics_derivatives(q, qd, qdd)[0]
        columns = [(numeric.inverse_dynamics(robot, q + eps * e, qd, qdd)
                    - numeric.inverse_dynamics(robot, q - eps * e, qd, qdd)) / (2 * eps) for e in np.eye(3)]
        assert np.allclose(dq, np.array(columns).T, rtol=0, atol=1e-8)
        dqdd = compiled.forward_dynamics_derivatives(q, qd, tau)[0]
        columns = [(numeric.forward_dynamics(robot, q + eps * e, qd, tau)
                    - numeric.forward_dynamics(robot, q - eps * e, qd, tau)) / (2 * eps) for e in np.eye(3)]
        assert np.allclose(dqdd, np.array(columns).T, rtol=0, atol=1e-7)


def test_mujoco_passive_force(robot: Manipulator) -> None:
    """MuJoCo's inverse dynamics M qdd + bias + armature qdd - qfrc_passive (its passive force is -k (q - springref)
    - b qd) equals robodyn's tau of the same robot written as a model file."""
    mujoco = pytest.importorskip("mujoco")
    model = mujoco.MjModel.from_xml_string(MJCF)
    data = mujoco.MjData(model)
    for q, qd, qdd in _states(3, 4):
        data.qpos[:], data.qvel[:], data.qacc[:] = q, qd, qdd
        mujoco.mj_fwdPosition(model, data)
        mujoco.mj_fwdVelocity(model, data)
        rne = np.zeros(3)
        mujoco.mj_rne(model, data, 1, rne)
        theirs = rne + model.dof_armature * qdd - data.qfrc_passive
        assert np.allclose(data.qfrc_spring, -K * (q - Q_REF), rtol=0, atol=1e-12)
        assert np.allclose(numeric.inverse_dynamics(robot, q, qd, qdd), theirs, rtol=0, atol=1e-12)


def test_floating_engine_against_pinocchio_plus_the_springs() -> None:
    pin = pytest.importorskip("pinocchio")
    from tests.numeric.test_floating import ROBOTS, SOLO12, _load, _path, _pinocchio_q

    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    from robodyn.model import joints

    plain = _load(SOLO12)
    rng = np.random.default_rng(5)
    k, q_ref = rng.uniform(0.5, 5, plain.n), rng.uniform(-1, 1, plain.n)
    robot = plain.replace(links=tuple(link.replace(stiffness=float(a), springref=float(b))
                                      for link, a, b in zip(plain.links, k, q_ref, strict=True)))
    model = pin.buildModelFromUrdf(str(_path(SOLO12)), pin.JointModelFreeFlyer())
    data = model.createData()
    for _ in range(2):
        q = np.concatenate([joints.random_configuration(rng), rng.uniform(-1, 1, robot.nq - 7)])
        v, a = rng.uniform(-1, 1, robot.nv), rng.uniform(-1, 1, robot.nv)
        spring = np.concatenate([np.zeros(6), k * (q[7:] - q_ref)])
        damping = np.concatenate([np.zeros(6), model.damping[6:]]) * v
        qp = _pinocchio_q(model, q)
        tau = pin.rnea(model, data, qp, v, a) + damping + spring
        assert np.allclose(numeric.inverse_dynamics(robot, q, v, a), tau, rtol=0, atol=1e-9)
        assert np.allclose(numeric.forward_dynamics(robot, q, v, tau), a, rtol=0, atol=1e-8)
        assert np.allclose(floating.forward_dynamics(robot, q, v, tau, method="cholesky"), a, rtol=0, atol=1e-8)
        dq = pin.computeRNEADerivatives(model, data, qp, v, a)[0]
        ours = numeric.inverse_dynamics_derivatives(robot, q, v, a)[0]
        assert np.allclose(ours, dq + np.diag(np.concatenate([np.zeros(6), k])), rtol=0, atol=1e-9)


def test_refusals() -> None:
    with pytest.raises(ModelError, match=r"stiffness.*negative"):
        Link(joint="R", stiffness=-1)
    with pytest.raises(ModelError, match="spring on a spherical joint is not supported"):
        Link(joint="S", stiffness=2)
    with pytest.raises(ModelError, match=r"link 1.*stiffness"):
        rd.Manipulator.from_dh([{"joint": "S", "stiffness": 1}], convention="modified")
    Link(joint="S", springref=0.3)  # (a reference alone is no spring)


def test_a_symbolic_stiffness_takes_its_value() -> None:
    k = sympy.Symbol("k")
    robot = Manipulator(links=(Link(joint="R", mass=1, com=(0.1, 0, 0), stiffness=k, springref=0.2),),
                        gravity=(0, 0, 0))
    assert k in robot.parameters()
    zero = np.zeros(1)
    assert np.allclose(numeric.inverse_dynamics(robot, np.array([0.7]), zero, zero, params={"k": 4.0}), [2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eqs = rd.derive(robot)
    assert eqs.spring[0] == sympy.expand(k * (eqs.symbols.q[0] - sympy.Float(0.2)))
    assert dataclasses.replace(robot.links[0], stiffness=0).has_spring is False


def test_numeric_spring_and_its_energy(robot: Manipulator) -> None:
    for q, _, _ in _states(3, 2):
        assert np.allclose(numeric.spring(robot, q), K * (q - Q_REF), rtol=0, atol=1e-15)
        assert np.isclose(numeric.spring_energy(robot, q), 0.5 * np.sum(K * (q - Q_REF) ** 2), rtol=1e-15)
        eps = 1e-6  # the energy's gradient is the spring
        gradient = [(numeric.spring_energy(robot, q + eps * e) - numeric.spring_energy(robot, q - eps * e)) / (2 * eps)
                    for e in np.eye(3)]
        assert np.allclose(gradient, numeric.spring(robot, q), rtol=0, atol=1e-8)
    Q = np.array([s[0] for s in _states(3, 4)])
    assert numeric.spring(robot, Q).shape == (4, 3) and numeric.spring_energy(robot, Q).shape == (4,)


def test_free_motion_conserves_kinetic_gravity_and_spring_energy(robot: Manipulator) -> None:
    undamped = robot.replace(links=tuple(link.replace(damping=0) for link in robot.links))
    result = rd.simulate(undamped, 1.0, q0=[0.1, 0.2, -0.3], engine="numpy", method="DOP853", rtol=1e-11, atol=1e-11,
                         samples=51)
    spring_part = numeric.spring_energy(undamped, result.q)
    assert np.max(np.abs(spring_part)) > 0.1  # the springs store a real part of it
    assert np.allclose(result.potential, rd.analysis.simulation.gravity_energy(undamped, result.q) + spring_part)
    assert result.energy_drift() < 1e-8


def test_equilibrium_and_linearisation_with_springs(robot: Manipulator) -> None:
    from robodyn.analysis.linear import linearize
    from robodyn.analysis.simulation import stable_equilibrium

    weightless = robot.replace(gravity=(0, 0, 0))
    assert np.allclose(stable_equilibrium(weightless, np.zeros(3), tol=1e-12), Q_REF, rtol=0, atol=1e-6)
    q0 = np.array([0.3, 0.1, -0.2])
    linear = linearize(robot, q0)  # about the equilibrium held by tau0 = G + spring
    assert np.allclose(linear.tau0, numeric.gravity(robot, q0) + K * (q0 - Q_REF), rtol=0, atol=1e-12)
    eps, zero = 1e-6, np.zeros(3)
    columns = [(numeric.forward_dynamics(robot, q0 + eps * e, zero, linear.tau0)
                - numeric.forward_dynamics(robot, q0 - eps * e, zero, linear.tau0)) / (2 * eps) for e in np.eye(3)]
    assert np.allclose(linear.A[3:, :3], np.array(columns).T, rtol=0, atol=1e-7)


def test_identification_takes_the_springs_as_known_torques(robot: Manipulator) -> None:
    from robodyn import identification as ident

    Y, p = ident.regressor(robot)
    spring = ident.regressor(robot).spring
    symbols = rd.derive(robot).symbols
    for q, qd, qdd in _states(3, 2):
        values = dict(zip((*symbols.q, *symbols.qd, *symbols.qdd), np.concatenate([q, qd, qdd]), strict=True))
        tau = np.array((Y * p + spring).subs(values), dtype=float).ravel()
        assert np.allclose(tau, numeric.inverse_dynamics(robot, q, qd, qdd), rtol=0, atol=1e-10)
        numeric_Y = ident.numeric_regressor(robot, q, qd, qdd)
        assert np.allclose(numeric_Y @ np.array(p, dtype=float).ravel() + numeric.spring(robot, q),
                           numeric.inverse_dynamics(robot, q, qd, qdd), rtol=0, atol=1e-10)
    base = ident.base_parameters(robot)  # the base-parameter program: Y_b b + the springs (known torques)
    built = rd.program.build(robot, ("tau",), base=base)
    q, qd, qdd = _states(3, 1)[0]
    values = dict(zip(base.names, (float(x) for x in base.numeric_values()), strict=True))
    values.update({f"{name}{j + 1}": float(x[j]) for name, x in (("q", q), ("qd", qd), ("qdd", qdd)) for j in range(3)})
    assert np.allclose(built.evaluate(values)["tau"], numeric.inverse_dynamics(robot, q, qd, qdd), rtol=0, atol=1e-12)
    k = sympy.Symbol("k")
    symbolic = robot.replace(links=(robot.links[0].replace(stiffness=k), *robot.links[1:]))
    for call in (ident.regressor, ident.base_parameters):
        with pytest.raises(ModelError, match=r"link 1.*stiffness.*symbolic joint stiffness \(k\) is not identified"):
            call(symbolic)


LEGGED = """
name: legged
floating: true
base: {mass: 3, com: [0, 0, 0.05], inertia: [0.05, 0.06, 0.04]}
gravity: [0, 0, -9.81]
links:
  - {name: hip, joint: R, a: 0.3, alpha: pi/2, d: 0, theta: 0, mass: 1, com: [-0.15, 0, 0],
     inertia: [0.001, 0.01, 0.01], stiffness: 4, springref: 0.3}
  - {name: knee, joint: R, a: 0.3, alpha: 0, d: 0, theta: 0, mass: 0.5, com: [-0.15, 0, 0],
     inertia: [0.001, 0.005, 0.005], stiffness: 2.5, springref: -0.5, damping: 0.1}
"""


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_floating_and_ball_robots_compiled(tmp_path: pytest.TempPathFactory) -> None:
    """A floating robot's compiled tau, forward dynamics and dtau/dq equal the floating engine's, which adds the
    springs on the joints' rows; beside a ball joint (no spring there) the revolute joint's spring is its own."""
    from robodyn.model import joints

    legged = tmp_path / "legged.yaml"  # type: ignore[operator]
    legged.write_text(LEGGED)
    robot = rd.load(str(legged))
    rng = np.random.default_rng(1)
    q = np.concatenate([joints.random_configuration(rng), rng.uniform(-1, 1, 2)])
    v, a = rng.uniform(-1, 1, robot.nv), rng.uniform(-1, 1, robot.nv)
    tau = numeric.inverse_dynamics(robot, q, v, a)
    relaxed = robot.replace(links=tuple(link.replace(stiffness=0) for link in robot.links))
    assert np.allclose(tau - numeric.inverse_dynamics(relaxed, q, v, a),
                       [0] * 6 + [4 * (q[7] - 0.3), 2.5 * (q[8] + 0.5)], rtol=0, atol=1e-12)
    compiled = rd.compile(robot, outputs=["tau", "forward", "dtau"])
    assert np.allclose(compiled.inverse_dynamics(q, v, a), tau, rtol=0, atol=1e-12)
    assert np.allclose(compiled.forward_dynamics(q, v, tau), a, rtol=0, atol=1e-10)
    assert np.allclose(compiled.inverse_dynamics_derivatives(q, v, a)[0],
                       numeric.inverse_dynamics_derivatives(robot, q, v, a)[0], rtol=0, atol=1e-11)
    ball_path = tmp_path / "ball.yaml"  # type: ignore[operator]
    ball_path.write_text(LEGGED.replace("floating: true\n", "").replace("name: hip, joint: R", "name: hip, joint: S")
                         .replace("base: {mass: 3, com: [0, 0, 0.05], inertia: [0.05, 0.06, 0.04]}\n", "")
                         .replace("stiffness: 4, springref: 0.3", ""))
    ball = rd.load(str(ball_path))
    qb = np.concatenate([joints.random_configuration(rng)[3:], [0.4]])
    vb, ab = rng.uniform(-1, 1, ball.nv), rng.uniform(-1, 1, ball.nv)
    tau_b = numeric.inverse_dynamics(ball, qb, vb, ab)
    relaxed_b = ball.replace(links=tuple(link.replace(stiffness=0) for link in ball.links))
    assert np.allclose(tau_b - numeric.inverse_dynamics(relaxed_b, qb, vb, ab), [0, 0, 0, 2.5 * (0.4 + 0.5)],
                       rtol=0, atol=1e-12)
    assert np.allclose(rd.compile(ball, outputs=["tau"]).inverse_dynamics(qb, vb, ab), tau_b, rtol=0, atol=1e-12)
    assert np.allclose(numeric.forward_dynamics(ball, qb, vb, tau_b), ab, rtol=0, atol=1e-10)


COUPLED = """
name: coupled
convention: modified
gravity: [0, -9.81, 0]
links:
  - {name: a, joint: R, mass: 1.5, com: [0.2, 0, 0], inertia: [0.01, 0.02, 0.03], stiffness: 3, springref: 0.4}
  - {name: b, joint: R, a: 0.5, mass: 0.8, com: [0.1, 0, 0], inertia: [0.02, 0.01, 0.03], stiffness: 7,
     springref: -0.1}
  - {name: c, joint: R, a: 0.3, mass: 0.6, com: [0.1, 0.05, 0], inertia: [0.01, 0.01, 0.02]}
couplings:
  - {joint: b, leader: a, ratio: 2, offset: 0.1}
"""


def test_a_coupled_joints_spring_acts_through_the_coupling(tmp_path: pytest.TempPathFactory) -> None:
    path = tmp_path / "coupled.yaml"  # type: ignore[operator]
    path.write_text(COUPLED)
    robot = rd.load(str(path))
    rng = np.random.default_rng(2)
    q, qd, qdd = (rng.uniform(-1, 1, robot.nv) for _ in range(3))
    # q_b = 2 q_a + 0.1: W^T k (q_tree - q_ref) = (3 (q_a - 0.4) + 2 * 7 (q_b + 0.1), 0)
    assert np.allclose(numeric.spring(robot, q), [3 * (q[0] - 0.4) + 14 * (2 * q[0] + 0.2), 0], rtol=0, atol=1e-14)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    eqs = rd.derive(robot, "lagrange-euler")
    values = dict(zip((*eqs.symbols.q, *eqs.symbols.qd, *eqs.symbols.qdd), np.concatenate([q, qd, qdd]), strict=True))
    assert np.allclose(np.array(eqs.tau.subs(values), dtype=float).ravel(), tau, rtol=0, atol=1e-12)
    assert np.allclose(np.array(eqs.spring.subs(values), dtype=float).ravel(), numeric.spring(robot, q), atol=1e-13)


def test_a_closed_chain_with_springs_conserves_its_energy() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fivebar = rd.load("fivebar")
    sprung = fivebar.replace(links=tuple(link.replace(stiffness=3.0, springref=0.2) for link in fivebar.links))
    free, held = (rd.simulate(robot, 0.5, engine="numpy", method="DOP853", rtol=1e-10, atol=1e-10, samples=11)
                  for robot in (fivebar, sprung))
    assert not np.allclose(free.q, held.q, atol=1e-2)  # the springs move it
    assert held.energy_drift() < 1e-8


@pytest.mark.parametrize("route", ["recursive", "factored", "expanded", "aba"])
def test_every_program_route_has_the_springs(robot: Manipulator, route: str) -> None:
    from robodyn import program

    outputs = ("forward",) if route == "aba" else ("tau", "bias", "h", "G")
    built = program.build(robot, outputs, route=route)
    for q, qd, qdd in _states(3, 2):
        tau = numeric.inverse_dynamics(robot, q, qd, qdd)
        values = {f"{name}{j + 1}": float(x[j]) for name, x in (("q", q), ("qd", qd), ("qdd", qdd), ("tau", tau))
                  for j in range(3)}
        out = built.evaluate(values)
        if route == "aba":
            assert np.allclose(out["forward"], qdd, rtol=0, atol=1e-11)
            continue
        assert np.allclose(out["tau"], tau, rtol=0, atol=1e-11)
        assert np.allclose(out["bias"], numeric.bias_forces(robot, q, qd), rtol=0, atol=1e-11)
        assert np.allclose(out["h"], numeric.coriolis(robot, q, qd), rtol=0, atol=1e-11)  # no spring in h or G
        assert np.allclose(out["G"], numeric.gravity(robot, q), rtol=0, atol=1e-11)

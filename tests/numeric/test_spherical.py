"""Spherical (ball) joints anywhere in the tree (robodyn.model.joints' SPHERICAL, a link's ``joint`` S), on a fixed
and a floating base, in the numeric engine (robodyn.numeric.floating): inverse dynamics, M and forward dynamics
against Pinocchio's model of the same tree built by hand with ``JointModelSpherical`` (from the DH conventions
written out here, not from robodyn's frames) and against MuJoCo's ``mj_rne`` / ``mj_fullM`` / ``mj_forward`` of an
MJCF file with ``ball`` joints; the joint's manifold functions against ``pinocchio.integrate`` / ``difference``;
the centroidal momentum's rate against the external force (gravity); energy and momentum along rd.simulate; the
model file's ``joint: spherical``; the one-line refusals of every path that takes one coordinate per joint."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.errors import ModelError
from robodyn.model import joints
from robodyn.model.manipulator import Link, Manipulator, RigidBody
from robodyn.numeric import floating

pin = pytest.importorskip("pinocchio")

GRAVITY = np.array([0.3, -0.2, -9.81])
TOL = 1e-10


def _rotation(rng: np.random.Generator) -> np.ndarray:
    return joints.quaternion_matrix(joints.random_configuration(rng, joint="S"))


def _transform(R: np.ndarray, p: np.ndarray) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def _rot(axis: int, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    i, j = [k for k in range(3) if k != axis]
    R = np.eye(3)
    R[i, i], R[i, j], R[j, i], R[j, j] = c, -s, s, c
    return R


def _body(rng: np.random.Generator) -> tuple[float, np.ndarray, np.ndarray]:
    """A physical body: mass, centre of mass, the inertia of a box about it (turned)."""
    m = float(rng.uniform(0.5, 2.0))
    x, y, z = rng.uniform(0.05, 0.3, 3)
    R = _rotation(rng)
    box = m / 12 * np.array([y * y + z * z, x * x + z * z, x * x + y * y])
    return m, rng.uniform(-0.1, 0.1, 3), R @ np.diag(box) @ R.T


#: The tree: two spherical joints (one on the base, one on a branch) and a revolute one below the first, a prismatic
#: one below the second; standard DH with every offset nonzero and a placement on each spherical row.
KINDS, PARENTS = ("S", "R", "S", "P"), (-1, 0, -1, 2)
DH = ((0.2, 0.1, 0.3, 0.4), (0.1, 0.05, 0.2, -0.5), (-0.3, 0.2, 0.1, 0.7), (0.4, -0.1, 0.15, 0.2))  # theta d a alpha
ARMATURE = (0.05, 0.02, 0.03, 0.01)
BASE = (2.0, np.array([0.01, 0.02, 0.03]), np.diag([0.1, 0.12, 0.09]))


class Tree:
    """The robot in robodyn and the same one in Pinocchio, built from the conventions."""

    def __init__(self, floating_base: bool) -> None:
        rng = np.random.default_rng(11)
        self.P = [_transform(_rotation(rng), rng.uniform(-0.3, 0.3, 3)) if k == "S" else np.eye(4) for k in KINDS]
        self.bodies = [_body(rng) for _ in KINDS]
        links = [Link(joint=k, placement=self.P[i].tolist(), theta=DH[i][0], d=DH[i][1], a=DH[i][2], alpha=DH[i][3],
                      mass=self.bodies[i][0], com=self.bodies[i][1].tolist(), inertia=self.bodies[i][2].tolist(),
                      armature=ARMATURE[i], name=f"j{i}") for i, k in enumerate(KINDS)]
        base = RigidBody(mass=BASE[0], com=BASE[1].tolist(), inertia=BASE[2].tolist()) if floating_base else None
        self.robot = Manipulator(links=links, parent=PARENTS, gravity=GRAVITY.tolist(), floating=floating_base,
                                 base=base)
        self.model = self._pinocchio(floating_base)
        self.data = self.model.createData()

    def _pinocchio(self, floating_base: bool) -> object:
        """Standard DH: A_i = P_i Rot(z, theta) Trans(z, d) Trans(x, a) Rot(x, alpha), the joint (z, or the ball)
        after Trans(z, d), the body in link frame i = joint frame times C_i = Trans(x, a) Rot(x, alpha)."""
        model = pin.Model()
        model.gravity.linear = GRAVITY
        root = 0
        if floating_base:
            root = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root")
            model.appendBodyToJoint(root, pin.Inertia(BASE[0], BASE[1], BASE[2]), pin.SE3.Identity())
        ids, C = [], []
        for i, kind in enumerate(KINDS):
            theta, d, a, alpha = DH[i]
            screw = _transform(_rot(2, theta), np.array([0, 0, d]))
            C.append(_transform(_rot(0, alpha), np.array([a, 0, 0])))
            placement = (C[PARENTS[i]] if PARENTS[i] >= 0 else np.eye(4)) @ self.P[i] @ screw
            joint = {"S": pin.JointModelSpherical(), "R": pin.JointModelRZ(), "P": pin.JointModelPZ()}[kind]
            parent = root if PARENTS[i] < 0 else ids[PARENTS[i]]
            ids.append(model.addJoint(parent, joint, pin.SE3(placement[:3, :3], placement[:3, 3]), f"j{i}"))
            m, c, inertia = self.bodies[i]
            model.appendBodyToJoint(ids[-1], pin.Inertia(m, c, inertia), pin.SE3(C[i][:3, :3], C[i][:3, 3]))
            joint_model = model.joints[ids[-1]]
            model.armature[joint_model.idx_v:joint_model.idx_v + joint_model.nv] = ARMATURE[i]
        return model

    def states(self, count: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rng = np.random.default_rng(seed)
        q = np.stack([pin.randomConfiguration(self.model, -np.ones(self.model.nq), np.ones(self.model.nq))
                      for _ in range(count)])
        v, a = rng.uniform(-1, 1, (2, count, self.model.nv))
        return q, v, a


@pytest.fixture(scope="module", params=[False, True], ids=["fixed", "floating"])
def tree(request: pytest.FixtureRequest) -> Tree:
    return Tree(request.param)


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(1.0, float(np.abs(b).max())))


def test_sizes_and_indices_are_pinocchios(tree: Tree) -> None:
    robot, model = tree.robot, tree.model
    assert (robot.nq, robot.nv, robot.spherical, robot.joint_types) == (model.nq, model.nv, (0, 2), "SRSP")
    first = 2 if robot.floating else 1  # (Pinocchio's universe, then the free flyer)
    assert [robot.idx_q(k) for k in range(robot.n)] == [model.joints[j].idx_q for j in range(first, model.njoints)]
    assert [robot.idx_v(k) for k in range(robot.n)] == [model.joints[j].idx_v for j in range(first, model.njoints)]


def test_dynamics_agree_with_pinocchio(tree: Tree) -> None:
    robot, model, data = tree.robot, tree.model, tree.data
    q, v, a = tree.states(4, seed=3)
    tau = numeric.inverse_dynamics(robot, q, v, a)
    M = numeric.mass_matrix(robot, q)
    qdd = numeric.forward_dynamics(robot, q, v, a)
    for k in range(len(q)):
        M_pin = pin.crba(model, data, q[k])
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        assert _relative(tau[k], pin.rnea(model, data, q[k], v[k], a[k])) < TOL
        assert _relative(M[k], M_pin) < TOL
        assert _relative(qdd[k], pin.aba(model, data, q[k], v[k], a[k])) < TOL
        assert _relative(numeric.inverse_dynamics(robot, q[k], v[k], a[k]), tau[k]) < 1e-14  # one state as a batch
    if robot.floating:  # the centre of mass and the centroidal map too
        for k in range(2):
            assert _relative(numeric.center_of_mass(robot, q[k]), pin.centerOfMass(model, data, q[k])) < TOL
            assert _relative(numeric.centroidal_map(robot, q[k]), pin.computeCentroidalMap(model, data, q[k])) < TOL


def test_bias_coriolis_and_gravity_agree_with_pinocchio(tree: Tree) -> None:
    robot, model, data = tree.robot, tree.model, tree.data
    q, v, _ = tree.states(3, seed=5)
    bias, h, G = numeric.bias_forces(robot, q, v), numeric.coriolis(robot, q, v), numeric.gravity(robot, q)
    for k in range(len(q)):
        gravity = pin.computeGeneralizedGravity(model, data, q[k])
        assert _relative(bias[k], pin.nonLinearEffects(model, data, q[k], v[k])) < TOL
        assert _relative(h[k], pin.nonLinearEffects(model, data, q[k], v[k]) - gravity) < TOL
        assert _relative(G[k], gravity) < TOL
        np.testing.assert_array_equal(bias[k], numeric.inverse_dynamics(robot, q[k], v[k], np.zeros(robot.nv)))


def test_damping_acts_on_each_velocity_of_a_ball() -> None:
    robot = Tree(False).robot
    damped = robot.replace(links=tuple(link.replace(damping=0.7) if link.spherical else link for link in robot.links))
    q, v, a = Tree(False).states(2, seed=4)
    expected = np.zeros_like(v)
    expected[:, 0:3], expected[:, 4:7] = 0.7 * v[:, 0:3], 0.7 * v[:, 4:7]
    np.testing.assert_allclose(numeric.inverse_dynamics(damped, q, v, a) - numeric.inverse_dynamics(robot, q, v, a),
                               expected, rtol=0, atol=1e-12)


def _configuration(robot: Manipulator, q: np.ndarray, dv: np.ndarray) -> np.ndarray:
    """q (+) dv joint by joint: the base and each ball on their manifolds (joints.integrate), the others added."""
    out = q.copy()
    if robot.floating:
        out[:7] = joints.integrate(q[:7], dv[:6])
    for k in range(robot.n):
        iq, iv = robot.idx_q(k), robot.idx_v(k)
        if robot.links[k].spherical:
            out[iq:iq + 4] = joints.integrate(q[iq:iq + 4], dv[iv:iv + 3], joint="S")
        else:
            out[iq] = q[iq] + dv[iv]
    return out


def test_momentum_rate_is_the_weight() -> None:
    """Free motion (tau = 0) of the floating tree: d/dt of the centroidal momentum is (m g; 0), by central
    differences along q(t) = q (+) (t v + t^2/2 v'), v(t) = v + t v'."""
    tree = Tree(True)
    robot = tree.robot
    q, v, _ = tree.states(1, seed=5)
    q, v = q[0], v[0]
    vdot = numeric.forward_dynamics(robot, q, v, np.zeros(robot.nv))
    h = 1e-5  # (the differences' error: 7e-7 at h = 1e-4, 7e-9 here)
    momenta = [numeric.centroidal_momentum(robot, _configuration(robot, q, t * v + t * t / 2 * vdot), v + t * vdot)
               for t in (-h, h)]
    rate = (momenta[1] - momenta[0]) / (2 * h)
    mass = BASE[0] + sum(body[0] for body in tree.bodies)
    np.testing.assert_allclose(rate, np.concatenate([mass * GRAVITY, np.zeros(3)]), rtol=0, atol=1e-7)


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
def test_simulation_conserves_energy_and_momentum(floating_base: bool) -> None:
    """rd.simulate moves each ball's quaternion on its sphere: the energy stays (under gravity), and the momentum of
    the floating tree without gravity; torque='gravity' holds the fixed tree where it starts."""
    tree = Tree(floating_base)
    robot = tree.robot.replace(gravity=[0, 0, 0]) if floating_base else tree.robot
    q, v, _ = tree.states(1, seed=9)
    result = rd.simulate(robot, 0.2, q[0], v[0], method="DOP853", rtol=1e-11, atol=1e-11, samples=5)
    assert result.energy_drift() < 1e-9
    quaternions = [robot.idx_q(k) + np.arange(4) for k in robot.spherical]
    np.testing.assert_allclose(np.linalg.norm(result.q[:, quaternions], axis=-1), 1.0, rtol=0, atol=1e-15)
    if floating_base:
        h = numeric.centroidal_momentum(robot, result.q, result.qd)
        assert np.abs(h - h[0]).max() < 1e-9
    else:
        held = rd.simulate(robot, 0.1, q[0], torque="gravity", samples=3)
        assert np.abs(held.qd).max() < 1e-9


def test_spherical_joint_manifold_is_pinocchios() -> None:
    assert (joints.SPHERICAL.nq, joints.SPHERICAL.nv) == (4, 3) and joints.JOINT_TYPES["S"] is joints.SPHERICAL
    np.testing.assert_array_equal(joints.motion_subspace("S"), np.vstack([np.zeros((3, 3)), np.eye(3)]))
    model = pin.Model()
    model.addJoint(0, pin.JointModelSpherical(), pin.SE3.Identity(), "ball")
    rng = np.random.default_rng(6)
    q = joints.random_configuration(rng, 5, joint="S")
    assert q.shape == (5, 4) and joints.is_normalized(q, joint="S")
    np.testing.assert_array_equal(joints.neutral("S"), pin.neutral(model))
    for k in range(5):
        v = rng.uniform(-1, 1, 3)
        q1 = joints.integrate(q[k], v, 0.7, joint="S")
        expected = pin.integrate(model, q[k], v * 0.7)
        assert min(np.abs(q1 - expected).max(), np.abs(q1 + expected).max()) < 1e-12  # (the same rotation)
        np.testing.assert_allclose(joints.difference(q[k], q1, joint="S"), v * 0.7, atol=1e-10)
        np.testing.assert_allclose(joints.difference(q[k], q1, joint="S"), pin.difference(model, q[k], q1), atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(joints.normalize(2 * q, joint="S"), axis=-1), 1.0, rtol=0, atol=1e-15)


# -- MuJoCo -----------------------------------------------------------------------------------------------------


def _mjcf_body(name: str, pos: str, joint: str, inner: str = "", quat: str = "1 0 0 0") -> str:
    return (f'<body name="{name}" pos="{pos}" quat="{quat}">{joint}<inertial pos="0.05 0.02 -0.1" mass="1.3" '
            f'fullinertia="0.03 0.025 0.02 0.001 -0.002 0.003"/>{inner}</body>')


def _mjcf(directory: Path, free: bool) -> Path:
    """A torso (floating or fixed) with a ball hip (off its body's origin, turned, damping and armature) carrying a
    hinge knee, and a second ball at a shoulder."""
    knee = _mjcf_body("shin", "0 0 -0.3", '<joint name="knee" axis="0 1 0.3" pos="0 0 0.02" damping="0.2" '
                                          'armature="0.01"/>')
    hip = _mjcf_body("thigh", "0.2 0 0", '<joint name="hip" type="ball" pos="0.01 0.02 0" damping="0.3" '
                                         'armature="0.05"/>', knee, quat="0.8 0.3 0.1 0.2")
    shoulder = _mjcf_body("arm", "-0.2 0 0", '<joint name="shoulder" type="ball"/>')
    root = '<freejoint name="root"/>' if free else ""
    path = directory / f"balls{int(free)}.xml"
    path.write_text(f'<mujoco model="balls"><option gravity="0.3 -0.2 -9.81"/><worldbody><body name="torso" '
                    f'pos="0.1 0.2 0.5" quat="0.9 0.1 0.2 0.3">{root}<geom type="box" size="0.2 0.1 0.05" mass="3"/>'
                    f'{hip}{shoulder}</body></worldbody></mujoco>', encoding="utf-8")
    return path


@pytest.mark.parametrize("free", [False, True], ids=["fixed", "floating"])
def test_mjcf_ball_joints_agree_with_mujoco(tmp_path: Path, free: bool) -> None:
    """ID (mj_rne with the accelerations, damping and armature), M (mj_fullM) and forward dynamics (mj_forward,
    constraints off) to 1e-9, and the ball's quaternion reordered from MuJoCo's (w, x, y, z)."""
    mujoco = pytest.importorskip("mujoco")
    from robodyn.formats.mjcf import from_mujoco
    from tests.formats.test_mjcf import _floating_against_mujoco

    path = _mjcf(tmp_path, free)
    robot = rd.load(path)
    assert (robot.joint_types, robot.spherical, robot.floating) == ("SRS", (0, 2), free)
    assert _floating_against_mujoco(robot, path, seed=7) < 1e-9
    model = mujoco.MjModel.from_xml_path(str(path))
    qpos = np.asarray(model.qpos0, dtype=float) + 0.1
    hip = robot.idx_q(0)
    qpos[hip:hip + 4] /= np.linalg.norm(qpos[hip:hip + 4])
    state = from_mujoco(robot, qpos, np.zeros(model.nv), np.zeros(model.nv), np.zeros(model.nv))
    np.testing.assert_array_equal(state.q[hip:hip + 4], np.roll(qpos[hip:hip + 4], -1))  # (x, y, z, w)


# -- model files ----------------------------------------------------------------------------------------------


def test_model_file_spherical_joint(tmp_path: Path) -> None:
    path = tmp_path / "ball.yaml"
    path.write_text("name: ball\nconvention: modified\ngravity: [0, 0, -9.81]\nlinks:\n"
                    "  - {joint: spherical, d: 0.1, mass: 1, com: [0, 0, -0.2], inertia: [0.02, 0.02, 0.01]}\n"
                    "  - {joint: R, a: 0.3, mass: 0.5, com: [0.1, 0, 0], inertia: [0.01, 0.02, 0.02]}\n",
                    encoding="utf-8")
    robot = rd.load(path)
    assert (robot.joint_types, robot.nq, robot.nv) == ("SR", 5, 4)
    again = rd.load(robot.save(tmp_path / "again.yaml"))
    q, v, a = np.array([0.1, -0.2, 0.3, 0.9, 0.4]), np.array([0.3, -0.1, 0.2, 0.5]), np.array([0.1, 0.2, -0.3, 0.4])
    q[:4] /= np.linalg.norm(q[:4])
    assert again.joint_types == "SR"
    np.testing.assert_array_equal(numeric.inverse_dynamics(again, q, v, a), numeric.inverse_dynamics(robot, q, v, a))
    # at rest the ball holds the weight's moment about its centre (0, 0, 0.1), in its child frame
    tau = numeric.inverse_dynamics(robot, q, np.zeros(4), np.zeros(4))
    weight = 1.5 * np.array([0, 0, -9.81])
    moment = np.cross(numeric.center_of_mass(robot, q) - [0, 0, 0.1], weight)
    np.testing.assert_allclose(tau[:3], -joints.quaternion_matrix(q[:4]).T @ moment, rtol=0, atol=1e-13)


# -- refusals -------------------------------------------------------------------------------------------------


def _refused(call: object, *words: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ModelError) as info:
            call()  # type: ignore[operator]
    message = str(info.value)
    assert "\n" not in message and "spherical" in message, message
    for word in words:
        assert word in message, message


def test_one_coordinate_paths_refuse_it(tree: Tree) -> None:
    from robodyn.formats.urdf import to_urdf

    robot = tree.robot
    q, v, _ = tree.states(1, seed=8)
    _refused(lambda: rd.derive(robot), "'j0'")
    _refused(lambda: rd.program.build(robot, ("tau",), route="emdeg"), "'j0'", "emdeg")  # (recursive: taken)
    _refused(lambda: floating.forward_dynamics(robot, q, v, v, method="aba"), "method='cholesky'")
    _refused(lambda: rd.identification.regressor(robot.replace(floating=False, base=None)), "identification")
    _refused(lambda: to_urdf(robot), "to_urdf")
    _refused(lambda: robot.q_from({"j0": 0.1}, default=0.0), "q_from")
    if robot.floating:
        from robodyn.numeric import floating_derivatives

        _refused(lambda: floating_derivatives.inverse_dynamics_derivatives(robot, q[0], v[0], v[0]), "'j0'")
    else:
        from robodyn.numeric import kinematics

        _refused(lambda: kinematics.jacobian(robot, q[0]), "inverse_dynamics")


def test_couplings_with_a_ball_are_refused() -> None:
    links = [Link(joint="S", mass=1, inertia=[0.1, 0.1, 0.1]), Link(joint="R", mass=1, inertia=[0.1, 0.1, 0.1])]
    with pytest.raises(ModelError, match="spherical joint in a robot with couplings"):
        Manipulator(links=links, couplings=[rd.model.couplings.Coupling(1, 0, 1)])


def test_the_guide_example_runs_as_written(tmp_path: Path) -> None:
    """docs/guide/floating.md's "Spherical joints" example, in a fresh process that imports what a user would."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "floating.md").read_text(encoding="utf-8")
    text = text[text.index("## Spherical joints"):]
    code = text[text.index("```python") + len("```python"):]
    code = code[:code.index("```")]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[:4] == ["4 3", "[9.81 0.   0.  ]", "[-19.235   0.      0.   ]",
                                          "[-19.235   0.      0.   ]"], out.stdout

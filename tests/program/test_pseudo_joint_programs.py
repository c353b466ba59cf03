"""Programs of robots with spherical (ball) and planar joints (robodyn.recursions.pseudo_joints: each as three
coincident pseudo-joints, the chain's extra products of rates taken out of their accelerations), on a fixed and a
floating base: every output against Pinocchio's model of the same tree, in the program (evaluated exactly as built)
and in compiled C through ``rd.compile``; the derivatives with respect to the tangent (Pinocchio's
computeRNEADerivatives / computeABADerivatives). Balls: tests/numeric/test_spherical.py's ``Tree`` (two balls, a
revolute and a prismatic joint, armature on each, Pinocchio's model built by hand with ``JointModelSpherical``);
planar: tests/numeric/test_planar.py's URDF (a planar joint with a revolute child, ``pinocchio.buildModelFromUrdf``).
Also: damping on a ball against the numeric engine; the generated files' word on where the quaternions and the
planar coordinates sit; the one-line refusals of what is not built."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric, program
from robodyn.errors import ModelError
from tests.numeric.test_planar import URDF
from tests.numeric.test_spherical import DH, Tree

pin = pytest.importorskip("pinocchio")

OUTPUTS = ("tau", "M", "h", "G", "bias", "forward", "dtau_dq", "dtau_dqd", "dqdd_dq", "dqdd_dqd", "dqdd_dtau")
TOL = 1e-12


class Slider:
    """tests/numeric/test_planar.py's robot and Pinocchio's model of the same URDF file (:class:`Tree`'s interface)."""

    def __init__(self, floating_base: bool, path) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.robot = rd.load(path, floating=floating_base)
        self.model = (pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating_base
                      else pin.buildModelFromUrdf(str(path)))
        self.data = self.model.createData()

    states = Tree.states  # (Pinocchio's random configurations, uniform rates: it reads self.model only)


@pytest.fixture(scope="module", params=[("S", False), ("S", True), ("planar", False), ("planar", True)],
                ids=["ball-fixed", "ball-floating", "planar-fixed", "planar-floating"])
def tree(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Tree | Slider:
    kind, floating_base = request.param
    if kind == "S":
        return Tree(floating_base)
    path = tmp_path_factory.mktemp("planar") / "slider.urdf"
    path.write_text(URDF)
    return Slider(floating_base, path)


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(1.0, float(np.abs(b).max())))


def _symmetric(M: np.ndarray) -> np.ndarray:
    return np.triu(M) + np.triu(M, 1).T


def _values(names: dict[str, list[str]], **arrays: np.ndarray) -> dict[str, float]:
    """The program's input values: each array's entries under its input's names."""
    return {name: float(x) for key, array in arrays.items() for name, x in zip(names[key], array, strict=True)}


def _reference(tree: Tree, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> dict[str, np.ndarray]:
    """Pinocchio's every output at one state (forward at tau = ID(q, v, a), so that it gives a back)."""
    model, data = tree.model, tree.data
    tau = pin.rnea(model, data, q, v, a)
    out = {"tau": tau, "M": _symmetric(pin.crba(model, data, q)), "bias": pin.rnea(model, data, q, v, 0 * v),
           "G": pin.computeGeneralizedGravity(model, data, q), "forward": a}
    out["h"] = out["bias"] - out["G"]
    pin.computeRNEADerivatives(model, data, q, v, a)
    out["dtau_dq"], out["dtau_dqd"] = data.dtau_dq.copy(), data.dtau_dv.copy()
    pin.computeABADerivatives(model, data, q, v, tau)
    out["dqdd_dq"], out["dqdd_dqd"] = data.ddq_dq.copy(), data.ddq_dv.copy()
    out["dqdd_dtau"] = _symmetric(data.Minv)
    return out


def test_every_program_agrees_with_pinocchio(tree: Tree | Slider) -> None:
    robot = tree.robot
    built = program.build(robot, OUTPUTS)
    assert built.route == ("recursive (floating base)" if robot.floating else "recursive (spherical or planar joints)")
    names = {k: [str(s) for s in built.inputs[k]] for k in ("q", "qd", "qdd", "tau")}
    assert (len(names["q"]), len(names["qd"])) == (robot.nq, robot.nv)
    coordinates, rates = (("x", "y", "z", "w"), ("x", "y", "z")) if robot.spherical else (("x", "y", "cos", "sin"),
                                                                                          ("x", "y", "theta"))
    assert names["q"][robot.idx_q(0):robot.idx_q(0) + 4] == [f"q1_{c}" for c in coordinates]
    assert names["qd"][robot.idx_v(0):robot.idx_v(0) + 3] == [f"qd1_{c}" for c in rates]
    nv = robot.nv
    q, v, a = tree.states(3, seed=3)
    for k in range(3):
        ref = _reference(tree, q[k], v[k], a[k])
        values = _values(names, q=q[k], qd=v[k], qdd=a[k], tau=ref["tau"])
        got = built.evaluate(values)
        for name in OUTPUTS:
            value = np.reshape(got[name], ref[name].shape)
            assert _relative(value, ref[name]) < TOL * (100 if name.startswith("dqdd") or name == "forward"
                                                        else 1), (name, k)
        assert np.reshape(got["M"], (nv, nv)).shape == (nv, nv)


def test_compiled_c_agrees_with_pinocchio(tree: Tree | Slider) -> None:
    """rd.compile's C: batches of (N, nq) and (N, nv), one state too; tau, M, forward, and dtau on a fixed base (the
    derivatives' programs are checked exactly above; their C is the floating base's,
    tests/program/test_floating_derivative_programs.py)."""
    robot = tree.robot
    dyn = rd.compile(robot, outputs=["tau", "M", "forward"] + ([] if robot.floating else ["dtau"]))
    assert (dyn.nq, dyn.n) == (robot.nq, robot.nv)
    q, v, a = tree.states(4, seed=7)
    refs = [_reference(tree, q[k], v[k], a[k]) for k in range(4)]
    tau = dyn.inverse_dynamics(q, v, a)
    assert tau.shape == (4, robot.nv)
    assert _relative(tau, np.array([r["tau"] for r in refs])) < TOL
    assert _relative(dyn.mass_matrix(q), np.array([r["M"] for r in refs])) < TOL
    assert _relative(dyn.forward_dynamics(q, v, tau), a) < 100 * TOL
    for k in range(0 if robot.floating else 2):
        dq, dqd = dyn.inverse_dynamics_derivatives(q[k], v[k], a[k])
        assert _relative(dq, refs[k]["dtau_dq"]) < TOL and _relative(dqd, refs[k]["dtau_dqd"]) < TOL


def test_the_centroidal_outputs_of_a_floating_tree_with_balls() -> None:
    tree = Tree(True)
    built = program.build(tree.robot, ("com", "centroidal_map"))
    q, _, _ = tree.states(2, seed=5)
    names = {"q": [str(s) for s in built.inputs["q"]]}
    for k in range(2):
        got = built.evaluate(_values(names, q=q[k]))
        assert _relative(np.array(got["com"]), pin.centerOfMass(tree.model, tree.data, q[k])) < TOL
        assert _relative(np.reshape(got["centroidal_map"], (6, tree.robot.nv)),
                         pin.computeCentroidalMap(tree.model, tree.data, q[k])) < TOL


def test_damping_on_a_ball_is_the_numeric_engines() -> None:
    """The ball's damping acts on each of its three rates (outside the pseudo-joints' recursion): tau and bias, and
    dtau/dqd, of the damped tree against the numeric engine."""
    tree = Tree(False)
    robot = tree.robot.replace(links=tuple(link.replace(damping=0.7) if link.spherical else link
                                           for link in tree.robot.links))
    built = program.build(robot, ("tau", "bias", "dtau_dqd"))
    undamped = program.build(tree.robot, ("dtau_dqd",))
    q, v, a = tree.states(2, seed=6)
    names = {k: [str(s) for s in built.inputs[k]] for k in ("q", "qd", "qdd")}
    for k in range(2):
        values = _values(names, q=q[k], qd=v[k], qdd=a[k])
        got = built.evaluate(values)
        assert _relative(np.array(got["tau"]), numeric.inverse_dynamics(robot, q[k], v[k], a[k])) < TOL
        assert _relative(np.array(got["bias"]), numeric.inverse_dynamics(robot, q[k], v[k], 0 * a[k])) < TOL
        difference = (np.reshape(got["dtau_dqd"], (robot.nv, robot.nv))
                      - np.reshape(undamped.evaluate(values)["dtau_dqd"], (robot.nv, robot.nv)))
        expected = np.zeros(robot.nv)
        for ball in robot.spherical:
            expected[robot.idx_v(ball):robot.idx_v(ball) + 3] = 0.7
        np.testing.assert_allclose(difference, np.diag(expected), rtol=0, atol=1e-12)


def test_the_generated_files_say_where_the_coordinates_are(tree: Tree | Slider) -> None:
    robot = tree.robot
    files = rd.codegen.generate(robot, "c", ["tau"])
    header = files[f"{robot.name}.h"]
    where = ", ".join(f"q[{robot.idx_q(k)}:{robot.idx_q(k) + 4}] and qd[{robot.idx_v(k)}:{robot.idx_v(k) + 3}]"
                      for k in robot.multi_dof)
    text = " ".join(line.strip(" *") for line in header.splitlines())
    assert (f"entries): {where}: a joint's UNIT quaternion" in text) == bool(robot.spherical), text[:1500]
    assert (f"entries): {where}: a joint's x, y, cos theta" in text) == bool(robot.planar), text[:1500]
    assert ("Floating base: q holds nq = " in header) == robot.floating
    assert f"NQ = {robot.nq}  # the length of q" in rd.codegen.generate(robot, "numpy", ["tau"])[f"{robot.name}.py"]


def _pinocchio_frame(tree: Tree | Slider, name: str) -> int:
    """Pinocchio's frame of robodyn's link frame ``name``: the URDF's body frame, or (the hand-built tree, standard DH)
    the joint's frame times Trans(x, a) Rot(x, alpha)."""
    if isinstance(tree, Slider):
        return int(tree.model.getFrameId(name))
    if tree.model.existFrame(f"link_{name}"):
        return int(tree.model.getFrameId(f"link_{name}"))
    _, _, a, alpha = DH[int(name[1:])]
    C = np.eye(4)
    C[:3, :3] = [[1, 0, 0], [0, np.cos(alpha), -np.sin(alpha)], [0, np.sin(alpha), np.cos(alpha)]]
    C[0, 3] = a
    frame = pin.Frame(f"link_{name}", tree.model.getJointId(name), 0, pin.SE3(C[:3, :3], C[:3, 3]),
                      pin.FrameType.OP_FRAME)
    index = int(tree.model.addFrame(frame))
    tree.data = tree.model.createData()
    return index


def test_frames_agree_with_pinocchio(tree: Tree | Slider) -> None:
    """The frames' programs: the pose, the Jacobians in the three references and their time derivatives of the frame
    moved by the spherical (planar) joint and of one below it, against Pinocchio's frame placement,
    getFrameJacobian and getFrameJacobianTimeVariation (whose q-rates move each quaternion on its sphere)."""
    robot = tree.robot
    moved, below = ("j0", "j1") if robot.spherical else ("body", "arm")
    outputs = {f"pose:{moved}": ("pose", moved), f"jacobian:{moved}": (pin.LOCAL_WORLD_ALIGNED, moved),
               f"jacobian_world:{below}": (pin.WORLD, below), f"jacobian_local:{moved}": (pin.LOCAL, moved),
               f"jacobian_dot:{below}": ("dot", pin.LOCAL_WORLD_ALIGNED, below),
               f"jacobian_local_dot:{moved}": ("dot", pin.LOCAL, moved)}
    frames = {name: _pinocchio_frame(tree, name) for name in (moved, below)}
    built = program.build(robot, tuple(outputs))
    names = {k: [str(s) for s in built.inputs[k]] for k in ("q", "qd")}
    model, data, nv = tree.model, tree.data, robot.nv
    q, v, _ = tree.states(2, seed=8)
    for k in range(2):
        got = built.evaluate(_values(names, q=q[k], qd=v[k]))
        pin.computeJointJacobians(model, data, q[k])
        pin.computeJointJacobiansTimeVariation(model, data, q[k], v[k])
        pin.updateFramePlacements(model, data)
        for output, what in outputs.items():
            frame = frames[what[-1]]
            if what[0] == "pose":
                expected, value = data.oMf[frame].homogeneous, np.reshape(got[output], (4, 4))
            elif what[0] == "dot":
                expected = pin.getFrameJacobianTimeVariation(model, data, frame, what[1])
                value = np.reshape(got[output], (6, nv))
            else:
                expected, value = pin.getFrameJacobian(model, data, frame, what[0]), np.reshape(got[output], (6, nv))
            assert _relative(value, expected) < TOL, (output, k)


def test_what_is_not_built_is_refused_in_one_line(tree: Tree | Slider) -> None:
    robot = tree.robot
    for call, words in ((lambda: rd.compile(robot, outputs=["tau"], backend="cuda"), ("'cuda'",)),):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ModelError) as info:
                call()
        assert "\n" not in str(info.value) and all(w in str(info.value) for w in words), str(info.value)
    if not robot.floating:
        with pytest.raises(ModelError, match="floating base"):
            program.build(robot, ("com",))
    k = robot.multi_dof[0]
    rough = robot.replace(links=tuple(link.replace(coulomb=0.3) if i == k else link
                                      for i, link in enumerate(robot.links)))
    with pytest.raises(ModelError) as info:
        program.build(rough, ("tau",))
    assert "\n" not in str(info.value) and f"link {robot.label(k)!r}: Coulomb friction" in str(info.value)


@pytest.mark.parametrize("free", [False, True], ids=["fixed", "floating"])
def test_compiled_mjcf_balls_agree_with_mujoco(tmp_path, free: bool) -> None:
    """An MJCF file with two ``ball`` joints (damping and armature on one) and a hinge, read through MuJoCo's compiler
    and compiled to C: ID (mj_rne with the accelerations, damping and armature), M (mj_fullM) and forward dynamics
    (mj_forward, constraints off) to 1e-9, as the numeric engine is checked (tests/numeric/test_spherical.py)."""
    pytest.importorskip("mujoco")
    from tests.formats.test_mjcf import _floating_against_mujoco
    from tests.numeric.test_spherical import _mjcf

    path = _mjcf(tmp_path, free)
    robot = rd.load(path)
    dyn = rd.compile(robot, outputs=["tau", "M", "forward"])

    class Compiled:  # (the numeric engine's calls, on the compiled routines)
        @staticmethod
        def inverse_dynamics(_robot, q, v, a):
            return dyn.inverse_dynamics(q, v, a)

        @staticmethod
        def mass_matrix(_robot, q):
            return dyn.mass_matrix(q)

        @staticmethod
        def forward_dynamics(_robot, q, v, tau):
            return dyn.forward_dynamics(q, v, tau)

    assert _floating_against_mujoco(robot, path, seed=7, engine=Compiled) < 1e-9


def test_casadi_functions_of_a_tree_with_balls() -> None:
    """robodyn.interop.to_casadi: q of nq entries (each ball's quaternion in its place), the rest nv; tau, M and
    dtau/dq against Pinocchio."""
    pytest.importorskip("casadi")
    tree = Tree(True)
    function = rd.interop.to_casadi(tree.robot, outputs=["tau", "M", "dtau_dq"])
    assert [function.size_in(i)[0] for i in range(3)] == [tree.robot.nq, tree.robot.nv, tree.robot.nv]
    q, v, a = tree.states(2, seed=12)
    for k in range(2):
        ref = _reference(tree, q[k], v[k], a[k])
        tau, M, dq = (np.array(x) for x in function(q[k], v[k], a[k]))
        assert _relative(tau.ravel(), ref["tau"]) < TOL and _relative(M, ref["M"]) < TOL
        assert _relative(dq, ref["dtau_dq"]) < TOL


@pytest.mark.parametrize("model", ["ball", "floating"])
def test_the_trajectory_commands_refuse_in_one_line(tmp_path, model: str) -> None:
    """`robodyn torques` and `simplify-model` take joint trajectories (one coordinate per joint, fixed base): a ball
    or a floating base gets one line and exit 2 (no traceback), `robodyn count` builds the program."""
    from typer.testing import CliRunner

    from robodyn.cli import app

    ball = "joint: spherical" if model == "ball" else "joint: R"
    path = tmp_path / "pendulum.yaml"
    path.write_text("name: pendulum\nconvention: modified\ngravity: [0, 0, -9.81]\n"
                    + ("floating: true\nbase: {mass: 1, inertia: [0.1, 0.1, 0.1]}\n" if model == "floating" else "")
                    + f"links:\n  - {{name: top, {ball}, mass: 2, com: [0, 0, -0.5], inertia: [0.01, 0.01, 0.002]}}\n")
    runner = CliRunner()
    for command in ("torques", "simplify-model"):
        result = runner.invoke(app, [command, str(path)])
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.output
        assert ("spherical joint" if model == "ball" else "floating base") in lines[0]
    result = runner.invoke(app, ["count", str(path), "--outputs", "forward"])
    assert result.exit_code == 0 and "forward:" in result.output, result.output


@pytest.mark.parametrize("variant", [("qd",), ("q", "qd")], ids=["qd-analytic", "analytic-asked"])
def test_the_analytic_qd_derivatives_with_pseudo_joints(tree: Tree | Slider, monkeypatch, variant) -> None:
    """The analytic form along qd, forced (robodyn.program.routes.ANALYTIC_VARIANTS), with a damped joint of three
    velocities: the chain rule through the pseudo-joints' shifted accelerations and the damping on their diagonal,
    against Pinocchio's computeRNEADerivatives (damping added) and computeABADerivatives; the form along q is never
    taken with such a joint (the "analytic" candidate falls back to forward mode there)."""
    from robodyn.program import routes

    monkeypatch.setattr(routes, "ANALYTIC_VARIANTS", (variant,))
    k = tree.robot.multi_dof[0]
    robot = tree.robot.replace(links=tuple(link.replace(damping=0.4) if i == k else link
                                           for i, link in enumerate(tree.robot.links)))
    built = program.build(robot, ("dtau_dq", "dtau_dqd", "dqdd_dqd"))
    names = {key: [str(s) for s in built.inputs[key]] for key in ("q", "qd", "qdd", "tau")}
    damping = np.zeros(robot.nv)
    damping[robot.idx_v(k):robot.idx_v(k) + 3] = 0.4
    nv = robot.nv
    q, v, a = tree.states(2, seed=13)
    for s in range(2):
        ref = _reference(tree, q[s], v[s], a[s])
        tau = ref["tau"] + damping * v[s]
        got = built.evaluate(_values(names, q=q[s], qd=v[s], qdd=a[s], tau=tau))
        assert _relative(np.reshape(got["dtau_dq"], (nv, nv)), ref["dtau_dq"]) < TOL
        assert _relative(np.reshape(got["dtau_dqd"], (nv, nv)), ref["dtau_dqd"] + np.diag(damping)) < TOL
        pin.computeABADerivatives(tree.model, tree.data, q[s], v[s], ref["tau"])  # (Pinocchio: no damping)
        Minv = _symmetric(tree.data.Minv)
        assert _relative(np.reshape(got["dqdd_dqd"], (nv, nv)), tree.data.ddq_dv - Minv @ np.diag(damping)) < 100 * TOL

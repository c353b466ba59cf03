"""Programs of robots with spherical (ball) joints (robodyn.recursions.spherical: each ball as three coincident
revolute pseudo-joints, the chain's products of rates taken out of their accelerations), on a fixed and a floating
base: every output against Pinocchio's model of the same tree built by hand with ``JointModelSpherical``
(tests/numeric/test_spherical.py's ``Tree``: two balls, a revolute and a prismatic joint, armature on each), in the
program (evaluated exactly as built) and in compiled C through ``rd.compile``; the derivatives with respect to the
tangent (Pinocchio's computeRNEADerivatives / computeABADerivatives); damping on a ball against the numeric engine;
the generated files' word on where the quaternions sit; the one-line refusals of what is not built."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric, program
from robodyn.errors import ModelError
from tests.numeric.test_spherical import Tree

pin = pytest.importorskip("pinocchio")

OUTPUTS = ("tau", "M", "h", "G", "bias", "forward", "dtau_dq", "dtau_dqd", "dqdd_dq", "dqdd_dqd", "dqdd_dtau")
TOL = 1e-12


@pytest.fixture(scope="module", params=[False, True], ids=["fixed", "floating"])
def tree(request: pytest.FixtureRequest) -> Tree:
    return Tree(request.param)


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


def test_every_program_agrees_with_pinocchio(tree: Tree) -> None:
    robot = tree.robot
    built = program.build(robot, OUTPUTS)
    assert built.route == ("recursive (floating base)" if robot.floating else "recursive (spherical joints)")
    names = {k: [str(s) for s in built.inputs[k]] for k in ("q", "qd", "qdd", "tau")}
    assert (len(names["q"]), len(names["qd"])) == (robot.nq, robot.nv)
    assert names["q"][robot.idx_q(0):robot.idx_q(0) + 4] == ["q1_x", "q1_y", "q1_z", "q1_w"]
    assert names["qd"][robot.idx_v(0):robot.idx_v(0) + 3] == ["qd1_x", "qd1_y", "qd1_z"]
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


def test_compiled_c_agrees_with_pinocchio(tree: Tree) -> None:
    """rd.compile's C: batches of (N, nq) and (N, nv), one state too; tau, M, forward, dtau, dqdd."""
    robot = tree.robot
    dyn = rd.compile(robot, outputs=["tau", "M", "forward", "dtau", "dqdd"])
    assert (dyn.nq, dyn.n) == (robot.nq, robot.nv)
    q, v, a = tree.states(4, seed=7)
    refs = [_reference(tree, q[k], v[k], a[k]) for k in range(4)]
    tau = dyn.inverse_dynamics(q, v, a)
    assert tau.shape == (4, robot.nv)
    assert _relative(tau, np.array([r["tau"] for r in refs])) < TOL
    assert _relative(dyn.mass_matrix(q), np.array([r["M"] for r in refs])) < TOL
    assert _relative(dyn.forward_dynamics(q, v, tau), a) < 100 * TOL
    dq, dqd = dyn.inverse_dynamics_derivatives(q[0], v[0], a[0])
    assert _relative(dq, refs[0]["dtau_dq"]) < TOL and _relative(dqd, refs[0]["dtau_dqd"]) < TOL
    ddq, ddqd, minv = dyn.forward_dynamics_derivatives(q[1], v[1], tau[1])
    assert _relative(ddq, refs[1]["dqdd_dq"]) < 100 * TOL and _relative(ddqd, refs[1]["dqdd_dqd"]) < 100 * TOL
    assert _relative(minv, refs[1]["dqdd_dtau"]) < 100 * TOL


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


def test_a_tree_without_balls_keeps_its_program() -> None:
    """The same tree with its balls made revolute joints: no pseudo-joint, and its program is the fixed-base
    recursive route's (the floating module is not entered)."""
    tree = Tree(False)
    plain = tree.robot.replace(links=tuple(link.replace(joint="R") if link.spherical else link
                                           for link in tree.robot.links))
    assert not program.build(plain, ("tau",)).route.endswith("(spherical joints)")


def test_the_generated_files_say_where_the_quaternions_are(tmp_path) -> None:
    tree = Tree(True)
    files = rd.codegen.generate(tree.robot, "c", ["tau"])
    header = files[f"{tree.robot.name}.h"]
    starts = ", ".join(str(tree.robot.idx_q(k)) for k in tree.robot.spherical)
    assert f"from q[{starts}] a joint's UNIT quaternion" in header
    assert "Floating base: q holds nq = " in header


def test_what_is_not_built_is_refused_in_one_line(tree: Tree) -> None:
    robot = tree.robot
    for call, words in ((lambda: program.build(robot, ("jacobian",)), ("spherical joint", "'j0'", "frames")),
                        (lambda: rd.compile(robot, outputs=["tau"], backend="cuda"), ("'cuda'",))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ModelError) as info:
                call()
        assert "\n" not in str(info.value) and all(w in str(info.value) for w in words), str(info.value)
    if not robot.floating:
        with pytest.raises(ModelError, match="floating base"):
            program.build(robot, ("com",))

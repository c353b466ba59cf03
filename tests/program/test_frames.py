"""The generated kinematics of named frames (issue 29, part 3): the Program outputs ``pose``, ``jacobian``,
``jacobian_world``, ``jacobian_local`` and their ``_dot`` (of the frame F: ``"pose:F"``), emitted in every
language and compiled by ``rd.compile(..., frames=[...])``: the Panda's ``panda_hand`` against Pinocchio to 1e-12
(the C library), and robots of both conventions with symbolic parameters against the numeric engine."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn import codegen, program
from robodyn.numeric import kinematics as nk
from robodyn.program.outputs import FRAME_OUTPUTS, KEYS
from tests.conftest import load_quiet, random_params
from tests.numeric.test_frames import REFERENCES, panda_path

pin = pytest.importorskip("pinocchio")

FRAME_KEYS = [key for key in KEYS if key in FRAME_OUTPUTS]
PLACEMENT = [[0.0, -1.0, 0.0, 0.05], [1.0, 0.0, 0.0, -0.02], [0.0, 0.0, 1.0, 0.1], [0.0, 0.0, 0.0, 1.0]]


def _methods(name: str) -> tuple[str, str]:
    """(CompiledDynamics method, numeric reference) of a Jacobian output."""
    base = name.removesuffix("_dot")
    reference = {"jacobian": "local_world_aligned", "jacobian_world": "world", "jacobian_local": "local"}[base]
    return f"frame_{name}", reference


def test_panda_hand_compiled_c_matches_pinocchio(tmp_path) -> None:
    path = panda_path()
    robot = rd.load(path)
    dyn = rd.compile(robot, outputs=FRAME_KEYS, frames=["panda_hand", "panda_hand_tcp"], cache=tmp_path)
    assert dyn.frames == ("panda_hand", "panda_hand_tcp") and dyn.backend == "c"
    model = pin.buildModelFromUrdf(str(path), mimic=True)
    data = model.createData()
    rng = np.random.default_rng(5)
    Q, QD = rng.uniform(-2, 2, (2, 6, robot.nv))
    for frame in dyn.frames:
        fid = model.getFrameId(frame, pin.BODY)
        poses = dyn.frame_pose(Q, frame=frame)
        for s in range(len(Q)):
            pin.framesForwardKinematics(model, data, Q[s])
            pin.computeJointJacobians(model, data, Q[s])
            pin.computeJointJacobiansTimeVariation(model, data, Q[s], QD[s])
            pin.updateFramePlacements(model, data)
            np.testing.assert_allclose(poses[s], data.oMf[fid].homogeneous, rtol=0, atol=1e-12)
            np.testing.assert_allclose(dyn.frame_pose(Q[s], frame=frame), poses[s], rtol=0, atol=0)
            for reference, name in REFERENCES.items():
                which = getattr(pin.ReferenceFrame, name)
                suffix = {"local_world_aligned": "", "world": "_world", "local": "_local"}[reference]
                J = getattr(dyn, f"frame_jacobian{suffix}")(Q[s], frame=frame)
                Jdot = getattr(dyn, f"frame_jacobian{suffix}_dot")(Q[s], QD[s], frame=frame)
                np.testing.assert_allclose(J, pin.getFrameJacobian(model, data, fid, which), rtol=0, atol=1e-12)
                np.testing.assert_allclose(Jdot, pin.getFrameJacobianTimeVariation(model, data, fid, which), rtol=0,
                                           atol=1e-12)
    with pytest.warns(rd.BuildNote, match="frame_pose of frame 'panda_link3' was not compiled"):
        link3 = dyn.frame_pose(Q[0], frame="panda_link3")  # a frame left out: built on first use, said once
    np.testing.assert_allclose(link3, nk.frame_pose(robot, Q[0], "panda_link3"), rtol=0, atol=1e-12)
    assert dyn.frame_jacobian(Q).shape == (6, 6, 8)  # the first compiled frame by default


@pytest.mark.parametrize("name", ["two_link_payload", "puma560_symbolic", "stanford_modified"])
def test_generated_numpy_matches_the_numeric_engine(name: str) -> None:
    """Symbolic parameters bound at run time, standard and modified DH, a frame on a middle link at a general
    placement, and the tool frame (""), in every output."""
    robot = load_quiet(name)
    robot = robot.replace(frames=[{"name": "probe", "link": robot.n // 2, "placement": PLACEMENT}])
    params = random_params(robot, np.random.default_rng(6))
    spec = codegen.module_spec(robot, FRAME_KEYS, frames=["probe", ""])
    module = codegen.load_python(robot, "numpy", spec=spec)
    k = module.constants([params[p] for p in spec.parameters])
    rng = np.random.default_rng(7)
    q, qd = rng.uniform(-2, 2, (2, 3, robot.nv))
    for index, frame in enumerate(("probe", None)):
        np.testing.assert_allclose(module.frame_pose(k, q)[:, index], nk.frame_pose(robot, q, frame, params),
                                   rtol=0, atol=1e-12)
        for key in FRAME_KEYS[1:]:
            method, reference = _methods(key)
            got = getattr(module, method)(k, q, qd) if key.endswith("_dot") else getattr(module, method)(k, q)
            expected = (nk.jacobian_dot(robot, q, qd, params, frame=frame, reference=reference) if key.endswith("_dot")
                        else nk.jacobian(robot, q, params, frame=frame, reference=reference))
            np.testing.assert_allclose(got[:, index], expected, rtol=0, atol=1e-11, err_msg=f"{key} {frame}")


def test_program_outputs_carry_the_frame() -> None:
    robot = load_quiet("puma560").replace(frames=[{"name": "flange", "link": 5, "placement": PLACEMENT}])
    built = program.build(robot, ("pose:flange", "jacobian:flange", "jacobian"))
    assert list(built.outputs) == ["pose:flange", "jacobian:flange", "jacobian"]
    assert len(built.outputs["pose:flange"]) == 16 and len(built.outputs["jacobian"]) == 36
    assert [str(x) for x in built.outputs["pose:flange"][12:]] == ["0", "0", "0", "1"]
    with pytest.raises(ValueError, match="no frame named 'wrist'"):
        program.build(robot, ("pose:wrist",))
    with pytest.raises(ValueError, match="unknown output 'posture'"):
        program.build(robot, ("posture",))
    with pytest.raises(ValueError, match="frames' kinematics"):
        program.build(robot, ("pose",), route="expanded")
    with pytest.raises(ValueError, match="frames= names the frames"):
        codegen.module_spec(robot, ["tau"], frames=["flange"])


def test_frames_leave_the_dynamics_programs_alone() -> None:
    """The dynamics of a robot with named frames are those without (frames are kinematics only), and a program
    of both is the two programs' outputs."""
    robot = load_quiet("puma560")
    framed = robot.replace(frames=[{"name": "flange", "link": 5, "placement": PLACEMENT}])
    assert codegen.generate(framed, "c", ["tau", "M"]) == codegen.generate(robot, "c", ["tau", "M"])
    both = program.build(framed, ("tau", "jacobian:flange"))
    tau = program.build(framed, ("tau",))
    assert both.count()["evaluation"].multiplications > tau.count()["evaluation"].multiplications


@pytest.mark.parametrize("language", ["c", "fortran", "jax"])
def test_every_language_emits_the_frames(language: str) -> None:
    robot = load_quiet("two_link_fu").replace(frames=[{"name": "tip", "link": 1, "placement": PLACEMENT}])
    files = codegen.generate(robot, language, ["pose", "jacobian_dot"],
                             spec=codegen.module_spec(robot, ["pose", "jacobian_dot"], frames=["tip"]))
    text = "\n".join(files.values())
    assert "frame_pose" in text and "frame_jacobian_dot" in text and "tip" not in text.replace("multiplications", "")

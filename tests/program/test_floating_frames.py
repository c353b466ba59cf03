"""The named frames' kinematics of a robot on a floating base (robodyn.program.frames, FloatingBase): the pose in the
world, the Jacobians 6 x nv in the three references (the base's columns along its body-frame twist) and their time
derivatives, in compiled C (and the generated NumPy module), against Pinocchio with a ``JointModelFreeFlyer`` root
(``getFrameJacobian``, ``getFrameJacobianTimeVariation``, and dJ/dt v against ``getFrameClassicalAcceleration`` at
zero acceleration) at random states (random unit quaternions) on Solo's feet, a lower leg and the base (nv 14).
The C is compiled at -O0 (as tests/program/test_floating_derivative_programs.py); Fortran, JAX and the CUDA
kernels are generated from the same program."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import robodyn as rd
from robodyn import codegen, program
from robodyn.program.outputs import FRAME_OUTPUTS
from tests.helpers import quick_compiler
from tests.program.test_floating_programs import ROBOTS, Case

pin = pytest.importorskip("pinocchio")
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")

FRAMES = ("FL_FOOT", "HR_FOOT", "FR_LOWER_LEG", "base_link")
#: robodyn's output suffix of each of Pinocchio's references.
REFERENCES = {"LOCAL_WORLD_ALIGNED": "", "WORLD": "_world", "LOCAL": "_local"}
TOLERANCE = 1e-10


@pytest.fixture(scope="module")
def solo() -> Case:
    return Case("solo_description/robots/solo.urdf", 3)


@pytest.fixture(scope="module")
def compiled(solo: Case, tmp_path_factory: pytest.TempPathFactory) -> Any:
    quick = quick_compiler(tmp_path_factory.mktemp("cc"))
    return rd.compile(solo.robot, outputs=FRAME_OUTPUTS, frames=FRAMES, compiler=quick,
                      cache=tmp_path_factory.mktemp("cache"))


def _pinocchio(solo: Case, s: int) -> dict[tuple[str, str], np.ndarray]:
    """Pinocchio's pose, Jacobians and their time derivatives of each frame at state s (v' = 0)."""
    model, data = solo.model, solo.data
    q, v = solo.pinocchio_q(solo.q[s]), solo.v[s]
    pin.forwardKinematics(model, data, q, v, np.zeros(model.nv))
    pin.computeJointJacobians(model, data, q)
    pin.computeJointJacobiansTimeVariation(model, data, q, v)
    pin.updateFramePlacements(model, data)
    out = {}
    for frame in FRAMES:
        fid = model.getFrameId(frame)
        out["pose", frame] = data.oMf[fid].homogeneous
        for name, suffix in REFERENCES.items():
            which = getattr(pin.ReferenceFrame, name)
            out[f"jacobian{suffix}", frame] = pin.getFrameJacobian(model, data, fid, which)
            out[f"jacobian{suffix}_dot", frame] = pin.getFrameJacobianTimeVariation(model, data, fid, which)
        out["classical", frame] = pin.getFrameClassicalAcceleration(model, data, fid,
                                                                    pin.ReferenceFrame.LOCAL_WORLD_ALIGNED).vector
    return out


def _check(dyn: Any, solo: Case) -> float:
    """The largest difference of ``dyn``'s frame outputs from Pinocchio's (asserted below TOLERANCE)."""
    worst = 0.0
    for s in range(len(solo.q)):
        expected = _pinocchio(solo, s)
        q, v = solo.q[s], solo.v[s]
        for frame in FRAMES:
            for output in FRAME_OUTPUTS:
                method = getattr(dyn, f"frame_{output}")
                got = method(q, v, frame=frame) if output.endswith("_dot") else method(q, frame=frame)
                assert got.shape == ((4, 4) if output == "pose" else (6, 14))
                worst = max(worst, float(np.abs(got - expected[output, frame]).max()))
            # dJ/dt v, local_world_aligned: the classical acceleration of the frame's origin and its angular one, v' = 0
            worst = max(worst, float(np.abs(dyn.frame_jacobian_dot(q, v, frame=frame) @ v
                                            - expected["classical", frame]).max()))
    assert worst < TOLERANCE
    return worst


def test_compiled_c_against_pinocchio(solo: Case, compiled: Any) -> None:
    assert compiled.backend == "c" and compiled.frames == FRAMES and (compiled.nq, compiled.n) == (15, 14)
    _check(compiled, solo)
    batch = compiled.frame_jacobian_local_dot(solo.q, solo.v, frame="HR_FOOT")
    for s in range(len(solo.q)):
        np.testing.assert_array_equal(batch[s], compiled.frame_jacobian_local_dot(solo.q[s], solo.v[s],
                                                                                   frame="HR_FOOT"))


def test_numpy_module_against_pinocchio(solo: Case, tmp_path_factory: pytest.TempPathFactory) -> None:
    dyn = rd.compile(solo.robot, outputs=FRAME_OUTPUTS, frames=FRAMES, backend="numpy",
                     cache=tmp_path_factory.mktemp("cache"))
    _check(dyn, solo)


def test_lengths_and_names_are_checked(solo: Case, compiled: Any) -> None:
    with pytest.raises(ValueError, match=r"q of 'solo' must have shape \(15,\)") as raised:
        compiled.frame_jacobian(np.zeros(14), frame="FL_FOOT")
    assert "\n" not in str(raised.value)
    with pytest.raises(ValueError, match=r"qd of 'solo' must have shape \(14,\)"):
        compiled.frame_jacobian_dot(solo.q[0], np.zeros(15), frame="FL_FOOT")
    with pytest.raises(ValueError, match="no frame named 'FL_TOE'") as raised:
        program.build(solo.robot, ("jacobian:FL_TOE",))
    assert "\n" not in str(raised.value)
    with pytest.raises(ValueError, match="'FL_TOE'"):
        rd.compile(solo.robot, outputs=["pose"], frames=["FL_TOE"])


@pytest.mark.parametrize("language", ["fortran", "jax", "cuda"])
def test_every_language_emits_them(solo: Case, language: str) -> None:
    spec = codegen.module_spec(solo.robot, ["pose", "jacobian_dot"], frames=["FL_FOOT"])
    text = "\n".join(codegen.generate(solo.robot, language, spec=spec).values())
    assert "frame_pose" in text and "frame_jacobian_dot" in text and "FL_FOOT" not in text


def test_the_guide_s_counts(solo: Case) -> None:
    """docs/guide/floating.md's multiplications of one foot's outputs and of the four feet's."""
    feet = [f"{leg}_FOOT" for leg in ("FL", "FR", "HL", "HR")]
    counts = {(output, len(frames)): program.build(solo.robot, tuple(f"{output}:{f}" for f in frames)).count()[
        "evaluation"].multiplications for output in ("jacobian", "jacobian_dot", "pose") for frames in (feet[:1], feet)}
    assert counts == {("jacobian", 1): 53, ("jacobian_dot", 1): 105, ("pose", 1): 45,
                      ("jacobian", 4): 140, ("jacobian_dot", 4): 294, ("pose", 4): 117}

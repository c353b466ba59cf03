"""Named frames in the numeric engine (issue 29, part 3): the Panda's ``panda_hand`` (a fixed URDF link, 10.7 cm
and 45 degrees from panda_link7) and every other URDF link, against Pinocchio's ``framesForwardKinematics``,
``computeFrameJacobian`` and ``getFrameJacobianTimeVariation`` (an independent implementation) in its three
references; the Panda's finger mimic joint is a coupled coordinate here and in Pinocchio's
``buildModelFromUrdf(path, mimic=True)`` (8 coordinates, 9 joints); and ``ik.solve(frame=...)``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from benchmarks.urdf_survey import robots_directory

import robodyn as rd
from robodyn.analysis import ik
from robodyn.numeric import kinematics as nk

pin = pytest.importorskip("pinocchio")

TOL = 1e-12
REFERENCES = {"local_world_aligned": "LOCAL_WORLD_ALIGNED", "world": "WORLD", "local": "LOCAL"}


def panda_path() -> Path:
    directory = robots_directory()
    if directory is None or not (directory / "panda_description" / "urdf" / "panda.urdf").is_file():
        pytest.skip("example-robot-data's Panda is not installed")
    return directory / "panda_description" / "urdf" / "panda.urdf"


@pytest.fixture(scope="module")
def panda() -> tuple[rd.Manipulator, object, object]:
    path = panda_path()
    model = pin.buildModelFromUrdf(str(path), mimic=True)
    return rd.load(path), model, model.createData()


def test_panda_keeps_its_urdf_links_as_frames(panda) -> None:
    robot, model, _ = panda
    assert robot.nv == model.nv == 8 and robot.n == 9
    names = [f.name for f in robot.frames]
    assert {"panda_link0", "panda_link7", "panda_link8", "panda_hand", "panda_hand_tcp", "panda_leftfinger",
            "panda_rightfinger"} <= set(names)
    hand = robot.frame("panda_hand")
    assert hand.link == robot.frame("panda_link7").link == 6  # fixed to link 7 (0-based 6)
    assert hand.placement[2, 3] == pytest.approx(0.107, abs=0)  # the file's 0.107 m, exactly


def test_every_urdf_link_pose_matches_pinocchio(panda) -> None:
    robot, model, data = panda
    rng = np.random.default_rng(0)
    for _ in range(5):
        q = rng.uniform(-2, 2, robot.nv)
        pin.framesForwardKinematics(model, data, q)
        for frame in robot.frames:
            expected = data.oMf[model.getFrameId(frame.name, pin.BODY)].homogeneous
            np.testing.assert_allclose(nk.frame_pose(robot, q, frame.name), expected, rtol=0, atol=TOL,
                                       err_msg=frame.name)


@pytest.mark.parametrize("frame", ["panda_hand", "panda_hand_tcp", "panda_leftfinger", "panda_link0"])
@pytest.mark.parametrize("reference", list(REFERENCES))
def test_jacobians_and_their_rates_match_pinocchio(panda, frame: str, reference: str) -> None:
    robot, model, data = panda
    fid = model.getFrameId(frame, pin.BODY)
    which = getattr(pin.ReferenceFrame, REFERENCES[reference])
    rng = np.random.default_rng(1)
    Q, QD = rng.uniform(-2, 2, (2, 5, robot.nv))
    J = nk.jacobian(robot, Q, frame=frame, reference=reference)  # a batch
    Jdot = nk.jacobian_dot(robot, Q, QD, frame=frame, reference=reference)
    for s in range(len(Q)):
        pin.computeJointJacobians(model, data, Q[s])
        pin.computeJointJacobiansTimeVariation(model, data, Q[s], QD[s])
        pin.updateFramePlacements(model, data)
        np.testing.assert_allclose(J[s], pin.getFrameJacobian(model, data, fid, which), rtol=0, atol=TOL)
        np.testing.assert_allclose(Jdot[s], pin.getFrameJacobianTimeVariation(model, data, fid, which), rtol=0,
                                   atol=TOL)
        np.testing.assert_allclose(nk.jacobian(robot, Q[s], frame=frame, reference=reference), J[s], rtol=0, atol=0)


def test_jacobian_rate_is_the_time_derivative(panda) -> None:
    """dJ/dt against central differences of J along qd (no Pinocchio)."""
    robot, _, _ = panda
    rng = np.random.default_rng(2)
    q, qd = rng.uniform(-1, 1, (2, robot.nv))
    h = 1e-6
    for reference in REFERENCES:
        J = [nk.jacobian(robot, q + s * h * qd, frame="panda_hand", reference=reference) for s in (1, -1)]
        np.testing.assert_allclose(nk.jacobian_dot(robot, q, qd, frame="panda_hand", reference=reference),
                                   (J[0] - J[1]) / (2 * h), rtol=0, atol=1e-8)


def test_the_default_tool_frame_is_unchanged(panda) -> None:
    """frame=None stays the last link of the list times robot.tool (the Panda's: the right finger's joint frame,
    which is why the frame is to be named)."""
    robot, _, _ = panda
    q = np.linspace(-1, 1, robot.nv)
    last = robot.links[-1].name
    np.testing.assert_array_equal(nk.jacobian(robot, q), nk.jacobian(robot, q, frame=last))
    _, p = nk.tool_pose(robot, q)
    np.testing.assert_array_equal(nk.frame_pose(robot, q, last)[:3, 3], p)
    assert np.linalg.norm(nk.frame_pose(robot, q, "panda_hand")[:3, 3] - nk.frame_pose(robot, q, "panda_link7")[
        :3, 3]) == pytest.approx(0.107, abs=1e-15)


def test_unknown_frame_and_reference_are_refused(panda) -> None:
    robot, _, _ = panda
    with pytest.raises(ValueError, match=r"no frame named 'panda_foot'.*panda_hand"):
        nk.tool_pose(robot, np.zeros(robot.nv), frame="panda_foot")
    with pytest.raises(ValueError, match="unknown reference 'global'"):
        nk.jacobian(robot, np.zeros(robot.nv), frame="panda_hand", reference="global")


def test_ik_reaches_a_pose_of_panda_hand(panda) -> None:
    robot, model, data = panda
    rng = np.random.default_rng(3)
    q_true = rng.uniform(-1, 1, robot.nv)
    q_true[7] = 0.02  # the fingers (which do not move the hand)
    target = nk.frame_pose(robot, q_true, "panda_hand")
    q_guess = q_true + rng.uniform(-0.2, 0.2, robot.nv)
    sol = ik.solve(robot, target[:3, 3], target[:3, :3], q_guess, frame="panda_hand")
    assert sol.converged and sol.position_error < 1e-12 and sol.orientation_error < 1e-12
    pin.framesForwardKinematics(model, data, sol.q)
    reached = data.oMf[model.getFrameId("panda_hand", pin.BODY)].homogeneous
    np.testing.assert_allclose(reached, target, rtol=0, atol=1e-12)
    # the finger joint's frame (the default tool frame) is not where the hand was put
    assert np.linalg.norm(nk.tool_pose(robot, sol.q)[1] - target[:3, 3]) > 0.05


def test_the_guide_example_runs_in_a_fresh_process(tmp_path: Path) -> None:
    """docs/guide/using.md's named-frames block, as a user would run it."""
    import subprocess
    import sys

    text = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "using.md").read_text()
    section = text.split("## Named frames", 1)[1]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    env = {**__import__("os").environ, "ROBODYN_CACHE": str(tmp_path / "cache")}
    result = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, env=env,
                            timeout=600)
    assert result.returncode == 0, result.stderr

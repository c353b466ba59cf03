"""Named frames on the Manipulator (issue 29, part 3): checked, kept by model files (``frames:``), by ``subs`` and
by the change of DH convention; one-line errors for an unknown link, a duplicate name, a bad placement."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sympy

import robodyn as rd
from robodyn.formats.model_file import manipulator_from_dict
from robodyn.model.frames import Frame
from robodyn.numeric import kinematics as nk
from tests.conftest import load_quiet, random_params
from tests.numeric.test_frames import panda_path

PLACEMENT = [[0, -1, 0, "L2"], [1, 0, 0, 0], [0, 0, 1, 0.1], [0, 0, 0, 1]]


def _framed(name: str = "puma560_symbolic") -> rd.Manipulator:
    robot = load_quiet(name)
    return robot.replace(frames=[{"name": "flange", "link": robot.n - 1, "placement": PLACEMENT},
                                 {"name": "camera", "link": "base"}])


def test_frames_are_checked_and_found_by_name() -> None:
    robot = _framed()
    assert robot.frames[0] == Frame("flange", 5, sympy.ImmutableMatrix(
        [[0, -1, 0, sympy.Symbol("L2")], [1, 0, 0, 0], [0, 0, 1, sympy.Float(0.1)], [0, 0, 0, 1]]))
    assert robot.frame("camera").link == -1 and robot.frame("camera").placement == sympy.eye(4)
    assert sympy.Symbol("L2") in robot.parameters()
    assert robot.frame_names[:2] == ("flange", "camera") and robot.frame_names[-1] == "base"
    with pytest.raises(ValueError, match="no frame named 'hand'"):
        robot.frame("hand")


def test_model_files_keep_the_frames(tmp_path: Path) -> None:
    robot = _framed()
    assert robot.to_dict()["frames"] == [
        {"name": "flange", "link": 6, "placement": [[0, -1, 0, "L2"], [1, 0, 0, 0], [0, 0, 1, 0.1], [0, 0, 0, 1]]},
        {"name": "camera", "link": "base"}]
    for suffix in (".yaml", ".json"):
        assert rd.load(robot.save(tmp_path / f"framed{suffix}")) == robot
    bound = robot.subs({"L2": 0.25})
    assert bound.frame("flange").placement[0, 3] == sympy.Float(0.25)


def test_urdf_frames_survive_a_model_file(tmp_path: Path) -> None:
    robot = rd.load(panda_path())
    again = rd.load(robot.save(tmp_path / "panda.yaml"))
    assert again.frames == robot.frames
    q = np.linspace(-1, 1, robot.nv)
    np.testing.assert_array_equal(nk.frame_pose(again, q, "panda_hand"), nk.frame_pose(robot, q, "panda_hand"))


@pytest.mark.parametrize("name", ["puma560", "puma560_symbolic"])
def test_a_change_of_convention_keeps_the_frames_in_place(name: str) -> None:
    robot = _framed(name)
    robot = robot.replace(frames=[*robot.frames, {"name": "elbow", "link": 1, "placement": PLACEMENT}])
    params = random_params(robot, np.random.default_rng(1))
    q = np.random.default_rng(2).uniform(-2, 2, (4, robot.nv))
    other = robot.to_convention("modified" if robot.convention == "standard" else "standard")
    assert other.frame("elbow").placement != robot.frame("elbow").placement  # link frame 2 moved, the frame not
    assert other.to_convention(robot.convention).frames == robot.frames
    for frame in ("flange", "camera", "elbow", None):  # (a link's own frame is the convention's: it moves)
        np.testing.assert_allclose(nk.frame_pose(other, q, frame, params), nk.frame_pose(robot, q, frame, params),
                                   rtol=0, atol=1e-12)


def _file(**frame: object) -> dict:
    data = load_quiet("two_link_fu").to_dict()
    data["links"][0]["name"] = "upper"
    data["frames"] = [frame]
    return data


@pytest.mark.parametrize(("frame", "message"), [
    ({"name": "tip", "link": "forearm"}, "field 'frames': frame 'tip': no link is named 'forearm'"),
    ({"name": "tip", "link": 3}, "field 'frames': frame 'tip': 3 is not a link number (1 to 2; 0: the base)"),
    ({"name": "tip", "link": 1, "placement": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]},
     "field 'frames': frame 'tip': expected a 4x4 homogeneous transform"),
    ({"name": "tip", "link": 1, "placement": [[2, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]},
     "field 'frames': frame 'tip': the rotation part of a placement must be a proper rotation matrix"),
    ({"name": "upper", "link": 2}, "field 'frames': frame 'upper' has the name of link 1"),
    ({"name": "", "link": 1}, "field 'frames': a frame needs a non-empty name"),
    ({"name": "tip", "link": 1, "pose": []}, "field 'frames': a frame has no field 'pose'"),
    ({"name": "tip"}, "field 'frames': a frame without 'link'"),
])
def test_bad_frames_are_one_line_errors(frame: dict, message: str) -> None:
    with pytest.raises(rd.ModelError) as info:
        manipulator_from_dict(_file(**frame))
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_duplicate_frame_name_is_refused(tmp_path: Path) -> None:
    data = _file(name="tip", link=1)
    data["frames"].append({"name": "tip", "link": 2})
    path = tmp_path / "twice.json"
    path.write_text(__import__("json").dumps(data))
    with pytest.raises(rd.ModelError, match=r"twice\.json.*field 'frames': two frames are named 'tip'"):
        rd.load(path)

"""Joint names (issue 28, "Names and order"): a URDF's joint names kept as written (``robot.joint_names``), the
joint order of a URDF tree equal to Pinocchio's, model files that keep the names, and named states mapped to q
and back (``robot.q_from``, ``robot.named``)."""

from __future__ import annotations

import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import robodyn as rd
from robodyn.formats.frames import distinct_names
from robodyn.formats.urdf import read_urdf, to_urdf
from tests.conftest import load_quiet


def _inertial(mass: float) -> str:
    return (f'<inertial><origin xyz="0.01 0.02 0.03" rpy="0 0 0"/><mass value="{mass}"/>'
            '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.025"/></inertial>')


def _joint(name: str, kind: str, parent: str, child: str, xyz: str = "0.1 0 0", axis: str = "0 0 1") -> str:
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>' if kind in ("revolute", "prismatic") else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="0 0 0"/><axis xyz="{axis}"/>{limit}</joint>\n')


#: A body with two arms, listed out of name order (the right arm, then the left), names that are not
#: identifiers, a fixed bracket on the left arm from which two joints leave (again out of name order), and a
#: chain of three on the right. Pinocchio's order: siblings by joint name, depth first.
ODD = ('<?xml version="1.0"?>\n<robot name="odd names">\n<link name="body"/>\n'
       + "".join(f'<link name="{name}">{_inertial(1.0 + k / 10)}</link>\n'
                 for k, name in enumerate(("r1", "r2", "r3", "l1", "bracket", "l2", "l3")))
       + _joint("r_arm/shoulder", "revolute", "body", "r1", "0 -0.2 0.3")
       + _joint("r_arm/elbow", "continuous", "r1", "r2", axis="0 1 0")
       + _joint("r_arm/slide", "prismatic", "r2", "r3", axis="1 0 0")
       + _joint("l_arm/shoulder", "revolute", "body", "l1", "0 0.2 0.3")
       + _joint("l_arm/bracket", "fixed", "l1", "bracket")
       + _joint("l_arm/wrist-2", "revolute", "bracket", "l3", axis="1 0 0")
       + _joint("l_arm/wrist-1", "revolute", "bracket", "l2", axis="0 1 0")
       + "</robot>\n")
ODD_ORDER = ("l_arm/shoulder", "l_arm/wrist-1", "l_arm/wrist-2", "r_arm/shoulder", "r_arm/elbow", "r_arm/slide")
ODD_LINKS = ("l_arm_shoulder", "l_arm_wrist_1", "l_arm_wrist_2", "r_arm_shoulder", "r_arm_elbow", "r_arm_slide")


@pytest.fixture
def odd(tmp_path: Path) -> rd.Manipulator:
    pytest.importorskip("lxml")
    path = tmp_path / "odd.urdf"
    path.write_text(ODD)
    return rd.load(path)


# -- names -------------------------------------------------------------------------------------------------------
def test_urdf_joint_names_are_kept_as_written_beside_the_identifiers(odd: rd.Manipulator) -> None:
    assert odd.joint_names == ODD_ORDER
    assert odd.source_names == ODD_ORDER
    assert tuple(link.name for link in odd.links) == ODD_LINKS
    assert odd.parents == (-1, 0, 0, -1, 3, 4)  # the wrists both hang on the shoulder (the bracket is fixed)


def test_a_robot_without_source_names_is_named_by_its_links() -> None:
    robot = load_quiet("puma560")
    assert robot.source_names == ()
    assert robot.joint_names == tuple(link.name or f"joint{k + 1}" for k, link in enumerate(robot.links))
    assert all("joint_name" not in row for row in robot.to_dict()["links"])
    bare = rd.Manipulator.from_dh([{"joint": "R"}, {"joint": "P", "name": "joint1"}, {"joint": "R"}])
    assert bare.joint_names == ("joint1", "joint1_2", "joint3")  # distinct, as to_urdf names them


def test_source_names_are_checked_and_stored_only_where_they_differ() -> None:
    rows = [{"joint": "R", "name": "a"}, {"joint": "R", "name": "b"}]
    assert rd.Manipulator.from_dh(rows, source_names=["a", "b"]).source_names == ()
    assert rd.Manipulator.from_dh(rows, source_names=["", "b/1"]).joint_names == ("a", "b/1")
    assert rd.Manipulator.from_dh(rows, source_names={"b": "b-1"}).joint_names == ("a", "b-1")
    assert rd.Manipulator.from_dh(rows, source_names={0: "A"}).joint_names == ("A", "b")
    for value, message in (
        (["x"], "1 joint names for 2 links"),
        ("ab", "expected one joint name per link"),
        ([1, "b"], "link 1: field 'source_names': expected text"),
        (["b", ""], "link 2: field 'source_names': the joint name 'b' is also link 1's"),
        (["a\ud800", "b"], "link 1: field 'source_names': not valid Unicode text: a lone surrogate"),
        ({"c": "x"}, "'c' is not a link index"),
    ):
        with pytest.raises(rd.ModelError, match=message):
            rd.Manipulator.from_dh(rows, source_names=value)


def test_joint_names_follow_the_robot_through_its_conversions(odd: rd.Manipulator) -> None:
    assert odd.to_convention("standard").joint_names == ODD_ORDER
    assert odd.to_convention("standard").to_convention("modified").joint_names == ODD_ORDER
    assert odd.replace(gravity=(0, 0, -10)).joint_names == ODD_ORDER
    assert odd.subs({}).joint_names == ODD_ORDER
    symbolic = rd.Manipulator.from_dh([{"joint": "R", "a": "L1", "name": "a"}, {"joint": "P", "name": "b"}],
                                      source_names=["arm-1", "arm 2"])
    assert symbolic.subs({"L1": 0.5}).joint_names == ("arm-1", "arm 2")
    renamed = odd.replace(source_names=())
    assert renamed.joint_names == ODD_LINKS


# -- files ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_model_files_keep_the_joint_names(odd: rd.Manipulator, tmp_path: Path, suffix: str) -> None:
    rows = odd.to_dict()["links"]
    assert [row["joint_name"] for row in rows] == list(ODD_ORDER)
    back = rd.load(odd.save(tmp_path / f"odd{suffix}"))
    assert back.joint_names == ODD_ORDER and back.links == odd.links and back.parents == odd.parents


def test_a_model_file_writes_a_joint_name_only_where_it_differs(tmp_path: Path) -> None:
    robot = rd.Manipulator.from_dh([{"joint": "R", "name": "a"}, {"joint": "R"}, {"joint": "R", "name": "c"}],
                                   source_names=["a", "", "c/1"])
    rows = robot.to_dict()["links"]
    assert ["joint_name" in row for row in rows] == [False, False, True]
    assert rd.load(robot.save(tmp_path / "r.yaml")).joint_names == ("a", "joint2", "c/1")
    path = tmp_path / "bad.yaml"
    path.write_text("links:\n  - joint: R\n    joint_name: 3\n")
    with pytest.raises(rd.ModelError, match="link 1: field 'joint_name': expected text"):
        rd.load(path)


def test_a_urdf_written_from_the_robot_keeps_the_joint_names(odd: rd.Manipulator, tmp_path: Path) -> None:
    path = tmp_path / "back.urdf"
    path.write_text(to_urdf(odd))
    back = read_urdf(path)
    assert back.joint_names == ODD_ORDER
    assert tuple(link.name for link in back.links) == ODD_LINKS


# -- the order of Pinocchio --------------------------------------------------------------------------------------
def test_the_small_tree_is_in_pinocchios_order(tmp_path: Path) -> None:
    pin = pytest.importorskip("pinocchio")
    pytest.importorskip("lxml")
    path = tmp_path / "odd.urdf"
    path.write_text(ODD)
    assert list(pin.buildModelFromUrdf(str(path)).names[1:]) == list(ODD_ORDER)


TREES = ("talos_data/robots/talos_reduced.urdf", "romeo_description/urdf/romeo_small.urdf",
         "solo_description/robots/solo12.urdf", "anymal_b_simple_description/robots/anymal.urdf",
         "hyq_description/robots/hyq_no_sensors.urdf", "tiago_description/robots/tiago_no_hand.urdf",
         "baxter_description/urdf/baxter.urdf", "a1_description/urdf/a1.urdf",
         "simple_humanoid_description/urdf/simple_humanoid.urdf", "panda_description/urdf/panda.urdf")


@pytest.mark.parametrize("relative", TREES)
def test_example_robot_data_trees_are_in_pinocchios_order(relative: str) -> None:
    pin = pytest.importorskip("pinocchio")
    pytest.importorskip("lxml")
    from benchmarks.urdf_survey import robots_directory

    directory = robots_directory()
    if directory is None or not (directory / relative).is_file():
        pytest.skip("example-robot-data is not installed")
    path = directory / relative
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        robot = rd.load(path, mimic="independent")  # Pinocchio's default: mimic joints read as independent
    names = list(pin.buildModelFromUrdf(str(path)).names[1:])
    assert robot.is_tree
    assert list(robot.joint_names) == names
    assert [link.name for link in robot.links] == distinct_names(names, ("base",))


# -- named states ------------------------------------------------------------------------------------------------
def test_q_from_a_mapping_and_a_joint_state_message(odd: rd.Manipulator) -> None:
    values = dict(zip(reversed(ODD_ORDER), range(6), strict=True))  # any order
    q = odd.q_from(values)
    assert isinstance(q, np.ndarray) and q.dtype == float
    assert q.tolist() == [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]
    message = SimpleNamespace(name=list(values), position=list(values.values()), velocity=[0.5] * 6, effort=[])
    assert odd.q_from(message).tolist() == q.tolist()
    assert odd.q_from(message, field="velocity").tolist() == [0.5] * 6
    assert odd.named(q) == {name: float(values[name]) for name in ODD_ORDER}
    assert list(odd.named(q)) == list(ODD_ORDER)  # the robot's order
    assert odd.q_from(odd.named(q)).tolist() == q.tolist()
    assert odd.named(q.tolist()) == odd.named(q)


def test_q_from_defaults_and_unknown_names(odd: rd.Manipulator) -> None:
    assert odd.q_from({"r_arm/elbow": 0.25}, default=0.0).tolist() == [0, 0, 0, 0, 0.25, 0]
    assert odd.q_from({"r_arm/elbow": 0.25, "gripper": 1.0}, default=1.5, ignore_unknown=True).tolist() == [
        1.5, 1.5, 1.5, 1.5, 0.25, 1.5]
    assert odd.q_from({name: np.float32(0.5) for name in ODD_ORDER}).tolist() == [0.5] * 6


@pytest.mark.parametrize(("state", "kwargs", "message"), [
    ({"r_arm/elbow": 0.1}, {}, r"no value for joints 'l_arm/shoulder', 'l_arm/wrist-1', .* \(give them, or a "
                               r"default\)"),
    ({"r_arm_elbow": 0.1}, {"default": 0.0}, r"no joint of odd_names is named 'r_arm_elbow' \(joints: "
                                             r"'l_arm/shoulder', "),
    (SimpleNamespace(name=["r_arm/elbow", "r_arm/elbow"], position=[1.0, 2.0]), {"default": 0},
     "joint 'r_arm/elbow' is given twice"),
    (SimpleNamespace(name=["r_arm/elbow"], position=[]), {}, "the message has 1 names and 0 values of 'position'"),
    (SimpleNamespace(name=["r_arm/elbow"]), {}, "expected a mapping of joint names to values, or a message"),
    ({"r_arm/elbow": "1.0"}, {"default": 0}, "joint 'r_arm/elbow': expected a number, got '1.0'"),
    ({"r_arm/elbow": float("nan")}, {"default": 0}, "joint 'r_arm/elbow': nan is not a finite number"),
    ({1: 0.0}, {}, "a joint name must be text, got 1"),
    ([0.0] * 6, {}, "expected a mapping of joint names to values"),
])
def test_q_from_errors_are_one_line(odd: rd.Manipulator, state: object, kwargs: dict, message: str) -> None:
    with pytest.raises(rd.ModelError, match=message) as info:
        odd.q_from(state, **kwargs)
    assert "\n" not in str(info.value)


def test_named_errors_are_one_line(odd: rd.Manipulator) -> None:
    for q, message in (([0.0] * 5, "5 values for 6 joints"), ({"a": 1}, "expected 6 numbers"),
                       (3.0, "expected 6 numbers"), ([0, 0, 0, 0, 0, "x"], "joint 'r_arm/slide': expected a number")):
        with pytest.raises(rd.ModelError, match=message):
            odd.named(q)


def test_a_coupled_robots_q_holds_its_independent_joints() -> None:
    """The Panda's second finger mimics the first: q has 8 entries, the follower's name is accepted and not read."""
    pytest.importorskip("lxml")
    from benchmarks.urdf_survey import robots_directory

    directory = robots_directory()
    if directory is None:
        pytest.skip("example-robot-data is not installed")
    robot = rd.load(directory / "panda_description" / "urdf" / "panda.urdf", mimic="couple")
    assert robot.n == 9 and robot.nv == 8 and robot.joint_names[-1] == "panda_finger_joint2"
    state = {name: 0.01 * k for k, name in enumerate(robot.joint_names)}
    q = robot.q_from(state)
    assert q.tolist() == [0.01 * k for k in range(8)]
    assert list(robot.named(q)) == list(robot.joint_names[:8])
    assert robot.q_from(robot.named(q)).tolist() == q.tolist()

"""URDF trees: read as kinematic trees, written back, locked from the API and the command line; every URDF of
example-robot-data against Pinocchio's own reader (benchmarks/urdf_survey.py holds the comparison)."""

from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from benchmarks.urdf_survey import Outcome, compare, pybullet_files, refusal_kind, robots_directory, survey, symmetric
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from robodyn.formats.frames import distinct_names
from robodyn.formats.pinocchio import to_pinocchio
from robodyn.formats.urdf import read_urdf, write_urdf
from tests.conftest import load_quiet
from tests.helpers import has_c_compiler

pytest.importorskip("lxml")
pin = pytest.importorskip("pinocchio")

TOL = 1e-9
DATA = Path(__file__).parents[1] / "data"


def _inertial(mass: float, xyz: str, rpy: str = "0 0 0") -> str:
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
            '<inertia ixx="0.02" ixy="0.001" ixz="-0.002" iyy="0.03" iyz="0.003" izz="0.025"/></inertial>')


def _joint(name: str, kind: str, parent: str, child: str, xyz: str, rpy: str, axis: str = "") -> str:
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>' if kind in ("revolute", "prismatic") else ""
    axis_element = f'<axis xyz="{axis}"/>' if axis else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/>{axis_element}{limit}</joint>\n')


#: A torso (the base) with two arms. The left arm's first link carries a bracket on a fixed joint, from which
#: both its elbow and a prismatic thumb leave (a second branch point). Joints are listed out of order (the wrist
#: before the elbow), names are not identifiers ("left shoulder", "right-shoulder"), origins and axes are
#: general. Depth-first, siblings by joint name (Pinocchio's order; here the file's too): left shoulder, l_elbow,
#: l_wrist, l_thumb, right-shoulder, r_slide, r_wrist.
TREE = ('<?xml version="1.0"?>\n<robot name="two arms">\n'
        f'<link name="torso">{_inertial(8.0, "0 0 0.3")}</link>\n'
        + "".join(f'<link name="{name}">{_inertial(mass, xyz, rpy)}</link>\n' for name, mass, xyz, rpy in (
            ("l1", 2.0, "0.05 0.02 0.1", "0.1 0.2 0.3"), ("bracket", 0.7, "0.01 0.02 0.03", "0.5 0.1 0"),
            ("l2", 1.5, "0.2 0 0.01", "0 0 0"), ("l3", 0.5, "0.1 0 0", "0 0.3 0"), ("thumb", 0.2, "0 0.02 0", "0 0 0"),
            ("r1", 2.0, "0.1 0 0", "0 0 0"), ("r2", 1.0, "0 0.1 0", "0.2 0 0"), ("r3", 0.4, "0.05 0.05 0", "0 0 0")))
        + '<link name="tool"/>\n'
        + _joint("left shoulder", "continuous", "torso", "l1", "0 0.3 0.4", "0.3 -0.4 0.5", "0 1 0")
        + _joint("l_wrist", "continuous", "l2", "l3", "0.3 0 0", "0 0 0", "0.3 0.5 0.8")
        + _joint("l_bracket", "fixed", "l1", "bracket", "0.3 0.02 0", "1.2 0 0.4")
        + _joint("l_elbow", "revolute", "bracket", "l2", "0.1 0 0", "0 1.5707963267948966 0", "0 0 -1")
        + _joint("l_thumb", "prismatic", "bracket", "thumb", "0 0.05 0.02", "0.2 0.1 -0.3", "1 0 0")
        + _joint("right-shoulder", "revolute", "torso", "r1", "0 -0.3 0.4", "-1.5707963267948966 0 0", "0 0 1")
        + _joint("r_slide", "prismatic", "r1", "r2", "0.25 0 0", "0 0 0.7", "-0.6 0 0.8")
        + _joint("r_wrist", "revolute", "r2", "r3", "0 0.2 0", "0.4 0.5 0.6", "1 0 0")
        + _joint("r_tool", "fixed", "r3", "tool", "0.1 0 0", "0 0 0")
        + "</robot>\n")
ORDER = ("left_shoulder", "l_elbow", "l_wrist", "l_thumb", "right_shoulder", "r_slide", "r_wrist")
PARENTS = (-1, 0, 1, 0, -1, 4, 5)


@pytest.fixture
def tree_path(tmp_path: Path) -> Path:
    path = tmp_path / "two_arms.urdf"
    path.write_text(TREE)
    return path


def test_a_tree_loads_depth_first_in_file_order_with_the_joint_names(tree_path: Path) -> None:
    robot = rd.load(tree_path)
    assert robot.is_tree and robot.n == 7 and robot.name == "two_arms"
    assert tuple(link.name for link in robot.links) == ORDER
    assert robot.parents == PARENTS
    assert robot.joint_types == "RRRPRPR"
    assert robot.children(0) == (1, 3)  # the elbow and the thumb both leave the bracket fixed to l1


def test_a_tree_agrees_with_pinocchios_reader(tree_path: Path) -> None:
    robot = rd.load(tree_path)
    differences = compare(robot, tree_path, samples=20, seed=1)
    assert max(differences.values()) < TOL, differences  # qdd too: this tree is well conditioned
    assert read_urdf(tree_path, snap=False).links != robot.links  # the 90 degree angles were snapped ...
    assert max(compare(read_urdf(tree_path, snap=False), tree_path, samples=5).values()) < TOL  # ... harmlessly


def test_a_locked_joint_of_a_tree_agrees_with_pinocchios_reduced_model(tree_path: Path) -> None:
    """Locking the thumb (at 0.03 m) and the left wrist (at 0.4 rad) leaves two chains on the base and moves their
    masses into the links they are locked to."""
    lock = {"l_thumb": 0.03, "l_wrist": 0.4}
    robot = rd.load(tree_path, lock=lock)
    assert tuple(link.name for link in robot.links) == ("left_shoulder", "l_elbow", "right_shoulder", "r_slide",
                                                          "r_wrist")
    assert robot.parents == (-1, 0, -1, 2, 3)
    full = pin.buildModelFromUrdf(str(tree_path))
    q_lock = pin.neutral(full)
    for name, value in lock.items():
        joint = full.joints[full.getJointId(name)]
        q_lock[joint.idx_q:joint.idx_q + joint.nq] = [np.cos(value), np.sin(value)] if joint.nq == 2 else value
    reduced = pin.buildReducedModel(full, [full.getJointId(name) for name in lock], q_lock)
    ours = to_pinocchio(robot)
    ids = [reduced.getJointId(name) for name in ("left shoulder", "l_elbow", "right-shoulder", "r_slide", "r_wrist")]
    rng = np.random.default_rng(2)
    for _ in range(5):
        q, qd, qdd = rng.uniform(-1, 1, (3, robot.n))
        q_ref, v_ref, a_ref = pin.neutral(reduced), np.zeros(reduced.nv), np.zeros(reduced.nv)
        v_index = [reduced.joints[j].idx_v for j in ids]
        for j, value in zip(ids, q, strict=True):
            joint = reduced.joints[j]
            q_ref[joint.idx_q:joint.idx_q + joint.nq] = [np.cos(value), np.sin(value)] if joint.nq == 2 else value
        v_ref[v_index], a_ref[v_index] = qd, qdd
        tau = pin.rnea(ours, ours.createData(), q, qd, qdd)
        tau_ref = pin.rnea(reduced, reduced.createData(), q_ref, v_ref, a_ref)[v_index]
        np.testing.assert_allclose(tau, tau_ref, rtol=TOL, atol=TOL * np.abs(tau_ref).max())
        M = symmetric(pin.crba(ours, ours.createData(), q))
        M_ref = symmetric(pin.crba(reduced, reduced.createData(), q_ref))[np.ix_(v_index, v_index)]
        np.testing.assert_allclose(M, M_ref, rtol=TOL, atol=TOL * np.abs(M_ref).max())


def test_joint_names_become_distinct_identifiers() -> None:
    assert distinct_names(["a-b", "a_b", "a b", "base", "2nd", "x" * 70, "x" * 70], ("base",)) == [
        "a_b", "a_b_2", "a_b_3", "base_2", "joint_2nd", "x" * 64, "x" * 62 + "_2"]


def test_a_tree_round_trips_through_urdf(tmp_path: Path) -> None:
    """write_urdf of the test tree (7 joints, placements, a prismatic joint), read back: the same names, parents
    and dynamics (Pinocchio models of both, 1e-12), and Pinocchio's own reader of the file agrees too."""
    tree = load_quiet(str(DATA / "torso_two_arms.yaml"))
    path = tmp_path / "tree.urdf"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)  # URDF has no armature, tip load or gravity
        write_urdf(tree, path, params={"g": 9.81})
    back = rd.load(path)
    assert [link.name for link in back.links] == [link.name for link in tree.links]
    assert back.parents == tree.parents
    original, again = to_pinocchio(tree, {"g": 9.81}), to_pinocchio(back)
    rng = np.random.default_rng(3)
    for _ in range(10):
        q, qd, qdd = rng.uniform(-1, 1, (3, tree.n))
        tau = pin.rnea(original, original.createData(), q, qd, qdd)
        np.testing.assert_allclose(pin.rnea(again, again.createData(), q, qd, qdd), tau, rtol=0,
                                   atol=1e-12 * np.abs(tau).max())
        M = symmetric(pin.crba(original, original.createData(), q))
        np.testing.assert_allclose(symmetric(pin.crba(again, again.createData(), q)), M, rtol=0,
                                   atol=1e-12 * np.abs(M).max())
    assert max(compare(back, path, samples=5).values()) < TOL


# -- every URDF of example-robot-data ---------------------------------------------------------------------

#: What robodyn makes of the 69 URDFs of example-robot-data 4.x with the default options (mimic joints coupled):
#: how many load (of which trees, of which with coupled joints), and the refusals by reason. A change in the reader
#: (or in the package) shows here. The 4 refused for what the file is: two with no moving joint (hector's
#: quadrotor_base, iris_simple), ur3.urdf's <robot> without a name, romeo_laas_small's negative principal moment.
#: alex_psyonic_hands' fingers mimic joints the file does not define (Pinocchio's mimic=True refuses it): they are
#: read as independent joints, with a warning, as Pinocchio's reader does without mimic=True.
LOADED, TREES, COUPLED = 65, 44, 8
REFUSED = {"no moving joint": 2, "no name": 1, "inertia": 1}
#: Where Pinocchio 4.1 refuses mimic=True (a joint mimics one after it in its tree): compared with its model of
#: independent joints, projected with robodyn's G.
PROJECTED = {"romeo.urdf", "talos_full_v2.urdf", "talos_full_v2_box.urdf"}


def _robots_or_skip() -> Path:
    directory = robots_directory()
    if directory is None:
        pytest.skip("example-robot-data's robots directory was not found")
    return directory


@pytest.fixture(scope="module")
def outcomes() -> list[Outcome]:
    directory = _robots_or_skip()
    return survey(directory, samples=2)


def test_example_robot_data_counts(outcomes: list[Outcome]) -> None:
    loaded = [o for o in outcomes if o.loaded]
    refused = Counter(refusal_kind(o.reason) for o in outcomes if not o.loaded)
    assert (len(loaded), sum(o.tree for o in loaded), sum(o.nv < o.n for o in loaded), dict(refused)) == (
        LOADED, TREES, COUPLED, REFUSED)
    for o in outcomes:
        if not o.loaded:
            assert "\n" not in o.reason and o.reason.startswith(f"{o.path}: "), o.reason
    reasons = {o.path.name: o.reason.removeprefix(f"{o.path}: ") for o in outcomes if not o.loaded}
    assert reasons["quadrotor_base.urdf"].startswith("no moving joint")
    assert reasons["iris_simple.urdf"].startswith("no moving joint")
    assert reasons["ur3.urdf"] == "<robot> has no name attribute"
    assert "principal moment -0.00272042 is negative" in reasons["romeo_laas_small.urdf"]
    alex = next(o for o in loaded if o.path.name == "alex_psyonic_hands.urdf")
    assert alex.nv == alex.n  # its fingers' leaders are not in the file: independent joints
    assert max((o.n for o in loaded), default=0) == 101  # tiago_dual: both hands
    assert all(o.order for o in loaded)  # robodyn's links in Pinocchio's order of joints, not only matched by name
    assert {o.path.name for o in loaded if o.notes} == PROJECTED


def test_example_robot_data_agrees_with_pinocchios_reader(outcomes: list[Outcome]) -> None:
    """ID, M and FD of robodyn's numeric engine (FD weighted by M: the accelerations themselves differ by up to
    cond(M) times more, 5e-8 on anymal-kinova's light fingers), and the model to_pinocchio writes, agree to 1e-9
    with Pinocchio's reader (mimic=True, the URDF damping and Coulomb friction added on its side) on every URDF
    that loads; angles snapped to multiples of 90 degrees (URDF's 1.57079632679 for pi/2) account for the largest,
    about 1e-11 on the UR arms and baxter."""
    worst = {o.path.name: o.worst for o in outcomes if o.loaded}
    assert max(worst.values()) < TOL, sorted(worst.items(), key=lambda item: -item[1])[:3]
    assert max(o.differences["qdd"] for o in outcomes if o.loaded) < 1e-6
    assert all(set(o.differences) == {"id", "M", "fd", "qdd", *(() if o.nv < o.n else ("writer",))}
               for o in outcomes if o.loaded)


def test_example_robot_data_with_independent_mimic_joints(outcomes: list[Outcome]) -> None:
    """mimic="independent": the files with mimic joints load as trees of independent joints (65 of 69, 44 trees)
    and agree with Pinocchio's reader of independent joints. Only the files holding a ``<mimic`` element are read
    again (mimic= changes nothing in the others: their outcomes are the survey's above); the survey of every file
    read this way is ``python benchmarks/urdf_survey.py --mimic independent``."""
    mimic = [o.path for o in outcomes if "<mimic" in o.path.read_text(encoding="utf-8", errors="replace")]
    again = {o.path: o for o in survey(mimic, samples=1, mimic="independent")}
    combined = [again.get(o.path, o) for o in outcomes]
    loaded = [o for o in combined if o.loaded]
    refused = Counter(refusal_kind(o.reason) for o in combined if not o.loaded)
    assert (len(loaded), sum(o.tree for o in loaded), dict(refused)) == (LOADED, TREES, REFUSED)
    assert len(again) >= 9 and all(o.nv == o.n for o in loaded) and max(o.worst for o in loaded) < TOL


@pytest.mark.skipif(not has_c_compiler(), reason="no C compiler")
def test_compiled_c_of_an_example_robot_data_tree_agrees_with_pinocchio(tmp_path: Path) -> None:
    """The survey's compiled check on one tree (solo: 8 joints, two branches per hip): rd.compile's tau, M and
    forward routines against Pinocchio's reader (the full survey compiles every robot rd.compile derives)."""
    path = _robots_or_skip() / "solo_description" / "robots" / "solo.urdf"
    robot = rd.load(path)
    outcome = Outcome(path)
    differences = compare(robot, path, samples=3, compiled=True, outcome=outcome)
    assert outcome.notes == [] and {"C id", "C M", "C fd"} <= set(differences), outcome.notes
    assert max(differences.values()) < TOL, differences


def test_pybullet_files_agree_with_pinocchio() -> None:
    """PyBullet's Panda (a mimic finger) and xArm with its gripper (5 coupled joints), the minitaur family
    (``<?xml version="0.0"?>``, minitaur_fixed_all has no moving joint) and diff_ring (a declaration after
    whitespace), when pybullet is installed: every one loads but minitaur_fixed_all, and agrees with Pinocchio."""
    pytest.importorskip("pybullet_data")
    _, files = pybullet_files()
    outcomes = survey(files, samples=2)
    refused = [o.path.name for o in outcomes if not o.loaded]
    assert len(outcomes) == 11 and refused == ["minitaur_fixed_all.urdf"]
    loaded = {o.path.name: o for o in outcomes if o.loaded}
    assert (loaded["panda.urdf"].nv, loaded["xarm6_with_gripper.urdf"].nv) == (8, 7)
    assert all(o.order for o in loaded.values()) and max(o.worst for o in loaded.values()) < TOL


def test_panda_loads_as_a_tree_with_the_mimic_finger_locked() -> None:
    directory = _robots_or_skip()
    path = directory / "panda_description" / "urdf" / "panda.urdf"
    with pytest.raises(rd.ModelError, match="joint 'panda_finger_joint2': field 'mimic'"):
        rd.load(path, mimic="refuse")
    robot = rd.load(path, lock={"panda_finger_joint2": 0.0})
    assert robot.n == 8 and not robot.is_tree and robot.links[-1].name == "panda_finger_joint1"


def test_panda_with_independent_fingers_is_a_tree_that_agrees_with_pinocchios_reader() -> None:
    """mimic="independent" reads the mimic finger as its own joint, as Pinocchio's reader does by default."""
    directory = _robots_or_skip()
    path = directory / "panda_description" / "urdf" / "panda.urdf"
    with pytest.warns(rd.ModelWarning, match="mimic relations dropped.*'panda_finger_joint2'"):
        robot = rd.load(path, mimic="independent")
    assert robot.n == 9 and robot.parents[-2:] == (6, 6) and robot.children(6) == (7, 8)
    assert max(compare(robot, path, samples=5).values()) < TOL
    with pytest.raises(rd.ModelError, match="mimic='sometimes': expected one of 'couple', 'independent', 'refuse'"):
        rd.load(path, mimic="sometimes")


# -- lock= and --lock -------------------------------------------------------------------------------------


def test_load_lock_errors_are_one_line(tree_path: Path, tmp_path: Path) -> None:
    model = tmp_path / "arm.yaml"
    load_quiet("two_link_fu").save(model)
    cases = [
        (lambda: rd.load("puma560", lock={"j": 0.0}), "applies to URDF files only"),
        (lambda: rd.load(model, lock={"j": 0.0}), "applies to URDF files only"),
        (lambda: rd.load(tree_path, lock={"nope": 0.0}), "lock names joint 'nope', which is not defined"),
        (lambda: rd.load(tree_path, lock={"l_thumb": "0.1"}), "joint 'l_thumb': field 'lock': expected a number"),
        (lambda: rd.load(tree_path, lock={"l_thumb": float("nan")}), "field 'lock': not a finite number"),
    ]
    for call, expected in cases:
        with pytest.raises(rd.ModelError) as info:
            call()
        assert "\n" not in str(info.value) and expected in str(info.value), str(info.value)
    assert rd.load(model, lock={}).n == 2  # an empty lock is no lock


def _commands_taking_a_robot() -> list[str]:
    """Every command whose first parameter is the robot (``demo`` loads its own robot: not one of them)."""
    names = []
    for command in app.registered_commands:
        parameters = list(command.callback.__annotations__)
        if parameters and parameters[0] == "model" and command.callback.__name__ != "demo":
            names.append(command.name or command.callback.__name__.replace("_", "-"))
    return names


def test_every_command_that_takes_a_robot_has_lock() -> None:
    runner = CliRunner()
    commands = _commands_taking_a_robot()
    assert len(commands) == 10
    for command in commands:
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0 and "--lock" in result.output, command


def test_cli_lock(tree_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["show", str(tree_path), "--lock", "l_thumb=0.03", "--lock", "l_wrist=-0.5"])
    assert result.exit_code == 0, result.output
    assert "5 joints (RRRPR)" in result.output
    for args, expected in (
        (["--lock", "l_thumb"], "--lock 'l_thumb': expected NAME=VALUE"),
        (["--lock", "l_thumb=abc"], "--lock 'l_thumb=abc': expected NAME=VALUE"),
        (["--lock", "l_thumb=inf"], "--lock 'l_thumb=inf': expected NAME=VALUE"),
        (["--lock", "=1"], "--lock '=1': expected NAME=VALUE"),
        (["--lock", "l_thumb=1", "--lock", "l_thumb=2"], "joint 'l_thumb' is given twice"),
        (["--lock", "nope=1"], "lock names joint 'nope', which is not defined"),
    ):
        result = runner.invoke(app, ["show", str(tree_path), *args])
        lines = result.output.strip().splitlines()
        assert result.exit_code == 2 and len(lines) == 1 and expected in lines[0], result.output
    result = runner.invoke(app, ["count", "puma560", "--lock", "j1=0"])
    assert result.exit_code == 2 and result.output.strip().splitlines() == [
        "error: lock= (--lock) applies to URDF files only, and 'puma560' is a built-in robot (the options of a "
        "built-in robot: strict)"]

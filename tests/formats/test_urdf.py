"""URDF import and export, checked against Pinocchio reading the same files."""

from __future__ import annotations

import importlib.metadata
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import sympy
from typer.testing import CliRunner

import robodyn as rd
from robodyn import numeric
from robodyn.cli import app
from robodyn.formats.frames import axis_rotation, dh_row
from robodyn.formats.urdf import read_urdf, to_urdf, write_urdf
from tests.conftest import load_quiet, random_robot

pytest.importorskip("lxml")
pin = pytest.importorskip("pinocchio")

TOL = 1e-9


def _example_robot_data(relative: str) -> Path:
    """A URDF shipped by the example-robot-data package (a test dependency), or skip."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    for f in dist.files or []:
        if str(f).endswith(relative):
            return Path(dist.locate_file(f))
    pytest.skip(f"example-robot-data ships no {relative}")


def _configuration(model: object, q: np.ndarray) -> np.ndarray:
    """Pinocchio's configuration for joint angles q: a continuous joint is stored as (cos q, sin q)."""
    out = []
    for joint, value in zip(list(model.joints)[1:], q, strict=True):
        out += [math.cos(value), math.sin(value)] if joint.nq == 2 else [value]
    return np.array(out)


def _compare(robot: rd.Manipulator, model: object, N: int = 25, seed: int = 0) -> float:
    """Largest relative difference of tau, M and qdd between robodyn and a Pinocchio model."""
    data = model.createData()
    rng = np.random.default_rng(seed)
    n = robot.n
    q, qd, qdd = rng.uniform(-np.pi, np.pi, (N, n)), rng.uniform(-2, 2, (N, n)), rng.uniform(-4, 4, (N, n))
    damping = np.array([float(link.damping) for link in robot.links])
    tau = numeric.inverse_dynamics(robot, q, qd, qdd) - damping * qd
    M = numeric.mass_matrix(robot, q)
    worst = 0.0
    for k in range(N):
        qk = _configuration(model, q[k])
        tau_pin = pin.rnea(model, data, qk, qd[k], qdd[k])
        M_pin = pin.crba(model, data, qk)
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
        qdd_pin = pin.aba(model, data, qk, qd[k], tau[k])
        scale = max(1.0, float(np.abs(tau_pin).max()))
        worst = max(worst, float(np.abs(tau[k] - tau_pin).max()) / scale,
                    float(np.abs(M[k] - M_pin).max()) / max(1.0, float(np.abs(M_pin).max())),
                    float(np.abs(qdd_pin - qdd[k]).max()) / max(1.0, float(np.abs(qdd[k]).max())) * 1e-2)
    return worst


def test_ur5_from_example_robot_data_matches_pinocchio() -> None:
    path = _example_robot_data("ur_description/urdf/ur5_robot.urdf")
    for snap in (True, False):
        robot = read_urdf(path, snap=snap)
        assert robot.n == 6 and robot.joint_types == "RRRRRR"
        assert robot.name == "ur5"
        model = pin.buildModelFromUrdf(str(path))
        assert _compare(robot, model) < TOL
    assert rd.load(path).n == 6  # rd.load dispatches on the suffix
    # the first two joints are DH rows; the elbow and wrists need the exact fixed placement
    assert not robot.links[0].has_placement and robot.links[2].has_placement


def test_panda_mimic_finger_is_refused_and_loads_with_locked_fingers() -> None:
    path = _example_robot_data("panda_description/urdf/panda.urdf")
    with pytest.raises(rd.ModelError) as info:
        read_urdf(path, mimic="refuse")  # (the default couples it: tests/formats/test_urdf_mimic.py)
    message = str(info.value)
    assert "\n" not in message and "joint 'panda_finger_joint2'" in message and "mimic" in message
    full = pin.buildModelFromUrdf(str(path))
    for fingers in ({"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.03}, {"panda_finger_joint2": 0.03}):
        robot = read_urdf(path, lock=fingers)
        assert robot.n == 9 - len(fingers) and not robot.is_tree  # finger 1 alone: the hand's one moving joint
        q_lock = pin.neutral(full)
        for name, value in fingers.items():
            q_lock[full.joints[full.getJointId(name)].idx_q] = value
        reduced = pin.buildReducedModel(full, [full.getJointId(name) for name in fingers], q_lock)
        assert _compare(robot, reduced) < TOL


URDF_HEAD = '<?xml version="1.0"?>\n<robot name="test_arm">\n'


def _inertial(mass: float, xyz: str = "0 0 0", rpy: str = "0 0 0",
              tensor: str = 'ixx="0.02" ixy="0.001" ixz="-0.002" iyy="0.03" iyz="0.003" izz="0.025"') -> str:
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
            f"<inertia {tensor}/></inertial>")


def _mixed_arm() -> str:
    """Every supported joint type, tilted axes, rotated origins, fixed links with mass, a massless tool frame."""
    return URDF_HEAD + f"""
  <link name="world"/>
  <joint name="world_fixed" type="fixed"><parent link="world"/><child link="base"/>
    <origin xyz="0.1 0 0.2" rpy="0 0 0.3"/></joint>
  <link name="base">{_inertial(3.0)}</link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.3" rpy="0 0 0"/><axis xyz="0 0 1"/><dynamics damping="0.4"/></joint>
  <link name="l1">{_inertial(2.0, "0.05 0.02 0.1", "0.1 0.2 0.3")}</link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.05 0.1 0.2" rpy="0.3 -0.4 0.5"/><axis xyz="0.3 0.5 0.8"/>
    <limit lower="-2" upper="2" effort="10" velocity="1"/></joint>
  <link name="l2">{_inertial(1.5, "0.2 0 0.01")}</link>
  <joint name="l2_bracket" type="fixed"><parent link="l2"/><child link="bracket"/>
    <origin xyz="0.3 0.02 0" rpy="1.2 0 0.4"/></joint>
  <link name="bracket">{_inertial(0.7, "0.01 0.02 0.03", "0.5 0.1 0")}</link>
  <joint name="j3" type="prismatic"><parent link="bracket"/><child link="l3"/>
    <origin xyz="0.1 0 0" rpy="0 1.5707963267948966 0"/><axis xyz="0 -1 0"/>
    <limit lower="-0.5" upper="0.5" effort="10" velocity="1"/><dynamics damping="1.5" friction="0"/></joint>
  <link name="l3">{_inertial(1.0, "0 0.1 0")}</link>
  <joint name="j4" type="revolute"><parent link="l3"/><child link="l4"/>
    <origin xyz="0 0.2 0" rpy="-1.5707963267948966 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="1"/></joint>
  <link name="l4">{_inertial(0.5, "0.1 0 0")}</link>
  <joint name="tool_fixed" type="fixed"><parent link="l4"/><child link="tool"/>
    <origin xyz="0.15 0 0" rpy="0 0 0"/></joint>
  <link name="tool"/>
</robot>
"""


def test_mixed_joint_types_axes_and_fixed_links_match_pinocchio(tmp_path: Path) -> None:
    path = tmp_path / "mixed.urdf"
    path.write_text(_mixed_arm())
    robot = rd.load(path)
    assert robot.joint_types == "RRPR"
    assert [float(link.damping) for link in robot.links] == [0.4, 0.0, 1.5, 0.0]
    assert robot.links[0].has_placement is False and robot.links[1].has_placement  # tilted axis: a placement
    assert _compare(robot, pin.buildModelFromUrdf(str(path))) < TOL
    # the same robot through a model file keeps the placements exactly
    again = rd.load(robot.save(tmp_path / "mixed.yaml"))
    q = np.random.default_rng(1).normal(size=(5, 4))
    assert np.allclose(numeric.inverse_dynamics(again, q, q, q), numeric.inverse_dynamics(robot, q, q, q), atol=1e-12)
    # Newton-Euler and Lagrange-Euler support placements; Kane's HD notation refuses them clearly
    with pytest.raises(rd.DerivationError, match="placement"):
        rd.derive(robot, "kane")


def test_placement_robot_symbolic_equations_agree_with_numeric(tmp_path: Path) -> None:
    path = tmp_path / "mixed.urdf"
    path.write_text(_mixed_arm())
    robot = rd.load(path)
    robot = robot.replace(links=robot.links[:2], frames=())  # keep it small: R, R with a tilted axis
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.normal(size=(3, 2))
    expected = numeric.inverse_dynamics(robot, q, qd, qdd)
    for method in ("newton-euler", "lagrange-euler"):
        tau = rd.derive(robot, method).tau
        values = {sympy.Symbol(f"{k}{i + 1}"): float(v[i]) for k, v in (("q", q), ("qd", qd), ("qdd", qdd))
                  for i in range(2)}
        got = np.array(tau.subs(values).evalf(), dtype=float).ravel()
        assert np.allclose(got, expected, rtol=1e-9, atol=1e-9), method
    standard = robot.to_convention("standard")  # placements survive the conversion both ways
    assert np.allclose(numeric.inverse_dynamics(standard, q, qd, qdd), expected, atol=1e-10)
    back = standard.to_convention("modified")
    assert np.allclose(numeric.inverse_dynamics(back, q, qd, qdd), expected, atol=1e-10)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("convention", ["standard", "modified"])
def test_to_urdf_round_trip(tmp_path: Path, seed: int, convention: str) -> None:
    robot = random_robot(seed, 2 + seed % 5, convention).replace(tip_force=(0, 0, 0), tip_moment=(0, 0, 0))
    robot = robot.replace(links=tuple(link.replace(armature=0) for link in robot.links))
    path = tmp_path / "arm.urdf"
    write_urdf(robot, path)
    back = rd.load(path)
    back = back.replace(gravity=robot.gravity)
    rng = np.random.default_rng(seed)
    q, qd, qdd = rng.normal(size=(3, 10, robot.n))
    assert np.allclose(numeric.inverse_dynamics(back, q, qd, qdd), numeric.inverse_dynamics(robot, q, qd, qdd),
                       rtol=1e-10, atol=1e-10)
    model = pin.buildModelFromUrdf(str(path))  # Pinocchio reads what we write
    model.gravity = pin.Motion(np.array([float(x) for x in robot.gravity]), np.zeros(3))
    assert _compare(robot, model) < TOL


def test_to_urdf_library_robots_and_warnings(tmp_path: Path) -> None:
    puma = load_quiet("puma560")
    text = to_urdf(puma)
    assert text.count("<joint ") == 7 and 'name="tool0"' in text
    with pytest.warns(rd.ModelWarning, match="armature"):
        to_urdf(random_robot(1, 2, "modified").replace(tip_force=(0, 0, 0), tip_moment=(0, 0, 0)))
    with pytest.raises(rd.ModelError, match="free symbols"):
        to_urdf(load_quiet("puma560_symbolic"))
    symbolic = to_urdf(load_quiet("double_pendulum"), params={"L1": 1, "L2": 0.5, "m1": 2, "m2": 1, "g": 9.81})
    assert '<mass value="2.0" />' in symbolic


def test_axis_rotation_and_dh_rows() -> None:
    rng = np.random.default_rng(0)
    for axis in [*np.eye(3), *-np.eye(3), *rng.normal(size=(5, 3))]:
        axis = axis / np.linalg.norm(axis)
        R = axis_rotation(axis)
        assert np.allclose(R @ [0, 0, 1], axis) and np.allclose(R.T @ R, np.eye(3)) and np.linalg.det(R) > 0
    c, s = math.cos(0.3), math.sin(0.3)
    P = np.array([[1, 0, 0, 0.2], [0, c, -s, -s * 0.5], [0, s, c, c * 0.5], [0, 0, 0, 1]])
    row = dh_row(P)
    assert row is not None and row["theta"] == 0
    assert [float(row[k]) for k in ("alpha", "a", "d")] == pytest.approx([0.3, 0.2, 0.5], abs=1e-14)
    P[0, 3] += 0.0
    P[1, 3] += 0.1  # translation off the DH plane: no DH row
    assert dh_row(P) is None


MALFORMED = {
    "not_xml": ("<robot name='x'><link name='a'>", "not valid XML"),
    "root": ("<model name='x'/>", "root element"),
    "no_name": ("<robot><link name='a'/></robot>", "no name attribute"),
    "missing_link": ("<robot name='x'><link name='a'/><joint name='j' type='revolute'><parent link='a'/>"
                     "<child link='b'/><axis xyz='0 0 1'/></joint></robot>", "joint 'j'"),
    "joint_type": ("<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='floating'>"
                   "<parent link='a'/><child link='b'/></joint></robot>", "not supported"),
    "unknown_type": ("<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='weird'>"
                     "<parent link='a'/><child link='b'/></joint></robot>", "unknown joint type"),
    "zero_axis": ("<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='revolute'>"
                  "<parent link='a'/><child link='b'/><axis xyz='0 0 0'/></joint></robot>", "axis is zero"),
    "negative_mass": ("<robot name='x'><link name='a'/><link name='b'><inertial><mass value='-1'/>"
                      "<inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial></link>"
                      "<joint name='j' type='revolute'><parent link='a'/><child link='b'/><axis xyz='0 0 1'/>"
                      "</joint></robot>", "negative"),
    "bad_number": ("<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='revolute'>"
                   "<parent link='a'/><child link='b'/><origin xyz='1 2'/><axis xyz='0 0 1'/></joint></robot>",
                   "joint 'j': field 'origin xyz': expected 3 numbers, got 2"),
    "not_a_number": ("<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='revolute'>"
                     "<parent link='a'/><child link='b'/><axis xyz='0 zero 1'/></joint></robot>",
                     "joint 'j': field 'axis xyz': '0 zero 1' is not 3 numbers"),
    "closed_chain": ("<robot name='x'><link name='a'/><link name='b'/><link name='c'/>"
                     "<joint name='j1' type='revolute'><parent link='a'/><child link='b'/></joint>"
                     "<joint name='j2' type='revolute'><parent link='a'/><child link='c'/></joint>"
                     "<joint name='j3' type='revolute'><parent link='c'/><child link='b'/></joint></robot>",
                     "closed chain"),
    "mimic": ("<robot name='x'><link name='a'/><link name='b'/><link name='c'/><link name='d'/>"
              "<joint name='j1' type='revolute'><parent link='a'/><child link='b'/></joint>"
              "<joint name='j9' type='fixed'><parent link='a'/><child link='d'/></joint>"
              "<joint name='j2' type='prismatic'><parent link='a'/><child link='c'/><mimic joint='j9'/></joint>"
              "</robot>", "joint 'j2': field 'mimic': it mimics joint 'j9', which is not a moving joint"),
    "loop": ("<robot name='x'><link name='a'/><link name='b'/><link name='c'/><link name='d'/>"
             "<joint name='j1' type='revolute'><parent link='a'/><child link='b'/></joint>"
             "<joint name='j2' type='revolute'><parent link='c'/><child link='d'/></joint>"
             "<joint name='j3' type='revolute'><parent link='d'/><child link='c'/></joint></robot>",
             "not one tree: links 'c', 'd' are not connected to the root 'a'"),
    "no_joint": ("<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='fixed'>"
                 "<parent link='a'/><child link='b'/></joint></robot>", "no moving joint"),
    "entity": ("<?xml version='1.0'?><!DOCTYPE robot [<!ENTITY x 'y'>]><robot name='&x;'><link name='a'/></robot>",
               "DOCTYPE"),
    "self_joint": ("<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='revolute'>"
                   "<parent link='b'/><child link='b'/><axis xyz='0 0 1'/></joint></robot>",
                   "joint 'j': its parent and child are the same link 'b'"),
    "infinite_origin": ("<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='revolute'>"
                        "<parent link='a'/><child link='b'/><origin xyz='1e400 0 0'/><axis xyz='0 0 1'/></joint>"
                        "</robot>", "joint 'j': field 'origin xyz': 1e400 is not a finite number"),
    "nan_rpy": ("<robot name='x'><link name='a'/><link name='b'/><joint name='j' type='revolute'>"
                "<parent link='a'/><child link='b'/><origin rpy='0 nan 0'/><axis xyz='0 0 1'/></joint>"
                "</robot>", "joint 'j': field 'origin rpy': nan is not a finite number"),
    "infinite_inertia": ("<robot name='x'><link name='a'/><link name='b'><inertial><mass value='1'/>"
                         "<inertia ixx='inf' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial></link>"
                         "<joint name='j' type='revolute'><parent link='a'/><child link='b'/><axis xyz='0 0 1'/>"
                         "</joint></robot>", "link 'b': field 'inertial inertia ixx': inf is not a finite number"),
    "partial_inertia": ("<robot name='x'><link name='a'/><link name='b'><inertial><mass value='1'/>"
                        "<inertia ixx='1'/></inertial></link><joint name='j' type='revolute'><parent link='a'/>"
                        "<child link='b'/><axis xyz='0 0 1'/></joint></robot>",
                        "link 'b': field 'inertia': <inertia> has no ixy, ixz, iyy, iyz, izz"),
    "no_inertia": ("<robot name='x'><link name='a'/><link name='b'><inertial><mass value='1'/></inertial></link>"
                   "<joint name='j' type='revolute'><parent link='a'/><child link='b'/><axis xyz='0 0 1'/></joint>"
                   "</robot>", "link 'b': field 'inertia': no <inertia>"),
    "no_mass": ("<robot name='x'><link name='a'/><link name='b'><inertial><mass/>"
                "<inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/></inertial></link>"
                "<joint name='j' type='revolute'><parent link='a'/><child link='b'/><axis xyz='0 0 1'/>"
                "</joint></robot>", "link 'b': field 'mass': <inertial> needs <mass value=...>"),
    "indefinite": ("<robot name='x'><link name='a'/><link name='b'><inertial><mass value='1'/>"
                   "<inertia ixx='1' ixy='0' ixz='0' iyy='-1' iyz='0' izz='1'/></inertial></link>"
                   "<joint name='j' type='revolute'><parent link='a'/><child link='b'/><axis xyz='0 0 1'/>"
                   "</joint></robot>", "link 'b'"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_urdf_gives_a_one_line_error(tmp_path: Path, case: str) -> None:
    text, expected = MALFORMED[case]
    path = tmp_path / f"{case}.urdf"
    path.write_text(text)
    with pytest.raises(rd.ModelError) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rd.load(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message and expected in message, message


def test_cli_reads_urdf_and_exits_2_on_a_malformed_one(tmp_path: Path) -> None:
    good = tmp_path / "arm.urdf"
    good.write_text(_mixed_arm())
    runner = CliRunner()
    result = runner.invoke(app, ["show", str(good)])
    assert result.exit_code == 0, result.output
    bad = tmp_path / "bad.urdf"
    bad.write_text(MALFORMED["mimic"][0])
    result = runner.invoke(app, ["show", str(bad)])
    assert result.exit_code == 2
    assert "mimic" in result.output and len(result.output.strip().splitlines()) == 1
    result = runner.invoke(app, ["show", str(tmp_path / "missing.urdf")])
    assert result.exit_code == 2 and "no such file" in result.output
    infinite = tmp_path / "infinite.urdf"
    infinite.write_text(MALFORMED["infinite_origin"][0])
    result = runner.invoke(app, ["show", str(infinite)])  # no NumPy "invalid value" warning lines before it
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"error: {infinite}: {MALFORMED['infinite_origin'][1]}"]


def test_check_leaves_kane_out_for_placements_and_compares_the_rest(tmp_path: Path) -> None:
    from robodyn.analysis.check import check

    path = tmp_path / "mixed.urdf"
    path.write_text(_mixed_arm())
    robot = rd.load(path)
    robot = robot.replace(links=robot.links[:2], frames=())  # R, R with a tilted axis: a placement
    assert robot.has_placements
    result = check(robot, samples=5)
    assert result.skipped == {"kane": "not applicable (fixed placements)"} and "kane" not in result.methods
    assert {c.method for c in result.comparisons} == {"lagrange-euler", "dalembert", "emdeg"} and result.agree
    with pytest.raises(rd.DerivationError, match="placement"):  # asked for by name, Kane still says why not
        check(robot, ("newton-euler", "kane"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check(load_quiet("two_link_fu")).skipped == {}  # no placement: Kane is compared


def test_cli_check_and_report_on_the_ur5(tmp_path: Path) -> None:
    """UR5 has fixed placements: check and report leave Kane's algorithm out, saying so, and exit 0."""
    path = _example_robot_data("ur_description/urdf/ur5_robot.urdf")
    runner = CliRunner()
    result = runner.invoke(app, ["check", str(path), "--samples", "3"])
    assert result.exit_code == 0, result.output
    assert re.search(r"kane\s.*not applicable \(fixed placements\)", result.output)
    assert "lagrange-euler" in result.output and "emdeg" in result.output and "all methods agree" in result.output
    target = tmp_path / "ur5.html"
    result = runner.invoke(app, ["report", str(path), "-o", str(target), "--no-plots", "--no-check"])
    assert result.exit_code == 0, result.output
    page = target.read_text(encoding="utf-8")
    assert "not applicable (fixed placements)" in page and "cheapest straight-line program" in page

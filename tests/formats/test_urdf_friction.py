"""URDF ``<dynamics friction>`` read as robodyn's Coulomb friction (``coulomb`` = [f, -f], tau += f sign(qd)), beside
``<dynamics damping>``: a URDF equals the same robot written as a model file, numerically, at both signs of qd;
``friction="ignore"`` drops it; Pinocchio reads the same numbers; Talos loads with no warning; to_urdf writes it
back."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.formats.urdf import read_urdf, to_urdf, write_urdf

pytest.importorskip("lxml")

INERTIAL = ('<inertial><origin xyz="{com}" rpy="0 0 0"/><mass value="{mass}"/><inertia ixx="{ixx}" ixy="0" '
            'ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>')

#: Three joints (revolute, revolute turned by 90 degrees about x, prismatic), each with damping and friction.
URDF = f"""<robot name="friction_arm">
<link name="base"/>
<link name="l1">{INERTIAL.format(com="0.1 0 0.05", mass=3, ixx=0.02, iyy=0.03, izz=0.04)}</link>
<link name="l2">{INERTIAL.format(com="0.2 0.01 0", mass=2, ixx=0.01, iyy=0.05, izz=0.05)}</link>
<link name="l3">{INERTIAL.format(com="0 0 0.1", mass=1, ixx=0.004, iyy=0.004, izz=0.001)}</link>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.5"/><axis xyz="0 0 1"/>
<limit lower="-3" upper="3" effort="1" velocity="1"/><dynamics damping="0.2" friction="0.5"/></joint>
<joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/>
<origin xyz="0.4 0 0" rpy="1.5707963267948966 0 0"/><axis xyz="0 0 1"/><dynamics damping="0.1" friction="0.3"/></joint>
<joint name="j3" type="prismatic"><parent link="l2"/><child link="l3"/><origin xyz="0.3 0 0"/><axis xyz="0 0 1"/>
<limit lower="-1" upper="1" effort="1" velocity="1"/><dynamics friction="1.5"/></joint>
</robot>
"""

#: The same robot as a model file, written by hand (modified DH: the URDF origins are DH rows).
MODEL = """name: friction_arm
convention: modified
gravity: [0, 0, -9.81]
links:
  - {name: j1, joint: R, d: 0.5, mass: 3, com: [0.1, 0, 0.05], inertia: [0.02, 0.03, 0.04], damping: 0.2,
     coulomb: 0.5}
  - {name: j2, joint: R, a: 0.4, alpha: pi/2, mass: 2, com: [0.2, 0.01, 0], inertia: [0.01, 0.05, 0.05],
     damping: 0.1, coulomb: [0.3, -0.3]}
  - {name: j3, joint: P, a: 0.3, mass: 1, com: [0, 0, 0.1], inertia: [0.004, 0.004, 0.001], coulomb: 1.5}
"""
FRICTION = np.array([0.5, 0.3, 1.5])


@pytest.fixture
def paths(tmp_path: Path) -> tuple[Path, Path]:
    urdf, model = tmp_path / "arm.urdf", tmp_path / "arm.yaml"
    urdf.write_text(URDF)
    model.write_text(MODEL)
    return urdf, model


def _states(seed: int = 1) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """States with qd of both signs on every joint (and one at rest)."""
    rng = np.random.default_rng(seed)
    out = []
    for signs in ([1, 1, 1], [-1, -1, -1], [1, -1, 1], [-1, 1, -1]):
        out.append((rng.uniform(-1, 1, 3), np.array(signs) * rng.uniform(0.1, 2.0, 3), rng.uniform(-1, 1, 3)))
    out.append((rng.uniform(-1, 1, 3), np.zeros(3), rng.uniform(-1, 1, 3)))
    return out


def test_urdf_friction_equals_the_model_file(paths: tuple[Path, Path]) -> None:
    urdf, model = paths
    robot, reference = rd.load(urdf), rd.load(model)
    frictionless = reference.replace(links=tuple(link.replace(coulomb=0) for link in reference.links))
    assert [tuple(float(x) for x in link.coulomb) for link in robot.links] == [(0.5, -0.5), (0.3, -0.3), (1.5, -1.5)]
    assert [float(link.damping) for link in robot.links] == [0.2, 0.1, 0.0]
    for q, qd, qdd in _states():
        ours, theirs = numeric.inverse_dynamics(robot, q, qd, qdd), numeric.inverse_dynamics(reference, q, qd, qdd)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12 * max(1.0, np.abs(theirs).max()))
        bare = numeric.inverse_dynamics(frictionless, q, qd, qdd)
        np.testing.assert_allclose(ours - bare, FRICTION * np.sign(qd), rtol=0, atol=1e-12)  # 0 at rest


def test_friction_ignore_drops_it(paths: tuple[Path, Path]) -> None:
    urdf, _ = paths
    robot, dropped = rd.load(urdf), rd.load(urdf, friction="ignore")
    assert not any(link.has_coulomb for link in dropped.links)
    assert [float(link.damping) for link in dropped.links] == [0.2, 0.1, 0.0]  # damping stays
    q, qd, qdd = _states()[1]
    np.testing.assert_allclose(numeric.inverse_dynamics(robot, q, qd, qdd) - numeric.inverse_dynamics(dropped, q, qd,
                               qdd), -FRICTION, rtol=0, atol=1e-12)  # qd < 0 on every joint: -f
    with pytest.raises(rd.ModelError, match=r"friction='dry': expected one of 'coulomb', 'ignore'"):
        rd.load(urdf, friction="dry")


def test_pinocchio_reads_the_same_friction(paths: tuple[Path, Path]) -> None:
    pin = pytest.importorskip("pinocchio")
    urdf, _ = paths
    model = pin.buildModelFromUrdf(str(urdf))
    robot = rd.load(urdf)
    np.testing.assert_array_equal(np.array(model.friction), [float(link.coulomb[0]) for link in robot.links])
    np.testing.assert_array_equal(np.array(model.damping), [float(link.damping) for link in robot.links])


@pytest.mark.parametrize(("friction", "words"), [
    ("-0.5", "joint 'j1': field 'friction': friction -0.5 is negative"),
    ("nan", "field 'dynamics friction': nan is not a finite number"),
])
def test_bad_friction_is_one_line(tmp_path: Path, friction: str, words: str) -> None:
    path = tmp_path / "bad.urdf"
    path.write_text(URDF.replace('friction="0.5"', f'friction="{friction}"'))
    with pytest.raises(rd.ModelError) as info:
        rd.load(path)
    assert "\n" not in str(info.value) and words in str(info.value), str(info.value)


def test_friction_on_a_planar_joint_is_refused_unless_ignored(tmp_path: Path) -> None:
    path = tmp_path / "planar.urdf"
    path.write_text(URDF.replace('<joint name="j1" type="revolute">', '<joint name="j1" type="planar">'))
    with pytest.raises(rd.ModelError, match=r"joint 'j1': field 'friction': Coulomb friction on a planar joint"):
        rd.load(path)
    assert rd.load(path, friction="ignore").links[0].joint == "planar"


def test_to_urdf_writes_the_friction_back(paths: tuple[Path, Path], tmp_path: Path) -> None:
    urdf, model = paths
    robot = rd.load(model)
    back = read_urdf(write_urdf(robot, tmp_path / "back.urdf"))
    assert [link.coulomb for link in back.links] == [link.coulomb for link in rd.load(urdf).links]
    uneven = robot.replace(links=(robot.links[0].replace(coulomb=[0.4, -0.2]), *robot.links[1:]))
    with pytest.warns(rd.ModelWarning, match=r"written as \(Tc\+ - Tc-\)/2"):
        text = to_urdf(uneven)
    assert f'friction="{(0.4 + 0.2) / 2!r}"' in text


def test_talos_loads_its_friction_with_no_warning() -> None:
    from benchmarks.urdf_survey import robots_directory

    directory = robots_directory()
    if directory is None:
        pytest.skip("example-robot-data's robots directory was not found")
    path = directory / "talos_data" / "robots" / "talos_reduced.urdf"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all (it gave 20 about friction)
        robot = rd.load(path, floating=True)
    assert robot.floating and (robot.nq, robot.nv) == (39, 38)
    assert sum(link.has_coulomb for link in robot.links) == 20

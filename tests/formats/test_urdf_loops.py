"""Loop closures read from URDF: Drake's ``<loop_joint>`` and URDF+'s ``<loop>`` (robodyn.formats.urdf_xml), and
the actuated joints (``actuated=``, URDF+ ``independent``, ``<transmission>``): the four-bar of
tests/data/fourbar_parallelogram.urdf gives the dynamics of the built-in model file fourbar_parallelogram to
1e-12, however its loop is written; every hostile loop element is refused in one line naming the file, the loop
and the field."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.errors import ModelError
from robodyn.formats.urdf import read_urdf

pytest.importorskip("lxml")

DATA = Path(__file__).parent.parent / "data" / "fourbar_parallelogram.urdf"
TEXT = DATA.read_text()
GRAVITY = (0, -9.81, 0)  # the model file's; the URDF's plane is x-y
DRAKE_LOOP = TEXT[TEXT.index("  <loop_joint"):TEXT.index("</loop_joint>") + len("</loop_joint>")]
URDF_PLUS_LOOP = """  <loop name="fourbar" type="continuous">
    <predecessor link="coupler"><origin xyz="1.5 0 0" rpy="0 0 0"/></predecessor>
    <successor link="crank2"><origin xyz="2 0 0"/></successor>
    <axis xyz="0 0 1"/>
  </loop>"""
UNMARKED = TEXT.replace(' independent="true"', "").replace(' independent="false"', "")
TRANSMISSION = ('  <transmission name="t1"><type>transmission_interface/SimpleTransmission</type>'
                '<joint name="crank1"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>'
                '<actuator name="m1"><mechanicalReduction>1</mechanicalReduction></actuator></transmission>\n'
                '</robot>')


def _write(tmp_path: Path, text: str, name: str = "fourbar.urdf") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _agree(robot: rd.Manipulator, reference: rd.Manipulator) -> None:
    """Same coordinates, same loop couplings, the same tau and M to 1e-12 at random states."""
    assert (robot.n, robot.nv, robot.actuated, len(robot.loops)) == (3, 1, (0,), 1)
    assert [(c.joint, c.leaders, c.offset, c.loop) for c in robot.couplings] == \
        [(c.joint, c.leaders, c.offset, c.loop) for c in reference.couplings]
    rng = np.random.default_rng(30)
    for q, qd, qdd in rng.uniform(-3, 3, size=(8, 3, 1)):
        np.testing.assert_allclose(numeric.inverse_dynamics(robot, q, qd, qdd),
                                   numeric.inverse_dynamics(reference, q, qd, qdd), rtol=0, atol=1e-12)
        np.testing.assert_allclose(numeric.mass_matrix(robot, q), numeric.mass_matrix(reference, q),
                                   rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def reference() -> rd.Manipulator:
    return rd.load("fourbar_parallelogram")


def test_drake_loop_joint_gives_the_model_files_dynamics(reference: rd.Manipulator) -> None:
    robot = read_urdf(DATA, gravity=GRAVITY)
    assert robot.loops[0].name == "fourbar" and robot.loops[0].joint == "revolute"
    assert robot.loops[0].axis == (0, 0, 1)
    _agree(robot, reference)


@pytest.mark.parametrize("variant", ["urdf_plus_loop", "transmission", "actuated_argument", "independent_typo",
                                     "drake_origin_child", "urdf_plus_attributes"])
def test_every_way_of_writing_the_loop_and_the_actuated_joint(variant: str, tmp_path: Path,
                                                              reference: rd.Manipulator) -> None:
    actuated = None
    if variant == "urdf_plus_loop":
        text = TEXT.replace(DRAKE_LOOP, URDF_PLUS_LOOP)
    elif variant == "independent_typo":  # any value but true is false, as the URDF+ authors' four_bar.urdf has it
        text = TEXT.replace('<joint name="crank2" type="continuous" independent="false"',
                            '<joint name="crank2" type="continuous" independent="fasle"')
        assert text != TEXT
    elif variant == "drake_origin_child":  # the frame as an <origin> in <link1>, as Drake's MATLAB parser read it
        text = TEXT.replace('<link1 link="coupler" xyz="1.5 0 0" rpy="0 0 0"/>',
                            '<link1 link="coupler"><origin xyz="1.5 0 0" rpy="0 0 0"/></link1>')
    elif variant == "urdf_plus_attributes":
        text = TEXT.replace(DRAKE_LOOP, URDF_PLUS_LOOP.replace('<successor link="crank2"><origin xyz="2 0 0"/>',
                                                               '<successor link="crank2" xyz="2 0 0">'))
        assert 'xyz="2 0 0">' in text
    elif variant == "transmission":
        text = UNMARKED.replace("</robot>", TRANSMISSION)
    else:
        text, actuated = UNMARKED, ["crank1"]
    robot = read_urdf(_write(tmp_path, text), gravity=GRAVITY, actuated=actuated)
    _agree(robot, reference)


def test_frames_through_fixed_joints_and_a_turned_root(tmp_path: Path, reference: rd.Manipulator) -> None:
    """The root turned by a fixed joint (the plane x-y upright: gravity -z of the world is -y of the ground) and
    the loop closed on a link fixed to the coupler's end: the closing frames are moved into robodyn's frames."""
    text = TEXT.replace('<link name="ground"/>', '<link name="world"/><link name="ground"/><link name="tip"/>'
                        '<joint name="mount" type="fixed"><parent link="world"/><child link="ground"/>'
                        '<origin xyz="0 0 1" rpy="1.5707963267948966 0 0"/></joint>'
                        '<joint name="tip" type="fixed"><parent link="coupler"/><child link="tip"/>'
                        '<origin xyz="1.5 0 0" rpy="0 0 0"/></joint>')
    text = text.replace('<link1 link="coupler" xyz="1.5 0 0" rpy="0 0 0"/>', '<link1 link="tip"/>')
    robot = rd.load(str(_write(tmp_path, text)))
    _agree(robot, reference)


def test_rd_load_takes_the_actuated_joints(tmp_path: Path, reference: rd.Manipulator) -> None:
    _agree(rd.load(str(_write(tmp_path, UNMARKED)), actuated=["crank1"]).replace(gravity=GRAVITY), reference)
    with pytest.raises(ModelError, match="applies to URDF files only"):
        rd.load("fourbar_parallelogram", actuated=["crank1"])


REFUSED = [  # (what replaces what in the file, the words of the one line, the field it names)
    (('<link2 link="crank2"', '<link2 link="nowhere"'), "refers to link 'nowhere'", "link2"),
    (('<link1 link="coupler" xyz="1.5 0 0" rpy="0 0 0"/>', ""), "missing <link1 link=...>", "link1"),
    (('<link2 link="crank2"', '<link2 name="crank2"'), "missing <link2 link=...>", "link2"),
    (('<loop_joint name="fourbar" type="continuous">', '<loop_joint name="fourbar" type="screw">'),
     "unknown loop joint type 'screw'", "type"),
    (('<loop_joint name="fourbar" type="continuous">', '<loop_joint name="fourbar">'), "has no type", "type"),
    (('<loop_joint name="fourbar" type="continuous">', '<loop_joint type="continuous">'), "has no name", "name"),
    (('xyz="1.5 0 0" rpy="0 0 0"/>\n    <link2', 'xyz="1.5 0" rpy="0 0 0"/>\n    <link2'), "expected 3 numbers",
     "link1 origin xyz"),
    (('<link2 link="crank2" xyz="2 0 0" rpy="0 0 0"/>', '<link2 link="crank2" xyz="2 0 0" rpy="nan 0 0"/>'),
     "not a finite number", "link2 origin rpy"),
    (('<axis xyz="0 0 1"/>\n  </loop_joint>', '<axis xyz="0 1"/>\n  </loop_joint>'), "expected 3 numbers",
     "axis xyz"),
    (('<axis xyz="0 0 1"/>\n  </loop_joint>', '<axis xyz="0 0 0"/>\n  </loop_joint>'), "axis is zero", "axis"),
    (('<link2 link="crank2"', '<link2 link="coupler"'), "and itself", "link2"),
    (("</robot>", DRAKE_LOOP + "\n</robot>"), "two loops have this name", "name"),
    (('<link2 link="crank2" xyz="2 0 0" rpy="0 0 0"/>', '<link2 link="crank2" xyz="2 0 0"><origin/></link2>'),
     "both xyz/rpy attributes and an <origin>", "link2"),
    (('<link1 link="coupler" xyz="1.5 0 0"', '<link1 link="coupler" xyz="1 0 0"'),
     "does not close this four-bar: give its branch", "loops"),  # (a four-bar, in closed form given its branch)
    ((' independent="true"', ' independent="false"'), "needs its actuated joints", "actuated"),
]


@pytest.mark.parametrize(("change", "words", "field"), REFUSED, ids=[w for _, w, _ in REFUSED])
def test_hostile_loop_elements_are_refused_in_one_line(change: tuple[str, str], words: str, field: str,
                                                       tmp_path: Path) -> None:
    assert change[0] in TEXT
    path = _write(tmp_path, TEXT.replace(*change))
    with pytest.raises(ModelError) as info:
        read_urdf(path)
    line = str(info.value)
    assert words in line and "\n" not in line, line
    assert str(path) in line and info.value.field == field, line
    loop = "<loop_joint>" if words == "has no name" else "fourbar"  # the loop by name, else its element and line
    if field != "actuated":  # (that one is the robot's field)
        assert loop in line.replace(str(path), ""), line


def test_a_loop_in_space_is_implicit(tmp_path: Path) -> None:
    """A closing axis across the plane: no parallelogram, no planar four-bar, an implicit loop (solved numerically,
    robodyn.numeric.closed_chains)."""
    across = TEXT.replace('<axis xyz="0 0 1"/>\n  </loop_joint>', '<axis xyz="1 0 0"/>\n  </loop_joint>')
    path = _write(tmp_path, across)
    robot = read_urdf(path)
    assert robot.implicit == ("fourbar",) and robot.nv == 1 and len(robot.passive) == 2


@pytest.mark.parametrize(("text", "actuated", "words"), [
    (UNMARKED, None, "does not say which joints are actuated"),
    (UNMARKED, ["nowhere"], "no moving joint is named 'nowhere'"),
    (UNMARKED, ["crank1", "crank1"], "listed twice"),
    (UNMARKED, ["crank1", "coupler", "crank2"], "over-constrained"),
    (TEXT.replace(DRAKE_LOOP, ""), ["crank1"], "no loop closure"),
    (TEXT.replace(DRAKE_LOOP, URDF_PLUS_LOOP.replace("successor", "follower")), None, "missing <successor"),
    (TEXT.replace("</robot>", "".join(DRAKE_LOOP.replace('"fourbar"', f'"bar{k}"') for k in range(3)) + "</robot>"),
     None, "4 loop closures on 3 moving joints"),
])
def test_the_actuated_joints_refused_in_one_line(text: str, actuated: list[str] | None, words: str,
                                                 tmp_path: Path) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ModelError, match=words) as info:
        read_urdf(path, actuated=actuated)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_the_command_line_shows_the_loop_and_refuses_in_one_line(tmp_path: Path) -> None:
    """In a fresh process, as a user runs it: the file loads (its loop listed); a spoiled one is exit code 2 and
    one line, no traceback."""
    bad = _write(tmp_path, TEXT.replace('<link2 link="crank2"', '<link2 link="nowhere"'), "bad.urdf")
    ok = subprocess.run([sys.executable, "-m", "robodyn", "show", str(DATA)], capture_output=True, text=True,
                        timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "fourbar" in ok.stdout
    refused = subprocess.run([sys.executable, "-m", "robodyn", "show", str(bad)], capture_output=True, text=True,
                             timeout=120)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "nowhere" in lines[0] and "bad.urdf" in lines[0], refused.stderr


def test_the_command_line_takes_the_actuated_joints() -> None:
    """``--actuated crank2`` makes the other crank passive (the structure says so), as rd.load(actuated=...) does;
    an unknown joint, or the option on a model file, is one line with exit code 2."""
    def show(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "robodyn", "show", *args], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "COLUMNS": "200"})

    chosen = show(str(DATA), "--actuated", "crank2")
    assert chosen.returncode == 0, chosen.stderr
    assert "3 crank2 (R, actuated)" in chosen.stdout and "1 crank1 (R, passive: follows crank2" in chosen.stdout
    for args, words in (((str(DATA), "--actuated", "nowhere"), "nowhere"),
                        (("fourbar_parallelogram", "--actuated", "crank1"), "URDF files only")):
        refused = show(*args)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and words in refused.stderr, refused.stderr


def test_the_guides_example_runs_as_written() -> None:
    """docs/guide/trees.md's loop example, in a fresh process from the repository root, prints what it says."""
    text = (Path(__file__).parent.parent.parent / "docs" / "guide" / "trees.md").read_text(encoding="utf-8")
    section = text[text.index("**Loop closures.**"):text.index("**Joint names and named states.**")]
    code = section.split("```python\n")[1].split("```")[0]
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).parent.parent.parent)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == code.split("# ")[-1].split()

"""The readers as tolerant as urdfdom where it is harmless (the XML declaration), and one line for what robodyn does
not read: a URDF without links, MuJoCo's MJCF; xacro expanded in process (tests/formats/test_urdf_xacro.py); DTDs,
entities and XInclude stay refused or inert."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app

pytest.importorskip("lxml")

ARM = """<robot name="arm">
  <link name="base"/>
  <link name="l1">
    <inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>
  </link>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
</robot>
"""

MJCF = """<mujoco model="arm">
  <worldbody>
    <body name="l1"><joint name="j1" type="hinge"/><geom type="sphere" size="0.1"/></body>
  </worldbody>
</mujoco>
"""

XACRO = """<?xml version="1.0"?>
<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:property name="length" value="0.5"/>
  <link name="base"/>
  <link name="arm"><inertial><mass value="1"/><origin xyz="${length / 2} 0 0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>
</robot>
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _refused(path: Path | str, *words: str) -> str:
    """rd.load refuses ``path`` with a one-line ModelError naming the file and saying ``words``."""
    with pytest.raises(rd.ModelError) as info, warnings.catch_warnings():
        warnings.simplefilter("error")  # a refusal, not a warning and a parse
        rd.load(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message, message
    for word in words:
        assert word in message, message
    return message


def _cli_refuses(path: Path, *words: str) -> None:
    """``robodyn show FILE`` exits 2 with one line naming the file, no traceback."""
    result = CliRunner().invoke(app, ["show", str(path)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.output
    joined = " ".join(result.output.split())  # rich may wrap a long line
    for word in (path.name, *words):
        assert word in joined, result.output


def _loads(path: Path) -> rd.Manipulator:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return rd.load(path)


# -- the XML declaration: as urdfdom and PyBullet read it ------------------------------------------------------------
@pytest.mark.parametrize("prolog", [
    '<?xml version="0.0"?>\n',  # PyBullet's minitaur family
    '<?xml version="0.0" ?>\n<!-- a comment -->\n',
    '<!-- written by a tool -->\n<?xml version="1.0"?>\n',  # diff_ring.urdf: the declaration after a comment
    '<!-- one -->\n<!-- two -->\n<?xml version="1.0" encoding="UTF-8"?>\n',
    '\ufeff<?xml version="0.0" encoding="utf-8"?>\n',  # with a byte order mark
    '<?xml version="1.0"?>\n',  # the ordinary cases, unchanged
    '<?xml version="1.1"?>\n',
    "",
], ids=["version_0_0", "version_0_0_comment", "after_comment", "after_two_comments", "bom", "plain", "v1_1", "none"])
def test_xml_declaration_is_read_as_urdfdom_reads_it(tmp_path: Path, prolog: str) -> None:
    reference = _loads(_write(tmp_path, "reference.urdf", ARM))
    robot = _loads(_write(tmp_path, "arm.urdf", prolog + ARM))
    assert robot.links == reference.links and robot.name == "arm"
    result = CliRunner().invoke(app, ["show", str(tmp_path / "arm.urdf")])
    assert result.exit_code == 0, result.output


def test_declaration_keeps_its_encoding_and_line_numbers(tmp_path: Path) -> None:
    """The declaration's encoding is kept when it moves to the start; errors still give the file's own lines."""
    latin = ('<!-- caf\xe9 -->\n<?xml version="1.0" encoding="ISO-8859-1"?>\n'
             + ARM.replace('name="arm"', 'name="arm\xe9"'))
    path = tmp_path / "latin.urdf"
    path.write_bytes(latin.encode("latin-1"))
    assert "'arm\xe9'" in _loads(path).description  # the robot's name, decoded as ISO-8859-1
    broken = '<!-- a comment -->\n<?xml version="1.0"?>\n<robot name="arm">\n<link/>\n</robot>\n'
    _refused(_write(tmp_path, "broken.urdf", broken), "a <link> has no name attribute (line 4)")


@pytest.mark.parametrize("text", [
    '<?xml version="0.0"?>\n<!DOCTYPE robot [<!ENTITY x "y">]>\n<robot name="&x;"><link name="a"/></robot>\n',
    '<!-- c -->\n<?xml version="1.0"?>\n<!DOCTYPE robot [<!ENTITY x "y">]>\n<robot name="&x;"><link name="a"/></robot>',
    '<!-- c -->\n<!DOCTYPE robot SYSTEM "robot.dtd">\n<?xml version="1.0"?>\n<robot name="a"><link name="a"/></robot>',
    '<?xml version="0.0"?>\n<!DOCTYPE robot SYSTEM "/etc/passwd">\n<robot name="a"><link name="a"/></robot>',
], ids=["entity_v0", "entity_after_comment", "doctype_before_declaration", "external_dtd"])
def test_dtds_and_entities_are_still_refused(tmp_path: Path, text: str) -> None:
    message = _refused(_write(tmp_path, "evil.urdf", text))
    assert "DOCTYPE" in message or "not valid XML" in message, message


def test_xinclude_is_never_processed(tmp_path: Path) -> None:
    """An ``xi:include`` is not expanded (as before): the included link stays undefined."""
    _write(tmp_path, "part.xml", '<link name="l1"/>')
    text = ARM.replace('<link name="l1">', '<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="part.xml"/>'
                       '<link name="l0">')
    text = '<?xml version="0.0"?>\n' + text
    _refused(_write(tmp_path, "include.urdf", text), "'l1'", "not defined")


# -- one line for what is not a URDF robodyn reads -----------------------------------------------------------------
def test_urdf_without_links_says_so(tmp_path: Path) -> None:
    for name, text in [("empty.urdf", '<robot name="r"/>'),
                       ("joints_only.urdf", '<?xml version="1.0"?><robot name="r"><joint name="j" type="fixed">'
                        '<parent link="a"/><child link="b"/></joint></robot>')]:
        path = _write(tmp_path, name, text)
        message = _refused(path, "no <link>")
        assert "loop" not in message
        _cli_refuses(path, "no <link>")


@pytest.mark.parametrize("name", ["arm.xml", "arm.mjcf", "scene.XML"])
def test_mjcf_is_read_through_mujoco_not_as_yaml(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path, name, MJCF)
    pytest.importorskip("mujoco")  # robodyn.formats.mjcf; tests/formats/test_mjcf.py checks the numbers
    assert rd.load(path).joint_names == ("j1",)
    other = _write(tmp_path, "other" + Path(name).suffix, ARM)  # an XML file that is not MJCF: one line
    message = _refused(other, "not MJCF", "<robot>")
    assert "YAML" not in message and "mapping values" not in message
    _cli_refuses(other, "not MJCF")


def test_mjcf_named_urdf_is_recognised(tmp_path: Path) -> None:
    path = _write(tmp_path, "arm.urdf", '<?xml version="1.0"?>\n' + MJCF)
    _refused(path, "MJCF (MuJoCo) files are not supported yet")
    _cli_refuses(path, "MJCF (MuJoCo)")


def test_missing_mjcf_or_xacro_is_no_such_file(tmp_path: Path) -> None:
    for name in ("gone.xml", "gone.urdf.xacro"):
        _refused(tmp_path / name, "no such file")


@pytest.mark.parametrize("name", ["arm.urdf.xacro", "arm.xacro", "arm.urdf"])
def test_xacro_is_expanded_in_process(tmp_path: Path, name: str) -> None:
    pytest.importorskip("xacro")
    robot = _loads(_write(tmp_path, name, XACRO))  # macros in a .urdf file too
    assert robot.n == 1 and float(robot.links[0].com[0]) == 0.25  # ${length / 2}


def test_expanded_xacro_output_keeping_the_namespace_loads(tmp_path: Path) -> None:
    """xacro's output keeps ``xmlns:xacro`` on <robot>: a declaration alone is no macro."""
    text = ARM.replace('<robot name="arm">', '<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">')
    assert _loads(_write(tmp_path, "expanded.urdf", text)).n == 1

"""xacro files expanded in process (robodyn.formats.urdf_xacro, the ``xacro`` extra): a xacro robot with an argument
and a ``package://`` include equals its expansion written by hand, joint by joint and numerically; packages are
found in the given paths or above the file; errors are one line naming the file, the macro or the package; nothing
is written beside the file."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn import numeric
from robodyn.cli import app

pytest.importorskip("xacro")

DATA = Path(__file__).resolve().parent.parent / "data" / "xacro"
XACRO = DATA / "arm.urdf.xacro"
PACKAGES = DATA / "packages"
EXPANDED = DATA / "arm_length_0.8.urdf"


def _load(path: Path = XACRO, **options: object) -> rd.Manipulator:
    return rd.load(path, **{"xacro_args": {"length": "0.8"}, "package_paths": [PACKAGES], **options})


def _states(n: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [tuple(rng.uniform(-1.0, 1.0, n) for _ in range(3)) for _ in range(4)]  # type: ignore[misc]


def test_a_xacro_robot_equals_its_expansion() -> None:
    robot, reference = _load(), rd.load(EXPANDED)
    assert robot.name == reference.name == "xacro_arm"
    assert robot.joint_names == reference.joint_names == ("upper_joint", "fore_joint")
    for ours, theirs in zip(robot.links, reference.links, strict=True):  # joint by joint, every field exact
        assert ours == theirs
    assert [float(link.mass) for link in robot.links] == [2.0, 1.0]
    assert [float(link.coulomb[0]) for link in robot.links] == [0.3, 0.3]  # the macro's <dynamics friction>
    for q, qd, qdd in _states(robot.n):
        np.testing.assert_array_equal(numeric.inverse_dynamics(robot, q, qd, qdd),
                                      numeric.inverse_dynamics(reference, q, qd, qdd))
        np.testing.assert_array_equal(numeric.mass_matrix(robot, q), numeric.mass_matrix(reference, q))


def test_the_argument_changes_the_robot_and_its_default_holds() -> None:
    default = rd.load(XACRO, package_paths=[PACKAGES])  # length 0.5: the fore joint 0.5 m above the upper one
    longer = _load()
    assert float(default.links[0].mass) == 2.0
    assert float(default.links[0].inertia[0, 0]) == pytest.approx(2.0 * 0.5**2 / 12, rel=1e-15)
    assert float(longer.links[0].inertia[0, 0]) == pytest.approx(2.0 * 0.8**2 / 12, rel=1e-15)
    assert not np.allclose(numeric.mass_matrix(default, [0.1, 0.2]), numeric.mass_matrix(longer, [0.1, 0.2]))


@pytest.mark.parametrize("paths", [[PACKAGES], [PACKAGES / "arm_parts"], [DATA, PACKAGES]])
def test_a_package_path_is_a_package_or_a_directory_of_packages(paths: list[Path]) -> None:
    assert _load(package_paths=paths).links == rd.load(EXPANDED).links


def test_the_package_that_holds_the_file_is_found_without_a_path(tmp_path: Path) -> None:
    """A xacro file inside its own package (a package.xml above it) finds that package by name: $(find NAME)."""
    package = tmp_path / "arm_parts"
    shutil.copytree(PACKAGES / "arm_parts", package)
    text = XACRO.read_text().replace("package://arm_parts/urdf/segment.xacro", "$(find arm_parts)/urdf/segment.xacro")
    (package / "urdf" / "arm.urdf.xacro").write_text(text)
    robot = rd.load(package / "urdf" / "arm.urdf.xacro", xacro_args={"length": 0.8})
    assert robot.links == rd.load(EXPANDED).links


def test_the_expansion_is_written_nowhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "robot"
    shutil.copytree(DATA, copy)
    monkeypatch.chdir(tmp_path)
    before = sorted(os.walk(tmp_path))
    _load(copy / "arm.urdf.xacro", package_paths=[copy / "packages"])
    assert sorted(os.walk(tmp_path)) == before


def _refusal(tmp_path: Path, text: str, **options: object) -> str:
    path = tmp_path / "bad.urdf.xacro"
    path.write_text(text)
    with pytest.raises(rd.ModelError) as info:
        rd.load(path, **{"package_paths": [PACKAGES], **options})
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: "), message
    return message


HEADER = '<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro">'


def test_errors_name_the_macro_or_the_package(tmp_path: Path) -> None:
    missing = _refusal(tmp_path, XACRO.read_text(), package_paths=[tmp_path])
    assert "package 'arm_parts' not found" in missing and "package_paths=[...] (--package-path DIR)" in missing
    unknown = _refusal(tmp_path, f'{HEADER}<link name="a"/><xacro:segmnt name="b"/></robot>')
    assert "unknown macro name: xacro:segmnt" in unknown
    inside = XACRO.read_text().replace('mass="1.0" length="${L}"', 'mass="1.0" length="${L}" colour="red"')
    wrong = _refusal(tmp_path, inside)
    assert "Invalid parameter \"colour\"" in wrong and "in macro 'segment'" in wrong
    undefined = _refusal(tmp_path, f'{HEADER}<link name="${{mass}}"/></robot>')
    assert "name 'mass' is not defined" in undefined
    argument = _refusal(tmp_path, f'{HEADER}<link name="$(arg side)"/></robot>')
    assert "Undefined substitution argument side" in argument
    include = _refusal(tmp_path, f'{HEADER}<xacro:include filename="missing.xacro"/></robot>')
    assert "include /" in include and "missing.xacro" in include and "cannot read the file" in include  # (a long
    # temporary path is cut in the middle of the line)


def test_hostile_xacro_is_refused_before_expansion(tmp_path: Path) -> None:
    doctype = _refusal(tmp_path, f'<!DOCTYPE r [<!ENTITY a "aaaa">]>{HEADER}<link name="&a;"/></robot>')
    assert "DOCTYPE or entity declaration is not allowed" in doctype
    if hasattr(os, "mkfifo"):  # an include that is a FIFO is refused, not opened (it would block)
        os.mkfifo(tmp_path / "fifo.xacro")
        fifo = _refusal(tmp_path, f'{HEADER}<xacro:include filename="fifo.xacro"/></robot>')
        assert "fifo.xacro" in fifo and "is a FIFO, not a regular file" in fifo
    looping = _refusal(tmp_path, f'{HEADER}<xacro:macro name="m"><xacro:m/></xacro:macro><xacro:m/></robot>')
    assert "nested too deeply" in looping or "recursion" in looping.lower()
    with pytest.raises(rd.ModelError, match="xacro_args must map argument names"):
        rd.load(XACRO, xacro_args=["length=1"])
    with pytest.raises(rd.ModelError, match="is not a directory"):
        rd.load(XACRO, package_paths=[tmp_path / "absent"])


def test_xacros_warnings_are_one_model_warning(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "warn.urdf.xacro"
    path.write_text(XACRO.read_text().replace('segment.xacro"/>', 'segment.xacro"><ignored/></xacro:include>'))
    with pytest.warns(rd.ModelWarning) as caught:
        robot = _load(path)
    assert [str(w.message) for w in caught] == [
        f"{path}: xacro: Child elements of a <xacro:include> tag are ignored"]
    assert robot.links == rd.load(EXPANDED).links and capfd.readouterr().err == ""  # nothing printed


def test_an_argument_the_file_does_not_take_is_a_warning() -> None:
    with pytest.warns(rd.ModelWarning, match=r"xacro_args 'lenght': not an argument of the file, ignored; did you "
                                             r"mean 'length'\?"):
        robot = _load(xacro_args={"lenght": "0.8"})
    assert robot.links == rd.load(XACRO, package_paths=[PACKAGES]).links  # the default length, 0.5


def test_without_the_xacro_package_the_refusal_gives_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "xacro", None)  # import xacro now fails as if it were not installed
    with pytest.raises(rd.ModelError) as info:
        _load()
    assert str(info.value) == f"{XACRO}: a xacro file: expanding it needs the 'xacro' package: pip install " \
                              "'robodyn[xacro]'"


def test_xacro_macros_in_a_urdf_file_are_expanded_too(tmp_path: Path) -> None:
    path = tmp_path / "macro.urdf"
    path.write_text(XACRO.read_text())
    assert rd.load(path, xacro_args={"length": "0.8"}, package_paths=[PACKAGES]).links == rd.load(EXPANDED).links


def test_the_command_line_takes_xacro_arguments_and_package_paths() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["show", str(XACRO), "--xacro-arg", "length=0.8", "--package-path", str(PACKAGES)])
    assert result.exit_code == 0, result.output
    assert "2 joints (RR)" in result.stdout and "0.10666666666666669" in result.stdout  # upper's ixx, 2 0.8^2 / 12
    missing = runner.invoke(app, ["show", str(XACRO)])
    assert missing.exit_code == 2 and missing.stderr.count("\n") == 1 and "--package-path DIR" in missing.stderr
    twice = "--xacro-arg 'length=2': 'length' is given twice"
    for bad, words in ((["--xacro-arg", "length"], "--xacro-arg 'length': expected NAME=VALUE"),
                       (["--xacro-arg", "length=1", "--xacro-arg", "length=2"], twice)):
        result = runner.invoke(app, ["show", str(XACRO), "--package-path", str(PACKAGES), *bad])
        assert result.exit_code == 2 and result.stderr.strip() == f"error: {words}", result.stderr

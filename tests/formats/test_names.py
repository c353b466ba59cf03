"""Names never carry code: robot and parameter names follow one grammar, checked wherever a robot is
built; a URDF name is mapped to it; emitters print only such names; free text (descriptions, sources) is
escaped where it is shown; the JSON equations read back with explicit symbols."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import sympy
from typer.testing import CliRunner

import robodyn as rd
from robodyn import codegen, library
from robodyn.cli import app
from robodyn.equations import _display_object, read_dict
from robodyn.errors import ModelError
from robodyn.formats.urdf import to_urdf
from robodyn.model.expr import MAX_NAME_LENGTH, check_name, check_parameter_name, to_identifier
from tests.conftest import load_quiet

runner = CliRunner()

ROW = {"joint": "R", "a": 0.5, "mass": 1.0, "com": [0.25, 0, 0], "inertia": [0.01, 0.02, 0.03]}


def hostile_names(marker: Path) -> list[str]:
    """Names that would run code (``marker`` is the file the Python payload creates), break out of a C or
    XML comment, or be read as rich markup."""
    return [
        f'x""";import os;os.system("touch {marker}");"""',
        "x */ __asm__(\"nop\"); __attribute__((constructor)) static void p(void) { } /*",
        "a /* b",
        "a -- b --> c",
        "a[/]b",
        "UR5 [modified]",
        "x\ny",
        "arm\n",
        "../../etc/x",
        "2nd_arm",
        "_arm",
        "",
        "a" * (MAX_NAME_LENGTH + 1),
        "r\u00f6bot",
    ]


def robot_named(name: str) -> rd.Manipulator:
    return rd.Manipulator.from_dh([ROW], name=name)


def unchecked(robot: rd.Manipulator, name: str) -> rd.Manipulator:
    """``robot`` with ``name`` forced past the constructor's check (what a careless subclass could do)."""
    object.__setattr__(robot, "name", name)
    return robot


# -- the grammar ---------------------------------------------------------------------------------


def test_grammar_accepts_identifiers_and_every_built_in_robot() -> None:
    for name in ["a", "L1", "m_2", "puma560", "UR5_modified", "a" * MAX_NAME_LENGTH, *library.names()]:
        assert check_name(name) == name
    for name in library.names():
        assert load_quiet(name).name == name


@pytest.mark.parametrize("index", range(len(hostile_names(Path("pwned")))))
def test_grammar_refuses_hostile_names(index: int, tmp_path: Path) -> None:
    name = hostile_names(tmp_path / "pwned")[index]
    with pytest.raises(ModelError, match="field 'name'") as info:
        check_name(name)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("value", [None, 5, b"arm", ["arm"]])
def test_a_name_must_be_text(value: object) -> None:
    with pytest.raises(ModelError, match="expected a name"):
        rd.Manipulator.from_dh([ROW], name=value)


def test_to_identifier_maps_any_text_into_the_grammar(tmp_path: Path) -> None:
    assert to_identifier("ur5-e (v2)") == "ur5_e_v2"
    assert to_identifier("2nd arm") == "robot_2nd_arm"
    assert to_identifier("") == "robot"
    for text in hostile_names(tmp_path / "pwned"):
        assert check_name(to_identifier(text)) == to_identifier(text)
    assert codegen.sanitize("Arm-V2") == to_identifier("Arm-V2").lower() == "arm_v2"


# -- every way of building a robot checks the name ----------------------------------------------


def test_constructor_and_from_dh_refuse_hostile_names(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    link = rd.Link(**ROW)
    for name in hostile_names(marker):
        with pytest.raises(ModelError, match="field 'name'"):
            rd.Manipulator(links=(link,), name=name)
        with pytest.raises(ModelError, match="field 'name'"):
            robot_named(name)
        with pytest.raises(ModelError, match="field 'name'"):
            robot_named("arm").replace(name=name)
    assert not marker.exists()


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_load_refuses_a_hostile_name_naming_file_and_field(suffix: str, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / f"arm{suffix}"
    path.write_text(json.dumps({"name": hostile_names(marker)[0], "links": [ROW]}))  # JSON is YAML too
    with pytest.raises(ModelError) as info:
        rd.load(path)
    assert str(info.value).startswith(f"{path}: field 'name': ")
    assert not marker.exists()


def test_a_numeric_yaml_name_is_refused_not_coerced(tmp_path: Path) -> None:
    path = tmp_path / "arm.yaml"
    path.write_text("name: 560\nlinks:\n  - {joint: R, mass: 1}\n")
    with pytest.raises(ModelError, match="field 'name': expected a name, got int"):
        rd.load(path)


@pytest.mark.parametrize("name", ['x"""', "a b", "pi", "sin", "NaN", "q1", "qd2", "a" * (MAX_NAME_LENGTH + 1)])
def test_parameter_names_follow_the_grammar(name: str) -> None:
    with pytest.raises(ModelError):
        check_parameter_name(name)
    with pytest.raises(ModelError, match="field 'mass'"):
        rd.Link(joint="R", mass=sympy.Symbol(name))


def test_parameter_names_in_model_files_are_limited_in_length() -> None:
    assert rd.Link(joint="R", mass="a" * MAX_NAME_LENGTH).mass == sympy.Symbol("a" * MAX_NAME_LENGTH)
    with pytest.raises(ModelError, match="is not allowed"):
        rd.Link(joint="R", mass="a" * (MAX_NAME_LENGTH + 1))


# -- generated code -------------------------------------------------------------------------------


def test_a_name_forced_past_the_check_never_reaches_generated_code(tmp_path: Path) -> None:
    """Defence in depth: the spec refuses what the Manipulator would have refused, before any code exists."""
    marker = tmp_path / "pwned"
    for name in hostile_names(marker)[:3]:
        robot = unchecked(robot_named("arm"), name)
        with pytest.raises(ModelError, match="is not a valid name"):
            codegen.module_spec(robot)
        with pytest.raises(ModelError, match="is not a valid name"):
            rd.compile(robot, backend="numpy")
        with pytest.raises(ModelError):
            to_urdf(robot)
    assert not marker.exists()


def test_a_spec_with_a_hostile_parameter_or_module_name_is_refused(tmp_path: Path) -> None:
    spec = codegen.module_spec(rd.Manipulator.from_dh([{**ROW, "mass": "m1"}], name="arm"))
    assert spec.parameters == ("g", "m1")
    with pytest.raises(ModelError, match="field 'parameters'"):
        dataclasses.replace(spec, parameters=(hostile_names(tmp_path / "pwned")[0],))
    with pytest.raises(ModelError, match="field 'robot'"):
        dataclasses.replace(spec, robot=hostile_names(tmp_path / "pwned")[1])
    with pytest.raises(ModelError, match="field 'name'"):
        dataclasses.replace(spec, name="arm */ int x; /*")


def hostile_urdf(path: Path, marker: Path) -> Path:
    name = f'x""";import os;os.system("touch {marker}");""" */ __asm__("nop") /* -- --> [/] UR5 [modified]'
    root = ET.Element("robot", name=name)
    ET.SubElement(root, "link", name="base")
    joint = ET.SubElement(root, "joint", name="j1 */ [/]", type="continuous")
    ET.SubElement(joint, "parent", link="base")
    ET.SubElement(joint, "child", link="l1")
    ET.SubElement(joint, "axis", xyz="0 0 1")
    link = ET.SubElement(root, "link", name="l1")
    inertial = ET.SubElement(link, "inertial")
    ET.SubElement(inertial, "origin", xyz="0.1 0 0", rpy="0 0 0")
    ET.SubElement(inertial, "mass", value="1.0")
    ET.SubElement(inertial, "inertia", ixx="0.01", ixy="0", ixz="0", iyy="0.02", iyz="0", izz="0.02")
    path.write_text('<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode"))
    return path


@pytest.fixture
def urdf_robot(tmp_path: Path) -> tuple[rd.Manipulator, Path]:
    pytest.importorskip("lxml")
    marker = tmp_path / "pwned"
    robot = rd.load(hostile_urdf(tmp_path / "arm.urdf", marker))
    return robot, marker


def test_urdf_name_is_mapped_and_the_original_kept_as_data(urdf_robot: tuple[rd.Manipulator, Path]) -> None:
    robot, marker = urdf_robot
    assert check_name(robot.name) == robot.name
    assert robot.name.startswith("x_import_os_os_system_touch_")
    assert f'x""";import os;os.system("touch {marker}");"""' in robot.description
    assert "j1 */ [/]" in robot.description


def test_generated_code_of_a_hostile_urdf_holds_no_hostile_text(urdf_robot: tuple[rd.Manipulator, Path],
                                                                tmp_path: Path) -> None:
    """The files differ from those of the same arm named ``arm`` by the mapped name only."""
    robot, marker = urdf_robot
    module = codegen.sanitize(robot.name)
    for language in codegen.LANGUAGES:
        plain = codegen.generate(robot.replace(name="arm"), language)
        for (filename, text), (plain_name, plain_text) in zip(codegen.generate(robot, language).items(),
                                                             plain.items(), strict=True):
            assert filename.replace(module, "arm") == plain_name
            renamed = text.replace(robot.name, "arm").replace(module, "arm").replace(module.upper(), "ARM")
            assert renamed == plain_text  # (C's include guard is the name in upper case)
            for raw in ("*/ __asm__", "/* --", "os.system(", "[/]", str(marker)):
                assert raw not in text, (filename, raw)
    module = codegen.load_python(robot, "numpy")
    assert robot.name == module.NAME
    assert rd.compile(robot, backend="numpy").gravity([0.3]).shape == (1,)
    assert not marker.exists()


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_c_of_a_hostile_urdf_is_strict_c99_and_loads(urdf_robot: tuple[rd.Manipulator, Path],
                                                     tmp_path: Path) -> None:
    robot, marker = urdf_robot
    files = codegen.generate(robot, "c")
    for filename, text in files.items():
        (tmp_path / filename).write_text(text)
    source = next(tmp_path / f for f in files if f.endswith(".c"))
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", "-o", str(tmp_path / "x.o")]
    proc = subprocess.run(["cc", *flags, str(source)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    dyn = rd.compile(robot, cache=tmp_path / "cache")
    assert dyn.gravity([0.3]).shape == (1,)
    assert not marker.exists()


@pytest.mark.skipif(shutil.which("gfortran") is None, reason="no Fortran compiler")
def test_fortran_of_a_hostile_urdf_compiles(urdf_robot: tuple[rd.Manipulator, Path], tmp_path: Path) -> None:
    robot, _ = urdf_robot
    ((filename, text),) = codegen.generate(robot, "fortran").items()
    (tmp_path / filename).write_text(text)
    flags = ["-std=f2008", "-Wall", "-pedantic", "-Werror", "-c", "-J",
             str(tmp_path), "-o", str(tmp_path / "x.o")]
    proc = subprocess.run(["gfortran", *flags, str(tmp_path / filename)], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr


def test_to_urdf_of_a_hostile_urdf_is_valid_xml(urdf_robot: tuple[rd.Manipulator, Path]) -> None:
    robot, _ = urdf_robot
    text = to_urdf(robot)
    root = ET.fromstring(text.split("\n", 1)[1], ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
    assert root.tag == "robot" and root.attrib["name"] == robot.name
    assert root[0].tag is ET.Comment and robot.name in root[0].text
    assert "-->" not in root[0].text and "--" not in root[0].text


# -- rich markup in the command line -------------------------------------------------------------


def model_with_text(tmp_path: Path, description: str, source: str) -> Path:
    path = tmp_path / "arm.yaml"
    path.write_text(json.dumps({"name": "arm", "description": description, "source": source, "links": [ROW]}))
    return path


@pytest.mark.parametrize("command", ["show", "check"])
def test_descriptions_and_sources_print_literally(command: str, tmp_path: Path) -> None:
    path = model_with_text(tmp_path, "a[/]b UR5 [modified] [bold]x[/bold]", "[red]Fu (1987)[/red]")
    result = runner.invoke(app, [command, str(path)])
    assert result.exit_code == 0, result.output
    if command == "show":
        assert "arm: a[/]b UR5 [modified] [bold]x[/bold]" in result.output
        assert "source: [red]Fu (1987)[/red]" in result.output
    else:
        assert "arm: every method against" in result.output


@pytest.mark.parametrize("command", ["show", "check", "derive"])
def test_a_name_with_brackets_is_one_error_line(command: str, tmp_path: Path) -> None:
    path = tmp_path / "arm.yaml"
    path.write_text(json.dumps({"name": "UR5 [modified] a[/]b", "links": [ROW]}))
    result = runner.invoke(app, [command, str(path)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: {path}: field 'name': 'UR5 [modified] a[/]b' is not a valid name (an ASCII letter, then letters, "
        f"digits and _, at most {MAX_NAME_LENGTH} characters)"]


def test_show_of_a_hostile_urdf_prints_its_description_literally(urdf_robot: tuple[rd.Manipulator, Path],
                                                                  tmp_path: Path) -> None:
    result = runner.invoke(app, ["show", str(tmp_path / "arm.urdf")])
    assert result.exit_code == 0, result.output
    assert "/* -- --> [/] UR5 [modified]" in result.output and "j1 */ [/]" in result.output


# -- JSON equations read back exactly --------------------------------------------------------------

CONSTANT_NAMES = ("I", "E", "S", "N", "O", "Q")


def constant_named_robot() -> rd.Manipulator:
    """Parameters named like sympy's constants (I, E, S, N, O, Q), and a float that 15 digits do not keep."""
    return rd.Manipulator.from_dh([
        {"joint": "R", "a": "I", "mass": "E", "com": ["S", 0, 0], "inertia": ["N", "O", "Q"]},
        {"joint": "P", "alpha": "pi/2", "mass": 1 / 3, "com": [0, 0, 0.1], "inertia": [0.1, 0.2, 0.3]},
    ], name="constants", gravity=[0, 0, -9.81])


def elements(value: sympy.Basic) -> list[sympy.Expr]:
    return list(sympy.flatten(value.tolist()))


@pytest.mark.parametrize("form", ["tau", "config-space", "fu", "christoffel", "emdeg"])
def test_json_equations_round_trip_with_explicit_symbols(form: str) -> None:
    robot = constant_named_robot()
    assert {s.name for s in robot.parameters()} == set(CONSTANT_NAMES)
    eqs = rd.derive(robot)
    data = json.loads(json.dumps(eqs.to_dict(form)))
    back = read_dict(data)
    expected = eqs.form_matrices(form)
    assert set(back) == set(expected)
    allowed = {sympy.Symbol(n) for n in [*data["q"], *data["qd"], *data["qdd"], *data["parameters"]]}
    for key, value in expected.items():
        shown = _display_object(value)
        assert back[key].shape == shown.shape, key
        for original, read in zip(elements(shown), elements(back[key]), strict=True):
            assert sympy.expand(original - read) == 0, (key, original, read)
            assert read.free_symbols <= allowed and not read.has(sympy.I, sympy.E)


def test_sympify_would_misread_the_same_json() -> None:
    """What read_dict guards against: without explicit symbols, I is the imaginary unit and the float is cut."""
    eqs = rd.derive(constant_named_robot())
    text = eqs.to_dict()["M"][0][0]
    read = read_dict(json.loads(json.dumps(eqs.to_dict())))["M"][0, 0]
    assert read.free_symbols >= {sympy.Symbol(name) for name in ("I", "E", "S")}
    try:
        misread = sympy.parse_expr(text)
    except TypeError:  # S * ... : sympy's singleton registry
        misread = None
    assert misread != read
    assert repr(1 / 3) in eqs.to_dict()["M"][1][1]  # every digit of the float


def test_cli_json_reads_back(tmp_path: Path) -> None:
    robot = constant_named_robot()
    path = robot.save(tmp_path / "constants.yaml")
    result = runner.invoke(app, ["derive", str(path), "-f", "json"])
    assert result.exit_code == 0, result.output
    back = read_dict(json.loads(result.output))
    assert sympy.expand(back["G"] - _display_object(rd.derive(robot).G)) == sympy.zeros(2, 1)


@pytest.mark.parametrize("text", ["__import__('os').system('x')", "q1.real", "lambda: 1", "exp(q1)", "undefined_name",
                                  "q1 if q2 else I"])
def test_read_dict_never_evaluates(text: str) -> None:
    data = {"q": ["q1", "q2"], "qd": [], "qdd": [], "parameters": ["I"], "tau": [text, "q1"]}
    with pytest.raises(ModelError, match="field 'tau'"):
        read_dict(data)


def test_read_dict_refuses_bad_symbol_lists() -> None:
    with pytest.raises(ModelError, match="field 'parameters'"):
        read_dict({"q": [], "qd": [], "qdd": [], "parameters": ["a b"], "tau": ["1"]})
    with pytest.raises(ModelError, match="field 'q'"):
        read_dict({"q": "q1", "qd": [], "qdd": [], "parameters": [], "tau": ["q1"]})
    with pytest.raises(ModelError, match="field 'tau'"):  # a name not listed is not a symbol
        read_dict({"qd": [], "qdd": [], "parameters": [], "tau": ["q1"]})


def test_symbolic_linearisation_json_reads_back(tmp_path: Path) -> None:
    from robodyn.analysis.linear import linearize

    robot = constant_named_robot()
    path = robot.save(tmp_path / "constants.yaml")
    result = runner.invoke(app, ["linearize", str(path), "--symbolic", "-f", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["parameters"] == sorted(CONSTANT_NAMES) and data["inputs"] == ["tau1", "tau2"]
    back = read_dict(data)
    lin = linearize(robot, symbolic=True)
    for key in ("A", "B"):
        difference = back[key] - sympy.Matrix(getattr(lin, key))
        assert difference.applyfunc(sympy.simplify) == sympy.zeros(*difference.shape), key

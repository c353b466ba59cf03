"""The command line's habits (issue 29, part 7): one meaning per option name across commands, ``--mimic``, "did you
mean", help that names every format, numbers printed short, usage errors in one clean line, ``.xacro`` expanded
(or, without the xacro package, refused with the pip command), every reader option on every model command, and
``import robodyn.compile as C`` giving a module while ``rd.compile`` stays callable."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import MODEL_HELP, Friction, Integrator, Method, Mimic, app, usage_message

runner = CliRunner()
COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]
#: Commands that read one model (demo runs its own, batch many on Dask).
MODEL_COMMANDS = sorted(name for name, command in COMMANDS.items()
                        if any(param.name == "model" for param in command.params) and name != "demo")
PENDULUM = ["--param", "L1=1", "--param", "L2=0.5", "--param", "g=9.81", "--param", "m1=1", "--param", "m2=0.5"]

MIMIC_URDF = """<robot name="m"><link name="a"/>
<link name="b"><inertial><mass value="1.5"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>
</inertial></link>
<link name="c"><inertial><mass value="0.3"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>
</inertial></link>
<joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint>
<joint name="j2" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 1 0"/><origin xyz="0.25 0 0"/>
<mimic joint="j1" multiplier="0.333" offset="0.1"/></joint></robot>
"""


def run(*args: str) -> Any:
    return runner.invoke(app, list(args))


def _visible(command: str) -> list[Any]:
    return [param for param in COMMANDS[command].params if not getattr(param, "hidden", False)]


def _annotation(param: Any) -> object:
    return getattr(getattr(param, "type_descriptor", None), "annotation", None)


# --- one meaning per option name ---------------------------------------------------------------------------------


def test_output_is_a_path_in_every_command() -> None:
    found = [(name, param) for name in COMMANDS for param in _visible(name) if {"-o", "--output"} & set(param.opts)]
    assert len(found) >= 7
    for name, param in found:
        assert set(param.opts) == {"-o", "--output"} and _annotation(param) is Path, (name, param.opts)


def test_outputs_is_a_list_in_every_command() -> None:
    found = {name: param for name in COMMANDS for param in _visible(name) if {"-O", "--outputs"} & set(param.opts)}
    assert set(found) == {"count", "codegen", "batch"}
    for name, param in found.items():
        assert set(param.opts) == {"-O", "--outputs"} and param.multiple, name


def test_method_is_the_formulation_wherever_it_is_shown() -> None:
    found = {name: param for name in COMMANDS for param in _visible(name) if "--method" in param.opts}
    assert set(found) == {"derive", "report"}
    assert all(_annotation(param) is Method for param in found.values())


def test_count_takes_several_outputs_repeated_or_comma_separated(tmp_path: Path) -> None:
    single = json.loads(run("count", "double_pendulum", "-O", "tau", "-f", "json").output)
    assert single["output"] == "tau"  # one output: the object, as before
    both = run("count", "double_pendulum", "-O", "tau,M", "-O", "G", "-f", "json")
    assert both.exit_code == 0, both.output
    summaries = json.loads(both.output)
    assert [s["output"] for s in summaries] == ["tau", "M", "G"] and summaries[0] == single
    text = run("count", "double_pendulum", "--outputs", "M", "--outputs", "G").output
    assert "double_pendulum, M:" in text and "double_pendulum, G:" in text
    bad = run("count", "double_pendulum", "-O", "tau,jerk")
    assert bad.exit_code == 2 and "--outputs 'jerk'" in bad.output


def test_codegen_outputs_repeated_or_comma_separated(tmp_path: Path) -> None:
    result = run("codegen", "double_pendulum", "--lang", "numpy", "-O", "tau", "-O", "M,G", "-o", str(tmp_path))
    assert result.exit_code == 0, result.output
    source = (tmp_path / "double_pendulum.py").read_text()
    assert all(f"def {routine}(k, q" in source for routine in ("inverse_dynamics", "mass_matrix", "gravity"))
    assert "def forward_dynamics(" not in source and "def bias_forces(" not in source


def test_count_counting_and_its_old_spelling() -> None:
    new = run("count", "double_pendulum", "--counting", "kane", "-f", "json")
    assert new.exit_code == 0 and json.loads(new.stdout)["method"] == "kane"
    old = run("count", "double_pendulum", "--method", "kane", "-f", "json")
    assert old.exit_code == 0 and old.stdout == new.stdout
    assert old.stderr.startswith("warning: count --method is now --counting")
    refused = run("count", "double_pendulum", "--counting", "kane", "-O", "M")
    assert refused.exit_code == 2 and "leave out --counting kane" in refused.output


def test_simulate_integrator_and_its_old_spelling() -> None:
    base = ["simulate", "double_pendulum", *PENDULUM, "--t-end", "0.01", "--samples", "3", "--q0", "0.3,0.1"]
    new = run(*base, "--integrator", "RK23")
    assert new.exit_code == 0 and "RK23" in new.stdout
    old = run(*base, "--method", "RK23")
    assert old.exit_code == 0 and old.stdout == new.stdout and "simulate --method is now --integrator" in old.stderr


def test_integrator_mimic_and_friction_choices_are_the_apis() -> None:
    from robodyn.analysis.simulation import METHODS
    from robodyn.formats.urdf import FRICTION, MIMIC

    assert tuple(m.value for m in Integrator) == METHODS and tuple(m.value for m in Mimic) == MIMIC
    assert tuple(m.value for m in Friction) == FRICTION


def test_linearize_measure_and_the_old_output_refused() -> None:
    result = run("linearize", "double_pendulum", *PENDULUM, "--measure", "q", "-f", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["output"] == "q" and data["C"] == [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]]
    old = run("linearize", "double_pendulum", *PENDULUM, "--output", "q")
    assert old.exit_code == 2 and old.stdout == ""
    assert old.stderr.strip().splitlines() == ["error: linearize --output 'q': y is chosen with --measure now (state, "
                                               "q, qd or tool); --output names a file or directory in every command"]


# --- --mimic ---------------------------------------------------------------------------------------------------


def test_every_model_command_has_mimic() -> None:
    assert len(MODEL_COMMANDS) == 10
    for name in MODEL_COMMANDS:
        assert any("--mimic" in param.opts for param in _visible(name)), name


def test_mimic_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "m.urdf"
    path.write_text(MIMIC_URDF)
    coupled = run("show", str(path))
    assert coupled.exit_code == 0 and "coupled: joint 2 = 0.333 x joint 1 + 0.1" in coupled.stdout
    independent = run("show", str(path), "--mimic", "independent")
    assert independent.exit_code == 0 and "coupled:" not in independent.stdout
    assert "mimic relations dropped" in independent.stderr
    refused = run("show", str(path), "--mimic", "refuse")
    assert refused.exit_code == 2 and "refused (mimic='refuse')" in refused.stderr
    assert refused.stderr.strip().endswith("(mimic='independent', --mimic independent)")
    builtin = run("show", "puma560", "--mimic", "independent")
    assert builtin.exit_code == 2 and "--mimic" in builtin.stderr and len(builtin.stderr.splitlines()) == 1
    count = run("count", str(path), "--mimic", "independent", "-f", "json")
    assert count.exit_code == 0 and json.loads(count.stdout)["robot"] == "m"


# --- the reader options: on every model command, handed to rd.load ------------------------------------------------


def test_every_model_command_takes_every_reader_option() -> None:
    from robodyn.formats.load import FLAGS

    flags = {"--strict", "--fixed", *(flag for value in FLAGS.values() for flag in value.split("/"))}
    assert {"--floating", "--root", "--friction", "--frictionloss", "--fluid", "--xacro-arg", "--package-path"} <= flags
    for name in MODEL_COMMANDS:
        given = {opt for param in _visible(name) for opt in (*param.opts, *param.secondary_opts)}
        assert flags <= given, (name, sorted(flags - given))


def test_floating_and_fixed_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "m.urdf"
    path.write_text(MIMIC_URDF)
    neither, floating = run("show", str(path)), run("show", str(path), "--floating")
    assert neither.exit_code == 0 and "floating" not in neither.stdout.split("\n")[0]
    assert floating.exit_code == 0 and "a floating base" in floating.stdout, floating.output
    assert run("show", str(path), "--fixed").stdout == neither.stdout
    refused = run("show", "puma560", "--fixed")
    assert refused.exit_code == 2 and refused.stderr.strip().startswith(
        "error: floating= (--floating/--fixed) applies to URDF and MJCF files only")
    pytest.importorskip("mujoco")
    ant = tmp_path / "ant.xml"
    ant.write_text('<mujoco><worldbody><body name="torso"><freejoint/><geom type="sphere" size="0.1" mass="1"/>'
                   '<body name="leg"><joint name="hip"/><geom type="sphere" size="0.1" mass="1"/></body></body>'
                   '</worldbody></mujoco>')
    free, fixed = run("count", str(ant), "-f", "json"), run("count", str(ant), "--fixed", "-f", "json")
    assert free.exit_code == 0 and fixed.exit_code == 0, (free.output, fixed.output)
    assert json.loads(free.stdout)["route"] == "recursive (floating base)"  # the file's free joint
    assert json.loads(fixed.stdout)["route"] == "recursive"  # welded: one hinge on a fixed base


def test_root_friction_and_frictionloss_reach_the_reader(tmp_path: Path) -> None:
    path = tmp_path / "m.urdf"
    path.write_text(MIMIC_URDF)
    sub = run("show", str(path), "--root", "b", "--friction", "ignore")
    assert sub.exit_code == 0 and "moving joints: j2)" in sub.stdout, sub.output
    unknown = run("show", str(path), "--root", "cc")
    assert unknown.exit_code == 2 and unknown.stderr.strip().endswith("root='cc': no such link; did you mean 'c'?")
    urdf_only = run("show", "puma560", "--friction", "ignore")
    assert urdf_only.exit_code == 2 and "friction= (--friction) applies to URDF files only" in urdf_only.stderr
    pytest.importorskip("mujoco")
    ur5e = Path(__file__).resolve().parent / "data" / "mjcf" / "ur5e.xml"  # dry friction at its joints
    assert run("show", str(ur5e), "--frictionloss", "ignore").exit_code == 0
    assert run("show", str(ur5e)).exit_code == 0  # (read as Coulomb friction by default)
    refused = run("show", str(ur5e), "--frictionloss", "refuse")
    assert refused.exit_code == 2 and "frictionloss" in refused.stderr


# --- what show and the help print --------------------------------------------------------------------------------


def test_show_prints_numbers_short(tmp_path: Path) -> None:
    path = tmp_path / "m.urdf"
    path.write_text(MIMIC_URDF)
    result = run("show", str(path))
    assert result.exit_code == 0
    assert "gravity: (0, 0, -9.81)" in result.stdout and "│ 0.25 " in result.stdout and "│ 1.5 " in result.stdout
    assert "00000000" not in result.stdout
    model = tmp_path / "third.yaml"  # an exact rational stays exact
    model.write_text("name: third\nlinks:\n  - {joint: R, a: 1/3, mass: 2/3, com: [0.5, 0, 0], "
                     "inertia: [0.1, 0.2, 0.2]}\n")
    third = run("show", str(model))
    assert third.exit_code == 0 and "│ 1/3 " in third.stdout and "│ 2/3 " in third.stdout, third.stdout


def test_model_help_names_every_format() -> None:
    assert all(suffix in MODEL_HELP for suffix in (".yaml", ".yml", ".json", ".urdf", "robodyn list", "xacro"))
    for name in MODEL_COMMANDS:
        model = next(param for param in COMMANDS[name].params if param.name == "model")
        assert model.help == MODEL_HELP, name


def test_no_help_points_at_files_users_do_not_have() -> None:
    texts = [COMMANDS[name].help or "" for name in COMMANDS]
    texts += [getattr(param, "help", None) or "" for command in COMMANDS.values() for param in command.params]
    for text in texts:
        assert not any(part in text for part in ("docs/", "shared/", "seeds/", "tests/", ".md")), text


# --- errors ----------------------------------------------------------------------------------------------------


def test_usage_errors_carry_no_pydantic_prefix() -> None:
    proc = subprocess.run([sys.executable, "-m", "robodyn.cli", "derive", "two_link_fu", "--method", "bogus"],
                          capture_output=True, text=True, check=False, timeout=600)  # a hang guard
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.startswith("error: ")
    assert proc.stderr.endswith(" derive: Invalid value for '--method' / '-m': 'bogus' is not one of 'ne', 'le', "
                                "'gd', 'newton-euler', 'lagrange-euler', 'dalembert', 'kane', 'emdeg'.\n")
    assert usage_message("Invalid value for '--form': Value error, 'x' is not one of 'tau'.") == (
        "Invalid value for '--form': 'x' is not one of 'tau'.")


def test_a_misspelt_robot_or_file_gets_did_you_mean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(rd.ModelError, match=r"nor a model file path; did you mean 'puma560'\?$"):
        rd.load("puma650")
    result = run("show", "stanfrd_arm")
    assert result.exit_code == 2 and result.stderr.strip().endswith("did you mean 'stanford_arm'?")
    (tmp_path / "arm.urdf").write_text(MIMIC_URDF)
    with pytest.raises(rd.ModelError) as info:
        rd.load(tmp_path / "amr.urdf")
    assert str(info.value) == f"{tmp_path / 'amr.urdf'}: no such file; did you mean 'arm.urdf', in the same directory?"
    monkeypatch.chdir(tmp_path)
    beside = run("show", "arm.urfd")  # an unknown suffix, beside a file of that name
    assert beside.exit_code == 2 and beside.stderr.strip().endswith("did you mean 'arm.urdf'?")
    with pytest.raises(rd.ModelError) as unrelated:
        rd.load("zzz")
    assert "did you mean" not in str(unrelated.value)


def test_xacro_is_expanded_and_a_missing_xacro_package_gives_the_pip_command(tmp_path: Path) -> None:
    """A xacro file is expanded in process (tests/formats/test_urdf_xacro.py); where the xacro package is missing,
    the one line gives the pip command."""
    xacro = tmp_path / "arm.urdf.xacro"
    xacro.write_text(MIMIC_URDF.replace('<robot name="m">', '<robot name="m" xmlns:xacro="http://www.ros.org/wiki/'
                                        'xacro"><xacro:property name="ratio" value="0.333"/>')
                     .replace('multiplier="0.333"', 'multiplier="${ratio}"'))
    script = ("import sys; sys.modules['xacro'] = None\nfrom robodyn.cli import main\n"
              f"sys.argv = ['robodyn', 'show', {str(xacro)!r}]\nmain()")
    missing = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and missing.stderr.strip() == (
        f"error: {xacro}: a xacro file: expanding it needs the 'xacro' package: pip install 'robodyn[xacro]'")
    pytest.importorskip("xacro")
    result = run("show", str(xacro))
    assert result.exit_code == 0 and "coupled: joint 2 = 0.333 x joint 1 + 0.1" in result.stdout, result.output


# --- import robodyn.compile as C ---------------------------------------------------------------------------------

COMPILE_SCRIPT = """
import warnings
warnings.simplefilter("error", DeprecationWarning)
import inspect
import robodyn as rd
import robodyn.runtime as runtime
robot = rd.load("stanford_arm")
q = [0.3, -0.2, 0.4, 0.1, 0.5, -0.6]
tau = rd.compile(robot, backend="numpy", outputs=("tau",)).inverse_dynamics(q, q, q)   # the function of the face
assert str(inspect.signature(rd.compile)) == str(inspect.signature(runtime.compile))
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import robodyn.compile as C                                                          # the old module name
assert [str(w.message) for w in caught] == [
    "robodyn.compile moved to robodyn.runtime in robodyn 0.2; the old name goes in the next release"]
assert inspect.ismodule(C) and C.compile is runtime.compile and C.CompiledDynamics is runtime.CompiledDynamics
again = C.compile(robot, backend="numpy", outputs=("tau",)).inverse_dynamics(q, q, q)
after = rd.compile(robot, backend="numpy", outputs=("tau",)).inverse_dynamics(q, q, q)  # still callable
assert again.tolist() == tau.tolist() == after.tolist()
from robodyn import compile as face
assert face is C and callable(face)
print("ok")
"""


def test_import_robodyn_compile_as_c_gives_the_module_and_rd_compile_still_compiles() -> None:
    proc = subprocess.run([sys.executable, "-c", COMPILE_SCRIPT], capture_output=True, text=True, timeout=600,
                          check=False)  # a hang guard, not a measure
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]

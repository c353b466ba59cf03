"""The command line: a thin layer over the API; bad input is one line and exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from robodyn.cli import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, list(args))


def test_list_names_every_robot():
    result = run("list")
    assert result.exit_code == 0
    for name in ("double_pendulum", "two_link_fu", "two_link_payload", "stanford_modified",
                 "puma560_symbolic", "puma560", "stanford_arm", "industrial_6r"):
        assert name in result.output


def test_version_from_the_entry_point_and_python_m():
    """``robodyn --version`` and ``python -m robodyn --version`` print the package's version and exit 0."""
    import robodyn

    for command in (["-c", "from robodyn.cli import main; main()"], ["-m", "robodyn"]):
        proc = subprocess.run([sys.executable, *command, "--version"], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == f"robodyn {robodyn.__version__}"
    proc = subprocess.run([sys.executable, "-m", "robodyn", "list"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "puma560" in proc.stdout


def test_help_and_list_do_not_import_sympy_or_numpy():
    """``robodyn --help`` and ``robodyn list`` start without the algebra (issue 14: under 0.2 s; the time is
    measured by benchmarks, the imports here)."""
    for args in (["--help"], ["list"]):
        code = "\n".join([
            f"import sys; from robodyn.cli import main; sys.argv = ['robodyn', *{args!r}]",
            "try:\n    main()\nexcept SystemExit:\n    pass",
            "print(sorted(m for m in ('sympy', 'numpy', 'symengine') if m in sys.modules), file=sys.stderr)",
        ])
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr.strip().splitlines()[-1] == "[]", proc.stderr


def test_show():
    result = run("show", "stanford_modified")
    assert result.exit_code == 0
    for words in ("q3", "Denavit-Hartenberg", "about the centre of mass"):
        assert words in result.output


@pytest.mark.parametrize("form", ["tau", "config-space", "fu", "christoffel", "emdeg"])
@pytest.mark.parametrize("fmt", ["text", "latex", "json"])
def test_derive_every_form_and_format(form, fmt):
    result = run("derive", "double_pendulum", "--method", "le", "--form", form, "--format", fmt)
    assert result.exit_code == 0, result.output
    if fmt == "json":
        data = json.loads(result.output)
        assert {"tau", "M", "h", "G"} <= set(data)
        if form == "config-space":
            assert {"B", "C"} <= set(data)


def test_derive_to_file(tmp_path):
    target = tmp_path / "eq.json"
    result = run("derive", "two_link_fu", "-f", "json", "-o", str(target))
    assert result.exit_code == 0
    assert json.loads(target.read_text())["robot"] == "two_link_fu"
    assert [p.name for p in tmp_path.iterdir()] == ["eq.json"]


def test_check_agrees():
    result = run("check", "stanford_modified")
    assert result.exit_code == 0
    assert "all methods agree" in result.output and "exact" in result.output


def test_check_exits_1_on_disagreement(monkeypatch):
    import robodyn.analysis.check as check_module
    from robodyn.formulations import lagrange_euler

    original = lagrange_euler.components

    def broken(robot, q, qd, progress=None):
        parts = original(robot, q, qd, progress)
        parts["G"] = parts["G"] * 2
        return parts

    monkeypatch.setattr(lagrange_euler, "components", broken)
    assert check_module  # the CLI calls the same check
    result = run("check", "double_pendulum")
    assert result.exit_code == 1
    assert "disagree" in result.output


BAD = {
    "joint": ("joint: R", "joint: Z", "link 1: field 'joint'"),
    "mass": ("mass: m1", "mass: -2", "link 1: field 'mass'"),
    "code": ("a: l1", "a: __import__('os').system('true')", "link 1: field 'a'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_model_file_is_one_line_exit_2(tmp_path, case):
    before, after, expect = BAD[case]
    text = "links:\n  - {joint: R, a: l1, alpha: 0, mass: m1}\n".replace(before, after)
    path = tmp_path / "arm.yaml"
    path.write_text(text)
    out = tmp_path / "out.txt"
    result = run("derive", str(path), "-o", str(out))
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and expect in lines[0] and str(path) in lines[0]
    assert not out.exists()


def test_strict_and_unknown_model():
    assert run("show", "industrial_6r", "--strict").exit_code == 2
    result = run("show", "no_such_robot")
    assert result.exit_code == 2 and "neither a built-in robot" in result.output


def test_output_directory_missing(tmp_path):
    result = run("derive", "double_pendulum", "-o", str(tmp_path / "nope" / "x.txt"))
    assert result.exit_code == 2 and "does not exist" in result.output


def test_real_process_prints_no_traceback(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("links: [{joint: R, inertia: [[1, 2, 0], [0, 1, 0], [0, 0, 1]]}]\n")
    proc = subprocess.run([sys.executable, "-m", "robodyn.cli", "derive", str(path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stderr.strip().count("\n") == 0 and "symmetric" in proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["derive", "two_link_fu", "--method", "bogus"],
        ["show", "a", "b"],
        ["check", "puma560", "--samples", "0"],
        ["check", "puma560", "--rtol", "-1"],
        ["derive", "double_pendulum", "--no-such-option"],
        ["count", "double_pendulum", "--format", "latex"],  # count prints text or json only
        ["count", "double_pendulum", "--counting", "kane", "--outputs", "M"],  # kane counts tau only
        ["count", "double_pendulum", "--counting", "kane", "--route", "factored"],
        ["count", "double_pendulum", "--counting", "kane", "--base"],
    ],
)
def test_usage_errors_are_one_line(args):
    proc = subprocess.run([sys.executable, "-m", "robodyn.cli", *args], capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stdout == "" and proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ")


def test_symbolic_twist_checks_exactly():
    """sin(alpha)^2 of a symbolic twist is reduced like a joint angle's: no false disagreement."""
    import robodyn as rd
    from robodyn.analysis.check import check

    robot = rd.Manipulator.from_dh(
        [{"joint": "R", "a": "a1", "alpha": "al1", "mass": "m1", "com": ["c1", 0, 0], "inertia": ["I1", "I1", "J1"]},
         {"joint": "R", "a": "a2", "alpha": 0, "d": "d2", "mass": "m2", "com": [0, "c2", 0]}],
    )
    result = check(robot, mode="exact")
    assert result.agree, [(c.method, c.part) for c in result.comparisons if not c.agree]


def test_count_formats_and_kane():
    """count has its own formats (text, json), and --counting kane counts tau with the defaults."""
    result = run("count", "double_pendulum", "--counting", "kane", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["method"] == "kane"
    result = run("count", "double_pendulum", "--counting", "kane", "--outputs", "tau", "--route", "auto")
    assert result.exit_code == 0 and "Kane's algorithm" in result.output
    bad = run("count", "double_pendulum", "--counting", "kane", "--outputs", "h")
    assert bad.exit_code == 2 and "--outputs" in bad.output and "kane" in bad.output


@pytest.mark.parametrize("command", [["linearize", "double_pendulum", "--q0", "0,0"], ["simulate", "double_pendulum"],
                                     ["torques", "double_pendulum"], ["simplify-model", "double_pendulum"]])
def test_missing_parameters_are_named_with_the_cli_option(command):
    """A parameter left without a value is one line that names --param, not the Python API's params={...}."""
    result = run(*command, "--param", "L1=1.0")
    assert result.exit_code == 2
    assert result.output.count("error:") == 1 and "--param NAME=VALUE" in result.output, result.output
    assert "L2, m1, m2" in result.output and "L1" not in result.output.split("need values")[0]
    assert "params={" not in result.output


def test_count_o_is_an_output_file_and_capital_o_what_to_count(tmp_path):
    """-o is an output file in every command (issue 14); what count computes is -O/--outputs."""
    target = tmp_path / "counts.json"
    result = run("count", "two_link_payload", "-O", "forward", "-f", "json", "-o", str(target))
    assert result.exit_code == 0, result.output
    written = json.loads(target.read_text())
    assert set(written["forward_candidates"]) == {"LDL^T", "ABA"} and written["picked"] == "LDL^T"
    assert written == json.loads(run("count", "two_link_payload", "-O", "forward", "-f", "json").output)
    kane = tmp_path / "kane.txt"
    assert run("count", "puma560", "--counting", "kane", "-o", str(kane)).exit_code == 0
    assert kane.read_text().startswith("Kane's algorithm on puma560")
    missing = run("count", "two_link_payload", "-o", str(tmp_path / "nowhere" / "c.txt"))
    assert missing.exit_code == 2 and "does not exist" in missing.output


# --- every choice of every option (issue 27: the CLI offers only what the API has) ---------------------------------

#: double_pendulum's parameters, for the commands that evaluate numbers.
PENDULUM_PARAMS = ["--param", "L1=1", "--param", "L2=0.5", "--param", "g=9.81", "--param", "m1=1", "--param", "m2=0.5"]
#: The cheapest arguments of each command that has an option with choices ({tmp}: a fresh directory); each choice
#: is then given on its own. Cheap on purpose: the small robot, a short simulation (--t-end 0.01, 3 samples), one
#: routine generated, a report without the cross-check and the plots (both option-free paths, tested elsewhere).
CHOICE_BASE = {
    "show": ["double_pendulum"],
    "check": ["double_pendulum", "--samples", "1"],
    "torques": ["double_pendulum", *PENDULUM_PARAMS, "--samples", "3"],
    "simplify-model": ["double_pendulum", *PENDULUM_PARAMS, "-o", "{tmp}/simplified"],
    "derive": ["double_pendulum"],
    "count": ["double_pendulum"],
    "codegen": ["double_pendulum", "--outputs", "tau", "-o", "{tmp}/code"],
    "simulate": ["double_pendulum", *PENDULUM_PARAMS, "--t-end", "0.01", "--samples", "3"],
    "linearize": ["double_pendulum", *PENDULUM_PARAMS, "--dt", "0.01"],  # --dt: --discrete has a use
    "report": ["double_pendulum", "-o", "{tmp}/report.html", "--no-check", "--no-plots"],
}


def _param_choices(param) -> list[str]:
    """The choices of a command-line parameter: click's ``Choice`` (``param.type.choices``), or, where typer builds
    the type on use, the values of the Enum it was declared with; [] for any other parameter."""
    import enum

    choices = getattr(getattr(param, "type", None), "choices", None)
    if choices:
        return [getattr(c, "value", c) for c in choices]
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return [member.value for member in annotation]
    return []


def _every_choice() -> list[tuple[str, str, str]]:
    """(command, option, choice) for every choice of every option of every command of the app."""
    import typer.main

    group = typer.main.get_command(app)
    found = []
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        for param in command.params:
            option = max(param.opts, key=len)
            found.extend((name, option, choice) for choice in _param_choices(param))
    return found


EVERY_CHOICE = _every_choice()


def test_every_choice_is_found():
    """The introspection sees the options with choices (else the test below would pass on nothing)."""
    commands = {command for command, _, _ in EVERY_CHOICE}
    assert set(CHOICE_BASE) == commands, "a command with choices needs cheap arguments in CHOICE_BASE"
    assert ("derive", "--form", "tau") in EVERY_CHOICE and ("codegen", "--lang", "jax") in EVERY_CHOICE
    assert len(EVERY_CHOICE) > 50


@pytest.mark.parametrize(("command", "option", "choice"), EVERY_CHOICE, ids=[" ".join(c) for c in EVERY_CHOICE])
def test_every_choice_works_or_is_one_line(tmp_path, command, option, choice):
    """``robodyn COMMAND ... OPTION CHOICE`` exits 0, or exits 1 or 2 with one line of error and no traceback."""
    args = [a.replace("{tmp}", str(tmp_path)) for a in CHOICE_BASE[command]]
    result = runner.invoke(app, [command, *args, option, choice])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}")
    assert "Traceback" not in result.output
    if result.exit_code != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip() and not line.startswith("warning: ")]
        assert result.exit_code in (1, 2) and len(lines) == 1 and lines[0].startswith("error: "), result.output

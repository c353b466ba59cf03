"""Hostile inputs to the command line (issue 28, item 5): each ends as one bounded ``error:`` line naming the file
and the field, exit code 2, no traceback, and nothing a file or an option holds can forge or break a line of output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from robodyn.errors import MAX_LINE, ModelError, bounded, clip, printable
from robodyn.model.files import shown_path

runner = CliRunner()
ARM = "links:\n  - {joint: R, a: 1, alpha: 0, mass: 1}\n"


def run(*args: str):
    return runner.invoke(app, list(args))


def one_error_line(result, *expected: str) -> str:
    """The one ``error:`` line of a refused command (exit 2, at most MAX_LINE characters after ``error: ``)."""
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output[:2000]
    assert len(lines[0]) <= MAX_LINE + len("error: "), len(lines[0])
    for words in expected:
        assert words in lines[0], lines[0]
    return lines[0]


def model(tmp_path: Path, text: str, name: str = "arm.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


# -- 1. text that is not valid Unicode ------------------------------------------------------------------------------
@pytest.mark.parametrize("field", ["description", "source"])
@pytest.mark.parametrize("command", [["show"], ["report", "--no-check", "--no-plots", "-o", "{tmp}/r.html"]])
def test_a_lone_surrogate_in_a_text_field_is_refused_at_load(tmp_path, field, command):
    path = model(tmp_path, f'name: s\n{field}: "bad \\ud800 text"\n{ARM}')
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    line = one_error_line(run(args[0], path, *args[1:]), path, f"field '{field}'", "\\ud800")
    assert "surrogate" in line
    assert not (tmp_path / "r.html").exists()


def test_a_lone_surrogate_in_json_is_refused_and_by_the_api(tmp_path):
    path = model(tmp_path, json.dumps({"name": "s", "description": "x\ud800", "links": [
        {"joint": "R", "a": 1, "alpha": 0, "mass": 1}]}), "arm.json")
    one_error_line(run("show", path), path, "field 'description'")
    with pytest.raises(ModelError, match="surrogate"):
        rd.Manipulator.from_dh([{"joint": "R", "a": 1, "mass": 1}], name="s").replace(source="\udcff")


def test_printing_text_that_is_not_unicode_never_fails(monkeypatch):
    """A lone surrogate that reaches a print anyway (a robot built around the checks) is shown as its escape."""
    import robodyn.cli as cli

    robot = rd.load("double_pendulum")
    object.__setattr__(robot, "description", "bad \ud800 text")
    monkeypatch.setattr(cli, "_load", lambda *args, **kwargs: robot)
    result = run("show", "double_pendulum")
    assert result.exit_code == 0, result.output
    assert "bad \\ud800 text" in result.output
    assert printable("a\ud800b") == "a\\ud800b"
    from robodyn.report.page import _header

    assert "\\ud800" in _header(robot)


# -- 2. bound values that are complex, infinite or too large --------------------------------------------------------
BOUND = {
    "pole": ('mass: "1/(l1-1)"', "l1=1", "field 'mass'", "infinite"),
    "sqrt": ('a: "sqrt(l1)"', "l1=-1", "field 'a'", "complex"),
    "huge": ('mass: "1e18*m1"', "m1=1e20", "field 'mass'", "1e+38"),
}
COMMANDS = {
    "torques": ["torques", "--samples", "5"],
    "simulate": ["simulate", "--t-end", "0.01", "--samples", "3"],
    "simulate-numpy": ["simulate", "--t-end", "0.01", "--samples", "3", "--engine", "numpy"],
    "linearize": ["linearize"],
}


@pytest.mark.parametrize("case", sorted(BOUND))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_bound_value_that_is_not_a_finite_real_is_one_line(tmp_path, case, command):
    field, param, expect, what = BOUND[case]
    text = "name: c\ngravity: [9.81, 0, 0]\n" + ARM.replace("a: 1", "a: 1, d: 0").replace(
        field.split(":")[0] + ": 1", field)
    path = model(tmp_path, text)
    name, *options = COMMANDS[command]
    one_error_line(run(name, path, *options, "--param", param), path, "link 1", expect, what)


def test_every_engine_refuses_the_same_bound_values():
    """One shared check: the numeric engine (torques) and the substituted robot (simulation) agree."""
    from robodyn import numeric
    from robodyn.model.params import bound_robot

    robot = rd.Manipulator.from_dh([{"joint": "R", "a": 1, "mass": "1e18*m1"}], name="c")
    messages = []
    for call in (lambda: numeric.inverse_dynamics(robot, [0.0], [0.0], [0.0], params={"m1": 1e20, "g": 9.81}),
                 lambda: bound_robot(robot, {"m1": 1e20, "g": 9.81})):
        with pytest.raises(ModelError) as info:
            call()
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "link 1: field 'mass'" in messages[0]
    assert numeric.inverse_dynamics(robot, [0.0], [0.0], [0.0], params={"m1": 1.0, "g": 9.81}).shape == (1,)


# -- 3. long values in error lines ----------------------------------------------------------------------------------
LONG = "X" * 100_000


@pytest.mark.parametrize(("text", "expect"), [
    (f"name: j\n{ARM.replace('joint: R', 'joint: ' + LONG)}", "field 'joint'"),
    (f"name: j\nconvention: {LONG}\n{ARM}", "field 'convention'"),
    (json.dumps({"name": "j", "links": [{"joint": "R", "a": 1, LONG: 1}]}), "link 1"),  # an unknown field
    (json.dumps({"name": "j", LONG: 1, "links": [{"joint": "R", "a": 1}]}), "arm.json"),
    (json.dumps({"name": LONG, "links": [{"joint": "R", "a": 1}]}), "field 'name'"),
])
def test_a_huge_value_in_a_model_file_is_cut_in_the_error(tmp_path, text, expect):
    path = model(tmp_path, text, "arm.json" if text.startswith("{") else "arm.yaml")
    one_error_line(run("show", path), path, expect, "...")


def test_a_huge_parameter_name_is_cut_in_the_error():
    line = one_error_line(run("torques", "double_pendulum", "--param", "p" + "a" * 100_000 + "=1"), "--param", "...")
    assert "its parameters: L1, L2, g, m1, m2" in line


def test_a_urdf_with_50000_roots_is_one_bounded_line(tmp_path):
    links = "".join(f'<link name="l{i}"/>' for i in range(50_000))
    path = model(tmp_path, f'<robot name="r">{links}</robot>', "roots.urdf")
    one_error_line(run("show", path), path, "roots")


def test_model_error_bounds_every_part():
    """Each class of long value: a quoted value, a word, a file, a field, a link, a list: one line of at most
    MAX_LINE characters."""
    cases = [
        ModelError(f"unknown joint type {LONG!r}"),
        ModelError(f"unknown joint type {LONG}"),
        ModelError("several roots: " + ", ".join(f"l{i}" for i in range(50_000)), file="a.urdf"),
        ModelError("x", file="/" * 10_000 + "f.yaml", link="p" * 10_000, field="q" * 10_000),
        ModelError(f'name "{"n " * 20_000}" is too long', file="a.yaml"),
    ]
    for exc in cases:
        assert len(str(exc)) <= MAX_LINE and "..." in str(exc) and "\n" not in str(exc)
    assert bounded(f"joint {LONG!r} (R or P)") == f"joint '{'X' * 28}...{'X' * 27}' (R or P)"
    assert clip("abcdefghij", 7) == "ab...ij" and clip("short") == "short"
    short = "robot 'puma560' has no parameter 'x' (the model's parameters: L1)"
    assert str(ModelError(short)) == short  # short messages are unchanged


# -- 4. paths holding control characters ----------------------------------------------------------------------------
def test_an_output_path_holding_a_newline_cannot_forge_a_line(tmp_path):
    target = tmp_path / "a\nerror: spoofed.txt"
    proc = subprocess.run([sys.executable, "-m", "robodyn.cli", "derive", "double_pendulum", "-o", str(target)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert target.exists()
    lines = [line for line in proc.stderr.splitlines() if line.strip()]  # (a progress bar may leave a blank line)
    assert len(lines) == 1 and lines[0].startswith("wrote ") and lines[0].endswith("a\\nerror: spoofed.txt")


def test_every_path_printed_is_escaped(tmp_path):
    out_dir = tmp_path / "x\x1b[31mred"
    result = run("torques", "double_pendulum", "--samples", "5", "--param", "L1=1", "--param", "L2=1",
                 "--param", "m1=1", "--param", "m2=1", "--csv", str(out_dir / "t.csv"))
    line = one_error_line(result, "\\x1b[31mred", "does not exist")
    assert "\x1b" not in line
    missing = run("derive", "double_pendulum", "-o", str(tmp_path / "no\ndir" / "x.txt"))
    assert "no\\ndir" in one_error_line(missing)
    assert shown_path("a\nb\x1b\0\udcff c") == "a\\nb\\x1b\\0\\udcff c"


# -- 5. refusals raised while a file is processed name the file ----------------------------------------------------
def test_a_refusal_without_a_file_is_given_the_model_file(tmp_path, monkeypatch):
    from robodyn import codegen
    from robodyn.errors import finite_constant

    path = model(tmp_path, f"name: arm\n{ARM}")

    def overflowing(*args, **kwargs):
        return finite_constant(1e400)

    monkeypatch.setattr(codegen, "generate", overflowing)
    one_error_line(run("codegen", path, "--lang", "numpy", "-o", str(tmp_path / "out")), path, "not a finite double")
    monkeypatch.setattr(rd, "derive", overflowing)
    one_error_line(run("derive", path), path, "not a finite double")
    builtin = one_error_line(run("derive", "double_pendulum"), "not a finite double")  # a built-in: no file
    assert builtin.startswith("error: a constant")


def test_the_generated_code_bound_names_the_file(tmp_path):
    """A model whose base parameters leave the bound (a sum of numbers of 1e20) is refused naming the file."""
    row = "  - {joint: R, a: 1e20, alpha: 1.5, d: 1e20, mass: 1e20, com: [1e20, 1e20, 1e20]}\n"
    path = model(tmp_path, "name: huge\nlinks:\n" + row * 2)
    one_error_line(run("count", path), path, "magnitude above")


def test_option_errors_are_not_given_the_model_file(tmp_path):
    path = model(tmp_path, f"name: arm\n{ARM}")
    line = one_error_line(run("simulate", path, "--q0", "1,2"), "--q0")
    assert path not in line


# -- 6. Ctrl-C ------------------------------------------------------------------------------------------------------
def test_a_ctrl_c_a_library_swallowed_still_stops_the_command(tmp_path, monkeypatch, capsys):
    """SIGINT whose KeyboardInterrupt a library catches and goes on from (NumPy's import turns it into an
    ImportError that an optional import would take for a missing package): the command stops at the next stage
    of its build or before its output, with the one line "interrupted" and exit status 130, and writes no file."""
    import contextlib
    import signal

    from robodyn import cli
    from robodyn.program import targets

    counted = targets.count_summary

    def swallowing(*args, **kwargs):
        with contextlib.suppress(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        return counted(*args, **kwargs)

    monkeypatch.setattr(targets, "count_summary", swallowing)
    output = tmp_path / "count.txt"
    monkeypatch.setattr(sys, "argv", ["robodyn", "count", "double_pendulum", "-o", str(output)])
    with pytest.raises(SystemExit) as stopped:
        cli.main()
    assert stopped.value.code == 130
    assert capsys.readouterr().err.splitlines() == ["interrupted"]
    assert not output.exists()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler put back
    monkeypatch.undo()
    assert run("count", "double_pendulum").exit_code == 0  # and nothing left over for the next command


# -- 7. q0 of nq coordinates -----------------------------------------------------------------------------------
BALL = ("name: ball\ngravity: [0, 0, -9.81]\nlinks:\n"
        "  - {joint: S, a: 0, alpha: 0, mass: 1, com: [0, 0, -0.3], inertia: [0.01, 0.02, 0.02]}\n"
        "  - {joint: R, a: 0.4, alpha: 0, mass: 0.8, com: [0.2, 0, 0], inertia: [0.01, 0.015, 0.015]}\n")


def test_simulate_takes_q0_of_nq_coordinates_for_a_spherical_joint(tmp_path):
    """A spherical joint (q: its unit quaternion x, y, z, w; nq 5, nv 4): --q0 takes the 5 numbers (4 were asked
    and every valid --q0 refused) and the run is the API's from the same q0; 4 numbers are one line naming nq."""
    path = model(tmp_path, BALL)
    q0 = [0.0, 0.0, float(np.sin(0.05)), float(np.cos(0.05)), 0.3]
    result = run("simulate", path, "--q0", ",".join(map(repr, q0)), "--t-end", "0.05", "--samples", "3",
                 "--csv", str(tmp_path / "run.csv"))
    assert result.exit_code == 0, result.output
    table = np.loadtxt(tmp_path / "run.csv", delimiter=",", skiprows=1)
    api = rd.simulate(rd.load(path), 0.05, q0, samples=3)
    np.testing.assert_array_equal(table[0, 1:6], q0)
    np.testing.assert_allclose(table[:, 1:6], api.q, rtol=0, atol=1e-12)
    line = one_error_line(run("simulate", path, "--q0", "0,0,0,1"), "--q0", "expected 5 numbers",
                          "nq coordinates")
    assert "got 4" in line


def test_linearize_refuses_a_spherical_joint_for_what_it_is_whatever_q0(tmp_path):
    path = model(tmp_path, BALL)
    for q0 in ([], ["--q0", "0,0,0,1,0.3"]):
        one_error_line(run("linearize", path, *q0), path, "a spherical joint", "revolute and prismatic")


def test_a_ctrl_c_while_the_command_line_is_imported_is_the_one_line_and_exit_130(tmp_path):
    """``python -m robodyn`` (the console script's entry too: robodyn.__main__.main) interrupted while robodyn.cli
    is being imported, inside an exec() of source text as CPython's dataclasses do: "interrupted" and exit status
    130, where a traceback was printed, and the exec() made CPython end the process by SIGINT even once handled."""
    (tmp_path / "sitecustomize.py").write_text(textwrap.dedent("""
        import sys

        class Interrupting:
            def find_spec(self, name, path=None, target=None):
                if name == "typer":
                    exec("raise KeyboardInterrupt")

        sys.meta_path.insert(0, Interrupting())
    """))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    proc = subprocess.run([sys.executable, "-m", "robodyn", "list"], capture_output=True, text=True, timeout=120,
                          env=env, cwd=tmp_path)
    assert (proc.returncode, proc.stderr, proc.stdout) == (130, "interrupted\n", "")

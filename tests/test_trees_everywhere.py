"""Everything that takes a robot takes a tree (issue 13, item 5): each CLI command and the API around the
recursions, on the test tree (a torso and two arms), checked against the numeric engine (itself checked against
Pinocchio in tests/numeric/test_numeric_trees.py) or against physics (energy, equilibrium).

The detailed checks are elsewhere: the formulations (test_trees_symbolic), the numeric engine
(test_numeric_trees), programs and generated code (test_program_trees), identification
(test_identification_trees), URDF (test_urdf_trees), the model (test_trees).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn import numeric
from robodyn.analysis import toolbox
from robodyn.analysis.linear import linearize
from robodyn.analysis.simulation import simulate
from robodyn.cli import app
from tests.helpers import assert_close

TREE = Path(__file__).parent / "data" / "torso_two_arms.yaml"
PARAMS = {"g": 9.81}


@pytest.fixture(scope="module")
def tree() -> rd.Manipulator:
    return rd.load(TREE)


@pytest.mark.parametrize(
    "arguments",
    [
        ["show"],
        ["derive", "--method", "le", "--form", "config-space"],
        ["derive", "--method", "gd", "--format", "json"],
        ["derive", "--method", "emdeg"],
        ["check", "--samples", "2"],
        ["count", "--outputs", "forward"],
        ["torques", "--param", "g=9.81", "--samples", "20"],
        ["simulate", "--param", "g=9.81", "--t-end", "0.2", "--samples", "5", "--engine", "numpy"],
        ["linearize", "--param", "g=9.81", "--measure", "tool"],
    ],
    ids=lambda a: "-".join(a[:2]),
)
def test_every_command_takes_the_tree(arguments: list[str]) -> None:
    result = CliRunner().invoke(app, [arguments[0], str(TREE), *arguments[1:]])
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("language", ["c", "fortran", "numpy", "jax"])
def test_codegen_writes_the_tree_in_every_language(tmp_path: Path, language: str) -> None:
    result = CliRunner().invoke(app, ["codegen", str(TREE), "--lang", language, "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert any(tmp_path.iterdir())


def test_report_of_the_tree(tmp_path: Path) -> None:
    out = tmp_path / "tree.html"
    result = CliRunner().invoke(app, ["report", str(TREE), "--param", "g=9.81", "--no-plots", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "torso_two_arms" in out.read_text()


def test_compiled_c_agrees_with_the_numeric_engine(tree: rd.Manipulator) -> None:
    dyn = rd.compile(tree)
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.normal(size=(3, 6, tree.n))
    values = [PARAMS[s.name] for s in tree.parameters()]
    tau = dyn.inverse_dynamics(q, qd, qdd, params=values)
    assert_close(tau, numeric.inverse_dynamics(tree, q, qd, qdd, params=PARAMS), 1e-12)
    assert_close(dyn.forward_dynamics(q, qd, tau, params=values), qdd, 1e-10)


def test_toolbox_aliases_on_the_tree(tree: rd.Manipulator) -> None:
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.normal(size=(3, tree.n))
    M = toolbox.inertia(tree, q, params=PARAMS)
    C = toolbox.coriolis(tree, q, qd, params=PARAMS)
    G = toolbox.gravload(tree, q, params=PARAMS)
    assert_close(toolbox.rne(tree, q, qd, qdd, params=PARAMS), M @ qdd + C @ qd + G, 1e-12)
    assert_close(toolbox.accel(tree, q, qd, M @ qdd + C @ qd + G, params=PARAMS), qdd, 1e-10)


@pytest.mark.parametrize("engine", ["lambdify", "numpy", "compiled"])
def test_simulation_of_the_tree_conserves_energy(tree: rd.Manipulator, engine: str) -> None:
    result = simulate(tree, 0.5, q0=np.linspace(-1, 1, tree.n), params=PARAMS, engine=engine,
                      method="DOP853", rtol=1e-11, atol=1e-11, samples=11)
    assert result.energy_drift() < 1e-8


def test_linearization_of_the_tree_at_an_equilibrium(tree: rd.Manipulator) -> None:
    """At rest under gravity compensation, B = [0; M^-1] and A's lower-left block is -M^-1 dG/dq."""
    q0 = np.linspace(-0.5, 0.5, tree.n)
    model = linearize(tree, q0, params=PARAMS)
    n = tree.n
    M = numeric.mass_matrix(tree, q0, params=PARAMS)
    assert_close(model.B[n:], np.linalg.inv(M), 1e-9)
    step = 1e-6
    dG = np.stack([(numeric.gravity(tree, q0 + step * e, params=PARAMS)
                    - numeric.gravity(tree, q0 - step * e, params=PARAMS)) / (2 * step) for e in np.eye(n)], axis=1)
    assert_close(model.A[n:, :n], -np.linalg.solve(M, dG), 1e-6)


def test_identification_of_the_tree(tree: rd.Manipulator) -> None:
    check = rd.identification.base_parameters(tree).numerical_rank()
    assert check.ok and check.rank == check.expected == 51


def test_show_and_the_report_give_the_topology(tmp_path: Path) -> None:
    # in a fresh process, as a user runs it: the console's width is then the COLUMNS given (in this process it is
    # fixed by whichever test imported the command line first)
    result = subprocess.run([sys.executable, "-m", "robodyn", "show", str(TREE)], capture_output=True, text=True,
                            env={**os.environ, "COLUMNS": "200"}, timeout=600, check=False)
    assert result.returncode == 0, result.stderr
    header = next(line for line in result.stdout.splitlines() if "joint" in line and "parent" in line)
    assert "name" in header and "placement" in header
    right_wrist = next(line for line in result.stdout.splitlines() if "r_wrist" in line and line.count("│") > 5)
    assert right_wrist.split("│")[8].strip() == "6"  # parent: r_elbow, link 6
    assert any("r_wrist (R, independent)" in line for line in result.stdout.splitlines())  # the structure drawn
    out = tmp_path / "tree.html"
    CliRunner().invoke(app, ["report", str(TREE), "--param", "g=9.81", "--no-plots", "--no-check", "-o", str(out)])
    assert "<th>parent</th>" in out.read_text() and "<td>r_wrist</td>" in out.read_text()

"""Identification of robots with coupled coordinates (issue 30, item 3): mimic joints, parallelograms and four-bars
in closed form. The regressor is Y = W^T Y_tree at the tree's state, the base parameters fold the passive links'
parameters into the actuated ones (robodyn.identification.base, "Coupled coordinates").

Checked against the numeric engine's reduced inverse dynamics (robodyn.numeric.inverse_dynamics, which projects the
tree's Newton-Euler with its own code, robodyn.numeric.couplings): Y p = tau, Y_b b = tau, the symbolic Y equals the
numeric one, the fit recovers the base parameters from noise-free data, golden base parameters of the parallelogram.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import sympy
from typer.testing import CliRunner

import robodyn as rd
from robodyn import identification as ident
from robodyn import numeric
from robodyn.identification import fit
from robodyn.model.couplings import Coupling
from robodyn.symbols import joint_symbols
from tests.conftest import load_quiet

#: name -> the number of base parameters (with armature and viscous friction, no Coulomb friction)
COUNTS = {"fourbar_parallelogram": 4, "fourbar_rbdl": 12, "fourbar_crank_rocker": 12, "palletizer_kr700pa": 32,
          "panda_mimic": 62}


def _panda_path() -> Path | None:
    from benchmarks.urdf_survey import robots_directory

    directory = robots_directory()
    path = None if directory is None else directory / "panda_description" / "urdf" / "panda.urdf"
    return path if path is not None and path.is_file() else None


def _load(name: str) -> rd.Manipulator:
    if name != "panda_mimic":
        return load_quiet(name)
    path = _panda_path()
    if path is None:
        pytest.skip("example-robot-data not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = rd.load(str(path))  # the fingers coupled (mimic, the default)
    assert robot.nv == robot.n - 1 == 8
    return robot


@pytest.fixture(scope="module", params=sorted(COUNTS))
def case(request: pytest.FixtureRequest) -> tuple[str, rd.Manipulator, ident.BaseParameters]:
    robot = _load(request.param)
    return request.param, robot, ident.base_parameters(robot)


def _states(robot: rd.Manipulator, N: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.5, 1.5, (N, robot.nv)), rng.uniform(-2, 2, (N, robot.nv)), rng.uniform(-3, 3, (N, robot.nv))


def _scale(tau: np.ndarray) -> float:
    return max(1.0, float(np.abs(tau).max()))


def test_regressor_times_parameters_is_the_reduced_inverse_dynamics(case) -> None:
    _, robot, _ = case
    q, qd, qdd = _states(robot, 6, 1)
    Y = ident.numeric_regressor(robot, q, qd, qdd)
    assert Y.shape == (6, robot.nv, 12 * robot.n)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    assert np.abs(Y @ ident.numeric_values(robot) - tau).max() <= 1e-12 * _scale(tau)
    one = ident.numeric_regressor(robot, q[0], qd[0], qdd[0])  # one state: (nv, 12 n)
    assert np.array_equal(one, Y[0])


def test_base_parameters_count_rank_and_torques(case) -> None:
    name, robot, base = case
    assert len(base) == COUNTS[name]
    check = base.numerical_rank(samples=30)
    assert check.ok, check
    q, qd, qdd = _states(robot, 6, 2)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    assert np.abs(base.numeric_regressor(q, qd, qdd) @ base.numeric_values() - tau).max() <= 1e-11 * _scale(tau)


@pytest.mark.parametrize("name", ["fourbar_parallelogram", "palletizer_kr700pa"])
def test_fit_recovers_the_base_parameters_from_noise_free_data(name: str) -> None:
    robot = load_quiet(name)
    base = ident.base_parameters(robot)
    logs = []
    for seed in (3, 4):
        q, qd, qdd = _states(robot, 40, seed)
        logs.append((q, qd, qdd, numeric.inverse_dynamics(robot, q, qd, qdd)))
    result = fit.identify(base, logs)
    truth = base.numeric_values()
    assert result.names == base.names
    assert np.abs(result.estimate - truth).max() <= 1e-7 * max(1.0, float(np.abs(truth).max()))


def test_parallelogram_folds_the_second_crank_and_the_coupler_into_the_first_crank() -> None:
    """fourbar_parallelogram: crank1 (a = 2), coupler (a = 3/2, its joint -q), crank2 (q, on a parallel axis): the
    coupler translates, so only its mass acts, at the crank's tip; the second crank adds to the first."""
    base = ident.base_parameters(load_quiet("fourbar_parallelogram"))
    s = {name: sympy.Symbol(name) for name in
         ("ZZ1", "ZZ3", "MX1", "MX3", "MY1", "MY3", "M1", "M2", "M3", "IA1", "IA2", "IA3", "FV1", "FV2", "FV3")}
    expected = {
        "ZZR1": s["ZZ1"] + s["ZZ3"] + 4 * (s["M1"] + s["M2"] + s["M3"] + s["MX1"] + s["MX3"])
        + s["IA1"] + s["IA2"] + s["IA3"],
        "MXR1": s["MX1"] + s["MX3"] + 2 * (s["M1"] + s["M2"] + s["M3"]),
        "MYR1": s["MY1"] + s["MY3"],
        "FVR1": s["FV1"] + s["FV2"] + s["FV3"],
    }
    assert base.names == tuple(expected)
    for name, value in zip(base.names, base.parameters, strict=True):
        assert sympy.expand(value - expected[name]) == 0, name


@pytest.mark.parametrize("name", ["fourbar_parallelogram", "fourbar_rbdl"])
def test_symbolic_regressor_equals_the_numeric_one(name: str) -> None:
    robot = load_quiet(name)
    Y = ident.regressor(robot).Y
    assert Y.shape == (robot.nv, 12 * robot.n)
    js = joint_symbols(robot.nv)
    f = sympy.lambdify([list(js.q), list(js.qd), list(js.qdd)], Y, "numpy")
    for q, qd, qdd in zip(*_states(robot, 3, 5), strict=True):
        Y_num = ident.numeric_regressor(robot, q, qd, qdd)
        assert np.abs(np.array(f(q, qd, qdd), dtype=float) - Y_num).max() <= 1e-12 * _scale(Y_num)


def test_implicit_loops_are_refused_in_one_line() -> None:
    robot = load_quiet("fivebar")
    for call in (lambda: ident.base_parameters(robot), lambda: ident.regressor(robot),
                 lambda: ident.numeric_regressor(robot, np.zeros(robot.nv), np.zeros(robot.nv), np.zeros(robot.nv))):
        with pytest.raises(rd.ModelError, match="implicit loops") as info:
            call()
        assert "\n" not in str(info.value)


def test_symbolic_geometry_with_couplings_is_refused_in_one_line() -> None:
    """The couplings' relations are numeric (the SVD's): a coupled robot with geometry symbols is refused."""
    robot = load_quiet("puma560_symbolic").replace(couplings=(Coupling(4, 3, -2, 0),))
    with pytest.raises(rd.ModelError, match="numeric geometry") as info:
        ident.base_parameters(robot)
    assert "\n" not in str(info.value)


def test_cli_base_parameter_program_of_a_palletizer_is_refused_in_one_line() -> None:
    """The base parameters exist (above); the base-parameter *program* (count/codegen --base) is not built for coupled
    robots: exit code 2 and one line."""
    from robodyn.cli import app

    result = CliRunner().invoke(app, ["count", "palletizer_kr700pa", "--base"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "coupled joints" in lines[0], result.output

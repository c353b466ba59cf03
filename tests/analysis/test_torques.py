"""Trajectories (robodyn.analysis.trajectories) and torque histories (robodyn.analysis.torques): Angeles, Ma and Rojas'
example 1 (seed 003, section 7.1, figures 4 and 5), quintic and tabulated trajectories, and the
``robodyn torques`` command."""

from __future__ import annotations

import math

import numpy as np
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn import numeric
from robodyn.analysis.check import evaluate
from robodyn.analysis.torques import TorqueHistory, torque_history
from robodyn.analysis.trajectories import (
    TRAJECTORIES,
    Trajectory,
    TrajectoryError,
    angeles1,
    angeles_family,
    load_trajectory,
    quintic,
    trajectory_from_csv,
)
from robodyn.cli import app
from tests.conftest import load_quiet
from tests.helpers import assert_close

runner = CliRunner()


def fd_check(traj: Trajectory, atol: float) -> None:
    """qd and qdd agree with second-order central differences of q and qd at the interior samples."""
    inner = slice(1, -1)
    np.testing.assert_allclose(np.gradient(traj.q, traj.t, axis=0)[inner], traj.qd[inner], atol=atol)
    np.testing.assert_allclose(np.gradient(traj.qd, traj.t, axis=0)[inner], traj.qdd[inner], atol=atol)


@pytest.fixture(scope="module")
def stanford():
    return load_quiet("stanford_arm")


@pytest.fixture(scope="module")
def example1(stanford):
    return torque_history(stanford, "angeles1", samples=201)


# -- trajectories ---------------------------------------------------------------------------------


def test_angeles1_is_the_papers_example_with_q3_minus_b3(stanford):
    traj = angeles1(stanford, samples=2001)
    assert traj.name == "angeles1" and traj.q.shape == (2001, 6) and traj.t[0] == 0 and traj.t[-1] == 10
    B = 2 * math.pi / 10
    t = traj.t
    ramp = t - np.sin(B * t) / B
    b3 = 0.01 * ramp
    # each profile starts at 0 (t - sin(Bt)/B cancels to ~t^3 near t = 0; numpy's sin differs in its last bits
    # between CPUs): compared to the profile's size over the motion
    assert_close(traj.q[:, 2], -b3)  # the loader's d_3 = -b_3: q3 = -b3
    assert_close(traj.qd[:, 2], -0.01 * (1 - np.cos(B * t)))
    assert_close(traj.qdd[:, 2], -0.01 * B * np.sin(B * t))
    assert_close(traj.q[:, 1], math.pi / 2 - math.pi / 60 * ramp)
    for i in (0, 3, 4, 5):
        assert_close(traj.q[:, i], math.pi / 30 * ramp)
    assert traj.q[-1, 0] == pytest.approx(math.pi / 3) and traj.q[-1, 1] == pytest.approx(math.pi / 3)
    np.testing.assert_allclose(traj.qd[0], 0, atol=1e-15)
    np.testing.assert_allclose(traj.qdd[0], 0, atol=1e-15)
    fd_check(traj, atol=1e-5)
    assert TRAJECTORIES["stanford_example1"] is TRAJECTORIES["angeles1"]
    plus = angeles1(stanford, samples=11, prismatic_sign=1.0)
    assert_close(plus.q[:, 2], -angeles1(stanford, samples=11).q[:, 2])


def test_angeles_family_derivatives():
    traj = angeles_family([0.3, -1.0], [0.5, 2.0], B=1.7, duration=4.0, samples=4001)
    fd_check(traj, atol=1e-5)
    assert traj.q[0].tolist() == [0.3, -1.0]


def test_quintic_boundary_conditions_and_derivatives():
    start, end = np.array([0.1, -0.4, 2.0]), np.array([1.0, 0.6, -1.0])
    traj = quintic(start, end, duration=2.0, samples=2001)
    assert_close(traj.q[0], start)
    assert_close(traj.q[-1], end)
    for a in (traj.qd, traj.qdd):
        np.testing.assert_allclose(a[[0, -1]], 0, atol=1e-12)
    assert_close(traj.q[1000], (start + end) / 2)  # symmetric about the midpoint
    fd_check(traj, atol=1e-4)  # central-difference error of qd ~ dt^2 / 6 x jerk
    with pytest.raises(TrajectoryError, match="duration"):
        quintic(start, end, duration=0.0)


def test_csv_round_trip(tmp_path, stanford):
    traj = angeles1(stanford, samples=51)
    path = traj.to_csv(tmp_path / "ex1.csv")
    assert path.read_text().splitlines()[0].startswith("t,q1,q2,q3,q4,q5,q6,qd1")
    back = trajectory_from_csv(path, 6)
    for key in ("t", "q", "qd", "qdd"):
        np.testing.assert_array_equal(getattr(back, key), getattr(traj, key))
    assert load_trajectory(str(path), stanford).name == "ex1"
    assert not list(tmp_path.glob(".*"))  # no temporary file left behind


def test_csv_positions_only_are_differentiated(tmp_path, stanford):
    ref = angeles1(stanford, samples=801)
    path = tmp_path / "q.csv"
    np.savetxt(path, np.hstack([ref.t[:, None], ref.q]), delimiter=",")  # no header
    traj = trajectory_from_csv(path, 6)
    np.testing.assert_allclose(traj.qd, ref.qd, atol=1e-4)
    np.testing.assert_allclose(traj.qdd, ref.qdd, atol=1e-3)


@pytest.mark.parametrize(
    ("text", "match"),
    [("t,q1,q2\n0,0,0\n1,1,1\n2,2,2\n", "no column 'q3'"), ("t,q1,q2,q3\n", "no data rows"),
     ("t,q1,q2,q3\n0,0,0,0\n1,1,nan,1\n2,2,2,2\n", "not finite"), ("t,q1,q2,q3\n0,0,0\n", "columns")],
)
def test_bad_csv_names_file_and_column(tmp_path, text, match):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(TrajectoryError, match=match) as info:
        trajectory_from_csv(path, 3)
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    assert isinstance(info.value, rd.ModelError)


def test_unknown_trajectory_name(stanford):
    with pytest.raises(TrajectoryError, match="neither a file nor a built-in trajectory"):
        load_trajectory("no_such_thing", stanford)


# -- torque histories -----------------------------------------------------------------------------


def test_history_is_numeric_inverse_dynamics_and_newton_euler(stanford, example1):
    traj = example1.trajectory
    assert isinstance(example1, TorqueHistory) and example1.tau.shape == (201, 6)
    np.testing.assert_array_equal(example1.tau, numeric.inverse_dynamics(stanford, traj.q, traj.qd, traj.qdd))
    ne = rd.derive(stanford, "ne")
    rows = [0, 37, 100, 163, 200]
    points = np.hstack([traj.q[rows], traj.qd[rows], traj.qdd[rows]])
    tau = evaluate(ne.raw("tau"), list(ne.symbols.all()), points)
    np.testing.assert_allclose(example1.tau[rows], tau, rtol=1e-10, atol=1e-10 * np.max(np.abs(tau)))


def test_example1_physics(example1):
    """Checks readable off the model: at t = 0 the arm is at rest with the boom horizontal (theta_2 = pi/2),
    so f3 = 0 and tau2 holds the boom's offset mass; at t = 10 s it is at rest again with theta_2 = pi/3,
    so f3 carries the weight of links 3..6 along the boom: (4 + 1 + 0.6 + 0.5) 9.81 cos(pi/3) N."""
    tau = example1.tau
    assert abs(tau[0, 2]) < 1e-12
    assert tau[-1, 2] == pytest.approx(6.1 * 9.81 * 0.5, rel=1e-9)
    assert example1.columns == ["tau1", "tau2", "f3", "tau4", "tau5", "tau6"]
    assert np.all(np.ptp(tau, axis=0) > 0)


def test_example1_csv_and_png(tmp_path, example1):
    csv_path = example1.write_csv(tmp_path / "example1.csv")
    png_path = example1.plot(tmp_path / "example1.png")
    lines = csv_path.read_text().splitlines()
    assert lines[0] == "t,tau1,tau2,f3,tau4,tau5,tau6" and len(lines) == 202
    data = np.loadtxt(csv_path, delimiter=",", skiprows=1)
    np.testing.assert_allclose(data[:, 1:], example1.tau, rtol=1e-15)
    assert np.all(np.ptp(data, axis=0) > 0)  # no constant column
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png_path.stat().st_size > 30_000
    assert not list(tmp_path.glob(".*"))


def test_params_bind_symbols_and_g_defaults():
    robot = rd.load("double_pendulum")
    params = {"L1": 1.0, "L2": 0.5, "m1": 1.0, "m2": 2.0}
    traj = quintic([0.0, 0.0], [1.0, -1.0], duration=1.0, samples=11)
    history = torque_history(robot, traj, params)
    expected = numeric.inverse_dynamics(robot, traj.q, traj.qd, traj.qdd, params={**params, "g": 9.81})
    np.testing.assert_array_equal(history.tau, expected)
    with pytest.raises(rd.ModelError, match="m1"):
        torque_history(robot, traj)


# -- command line ---------------------------------------------------------------------------------


def _lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip() and not line.startswith("warning:")]


def test_cli_torques_example1(tmp_path):
    csv_path, png_path = tmp_path / "t.csv", tmp_path / "t.png"
    result = runner.invoke(app, ["torques", "stanford_arm", "--trajectory", "angeles1", "--csv", str(csv_path),
                                 "--plot", str(png_path), "--samples", "51"])
    assert result.exit_code == 0, result.output
    assert "f3" in result.output and "peak" in result.output and "N m" in result.output
    assert csv_path.stat().st_size > 1000 and png_path.stat().st_size > 30_000


def test_cli_torques_from_csv_with_param(tmp_path):
    path = quintic([0.0, 0.0], [1.0, -1.0], duration=1.0, samples=21).to_csv(tmp_path / "q.csv")
    result = runner.invoke(app, ["torques", "double_pendulum", "-t", str(path), "--param", "L1=1", "--param",
                                 "L2=0.5", "--param", "m1=1", "--param", "m2=2"])
    assert result.exit_code == 0, result.output
    assert "tau2" in result.output


@pytest.mark.parametrize(
    ("args", "expect"),
    [(["-t", "BAD"], "no column 'q3'"), (["-t", "no_such_trajectory"], "neither a file"),
     (["--csv", "MISSING/x.csv"], "does not exist"), (["--param", "g"], "NAME=VALUE"),
     (["--csv", "OUT.csv", "--plot", "OUT.xyz"], "unknown image format")],
)
def test_cli_torques_errors_are_one_line(tmp_path, args, expect):
    bad = tmp_path / "bad.csv"
    bad.write_text("t,q1,q2\n0,0,0\n1,1,1\n2,2,2\n")
    args = [str(bad) if a == "BAD" else str(tmp_path / a) if a.startswith(("MISSING", "OUT")) else a for a in args]
    result = runner.invoke(app, ["torques", "stanford_arm", *args])
    assert result.exit_code == 2
    assert not (tmp_path / "OUT.csv").exists()  # refused before anything is written
    lines = _lines(result.output)
    assert len(lines) == 1 and lines[0].startswith("error: ") and expect in lines[0], result.output
    if args[0] == "-t" and args[1] == str(bad):
        assert str(bad) in lines[0]

"""Fu's empirical simplified model (section 3.4.1): classification of the rotational and
translational parts of D_ij and h_i along a trajectory, the simplified model's torque error,
the figures (Fu fig. 3.10, 3.11) and the trajectory sources."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn as rd
from robodyn.analysis.check import evaluate
from robodyn.analysis.simplified import (
    Trajectory,
    TrajectoryError,
    classify,
    load_trajectory,
    simplify_model,
    stanford_example1,
    symbolic_split,
    trajectory_from_csv,
)
from tests.conftest import load_quiet
from tests.helpers import assert_close

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
TWO_LINK = {"l": 1.0, "m1": 2.0, "m2": 1.0}


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.fixture(scope="module")
def puma(tmp_path_factory):
    out = tmp_path_factory.mktemp("simplified")
    return simplify_model(load_quiet("puma560"), "stanford_example1", threshold=0.1, output_dir=out, samples=21), out


def test_classify_threshold():
    assert classify(0.05, 1.0, 0.1, 1e-12) == "translational"
    assert classify(1.0, 0.05, 0.1, 1e-12) == "rotational"
    assert classify(0.2, 1.0, 0.1, 1e-12) == "both"
    assert classify(0.2, 1.0, 0.3, 1e-12) == "translational"
    assert classify(0.0, 0.0, 0.1, 1e-12) == "zero"
    assert classify(0.0, 1.0, 0.0, 1e-12) == "translational"  # an identically zero part is always negligible


def test_fu_two_link_is_translational_in_h():
    """Fu sec. 3.4.2: h_1^rot = h_2^rot = 0, so h is purely translational; D keeps both parts."""
    model = simplify_model(rd.load("two_link_fu"), "stanford_example1", params=TWO_LINK, samples=21)
    assert model.dominance("h1") == model.dominance("h2") == "translational"
    assert {model.dominance(name) for name in ("D11", "D12", "D22")} == {"both"}
    assert model.worst_error < 1e-12  # only identically zero parts were dropped
    given = simplify_model(rd.load("two_link_fu"), model.trajectory, params=TWO_LINK,
                           split=symbolic_split(rd.load("two_link_fu")))
    assert_close(given.tau, model.tau, 1e-12)  # at rest at t = 0: gravity torques, which may vanish


def test_prismatic_joint_is_translational():
    robot = rd.load("stanford_modified")  # RRP
    params = {s.name: 1.0 for s in robot.parameters() if s.name != "g"}
    model = simplify_model(robot, "stanford_example1", params=params, samples=21)
    for name in ("D13", "D33", "h3"):
        assert model.dominance(name) == "translational"


def test_full_model_torque_is_newton_euler(puma):
    """The unsimplified torques along the trajectory are the Newton-Euler torques."""
    model, _ = puma
    ne = rd.derive(model.robot, "ne")
    points = np.hstack([model.trajectory.q, model.trajectory.qd, model.trajectory.qdd])
    tau = evaluate(ne.raw("tau"), list(ne.symbols.all()), points)
    assert np.max(np.abs(tau - model.tau)) < 1e-10 * np.max(np.abs(tau))


def test_puma_classification_and_error(puma):
    model, _ = puma
    n = model.robot.n
    assert len(model.elements) == n * (n + 1) // 2 + n
    assert {e.dominance for e in model.elements} <= {"translational", "rotational", "both", "zero"}
    assert model.dominance("D66") == "rotational"  # the last link only turns about its own axis (Fu: D66)
    assert model.dominance("D33") in ("translational", "both")
    assert model.error.shape == (n,) and np.all(np.isfinite(model.error))
    assert 0 <= model.worst_relative_error < 0.05
    assert model.worst_error == pytest.approx(float(np.max(np.abs(model.tau - model.tau_simplified))))
    # a looser threshold drops more and errs more; threshold 0 drops only parts that vanish
    loose = simplify_model(model.robot, model.trajectory, threshold=0.9)
    exact = simplify_model(model.robot, model.trajectory, threshold=0.0)
    assert loose.worst_error >= model.worst_error >= exact.worst_error
    assert exact.worst_relative_error < 1e-12
    assert sum(e.dominance == "both" for e in loose.elements) <= sum(e.dominance == "both" for e in model.elements)


def test_figures_and_report_written(puma):
    model, out = puma
    assert [p.name for p in model.figures] == ["dalembert_D.png", "dalembert_h.png"]
    for path in model.figures:
        assert path.parent == out and path.stat().st_size > 10_000
        width, height = png_size(path)
        assert width >= 600 and height >= 400
    assert model.report is not None and "worst torque error" in model.report.read_text()
    assert not list(out.glob(".*"))  # no temporary files left behind
    samples = model.samples
    assert np.ptp(samples.D_tran[:, 0, 0]) > 0 and np.ptp(samples.h_tran[:, 0]) > 0  # non-constant data


def test_stanford_example1_derivatives():
    robot = load_quiet("stanford_arm")
    traj = stanford_example1(robot, samples=2001)
    assert traj.q.shape == (2001, 6) and traj.t[-1] == 10.0
    assert traj.q[0, 1] == pytest.approx(np.pi / 2) and traj.q[-1, 0] == pytest.approx(np.pi / 3)
    assert traj.q[-1, 2] == pytest.approx(-0.1)  # q3 = -b3, b3 = A_3 (t - sin(Bt)/B) = 0.01 m x 10 at t = 10
    inner = slice(1, -1)
    np.testing.assert_allclose(np.gradient(traj.q, traj.t, axis=0)[inner], traj.qd[inner], atol=1e-5)
    np.testing.assert_allclose(np.gradient(traj.qd, traj.t, axis=0)[inner], traj.qdd[inner], atol=1e-5)


def test_csv_trajectory_with_header_and_differentiation(tmp_path):
    robot = load_quiet("puma560")
    ref = stanford_example1(robot, samples=401)
    path = tmp_path / "traj.csv"
    header = "t," + ",".join(f"q{i}" for i in range(1, 7))
    rows = [",".join(f"{x:.17g}" for x in [t, *q]) for t, q in zip(ref.t, ref.q, strict=True)]
    path.write_text("\n".join([header, *rows]) + "\n")
    traj = trajectory_from_csv(path, 6)
    np.testing.assert_allclose(traj.qd, ref.qd, atol=1e-4)
    np.testing.assert_allclose(traj.qdd, ref.qdd, atol=2e-3)
    assert load_trajectory(str(path), robot).name == "traj"


def test_csv_trajectory_full_columns_without_header(tmp_path):
    robot = rd.load("double_pendulum")
    ref = stanford_example1(robot, samples=11)
    path = tmp_path / "full.csv"
    data = np.hstack([ref.t[:, None], ref.q, ref.qd, ref.qdd])
    np.savetxt(path, data, delimiter=",")
    traj = trajectory_from_csv(path, 2)
    assert_close(traj.qdd, ref.qdd)  # qdd = A B sin(Bt) = 0 at t = 0 and 10
    model = simplify_model(robot, path, params={"L1": 1.0, "L2": 0.5, "m1": 1.0, "m2": 2.0}, output_dir=tmp_path / "o")
    assert all(p.stat().st_size > 0 for p in model.figures)


@pytest.mark.parametrize(
    ("text", "n", "match"),
    [("", 1, "empty"), ("t,q1\n0,0\n1,x\n", 1, "not a number"), ("t,q1\n0,0\n0,1\n1,2\n", 1, "increasing"),
     ("t,q2,q3\n0,0,0\n1,1,1\n2,2,2\n", 3, "q1"), ("0,0,0,0\n1,1,1,1\n2,2,2,2\n", 2, "columns"),
     ("t,q1,qd1\n0,0,0\n1,1,1\n2,2,2\n", 1, None)],
)
def test_bad_csv(tmp_path, text, n, match):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    if match is None:  # the control: a well-formed file
        assert trajectory_from_csv(path, n).qd[:, 0].tolist() == [0, 1, 2]
        return
    with pytest.raises(TrajectoryError, match=match):
        trajectory_from_csv(path, n)


def test_unknown_trajectory_and_free_parameters():
    with pytest.raises(TrajectoryError, match="neither a file nor a built-in"):
        simplify_model(load_quiet("puma560"), "no_such_trajectory")
    with pytest.raises(rd.ModelError, match="m1"):
        simplify_model(rd.load("two_link_fu"), "stanford_example1")
    with pytest.raises(TrajectoryError, match="joints"):
        simplify_model(load_quiet("puma560"), Trajectory(np.arange(3.0), np.zeros((3, 2)), np.zeros((3, 2)),
                                                         np.zeros((3, 2))))

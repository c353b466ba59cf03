"""The analytic ID derivatives of a robot on a floating base (robodyn.recursions.rnea_derivatives with a floating
``Root``, issue 31): the base a six-column root in its own frame at this instant. Checked against Pinocchio's
computeRNEADerivatives (``JointModelFreeFlyer`` root, the tangent space) on a tree written here (a revolute and a
prismatic joint in series, a branch, a prismatic joint on the base, tilted axes, off-diagonal inertias, joint
damping) and on a body alone (nv 6), with the analytic form forced, and against forward mode over the same
recursion for dqdd; and the choice by count among the candidates (Solo: the program built is the cheapest)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import robodyn as rd
from robodyn.model import joints
from robodyn.program import build, routes

pin = pytest.importorskip("pinocchio")

URDF = """<robot name="tree">
  <link name="base"><inertial><origin xyz="0.05 -0.02 0.03" rpy="0.1 0.2 -0.1"/><mass value="4.0"/>
    <inertia ixx="0.11" ixy="0.01" ixz="-0.02" iyy="0.13" iyz="0.015" izz="0.09"/></inertial></link>
  <link name="thigh"><inertial><origin xyz="0.1 0.02 -0.05" rpy="0.3 -0.1 0.2"/><mass value="1.3"/>
    <inertia ixx="0.02" ixy="0.002" ixz="0.001" iyy="0.03" iyz="-0.003" izz="0.025"/></inertial></link>
  <link name="slider"><inertial><origin xyz="-0.02 0.04 0.1" rpy="0 0.2 0.1"/><mass value="0.7"/>
    <inertia ixx="0.01" ixy="-0.001" ixz="0.002" iyy="0.012" iyz="0.001" izz="0.008"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.0 0.15 0.02" rpy="0.2 0 0"/><mass value="0.9"/>
    <inertia ixx="0.015" ixy="0.001" ixz="0" iyy="0.01" iyz="0.002" izz="0.02"/></inertial></link>
  <joint name="hip" type="revolute"><parent link="base"/><child link="thigh"/>
    <origin xyz="0.2 -0.1 0.05" rpy="0.3 -0.2 0.4"/><axis xyz="0.6 0 0.8"/>
    <limit effort="10" lower="-3" upper="3" velocity="10"/><dynamics damping="0.3"/></joint>
  <joint name="knee" type="prismatic"><parent link="thigh"/><child link="slider"/>
    <origin xyz="0.3 0.05 -0.1" rpy="-0.2 0.5 0.1"/><axis xyz="0 1 0"/>
    <limit effort="10" lower="-1" upper="1" velocity="10"/><dynamics damping="0.7"/></joint>
  <link name="rail"><inertial><origin xyz="0.03 0.01 -0.02" rpy="0.1 0.1 0"/><mass value="0.5"/>
    <inertia ixx="0.004" ixy="0.0005" ixz="0" iyy="0.005" iyz="0.0002" izz="0.003"/></inertial></link>
  <joint name="slide" type="prismatic"><parent link="base"/><child link="rail"/>
    <origin xyz="0.0 -0.2 -0.1" rpy="0.4 0 0.2"/><axis xyz="0 0.6 0.8"/>
    <limit effort="10" lower="-1" upper="1" velocity="10"/><dynamics damping="0.4"/></joint>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="-0.1 0.2 0.15" rpy="0 0.3 -0.5"/><axis xyz="1 0 0"/>
    <limit effort="10" lower="-3" upper="3" velocity="10"/><dynamics damping="0.2"/></joint>
</robot>
"""
BODY = """<robot name="body"><link name="base"><inertial><origin xyz="0.02 -0.01 0.03" rpy="0.2 0.1 -0.3"/>
  <mass value="1.5"/><inertia ixx="0.02" ixy="0.001" ixz="-0.002" iyy="0.03" iyz="0.0015" izz="0.04"/></inertial></link>
</robot>
"""
OUTPUTS = ("dtau_dq", "dtau_dqd", "dqdd_dq", "dqdd_dqd")
#: The candidates (robodyn.program.routes.ANALYTIC_VARIANTS) forced one at a time.
FORCED = {"forward": ((),), "qd analytic": (("qd",),), "analytic": (("q", "qd"),)}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, rd.Manipulator]:
    path = tmp_path_factory.mktemp("urdf") / "tree.urdf"
    path.write_text(URDF)
    return path, rd.load(str(path), floating=True)


def _forced_build(robot: rd.Manipulator, outputs: tuple[str, ...], candidate: str) -> Any:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(routes, "ANALYTIC_VARIANTS", FORCED[candidate])
        return build(robot, outputs)


@pytest.fixture(scope="module")
def programs(tree: tuple[Path, rd.Manipulator]) -> dict[str, Any]:
    return {k: _forced_build(tree[1], OUTPUTS, k) for k in ("analytic", "forward")}


def _states(robot: rd.Manipulator, count: int) -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(31)
    return [(np.concatenate([joints.random_configuration(rng), rng.uniform(-1.5, 1.5, robot.n)]),
             *(rng.uniform(-2, 2, robot.nv) for _ in range(3))) for _ in range(count)]


def _evaluate(program: Any, q: np.ndarray, v: np.ndarray, a: np.ndarray, tau: np.ndarray) -> dict[str, np.ndarray]:
    values: dict[str, float] = {}
    for key, x in (("q", q), ("qd", v), ("qdd", a), ("tau", tau)):
        values.update({str(s): float(y) for s, y in zip(program.inputs.get(key, []), x, strict=False)})
    nv = len(v)
    return {k: np.asarray(x, dtype=float).reshape(nv, nv) for k, x in program.evaluate(values).items()}


def _against_pinocchio(path: Path, robot: rd.Manipulator, program: Any) -> None:
    model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    data = model.createData()
    for q, v, a, tau in _states(robot, 3):
        got = _evaluate(program, q, v, a, tau)
        dq, dv, _ = (np.array(x) for x in pin.computeRNEADerivatives(model, data, q, v, a))
        dv = dv + np.diag(model.damping)
        scale = max(1.0, np.abs(dq).max(), np.abs(dv).max())
        assert np.abs(got["dtau_dq"] - dq).max() < 1e-12 * scale
        assert np.abs(got["dtau_dqd"] - dv).max() < 1e-12 * scale
        assert np.abs(got["dtau_dq"][:, :3]).max() == 0  # the base's position enters nothing


def test_analytic_dtau_against_pinocchio(tree: tuple[Path, rd.Manipulator], programs: dict[str, Any]) -> None:
    """dtau/dq and dtau/dqd (the damping on the joints' diagonal added to Pinocchio's) at random states, every
    base row and column included."""
    assert tree[1].n == 4 and all(link.damping != 0 for link in tree[1].links)
    _against_pinocchio(*tree, programs["analytic"])


def test_analytic_dtau_of_a_body_alone(tmp_path: Path) -> None:
    """A floating body with no joint (nv 6, a drone's model): the base's 6 x 6 block alone."""
    path = tmp_path / "body.urdf"
    path.write_text(BODY)
    robot = rd.load(str(path), floating=True)
    assert robot.n == 0
    _against_pinocchio(path, robot, _forced_build(robot, ("dtau_dq", "dtau_dqd"), "analytic"))


def test_analytic_dqdd_is_forward_modes(tree: tuple[Path, rd.Manipulator], programs: dict[str, Any]) -> None:
    """dqdd/dq and dqdd/dqd (dID at qdd = FD(q, qd, tau), solved with M's factors) by either form agree."""
    for q, v, a, tau in _states(tree[1], 2):
        got, ref = (_evaluate(programs[k], q, v, a, tau) for k in ("analytic", "forward"))
        for name in ("dqdd_dq", "dqdd_dqd"):
            assert np.abs(got[name] - ref[name]).max() < 1e-11 * max(1.0, np.abs(ref[name]).max())


def test_the_cheapest_candidate_is_kept() -> None:
    """Solo's dtau: the program built is no dearer (multiplications + additions) than any candidate forced alone,
    and the analytic form is cheaper than forward mode (1,398 + 1,407 against 2,004 + 1,655)."""
    from tests.program.test_floating_programs import ROBOTS

    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    robot = rd.load(str(ROBOTS / "solo_description/robots/solo.urdf"), floating=True)
    outputs = ("dtau_dq", "dtau_dqd")
    forced = {k: _forced_build(robot, outputs, k).count()["evaluation"] for k in FORCED}
    c = build(robot, outputs).count()["evaluation"]
    totals = {k: x.multiplications + x.additions for k, x in forced.items()}
    assert totals["analytic"] < totals["forward"]
    assert c.multiplications + c.additions <= min(totals.values())


def test_the_documented_derivative_counts() -> None:
    """docs/guide/floating.md's dtau counts (multiplications) beside Pinocchio<SX>'s: Solo12 3763, Talos 15198, as
    robodyn.program.build makes them."""
    from tests.program.test_floating_programs import ROBOTS

    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    text = " ".join((Path(__file__).resolve().parents[2] / "docs" / "guide" / "floating.md").read_text().split())
    for name, path in (("Solo12 dtau", "solo_description/robots/solo12.urdf"),
                       ("Talos", "talos_data/robots/talos_reduced.urdf")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rd.ModelWarning)  # the URDF's own (meshes, limits)
            robot = rd.load(str(ROBOTS / path), floating=True)
        count = build(robot, ("dtau_dq", "dtau_dqd")).count()["evaluation"].multiplications
        assert f"{name} {count} vs " in text, (name, count)

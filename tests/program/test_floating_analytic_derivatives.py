"""The analytic ID derivatives of a robot on a floating base (robodyn.recursions.rnea_derivatives with a floating
``Root``, issue 31): the base a six-column root in its own frame at this instant. Checked against Pinocchio's
computeRNEADerivatives (``JointModelFreeFlyer`` root, the tangent space) on a tree written here (a revolute and a
prismatic joint in series, a branch, tilted axes, off-diagonal inertias, joint damping), with the analytic form
forced, and against forward mode over the same recursion for dqdd; and the routes' choice by count (Solo: the
analytic form, which forward mode's count exceeds)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import robodyn as rd
from robodyn.model import joints
from robodyn.program import build, floating

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
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="-0.1 0.2 0.15" rpy="0 0.3 -0.5"/><axis xyz="1 0 0"/>
    <limit effort="10" lower="-3" upper="3" velocity="10"/><dynamics damping="0.2"/></joint>
</robot>
"""
OUTPUTS = ("dtau_dq", "dtau_dqd", "dqdd_dq", "dqdd_dqd")


def _forced(analytic: bool):
    """floating.cheapest_id_jacobians replaced by one form."""
    def pick(parts: Any, symbols: Any, a: Any, directions: Any) -> Any:
        form = floating.analytic_id_jacobians if analytic else floating.id_jacobians
        return form(parts, a, directions)
    return pick


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, rd.Manipulator]:
    path = tmp_path_factory.mktemp("urdf") / "tree.urdf"
    path.write_text(URDF)
    return path, rd.load(str(path), floating=True)


@pytest.fixture(scope="module")
def programs(tree: tuple[Path, rd.Manipulator]) -> dict[str, Any]:
    robot = tree[1]
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        for analytic in (True, False):
            mp.setattr(floating, "cheapest_id_jacobians", _forced(analytic))
            out["analytic" if analytic else "forward"] = build(robot, OUTPUTS)
    return out


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


def test_analytic_dtau_against_pinocchio(tree: tuple[Path, rd.Manipulator], programs: dict[str, Any]) -> None:
    """dtau/dq and dtau/dqd (the damping on the joints' diagonal added to Pinocchio's) at random states, every
    base row and column included."""
    path, robot = tree
    model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    data = model.createData()
    assert model.damping[6:].min() > 0
    for q, v, a, tau in _states(robot, 3):
        got = _evaluate(programs["analytic"], q, v, a, tau)
        dq, dv, _ = (np.array(x) for x in pin.computeRNEADerivatives(model, data, q, v, a))
        dv = dv + np.diag(model.damping)
        scale = max(1.0, np.abs(dq).max(), np.abs(dv).max())
        assert np.abs(got["dtau_dq"] - dq).max() < 1e-12 * scale
        assert np.abs(got["dtau_dqd"] - dv).max() < 1e-12 * scale
        assert np.abs(got["dtau_dq"][:, :3]).max() == 0  # the base's position enters nothing


def test_analytic_dqdd_is_forward_modes(tree: tuple[Path, rd.Manipulator], programs: dict[str, Any]) -> None:
    """dqdd/dq and dqdd/dqd (dID at qdd = FD(q, qd, tau), solved with M's factors) by either form agree."""
    for q, v, a, tau in _states(tree[1], 2):
        got, ref = (_evaluate(programs[k], q, v, a, tau) for k in ("analytic", "forward"))
        for name in ("dqdd_dq", "dqdd_dqd"):
            assert np.abs(got[name] - ref[name]).max() < 1e-11 * max(1.0, np.abs(ref[name]).max())


def test_the_cheaper_form_is_kept() -> None:
    """Solo's dtau: the analytic form (1,398 multiplications where forward mode takes 2,004): the program built is
    the analytic one, and no dearer than forward mode's."""
    from tests.program.test_floating_programs import ROBOTS

    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    robot = rd.load(str(ROBOTS / "solo_description/robots/solo.urdf"), floating=True)
    counts = {}
    with pytest.MonkeyPatch.context() as mp:
        for analytic in (True, False):
            mp.setattr(floating, "cheapest_id_jacobians", _forced(analytic))
            c = build(robot, ("dtau_dq", "dtau_dqd")).count()["evaluation"]
            counts[analytic] = (c.multiplications, c.additions)
    c = build(robot, ("dtau_dq", "dtau_dqd")).count()["evaluation"]
    assert counts[True][0] + counts[True][1] < counts[False][0] + counts[False][1]
    assert (c.multiplications, c.additions) == counts[True]

"""The built-in robots: each loads, says where it comes from, and matches its source's data."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
import sympy
import yaml

import robodyn as rd
from robodyn.formulations import kinematics
from tests.conftest import load_quiet
from tests.helpers import numeric, state_values

EXPECTED = {
    "double_pendulum": ("RR", "standard", 5),
    "two_link_fu": ("RR", "standard", 4),
    "two_link_payload": ("RR", "standard", 8),
    "stanford_modified": ("RRP", "standard", 18),
    "puma560_symbolic": ("RRRRRR", "modified", 42),
    "puma560": ("RRRRRR", "standard", 0),
    "puma560_rtb": ("RRRRRR", "standard", 0),
    "stanford_arm": ("RRPRRR", "modified", 0),
    "industrial_6r": ("RRRRRR", "modified", 0),
    "palletizer_kr700pa": ("RRRRRRRR", "modified", 0),
    "palletizer_mpl800": ("RRRRRRRRRR", "modified", 0),
    "fourbar_parallelogram": ("RRR", "standard", 0),
    "fourbar_crank_rocker": ("RRR", "standard", 0),
    "fivebar": ("RRRR", "standard", 0),
    "fourbar_rbdl": ("RRRR", "standard", 0),
}


def test_every_robot_is_listed():
    assert sorted(EXPECTED) == rd.library.names()
    for entry in rd.library.entries():
        assert entry.description and entry.source
        # each names the text its data come from, by its authors (or the Toolbox whose numbers it carries)
        cited = ("Horn and Linge", "Burdick", "Fu, Gonzalez and Lee", "Angeles, Ma and Rojas", "Macsyma",
                 "Robotics Toolbox", "HybrDyn", "RBDL", "Norton")
        assert any(text in entry.source for text in cited), entry.name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_loads_with_expected_structure(name):
    robot = load_quiet(name)
    joints, convention, parameters = EXPECTED[name]
    assert (robot.joint_types, robot.convention, len(robot.parameters())) == (joints, convention, parameters)


def test_industrial_6r_is_converted_from_angeles_notation():
    """Table 3 of seed 003: b1 = -1.5, b6 = -0.41 become d1 = 1.5, d6 = 0.41; alpha_i -> alpha_{i-1}."""
    robot = load_quiet("industrial_6r")
    assert [float(link.d) for link in robot.links] == [1.5, 0, 0, 0, 0, 0.41]
    assert [link.alpha for link in robot.links] == [0, sympy.pi / 2, 0, 0, sympy.pi / 2, sympy.pi / 2]
    assert [float(link.a) for link in robot.links] == [0, 0, 1.02, 1.02, 0.2, 0]
    # at table 3's initial angles the wrist centre of frame 6 lies on the line x = 1.33 (to 0.01)
    q0 = np.deg2rad([0, 68.5, -135, 39.6, 90, 90])
    T = numeric(kinematics.forward_kinematics(robot), state_values(6, q0))
    assert abs(T[0, 3] - 1.33) < 0.01 and abs(T[1, 3]) < 1e-12


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_loads_without_warnings(name):
    """Published data that break the triangle inequality say so (each such link's ``inertia_note``): no warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rd.load(name)
    assert [str(w.message) for w in caught] == []


def test_every_robot_loads_without_warnings_in_a_fresh_interpreter():
    code = "import robodyn as rd\nfor name in rd.library.names():\n    rd.load(name)\nprint('ok')"
    proc = subprocess.run([sys.executable, "-W", "error::Warning", "-c", code], capture_output=True, text=True,
                          check=False, timeout=600, preexec_fn=_limit_cpu if sys.platform != "win32" else None)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def _limit_cpu() -> None:
    """A hang guard in CPU time (a loaded machine slows a correct run down; a hang spins): preexec_fn."""
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (120, 130))


NOTED = {"puma560": [1, 3], "puma560_rtb": [1, 3], "industrial_6r": [1], "fourbar_rbdl": [1, 2, 3, 4]}


@pytest.mark.parametrize("name", sorted(NOTED))
def test_published_inertia_is_noted_and_still_strict(name):
    """The notes name the links and their source; strict mode still refuses the tensors; the same data in a user
    file without the notes warn about exactly those links."""
    robot = rd.load(name)
    noted = [k + 1 for k, note in enumerate(robot.inertia_notes) if note]
    assert noted == NOTED[name]
    for k in noted:
        assert f"link {k}" in robot.inertia_notes[k - 1]
        assert any(author in robot.inertia_notes[k - 1] for author in ("Corke", "Angeles", "RBDL")), robot.inertia_notes
    with pytest.raises(rd.ModelError, match="strict"):
        rd.load(name, strict=True)


@pytest.mark.parametrize("name", sorted(NOTED))
def test_same_data_without_the_notes_warn(name, tmp_path):
    data = yaml.safe_load(rd.library.text(name)[1])
    for row in data["links"]:
        row.pop("inertia_note", None)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rd.load(path)
    messages = [str(w.message) for w in caught if issubclass(w.category, rd.ModelWarning)]
    assert len(messages) == len(NOTED[name]), messages
    for k, message in zip(NOTED[name], messages, strict=True):
        assert f"{path}: link {k}: field 'inertia'" in message and "triangle inequality" in message


def test_show_prints_the_notes():
    from typer.testing import CliRunner

    from robodyn.cli import app

    result = CliRunner().invoke(app, ["show", "puma560"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "inertia notes" in text and "warning:" not in text
    assert "link 1: Corke and Armstrong-Helouvry (1994) give link 1" in text
    assert "link 3: Corke and Armstrong-Helouvry (1994) give link 3" in text
    plain = CliRunner().invoke(app, ["show", "double_pendulum"])
    assert plain.exit_code == 0 and "inertia notes" not in plain.output


def test_puma560_matches_the_toolbox_file():
    import json
    from pathlib import Path

    rtb = json.loads((Path(__file__).parents[1] / "data" / "puma560_rtb.json").read_text())
    robot = load_quiet("puma560")
    for link, ref in zip(robot.links, rtb["links"], strict=True):
        assert float(link.a) == ref["a"] and float(link.d) == ref["d"] and float(link.mass) == ref["m"]
        assert abs(float(link.alpha) - ref["alpha"]) < 1e-15
        assert [float(x) for x in link.com] == ref["r"]
        assert np.array(link.inertia, dtype=float).tolist() == ref["I"]


def _rbdl_fourbar_in_pinocchio():
    """RBDL's FourBarLinkage (tests/LoopConstraintsTests.cc at commit d2ca037, lines 24-106) written again in
    Pinocchio, body by body from RBDL's source, independently of robodyn's model file and exporter: five revolute z
    joints (B5 the massless virtual body), each Body(m, (l/2, 0, 0), diag(0, 0, m l^2/3) at the centre of mass),
    gravity (0, -9.81, 0); frames at B2's tip (X_p) and at B5's origin (X_s)."""
    pin = pytest.importorskip("pinocchio")
    model = pin.Model()
    model.gravity.linear = np.array([0.0, -9.81, 0.0])
    rod = pin.Inertia(2.0, np.array([1.0, 0, 0]), np.diag([0.0, 0.0, 8 / 3]))
    at = {0: pin.SE3.Identity(), 2: pin.SE3(np.eye(3), np.array([2.0, 0, 0]))}
    ids: list[int] = []
    for k, (parent, placement, inertia) in enumerate([(0, 0, rod), (1, 2, rod), (0, 0, rod), (3, 2, rod),
                                                      (4, 2, pin.Inertia.Zero())]):
        ids.append(model.addJoint(parent, pin.JointModelRZ(), at[placement], f"B{k + 1}"))
        model.appendBodyToJoint(ids[-1], inertia, pin.SE3.Identity())
    p = model.addFrame(pin.Frame("X_p", ids[1], 0, at[2], pin.FrameType.OP_FRAME))
    s = model.addFrame(pin.Frame("X_s", ids[4], 0, at[0], pin.FrameType.OP_FRAME))
    return pin, model, p, s


def test_fourbar_rbdl_is_rbdls_test_model():
    """RBDL's own configurations and velocities, typed in (tests/LoopConstraintsTests.cc at commit d2ca037), from
    the two actuated coordinates q[0], q[2] (RBDL's assembly weights 1, 0, 1, 0, 0, lines 984-988): the zero
    configuration (lines 857-862), both arms on the y axis (lines 883-888), the arms symmetric about the y axis
    with its velocity (lines 909-923), q[4] = q[0] + q[1] - q[2] - q[3] the closing joint's angle. Then RBDL's
    forward dynamics test, configuration 2 (lines 1186-1211: that q and qd, tau = (1, -2, 3, -5, 7) on the five
    joints, the closing one included): the accelerations of the constrained five-joint tree, written again in
    Pinocchio from RBDL's source (the KKT system of its mass matrix and its loop rows x, y, rz), are robodyn's
    with that tau projected (tau_a = W^T tau, the closing row included), and the two frames accelerate alike (what
    RBDL's test asserts, lines 1213-1219)."""
    robot = rd.load("fourbar_rbdl")
    G, c = robot.coupling_map()
    assert c == sympy.zeros(4, 1)
    closing = sympy.Matrix([[1, 1, -1, -1]])  # q[4] = q[0] + q[1] - q[2] - q[3]
    W = G.col_join(closing * G)  # the five RBDL coordinates from robodyn's two
    pi = sympy.pi
    for q_a, rbdl_q in [((0, 0), (0, 0, 0, 0, 0)), ((pi / 2, pi / 2), (pi / 2, 0, pi / 2, 0, 0)),
                        ((3 * pi / 4, pi / 4), (3 * pi / 4, -pi / 2, pi / 4, pi / 2, -pi / 2))]:
        assert W * sympy.Matrix(q_a) == sympy.Matrix(rbdl_q)  # exactly
    assert W * sympy.Matrix([-1, -2]) == sympy.Matrix([-1, -1, -2, 1, -1])  # RBDL's qd, lines 918-922

    pin, model, p, s = _rbdl_fourbar_in_pinocchio()
    data = model.createData()
    q = np.array([3 * np.pi / 4, -np.pi / 2, np.pi / 4, np.pi / 2, -np.pi / 2])
    qd = np.array([-1.0, -1, -2, 1, -1])
    tau = np.array([1.0, -2, 3, -5, 7])
    frame = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

    def loop_rows(qdd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(J, J qdd + Jdot qd) of the loop's rows: x and y of X_s less X_p, and the rotation about z."""
        pin.forwardKinematics(model, data, q, qd, qdd)
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        J = pin.getFrameJacobian(model, data, s, frame) - pin.getFrameJacobian(model, data, p, frame)
        acc = [pin.getFrameClassicalAcceleration(model, data, f, frame) for f in (s, p)]
        a = np.r_[acc[0].linear - acc[1].linear, acc[0].angular - acc[1].angular]
        return J[[0, 1, 5]], a[[0, 1, 5]]

    J, bias = loop_rows(np.zeros(5))
    closed = [data.oMf[f] for f in (p, s)]  # RBDL's REQUIRE, line 1194: the loop closes at q
    assert np.abs(closed[0].translation - closed[1].translation).max() < 1e-14
    assert np.abs(closed[0].rotation - closed[1].rotation).max() < 1e-14
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    h = pin.nonLinearEffects(model, data, q, qd)
    kkt = np.block([[M, J.T], [J, np.zeros((3, 3))]])
    rbdl_qdd = np.linalg.solve(kkt, np.r_[tau - h, -bias])[:5]
    W_ = np.array(W, dtype=float)
    qdd = rd.numeric.forward_dynamics(robot, q[[0, 2]], qd[[0, 2]], W_.T @ tau)
    np.testing.assert_allclose(W_ @ qdd, rbdl_qdd, rtol=0, atol=1e-12)
    assert np.abs(loop_rows(W_ @ qdd)[1]).max() < 1e-12  # X_p and X_s accelerate alike (RBDL's check)

"""Identification of floating robots (robodyn.identification.floating, base.py's floating branch): Y p equals the
floating inverse dynamics, Y's columns equal Pinocchio's computeJointTorqueRegressor (free-flyer root) once its
parameters are moved to robodyn's link frames, the base parameters' count equals the numerical rank and their
regressor reproduces tau, the least squares recovers them; bad input and the symbolic paths refuse in one line;
the guide's example runs as printed."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import sympy
from benchmarks.urdf_survey import robots_directory

import robodyn as rd
from robodyn import identification as ident
from robodyn import numeric
from robodyn.errors import ModelError
from robodyn.identification import base as base_module
from robodyn.identification import floating
from robodyn.numeric import floating as engine
from robodyn.recursions.parameters import move_matrix
from tests.formats.test_floating_model_file import HOPPER as MODEL_FILE_HOPPER

ROBOTS = robots_directory()
DOCS = Path(__file__).resolve().parents[2] / "docs" / "guide" / "floating.md"

#: Standard DH, revolute joints (the guide's hopper), with armature and damping on the hip.
HOPPER = MODEL_FILE_HOPPER.replace("inertia: [0.001, 0.01, 0.01]}", "inertia: [0.001, 0.01, 0.01], armature: 0.02, "
                                   "damping: 0.1}")
assert HOPPER != MODEL_FILE_HOPPER
#: Modified DH with a prismatic joint between two revolute ones.
SLIDER = """name: slider
floating: true
convention: modified
base: {mass: 3, com: [0.01, 0, 0.05], inertia: [0.05, 0.06, 0.04]}
gravity: [0, 0, -9.81]
links:
  - {name: hip, joint: R, a: 0.1, alpha: pi/2, d: 0, theta: 0, mass: 1, com: [0.05, 0.01, 0.02],
     inertia: [0.002, 0.01, 0.011], damping: 0.1, armature: 0.01}
  - {name: leg, joint: P, a: 0.2, alpha: -pi/2, d: 0, theta: 0, mass: 0.5, com: [0.01, 0.02, -0.1],
     inertia: [0.003, 0.005, 0.006], damping: 0.2}
  - {name: foot, joint: R, a: 0.05, alpha: pi/2, d: 0.1, theta: 0, mass: 0.2, com: [0.02, 0, 0.01],
     inertia: [0.001, 0.002, 0.0025]}
"""
#: Pinocchio's dynamic parameters (m, mc_x, mc_y, mc_z, Ixx, Ixy, Iyy, Ixz, Iyz, Izz) as robodyn's XX..M indices.
PINOCCHIO_ORDER = [9, 6, 7, 8, 0, 1, 3, 2, 4, 5]


def _urdf(name: str) -> rd.Manipulator:
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rd.load(str(ROBOTS / name), floating=True)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, rd.Manipulator]:
    folder = tmp_path_factory.mktemp("floating")
    out = {}
    for name, text in (("hopper", HOPPER), ("slider", SLIDER)):
        (folder / f"{name}.yaml").write_text(text)
        out[name] = rd.load(str(folder / f"{name}.yaml"))
    return out


@pytest.fixture(scope="module")
def solo() -> rd.Manipulator:
    return _urdf("solo_description/robots/solo.urdf")


@pytest.fixture(scope="module")
def solo12() -> rd.Manipulator:
    return _urdf("solo_description/robots/solo12.urdf")


def _states(robot: rd.Manipulator, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return floating.random_states(robot, np.random.default_rng(seed), count)


def _relative(x: np.ndarray, reference: np.ndarray) -> float:
    return float(np.abs(x - reference).max() / max(1.0, float(np.abs(reference).max())))


@pytest.mark.parametrize("name", ["hopper", "slider", "solo"])
def test_y_p_is_the_inverse_dynamics(name: str, files: dict[str, rd.Manipulator], request: pytest.FixtureRequest
                                     ) -> None:
    robot = files[name] if name in files else request.getfixturevalue(name)
    q, v, a = _states(robot, 8)
    Y = ident.numeric_regressor(robot, q, v, a)
    assert Y.shape == (8, robot.nv, 10 + 12 * robot.n)
    p = ident.numeric_values(robot)
    assert _relative(Y @ p, numeric.inverse_dynamics(robot, q, v, a)) < 1e-10
    assert np.array_equal(ident.numeric_regressor(robot, q[0], v[0], a[0]), Y[0])  # one state: (nv, columns)
    assert floating.floating_names(robot.n)[:11] == ("XX0", "XY0", "XZ0", "YY0", "YZ0", "ZZ0", "MX0", "MY0", "MZ0",
                                                     "M0", "XX1")
    # a link's columns touch only the base rows and the joints that carry it (the other rows are exact zeros)
    for j in range(robot.n):
        carried = {6 + i for i in robot.ancestors(j)}
        idle = [r for r in range(6, robot.nv) if r not in carried]
        assert not Y[:, idle, 10 + 12 * j: 20 + 12 * j].any()


def test_columns_against_pinocchio(solo: rd.Manipulator) -> None:
    """computeJointTorqueRegressor's columns of each body = robodyn's columns of the same body times the 10x10 map
    that moves parameters from Pinocchio's joint frame (axis x, y or z) to robodyn's link frame (axis z)."""
    pin = pytest.importorskip("pinocchio")
    assert ROBOTS is not None
    model = pin.buildModelFromUrdf(str(ROBOTS / "solo_description/robots/solo.urdf"), pin.JointModelFreeFlyer())
    data = model.createData()
    assert list(model.names[2:]) == list(solo.joint_names)
    q, v, a = _states(solo, 3, seed=5)
    Y = ident.numeric_regressor(solo, q, v, a)
    pin.forwardKinematics(model, data, q[0])
    world = engine._world(engine.floating_model(solo), q[:1])
    maps = [np.eye(10)[:, PINOCCHIO_ORDER]]  # the base body: the same frame (the free flyer's)
    for k in range(solo.n):
        R, o, X = world.R[0, k], world.o[0, k], data.oMi[2 + k]
        maps.append(move_matrix(R.T @ X.rotation, R.T @ (X.translation - o))[:, PINOCCHIO_ORDER])
    for s in range(3):
        reference = pin.computeJointTorqueRegressor(model, data, q[s], v[s], a[s])
        mapped = np.concatenate([Y[s][:, :10] @ maps[0]]
                                + [Y[s][:, 10 + 12 * k: 20 + 12 * k] @ maps[k + 1] for k in range(solo.n)], 1)
        assert _relative(mapped, reference) < 1e-12
        assert np.abs(Y[s][6:, 20::12] - a[s, 6:, None] * np.eye(solo.n)).max() == 0  # IA_j: qdd_j in row j


@pytest.mark.parametrize(("name", "count"), [("hopper", 28), ("slider", 34), ("solo", 82), ("solo12", 118)])
def test_base_parameters_have_the_rank(name: str, count: int, files: dict[str, rd.Manipulator],
                                       request: pytest.FixtureRequest) -> None:
    """10 for the base body, then 9 per revolute joint (7 inertial + IA + FV) and 6 per prismatic one (the general
    rules only: no particular case near a free base); the count is the numerical rank of Y over random states."""
    robot = files[name] if name in files else request.getfixturevalue(name)
    base = ident.base_parameters(robot)
    assert len(base) == count
    check = base.numerical_rank(samples=30)
    assert check.ok and check.rank == count, check
    assert all(re.fullmatch(r"[XYZM]+R?0", entry) for entry in base.names[:10])  # the base body's ten all remain
    q, v, a = _states(robot, 12, seed=2)
    tau = numeric.inverse_dynamics(robot, q, v, a)
    Yb = base.numeric_regressor(q, v, a)
    assert Yb.shape == (12, robot.nv, count)
    assert _relative(Yb @ base.numeric_values(), tau) < 1e-10
    # the least squares of the wrench and torques gives the base parameters back
    estimate = np.linalg.lstsq(Yb.reshape(-1, count), tau.reshape(-1), rcond=None)[0]
    assert np.allclose(estimate, base.numeric_values(), rtol=1e-7, atol=1e-9)


def test_base_parameters_of_the_slider_are_the_rules(files: dict[str, rd.Manipulator]) -> None:
    """The prismatic leg gives its tensor to the hip; the hip's YY, MZ and M go to the base body, moved by T_1."""
    base = ident.base_parameters(files["slider"])
    assert "MR2" in base.names and "XX2" not in base.names and "XXR2" not in base.names
    values = dict(zip(base.names, base.parameters, strict=True))
    M0, M1, M2, M3 = sympy.symbols("M0 M1 M2 M3")
    assert sympy.expand(values["MR0"] - (M0 + M1)) == 0
    assert sympy.expand(values["MR2"] - (M2 + M3)) == 0
    assert any("grouped into link 0 (the base body)" in rule for rule in base.rules)
    assert base.grouped.base is not None and len(base.grouped.links) == 3


def test_the_rank_step_alone_finds_the_same_count(files: dict[str, rd.Manipulator]) -> None:
    """Without the rules, the residual step (numerical rank, floating-point relations) regroups the slider's raw
    standard parameters down to the same 34, and the regrouped ones still give Y p."""
    robot, per = files["slider"], 12
    symbols = floating.floating_symbols(robot.n)
    acc = [list(symbols[:10])] + [list(symbols[10 + per * k: 20 + per * k]) for k in range(robot.n)]
    joint = [[sympy.Integer(0)] * 2] + [list(symbols[20 + per * k: 22 + per * k]) for k in range(robot.n)]
    rules: list[str] = []
    base_module._residual(robot, acc, joint, rules, False)
    entries = [x for row, extra in zip(acc, joint, strict=True) for x in [*row, *extra]]
    columns = base_module._floating_columns(robot.n, per)
    live = [e for e, x in enumerate(entries) if x != 0]
    assert len(live) == 34 and rules and all("floating point" in rule for rule in rules)
    values = dict(zip(symbols, ident.numeric_values(robot), strict=True))
    b = np.array([float(entries[e].xreplace(values)) for e in live])
    q, v, a = _states(robot, 5, seed=4)
    Y = ident.numeric_regressor(robot, q, v, a)
    assert _relative(Y[..., [columns[e] for e in live]] @ b, Y @ ident.numeric_values(robot)) < 1e-9


def test_a_drone_has_its_ten(tmp_path: Path) -> None:
    path = tmp_path / "drone.yaml"
    path.write_text("name: drone\nfloating: true\ngravity: [0, 0, -9.81]\n"
                    "base: {mass: 1.5, com: [0, 0, 0.01], inertia: [0.01, 0.01, 0.02]}\nlinks: []\n")
    drone = rd.load(str(path))
    base = ident.base_parameters(drone)
    assert base.names == floating.base_names() and base.numerical_rank(samples=10).ok


def test_bad_input_and_symbolic_paths_refuse_in_one_line(files: dict[str, rd.Manipulator]) -> None:
    hopper = files["hopper"]
    q, v, a = _states(hopper, 1)
    with pytest.raises(ModelError) as info:
        ident.numeric_regressor(hopper, q[0, :8], v[0], a[0])
    message = str(info.value)
    assert "\n" not in message and "q of a floating robot has 9 entries" in message and "(8,)" in message
    with pytest.raises(ModelError, match="v of a floating robot has 8 entries"):
        ident.numeric_regressor(hopper, q[0], v[0, :7], a[0])
    with pytest.raises(ModelError, match="quaternion"):
        ident.numeric_regressor(hopper, np.r_[q[0, :3], 2 * q[0, 3:7], q[0, 7:]], v[0], a[0])
    for call in (lambda: ident.regressor(hopper), lambda: ident.base_parameters(hopper).regressor):
        with pytest.raises(ModelError) as info:
            call()
        assert "\n" not in str(info.value)
        assert re.match(r"hopper: floating base: the symbolic .*numeric_regressor\(robot, q, v, a\)", str(info.value))


def test_a_spherical_joint_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "ball.yaml"
    path.write_text(SLIDER.replace("name: slider", "name: ball").replace("name: hip, joint: R", "name: hip, joint: S"))
    ball = rd.load(str(path))
    q = np.r_[0, 0, 0, 0, 0, 0, 1.0, 0, 0, 0, 1.0, 0.1, 0.2]
    for call in (lambda: ident.numeric_regressor(ball, q, np.zeros(ball.nv), np.zeros(ball.nv)),
                 lambda: ident.base_parameters(ball)):
        with pytest.raises(ModelError, match=r"^ball: link 'hip' has a spherical joint: not handled by "
                                             r"identification so far[^\n]*$"):
            call()


def test_the_guide_example_runs(tmp_path: Path) -> None:
    """docs/guide/floating.md's identification example, in a fresh interpreter, prints what it says."""
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## Identification"):]
    code = section[section.index("```python") + len("```python"): section.index("```", section.index("```python") + 9)]
    expected = [line.split("# ")[-1].split(":")[0].strip() for line in code.splitlines() if "print(" in line]
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected

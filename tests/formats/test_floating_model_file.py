"""A floating base in a model file (``floating: true`` and ``base``): read, written back, the same dynamics as the
URDF it came from; a drone with no link; one-line refusals."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.model.files import save
from tests.helpers import has_c_compiler

HOPPER = """name: hopper
floating: true
base: {mass: 3, com: [0, 0, 0.05], inertia: [0.05, 0.06, 0.04]}
gravity: [0, 0, -9.81]
links:
  - {name: hip, joint: R, a: 0.3, alpha: pi/2, d: 0, theta: 0, mass: 1, com: [-0.15, 0, 0],
     inertia: [0.001, 0.01, 0.01]}
  - {name: knee, joint: R, a: 0.3, alpha: 0, d: 0, theta: 0, mass: 0.5, com: [-0.15, 0, 0],
     inertia: [0.001, 0.005, 0.005]}
"""


def _state(robot: rd.Manipulator, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1, 1, robot.nq)
    q[3:7] /= np.linalg.norm(q[3:7])
    v, a = rng.uniform(-1, 1, (2, robot.nv))
    return q, v, a


def test_a_model_file_says_floating_and_carries_the_base(tmp_path: Path) -> None:
    path = tmp_path / "hopper.yaml"
    path.write_text(HOPPER)
    robot = rd.load(path)
    assert robot.floating and (robot.nq, robot.nv) == (9, 8)
    assert robot.base is not None and robot.base.mass == 3
    back = rd.load(save(robot, tmp_path / "back.yaml"))
    assert back == robot
    q, v, a = _state(robot, 1)
    tau = numeric.inverse_dynamics(robot, q, v, a)
    # the base alone, standing still and level: its rows hold up the whole robot's weight
    level = np.zeros(robot.nq)
    level[6] = 1.0
    rest = numeric.inverse_dynamics(robot, level, np.zeros(robot.nv), np.zeros(robot.nv))
    assert rest[2] == pytest.approx(4.5 * 9.81, rel=1e-14)
    assert np.allclose(numeric.inverse_dynamics(back, q, v, a), tau, rtol=0, atol=1e-14)


def test_a_drone_is_a_floating_base_with_no_link(tmp_path: Path) -> None:
    path = tmp_path / "drone.yaml"
    path.write_text("name: drone\nfloating: true\ngravity: [0, 0, -9.81]\n"
                    "base: {mass: 1.5, com: [0, 0, 0], inertia: [0.02, 0.02, 0.04]}\n")
    drone = rd.load(path)
    assert (drone.n, drone.nq, drone.nv) == (0, 7, 6)
    q, v, a = _state(drone, 2)
    tau = numeric.inverse_dynamics(drone, q, v, a)
    # Newton-Euler of one body about its centre of mass, in its own frame: f = m (a + w x v - R^T g), R of the
    # unit quaternion (x, y, z, w)
    x, y, z, s = q[3:7]
    R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - s * z), 2 * (x * z + s * y)],
                  [2 * (x * y + s * z), 1 - 2 * (x * x + z * z), 2 * (y * z - s * x)],
                  [2 * (x * z - s * y), 2 * (y * z + s * x), 1 - 2 * (x * x + y * y)]])
    w, J = v[3:], np.diag([0.02, 0.02, 0.04])
    assert np.allclose(tau[:3], 1.5 * (a[:3] + np.cross(w, v[:3]) - R.T @ [0, 0, -9.81]), rtol=0, atol=1e-13)
    assert np.allclose(tau[3:], J @ a[3:] + np.cross(w, J @ w), rtol=0, atol=1e-13)
    assert rd.load(save(drone, tmp_path / "back.json")) == drone
    # its programs too (a body alone: no joint, nv = 6), compiled C where there is a compiler, else NumPy
    dyn = rd.compile(drone, outputs=["tau", "M", "forward"], cache=tmp_path / "cache",
                     backend="c" if has_c_compiler() else "numpy")
    assert np.allclose(dyn.inverse_dynamics(q, v, a), tau, rtol=1e-14, atol=1e-13)
    assert np.allclose(dyn.mass_matrix(q), np.diag([1.5, 1.5, 1.5, 0.02, 0.02, 0.04]), rtol=0, atol=1e-15)
    assert np.allclose(dyn.forward_dynamics(q, v, tau), a, rtol=1e-13, atol=1e-13)


def test_solo12_written_as_a_model_file_is_the_urdf(tmp_path: Path) -> None:
    from benchmarks.urdf_survey import robots_directory

    directory = robots_directory()
    if directory is None:
        pytest.skip("example-robot-data is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        solo = rd.load(directory / "solo_description/robots/solo12.urdf", floating=True)
    back = rd.load(save(solo, tmp_path / "solo12.yaml"))
    assert back.floating and back.joint_names == solo.joint_names
    q, v, a = _state(solo, 3)
    assert np.allclose(numeric.inverse_dynamics(back, q, v, a), numeric.inverse_dynamics(solo, q, v, a),
                       rtol=0, atol=1e-12)


@pytest.mark.parametrize(("text", "words"), [
    ("name: x\nfloating: yes\nlinks: [{joint: R}]\n", ("field 'floating'", "True or False")),
    ("name: x\nbase: {mass: 1}\nlinks: [{joint: R}]\n", ("field 'base'", "floating")),
    ("name: x\nfloating: true\nbase: {mass: 1, colour: red}\n", ("base", "colour")),
    ("name: x\nlinks: []\n", ("links", "non-empty")),
])
def test_bad_floating_fields_are_one_line_with_exit_code_2(tmp_path: Path, text: str,
                                                           words: tuple[str, ...]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    result = subprocess.run([sys.executable, "-m", "robodyn", "show", str(path)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert str(path) in result.stderr and all(word in result.stderr for word in words), result.stderr


def test_load_floating_true_applies_to_urdf_and_mjcf_files(tmp_path: Path) -> None:
    path = tmp_path / "hopper.yaml"
    path.write_text(HOPPER)
    with pytest.raises(rd.ModelError, match=r"URDF and MJCF files.*says 'floating: true' itself"):
        rd.load(path, floating=True)
    pytest.importorskip("mujoco")
    arm = tmp_path / "arm.xml"
    arm.write_text('<mujoco><worldbody><body name="torso"><freejoint/><geom type="sphere" size="0.1" mass="1"/>'
                   '<body name="arm"><joint name="j"/><geom type="sphere" size="0.1" mass="1"/></body></body>'
                   '</worldbody></mujoco>')
    assert rd.load(arm, floating=True) == rd.load(arm) and rd.load(arm).floating  # the file's free joint


def test_the_floating_guide_example_runs_as_written(tmp_path: Path) -> None:
    """docs/guide/floating.md's example, in a fresh process that imports what a user would."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "floating.md").read_text(encoding="utf-8")
    code = text[text.index("```python") + len("```python"):]
    code = code[:code.index("```")]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[:5] == ["9 8", "[ 0.     0.    44.145]", "[0.0768 0.0238 1.0239]",
                                          "[2.25 0.   0.  ]", "True"], out.stdout

"""Programs and compiled C of a robot on a floating base (robodyn.program.floating; nq = n + 7, nv = n + 6): tau (the
base's wrench in its frame, then the joints'), M, and h, G, bias and forward built from the same recursions, against
Pinocchio's rnea, crba and aba with a ``JointModelFreeFlyer`` root at random states (random unit quaternions), on
solo12 (compiled C) and talos_reduced (the program evaluated); CompiledDynamics' shapes; the one-line refusals."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from benchmarks.urdf_survey import robots_directory

import robodyn as rd
from robodyn import program
from robodyn.errors import ModelError
from robodyn.model import joints

pin = pytest.importorskip("pinocchio")
ROBOTS = robots_directory()
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")

SOLO12 = "solo_description/robots/solo12.urdf"
TALOS = "talos_data/robots/talos_reduced.urdf"
TOLERANCE = 1e-9


class Case:
    """A floating robot, Pinocchio's model of the same URDF (free-flyer root) and a few random states."""

    def __init__(self, name: str, states: int) -> None:
        assert ROBOTS is not None
        self.path = ROBOTS / name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.robot = rd.load(str(self.path), floating=True, mimic="independent")
        self.model = pin.buildModelFromUrdf(str(self.path), pin.JointModelFreeFlyer())
        self.data = self.model.createData()
        rng = np.random.default_rng(len(name))
        n, nv = self.robot.n, self.robot.nv
        self.q = np.stack([np.concatenate([joints.random_configuration(rng), rng.uniform(-1, 1, n)])
                           for _ in range(states)])
        self.v, self.a, self.tau = (rng.uniform(-1, 1, (states, nv)) for _ in range(3))

    def pinocchio_q(self, q: np.ndarray) -> np.ndarray:
        """robodyn's q as Pinocchio's (a continuous joint: cos, sin)."""
        parts = [q[:7]]
        for k, joint in enumerate(self.model.joints[2:]):
            angle = q[7 + k]
            parts.append(np.array([np.cos(angle), np.sin(angle)]) if joint.nq == 2 else np.array([angle]))
        return np.concatenate(parts)

    def reference(self, s: int) -> dict[str, np.ndarray]:
        """Pinocchio's tau (robodyn's adds the joints' damping b qd and Coulomb friction f sign(qd)), M (full), h, G,
        bias and forward at state s."""
        model, data = self.model, self.data
        q, v, a = self.pinocchio_q(self.q[s]), self.v[s], self.a[s]
        damping = np.concatenate([np.zeros(6), model.damping[6:] * v[6:] + model.friction[6:] * np.sign(v[6:])])
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        G = pin.computeGeneralizedGravity(model, data, q)
        bias = pin.nonLinearEffects(model, data, q, v) + damping
        return {"tau": pin.rnea(model, data, q, v, a) + damping, "M": M, "G": G, "h": bias - G - damping,
                "bias": bias, "forward": pin.aba(model, data, q, v, self.tau[s] - damping)}


def _relative(x: np.ndarray, reference: np.ndarray) -> float:
    return float(np.abs(x - reference).max() / max(1.0, float(np.abs(reference).max())))


@pytest.fixture(scope="module")
def solo() -> Case:
    return Case(SOLO12, 3)


@pytest.fixture(scope="module")
def solo_compiled(solo: Case) -> Any:
    return rd.compile(solo.robot, outputs=["tau", "M"])


def test_compiled_c_against_pinocchio(solo: Case, solo_compiled: Any) -> None:
    dyn = solo_compiled
    assert (dyn.nq, dyn.n) == (19, 18) == (solo.robot.nq, solo.robot.nv)
    for s in range(len(solo.q)):
        ref = solo.reference(s)
        assert _relative(dyn.inverse_dynamics(solo.q[s], solo.v[s], solo.a[s]), ref["tau"]) < TOLERANCE
        assert _relative(dyn.mass_matrix(solo.q[s]), ref["M"]) < TOLERANCE
    tau = dyn.inverse_dynamics(solo.q, solo.v, solo.a)  # a batch, and a batch broadcast against one state
    assert tau.shape == (3, 18) and dyn.mass_matrix(solo.q).shape == (3, 18, 18)
    assert np.array_equal(tau[1], dyn.inverse_dynamics(solo.q[1], solo.v[1], solo.a[1]))
    assert np.array_equal(dyn.inverse_dynamics(solo.q, solo.v[0], solo.a[0])[2],
                          dyn.inverse_dynamics(solo.q[2], solo.v[0], solo.a[0]))


def test_compiled_shapes_are_checked(solo: Case, solo_compiled: Any) -> None:
    q, v = solo.q[0], solo.v[0]
    with pytest.raises(ValueError, match=r"^q of 'solo' must have shape \(19,\) or \(N, 19\) \(nq: base position, "
                                         r"unit quaternion \(x, y, z, w\), joints\), got \(18,\)$"):
        solo_compiled.mass_matrix(v)
    with pytest.raises(ValueError, match=r"^qd of 'solo' must have shape \(18,\) or \(N, 18\)"):
        solo_compiled.inverse_dynamics(q, q, v)


def test_every_part_against_pinocchio(solo: Case) -> None:
    """h, G, bias and forward (L D L^T over M and bias on the tree of the nv coordinates), the program evaluated."""
    prog = program.build(solo.robot, ("h", "G", "bias", "forward"))
    assert prog.route == "recursive (floating base)"
    assert [len(prog.inputs[k]) for k in ("q", "qd", "tau")] == [19, 18, 18]
    out = prog.evaluate(_values(prog, solo, 0))
    ref = solo.reference(0)
    for part in ("h", "G", "bias"):
        assert _relative(out[part], ref[part]) < TOLERANCE, part
    M = ref["M"]
    assert np.abs(M @ (out["forward"] - ref["forward"])).max() < TOLERANCE * max(1.0, np.abs(solo.tau[0]).max())


def _values(prog: Any, case: Case, s: int) -> dict[str, float]:
    arrays = {"q": case.q[s], "qd": case.v[s], "qdd": case.a[s], "tau": case.tau[s]}
    return {str(symbol): float(x) for key, xs in arrays.items() if key in prog.inputs
            for symbol, x in zip(prog.inputs[key], xs, strict=True)}


def test_talos_against_pinocchio() -> None:
    """A 38-dof humanoid (a branched tree, prismatic-free, regrouped parameters joining the base)."""
    talos = Case(TALOS, 1)
    prog = program.build(talos.robot, ("tau", "M"))
    out = prog.evaluate(_values(prog, talos, 0))
    ref = talos.reference(0)
    assert _relative(out["tau"], ref["tau"]) < TOLERANCE
    assert _relative(out["M"].reshape(38, 38), ref["M"]) < TOLERANCE


def test_gravity_is_the_quaternion_s_rotation(solo: Case) -> None:
    """The base's rows of G are the robot's weight in the base frame (R^T m g, and its moment): a quaternion and its
    negative give the same numbers; the base's position enters nothing."""
    prog = program.build(solo.robot, ("G",))
    values = _values(prog, solo, 0)
    flipped = dict(values, **{f"base_q{c}": -values[f"base_q{c}"] for c in "xyzw"})
    moved = dict(values, base_x=values["base_x"] + 3.0)
    G = prog.evaluate(values)["G"]
    assert np.allclose(prog.evaluate(flipped)["G"], G, rtol=0, atol=1e-12)
    assert np.array_equal(prog.evaluate(moved)["G"], G)
    R = joints.quaternion_matrix(solo.q[0, 3:7])
    mass = sum(float(link.mass) for link in solo.robot.links) + float(solo.robot.base.mass)
    assert np.allclose(G[:3], -R.T @ np.array([0, 0, -9.81]) * mass, rtol=1e-12)


def test_what_is_not_built_yet_refuses_in_one_line(solo: Case, tmp_path: Path) -> None:
    robot = solo.robot
    for outputs in (("elements",), ("jacobian:NO_FRAME",)):
        with pytest.raises((ModelError, ValueError)) as info:
            program.build(robot, outputs)
        assert "\n" not in str(info.value)
    with pytest.raises(ModelError, match=r"^solo: floating base: no route 'factored'"):
        program.build(robot, ("tau",), route="factored")
    with pytest.raises(ModelError, match=r"^solo: floating base: rd.compile builds it with backend='c', 'numpy' or "
                                         r"'jax' so far, not 'cuda' \(q of 19 entries, the rest 18\)$"):
        rd.compile(robot, outputs=["tau"], backend="cuda")
    # (the NumPy, JAX and CUDA code and rd.compile's NumPy and JAX backends: tests/codegen/test_floating_languages.py)

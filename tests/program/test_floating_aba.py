"""Forward dynamics of a robot on a floating base by the articulated-body algorithm with the base at the root
(robodyn.recursions.aba.floating_accelerations; Featherstone sec. 9.4), a candidate beside the L D L^T solve of M
(robodyn.program.floating): forced with route="aba", against Pinocchio's ``aba`` (``JointModelFreeFlyer`` root) on
a tree with a prismatic joint on the base, tilted axes, off-diagonal inertias and joint damping, on a body alone
(nv 6), and on Solo12; the cheaper kept by count (Talos: the articulated-body algorithm, its count in
docs/guide/floating.md's table; Solo12: L D L^T), both counts in ``program.candidates``."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn.model import joints
from robodyn.program import build
from tests.program.test_floating_analytic_derivatives import BODY, URDF
from tests.program.test_floating_programs import ROBOTS

pin = pytest.importorskip("pinocchio")


def _load(path: Path) -> tuple[rd.Manipulator, object]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)  # the URDF's own (meshes, limits)
        robot = rd.load(str(path), floating=True)
    return robot, pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())


def _check(robot: rd.Manipulator, model, route: str) -> rd.program.Program:
    """The program of ``forward`` by ``route`` against pinocchio.aba at 3 random states (Pinocchio's aba leaves out
    the joints' damping: robodyn's tau carries it, so Pinocchio is given tau - b qd)."""
    program = build(robot, ("forward",), route=route)
    data = model.createData()
    names = {k: [str(s) for s in program.inputs[k]] for k in ("q", "qd", "tau")}
    damping = np.concatenate([np.zeros(6), [float(link.damping) for link in robot.links]])
    rng = np.random.default_rng(31)
    for _ in range(3):
        q = np.concatenate([rng.uniform(-1, 1, 3), joints.random_configuration(rng, joint="S"),
                            rng.uniform(-1, 1, robot.nq - 7)])
        v, tau = rng.uniform(-1, 1, (2, robot.nv))
        values = {**dict(zip(names["q"], q, strict=True)), **dict(zip(names["qd"], v, strict=True)),
                  **dict(zip(names["tau"], tau, strict=True))}
        got = np.array(program.evaluate(values)["forward"])
        expected = pin.aba(model, data, q, v, tau - damping * v)
        assert np.abs(got - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max())
    return program


@pytest.mark.parametrize("text", [URDF, BODY], ids=["tree", "body"])
def test_the_articulated_body_algorithm_agrees_with_pinocchio(tmp_path: Path, text: str) -> None:
    path = tmp_path / "robot.urdf"
    path.write_text(text)
    robot, model = _load(path)
    program = _check(robot, model, "aba")
    assert program.route.endswith("forward: aba")
    assert _check(robot, model, "recursive").route == "recursive (floating base)"  # (L D L^T)


@pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
def test_the_cheaper_form_is_kept() -> None:
    """Solo12 keeps L D L^T, Talos takes the articulated-body algorithm (with docs/guide/floating.md's count), each
    with both counts in ``candidates``; Solo12's forced articulated-body program agrees with Pinocchio."""
    solo, model = _load(ROBOTS / "solo_description/robots/solo12.urdf")
    _check(solo, model, "aba")
    kept = _check(solo, model, "auto")
    costs = {name: count.multiplications + count.additions for name, (_, count) in kept.candidates.items()}
    assert kept.route == "recursive (floating base)" and costs["LDL^T"] <= costs["ABA"]
    talos, _ = _load(ROBOTS / "talos_data/robots/talos_reduced.urdf")
    kept = build(talos, ("forward",))
    costs = {name: count.multiplications + count.additions for name, (_, count) in kept.candidates.items()}
    assert kept.route.endswith("forward: aba") and costs["ABA"] < costs["LDL^T"]
    text = " ".join((Path(__file__).resolve().parents[2] / "docs" / "guide" / "floating.md").read_text().split())
    multiplications = kept.count()["evaluation"].multiplications
    assert f"| talos_reduced (38) | 1865 | 3292 | 1857 | 2777 | {multiplications} | 7377 |" in text, multiplications

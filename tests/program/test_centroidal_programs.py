"""Centroidal outputs of a floating-base robot (robodyn.program.centroidal): the centre of mass, its Jacobian, the
centroidal momentum matrix A_G and the centroidal bias dA_G/dt v, compiled C on solo12 and the program evaluated on
talos_reduced, against Pinocchio's centerOfMass, jacobianCenterOfMass, computeCentroidalMap and
computeCentroidalMapTimeVariation (then dAg @ v) with a ``JointModelFreeFlyer`` root, at random states with random
unit quaternions; the invariant A_G v = the centroidal momentum (computeCentroidalMomentum); a fixed robot refused
in one line."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import robodyn as rd
from robodyn import program
from tests.program.test_floating_programs import SOLO12, TALOS, TOLERANCE, Case, _relative, _values

pin = pytest.importorskip("pinocchio")

OUTPUTS = ("com", "com_jacobian", "centroidal_map", "centroidal_bias")


def reference(case: Case, s: int) -> dict[str, np.ndarray]:
    """Pinocchio's four outputs at state s, each on a fresh Data (Pinocchio 4.1's computeCentroidalMapTimeVariation
    reads what an earlier call on another state left in its Data)."""
    model, q, v = case.model, case.pinocchio_q(case.q[s]), case.v[s]
    return {"com": pin.centerOfMass(model, model.createData(), q),
            "com_jacobian": pin.jacobianCenterOfMass(model, model.createData(), q),
            "centroidal_map": pin.computeCentroidalMap(model, model.createData(), q),
            "centroidal_bias": pin.computeCentroidalMapTimeVariation(model, model.createData(), q, v) @ v,
            "momentum": pin.computeCentroidalMomentum(model, model.createData(), q, v).vector}


@pytest.fixture(scope="module")
def solo() -> Case:
    return Case(SOLO12, 3)


def test_compiled_c_against_pinocchio(solo: Case) -> None:
    dyn = rd.compile(solo.robot, outputs=list(OUTPUTS))
    nv = solo.robot.nv
    results: dict[str, Any] = {
        "com": dyn.center_of_mass(solo.q), "com_jacobian": dyn.center_of_mass_jacobian(solo.q),
        "centroidal_map": dyn.centroidal_map(solo.q), "centroidal_bias": dyn.centroidal_bias(solo.q, solo.v)}
    assert [results[name].shape for name in OUTPUTS] == [(3, 3), (3, 3, nv), (3, 6, nv), (3, 6)]
    for s in range(len(solo.q)):
        ref = reference(solo, s)
        for name in OUTPUTS:
            assert _relative(results[name][s], ref[name]) < TOLERANCE, name
        A_G = results["centroidal_map"][s]
        assert _relative(A_G @ solo.v[s], ref["momentum"]) < TOLERANCE
        mass = np.linalg.norm(A_G[:3, 0])  # (A_G[:3, :3] = m R)
        assert np.allclose(results["com_jacobian"][s], A_G[:3] / mass, rtol=0, atol=1e-14)  # (linear rows) / m
    assert np.array_equal(dyn.centroidal_map(solo.q[1]), results["centroidal_map"][1])


def test_talos_program_against_pinocchio() -> None:
    """A 38-dof humanoid (a branched tree), the program evaluated at one state."""
    talos = Case(TALOS, 1)
    prog = program.build(talos.robot, OUTPUTS)
    out = prog.evaluate(_values(prog, talos, 0))
    ref = reference(talos, 0)
    for name in OUTPUTS:
        assert _relative(out[name].reshape(ref[name].shape), ref[name]) < TOLERANCE, name


def test_a_fixed_robot_refuses_in_one_line(solo: Case) -> None:
    fixed = rd.load(str(solo.path), mimic="independent")
    with pytest.raises(ValueError, match=r"^solo: the centroidal outputs \(com, .*\) are built for a floating base "
                                         r"\(floating=True\) so far$"):
        program.build(fixed, ("com",))

"""The derivative outputs of a robot on a floating base in compiled C (robodyn.program.floating): dtau = (dtau/dq,
dtau/dqd) and dqdd = (dqdd/dq, dqdd/dqd, dqdd/dtau = M^-1), nv x nv, with respect to the tangent space (the base's
columns of d/dq along its body-frame exp6 directions), against Pinocchio's computeRNEADerivatives and
computeABADerivatives with a ``JointModelFreeFlyer`` root at random states (random unit quaternions), on Solo
(8 joints, nv 14: the four legs' trees on the base as Solo12's, at about half the C; solo12 and every other
free-flyer robot of example-robot-data: benchmarks/floating_compiled.py). The C is compiled at -O0 (the
compiler's own options after robodyn's -O3: a tenth of the compiler's time; -ffp-contract=off stays, the
numbers are the same program's)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import robodyn as rd
from tests.helpers import quick_compiler
from tests.program.test_floating_programs import ROBOTS, TOLERANCE, Case, _relative

pin = pytest.importorskip("pinocchio")
pytestmark = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")


@pytest.fixture(scope="module")
def solo() -> Case:
    return Case("solo_description/robots/solo.urdf", 2)


@pytest.fixture(scope="module")
def compiled(solo: Case, tmp_path_factory: pytest.TempPathFactory) -> Any:
    quick = quick_compiler(tmp_path_factory.mktemp("cc"))
    return rd.compile(solo.robot, outputs=["dtau", "dqdd"], compiler=quick)


def test_dtau_against_pinocchio(solo: Case, compiled: Any) -> None:
    model = solo.model
    data = model.createData()
    assert model.damping[6:].max() == 0  # (robodyn's dtau/dqd adds the damping on the joints' diagonal)
    for s in range(len(solo.q)):
        q, v, a = solo.pinocchio_q(solo.q[s]), solo.v[s], solo.a[s]
        dq, dv, _ = (np.array(x) for x in pin.computeRNEADerivatives(model, data, q, v, a))
        got = compiled.inverse_dynamics_derivatives(solo.q[s], v, a)
        assert got[0].shape == (14, 14)
        assert _relative(got[0], dq) < TOLERANCE
        assert _relative(got[1], dv) < TOLERANCE
        assert np.abs(got[0][:, :3]).max() == 0  # the base's position enters nothing


def test_dqdd_against_pinocchio(solo: Case, compiled: Any) -> None:
    model = solo.model
    data = model.createData()
    batch = compiled.forward_dynamics_derivatives(solo.q, solo.v, solo.tau)
    for s in range(len(solo.q)):
        q, v, tau = solo.pinocchio_q(solo.q[s]), solo.v[s], solo.tau[s]
        pin.computeABADerivatives(model, data, q, v, tau)
        M_inv = np.triu(data.Minv) + np.triu(data.Minv, 1).T
        for got, ref in zip((batch[k][s] for k in range(3)), (data.ddq_dq, data.ddq_dv, M_inv), strict=True):
            assert _relative(got, ref) < TOLERANCE

"""Physical invariants: M symmetric positive definite, dM/dt - 2C skew-symmetric, reference data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import symengine as se
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.algebra import canonical
from robodyn.analysis.check import NumericSampler, evaluate
from tests.conftest import load_quiet, random_robot

#: Copied verbatim from shared/reference/puma560_reference.json (Robotics Toolbox 1.5.0, agreeing
#: with Pinocchio 4.1.0 to 1e-14), so that the suite runs wherever the repository is cloned.
REFERENCE = Path(__file__).resolve().parent / "data" / "puma560_reference.json"


def skew_defect(eqs: rd.Equations) -> sympy.Matrix:
    """N + N^T with N = dM/dt - 2 C (C from the Christoffel symbols)."""
    s = eqs.symbols
    dM = sum((eqs.M.diff(s.q[k]) * s.qd[k] for k in range(eqs.n)), sympy.zeros(eqs.n, eqs.n))
    N = dM - 2 * eqs.coriolis_matrix()
    return N + N.T


@pytest.mark.parametrize("name", ["double_pendulum", "two_link_fu", "two_link_payload", "stanford_modified"])
def test_symmetric_and_skew_exactly(name):
    eqs = rd.derive(rd.load(name))
    q = eqs.symbols.q
    M = eqs.raw("M")  # as the formulation built it (eqs.M mirrors its upper triangle)
    assert all(canonical(M[i, j] - M[j, i], q) == 0 for i in range(eqs.n) for j in range(i))
    assert all(canonical(x, q) == 0 for x in skew_defect(eqs))
    # h is exactly C qd
    assert all(canonical(x, q) == 0 for x in eqs.coriolis_matrix() * sympy.Matrix(eqs.symbols.qd) - eqs.h)


def _numeric(eqs: rd.Equations, matrix: se.DenseMatrix, samples: int) -> np.ndarray:
    sampler = NumericSampler(eqs.robot, samples, seed=1)
    return evaluate(matrix, sampler.symbols(), sampler.points()).reshape(samples, matrix.rows, matrix.cols)


def _numeric_M_and_N(eqs: rd.Equations, samples: int = 20):
    return (
        _numeric(eqs, eqs.raw("M"), samples),
        _numeric(eqs, se.DenseMatrix(skew_defect(eqs).tolist()), samples),
    )


@pytest.mark.parametrize("name", ["puma560", "stanford_arm", "industrial_6r"])
def test_numeric_arms_positive_definite_and_skew(name):
    eqs = rd.derive(load_quiet(name))
    Ms, Ns = _numeric_M_and_N(eqs)
    for M, N in zip(Ms, Ns, strict=True):
        assert np.allclose(M, M.T, rtol=0, atol=1e-12 * np.max(np.abs(M)))
        assert np.min(np.linalg.eigvalsh(M)) > 0
        assert np.max(np.abs(N)) < 1e-10 * max(1.0, np.max(np.abs(M)))
    # h = C(q, qd) qd with C from the Christoffel symbols of M: ties h to M (the skew test alone does not)
    Cqd = se.DenseMatrix((eqs.coriolis_matrix() * sympy.Matrix(eqs.symbols.qd)).tolist())
    sampler = NumericSampler(eqs.robot, 10, seed=2)
    h = evaluate(eqs.raw("h"), sampler.symbols(), sampler.points())
    assert np.max(np.abs(evaluate(Cqd, sampler.symbols(), sampler.points()) - h)) < 1e-10 * np.max(np.abs(h))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 6), convention=st.sampled_from(["standard", "modified"]))
def test_random_arms_positive_definite(seed, n, convention):
    eqs = rd.derive(random_robot(seed, n, convention))
    for M in _numeric(eqs, eqs.raw("M"), samples=5):
        assert np.min(np.linalg.eigvalsh((M + M.T) / 2)) > 0


def test_puma560_against_the_toolbox_reference():
    """shared/reference/puma560_reference.json: RTB 1.5.0, checked there against Pinocchio."""
    ref = json.loads(REFERENCE.read_text())
    robot = load_quiet("puma560")
    eqs = rd.derive(robot)
    symbols = [se.Symbol(f"{p}{i}") for p in ("q", "qd", "qdd") for i in range(1, 7)]
    points = np.array([s["q"] + s["qd"] + s["qdd"] for s in ref["states"]])
    got = {part: evaluate(eqs.raw(part), symbols, points) for part in ("tau", "M", "h", "G")}
    for k, state in enumerate(ref["states"]):
        for part, key in (("tau", "tau"), ("M", "M"), ("h", "Cqd"), ("G", "g")):
            expected = np.ravel(state[key])
            scale = max(np.max(np.abs(expected)), 1e-3)
            assert np.max(np.abs(got[part][k] - expected)) / scale < 1e-10, (k, part)
    assert ref["gravity"] == [float(x) for x in robot.gravity]


def test_rtb_gravity_torques_at_named_configurations():
    """The Toolbox's own unit test values (shared/reference/README.md), to their 4 decimals."""
    eqs = rd.derive(load_quiet("puma560"))
    q = eqs.symbols.q
    for config, expected in (
        ([0, np.pi / 4, np.pi, 0, np.pi / 4, 0], [0, 31.6399, 6.0351, 0, 0.0283, 0]),
        ([0.0] * 6, [0, 37.4837, 0.2489, 0, 0, 0]),
    ):
        G = np.array(eqs.G.subs(dict(zip(q, config, strict=True))).evalf(), dtype=float).ravel()
        assert np.allclose(G, expected, atol=6e-5)

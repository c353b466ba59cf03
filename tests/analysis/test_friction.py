"""Coulomb friction and external wrenches: the model's ``coulomb`` = [Tc+, Tc-] in every method, engine and language,
``fext`` per call, and the built-in ``puma560_rtb`` against the Robotics Toolbox's own Puma 560 unit tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import sympy

import robodyn as rd
from robodyn import identification as ident
from robodyn import numeric, program
from robodyn.analysis import toolbox as tb
from robodyn.analysis.simulation import SimulationError
from robodyn.numeric.kinematics import external_torques
from tests.conftest import load_quiet, random_params, random_robot

pytestmark = pytest.mark.filterwarnings("ignore::robodyn.ModelWarning")  # the consensus PUMA tensors (see puma560)

# -- the Robotics Toolbox for Python's own unit tests of its Puma560 (tests/test_DHRobot.py: test_gravload,
# test_inertia, test_rne, test_accel, test_coriolis, test_itorque), typed from the file; at qn, to 4 decimals
QN = np.array([0, np.pi / 4, np.pi, 0, np.pi / 4, 0])
Z, ONE = np.zeros(6), np.ones(6)
RNE = [  # (qd, qdd, gravity, fext, tau)
    (Z, Z, None, None, [-0.0000, 31.6399, 6.0351, 0.0000, 0.0283, 0]),
    (Z, ONE, None, None, [3.35311, 36.0025, 7.42596, 0.190043, 0.203441, 0.194133]),
    (ONE, ONE, None, None, [32.4952, 60.867, 17.7436, 1.45452, 1.29911, 0.713781]),
    (ONE, Z, None, None, [29.1421, 56.5044, 16.3528, 1.26448, 1.12392, 0.519648]),
    (ONE, ONE, [0, 0, 0], None, [32.4952, 29.2271, 11.7085, 1.45452, 1.27086, 0.713781]),
    (Z, Z, None, [1, 2, 3, 1, 2, 3], [0.642756, 29.0866, 4.70321, 2.82843, -1.97175, 3]),
]
INERTIA = [[3.6594, -0.4044, 0.1006, -0.0025, 0.0000, -0.0000],
           [-0.4044, 4.4137, 0.3509, 0.0000, 0.0024, 0.0000],
           [0.1006, 0.3509, 0.9378, 0.0000, 0.0015, 0.0000],
           [-0.0025, 0.0000, 0.0000, 0.1925, 0.0000, 0.0000],
           [0.0000, 0.0024, 0.0015, 0.0000, 0.1713, 0.0000],
           [-0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.1941]]
CORIOLIS = [[-0.1735, -2.0494, -0.1178, -0.0002, -0.0045, 0.0001],
            [0.6274, 1.1572, 1.9287, -0.0015, -0.0003, -0.0000],
            [-0.3608, -0.7734, -0.0018, -0.0009, -0.0064, -0.0000],
            [0.0011, 0.0005, -0.0001, 0.0002, 0.0002, -0.0001],
            [-0.0002, 0.0028, 0.0046, -0.0002, -0.0000, -0.0000],
            [0.0001, 0.0000, 0.0000, 0.0000, 0.0000, 0]]


def test_puma560_rtb_passes_the_toolboxs_own_puma_tests() -> None:
    puma = load_quiet("puma560_rtb")
    close = np.testing.assert_array_almost_equal
    close(tb.gravload(puma, QN), RNE[0][-1], decimal=4)
    for qd, qdd, gravity, fext, tau in RNE:
        close(tb.rne(puma, QN, qd, qdd, gravity=gravity, fext=fext), tau, decimal=4)
    close(tb.rne(puma, np.stack([QN, QN]), np.stack([Z, ONE]), np.stack([Z, ONE])), [RNE[0][-1], RNE[2][-1]], decimal=4)
    close(tb.inertia(puma, QN), INERTIA, decimal=4)
    close(tb.accel(puma, QN, [0.1, 0.2, 0.8, 0.2, 0.5, 1.0], [1.0, 3.2, 1.8, 0.1, 0.7, 4.6]),
          [-7.4102, -9.8432, -10.9694, -4.4314, -0.9881, 21.0228], decimal=4)
    close(tb.coriolis(puma, QN, [1, 2, 3, 1, 2, 3]), CORIOLIS, decimal=4)
    close(tb.itorque(puma, QN, [1, 2, 3, 1, 2, 3]), [3.1500, 9.4805, 3.6189, 0.1901, 0.3519, 0.5823], decimal=4)


def test_puma560_rtb_is_the_toolboxs_full_model_at_random_states() -> None:
    """tau and M of RTB 1.5.0 with its motor inertia and friction (tests/data/puma560_reference.json), to 1e-9;
    the built-in is the rigid-body puma560 plus its joint terms."""
    puma = load_quiet("puma560_rtb")
    reference = json.loads((Path(__file__).parents[1] / "data" / "puma560_reference.json").read_text())
    for state in reference["states"]:
        q, qd, qdd = (np.array(state[k]) for k in ("q", "qd", "qdd"))
        full = state["variant_full_model_with_friction_and_Jm"]
        assert np.allclose(numeric.inverse_dynamics(puma, q, qd, qdd), full["tau"], rtol=1e-9, atol=1e-9)
        assert np.allclose(numeric.mass_matrix(puma, q), full["M"], rtol=1e-10, atol=1e-12)
        assert np.allclose(numeric.friction(puma, qd), -np.array(full["friction_tau"]), rtol=1e-12, atol=1e-12)
    rigid = tb.nofriction(puma, viscous=True).replace(links=tuple(
        link.replace(armature=0) for link in puma.links))
    q = np.array(reference["states"][0]["q"])
    assert np.array_equal(numeric.mass_matrix(rigid, q), numeric.mass_matrix(load_quiet("puma560"), q))


def _with_coulomb(robot: rd.Manipulator, pairs: list) -> rd.Manipulator:
    return robot.replace(links=tuple(link.replace(coulomb=c) for link, c in zip(robot.links, pairs, strict=True)))


def test_every_method_gives_the_same_coulomb_friction_exactly() -> None:
    """Symbolic Tc+, Tc- on a symbolic arm: the five methods' damping and tau agree exactly, and damping is
    b qd + odd sign(qd) + even sign(qd)^2."""
    robot = _with_coulomb(load_quiet("two_link_payload"), [["cp1", "cm1"], "c2"])
    reference = rd.derive(robot, "newton_euler")
    qd1, qd2 = sympy.symbols("qd1 qd2")
    cp1, cm1, c2 = sympy.symbols("cp1 cm1 c2")
    b = [link.damping for link in robot.links]
    expected = sympy.Matrix([b[0] * qd1 + (cp1 - cm1) / 2 * sympy.sign(qd1) + (cp1 + cm1) / 2 * sympy.sign(qd1) ** 2,
                             b[1] * qd2 + c2 * sympy.sign(qd2)])
    assert sympy.expand(reference.damping - expected) == sympy.zeros(2, 1)
    for method in ("lagrange_euler", "dalembert", "kane", "emdeg"):
        eqs = rd.derive(robot, method)
        for part in ("damping", "tau"):
            assert sympy.expand(getattr(eqs, part) - getattr(reference, part)) == sympy.zeros(2, 1), (method, part)


def test_coulomb_friction_in_the_engines_and_generated_code_at_rest_and_moving() -> None:
    """numeric (batch and one state), the program in NumPy and CasADi, and the C, with joints at rest (qd = 0
    exactly: no friction), moving forwards and backwards; forward dynamics inverts it."""
    puma = load_quiet("puma560_rtb")
    rng = np.random.default_rng(3)
    q, qdd = rng.uniform(-2, 2, (8, 6)), rng.uniform(-2, 2, (8, 6))
    qd = rng.choice([-1.5, 0.0, 0.7], (8, 6))
    tau = numeric.inverse_dynamics(puma, q, qd, qdd)
    rigid = numeric.inverse_dynamics(tb.nofriction(puma), q, qd, qdd)
    lo, hi = (np.array([link.coulomb[k] for link in puma.links], dtype=float) for k in (1, 0))
    assert np.allclose(tau - rigid, np.where(qd > 0, hi, np.where(qd < 0, lo, 0.0)), rtol=1e-12, atol=1e-12)
    assert np.allclose(numeric.inverse_dynamics(puma, q[0], qd[0], qdd[0]), tau[0], rtol=1e-13, atol=1e-12)
    assert np.allclose(numeric.forward_dynamics(puma, q, qd, tau), qdd, rtol=1e-9, atol=1e-9)
    dyn = rd.compile(puma, backend="numpy")
    assert np.allclose(dyn.inverse_dynamics(q, qd, qdd), tau, rtol=1e-12, atol=1e-11)
    assert np.allclose(dyn.forward_dynamics(q, qd, tau), qdd, rtol=1e-9, atol=1e-9)
    casadi = pytest.importorskip("casadi")
    f = rd.to_casadi(puma, ("tau",))
    assert isinstance(f, casadi.Function)
    assert np.allclose(np.array(f(q[1], qd[1], qdd[1])).ravel(), tau[1], rtol=1e-12, atol=1e-11)
    built = program.build(puma, ("tau",))
    assert sum(1 for a in built.body if "sign" in str(a.expr)) == 6  # one sign per joint, shared


def test_the_derivatives_see_no_coulomb_slope() -> None:
    """Away from qd = 0 Coulomb friction is constant: dtau/dq and dtau/dqd are those without it; dqdd/dq is the
    central difference of the forward dynamics with it."""
    puma = load_quiet("puma560_rtb")
    plain = tb.nofriction(puma)
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.uniform(-1, 1, (3, 6)), rng.choice([-1.0, 1.0], (3, 6)), rng.uniform(-1, 1, (3, 6))
    with_, without = rd.compile(puma, backend="numpy", outputs=["dtau", "dqdd"]), rd.compile(
        plain, backend="numpy", outputs=["dtau"])
    assert np.allclose(with_.inverse_dynamics_derivatives(q, qd, qdd), without.inverse_dynamics_derivatives(q, qd, qdd),
                       rtol=1e-12, atol=1e-10)
    tau = numeric.inverse_dynamics(puma, q, qd, qdd)
    dqdd_dq = with_.forward_dynamics_derivatives(q, qd, tau)[0]
    h = 1e-6
    for j in range(6):
        e = np.zeros(6)
        e[j] = h
        ahead, behind = (numeric.forward_dynamics(puma, q + s * e, qd, tau) for s in (1, -1))
        slope = (ahead - behind) / (2 * h)
        assert np.allclose(dqdd_dq[:, :, j], slope, rtol=1e-5, atol=1e-5)


def test_coulomb_values_are_checked_and_kept_in_files(tmp_path: Path) -> None:
    for bad, words in ((["-1", "0"], "Tc+ = -1 is negative"), (["1", "0.5"], "Tc- = 0.5 is positive"),
                       (["1", "2", "3"], "2 values")):
        path = tmp_path / "bad.yaml"
        path.write_text(f"name: bad\nlinks:\n  - {{joint: R, a: 1, mass: 1, coulomb: [{', '.join(bad)}]}}\n")
        with pytest.raises(rd.ModelError, match="link 1: field 'coulomb") as info:
            rd.load(path)
        assert words in str(info.value) and "\n" not in str(info.value)
    puma = load_quiet("puma560_rtb")
    again = rd.load(puma.save(tmp_path / "puma560_rtb.yaml"))
    assert [link.coulomb for link in again.links] == [link.coulomb for link in puma.links]
    assert rd.Link(coulomb=0.5).coulomb == (sympy.Float(0.5), -sympy.Float(0.5))


def test_identification_takes_symmetric_coulomb_friction_only() -> None:
    """The FC column holds Tc+ = -Tc- = FC: the regressor times the standard values is tau; asymmetric friction,
    or friction without the column, is refused in one line."""
    robot = random_robot(2, 3, "standard").replace(tip_force=[0, 0, 0], tip_moment=[0, 0, 0])  # (no parameter)
    robot = _with_coulomb(robot, [0.4, 0.0, 1.5])
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.uniform(-2, 2, (4, 3)), rng.uniform(-2, 2, (4, 3)), rng.uniform(-2, 2, (4, 3))
    Y = ident.numeric_regressor(robot, q, qd, qdd, coulomb=True)
    p = ident.numeric_values(robot, coulomb=True)
    assert np.allclose(np.einsum("nij,j->ni", Y, p), numeric.inverse_dynamics(robot, q, qd, qdd), rtol=1e-10,
                       atol=1e-10)
    with pytest.raises(rd.ModelError, match="link 1: field 'coulomb': the link has Coulomb friction"):
        ident.numeric_values(robot)
    with pytest.raises(rd.ModelError, match="symmetric Coulomb friction only"):
        ident.base_parameters(load_quiet("puma560_rtb"), coulomb=True)


@pytest.mark.parametrize("convention", ["standard", "modified"])
def test_fext_is_the_tip_load_of_that_link(convention: str) -> None:
    """fext on link k (the last, an index, a name) gives the torques of a tip load on the arm cut after link k."""
    robot = random_robot(4, 5, convention)
    params = random_params(robot, np.random.default_rng(1))
    rng = np.random.default_rng(7)
    q, w = rng.uniform(-2, 2, (6, 5)), rng.uniform(-3, 3, (6, 6))
    for k in (4, 2):
        cut = robot.replace(links=robot.links[: k + 1], tip_force=[0, 0, 0], tip_moment=[0, 0, 0])
        for row in range(2):
            loaded = cut.replace(tip_force=w[row, :3].tolist(), tip_moment=w[row, 3:].tolist())
            expected = numeric.tip_load(loaded, q[row, : k + 1], params=params)
            got = external_torques(robot, q[row], w[row], link=k, params=params)
            assert np.allclose(got[: k + 1], expected, rtol=1e-10, atol=1e-12) and not np.any(got[k + 1 :])
    tau = numeric.inverse_dynamics(robot, q, 0 * q, 0 * q, params=params, fext=w)
    assert np.allclose(tau - numeric.inverse_dynamics(robot, q, 0 * q, 0 * q, params=params),
                       external_torques(robot, q, w, params=params), rtol=1e-12, atol=1e-12)
    qdd = numeric.forward_dynamics(robot, q, q, tau, params=params, fext=w, fext_link=-1)
    assert np.allclose(qdd, numeric.forward_dynamics(robot, q, q, tau - external_torques(robot, q, w, params=params),
                                                     params=params), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="link must be a name or an index"):
        external_torques(robot, q, w, link=5, params=params)
    with pytest.raises(ValueError, match=r"fext must have shape \(6,\)"):
        numeric.inverse_dynamics(robot, q, q, q, params=params, fext=[1, 2, 3])


def test_a_stuck_simulation_with_coulomb_friction_says_so() -> None:
    robot = _with_coulomb(load_quiet("double_pendulum"), [2.0, 2.0])
    params = {"m1": 1, "m2": 1, "L1": 1, "L2": 1, "g": 9.81}
    with pytest.raises(SimulationError, match="Coulomb friction jumps") as info:
        rd.simulate(robot, 2.0, [0.0, 0.0], [0.01, -0.01], params=params, engine="numpy", max_evaluations=3000)
    assert "nofriction" in str(info.value)
    result = rd.simulate(tb.nofriction(robot), 0.2, [0.0, 0.0], [0.01, -0.01], params=params, engine="numpy")
    assert np.all(np.isfinite(result.q))


def test_generated_code_takes_a_wrench_per_call_through_a_symbolic_tip_load() -> None:
    """A symbolic tip load makes the wrench parameters of the generated routines: each call's value is fext."""
    puma = load_quiet("puma560_rtb")
    names = ["fx", "fy", "fz", "mx", "my", "mz"]
    dyn = rd.compile(puma.replace(tip_force=names[:3], tip_moment=names[3:]), backend="numpy", outputs=["tau"])
    rng = np.random.default_rng(11)
    q, qd, qdd = rng.uniform(-1, 1, (3, 6))
    for w in ([1, 2, 3, 1, 2, 3], [-4, 0, 2, 0.5, -1, 0]):
        got = dyn.inverse_dynamics(q, qd, qdd, params=dict(zip(names, w, strict=True)))
        assert np.allclose(got, numeric.inverse_dynamics(puma, q, qd, qdd, fext=w), rtol=1e-12, atol=1e-12)

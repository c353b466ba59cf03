"""Coupled coordinates (mimic joints, gears: robodyn.model.couplings) through the closed-chain cross-checks of
tests/analysis/test_closed_chains.py, for the Panda read with its mimic finger and a model file with a gear pair
(tests/data/gear_train.yaml). Pinocchio 4.1 has no coupling constraint (its aba refuses mimic joints), so the
constrained dynamics of the tree is written here: Pinocchio's model of the robot's tree (couplings taken off,
robodyn.formats.pinocchio.to_pinocchio), its crba and nonLinearEffects, and the coupling rows K q_tree = c (one per
coupled joint, K G = 0) in the KKT system [M K^T; K 0] [qdd; lambda] = [tau_tree - h; -Kdot qd = 0]. The Panda is
compared with Pinocchio's own mimic model as well (buildModelFromUrdf(path, mimic=True): its crba and rnea)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.analysis import toolbox
from tests.helpers import has_c_compiler

pin = pytest.importorskip("pinocchio")

GEARS = Path(__file__).parents[1] / "data" / "gear_train.yaml"
PANDA = "panda_description/urdf/panda.urdf"


def _panda_path() -> Path:
    from benchmarks.urdf_survey import robots_directory

    robots = robots_directory()
    if robots is None:
        pytest.skip("example-robot-data is not installed")
    return robots / PANDA


@dataclass
class Case:
    """A coupled robot (no friction: Pinocchio's dynamics has none) and its tree in Pinocchio: Pinocchio's q[k] is
    the tree's q[order[k]]; q_tree = G q + c; K, one row e_j - sum r_l e_l per coupled joint j."""

    robot: rd.Manipulator
    path: Path | None
    model: Any
    data: Any
    order: np.ndarray
    G: np.ndarray
    c: np.ndarray
    K: np.ndarray

    @classmethod
    def of(cls, robot: rd.Manipulator, path: Path | None = None) -> Case:
        from robodyn.formats.pinocchio import to_pinocchio

        robot = toolbox.nofriction(robot, viscous=True)
        tree = robot.replace(couplings=())
        model = to_pinocchio(tree)
        G, c = robot.coupling_map()
        K = np.zeros((len(robot.couplings), robot.n))
        for row, coupling in enumerate(robot.couplings):  # from the couplings, not from G
            K[row, int(coupling.joint)] = 1.0
            for leader, ratio in coupling.leaders:
                K[row, int(leader)] -= float(ratio)
        return cls(robot, path, model, model.createData(), np.array(tree.depth_first()), np.array(G, dtype=float),
                   np.array(c, dtype=float).ravel(), K)

    def tree(self, x: np.ndarray, offset: bool = False) -> np.ndarray:
        """A vector of the robot's coordinates as the tree's, in Pinocchio's order."""
        return (self.G @ x + (self.c if offset else 0))[self.order]

    def robodyn_order(self, x: np.ndarray) -> np.ndarray:
        out = np.empty(self.robot.n)
        out[self.order] = x
        return out

    def actuation(self, tau: np.ndarray) -> np.ndarray:
        """tau on the independent joints, zero on the coupled ones (robodyn's order)."""
        out = np.zeros(self.robot.n)
        out[list(self.robot.independent)] = tau
        return out

    def states(self, count: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q, qd, x = np.random.default_rng(seed).uniform(-0.6, 0.6, (3, count, self.robot.nv))
        for k, j in enumerate(self.robot.independent):  # a prismatic joint (the Panda's finger): small, in range
            if not self.robot.links[j].revolute:
                q[:, k], qd[:, k] = 0.02, 0.01 * qd[:, k]
        return q, qd, x


def _panda() -> Case:
    path = _panda_path()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        return Case.of(rd.load(path), path)


CASES = {"panda": _panda, "gear_train": lambda: Case.of(rd.load(GEARS))}


@pytest.fixture(scope="module", params=list(CASES))
def case(request: pytest.FixtureRequest) -> Case:
    return CASES[request.param]()


def _symmetric(M: np.ndarray) -> np.ndarray:
    return np.triu(M) + np.triu(M, 1).T


def _mimic(case: Case) -> Any:
    """Pinocchio's mimic model of the Panda's URDF (tau, M and bias of a state, in robodyn's order of
    independent joints: tests/formats/test_urdf_mimic.py), or None for a model file."""
    if case.path is None:
        return None
    from tests.formats.test_urdf_mimic import Reference

    return Reference(case.robot, case.path, mimic=True)


def test_the_robots_are_coupled(case: Case) -> None:
    robot = case.robot
    assert robot.nv == robot.n - 1 and len(robot.couplings) == 1
    assert np.abs(case.K @ case.G).max() == 0  # the coupling rows annihilate the map
    if case.path is None:  # the gear pair: q_elbow = -3/2 q_shoulder + 1/5
        (coupling,) = robot.couplings
        assert (float(coupling.ratio), float(coupling.offset)) == (-1.5, 0.2)


def test_forward_dynamics_is_the_constrained_tree(case: Case) -> None:
    """robodyn's qdd, mapped to the tree (G qdd), solves the tree's KKT system with the coupling rows; the Panda's
    also equals Pinocchio's mimic model, M_mimic^-1 (tau - bias_mimic)."""
    robot, model, data = case.robot, case.model, case.data
    q, qd, x = case.states(3, 2)
    tau = 20 * x
    qdd = numeric.forward_dynamics(robot, q, qd, tau)
    rows = len(case.K)
    K = case.K[:, case.order]  # in Pinocchio's order
    mimic = _mimic(case)
    for k in range(len(q)):
        q_tree, qd_tree = case.tree(q[k], offset=True), case.tree(qd[k])
        M = _symmetric(pin.crba(model, data, q_tree))
        h = pin.nonLinearEffects(model, data, q_tree, qd_tree)
        kkt = np.block([[M, K.T], [K, np.zeros((rows, rows))]])
        solution = np.linalg.solve(kkt, np.r_[case.actuation(tau[k])[case.order] - h, np.zeros(rows)])
        scale = max(1.0, float(np.abs(qdd[k]).max()))
        assert np.abs(case.robodyn_order(solution[:robot.n]) - case.G @ qdd[k]).max() < 1e-9 * scale
        if mimic is not None:
            _, M_mimic, bias = mimic(q[k], qd[k], np.zeros(robot.nv))
            assert np.abs(np.linalg.solve(M_mimic, tau[k] - bias) - qdd[k]).max() < 1e-9 * scale


def test_inverse_dynamics_is_the_tree_projected(case: Case) -> None:
    """tau_tree (Pinocchio's rnea on the tree at the consistent state) = the actuation + K^T lambda: the coupling
    forces do no virtual work (G^T K^T = 0), so G^T tau_tree = tau; the forward round trip; and the Panda's tau is
    the rnea of Pinocchio's mimic model."""
    robot, model, data = case.robot, case.model, case.data
    q, qd, qdd = case.states(3, 3)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    np.testing.assert_allclose(numeric.forward_dynamics(robot, q, qd, tau), qdd, rtol=1e-10, atol=1e-10)
    mimic = _mimic(case)
    for k in range(len(q)):
        tree_tau = case.robodyn_order(pin.rnea(model, data, case.tree(q[k], offset=True), case.tree(qd[k]),
                                               case.tree(qdd[k])))
        scale = max(1.0, float(np.abs(tree_tau).max()))
        assert np.abs(case.G.T @ tree_tau - tau[k]).max() < 1e-10 * scale
        coupling_forces = tree_tau - case.actuation(tau[k])
        multipliers = np.linalg.lstsq(case.K.T, coupling_forces, rcond=None)[0]
        assert np.abs(case.K.T @ multipliers - coupling_forces).max() < 1e-10 * scale  # in the range of K^T
        if mimic is not None:
            assert np.abs(mimic(q[k], qd[k], qdd[k])[0] - tau[k]).max() < 1e-10 * scale


def test_a_free_swing_conserves_pinocchios_energy(case: Case) -> None:
    """Zero torque, no damping, 10 s: the energy of the tree (Pinocchio's, at the states robodyn integrates), by
    the compiled program where there is a compiler (the numeric engine, checked above and below, takes five times
    as long)."""
    robot, model, data = case.robot, case.model, case.data
    engine = "compiled" if has_c_compiler() else "numpy"
    q0, qd0, _ = case.states(1, 4)
    res = rd.simulate(robot, 10.0, q0[0], qd0[0], method="DOP853", rtol=1e-13, atol=1e-13, samples=51,
                      engine=engine)
    energy = []
    for q, qd in zip(res.q, res.qd, strict=True):
        q_tree = case.tree(q, offset=True)
        energy.append(pin.computeKineticEnergy(model, data, q_tree, case.tree(qd))
                      + pin.computePotentialEnergy(model, data, q_tree))
    energy_ = np.array(energy)
    scale = float(np.abs(energy_).max())
    assert np.abs(res.energy - res.energy[0] - (energy_ - energy_[0])).max() < 1e-9 * scale  # the same energy
    assert np.abs(energy_ - energy_[0]).max() < 1e-8 * scale  # conserved


@pytest.mark.skipif(not has_c_compiler(), reason="no C compiler")
def test_the_compiled_program_is_the_numeric_engine(case: Case) -> None:
    robot = case.robot
    compiled = rd.compile(robot, outputs=("tau", "M", "forward"))
    q, qd, qdd = case.states(4, 5)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    scale = max(1.0, float(np.abs(tau).max()))
    np.testing.assert_allclose(compiled.inverse_dynamics(q, qd, qdd), tau, rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(compiled.mass_matrix(q), numeric.mass_matrix(robot, q), rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(compiled.forward_dynamics(q, qd, tau), qdd, rtol=0, atol=1e-9)

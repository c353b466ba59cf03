"""dID/dq and dID/dqd in Carpentier and Mansard's analytic form (robodyn.recursions.rnea_derivatives, issue 33):
equal to forward mode's to rounding on chains, mixed revolute/prismatic arms with damping, a tip load and a
tree, chosen by count (never more than forward mode), and the generated programs against Pinocchio's
computeRNEADerivatives and computeABADerivatives."""

from __future__ import annotations

import numpy as np
import pytest
from benchmarks.urdf_survey import robots_directory

import robodyn as rd
from robodyn.numeric.kane import NumpyOps
from robodyn.program.builder import Builder
from robodyn.program.routes import ANALYTIC_VARIANTS, Context, _derivative_outputs, derivative_outputs, program_cost
from robodyn.recursions import newton_euler
from robodyn.recursions.arm import arm_data
from robodyn.recursions.forward_mode import DualOps, constant, jacobian, seeded
from robodyn.recursions.rnea_derivatives import id_jacobians
from tests.conftest import load_quiet, random_robot
from tests.program.test_mass_matrix_route import general_chain


def _arms() -> list[rd.Manipulator]:
    loaded = random_robot(3, 5, "modified", extras=True).replace(tip_force=(1.5, -2.0, 0.7),
                                                                 tip_moment=(0.3, 0.2, -1.1))
    arms = [general_chain(0, 7), loaded, random_robot(4, 6, "standard")]
    directory = robots_directory()
    if directory is not None:
        with pytest.warns(rd.ModelWarning):
            arms.append(rd.load(directory / "panda_description" / "urdf" / "panda.urdf", mimic="independent"))
    return arms


@pytest.mark.parametrize("seed", [0, 1])
def test_analytic_jacobians_equal_forward_mode(seed: int) -> None:
    """The analytic dtau/dq, dtau/dqd against the Newton-Euler recursion on duals, both on floats, at random
    states."""
    rng = np.random.default_rng(seed)
    for robot in _arms():
        arm = arm_data(robot)
        q, qd, qdd = (list(rng.uniform(-2, 2, arm.n)) for _ in range(3))
        tau = newton_euler.inverse_dynamics(arm, DualOps(NumpyOps()), seeded(q, "q"), seeded(qd, "qd"), constant(qdd))
        got = id_jacobians(arm, NumpyOps(), q, qd, qdd, ("q", "qd"))
        for d in ("q", "qd"):
            reference = np.array(jacobian(tau, d, arm.n), dtype=float)
            error = np.max(np.abs(np.array(got[d], dtype=float) - reference))
            assert error < 1e-12 * max(1.0, float(np.max(np.abs(reference)))), f"{robot.name} d{d}"


def _costs(robot: rd.Manipulator, names: tuple[str, ...]) -> list[tuple[int, int]]:
    """The counts of the derivative programs ``names`` by each candidate of derivative_outputs, then as chosen,
    each in its own builder."""
    out = []
    for variant in (*ANALYTIC_VARIANTS, None):
        ctx = Context(robot)
        ops = Builder(ctx.params)
        ldlt = None  # no forward-dynamics derivative asked
        if variant is None:
            outputs = derivative_outputs(ctx, ops, names, ldlt)  # type: ignore[arg-type]
        else:
            outputs = _derivative_outputs(ctx, ops, names, ldlt, variant, None, None, None)  # type: ignore[arg-type]
        out.append(program_cost(ctx.program(ops, outputs)))
    return out


@pytest.mark.parametrize("robot", [general_chain(0, 7), load_quiet("puma560")])
def test_chosen_by_count(robot: rd.Manipulator) -> None:
    """The chosen dtau program costs no more than any candidate; on a 7-joint chain of general geometry the
    analytic form is chosen: 3,073 multiplications where forward mode takes 4,810 (12 joints: 6,403 and 15,213; 20
    joints: benchmarks/pinocchio_sx.py --derivatives)."""
    *candidates, chosen = _costs(robot, ("dtau_dq", "dtau_dqd"))
    assert chosen == min(candidates)
    if robot.n == 7:
        assert chosen == candidates[-1] and chosen < candidates[0]


pin = pytest.importorskip("pinocchio")


def test_long_chain_matches_pinocchio() -> None:
    """A 7-joint chain of general geometry (the analytic ID derivatives chosen, test_chosen_by_count): the compiled
    derivatives against Pinocchio's computeRNEADerivatives and computeABADerivatives."""
    from robodyn.formats.pinocchio import to_pinocchio

    robot = general_chain(0, 7)
    dyn = rd.compile(robot, outputs=("dtau", "dqdd"), backend="numpy")
    model = to_pinocchio(robot)
    data = model.createData()
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, qd, qdd, tau = (rng.uniform(-2, 2, robot.n) for _ in range(4))
        d_q, d_qd = dyn.inverse_dynamics_derivatives(q, qd, qdd)
        f_q, f_qd, _ = dyn.forward_dynamics_derivatives(q, qd, tau)
        p_q, p_qd, _ = (np.array(x) for x in pin.computeRNEADerivatives(model, data, q, qd, qdd))
        a_q, a_qd, _ = (np.array(x) for x in pin.computeABADerivatives(model, data, q, qd, tau))
        for got, ref in ((d_q, p_q), (d_qd, p_qd), (f_q, a_q), (f_qd, a_qd)):
            assert np.max(np.abs(np.asarray(got) - ref)) < 1e-9 * max(1.0, float(np.max(np.abs(ref))))

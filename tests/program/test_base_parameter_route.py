"""The inverse dynamics in base parameters (issue 33, item 3): Khalil and Kleinfinger's customised Newton-Euler run
on the grouped parameters of :mod:`robodyn.identification` (the base parameters as symbols in the places of the
parameters whose columns they carry, 0 elsewhere), on the Staubli RX-90 of Khalil and Dombre's table (every inertial
parameter a symbol; the arm of SYMORO+'s published 160/113) and on the PUMA 560.

What is checked: tau from the base parameters is tau from the full parameter set (Pinocchio's RNEA, with the
robot's standard parameters drawn at random); the recursion is customised (no run-time operation on a zero, on a
one or on parameters alone: those fold or go to the constants block); every base parameter is used; and the counts
do not exceed today's (257m + 238a for the RX-90, 269m + 250a for the PUMA; ``python benchmarks/opcount.py
--base-breakdown`` prints where they go: 123 of the multiplications are a base parameter times a wrench component).
"""

from __future__ import annotations

import numpy as np
import pytest
import symengine as se
from benchmarks.opcount import rx90

from robodyn.identification import base_parameters
from robodyn.program import build
from tests.conftest import load_quiet, random_params

pin = pytest.importorskip("pinocchio")

from robodyn.formats.pinocchio import to_pinocchio  # noqa: E402  (after the skip)

#: (multiplications, additions) of tau in base parameters today: not to be exceeded.
COUNTS = {"rx90": (257, 238), "puma560": (269, 250)}


def _arm(name: str):
    return rx90() if name == "rx90" else load_quiet(name)


def _base_program(name: str):
    robot = _arm(name)
    b = base_parameters(robot)
    return robot, b, build(robot, ("tau",), base=b)


@pytest.mark.parametrize("name", ["rx90", "puma560"])
def test_tau_in_base_parameters_is_tau_of_the_full_parameter_set(name):
    """Y_b(q, qd, qdd) b(p) = tau(q, qd, qdd; p) for random standard parameters p (geometry symbols, gravity,
    armature and damping included) at random states, against Pinocchio's RNEA on the same robot."""
    robot, b, program = _base_program(name)
    names = [str(s) for s in program.inputs["parameters"]]
    rng = np.random.default_rng(33)
    for _ in range(3):
        params = random_params(robot, rng)
        values = dict(zip(b.names, b.numeric_values(params), strict=True))
        values.update({k: v for k, v in params.items() if k in names[len(b):]})  # D3, RL4, g
        model = to_pinocchio(robot, params)
        data = model.createData()
        n = robot.n
        q, qd, qdd = (rng.uniform(-2, 2, n) for _ in range(3))
        for label, x in (("q", q), ("qd", qd), ("qdd", qdd)):
            values.update({f"{label}{i + 1}": float(x[i]) for i in range(n)})
        got = program.evaluate(values)["tau"]
        ref = pin.rnea(model, data, q, qd, qdd) + model.damping * qd  # RNEA has the armature, not the damping
        assert np.max(np.abs(got - ref)) <= 1e-12 * np.max(np.abs(ref)), name


def _nodes(expr):
    yield expr
    for x in expr.args:
        yield from _nodes(x)


@pytest.mark.parametrize("name", ["rx90", "puma560"])
def test_the_recursion_is_customised(name):
    """No run-time statement operates on an exact 0 or 1 or on parameters alone (those fold as the recursion runs, or
    go to the constants block), every base parameter is an input that the program uses, and the counts do not exceed
    today's."""
    _, b, program = _base_program(name)
    known = {se.Symbol(s) for s in map(str, program.inputs["parameters"])} | {se.Symbol(a.name)
                                                                               for a in program.constants}
    for a in program.body:
        assert not a.expr.free_symbols <= known, f"{a}: parameters alone at run time"
        for node in _nodes(a.expr):
            if isinstance(node, se.Mul):
                assert not any(x.is_Number and float(x) in (0.0, 1.0) for x in node.args), a
            if isinstance(node, se.Add):
                assert not any(x.is_Number and float(x) == 0.0 for x in node.args), a
    assert not program.unused_parameters()
    assert [str(s) for s in program.inputs["parameters"][: len(b)]] == list(b.names)
    c = program.count()["evaluation"]
    assert c.multiplications <= COUNTS[name][0] and c.additions <= COUNTS[name][1]

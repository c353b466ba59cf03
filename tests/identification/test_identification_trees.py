"""Identification on kinematic trees: the regressor tau = Y p (+ the tip load) over the parent array, and
Khalil and Kleinfinger's base parameters of tree structures, against the numeric engine, Pinocchio (built from the
DH rows and the parent array by to_pinocchio) and the numerical rank of the stacked regressor."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import symengine as se
import sympy

import robodyn as rd
from robodyn import identification as ident
from robodyn import numeric
from robodyn.algebra import canonical
from robodyn.formats.pinocchio import to_pinocchio
from robodyn.identification.regressor import symbolic_regressor
from robodyn.symbols import joint_symbols
from tests.conftest import random_tree
from tests.identification.test_identification import special_arm

TREE = Path(__file__).parents[1] / "data" / "torso_two_arms.yaml"
G = {"g": 9.81}
#: (seed, joints) of the random trees; both conventions each.
RANDOM = [(0, 4), (1, 5), (2, 6), (3, 7), (6, 6), (11, 7)]


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1.0))


def _states(n: int, N: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (N, n)), rng.uniform(-2, 2, (N, n)), rng.uniform(-3, 3, (N, n))


def _tree() -> rd.Manipulator:
    return rd.load(TREE)


def _loaded_tree() -> rd.Manipulator:
    """The test tree with a tip load on its last link (the right wrist)."""
    return _tree().replace(tip_force=[3, -1, 2], tip_moment=["1/2", 1, "-1/4"])


def _robots() -> list[tuple[rd.Manipulator, dict]]:
    out = [(_loaded_tree(), G)]
    out += [(random_tree(seed, n, convention), {}) for seed, n in RANDOM for convention in ("standard", "modified")]
    return out


def _ids(robots: list[tuple[rd.Manipulator, dict]]) -> list[str]:
    return [f"{robot.name}-{robot.convention}" for robot, _ in robots]


ROBOTS = _robots()


def _pinocchio_tau(robot: rd.Manipulator, params: dict, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """tau from pinocchio.rnea with the damping added (Pinocchio applies the armature, not the damping) and the tip
    load, which Pinocchio leaves out, from the Jacobian of the last link (J^T of the wrench it exerts)."""
    pin = pytest.importorskip("pinocchio")
    model = to_pinocchio(robot, params)
    data = model.createData()
    order = list(robot.depth_first())  # Pinocchio's joint k is the robot's link order[k]
    damping = np.array(model.damping)
    out = np.empty_like(q)
    for k in range(len(q)):
        x, xd, xdd = q[k, order], qd[k, order], qdd[k, order]
        out[k, order] = pin.rnea(model, data, x, xd, xdd) + damping * xd
    return out + numeric.tip_load(robot, q, params=params)


# -- the regressor ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("robot", "params"), ROBOTS, ids=_ids(ROBOTS))
def test_numeric_regressor_gives_the_inverse_dynamics_of_trees(robot: rd.Manipulator, params: dict) -> None:
    """Y p + load = robodyn's numeric inverse dynamics and Pinocchio's rnea (damping and tip load added)."""
    assert robot.is_tree
    q, qd, qdd = _states(robot.n, 12, robot.n)
    Y = ident.numeric_regressor(robot, q, qd, qdd, params=params, coulomb=True)
    p = ident.numeric_values(robot, params, coulomb=True)
    load = numeric.tip_load(robot, q, params=params)
    assert Y.shape == (12, robot.n, 13 * robot.n) and np.any(load != 0)
    tau = Y @ p + load
    assert _rel(tau, numeric.inverse_dynamics(robot, q, qd, qdd, params=params)) < 1e-10
    assert _rel(tau, _pinocchio_tau(robot, params, q, qd, qdd)) < 1e-10


def test_the_symbolic_regressor_of_the_test_tree_is_the_numeric_one_and_the_load_moves_one_branch() -> None:
    """The exact regressor (g symbolic) evaluated equals numeric_regressor; the tip load on the right wrist gives
    exactly zero torque on the torso-free left arm, and its torques equal numeric.tip_load."""
    robot = _loaded_tree()
    reg = ident.regressor(robot)
    assert reg.Y.shape == (7, 84) and reg.Y.free_symbols - set(joint_symbols(7).all()) == {sympy.Symbol("g")}
    assert all(reg.load[i] == 0 for i in (1, 2, 3)) and all(reg.load[i] != 0 for i in (0, 4, 5, 6))
    # a link's columns act only on the joints between it and the base: link 4 (left slide) never on the right arm
    assert all(reg.Y[i, 12 * 3 + c] == 0 for i in (4, 5, 6) for c in range(10))
    js = joint_symbols(7)
    f = se.Lambdify([se.Symbol(s.name) for s in (*js.all(), sympy.Symbol("g"))],
                    se.DenseMatrix(reg.Y.tolist()).row_join(se.DenseMatrix(reg.load.tolist())))
    q, qd, qdd = _states(7, 4, 3)
    Yn = ident.numeric_regressor(robot, q, qd, qdd, params=G)
    load = numeric.tip_load(robot, q, params=G)
    for k in range(4):
        A = np.asarray(f([*q[k], *qd[k], *qdd[k], G["g"]]), dtype=float).reshape(7, -1)
        assert _rel(A[:, :-1], Yn[k]) < 1e-12
        assert _rel(A[:, -1], load[k]) < 1e-12


@pytest.mark.parametrize(("seed", "n", "convention"), [(1, 5, "standard"), (2, 6, "modified")])
def test_symbolic_and_numeric_regressors_agree_on_random_trees(seed: int, n: int, convention: str) -> None:
    robot = random_tree(seed, n, convention)
    Y = symbolic_regressor(robot, coulomb=True, tidy=False)
    js = joint_symbols(n)
    f = se.Lambdify([se.Symbol(s.name) for s in js.all()], Y)
    q, qd, qdd = _states(n, 3, seed)
    Yn = ident.numeric_regressor(robot, q, qd, qdd, coulomb=True)
    for k in range(3):
        A = np.asarray(f([*q[k], *qd[k], *qdd[k]]), dtype=float).reshape(n, -1)
        assert _rel(A, Yn[k]) < 1e-12


# -- base parameters -----------------------------------------------------------------------------------------


def _assert_base_model(robot: rd.Manipulator, params: dict, b: ident.BaseParameters, *,
                       rules_only: bool = True) -> None:
    """The count equals the numerical rank; tau = Y_base p_base (+ load) at fresh states. ``rules_only``: the
    closed-form rules found every relation (none was left to the numeric-rank step)."""
    if rules_only:
        assert not [rule for rule in b.rules if "special geometry" in rule], b.rules
    check = b.numerical_rank(params=params)
    assert check.ok, (robot.name, len(b), check.rank, check.base_rank, check.residual)
    assert check.rank == len(b) < check.columns
    q, qd, qdd = _states(robot.n, 10, 7)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd, params=params) - numeric.tip_load(robot, q, params=params)
    Yb = b.numeric_regressor(q, qd, qdd, params=params)
    assert _rel(Yb @ b.numeric_values(params), tau) < 1e-10


def test_base_parameters_of_the_test_tree() -> None:
    """51 of the 84 standard parameters. Each arm has its own r2 (its shoulder, perpendicular to the torso axis):
    IA2 and IA5 go into ZZ2 and ZZ5; the torso (r1 of both arms, vertical, gravity along it) keeps ZZR1 only.
    The prismatic left slide's tensor goes into the left elbow, not into the right arm."""
    robot = _tree()
    b = ident.base_parameters(robot)
    assert len(b) == 51
    assert b.names[:2] == ("ZZR1", "FV1")
    assert "IA2" not in b.names and "IA5" not in b.names and {"ZZR2", "ZZR5", "IA3", "IA6", "IA7"} <= set(b.names)
    zz1, zz2, zz5, zz3 = (b.parameters[b.names.index(x)] for x in ("ZZR1", "ZZR2", "ZZR5", "ZZR3"))
    IA1, IA2, IA5, M3, M6, ZZ2, YY4, ZZ3 = sympy.symbols("IA1 IA2 IA5 M3 M6 ZZ2 YY4 ZZ3")
    assert zz2 == IA2 + ZZ2 + sympy.Rational(9, 100) * M3  # YY3, MZ3, M3 moved by T_3 = Trans(x, 3/10)
    assert zz3 == ZZ3 + YY4 and zz5.has(IA5, M6) and not zz5.has(M3) and zz1.has(IA1)
    # a rule applied to one branch touches no parameter of the other
    left = {sympy.Symbol(f"{x}{j}") for x in ("XX", "YY", "ZZ", "MZ", "M") for j in (2, 3, 4)}
    for name, expr in zip(b.names, b.parameters, strict=True):
        if name.endswith(("5", "6", "7")):
            assert not expr.free_symbols & left, name
    _assert_base_model(robot, G, b)


def test_grouped_links_of_the_test_tree_give_the_same_tau_exactly() -> None:
    """Newton-Euler with the grouped ten-vectors equals Y p exactly (canonical form; g and all parameters symbolic),
    and Y_base p_base = Y p exactly."""
    robot = _tree()
    b = ident.base_parameters(robot)
    reg = ident.regressor(robot)
    q = joint_symbols(robot.n).q
    Yp = se.DenseMatrix(reg.Y.tolist()) * se.DenseMatrix(list(reg.symbols))
    tau = b.grouped.tau(use_values=False)
    Yb = se.DenseMatrix(b.regressor.tolist()) * se.DenseMatrix(b.parameters.tolist())
    for i in range(robot.n):
        assert canonical(se.sympify(tau[i]) - Yp[i, 0], q) == 0, i
        assert canonical(Yb[i, 0] - Yp[i, 0], q) == 0, i


@pytest.mark.parametrize(("robot", "params"), ROBOTS[1:], ids=_ids(ROBOTS[1:]))
def test_base_parameters_equal_the_numerical_rank_on_random_trees(robot: rd.Manipulator, params: dict) -> None:
    _assert_base_model(robot, params, ident.base_parameters(robot))


VERTICAL = [0, 0, -9.81]


@pytest.mark.parametrize(
    ("rows", "parents", "gravity", "rules_only"),
    [
        # two SCARAs on one base: parallel vertical axes, each branch its own r1 and no r2
        ([("R", "0", 0, 0), ("R", "0", 0.4, 0), ("P", "0", 0.3, 0), ("R", "0", 0, 0), ("R", "0", 0.2, 0),
          ("R", "0", 0.3, 0)], [-1, 0, 1, 2, -1, 4], VERTICAL, True),
        # a torso whose arms start with shoulders parallel to it: r2 further out on each branch
        ([("R", "0", 0, 0.5), ("R", "0", 0.3, 0.1), ("R", "pi/2", 0.3, 0), ("R", "0", 0.3, 0.1),
          ("R", "-pi/2", 0.2, 0)], [-1, 0, 1, 0, 3], VERTICAL, True),
        # a vertical slide carrying two arms (links before r1 only translate)
        ([("P", "0", 0, 0), ("R", "0", 0.2, 0), ("R", "pi/2", 0.3, 0), ("R", "0", 0.1, 0), ("R", "-pi/2", 0, 0.2)],
         [-1, 0, 1, 0, 3], VERTICAL, True),
        # a Cartesian base with a prismatic branch: masses regrouped with armatures along each path
        ([("P", "0", 0, 0), ("P", "-pi/2", 0, 0, "pi/2"), ("P", "-pi/2", 0, 0), ("P", "-pi/2", 0, 0.1, "pi/2"),
          ("R", "0", 0.2, 0)], [-1, 0, 1, 0, 3], VERTICAL, True),
        # slides along the first axis in both branches, gravity across it (relations left to the rank step)
        ([("R", "0", 0, 0), ("P", "0", 0, 0.2), ("R", "0", 0, 0), ("P", "pi", 0, 0.3), ("R", "pi/2", 0.1, 0)],
         [-1, 0, 1, 0, 3], [0, -9.81, 0], False),
        # no gravity (relations left to the rank step, as on a chain)
        ([("R", "-pi/2", 0.7, 0.1), ("R", "pi/2", 0, 0.1), ("R", "pi/2", 0.3, 0.1), ("P", "0", 0.1, 0)],
         [-1, 0, 0, 2], [0, 0, 0], False),
    ],
    ids=["two-scaras", "parallel-shoulders", "vertical-slide", "cartesian-base", "coaxial-slides", "no-gravity"],
)
def test_special_trees_match_the_numerical_rank(rows: list, parents: list, gravity: list, rules_only: bool) -> None:
    for convention in ("modified", "standard"):
        robot = special_arm(rows, gravity, convention, parents)
        _assert_base_model(robot, {}, ident.base_parameters(robot), rules_only=rules_only)


def test_cartesian_base_regroups_masses_along_each_path() -> None:
    """Joint 1 vertical; joints 2 and 4 (siblings on link 1) horizontal: M2 and M4 go into M1 and their own IA,
    each along its own path; link 3 (horizontal, perpendicular to both 1 and 2) into M2 and IA3."""
    robot = special_arm([("P", "0", 0, 0), ("P", "-pi/2", 0, 0, "pi/2"), ("P", "-pi/2", 0, 0),
                      ("P", "-pi/2", 0, 0, "pi/2"), ("P", "-pi/2", 0, 0)], VERTICAL, "modified", [-1, 0, 1, 0, 3])
    b = ident.base_parameters(robot)
    M1, M2, M3, M4, M5, IA2, IA3, IA4, IA5 = sympy.symbols("M1 M2 M3 M4 M5 IA2 IA3 IA4 IA5")
    assert b.names == ("MR1", "IA1", "FV1", "IAR2", "FV2", "IAR3", "FV3", "IAR4", "FV4", "IAR5", "FV5")
    values = dict(zip(b.names, b.parameters, strict=True))
    assert values["MR1"] == M1 + M2 + M3 + M4 + M5
    assert values["IAR2"] == IA2 + M2 + M3 and values["IAR3"] == IA3 + M3
    assert values["IAR4"] == IA4 + M4 + M5 and values["IAR5"] == IA5 + M5
    _assert_base_model(robot, {}, b)

"""Every symbolic formulation, the equation forms and the symbolic kinematics on kinematic trees.

The test tree (tests/data/torso_two_arms.yaml: a torso and two 3-joint arms, exact rationals, gravity g):
every formulation agrees exactly with Newton-Euler, M is block-sparse (no entry couples the two arms), and
all of them agree with Pinocchio (rnea, crba) on the model that :func:`robodyn.formats.pinocchio.to_pinocchio` builds
from the DH data alone. Random trees of float geometry agree with Pinocchio too.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import symengine as se
import sympy
import yaml
from typer.testing import CliRunner

import robodyn as rd
from robodyn.algebra import canonical, to_se
from robodyn.analysis.check import evaluate, not_applicable
from robodyn.cli import app
from robodyn.errors import DerivationError
from robodyn.formats.model_file import manipulator_from_dict
from robodyn.formulations import emdeg, kinematics
from robodyn.symbols import joint_symbols
from tests.conftest import random_robot
from tests.conftest import random_tree as shared_random_tree

pin = pytest.importorskip("pinocchio")
from robodyn.formats.pinocchio import to_pinocchio  # noqa: E402  (after the skip)

TREE = Path(__file__).parents[1] / "data" / "torso_two_arms.yaml"
PARTS = ("tau", "M", "h", "G", "load")
#: The methods that derive trees with fixed placements (Kane's HD notation cannot express them).
PLACED = ("lagrange-euler", "dalembert", "emdeg")
G = 9.81


@pytest.fixture(scope="module")
def tree() -> rd.Manipulator:
    return rd.load(TREE)


@pytest.fixture(scope="module")
def derived(tree: rd.Manipulator) -> dict[str, rd.Equations]:
    return {method: rd.derive(tree, method) for method in ("newton-euler", *PLACED)}


def unplaced_tree() -> rd.Manipulator:
    """The test tree without its shoulder placements (both arms start at the torso's origin), with a
    rational tip load: a tree that Kane's algorithm can express, exact like the original."""
    data = yaml.safe_load(TREE.read_text())
    for link in data["links"]:
        link.pop("placement", None)
    data["name"] = "unplaced"
    return manipulator_from_dict(data).replace(tip_force=["1/2", -1, 2], tip_moment=["1/3", 0, "-1/4"])


def assert_exactly_equal(a: se.DenseMatrix, b: se.DenseMatrix, n: int, what: str) -> None:
    q = joint_symbols(n).q
    bad = [(i, j) for i in range(a.rows) for j in range(a.cols) if canonical(a[i, j] - b[i, j], q) != 0]
    assert not bad, f"{what}: entries {bad} differ"


# -- (a) exact agreement with Newton-Euler -----------------------------------------------------------
@pytest.mark.parametrize("method", PLACED)
def test_every_formulation_agrees_exactly_with_newton_euler(derived, method):
    ne, other = derived["newton-euler"], derived[method]
    for part in PARTS:
        assert_exactly_equal(ne.raw(part), other.raw(part), ne.n, f"{method} {part}")


@pytest.mark.parametrize("method", ("lagrange-euler", "dalembert", "kane", "emdeg"))
def test_kane_too_agrees_exactly_on_a_tree_without_placements(method):
    robot = unplaced_tree()
    ne, other = rd.derive(robot, "newton-euler"), rd.derive(robot, method)
    assert any(canonical(x, ne.symbols.q) != 0 for x in ne.raw("load"))  # the tip load is really there
    for part in PARTS:
        assert_exactly_equal(ne.raw(part), other.raw(part), ne.n, f"{method} {part}")


# -- (b) M is block-sparse ---------------------------------------------------------------------------
def related(robot: rd.Manipulator, i: int, k: int) -> bool:
    return i in robot.ancestors(k) or k in robot.ancestors(i)


def test_mass_matrix_is_block_sparse(tree, derived):
    n = tree.n
    M = derived["newton-euler"].canonical("M")
    unrelated = [(i, k) for i in range(n) for k in range(n) if not related(tree, i, k)]
    assert len(unrelated) == 2 * 3 * 3  # left arm x right arm, both ways
    assert all(M[i, k] == 0 for i, k in unrelated)
    symbols = [se.Symbol(f"q{i + 1}") for i in range(n)] + [se.Symbol("g")]
    values = evaluate(M, symbols, np.random.default_rng(3).uniform(-np.pi, np.pi, (1, n + 1)))[0].reshape(n, n)
    for i in range(n):
        for k in range(n):
            assert (abs(values[i, k]) > 1e-9) == related(tree, i, k), (i, k, values[i, k])


# -- (c) and (d): Pinocchio --------------------------------------------------------------------------
def states(robot: rd.Manipulator, count: int, seed: int) -> tuple[list[se.Symbol], np.ndarray]:
    """Symbols q, qd, qdd (and the robot's parameters) and ``count`` random rows of values (g = 9.81)."""
    n = robot.n
    names = [f"{kind}{i}" for kind in ("q", "qd", "qdd") for i in range(1, n + 1)]
    params = [s.name for s in robot.parameters()]
    assert set(params) <= {"g"}
    rng = np.random.default_rng(seed)
    rows = np.hstack([rng.uniform(-np.pi, np.pi, (count, n)), rng.uniform(-2, 2, (count, n)),
                      rng.uniform(-5, 5, (count, n)), np.full((count, len(params)), G)])
    return [se.Symbol(x) for x in names + params], rows


def pinocchio_errors(eqs: rd.Equations, count: int = 4, seed: int = 0) -> tuple[float, float]:
    """Largest relative differences of tau (less damping and tip load, which Pinocchio leaves out) and of
    M's upper triangle against pinocchio.rnea and pinocchio.crba (in Pinocchio's depth-first joint order)."""
    robot, n = eqs.robot, eqs.n
    model = to_pinocchio(robot, {"g": G} if robot.parameters() else None)
    data = model.createData()
    symbols, rows = states(robot, count, seed)
    tau = evaluate(eqs.raw("tau") - eqs.raw("damping") - eqs.raw("load"), symbols, rows)
    M = evaluate(eqs.raw("M"), symbols, rows)
    tau_err = M_err = 0.0
    order = list(robot.depth_first())  # Pinocchio's joint k is link order[k]
    for k, row in enumerate(rows):
        q, qd, qdd = (row[j * n:(j + 1) * n][order] for j in range(3))
        expected_tau = pin.rnea(model, data, q, qd, qdd)
        expected_M = np.triu(pin.crba(model, data, q))
        ours_M = M[k].reshape(n, n)[np.ix_(order, order)]
        tau_err = max(tau_err, np.max(np.abs(tau[k][order] - expected_tau)) / max(np.max(np.abs(expected_tau)), 1.0))
        M_err = max(M_err, np.max(np.abs(np.triu(ours_M) - expected_M)) / np.max(np.abs(expected_M)))
    return tau_err, M_err


@pytest.mark.parametrize("method", ("newton-euler", *PLACED))
def test_the_test_tree_agrees_with_pinocchio(derived, method):
    tau_err, M_err = pinocchio_errors(derived[method], count=5, seed=1)
    assert tau_err < 1e-10 and M_err < 1e-10, (tau_err, M_err)


def random_tree(seed: int, convention: str) -> rd.Manipulator:
    """A random tree of 4..6 mixed R/P joints (conftest's, without placements, which Kane's algorithm refuses):
    float geometry, armature, damping, a tip load and (half the time) a payload on its last link."""
    return shared_random_tree(seed, 4 + seed % 3, convention, placements=False)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("convention", ("standard", "modified"))
def test_random_trees_agree_with_pinocchio(seed, convention):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        robot = random_tree(seed, convention)
    assert robot.is_tree and not robot.has_placements
    symbols, rows = states(robot, 3, seed)
    load = None
    for method in ("newton-euler", "lagrange-euler", "dalembert", "emdeg", "kane"):
        assert not_applicable(robot, method) is None
        eqs = rd.derive(robot, method)
        tau_err, M_err = pinocchio_errors(eqs, seed=seed)
        assert tau_err < 1e-10 and M_err < 1e-10, (method, tau_err, M_err)
        # the tip load on the last link (Pinocchio leaves it out): every method as Newton-Euler
        values = evaluate(eqs.raw("load"), symbols, rows)
        load = values if load is None else load
        assert np.max(np.abs(values - load)) < 1e-10 * np.max(np.abs(load)), method


def test_an_order_that_is_not_depth_first_agrees_with_pinocchio_rnea():
    """Link 3 on link 1 after link 2 on link 1's child: the formulations need only parents[i] < i."""
    robot = random_robot(7, 4, "modified").replace(parent=(-1, 0, 0, 1))
    model = to_pinocchio(robot)
    data = model.createData()
    order = list(robot.depth_first())  # Pinocchio's joint k is link order[k]
    assert order == [0, 1, 3, 2]
    symbols, rows = states(robot, 3, 7)
    for method in ("newton-euler", "lagrange-euler", "kane"):
        eqs = rd.derive(robot, method)
        tau = evaluate(eqs.raw("tau") - eqs.raw("damping") - eqs.raw("load"), symbols, rows)
        for k, row in enumerate(rows):
            expected = np.empty(4)
            expected[order] = pin.rnea(model, data, *(row[4 * j:4 * j + 4][order] for j in range(3)))
            assert np.max(np.abs(tau[k] - expected)) < 1e-10 * max(np.max(np.abs(expected)), 1.0)


# -- the tip load, the kinematics and the equation forms on a tree ----------------------------------
def test_tip_load_is_the_jacobian_transpose_of_the_last_link(tree):
    """tau_load = J^T (R f, R n), J the Jacobian of the last link (zero columns for the other arm)."""
    robot = tree.replace(tip_force=["1/2", -1, 2], tip_moment=["1/3", 0, "-1/4"])
    J = kinematics.jacobian(robot)
    R = kinematics.forward_kinematics(robot)[:3, :3]
    wrench = sympy.Matrix.vstack(R * sympy.Matrix(robot.tip_force), R * sympy.Matrix(robot.tip_moment))
    expected = se.DenseMatrix((J.T * wrench).tolist())
    others = [i for i in range(robot.n) if i not in robot.ancestors(robot.n - 1)]
    assert others == [1, 2, 3] and all(J[r, c] == 0 for r in range(6) for c in others)
    for method in ("newton-euler", *PLACED):
        assert_exactly_equal(rd.derive(robot, method).raw("load"), expected, robot.n, method)


def test_frame_transforms_compose_along_the_parents(tree):
    A = kinematics.link_transforms(tree)
    T = kinematics.frame_transforms(tree)
    q = joint_symbols(tree.n).q
    for i, p in enumerate(tree.parents):
        expected = A[i] if p < 0 else T[p] * A[i]
        assert all(canonical(to_se(x), q) == 0 for x in (T[i] - expected))
    assert kinematics.forward_kinematics(tree) == T[-1]  # the tool is the identity: the last link's frame


def test_jacobian_is_the_derivative_of_the_last_links_pose(tree):
    """Linear rows: d p / d q_i; angular rows: hat(J_w[:, i]) = dR/dq_i R^T; zero for the other arm."""
    T = kinematics.forward_kinematics(tree)
    J = kinematics.jacobian(tree)
    q = joint_symbols(tree.n).q
    R, p = T[:3, :3], T[:3, 3]

    def zero(x):
        return canonical(to_se(sympy.expand(x)), q) == 0

    for i in range(tree.n):
        dR = R.diff(q[i]) * R.T
        w = (dR[2, 1], dR[0, 2], dR[1, 0])
        assert all(zero(J[r, i] - p.diff(q[i])[r]) for r in range(3)), i
        assert all(zero(J[3 + r, i] - w[r]) for r in range(3)), i
    assert any(J[r, 0] != 0 for r in range(6))


def test_equation_forms_of_a_tree(tree, derived):
    """ROBMAT's M, B, C, G, Fu's form and EMDEG's form rebuild tau; Christoffel symbols of unrelated
    joints vanish (M has no such entries, so none of its derivatives)."""
    eqs = derived["newton-euler"]
    n, s = eqs.n, eqs.symbols
    qd, qdd = sympy.Matrix(s.qd), sympy.Matrix(s.qdd)
    passive = eqs.tau - eqs.damping - eqs.load
    cs = eqs.config_space()
    fu = eqs.fu_form()
    for rebuilt in (cs.force(qdd), eqs.M * qdd + fu.h(qd) + eqs.G, eqs.M * qdd + eqs.coriolis_matrix() * qd + eqs.G):
        assert_exactly_equal(se.DenseMatrix(rebuilt.tolist()), se.DenseMatrix(passive.tolist()), n, "form")
    gamma = eqs.christoffel()
    left, right = (1, 2, 3), (4, 5, 6)
    assert all(gamma[i, j, k] == 0 for i in left for j in right for k in right)
    assert all(gamma[i, j, k] == 0 for i in right for j in left for k in range(n))
    # EMDEG's form of the Newton-Euler equations is Burdick's elements by his structure rules (eq. 26-29)
    form = eqs.emdeg_form()
    elements = emdeg.elements(tree, list(se.DenseMatrix(s.q)))
    q = s.q
    for (i, j), value in form.c.items():
        assert canonical(to_se(value) - elements.element(f"c{i}{j}{j}"), q) == 0, (i, j)
    for (i, j, k), value in form.b.items():
        assert canonical(to_se(value) - elements.element(f"b{i}{j}{k}"), q) == 0, (i, j, k)


# -- (e) serial robots: the existing suites; (f) refusals ------------------------------------------
def test_kane_refuses_the_placed_tree_in_one_line(tree):
    with pytest.raises(DerivationError, match="link 2 has a fixed placement") as info:
        rd.derive(tree, "kane")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("method", "code"), [("ne", 0), ("le", 0), ("gd", 0), ("emdeg", 0), ("kane", 2)])
def test_cli_derives_the_tree(method, code):
    result = CliRunner().invoke(app, ["derive", str(TREE), "--method", method])
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    if code:
        assert "placement" in result.output and len(result.output.strip().splitlines()) == 1
    elif method == "emdeg":  # Burdick's elements, as for a chain
        assert "M11 =" in result.output and "M25 = 0" in result.output  # joints 2 and 5: different arms
    else:
        assert "tau" in result.output or "q1" in result.output


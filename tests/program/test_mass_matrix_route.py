"""M by the composite-body algorithm with its columns projected in the root link's frame
(:func:`robodyn.recursions.composite.inertia_matrix_root_frame`) or with the composite bodies carried by DH steps
(``inertia_matrix(..., dh_steps=True)``), and the choice of M's recursion by count
(:attr:`robodyn.program.routes.Context.mass_matrix`): the same M as the numeric engine and Pinocchio's crba, the
same program values as the recursion they may replace, and the cheapest taken."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.numeric.kane import NumpyOps
from robodyn.program import build, routes
from robodyn.program.builder import Builder
from robodyn.recursions import composite
from robodyn.recursions.arm import arm_data
from tests.conftest import load_quiet, random_inertia, random_robot, random_tree

CARRIED, ROOT_FRAME = composite.inertia_matrix, composite.inertia_matrix_root_frame


def general_chain(seed: int, n: int) -> rd.Manipulator:
    """n revolute joints of general geometry: every twist, length, offset and angle offset a random non-zero
    number, dense inertias (the chains of benchmarks/pinocchio_sx.py)."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        mass = float(rng.uniform(0.2, 5.0))
        rows.append({"joint": "R", "a": float(rng.uniform(0.05, 0.8)), "alpha": float(rng.uniform(-np.pi, np.pi)),
                     "d": float(rng.uniform(0.05, 0.5)), "theta": float(rng.uniform(-np.pi, np.pi)), "mass": mass,
                     "com": rng.uniform(-0.3, 0.3, 3).tolist(), "inertia": random_inertia(rng, mass)})
    return rd.Manipulator.from_dh(rows, convention="modified", gravity=[0, 0, -9.81], name=f"general{n}")


def _numeric(recursion: Callable[..., Any], robot: rd.Manipulator, q: np.ndarray, group: bool) -> np.ndarray:
    """M at one state by ``recursion`` run on NumPy scalars."""
    M = recursion(arm_data(robot), NumpyOps(), [np.array([x]) for x in q], group=group)
    return np.array([[float(np.asarray(x).ravel()[0]) for x in row] for row in M])


def _program(recursion: Callable[..., Any], robot: rd.Manipulator) -> Any:
    """The program of M by ``recursion`` alone (as the route builds it)."""
    ctx = routes.Context(robot)
    ops = Builder(ctx.params)
    q = [ops.value(x) for x in ctx.inputs["q"]]
    M = recursion(ctx.arm_data, routes.BuilderOps(ops), q, parameters=ctx.link_parameters(ops))
    return ctx.program(ops, {"M": [x for row in M for x in row]})


def _evaluate(program: Any, q: np.ndarray) -> np.ndarray:
    n = len(q)
    return np.array(program.evaluate({f"q{i + 1}": float(q[i]) for i in range(n)})["M"], dtype=float).reshape(n, n)


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


ARMS = [
    *(("chain", seed, n, convention) for seed, n, convention in
      [(1, 2, "modified"), (2, 5, "standard"), (3, 7, "modified"), (4, 9, "standard")]),
    *(("tree", seed, n, convention) for seed, n, convention in [(5, 4, "modified"), (6, 8, "standard"),
                                                                (7, 11, "modified")]),
]


def _arm(kind: str, seed: int, n: int, convention: str) -> rd.Manipulator:
    return random_robot(seed, n, convention) if kind == "chain" else random_tree(seed, n, convention)


@pytest.mark.parametrize(("kind", "seed", "n", "convention"), ARMS)
def test_root_frame_recursion_is_the_mass_matrix(kind: str, seed: int, n: int, convention: str) -> None:
    """Mixed R/P joints, general and right-angled twists, trees with fixed placements, payload and armature:
    the same M as the numeric engine, regrouped parameters or not, run on NumPy and as a program."""
    robot = _arm(kind, seed, n, convention)
    q = np.random.default_rng(seed).uniform(-2, 2, n)
    reference = numeric.mass_matrix(robot, q)
    dh_steps = functools.partial(CARRIED, dh_steps=True)
    for group in (True, False):
        assert _rel(_numeric(ROOT_FRAME, robot, q, group), reference) < 1e-12
        assert _rel(_numeric(dh_steps, robot, q, group), reference) < 1e-12
    for recursion in (ROOT_FRAME, dh_steps):
        assert _rel(_evaluate(_program(recursion, robot), q), reference) < 1e-12


@pytest.mark.parametrize("kind", ["chain", "tree", "general"])
def test_root_frame_recursion_is_pinocchio_crba(kind: str) -> None:
    """Against Pinocchio's crba (its q in depth-first order; no armature, damping or tip load on either side)."""
    pin = pytest.importorskip("pinocchio")
    from robodyn.formats.pinocchio import to_pinocchio

    robot = {"chain": lambda: random_robot(21, 8, "modified", extras=False),
             "tree": lambda: random_tree(22, 9, "modified", extras=False),
             "general": lambda: general_chain(0, 12)}[kind]()
    model = to_pinocchio(robot)
    order = list(robot.depth_first())
    programs = [_program(recursion, robot) for recursion in (ROOT_FRAME, functools.partial(CARRIED, dh_steps=True))]
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = rng.uniform(-2, 2, robot.n)
        M_pin = np.array(pin.crba(model, model.createData(), q[order]))
        M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T  # Pinocchio fills the upper triangle
        M = np.empty_like(M_pin)
        M[np.ix_(order, order)] = M_pin
        for program in programs:
            assert _rel(_evaluate(program, q), M) < 1e-12


def _cost(program: Any) -> tuple[int, int]:
    c = program.count()["evaluation"]
    return c.multiplications + c.additions, c.multiplications


@pytest.mark.parametrize("name", ["general12", "puma560", "stanford_arm"])
def test_the_cheapest_recursion_is_chosen(name: str) -> None:
    """Each recursion's program of M is counted and the cheapest built, never dearer than the carried wrenches
    (the programs until issue 33), to which it agrees to rounding: the root frame's on a 12-joint chain of
    general geometry, the carried wrenches over composite bodies carried by DH steps on the built-in arms."""
    robot = general_chain(0, 12) if name == "general12" else load_quiet(name)
    candidates = {"carried": CARRIED, "dh steps": functools.partial(CARRIED, dh_steps=True),
                  "root frame": ROOT_FRAME}
    costs = {key: _cost(_program(recursion, robot)) for key, recursion in candidates.items()}
    built = build(robot, ("M",), route="recursive")
    assert _cost(built) == min(costs.values())
    assert min(costs, key=costs.__getitem__) == ("root frame" if name == "general12" else "dh steps")
    assert costs["dh steps"] < costs["carried"]
    q = np.random.default_rng(8).uniform(-2, 2, robot.n)
    assert _rel(_evaluate(built, q), _evaluate(_program(CARRIED, robot), q)) < 1e-12


#: Pinocchio 2.6's crba traced on CasADi SX, after casadi.cse, on general_chain(0, n): multiplications
#: (benchmarks/pinocchio_sx.py, which needs Pinocchio compiled with CasADi: not installed here).
PINOCCHIO_SX_CRBA = {6: 593, 12: 2139, 20: 5539}


@pytest.mark.parametrize("n", sorted(PINOCCHIO_SX_CRBA))
def test_mass_matrix_below_pinocchio_crba(n: int) -> None:
    """M costs at most 0.8 times the multiplications of Pinocchio<SX>'s CRBA (issue 33's acceptance)."""
    c = build(general_chain(0, n), ("M",)).count()["evaluation"]
    assert c.multiplications <= 0.8 * PINOCCHIO_SX_CRBA[n]

"""The program builder on kinematic trees (issue 13): the customised recursions over the parents, M with the
entries of links on different branches exact zeros, forward dynamics by Featherstone's LTDL (zero fill) or
ABA, and everything downstream of a Program (codegen, rd.compile, the CLI), checked against Pinocchio
(:func:`robodyn.formats.pinocchio.to_pinocchio`, an independent oracle built from the same DH data)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from typer.testing import CliRunner

import robodyn as rd
from robodyn import codegen
from robodyn.cli import app
from robodyn.formats.pinocchio import to_pinocchio
from robodyn.numeric.kane import kane_inverse_dynamics
from robodyn.program import build, opcount, routes
from robodyn.program.builder import Builder
from robodyn.runtime.entry import load_library
from tests.conftest import random_robot, random_tree

TOL = 1e-10
TREE_FILE = Path(__file__).parents[1] / "data" / "torso_two_arms.yaml"
G = 9.81  # the test tree keeps gravity symbolic: its one parameter
DYNAMICS = ("tau", "M", "h", "G", "forward")


def rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(a) - b)) / max(float(np.max(np.abs(b))), 1e-300))


def torso() -> rd.Manipulator:
    return rd.load(TREE_FILE)


TREES = [(41, 4, "modified"), (42, 6, "standard"), (43, 7, "modified"), (44, 8, "standard")]


def robots() -> list[tuple[str, rd.Manipulator]]:
    """The test tree and random trees (conftest.random_tree: any order of the links, fixed placements; no
    damping, which Pinocchio does not apply)."""
    return [("torso_two_arms", torso())] + [(f"tree{s}_{n}_{c}", random_tree(s, n, c, extras=False))
                                            for s, n, c in TREES]


def bound(robot: rd.Manipulator) -> dict[str, float]:
    return {s.name: G for s in robot.parameters()}  # only the test tree has a parameter: g


def states(n: int, seed: int = 0, N: int = 3) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=(N, n)) for _ in range(4))  # q, qd, qdd, tau


def pinocchio_reference(robot: rd.Manipulator, q, qd, qdd, tau) -> dict[str, np.ndarray]:
    """tau (rnea), M (crba's upper triangle, mirrored), G, h = nonlinear effects - G, forward (aba), in the robot's
    joint order (Pinocchio's is depth first: its joint k is the robot's link order[k])."""
    model = to_pinocchio(robot, {s: G for s in robot.parameters()})
    data = model.createData()
    order = list(robot.depth_first())
    x, xd, xdd, t = (np.asarray(a)[order] for a in (q, qd, qdd, tau))
    M = np.triu(pin.crba(model, data, x))
    gravity = pin.computeGeneralizedGravity(model, data, x).copy()
    pinocchio = {"tau": pin.rnea(model, data, x, xd, xdd).copy(), "M": M + np.triu(M, 1).T, "G": gravity,
                 "h": pin.nonLinearEffects(model, data, x, xd) - gravity,
                 "forward": pin.aba(model, data, x, xd, t).copy()}
    out = {name: np.empty_like(value) for name, value in pinocchio.items()}
    for name, value in pinocchio.items():
        if name == "M":
            out[name][np.ix_(order, order)] = value
        else:
            out[name][order] = value
    return out


def inputs(robot: rd.Manipulator, q, qd, qdd, tau) -> dict[str, float]:
    values = bound(robot)
    for name, x in (("q", q), ("qd", qd), ("qdd", qdd), ("tau", tau)):
        values.update({f"{name}{i + 1}": float(v) for i, v in enumerate(x)})
    return values


def unrelated(robot: rd.Manipulator) -> list[tuple[int, int]]:
    """The pairs (i, k) of links on different branches: neither an ancestor of the other."""
    return [(i, k) for i in range(robot.n) for k in range(robot.n)
            if i not in robot.ancestors(k) and k not in robot.ancestors(i)]


# -- the programs against Pinocchio ------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "robot"), robots(), ids=[name for name, _ in robots()])
def test_programs_agree_with_pinocchio(name: str, robot: rd.Manipulator) -> None:
    """tau, M, h, G and forward (the cheaper of LTDL and ABA, and ABA by its route) of one program each."""
    n = robot.n
    program = build(robot, DYNAMICS)
    assert set(program.candidates) == {"LDL^T", "ABA"}
    articulated = build(robot, ("forward",), route="aba")
    for q, qd, qdd, tau in zip(*states(n, seed=n), strict=True):
        ref = pinocchio_reference(robot, q, qd, qdd, tau)
        got = program.evaluate(inputs(robot, q, qd, qdd, tau))
        for part in DYNAMICS:
            value = got[part].reshape(n, n) if part == "M" else got[part]
            assert rel(value, ref[part]) < TOL, f"{name}: {part} off by {rel(value, ref[part]):.1e}"
        qdd_aba = articulated.evaluate(inputs(robot, q, qd, qdd, tau))["forward"]
        assert rel(qdd_aba, ref["forward"]) < TOL


def test_the_tip_load_acts_on_the_last_link() -> None:
    """tau with a tip force and moment (exerted by the last link, in its frame) is Pinocchio's rnea with that
    wrench, negated, applied to the last body; the joints of the other arm do not feel it."""
    robot = torso()
    f, m = np.array([1.5, -2.0, 0.7]), np.array([0.3, 0.4, -0.9])
    loaded = robot.replace(tip_force=f.tolist(), tip_moment=m.tolist())
    program, unloaded = build(loaded, ("tau",)), build(robot, ("tau",))
    model = to_pinocchio(robot, {s: G for s in robot.parameters()})
    fext = [pin.Force.Zero() for _ in range(robot.n + 1)]
    fext[robot.n] = pin.Force(-f, -m)  # Pinocchio's joint ids: the last link is joint n
    off_path = [i for i in range(robot.n) if i not in robot.ancestors(robot.n - 1)]
    assert off_path == [1, 2, 3]  # the left arm
    for q, qd, qdd, tau in zip(*states(robot.n, seed=5), strict=True):
        values = inputs(robot, q, qd, qdd, tau)
        got = program.evaluate(values)["tau"]
        assert rel(got, pin.rnea(model, model.createData(), q, qd, qdd, fext)) < TOL
        assert rel(got[off_path], unloaded.evaluate(values)["tau"][off_path]) < 1e-13


@pytest.mark.parametrize(("name", "robot"), robots(), ids=[name for name, _ in robots()])
def test_cross_branch_entries_of_M_are_exact_zeros(name: str, robot: rd.Manipulator) -> None:
    n = robot.n
    M = build(robot, ("M",)).outputs["M"]
    pairs = unrelated(robot)
    assert pairs, f"{name} has no two links on different branches"
    for i, k in pairs:
        assert M[i * n + k] == 0, f"{name}: M[{i + 1},{k + 1}] = {M[i * n + k]}"
    for i in range(n):  # and the diagonal is not (every link has a mass)
        assert M[i * n + i] != 0


# -- LTDL: branch-induced sparsity ------------------------------------------------------------------------
def forward_program(robot: rd.Manipulator, parents) -> rd.program.Program:
    """qdd from the recursive M and bias by :func:`routes.ldlt_solve` over ``parents`` (None: dense)."""
    ctx = routes.Context(robot)
    ops = Builder(ctx.params)
    n = robot.n
    flat = routes.recursive_part(ctx, ops, "M")
    M = [flat[i * n : (i + 1) * n] for i in range(n)]
    rhs = [ops.value(t) - b for t, b in zip(ctx.inputs["tau"], routes.recursive_part(ctx, ops, "bias"), strict=True)]
    return ctx.program(ops, {"forward": routes.ldlt_solve(ops, M, rhs, parents)})


def _cost(count) -> int:
    return count.multiplications + count.additions


def test_ltdl_costs_less_than_a_dense_ldlt_on_the_test_tree() -> None:
    robot = torso()
    sparse, dense = (forward_program(robot, p).count()["evaluation"] for p in (robot.parents, None))
    print(f"\ntorso_two_arms forward: LTDL {sparse}; dense L D L^T {dense}")
    assert sparse.multiplications < dense.multiplications and sparse.additions < dense.additions
    assert build(robot, ("forward",), route="recursive").count()["evaluation"] == sparse  # the route takes LTDL
    q, qd, qdd, tau = (x[0] for x in states(robot.n, seed=9))
    values = inputs(robot, q, qd, qdd, tau)
    expected = pinocchio_reference(robot, q, qd, qdd, tau)["forward"]
    for parents in (robot.parents, None):
        assert rel(forward_program(robot, parents).evaluate(values)["forward"], expected) < TOL


def test_ltdl_of_a_chain_is_the_dense_ldlt_operation_for_operation() -> None:
    """A serial chain's parents give the program of today's dense L D L^T, text for text."""
    chain = random_robot(7, 5, "modified")
    assert str(forward_program(chain, chain.parents)) == str(forward_program(chain, None))


# -- downstream: generated code, rd.compile, the CLI -------------------------------------------------------
@pytest.fixture(scope="module")
def tree_spec() -> codegen.ModuleSpec:
    return codegen.module_spec(torso())


def _routine_reference(robot: rd.Manipulator, N: int = 4) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    q, qd, qdd, tau = states(robot.n, seed=3, N=N)
    refs = [pinocchio_reference(robot, *x) for x in zip(q, qd, qdd, tau, strict=True)]
    ref = {key: np.array([r[key] for r in refs]) for key in refs[0]}
    return {"q": q, "qd": qd, "qdd": qdd, "tau": tau}, ref


def _check_routines(call) -> None:
    """``call(routine, *batch arrays)`` of the test tree against Pinocchio."""
    s, ref = _routine_reference(torso())
    checks = {"inverse_dynamics": (("q", "qd", "qdd"), "tau"), "mass_matrix": (("q",), "M"),
              "coriolis": (("q", "qd"), "h"), "gravity": (("q",), "G"),
              "bias_forces": (("q", "qd"), None), "forward_dynamics": (("q", "qd", "tau"), "forward")}
    for routine, (args, key) in checks.items():
        got = np.asarray(call(routine, *(s[a] for a in args)))
        expected = ref["h"] + ref["G"] if key is None else ref[key]
        assert rel(got, expected) < TOL, f"{routine} off by {rel(got, expected):.1e}"


def test_compiled_c_agrees_with_pinocchio(tree_spec: codegen.ModuleSpec, tmp_path: Path) -> None:
    dyn = rd.compile(torso(), cache=tmp_path, spec=tree_spec)
    _check_routines(lambda routine, *arrays: getattr(dyn, routine)(*arrays, params={"g": G}))


@pytest.mark.skipif(shutil.which("gfortran") is None, reason="gfortran not installed")
def test_compiled_fortran_agrees_with_pinocchio(tree_spec: codegen.ModuleSpec, tmp_path: Path) -> None:
    """gfortran with every warning an error, as tests/codegen/test_codegen.py compiles the built-in robots."""
    ((filename, text),) = codegen.generate(None, "fortran", spec=tree_spec).items()
    (tmp_path / filename).write_text(text)
    library = tmp_path / f"{tree_spec.name}_f90.so"
    flags = ["-std=f2008", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O1", "-fPIC", "-shared", "-J", str(tmp_path)]
    proc = subprocess.run(["gfortran", *flags, "-o", str(library), str(tmp_path / filename)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    dyn = load_library(library, tree_spec)
    _check_routines(lambda routine, *arrays: getattr(dyn, routine)(*arrays, params={"g": G}))


@pytest.mark.parametrize("language", ["numpy", "jax"])
def test_generated_python_agrees_with_pinocchio(tree_spec: codegen.ModuleSpec, language: str) -> None:
    if language == "jax":
        pytest.importorskip("jax").config.update("jax_enable_x64", True)  # as tests/codegen/test_codegen.py does
    module = codegen.load_python(None, language, spec=tree_spec)
    k = module.constants([G])
    _check_routines(lambda routine, *arrays: getattr(module, routine)(k, *arrays))


def test_every_language_prints_the_tree(tree_spec: codegen.ModuleSpec) -> None:
    for language in codegen.LANGUAGES:
        text = "\n".join(codegen.generate(None, language, spec=tree_spec).values())
        assert "forward_dynamics" in text and "mass_matrix" in text, language
        assert "M_PI" not in text  # C99 has no M_PI: the offset theta = pi/6 of r_elbow is printed as a number


def test_compile_cache_tells_a_tree_from_the_chain_of_its_rows(tmp_path: Path) -> None:
    tree = torso()
    chain = tree.replace(parent=None)
    assert not chain.is_tree
    paths = {rd.compile(robot, outputs=["M"], cache=tmp_path).path for robot in (tree, chain)}
    assert len(paths) == 2


def test_cli_count_prints_both_candidates_for_a_tree() -> None:
    result = CliRunner().invoke(app, ["count", str(TREE_FILE), "--outputs", "forward"])
    assert result.exit_code == 0, result.output
    print(result.output)
    candidates = build(torso(), ("forward",)).candidates
    for label, (route, count) in candidates.items():
        assert (f"by {label} (route {route}): {count.multiplications} multiplications, {count.additions} additions"
                in result.output)


def test_cli_codegen_writes_a_tree(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["codegen", str(TREE_FILE), "--lang", "numpy", "--outputs", "tau",
                                      "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "torso_two_arms.py").is_file()


# -- every route on a tree ----------------------------------------------------------------------------------
def test_the_factored_expanded_and_emdeg_routes_agree_on_a_tree() -> None:
    """The routes that start from the symbolic equations (rd.derive handles trees) give Pinocchio's numbers, and
    EMDEG's distinct elements M_ij are the entries of M (none across the two arms)."""
    robot = torso()
    factored, expanded = build(robot, ("M", "G"), route="factored"), build(robot, ("tau", "h"), route="expanded")
    elements = build(robot, ("elements",))
    assert {name for name in elements.outputs if name.startswith("M")} == {
        f"M{i + 1}{k + 1}" for i in range(robot.n) for k in range(i, robot.n) if i in robot.ancestors(k)}
    for q, qd, qdd, tau in zip(*states(robot.n, seed=9), strict=True):
        ref = pinocchio_reference(robot, q, qd, qdd, tau)
        values = inputs(robot, q, qd, qdd, tau)
        got = {**factored.evaluate(values), **expanded.evaluate(values)}
        for name in ("M", "G", "tau", "h"):
            assert rel(got[name].reshape(ref[name].shape), ref[name]) < TOL, name
        M = elements.evaluate(values)
        for i in range(robot.n):
            for k in range(i, robot.n):
                if i in robot.ancestors(k):
                    assert rel(M[f"M{i + 1}{k + 1}"], ref["M"][i, k]) < TOL


def test_the_base_parameter_program_of_a_tree_agrees() -> None:
    """build(base=b): tau in Khalil and Kleinfinger's base parameters for trees, fed their values."""
    robot = torso()
    base = rd.identification.base_parameters(robot)
    program = build(robot, ("tau",), base=base)
    numbers = dict(zip(base.names, base.numeric_values({"g": G}), strict=True))
    for q, qd, qdd, tau in zip(*states(robot.n, seed=10), strict=True):
        values = inputs(robot, q, qd, qdd, tau) | numbers
        assert rel(program.evaluate(values)["tau"], pinocchio_reference(robot, q, qd, qdd, tau)["tau"]) < TOL


def test_kane_counts_and_runs_on_a_tree_without_placements() -> None:
    robot = random_tree(41, 5, "modified", extras=False, placements=False)
    assert robot.is_tree and opcount.count_operations(robot).multiplications > 0
    q, qd, qdd, _ = (x.T for x in states(robot.n, seed=11, N=4))
    ours = kane_inverse_dynamics(robot, q.T, qd.T, qdd.T)
    refs = [pinocchio_reference(robot, *x, np.zeros(robot.n))["tau"] for x in zip(q.T, qd.T, qdd.T, strict=True)]
    assert rel(ours, np.array(refs)) < TOL


def test_the_planner_takes_the_recursive_route_for_the_test_tree() -> None:
    """Seven joints and an offset of pi/6: beyond the factored route's limits, as for a chain."""
    program = build(torso(), ("tau", "M"))
    assert program.route == "recursive"

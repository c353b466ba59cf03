"""Featherstone's articulated-body algorithm (robodyn.recursions.aba), written once, run on NumPy batches,
symengine expressions and the program builder's scalars (issue 13, item 3): it agrees with the L D L^T route
(M and the bias, then a solve), and ``build(..., ("forward",))`` keeps whichever is cheaper."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace

import numpy as np
import pytest
import symengine as se
from typer.testing import CliRunner

import robodyn as rd
from robodyn import numeric
from robodyn.cli import app
from robodyn.codegen.spec import ABA_SUMMARY, KEYS, module_spec, sanitize, spec_from_program
from robodyn.errors import DerivationError
from robodyn.numeric.aba import aba_forward_dynamics
from robodyn.program import build
from robodyn.program.targets import count_summary
from robodyn.recursions.aba import joint_accelerations, serial_parents
from robodyn.recursions.arm import arm_data
from robodyn.recursions.scalars import SymengineOps
from robodyn.symbols import joint_symbols
from tests.conftest import load_quiet, random_params, random_robot, random_rotation, without_loops

TOL = 1e-10


def rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def placed(robot: rd.Manipulator, seed: int) -> rd.Manipulator:
    """``robot`` with a random fixed placement (rotation and translation) before every other row."""
    rng = np.random.default_rng(seed)
    links = list(robot.links)
    for k in range(0, robot.n, 2):
        T = np.eye(4)
        T[:3, :3] = random_rotation(rng)
        T[:3, 3] = rng.uniform(-0.3, 0.3, 3)
        links[k] = links[k].replace(placement=T.tolist())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        return robot.replace(links=tuple(links))


def chain(n: int, seed: int = 20) -> rd.Manipulator:
    """A chain of n joints: mixed R/P, general twists, damping, armature, tip load (conftest.random_robot)."""
    return random_robot(seed, n, "modified").replace(name=f"chain{n}")


def states(n: int, seed: int = 0, N: int = 64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q, qd, tau = rng.normal(size=(3, N, n))
    return q, qd, 5 * tau


# -- (1) the NumPy batch against numeric.forward_dynamics (composite-body M, Cholesky) ---------------
@pytest.mark.parametrize("name", without_loops(rd.library.names()))
def test_numeric_aba_agrees_on_the_built_in_robots(name: str) -> None:
    robot = load_quiet(name)
    params = random_params(robot, np.random.default_rng(3)) if robot.parameters() else None
    q, qd, tau = states(robot.n)
    expected = numeric.forward_dynamics(robot, q, qd, tau, params=params)
    assert rel(aba_forward_dynamics(robot, q, qd, tau, params=params), expected) < TOL
    assert rel(aba_forward_dynamics(robot, q[0], qd[0], tau[0], params=params), expected[0]) < TOL  # one state


@pytest.mark.parametrize("n", [7, 20])
@pytest.mark.parametrize("convention", ["standard", "modified"])
@pytest.mark.parametrize("extras", [True, False])
def test_numeric_aba_agrees_on_random_arms_with_placements(n: int, convention: str, extras: bool) -> None:
    """Mixed R/P, general twists, placements; with damping, armature, tip load and payload (extras) or without
    (the zero-armature path, where Ia S_i = 0 is used)."""
    for robot in (random_robot(100 + n, n, convention, extras=extras),
                  placed(random_robot(200 + n, n, convention, extras=extras), n)):
        q, qd, tau = states(n, seed=n)
        assert rel(aba_forward_dynamics(robot, q, qd, tau), numeric.forward_dynamics(robot, q, qd, tau)) < TOL


def test_parent_array() -> None:
    """A serial chain is parent[i] = i - 1; a parent array that is not a forest in order is refused."""
    robot = random_robot(5, 4, "modified")
    ops = numeric_ops()
    q, qd, tau = (list(x.T) for x in states(4, N=3))  # per joint, an array over the 3 states
    arm = arm_data(robot)
    assert arm.parents == serial_parents(4)
    chain = joint_accelerations(arm, q, qd, tau, ops)
    tree = joint_accelerations(replace(arm, parents=(-1, 0, 0, 1)), q, qd, tau, ops)
    assert not np.allclose(np.ravel(chain), np.ravel(tree))  # the parent array is read
    with pytest.raises(DerivationError, match="parent"):
        joint_accelerations(replace(arm, parents=(-1, 0, 3, 2)), q, qd, tau, ops)


def numeric_ops():
    from robodyn.numeric.kane import NumpyOps

    return NumpyOps()


# -- (2) symbolic: ABA on symengine scalars equals M^-1 (tau - bias) of the derived equations -----------
def _symbolic_robots() -> list[rd.Manipulator]:
    three = placed(random_robot(31, 3, "standard"), 3)  # numeric geometry, damping, armature, tip load
    return [load_quiet("double_pendulum"), load_quiet("stanford_modified"), three]


@pytest.mark.parametrize("index", [0, 1, 2], ids=["double_pendulum", "stanford_modified", "random3_placed"])
def test_symbolic_aba_equals_the_derived_equations(index: int) -> None:
    robot = _symbolic_robots()[index]
    n = robot.n
    q, qd, _ = joint_symbols(n).symengine()
    tau = [se.Symbol(f"tau{i + 1}") for i in range(n)]
    qdd = joint_accelerations(arm_data(robot), q, qd, tau, SymengineOps())
    eqs = rd.derive(robot, "newton-euler")
    M = eqs.raw("M")
    bias = eqs.raw("h") + eqs.raw("G") + eqs.raw("damping") + eqs.raw("load")
    rng = np.random.default_rng(index)
    for _ in range(3):
        values = {se.Symbol(k): v for k, v in random_params(robot, rng).items()}
        values.update({s: float(x) for s, x in zip([*q, *qd, *tau], rng.normal(size=3 * n), strict=True)})
        Mv = np.array([[float(M[i, j].xreplace(values)) for j in range(n)] for i in range(n)])
        rhs = np.array([float((tau[i] - bias[i]).xreplace(values)) for i in range(n)])
        got = np.array([float(se.sympify(x).xreplace(values)) for x in qdd])
        assert rel(got, np.linalg.solve(Mv, rhs)) < 1e-12


# -- (3) the program: build keeps the cheaper; compiled C of both routes -----------------------------
@pytest.fixture(scope="module")
def chain20() -> rd.Manipulator:
    return chain(20)


@pytest.fixture(scope="module")
def chain20_forward(chain20: rd.Manipulator) -> rd.program.Program:
    return build(chain20, ("forward",))


def _cost(count) -> int:
    return count.multiplications + count.additions


def test_build_picks_aba_on_a_20_joint_chain(chain20_forward) -> None:
    program = chain20_forward
    assert program.route == "aba"
    ldlt, aba = program.candidates["LDL^T"][1], program.candidates["ABA"][1]
    assert _cost(aba) < _cost(ldlt)
    assert program.count()["evaluation"] == aba


def test_build_keeps_the_cheaper_on_the_puma() -> None:
    robot = load_quiet("puma560")
    program = build(robot, ("forward",))
    costs = {name: _cost(count) for name, (_, count) in program.candidates.items()}
    assert _cost(program.count()["evaluation"]) == min(costs.values())
    assert program.route == ("aba" if costs["ABA"] < costs["LDL^T"] else "recursive")
    # what was built before (M, bias, L D L^T) is one of the candidates: forward never gets more expensive
    assert program.candidates["LDL^T"][1] == build(robot, ("forward",), route="recursive").count()["evaluation"]


def test_aba_program_evaluates_to_the_numeric_engine() -> None:
    robot = placed(random_robot(7, 5, "standard"), 1)
    program = build(robot, ("forward",), route="aba")
    q, qd, tau = states(5, N=1)
    values = {f"{k}{i + 1}": float(x[0, i]) for k, x in (("q", q), ("qd", qd), ("tau", tau)) for i in range(5)}
    assert rel(program.evaluate(values)["forward"], numeric.forward_dynamics(robot, q, qd, tau)[0]) < TOL


def _compiled(robot: rd.Manipulator, program: rd.program.Program):
    spec = spec_from_program(program, [KEYS["forward"]], name=sanitize(robot.name), robot=robot.name)
    return spec, rd.compile(robot, outputs=["forward"], spec=spec)


@pytest.fixture
def quick_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """gcc -O0 for the long straight-line C of these tests (-O3 takes 12-15 s on it, for the same numbers to the
    tolerance; the flags are part of the compile cache's key, so nothing is shared with -O3 builds)."""
    import importlib

    compile_module = importlib.import_module("robodyn.runtime.entry")  # (rd.compile is the function)
    monkeypatch.setattr(compile_module, "C_FLAGS", tuple("-O0" if f == "-O3" else f for f in compile_module.C_FLAGS))


@pytest.mark.parametrize("which", ["puma560", "random12"])
@pytest.mark.usefixtures("quick_c")
def test_compiled_c_of_both_routes_agrees(which: str) -> None:
    """The C of both routes for the PUMA (L D L^T kept) and a 12-joint arm near the crossover (the 20-joint
    chain's ABA C: test_codegen_takes_aba_where_cheaper)."""
    robot = load_quiet("puma560") if which == "puma560" else placed(random_robot(12, 12, "standard"), 12)
    q, qd, tau = states(robot.n, seed=9)
    expected = numeric.forward_dynamics(robot, q, qd, tau)
    # distinct names: the compile cache is keyed by the model (name included), not by the spec
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        by_ldlt = robot.replace(name=f"{robot.name}_ldlt")
        by_aba = robot.replace(name=f"{robot.name}_aba")
    spec, dyn = _compiled(by_ldlt, build(by_ldlt, ("forward",), route="recursive"))
    assert "LDL^T" in spec.routine("forward_dynamics").summary
    assert rel(dyn.forward_dynamics(q, qd, tau), expected) < TOL
    spec, dyn = _compiled(by_aba, build(by_aba, ("forward",), route="aba"))
    assert spec.routine("forward_dynamics").summary == ABA_SUMMARY
    assert rel(dyn.forward_dynamics(q, qd, tau), expected) < TOL


@pytest.mark.usefixtures("quick_c")
def test_codegen_takes_aba_where_cheaper(chain20: rd.Manipulator, chain20_forward) -> None:
    """module_spec (every language, rd.compile) gives the 20-joint chain's forward dynamics by ABA; the PUMA
    keeps its L D L^T. (The spec of the program build gave, which is what module_spec does: the program is
    built once for this module's tests.)"""
    spec = spec_from_program(chain20_forward, [KEYS["forward"]], name=sanitize(chain20.name), robot=chain20.name)
    assert spec.routine("forward_dynamics").summary == ABA_SUMMARY
    q, qd, tau = states(20, seed=4)
    dyn = rd.compile(chain20, outputs=["forward"], spec=spec)
    assert rel(dyn.forward_dynamics(q, qd, tau), numeric.forward_dynamics(chain20, q, qd, tau)) < TOL
    assert "LDL^T" in module_spec(load_quiet("puma560"), ["forward"]).routine("forward_dynamics").summary


# -- (4) robodyn count --------------------------------------------------------------------------------
def test_count_prints_both_candidates_on_a_20_joint_chain(chain20: rd.Manipulator, chain20_forward, tmp_path) -> None:
    path = chain20.save(tmp_path / "chain20.yaml")
    result = CliRunner().invoke(app, ["count", str(path), "--outputs", "forward"])
    assert result.exit_code == 0, result.output
    first, second = [line for line in result.output.splitlines() if line.strip()][:2]
    aba = chain20_forward.candidates["ABA"][1]
    ldlt = chain20_forward.candidates["LDL^T"][1]
    assert first.startswith(f"chain20, forward: {aba.multiplications} multiplications, {aba.additions} additions")
    assert "(route: aba)" in first
    assert f"by LDL^T (route recursive): {ldlt.multiplications} multiplications, {ldlt.additions} additions" in second
    assert f"by ABA (route aba): {aba.multiplications} multiplications, {aba.additions} additions" in second
    assert second.endswith("picked ABA, the cheaper")
    result = CliRunner().invoke(app, ["count", str(path), "--outputs", "forward", "--format", "json"])
    data = json.loads(result.output)
    assert data["picked"] == "ABA" and set(data["forward_candidates"]) == {"LDL^T", "ABA"}


def test_count_of_other_outputs_has_no_candidates() -> None:
    summary = count_summary(load_quiet("two_link_payload"), "tau")
    assert "forward_candidates" not in summary and "picked" not in summary

"""The efficient programs (issue 4): every route evaluates to the equations of motion, the
regrouping is exact, and the operation counts reach the published figures."""

from __future__ import annotations

import json

import numpy as np
import pytest
import symengine as se
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from robodyn import library, numeric
from robodyn.algebra import canonical
from robodyn.cli import app
from robodyn.formulations import derive
from robodyn.identification import base_parameters
from robodyn.program import OUTPUTS, build
from robodyn.program.outputs import CENTROIDAL_OUTPUTS
from robodyn.program.routes import DERIVATIVES
from robodyn.program.targets import count_summary
from robodyn.recursions import composite, newton_euler
from robodyn.recursions.arm import arm_data, inertials
from robodyn.recursions.scalars import SymengineOps
from tests.conftest import load_quiet, random_params, random_robot, without_coulomb, without_loops


def _reference(robot, output, q, qd, qdd, tau, params):
    kw = {"params": params} if params else {}
    if output == "tau":
        return numeric.inverse_dynamics(robot, q, qd, qdd, **kw)
    if output == "M":
        return numeric.mass_matrix(robot, q, **kw).ravel()
    if output == "G":
        return numeric.gravity(robot, q, **kw)
    if output == "h":
        return numeric.coriolis(robot, q, qd, **kw)
    if output == "bias":
        return numeric.bias_forces(robot, q, qd, **kw)
    return numeric.forward_dynamics(robot, q, qd, tau, **kw)


def _agree(program, robot, output, seed):
    _agree_all(program, robot, (output,), seed)


def _agree_all(program, robot, outputs, seed):
    """Every one of ``outputs`` against robodyn.numeric at one random state (one evaluation of the program)."""
    rng = np.random.default_rng(seed)
    n = robot.n
    params = random_params(robot, rng)
    q, qd, qdd, tau = (rng.uniform(-2, 2, n) for _ in range(4))
    values = dict(params)
    for name, x in (("q", q), ("qd", qd), ("qdd", qdd), ("tau", tau)):
        values.update({f"{name}{i + 1}": float(x[i]) for i in range(n)})
    evaluated = program.evaluate(values)
    refs = {output: _reference(robot, output, q, qd, qdd, tau, params) for output in outputs}
    # relative to the dynamics at this state: an output that nearly cancels (h of 1e-4 from terms of 1) carries
    # the rounding of its terms, not of its own size
    scale = max(max(np.max(np.abs(ref)) for ref in refs.values()), 1e-300)
    for output, ref in refs.items():
        assert np.max(np.abs(evaluated[output] - ref)) / scale < 1e-12, (robot.name, output, program.route)


# derivatives: test_derivatives; the centroidal outputs (a floating base's): test_centroidal_programs
DYNAMICS = [o for o in OUTPUTS if o != "elements" and o not in DERIVATIVES and o not in CENTROIDAL_OUTPUTS]


@pytest.mark.parametrize("name", without_loops(library.names()))
@pytest.mark.parametrize("output", DYNAMICS)
def test_cheapest_program_is_the_dynamics(name, output):
    robot = load_quiet(name)
    program = build(robot, (output,))
    assert set(program.route.replace(",", " ").split()) - {f"{p}:" for p in DYNAMICS} <= {"recursive", "factored"}
    _agree(program, robot, output, seed=7)


@pytest.mark.parametrize("route", ["recursive", "factored", "expanded"])
@pytest.mark.parametrize("name", ["double_pendulum", "two_link_payload", "stanford_modified"])
def test_every_route_is_the_dynamics(name, route):
    robot = load_quiet(name)
    outputs = [o for o in DYNAMICS if not (route == "expanded" and o == "forward")]
    program = build(robot, outputs, route=route)
    for output in outputs:
        _agree(program, robot, output, seed=3)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 7), convention=st.sampled_from(["standard", "modified"]))
def test_recursive_route_on_random_arms(seed, n, convention):
    robot = random_robot(seed, n, convention)
    program = build(robot, ("tau", "M", "forward"), route="recursive")
    for output in ("tau", "M", "forward"):
        _agree(program, robot, output, seed)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 7), convention=st.sampled_from(["standard", "modified"]))
def test_cheapest_program_on_random_arms(seed, n, convention):
    """The auto route (recursive or factored, part by part) for every output at once on random arms of 1 to 7
    joints (twists and offsets of general angle among them), at three random states (issue 4, section 5)."""
    robot = random_robot(seed, n, convention)
    program = build(robot, DYNAMICS)
    for k in range(3):
        _agree_all(program, robot, DYNAMICS, seed + k)


@pytest.mark.parametrize("convention", ["standard", "modified"])
def test_auto_route_does_not_expand_general_arms(convention, monkeypatch):
    """A 7-joint arm with twists of general angle goes to the recursion without expanding the Newton-Euler
    parts first (which took 282 s for one such arm, to choose the recursion anyway)."""
    from robodyn.program import right_angled, routes

    def expanded(*args, **kwargs):
        raise AssertionError("a canonical form was computed")

    monkeypatch.setattr(routes, "canonical_terms", expanded)
    monkeypatch.setattr(routes.Context, "equations", property(expanded))
    robot = random_robot(0, 7, convention)
    assert not right_angled(robot)
    program = build(robot, DYNAMICS)
    assert program.route == "recursive"
    _agree_all(program, robot, DYNAMICS, seed=2)


def test_right_angled():
    """Twists and offsets that are multiples of pi/2 exactly (0.0 too, not a floating-point pi/2), and the
    first link's twist (it only turns gravity) not looked at."""
    from robodyn.program import right_angled

    assert all(right_angled(load_quiet(name)) for name in without_loops(library.names()))
    robot = random_robot(3, 4, "modified", right_angled=True)
    robot = robot.replace(links=tuple(link.replace(theta=0) for link in robot.links))
    assert right_angled(robot)
    links = list(robot.links)
    assert right_angled(robot.replace(links=(links[0].replace(alpha=0.3), *links[1:])))
    for change in ({"alpha": np.pi / 2}, {"alpha": "alpha2"}, {"theta": 0.2}):
        assert not right_angled(robot.replace(links=(links[0], links[1].replace(**change), *links[2:])))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 3), convention=st.sampled_from(["standard", "modified"]))
def test_factored_route_on_random_arms(seed, n, convention):
    robot = random_robot(seed, n, convention)
    program = build(robot, ("tau", "forward"), route="factored")
    for output in ("tau", "forward"):
        _agree(program, robot, output, seed)


@pytest.mark.parametrize("group", [False, True])
def test_customised_recursion_and_regrouping_are_exact(group):
    """tau of the customised recursion, with and without Khalil's regrouping, minus the
    Newton-Euler tau is identically zero for the symbolic PUMA (every length, mass and inertia a symbol)."""
    robot = load_quiet("puma560_symbolic")
    eqs = derive(robot, "newton-euler")
    q, qd, qdd = eqs.symbols.symengine()
    tau = newton_euler.inverse_dynamics(arm_data(robot), SymengineOps(), q, qd, qdd, group=group)
    for i in range(robot.n):
        assert canonical(tau[i] - eqs.raw("tau")[i], q) == 0


def test_regrouping_removes_parameters():
    """After regrouping, links 2..6 of the symbolic PUMA carry no mass, no MZ and no YY (Khalil's rule)."""
    robot = load_quiet("puma560_symbolic")
    ops, arm = SymengineOps(), arm_data(robot)
    grouped = composite.grouped(arm, ops, inertials(arm, ops))
    for p in grouped:
        assert p.M == 0 and p.MS[2] == 0 and se.expand(p.J[1][1]) == 0


@pytest.mark.parametrize(
    ("name", "output", "mults", "adds"),
    [
        ("two_link_payload", "tau", 14, 14),  # goal; Macsyma 30/17, seed 004's minimum 20/14
        ("two_link_payload", "forward", 45, 30),  # goal; Macsyma 57/33
        ("puma560_symbolic", "tau", 220, 180),  # goal; EMDEG 401/254, SymPyBotics 362/319
        ("puma560", "tau", 180, 150),  # goal; Angeles, Ma and Rojas 521/435, SYMORO+ (RX-90, base parameters) 160/113
    ],
)
def test_operation_counts_reach_the_figures(name, output, mults, adds):
    summary = count_summary(load_quiet(name), output)
    assert summary["multiplications"] <= mults and summary["additions"] <= adds, summary


def test_count_cli_json_keys():
    result = CliRunner().invoke(app, ["count", "two_link_payload", "--outputs", "forward", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) >= {"multiplications", "additions", "trig", "constants", "route"}
    assert set(data["constants"]) == {"multiplications", "additions"}
    assert data["route"] in ("recursive", "factored")


def test_unknown_output_and_route_are_refused():
    robot = load_quiet("double_pendulum")
    with pytest.raises(ValueError, match="unknown output"):
        build(robot, ("K",))
    with pytest.raises(ValueError, match="unknown route"):
        build(robot, ("tau",), route="magic")


def test_placements_are_supported():
    """A URDF-style fixed transform before a DH row: every route and EMDEG's method still give
    the dynamics of the numeric engine."""
    robot = random_robot(11, 4, "modified")
    c, s = np.cos(0.3), np.sin(0.3)
    placement = [[c, 0, s, 0.1], [0, 1, 0, -0.2], [-s, 0, c, 0.05], [0, 0, 0, 1]]
    links = list(robot.links)
    links[2] = links[2].replace(placement=placement)
    robot = robot.replace(links=tuple(links))
    for route in ("recursive", "factored"):
        program = build(robot, ("tau", "M", "forward"), route=route)
        for output in ("tau", "M", "forward"):
            _agree(program, robot, output, seed=4)
    eqs, ne = derive(robot, "emdeg"), derive(robot, "newton-euler")
    rng = np.random.default_rng(2)
    q, qd, qdd = eqs.symbols.symengine()
    values = {x: float(rng.uniform(-2, 2)) for x in (*q, *qd, *qdd)}
    for x, y in zip(eqs.raw("tau"), ne.raw("tau"), strict=True):
        assert abs(float((x - y).xreplace(values))) < 1e-10


def _agree_in_base_parameters(robot, outputs, seed):
    """The base-parameter program, fed the robot's base parameter values, is the robot's dynamics."""
    b = base_parameters(robot)
    program = build(robot, outputs, base=b)
    rng = np.random.default_rng(seed)
    params = random_params(robot, rng)
    names = [str(s) for s in program.inputs["parameters"]]
    assert names[: len(b)] == list(b.names)
    n = robot.n
    q, qd, qdd, tau = (rng.uniform(-2, 2, n) for _ in range(4))
    values = dict(zip(b.names, b.numeric_values(params), strict=True))
    values.update({k: v for k, v in params.items() if k in names[len(b) :]})  # geometry, gravity, tip load
    for name, x in (("q", q), ("qd", qd), ("qdd", qdd), ("tau", tau)):
        values.update({f"{name}{i + 1}": float(x[i]) for i in range(n)})
    got = program.evaluate(values)
    for output in outputs:
        ref = _reference(robot, output, q, qd, qdd, tau, params)
        assert np.max(np.abs(got[output] - ref)) / max(np.max(np.abs(ref)), 1e-300) < 1e-12, (robot.name, output)


# (Coulomb friction is refused here: tests/analysis/test_friction.py)
@pytest.mark.parametrize("name", without_coulomb(without_loops(library.names())))
def test_base_parameter_program_is_the_dynamics(name):
    _agree_in_base_parameters(load_quiet(name), ("tau", "M", "forward"), seed=5)


@pytest.mark.parametrize(("seed", "n", "convention"), [(1, 3, "standard"), (4, 5, "modified"), (8, 6, "standard")])
def test_base_parameter_program_on_random_arms(seed, n, convention):
    _agree_in_base_parameters(random_robot(seed, n, convention), ("tau", "bias", "G"), seed=seed)


def test_build_takes_the_base_parameters_themselves():
    """The program layer does not compute base parameters (it sits beside identification): base=True is refused
    with a message that says what to pass, and base parameters of another robot are refused."""
    robot = load_quiet("two_link_payload")
    with pytest.raises(TypeError, match="base_parameters"):
        build(robot, ("tau",), base=True)
    with pytest.raises(ValueError, match="not of two_link_payload"):
        build(robot, ("tau",), base=base_parameters(load_quiet("double_pendulum")))


def test_count_in_base_parameters():
    puma = load_quiet("puma560")
    summary = count_summary(puma, "tau", base=base_parameters(puma))
    assert summary["output"] == "tau (base parameters)" and summary["route"] == "recursive, base parameters"
    assert len(summary["parameters"]) == 46 and summary["parameters"][0] == "ZZR1"
    assert any("SYMORO" in f["source"] for f in summary["published"])
    result = CliRunner().invoke(app, ["count", "puma560", "--base", "-f", "json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["multiplications"] == summary["multiplications"]
    bad = CliRunner().invoke(app, ["count", "puma560", "--base", "--route", "factored"])
    assert bad.exit_code == 2 and "recursive route" in bad.output


def test_parameters_that_cannot_act_are_reported():
    """Link 1 of the PUMA turns about its z axis only: of its tensor only Izz1 acts (Khalil's rules, the
    zeros of the geometry); the program says which inputs it never uses."""
    summary = count_summary(load_quiet("puma560_symbolic"), "tau")
    assert summary["unused_parameters"] == ["Ixx1", "Ixy1", "Ixz1", "Iyy1", "Iyz1"]
    assert count_summary(load_quiet("two_link_fu"), "tau")["unused_parameters"] == []


@pytest.mark.parametrize("route", ["auto", "recursive", "factored", "expanded"])
def test_parameters_named_like_program_temporaries(route):
    """A robot whose lengths are called k1 and x1 (the builder's constant and temporary names, and symengine
    cse's): every route must keep them apart from its own symbols."""
    import sympy

    robot = load_quiet("double_pendulum")
    rename = {sympy.Symbol("L1"): sympy.Symbol("k1"), sympy.Symbol("L2"): sympy.Symbol("x1")}
    links = tuple(link.replace(a=link.a.xreplace(rename), com=tuple(c.xreplace(rename) for c in link.com))
                  for link in robot.links)
    robot = robot.replace(links=links)
    assert {s.name for s in robot.parameters()} >= {"k1", "x1"}
    outputs = ("tau", "M") if route == "expanded" else ("tau", "M", "forward")
    program = build(robot, outputs, route=route)
    for output in outputs:
        _agree(program, robot, output, seed=2)

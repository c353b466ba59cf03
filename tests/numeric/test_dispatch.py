"""The numeric API's one dispatch (robodyn.numeric.api.ENGINES, keyed by robodyn.model.structure): every public
function on a robot of every kind (a fixed tree, a coupled one, four-bars, parallelograms, implicit loops, ball
joints on a fixed and a floating base, a floating arm with couplings) gives its split of tau, or refuses in one
line naming the robot, what it has and the function; the split's identities (bias = inverse dynamics at qdd = 0,
bias = h + G + damping + load, M qdd + bias = tau) on every kind that gives them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import robodyn as rd
from robodyn import numeric
from robodyn.errors import ModelError
from robodyn.model import joints
from robodyn.model.couplings import Coupling
from robodyn.model.manipulator import Link, Manipulator, RigidBody
from robodyn.model.structure import structure
from robodyn.numeric.api import ENGINES, ROUTINES


def _load(name: str) -> rd.Manipulator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        return rd.load(name)


def _ball() -> Manipulator:
    return Manipulator(links=[Link(joint="S", a=0.2, mass=1.2, com=[0.1, 0.02, 0], inertia=[0.1, 0.12, 0.09],
                                   damping=0.3, armature=0.02),
                              Link(joint="R", a=0.3, alpha=0.5, mass=0.8, com=[0.1, 0, 0.03],
                                   inertia=[0.02, 0.03, 0.04], damping=0.1)], name="ball", gravity=[0.3, -0.2, -9.81])


def _robots() -> dict[str, Manipulator]:
    puma = _load("puma560")
    gear = (Coupling(4, 3, -2, 0.3),)
    base = RigidBody(mass=5.0, com=[0.0, 0.0, -0.1], inertia=[0.2, 0.3, 0.25])
    return {"tree": puma, "coupled": puma.replace(couplings=gear), "four-bar": _load("fourbar_crank_rocker"),
            "parallelograms": _load("palletizer_kr700pa"), "implicit": _load("fivebar"), "ball": _ball(),
            "floating ball": _ball().replace(floating=True), "floating": puma.replace(floating=True, base=base),
            "floating coupled": puma.replace(floating=True, base=base, couplings=gear)}


ROBOTS = _robots()
#: What each kind's engine lacks (the rest it gives).
REFUSED = {"tree": set(), "coupled": set(), "four-bar": set(), "parallelograms": set(),
           "implicit": {"friction", "tip_load"}, "ball": {"tip_load"}, "floating ball": {"tip_load"},
           "floating": {"tip_load"}, "floating coupled": {"tip_load"}}


def _state(robot: Manipulator, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = rng.uniform(-0.5, 0.5, (count, robot.nq))
    if robot.floating:
        q[:, :7] = joints.random_configuration(rng, count)
    for k in robot.multi_dof:
        q[:, robot.idx_q(k):robot.idx_q(k) + 4] = joints.random_configuration(rng, count, joint="S")
    qd, qdd = rng.uniform(-1, 1, (2, count, robot.nv))
    return q, qd, qdd


def _call(name: str, robot: Manipulator, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    if name == "friction":
        return numeric.friction(robot, qd, q=q)
    arrays = {"inverse_dynamics": (q, qd, qdd), "forward_dynamics": (q, qd, qdd), "bias_forces": (q, qd),
              "coriolis": (q, qd)}.get(name, (q,))
    return getattr(numeric, name)(robot, *arrays)


@pytest.mark.parametrize("kind", ROBOTS)
def test_every_function_answers_or_refuses_in_one_line(kind: str) -> None:
    robot = ROBOTS[kind]
    q, qd, qdd = _state(robot, 3)
    refused = set()
    for name in ROUTINES:
        try:
            out = _call(name, robot, q, qd, qdd)
        except ModelError as exc:
            assert str(exc) == f"{robot.name}: {structure(robot).variety}: robodyn.numeric.{name} is not handled yet"
            refused.add(name)
            continue
        assert out.shape == ((3, robot.nv, robot.nv) if name == "mass_matrix" else (3, robot.nv)), name
        assert np.all(np.isfinite(out)), name
        one = _call(name, robot, q[0], qd[0], qdd[0])
        np.testing.assert_allclose(one, out[0], rtol=0, atol=1e-12 * max(1.0, float(np.abs(out[0]).max())))
    assert refused == REFUSED[kind]


@pytest.mark.parametrize("kind", ROBOTS)
def test_the_split_of_tau_holds_on_every_kind(kind: str) -> None:
    robot = ROBOTS[kind]
    q, qd, qdd = _state(robot, 2, seed=1)
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)
    bias = numeric.bias_forces(robot, q, qd)
    scale = 1e-10 * max(1.0, float(np.abs(tau).max()))
    np.testing.assert_allclose(numeric.inverse_dynamics(robot, q, qd, np.zeros_like(qdd)), bias, rtol=0, atol=scale)
    M = numeric.mass_matrix(robot, q)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", M, qdd) + bias, tau, rtol=0, atol=scale)
    np.testing.assert_allclose(numeric.forward_dynamics(robot, q, qd, tau), qdd, rtol=0, atol=1e-8)
    h, G = numeric.coriolis(robot, q, qd), numeric.gravity(robot, q)
    np.testing.assert_allclose(numeric.bias_forces(robot, q, np.zeros_like(qd)), G, rtol=0, atol=scale)  # (no load)
    if "friction" in REFUSED[kind]:  # the rest of the bias is the joints' friction: none without it
        frictionless = robot.replace(links=tuple(link.replace(damping=0, coulomb=(0, 0)) for link in robot.links))
        np.testing.assert_allclose(h + G, numeric.bias_forces(frictionless, q, qd), rtol=0, atol=scale)
        return
    damping = numeric.friction(robot, qd, q=q)
    load = 0.0 if "tip_load" in REFUSED[kind] else numeric.tip_load(robot, q)  # (an engine without: no tip load)
    np.testing.assert_allclose(h + G + damping + load, bias, rtol=0, atol=scale)
    if kind.endswith("ball"):  # (the ball robot's joints are damped: the friction is there to be found)
        assert np.abs(damping).max() > 0.01


def test_fext_is_refused_in_one_line_where_the_engine_takes_none() -> None:
    for kind in ("implicit", "ball", "floating"):
        robot = ROBOTS[kind]
        q, qd, qdd = _state(robot, 1)
        for call in (numeric.inverse_dynamics, numeric.forward_dynamics):
            with pytest.raises(ModelError) as info:
                call(robot, q[0], qd[0], qdd[0], fext=np.ones(6))
            assert str(info.value) == f"{robot.name}: {structure(robot).variety}: fext is not handled yet"


def test_a_structure_without_an_engine_is_refused_in_one_line() -> None:
    robot = _load("fivebar").replace(floating=True)
    q = np.concatenate([joints.neutral(), np.zeros(2)])
    with pytest.raises(ModelError) as info:
        numeric.gravity(robot, q)
    assert str(info.value) == "fivebar: floating base and implicit loops: robodyn.numeric is not handled yet"


def test_one_table_covers_the_kinds() -> None:
    assert {engine.name for engine in ENGINES.values()} == {"tree", "projected tree", "closed chain", "floating tree"}
    assert {(structure(robot).kind, structure(robot).manifold) for robot in ROBOTS.values()} == set(ENGINES)


def test_the_simulators_table_picks_each_kinds_engine() -> None:
    """rd.simulate's door (robodyn.analysis.simulation.SIMULATORS), keyed by the same structure: nq != nv takes the
    numeric engine's floating dynamics whatever the engine asked for, implicit loops the closed-chain one (the
    compiled engine refused in one line), the other kinds the engine asked for."""
    from robodyn.analysis import simulation

    expected = {("tree", "numpy"): simulation.NumpyDynamics, ("coupled", "numpy"): simulation.NumpyDynamics,
                ("implicit", "lambdify"): simulation.ClosedChainDynamics,
                ("implicit", "numpy"): simulation.ClosedChainDynamics,
                ("ball", "compiled"): simulation.FloatingDynamics,
                ("floating", "lambdify"): simulation.FloatingDynamics,
                ("floating coupled", "numpy"): simulation.FloatingDynamics}
    for (kind, engine), cls in expected.items():
        assert type(simulation.dynamics(ROBOTS[kind], engine=engine)) is cls, (kind, engine)
    with pytest.raises(ModelError) as info:
        simulation.dynamics(ROBOTS["implicit"], engine="compiled")
    assert "implicit loops are numeric only in this version" in str(info.value) and "\n" not in str(info.value)


def test_the_programs_table_refuses_in_one_line() -> None:
    """The program builder's door (robodyn.program.choice.BUILDERS): a structure it has no builder for, and the
    coupled builder's refusals, are one line from robodyn.model.structure.refuse."""
    from robodyn import program

    with pytest.raises(ModelError) as info:
        program.build(_load("fivebar").replace(floating=True), ("tau",))
    assert str(info.value) == "fivebar: floating base and implicit loops: a program (rd.compile) is not handled yet"
    with pytest.raises(ModelError) as info:
        program.build(ROBOTS["coupled"], ("M",), route="factored")
    assert str(info.value) == ("puma560: coupled joints: route 'factored' (its program is built by the recursive "
                               "route: 'auto' or 'recursive') is not handled yet")
    with pytest.raises(ModelError) as info:
        program.build(ROBOTS["four-bar"], ("dtau_dq",))
    assert str(info.value).startswith(f"{ROBOTS['four-bar'].name}: a four-bar in closed form: building its "
                                      "derivative programs")


def test_the_floating_engine_refuses_a_tip_load_in_one_line() -> None:
    loaded = _ball().replace(tip_force=[1.0, 0.0, 0.0])
    q, _, _ = _state(loaded, 1)
    with pytest.raises(ModelError) as info:
        numeric.mass_matrix(loaded, q[0])
    assert str(info.value) == "field 'tip_force': ball: spherical joint: a tip load is not handled yet"

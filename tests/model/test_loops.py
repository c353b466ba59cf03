"""Closed chains in the model (robodyn.model.loops, robodyn.model.parallelograms) and couplings with several
leaders (robodyn.model.couplings): the loop model, its one-line refusals, parallelograms found from the geometry
and turned into exact linear couplings, model files with loops and several leaders, round trips."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import sympy

import robodyn as rd
from robodyn import numeric
from robodyn.errors import ModelError
from robodyn.model.couplings import Coupling
from robodyn.model.loops import Loop, open_tree

pi = sympy.pi


def puma() -> rd.Manipulator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        return rd.load("puma560")


def fourbar(ground: object = sympy.Rational(3, 2), coupler: object = sympy.Rational(3, 2), **loop: object
            ) -> rd.Manipulator:
    """A planar four-bar: crank1 on the base, the coupler on crank1, crank2 on the base at (ground, 0, 0); the loop
    closes the coupler's end on crank2's end. A parallelogram when ground == coupler."""
    rod = {"joint": "R", "alpha": 0, "d": 0, "theta": 0, "mass": 2}
    links = (rd.Link(name="crank1", a=2, com=(-1, 0, 0), inertia=(0, sympy.Rational(2, 3), sympy.Rational(2, 3)),
                     **rod),
             rd.Link(name="coupler", a=coupler, com=(-sympy.sympify(coupler) / 2, 0, 0), inertia=(0, 0.4, 0.4),
                     **rod),
             rd.Link(name="crank2", a=2, com=(-1, 0, 0), inertia=(0, sympy.Rational(2, 3), sympy.Rational(2, 3)),
                     placement=[[1, 0, 0, ground], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], **rod))
    spec = {"links": ("coupler", "crank2"), "name": "bar", **loop}
    return rd.Manipulator(links=links, gravity=(0, -9.81, 0), name="fourbar", parent=(-1, 0, -1),
                          loops=(Loop(**spec),), actuated=("crank1",))


def test_a_coupling_of_one_leader_is_what_it_was() -> None:
    old = Coupling(4, 3, -2, 0.3)
    assert (old.joint, old.leader, old.ratio, old.leaders, old.loop) == (4, 3, -2, ((3, -2),), "")
    assert old == Coupling(4, leaders={3: -2}, offset=0.3) and old.describe() == "joint 5 = -2 x joint 4 + 0.3"
    robot = puma().replace(couplings=(old,))
    assert robot.couplings == (old,) and robot.nv == 5


def test_several_leaders_in_the_map_the_engine_and_chains() -> None:
    robot = puma().replace(couplings=(Coupling(5, leaders={3: 1, 4: -1}, offset=0.2), Coupling(4, 2, 2, 0.5)))
    # q6 = q4 - q5 + 0.2 with q5 = 2 q3 + 0.5: q6 = q4 - 2 q3 - 0.3, in link order of its leaders
    six = next(c for c in robot.couplings if c.joint == 5)
    assert six.leaders == ((2, -2), (3, 1)) and float(six.offset) == pytest.approx(-0.3)
    G, c = robot.coupling_map()
    assert G[5, :].tolist() == [[0, 0, -2, 1]] and robot.independent == (0, 1, 2, 3)
    tree = puma()
    Gf, cf = np.array(G, dtype=float), np.array(c, dtype=float).ravel()
    q, qd, qdd = np.random.default_rng(0).uniform(-1, 1, (3, 4, 4))
    np.testing.assert_allclose(numeric.inverse_dynamics(robot, q, qd, qdd),
                               numeric.inverse_dynamics(tree, q @ Gf.T + cf, qd @ Gf.T, qdd @ Gf.T) @ Gf,
                               rtol=1e-12, atol=1e-10)
    for couplings, message in [
        ((Coupling(5, leaders={4: 1, 5: 1}),), "cannot follow itself"),
        ((Coupling(5, leaders={4: 1, "nope": 1}),), "no link is named"),
        ((Coupling(5, leaders={4: 1, 3: 1}), Coupling(4, leaders={5: 1, 2: 1})), "cycle"),
        ((Coupling(5, leaders={}),), "without a leader"),
    ]:
        with pytest.raises(ModelError, match=message) as info:
            puma().replace(couplings=couplings)
        assert "\n" not in str(info.value)
    with pytest.raises(ModelError, match="not both"):
        Coupling(5, 4, leaders={3: 1})


def test_several_leaders_in_a_model_file(tmp_path: Path) -> None:
    robot = puma().replace(couplings=(Coupling(5, leaders={3: 1, 4: -1}, offset=pi / 7),))
    path = robot.save(tmp_path / "two_leaders.yaml")
    assert "leaders:" in path.read_text()
    assert rd.load(path) == robot
    text = path.read_text().split("couplings:")[0]
    for entry, message in [("{joint: 6, leaders: {4: 1, 5: -1}, leader: 3}", "no leader or ratio"),
                           ("{joint: 6, leaders: [4, 5]}", "mapping of leader"),
                           ("{joint: 6, leaders: {0: 1}}", "not a link number"),
                           ("{joint: 6}", "without 'leader'")]:
        (tmp_path / "bad.yaml").write_text(text + f"couplings:\n  - {entry}\n")
        with pytest.raises(ModelError, match=message) as info:
            rd.load(tmp_path / "bad.yaml")
        assert "\n" not in str(info.value)


def test_a_parallelogram_becomes_exact_linear_couplings() -> None:
    robot = fourbar()
    assert robot.nv == 1 and robot.independent == (0,) and len(robot.loops) == 1
    by_joint = {c.joint: c for c in robot.couplings}
    # the coupler stays parallel to the ground (q1 + q2 = 0), crank2 parallel to crank1 (q3 = q1): from the geometry
    assert (by_joint[1].leaders, by_joint[1].offset, by_joint[1].loop) == (((0, -1),), 0, "bar")
    assert (by_joint[2].leaders, by_joint[2].offset) == (((0, 1),), 0)
    assert open_tree(robot).couplings == () and open_tree(robot).nv == 3


def test_the_palletizer_couplings_are_those_written_by_hand() -> None:
    robot = rd.load("palletizer_kr700pa")
    assert (robot.n, robot.nv, len(robot.loops)) == (8, 4, 2)
    derived = {robot.links[int(c.joint)].name: (c.leaders, c.offset) for c in robot.couplings}
    name = {link.name: k for k, link in enumerate(robot.links)}
    lower, upper = name["lower_arm"], name["upper_arm"]
    assert derived == {  # the wrist and the rods keep their orientation to the column: +-q2 +-q3 + const
        "wrist": (((lower, -1), (upper, -1)), 7 * pi / 6),
        "rod_dc": (((lower, 1),), 0),
        "bell_crank": (((lower, -1),), 2 * pi / 3),
        "rod_ep": (((lower, 1), (upper, 1)), -pi / 2),
    }
    assert {c.loop for c in robot.couplings} == {"lower", "upper"}


@pytest.mark.parametrize("name", ["palletizer_kr700pa", "fourbar_parallelogram"])
@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_loops_round_trip_through_model_files(name: str, suffix: str, tmp_path: Path) -> None:
    robot = rd.load(name)
    again = rd.load(robot.save(tmp_path / f"{name}{suffix}"))
    assert again == robot and again.loops == robot.loops and again.actuated == robot.actuated
    assert again.subs({}) == robot  # subs keeps the loops and derives the same couplings


def test_conventions_move_the_closing_frames() -> None:
    robot = rd.load("fourbar_parallelogram")
    for convention in ("modified", "standard"):
        other = robot.to_convention(convention)
        assert other.couplings == robot.couplings, convention
    assert rd.load("palletizer_kr700pa").to_convention("standard").couplings == rd.load("palletizer_kr700pa").couplings


def test_float_geometry_within_the_tolerance_only() -> None:
    assert fourbar(ground=1.5, coupler=1.5).nv == 1
    assert fourbar(ground=1.5, coupler=1.5 + 1e-12).nv == 1
    with pytest.raises(ModelError, match="does not close this four-bar: give its branch"):
        fourbar(ground=1.5, coupler=1.5 + 1e-6)  # a four-bar, not a parallelogram (robodyn.model.fourbars)
    assert all(c.closure is not None for c in fourbar(ground=1.5, coupler=1.5 + 1e-6, branch=1).couplings)


REFUSED = [  # (change to the four-bar's loop, or to the robot, what the one line says)
    ({"links": ("coupler", "nope")}, "no link is named 'nope'"),
    ({"links": ("coupler", 7)}, "not a link index"),
    ({"links": ("coupler",)}, "expected two links"),
    ({"links": ("coupler", "coupler")}, "and itself"),
    ({"links": ("coupler", "crank1")}, "its own parent"),
    ({"joint": "ball"}, "not one of revolute, prismatic, spherical, weld"),
    ({"axis": (0, 0, 0)}, "a zero axis"),
    ({"axis": (0, 1)}, "expected three numbers"),
    ({"placements": ([[2, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], None)}, "proper rotation"),
    ({"placements": ({"xyz": (0, 0), "rpy": (0, 0, 0)}, None)}, "xyz: expected three numbers"),
    ({"placements": ({"xyz": (0, 0, 0), "turn": 1}, None)}, "unknown key 'turn'"),
    ({"placements": (None,)}, "expected two placements"),
    ({"placements": (None, {"xyz": (0, 0, 0.2)})}, "apart along the joint axis"),
    ({"name": "3x"}, "not a valid name"),
]


@pytest.mark.parametrize("change", [{"axis": (1, 0, 0)}, {"joint": "weld"}, {"joint": "spherical"}])
def test_loops_in_space_and_other_joints_are_implicit(change: dict[str, object]) -> None:
    """No parallelogram, no planar four-bar: an implicit loop, solved numerically (robodyn.numeric.closed_chains:
    tests/analysis/test_implicit_loops.py); its passive joints are none of the robot's coordinates."""
    robot = fourbar(**change)
    assert (robot.implicit, robot.passive, robot.nv, robot.couplings) == (("bar",), (1, 2), 1, ())


@pytest.mark.parametrize(("change", "message"), REFUSED, ids=[m for _, m in REFUSED])
def test_hostile_loops_are_refused_in_one_line(change: dict[str, object], message: str) -> None:
    with pytest.raises(ModelError, match=message) as info:
        fourbar(**change)
    assert "\n" not in str(info.value) and "loop" in str(info.value)


def test_the_robot_level_refusals() -> None:
    robot = fourbar()
    for changes, message in [
        ({"actuated": ()}, "needs its actuated joints"),
        ({"actuated": ("crank2", "crank1", "coupler")}, "over-constrained"),
        ({"actuated": ("nope",)}, "no link is named"),
        ({"actuated": ("crank1", "crank1")}, "listed twice"),
        ({"loops": (Loop(("coupler", "crank2"), name="a"), Loop(("coupler", "crank2"), name="a"))}, "two loops"),
        ({"loops": (), "actuated": ("crank1",)}, "without loops"),
        ({"couplings": (Coupling("crank1", "crank2", 1, 0),)}, "cannot be actuated"),
    ]:
        with pytest.raises(ModelError, match=message) as info:
            robot.replace(**changes)
        assert "\n" not in str(info.value), changes
    with pytest.raises(ModelError, match="does not close this four-bar: give its branch"):
        fourbar(ground=1)  # a four-bar that is no parallelogram, in closed form on the branch given
    assert fourbar(ground=1, branch=-1).nv == 1


def test_a_loop_none_of_whose_joints_is_actuated() -> None:
    """Two loops: the second (on the first crank's own four-bar) has no actuated joint."""
    robot = fourbar()
    crank3 = robot.links[2].replace(name="crank3", placement=[[1, 0, 0, 3], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    links = (*robot.links, robot.links[1].replace(name="coupler_b"), crank3)
    with pytest.raises(ModelError, match="loop 'b': none of its joints") as info:
        robot.replace(links=links, parent=(-1, 0, -1, 2, -1),
                      loops=(*robot.loops, Loop(("coupler_b", "crank3"), name="b")))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("entry", "message"), [
    ("{links: [2]}", "expected two links"),
    ("{links: [2, -1]}", "not a link number"),
    ("{links: [2, 9]}", "not a link number \\(1 to 3"),
    ("{links: [2, 3], colour: red}", "unknown field 'colour'"),
    ("{name: x}", "links: missing"),
    ("{links: [2, 3], placements: [[[1, 0], [0, 1]], null]}", "4x4"),
    ("{links: [2, true]}", "expected a link name or number"),
    ("7", "expected a mapping"),
])
def test_hostile_loops_in_a_model_file(entry: str, message: str, tmp_path: Path) -> None:
    text = rd.load("fourbar_parallelogram").save(tmp_path / "ok.yaml").read_text().split("loops:")[0]
    (tmp_path / "bad.yaml").write_text(text + f"loops:\n  - {entry}\n")
    with pytest.raises(ModelError, match=message) as info:
        rd.load(tmp_path / "bad.yaml")
    assert "\n" not in str(info.value)


def test_more_loops_than_links_are_refused_before_any_geometry() -> None:
    """A model file listing thousands of loops is refused at once (each closure fixes a passive joint)."""
    from robodyn.formats.model_file import manipulator_from_dict

    data = rd.load("fourbar_parallelogram").to_dict()
    data["loops"] = [{**data["loops"][0], "name": f"bar{k}"} for k in range(5000)]
    with pytest.raises(rd.ModelError, match=r"^field 'loops': 5000 loop closures on 3 links"):
        manipulator_from_dict(data)

"""A robot's structure, computed once (robodyn.model.structure): the kind of every built-in robot, of a floating robot
(example-robot-data's solo12), a ball-joint one, a coupled one and one with implicit loops; cached per robot; and the
one-line refusal every door words with :func:`~robodyn.model.structure.refuse`."""

from __future__ import annotations

import gc
import warnings

import pytest

import robodyn as rd
from robodyn.errors import ModelError
from robodyn.library import names
from robodyn.model.couplings import Coupling
from robodyn.model.manipulator import Link, Manipulator
from robodyn.model.structure import IMPLICIT, PROJECTED, TREE, refuse, structure


def _load(name: str) -> rd.Manipulator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        return rd.load(name)


def ball() -> Manipulator:
    """A ball joint on the base carrying a revolute one."""
    return Manipulator(links=[Link(joint="S", a=0.2, mass=1.0, inertia=[0.1, 0.1, 0.1]),
                              Link(joint="R", a=0.3, mass=1.0, inertia=[0.1, 0.1, 0.1])], name="ball")


@pytest.mark.parametrize("name", names())
def test_every_built_in_robot_has_its_kind(name: str) -> None:
    robot = _load(name)
    shape = structure(robot)
    expected = IMPLICIT if robot.implicit else PROJECTED if robot.couplings else TREE
    assert (shape.kind, shape.floating, shape.nq, shape.nv, shape.n) == (expected, False, robot.nq, robot.nv, robot.n)
    assert "".join(shape.joints) == robot.joint_types and not shape.manifold and shape.multi_dof == ()
    assert (shape.couplings, shape.loops, shape.implicit) == (robot.couplings, robot.loops, robot.implicit)


def test_the_closures_of_the_library() -> None:
    assert structure(_load("puma560")).kind == TREE and structure(_load("puma560")).variety == ""
    crank = structure(_load("fourbar_crank_rocker"))
    assert (crank.kind, crank.four_bars, crank.variety, crank.nv) == (PROJECTED, ("fourbar",), "four-bars", 1)
    pallet = structure(_load("palletizer_kr700pa"))  # two parallelograms: linear couplings, no four-bar's map
    assert (pallet.kind, pallet.four_bars, pallet.variety, len(pallet.couplings)) == \
        (PROJECTED, (), "coupled joints", 4)
    fivebar = structure(_load("fivebar"))
    assert (fivebar.kind, fivebar.implicit, fivebar.variety, fivebar.nq, fivebar.n) == \
        (IMPLICIT, ("fivebar",), "implicit loops", 2, 4)


def test_a_coupled_robot() -> None:
    geared = _load("puma560").replace(couplings=(Coupling(4, 3, -2, 0.3),))
    shape = structure(geared)
    assert (shape.kind, shape.nq, shape.nv, shape.variety, shape.four_bars) == (PROJECTED, 5, 5, "coupled joints", ())
    assert shape.couplings == geared.couplings and int(shape.couplings[0].joint) == 4


def test_a_ball_joint_robot_on_a_fixed_and_a_floating_base() -> None:
    fixed = structure(ball())
    assert (fixed.kind, fixed.floating, fixed.joints, fixed.nq, fixed.nv) == (TREE, False, ("S", "R"), 5, 4)
    assert (fixed.multi_dof, fixed.manifold, fixed.variety) == ((0,), True, "spherical joint")
    moving = structure(ball().replace(floating=True))
    assert (moving.kind, moving.floating, moving.nq, moving.nv, moving.variety) == (TREE, True, 12, 10, "floating base")


def test_a_floating_robot_from_example_robot_data() -> None:
    from benchmarks.urdf_survey import robots_directory

    root = robots_directory()
    if root is None:
        pytest.skip("example-robot-data is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solo = rd.load(str(root / "solo_description/robots/solo12.urdf"), floating=True, mimic="independent")
    shape = structure(solo)
    assert (shape.kind, shape.floating, shape.joints, shape.nq, shape.nv) == (TREE, True, ("R",) * 12, 19, 18)
    assert shape.manifold and shape.multi_dof == () and shape.variety == "floating base"


def test_it_is_computed_once_per_robot() -> None:
    robot = _load("puma560")
    assert structure(robot) is structure(robot)
    other = robot.replace(name="other")
    assert structure(other) is not structure(robot) and structure(other).name == "other"
    with pytest.raises(AttributeError):
        structure(robot).kind = IMPLICIT  # type: ignore[misc]  # frozen
    from robodyn.model import structure as module

    gc.collect()  # (the robots of earlier tests in this process forgotten first: only ``other`` goes below)
    before = len(module._CACHE)
    del other
    gc.collect()
    assert len(module._CACHE) == before - 1  # forgotten with its robot


def test_a_refusal_is_one_line_naming_the_robot_what_it_has_and_the_feature() -> None:
    error = refuse(ball(), "fext")
    assert isinstance(error, ModelError) and str(error) == "ball: spherical joint: fext is not handled yet"
    assert str(refuse(_load("fivebar"), "friction")) == "fivebar: implicit loops: friction is not handled yet"
    assert str(refuse(ball(), "x", what="a thing", field="joint")) == \
        "field 'joint': ball: a thing: x is not handled yet"

"""Validation at construction: every bad input is a one-line ModelError naming link and field."""

from __future__ import annotations

import warnings

import pytest
import sympy

import robodyn as rd
from robodyn.errors import ModelError, ModelWarning

GOOD = {"joint": "R", "a": 0.3, "alpha": 0, "d": 0, "theta": 0, "mass": 1.0,
        "com": [0, 0, 0], "inertia": [0.1, 0.1, 0.1]}


def arm(**changes):
    second = dict(GOOD)
    second.update(changes)
    return rd.Manipulator.from_dh([GOOD, second])


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"joint": "X"}, "joint", "unknown joint type"),
        ({"joint": 3}, "joint", "unknown joint type"),
        ({"com": [0, 0]}, "com", "3 components"),
        ({"com": "0, 0, 0"}, "com", "list of 3"),
        ({"inertia": [[1, 0], [0, 1]]}, "inertia", "3x3"),
        ({"inertia": [1, 2]}, "inertia", "3x3"),
        ({"inertia": [[1, 0.1, 0], [0, 1, 0], [0, 0, 1]]}, "inertia", "not symmetric"),
        ({"inertia": [[1, 2, 0], [2, 1, 0], [0, 0, 1]]}, "inertia", "not positive semidefinite"),
        ({"inertia": [-1, 1, 1]}, "inertia", "negative"),
        ({"mass": -1.0}, "mass", "negative"),
        ({"mass": float("nan")}, "mass", "finite"),
        ({"a": float("inf")}, "a", "finite"),
        ({"alpha": "pi/"}, "alpha", "cannot parse"),
        ({"d": "import os"}, "d", "cannot parse"),
        ({"theta": "q2"}, "theta", "reserved"),
        ({"damping": -0.1}, "damping", "negative"),
        ({"armature": -1}, "armature", "negative"),
        ({"inertia": [[1, 0, 0], [0, 1, 0], [0, 0, "nan"]]}, "inertia[2][2]", ""),
    ],
)
def test_bad_link_fields(changes, field, words):
    with pytest.raises(ModelError) as info:
        arm(**changes)
    message = str(info.value)
    assert "link 2" in message
    assert f"'{field}'" in message
    assert words in message
    assert "\n" not in message
    assert info.value.link == 2


def test_unknown_link_key_is_named():
    with pytest.raises(ModelError) as info:
        arm(masss=1.0)
    assert "link 2" in str(info.value)


def test_manipulator_level_fields():
    with pytest.raises(ModelError, match="convention"):
        rd.Manipulator.from_dh([GOOD], convention="craig")
    with pytest.raises(ModelError, match="gravity"):
        rd.Manipulator.from_dh([GOOD], gravity=[0, 0])
    with pytest.raises(ModelError, match="links"):
        rd.Manipulator(links=())
    with pytest.raises(ModelError, match="tool"):
        rd.Manipulator.from_dh([GOOD], tool=[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 1]])


def test_zero_mass_is_allowed():
    robot = arm(mass=0, inertia=[0, 0, 0])
    assert robot.links[1].mass == 0


def test_missing_com_and_inertia_default_to_a_point_mass():
    link = rd.Link(joint="R", a=1, mass="m")
    assert link.com == (0, 0, 0)
    assert link.inertia == sympy.zeros(3, 3)


def test_triangle_inequality_warns_and_strict_refuses():
    bad = dict(GOOD, inertia=[0, 62, 0])
    with pytest.warns(ModelWarning, match=r"link 1.*triangle"):
        rd.Manipulator.from_dh([bad])
    with pytest.raises(ModelError, match=r"link 1.*triangle"):
        rd.Manipulator.from_dh([bad], strict=True)


def test_valid_tensor_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rd.Manipulator.from_dh([dict(GOOD, inertia=[0.003, 0.001, 0.002])])  # 0.001 + 0.002 = 0.003 exactly


def test_frozen_and_symbolic():
    robot = rd.load("double_pendulum")
    with pytest.raises(AttributeError):
        robot.name = "other"  # type: ignore[misc]
    assert [s.name for s in robot.parameters()] == ["L1", "L2", "g", "m1", "m2"]
    numeric = robot.subs({"L1": 1, "L2": sympy.Rational(1, 2), "m1": 2, "m2": 1, "g": 9.81})
    assert numeric.is_numeric


def test_payload_validated(tmp_path):
    with pytest.raises(ModelError, match=r"'mass'.*negative"):
        rd.Payload(mass=-1)
    path = tmp_path / "arm.yaml"
    path.write_text("links:\n  - {joint: R, a: 1}\npayload: {mass: -1}\n")
    with pytest.raises(ModelError, match=r"arm\.yaml: payload: field 'mass'"):
        rd.load(path)


def test_placement_written_with_floats(tmp_path):
    """SymPy 1.13: Float(1.0) != 1; a last row [0.0, 0.0, 0.0, 1.0] (NumPy's tolist(), YAML) is [0, 0, 0, 1]."""
    import numpy as np

    link = rd.Link(placement=np.eye(4).tolist())
    assert not link.has_placement and link.placement == sympy.eye(4)
    c, s = np.cos(0.3), np.sin(0.3)
    P = np.array([[c, -s, 0, 0.1], [s, c, 0, 0.0], [0, 0, 1, 0.2], [0, 0, 0, 1.0]])
    link = rd.Link(placement=P.tolist())
    assert link.has_placement and list(link.placement[3, :]) == [0, 0, 0, 1]
    assert all(isinstance(x, sympy.Integer) for x in link.placement[3, :])
    with pytest.raises(ModelError, match="last row"):
        rd.Link(placement=[[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0], [0, 0, 0.5, 1.0]])
    path = tmp_path / "arm.yaml"
    path.write_text("convention: modified\nlinks:\n  - {joint: R, a: 1.0, mass: 1.0}\n"
                    "  - joint: R\n    a: 0.5\n    mass: 1.0\n"
                    "    placement: [[0.0, -1.0, 0.0, 0.1], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.2],"
                    " [0.0, 0.0, 0.0, 1.0]]\n")
    robot = rd.load(path)
    assert robot.links[1].has_placement and list(robot.links[1].placement[3, :]) == [0, 0, 0, 1]
    assert rd.load(robot.save(tmp_path / "again.yaml")).links[1].placement == robot.links[1].placement

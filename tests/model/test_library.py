"""The built-in robots: each loads, says where it comes from, and matches its source's data."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

import robodyn as rd
from robodyn.formulations import kinematics
from tests.conftest import load_quiet
from tests.helpers import numeric, state_values

EXPECTED = {
    "double_pendulum": ("RR", "standard", 5),
    "two_link_fu": ("RR", "standard", 4),
    "two_link_payload": ("RR", "standard", 8),
    "stanford_modified": ("RRP", "standard", 18),
    "puma560_symbolic": ("RRRRRR", "modified", 42),
    "puma560": ("RRRRRR", "standard", 0),
    "puma560_rtb": ("RRRRRR", "standard", 0),
    "stanford_arm": ("RRPRRR", "modified", 0),
    "industrial_6r": ("RRRRRR", "modified", 0),
}


def test_every_robot_is_listed():
    assert sorted(EXPECTED) == rd.library.names()
    for entry in rd.library.entries():
        assert entry.description and entry.source
        # each names the text its data come from, by its authors (or the Toolbox whose numbers it carries)
        cited = ("Horn and Linge", "Burdick", "Fu, Gonzalez and Lee", "Angeles, Ma and Rojas", "Macsyma",
                 "Robotics Toolbox")
        assert any(text in entry.source for text in cited), entry.name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_loads_with_expected_structure(name):
    robot = load_quiet(name)
    joints, convention, parameters = EXPECTED[name]
    assert (robot.joint_types, robot.convention, len(robot.parameters())) == (joints, convention, parameters)


def test_industrial_6r_is_converted_from_angeles_notation():
    """Table 3 of seed 003: b1 = -1.5, b6 = -0.41 become d1 = 1.5, d6 = 0.41; alpha_i -> alpha_{i-1}."""
    robot = load_quiet("industrial_6r")
    assert [float(link.d) for link in robot.links] == [1.5, 0, 0, 0, 0, 0.41]
    assert [link.alpha for link in robot.links] == [0, sympy.pi / 2, 0, 0, sympy.pi / 2, sympy.pi / 2]
    assert [float(link.a) for link in robot.links] == [0, 0, 1.02, 1.02, 0.2, 0]
    # at table 3's initial angles the wrist centre of frame 6 lies on the line x = 1.33 (to 0.01)
    q0 = np.deg2rad([0, 68.5, -135, 39.6, 90, 90])
    T = numeric(kinematics.forward_kinematics(robot), state_values(6, q0))
    assert abs(T[0, 3] - 1.33) < 0.01 and abs(T[1, 3]) < 1e-12


def test_industrial_6r_warns_about_link_one_as_published():
    with pytest.warns(rd.ModelWarning, match=r"industrial_6r\.yaml: link 1"):
        rd.load("industrial_6r")
    with pytest.raises(rd.ModelError, match="strict"):
        rd.load("industrial_6r", strict=True)


def test_puma560_matches_the_toolbox_file():
    import json
    from pathlib import Path

    rtb = json.loads((Path(__file__).parents[1] / "data" / "puma560_rtb.json").read_text())
    robot = load_quiet("puma560")
    for link, ref in zip(robot.links, rtb["links"], strict=True):
        assert float(link.a) == ref["a"] and float(link.d) == ref["d"] and float(link.mass) == ref["m"]
        assert abs(float(link.alpha) - ref["alpha"]) < 1e-15
        assert [float(x) for x in link.com] == ref["r"]
        assert np.array(link.inertia, dtype=float).tolist() == ref["I"]

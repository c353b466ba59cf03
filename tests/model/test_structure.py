"""``robodyn show`` draws a robot's structure (robodyn.model.tables.structure): the tree, each loop closure at both of
its links, which kind of loop (parallelogram, four-bar in closed form, implicit) and each joint's part in the
coordinates (actuated, passive, coupled)."""

from __future__ import annotations

import subprocess
import sys

import robodyn as rd
from robodyn.model.tables import loop_kind, structure


def test_each_kind_of_loop_is_named_and_each_passive_joint_says_why() -> None:
    assert [loop_kind(rd.load(name), loop) for name, loop in (("palletizer_kr700pa", "lower"),
                                                               ("fourbar_crank_rocker", "fourbar"),
                                                               ("fivebar", "fivebar"))] == \
        ["parallelogram", "four-bar", "implicit"]
    assert structure(rd.load("fourbar_crank_rocker")) == [
        "base",
        "├── 1 crank (R, actuated)",
        "│   └── 2 coupler (R, passive: closed form of crank, loop fourbar)  <- loop fourbar",
        "└── 3 rocker (R, passive: closed form of crank, loop fourbar)  <- loop fourbar",
        "loop fourbar: a revolute joint closes coupler and rocker (four-bar)",
    ]
    fivebar = structure(rd.load("fivebar"))
    assert "│   └── 2 rod1 (R, passive: implicit loop fivebar)  <- loop fivebar" in fivebar
    assert fivebar[-1] == "loop fivebar: a revolute joint closes rod1 and rod2 (implicit)"
    palletizer = structure(rd.load("palletizer_kr700pa"))
    assert "    │   │   └── 4 wrist (R, passive: follows lower_arm and upper_arm, loop upper)  <- loop upper" in \
        palletizer
    assert sum(line.count("<- loop") for line in palletizer) == 4  # two loops, each at its two links


def test_a_coupled_tree_and_a_serial_chain() -> None:
    robot = rd.load("puma560").replace(couplings=[rd.model.couplings.Coupling(5, 4, -2, 0)])
    lines = structure(robot)
    assert lines[0] == "base" and lines[-1].endswith("6 (R, coupled: follows 5)")
    assert all("independent" in line for line in lines[1:-1])


def test_show_prints_the_structure_in_a_fresh_process() -> None:
    result = subprocess.run([sys.executable, "-m", "robodyn", "show", "fivebar"], capture_output=True, text=True,
                            timeout=300, env={"COLUMNS": "200", "PATH": ""})
    assert result.returncode == 0, result.stderr
    assert "structure:" in result.stdout and "(implicit)" in result.stdout
    assert "└── 4 rod2 (R, passive: implicit loop fivebar)  <- loop fivebar" in result.stdout

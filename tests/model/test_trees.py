"""Kinematic trees in the model: ``parent`` per link, checked, written back, converted between conventions.

The test tree (tests/data/torso_two_arms.yaml) is a torso with two 3-joint arms, one joint prismatic.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import sympy
from typer.testing import CliRunner

import robodyn as rd
from robodyn.cli import app
from robodyn.errors import ModelError
from robodyn.model.dh import joint_frames

TREE = Path(__file__).parents[1] / "data" / "torso_two_arms.yaml"
BODY = {"mass": 1, "com": [0, 0, 0], "inertia": [1, 1, 1]}


def rows(*parents, names=True):
    out = []
    for k, parent in enumerate(parents):
        row = {"joint": "R", "a": 1, **BODY}
        if names:
            row["name"] = f"j{k + 1}"
        if parent is not None:
            row["parent"] = parent
        out.append(row)
    return out


def test_the_test_tree_loads_as_a_tree():
    robot = rd.load(TREE)
    assert robot.is_tree
    assert robot.parents == (-1, 0, 1, 2, 0, 4, 5)
    assert robot.children(0) == (1, 4)
    assert robot.children(-1) == (0,)
    assert robot.ancestors(3) == (3, 2, 1, 0)
    assert robot.label(4) == "r_shoulder"
    assert robot.joint_types == "RRRPRRR"


def test_a_serial_parent_list_is_a_chain():
    robot = rd.Manipulator.from_dh(rows(None, None, None), parent=(-1, 0, 1))
    assert not robot.is_tree and robot.parent is None
    assert robot.parents == (-1, 0, 1)
    assert robot == rd.Manipulator.from_dh(rows(None, None, None))


def test_parents_by_name_and_by_index_agree():
    by_name = rd.Manipulator.from_dh(rows(None, None, None), parent=("base", "j1", "j1"))
    by_index = rd.Manipulator.from_dh(rows(None, None, None), parent=(-1, 0, 0))
    assert by_name.parents == by_index.parents == (-1, 0, 0)


@pytest.mark.parametrize(
    ("parent", "words"),
    [
        (("base", "j3", "j2"), "cycle: links 2 -> 3 -> 2"),
        ((-1, 2, 0), "listed after this one"),
        ((-1, 1, 0), "own parent"),
        ((-1, "nobody", 0), "no link is named 'nobody'"),
        ((-1, 5, 0), "not a link index"),
        ((-1, True, 0), "not a link index"),
        ((-1, 0), "2 parents for 3 links"),
        ("j1", "one parent per link"),
    ],
)
def test_bad_parents_are_one_line_errors(parent, words):
    with pytest.raises(ModelError, match="parent") as info:
        rd.Manipulator.from_dh(rows(None, None, None), parent=parent)
    message = str(info.value)
    assert words in message and "\n" not in message


def test_duplicate_link_names_are_refused():
    links = rows(None, None)
    links[1]["name"] = "j1"
    with pytest.raises(ModelError, match=r"link 2.*name.*also link 1"):
        rd.Manipulator.from_dh(links)


def test_link_names_follow_the_identifier_grammar():
    links = rows(None)
    links[0]["name"] = "bad name"
    with pytest.raises(ModelError, match="not a valid name"):
        rd.Manipulator.from_dh(links)


@pytest.mark.parametrize(
    ("parent", "words"),
    [(3, "not the number of a link listed before"), (-1, "not the number"), (1.5, "expected a link name"),
     ("nobody", "no link is named")],
)
def test_model_file_parent_errors_name_the_file_link_and_field(tmp_path, parent, words):
    text = TREE.read_text().replace("parent: torso\n    joint: R\n    alpha: pi/2",
                                    f"parent: {parent}\n    joint: R\n    alpha: pi/2")
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ModelError) as info:
        rd.load(path)
    message = str(info.value)
    assert str(path) in message and "link 2" in message and "parent" in message and words in message


def test_model_file_parent_numbers_count_from_one(tmp_path):
    text = TREE.read_text().replace("parent: torso", "parent: 1")
    path = tmp_path / "numbers.yaml"
    path.write_text(text)
    assert rd.load(path) == rd.load(TREE)


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_trees_round_trip_through_model_files(tmp_path, suffix):
    robot = rd.load(TREE)
    path = robot.save(tmp_path / f"tree{suffix}")
    assert rd.load(path) == robot
    unnamed = robot.replace(links=tuple(link.replace(name="") for link in robot.links))
    path = unnamed.save(tmp_path / f"unnamed{suffix}")
    assert rd.load(path) == unnamed


def _world_joint_frames(robot: rd.Manipulator, q: list[sympy.Expr]) -> list[sympy.Matrix]:
    """Each joint frame (after B_i S_i) in the base frame, composed along the parents (an independent
    composition, from the DH split of robodyn.model.dh)."""
    link_frames, joint_frames_out = [], []
    for k, link in enumerate(robot.links):
        f = joint_frames(link, robot.convention, q[k])
        p = robot.parents[k]
        parent = link_frames[p] if p >= 0 else sympy.eye(4)
        joint = parent * sympy.Matrix(f.B * f.S)
        joint_frames_out.append(joint)
        link_frames.append(joint * sympy.Matrix(f.C))
    return joint_frames_out


@pytest.mark.parametrize("start", ["modified", "standard"])
def test_conventions_describe_the_same_tree(start):
    robot = rd.load(TREE).subs({"g": 9.81})
    robot = robot.to_convention(start)
    other = robot.to_convention("standard" if start == "modified" else "modified")
    assert other.parents == robot.parents
    back = other.to_convention(start)
    rng = random.Random(3)
    q = [sympy.Rational(rng.randint(-300, 300), 100) for _ in range(robot.n)]
    for frames in (_world_joint_frames(other, q), _world_joint_frames(back, q)):
        for expected, got in zip(_world_joint_frames(robot, q), frames, strict=True):
            assert float(max(abs(x) for x in (expected - got).evalf())) < 1e-12


def test_kane_refuses_the_placements_of_the_test_tree_in_one_line():
    """Every formulation derives trees (tests/formulations/test_trees_symbolic.py); Kane's algorithm (Angeles' notation)
    cannot express the fixed placements of the tree's shoulders, and says so in one line."""
    result = CliRunner().invoke(app, ["derive", str(TREE), "--method", "kane"])
    assert result.exit_code == 2
    assert "link 2 has a fixed placement" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_base_is_not_a_link_name():
    links = rows(None, None)
    links[1]["name"] = "base"
    with pytest.raises(ModelError, match="'base' names the base"):
        rd.Manipulator.from_dh(links)

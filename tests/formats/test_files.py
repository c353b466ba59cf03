"""Model files: exact round trips, safe reading, errors naming file, link and field."""

from __future__ import annotations

import json
import warnings

import pytest
import sympy
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.errors import ModelError
from robodyn.model.files import atomic_write, dumps
from tests.conftest import load_quiet, random_robot


@pytest.mark.parametrize("name", rd.library.names())
@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_library_round_trip_is_exact(name, suffix, tmp_path):
    robot = load_quiet(name)
    path = robot.save(tmp_path / f"{name}{suffix}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        again = rd.load(path)
    assert again == robot
    assert dumps(again, json_format=suffix == ".json") == path.read_text()


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 7), convention=st.sampled_from(["standard", "modified"]))
def test_random_round_trip_is_exact(seed, n, convention, tmp_path_factory):
    robot = random_robot(seed, n, convention)
    path = robot.save(tmp_path_factory.mktemp("rt") / "arm.yaml")
    assert rd.load(path) == robot


def write(tmp_path, text, name="arm.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


GOOD_FILE = """
name: arm
convention: standard
gravity: [0, 0, -g]
links:
  - {joint: R, a: l1, alpha: 0, d: 0, theta: 0, mass: m1, com: [0, 0, 0], inertia: [0, 0, I1]}
  - {joint: R, a: l2, alpha: 0, d: 0, theta: 0, mass: m2}
"""


def test_good_file_loads(tmp_path):
    robot = rd.load(write(tmp_path, GOOD_FILE))
    assert robot.n == 2


@pytest.mark.parametrize(
    ("replace", "by", "expect"),
    [
        ("joint: R, a: l2", "joint: Q, a: l2", ["link 2", "'joint'"]),
        ("mass: m2", "mass: -3", ["link 2", "'mass'", "negative"]),
        ("mass: m2", "mass: m2, colour: red", ["link 2", "'colour'", "unknown field"]),
        ("a: l1", "a: __import__('os')", ["link 1", "'a'"]),
        ("a: l1", "a: open('x')", ["link 1", "'a'", "not allowed"]),
        ("inertia: [0, 0, I1]", "inertia: [[1, 2, 0], [0, 1, 0], [0, 0, 1]]", ["link 1", "'inertia'", "symmetric"]),
        ("convention: standard", "convention: craig", ["'convention'"]),
        ("gravity: [0, 0, -g]", "gravity: [0, -g]", ["'gravity'"]),
        ("name: arm", "name: arm\nwheels: 4", ["'wheels'", "unknown field"]),
    ],
)
def test_bad_files_name_file_link_and_field(tmp_path, replace, by, expect):
    path = write(tmp_path, GOOD_FILE.replace(replace, by))
    with pytest.raises(ModelError) as info:
        rd.load(path)
    message = str(info.value)
    assert message.startswith(str(path))
    for word in expect:
        assert word in message
    assert "\n" not in message


@pytest.mark.parametrize(
    "text",
    [
        "!!python/object/apply:os.system ['echo pwned']",
        "links: !!python/object/apply:os.system ['echo pwned']",
        "name: !!python/name:os.system\nlinks: []",
        "links: [\n",
        "- just\n- a list",
        "links: 5",
        "links: []",
        "links:\n  - 7",
        "links:\n  - {a: 1}",
        "a: &a [1, 1]\nb: &b [*a, *a]\nname: *b\nlinks:\n  - {joint: R}",
        "links:\n  - {joint: R, mass: " + "9" * 5000 + "}",
        "links:\n  - {joint: R, a: '((10**64)**64)**64'}",
        "links:\n  - {joint: R, a: '" + "10**300*" * 100 + "1'}",
        "links:\n  - {joint: R, mass: 'sqrt(-1)*m'}",
        "links:\n  - {joint: R, inertia: [[1, '(2*a+2*b+2*c)**64', 0], ['2**63*(a+b+c)**64', 1, 0], [0, 0, 1]]}",
    ],
)
def test_hostile_or_broken_yaml(tmp_path, text):
    path = write(tmp_path, text)
    with pytest.raises(ModelError) as info:
        rd.load(path)
    assert str(info.value).startswith(str(path))


def test_huge_json_integer(tmp_path):
    path = write(tmp_path, '{"links": [{"joint": "R", "mass": ' + "9" * 5000 + "}]}", "big.json")
    with pytest.raises(ModelError) as info:
        rd.load(path)
    assert str(info.value).startswith(str(path)) and len(str(info.value)) < 300


def test_symmetric_tensor_written_two_ways_is_accepted(tmp_path):
    path = write(tmp_path, "links:\n  - {joint: R, inertia: [[1, 'a*(b+c)', 0], ['a*b + a*c', 2, 0], [0, 0, 2]]}\n")
    assert rd.load(path).links[0].inertia[0, 1] == sympy.sympify("a*(b+c)")


def test_json_with_same_structure(tmp_path):
    data = yaml.safe_load(GOOD_FILE)
    path = write(tmp_path, json.dumps(data), "arm.json")
    assert rd.load(path) == rd.load(write(tmp_path, GOOD_FILE))
    bad = write(tmp_path, "{not json", "bad.json")
    with pytest.raises(ModelError, match="not valid JSON"):
        rd.load(bad)


NOTED_FILE = """
name: arm
links:
  - {joint: R, mass: 1, inertia: [0, 0, 0.35], inertia_note: "only the moment about the joint axis is published"}
  - {joint: R, mass: 1, inertia: [0, 0, 0.35], name: elbow}
"""


def test_inertia_note_silences_that_link_only_and_round_trips(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = rd.load(write(tmp_path, NOTED_FILE))
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and "link 2: field 'inertia'" in messages[0], messages
    assert robot.inertia_notes == ("only the moment about the joint axis is published", "")
    for suffix in (".yaml", ".json"):
        path = robot.save(tmp_path / f"saved{suffix}")
        assert "inertia_note" in path.read_text()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rd.ModelWarning)
            assert rd.load(path) == robot
    # the API: a mapping of link (index or name) to text; conversions keep the notes
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        both = robot.replace(inertia_notes={0: "published so", "elbow": "published so"})
        assert both.to_convention("modified").inertia_notes == ("published so", "published so")
    assert [str(w.message) for w in caught] == []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        assert "inertia_note" not in dumps(robot.replace(inertia_notes=()))
    with pytest.raises(ModelError, match="strict"):
        rd.load(write(tmp_path, NOTED_FILE), strict=True)


@pytest.mark.parametrize(("value", "expect"), [
    ("{joint: R, inertia_note: 5}", ["link 1", "'inertia_note'", "expected text"]),
    ("{joint: R, inertia_note: [a]}", ["link 1", "'inertia_note'", "expected text"]),
])
def test_bad_inertia_note(tmp_path, value, expect):
    path = write(tmp_path, f"links:\n  - {value}\n")
    with pytest.raises(ModelError) as info:
        rd.load(path)
    message = str(info.value)
    assert message.startswith(str(path)) and "\n" not in message
    for word in expect:
        assert word in message, message


def test_bad_inertia_notes_in_the_api():
    link = rd.Link(joint="R")
    for notes, expect in [({3: "x"}, "not a link index"), ({"nope": "x"}, "not a link index"), (["a", "b"], "2 notes"),
                          ("text", "one text per link"), ([5], "expected text")]:
        with pytest.raises(ModelError, match=expect):
            rd.Manipulator(links=(link,), inertia_notes=notes)


def test_missing_file_and_unknown_name(tmp_path):
    with pytest.raises(ModelError, match="no such file"):
        rd.load(tmp_path / "absent.yaml")
    with pytest.raises(ModelError, match="neither a built-in robot"):
        rd.load("no_such_robot")


def test_angeles_notation_is_converted_once(tmp_path):
    """Angeles et al. eq. 7-8: alpha_{i-1}, a_{i-1} = their alpha_i, a_i and d_i = -b_i."""
    text = """
convention: angeles
links:
  - {joint: R, alpha: 0, a: 0, b: -1.5, theta: 0}
  - {joint: R, alpha: pi/2, a: 0.2, b: 0.41, theta: 0}
"""
    robot = rd.load(write(tmp_path, text))
    assert robot.convention == "modified"
    assert [link.d for link in robot.links] == [1.5, -0.41]
    assert [link.alpha for link in robot.links] == [0, sympy.pi / 2]
    assert [link.a for link in robot.links] == [0, sympy.Float(0.2)]
    with pytest.raises(ModelError, match="'d'"):
        rd.load(write(tmp_path, text.replace("b: -1.5", "d: -1.5")))


def test_atomic_write_leaves_no_partial_file(tmp_path, monkeypatch):
    target = tmp_path / "out.txt"
    target.write_text("old")

    class BoomError(Exception):
        pass

    import os

    def failing_replace(src, dst):
        raise BoomError

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(BoomError):
        atomic_write(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]

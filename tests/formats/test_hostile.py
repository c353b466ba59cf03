"""Hostile inputs (issue 28): YAML 1.1 numbers, malformed equations, oversized or ambiguous trajectory CSVs.

Each gives correct values or one clean line: a ModelError naming the file and field, at most 300 characters.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
import yaml

import robodyn as rd
import robodyn.analysis.trajectories as trajectories
from robodyn.analysis.trajectories import TrajectoryError, trajectory_from_csv
from robodyn.equations import read_dict
from robodyn.errors import ModelError
from robodyn.formats.model_file import parse_text, read_model_file
from robodyn.model.files import dumps

ARM = """\
name: one
links:
  - joint: R
    a: {a}
    alpha: 0
    d: 0
    theta: 0
    mass: {mass}
    com: [0, 0, 0]
    inertia: [0.1, 0.1, 0.1]
"""


def one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text and len(text) <= 300, text
    return text


def read_value(text: str) -> object:
    return parse_text(f"a: {text}\n", json_format=False, file="f.yaml")["a"]


# -- 1. YAML numbers as YAML 1.2 reads them, or refused where 1.1 disagrees ------------------------------------


@pytest.mark.parametrize("value", ["010", "-010", "007", "1:30", "1:30.5", "1_000", "1_000.5", "0b101", "0x1_F"])
def test_yaml_numbers_that_1_1_and_1_2_read_differently_are_refused(value, tmp_path):
    path = tmp_path / "arm.yaml"
    path.write_text(ARM.format(a=0, mass=value))
    with pytest.raises(ModelError) as info:
        read_model_file(path)
    text = one_line(info.value)
    assert str(path) in text and "field 'mass'" in text and "line 8" in text and repr(value) in text
    assert info.value.field == "mass"


def test_a_refused_number_inside_a_list_names_its_field(tmp_path):
    path = tmp_path / "arm.yaml"
    path.write_text(ARM.format(a=0, mass=1).replace("com: [0, 0, 0]", "com: [0, 010, 0]"))
    with pytest.raises(ModelError) as info:
        read_model_file(path)
    assert "field 'com'" in one_line(info.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10", 10), ("+5", 5), ("-7", -7), ("0", 0), ("0x1F", 31), ("0o17", 15), ("0.5", 0.5), (".5", 0.5),
        ("1e3", 1000.0), ("1.0e3", 1000.0), ("-2.5E-1", -0.25), (".inf", math.inf), ("-.inf", -math.inf),
        ("true", True), ("False", False), ("yes", "yes"), ("no", "no"), ("on", "on"), ("off", "off"),
        ("Yes", "Yes"), ("'2024-01-01'", "2024-01-01"), ("'010'", "010"), ('"1:30"', "1:30"), ("~", None),
        ("abc_def", "abc_def"),
    ],
)
def test_yaml_numbers_and_booleans_read_as_yaml_1_2_core(text, expected):
    value = read_value(text)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize("text", ["2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5"])
def test_yaml_1_1_dates_are_refused(tmp_path, text):
    """YAML 1.1 reads a date (the loader refused it as a mass); YAML 1.2 reads text, which the expression
    language would take for arithmetic (2001-12-14 = 1975): refused, naming the field."""
    path = tmp_path / "dated.yaml"
    path.write_text(f"name: dated\nlinks:\n  - {{joint: R, a: 0.5, mass: {text}}}\n")
    with pytest.raises(ModelError, match=r"field 'mass'.*read differently by YAML 1\.1 and 1\.2"):
        read_model_file(path)


def test_yaml_nan_reads_as_nan():
    assert math.isnan(read_value(".nan"))


def test_the_safe_loader_itself_is_left_as_it_is():
    read_value("1")
    assert yaml.safe_load("a: 010") == {"a": 8}
    assert yaml.safe_load("a: yes") == {"a": True}


def test_a_refused_document_scalar_is_one_line():
    with pytest.raises(ModelError) as info:
        parse_text("010", json_format=False, file="f.yaml")
    assert one_line(info.value).startswith("f.yaml: line 1: '010'")


def test_a_model_file_with_plain_numbers_still_loads(tmp_path):
    path = tmp_path / "arm.yaml"
    path.write_text(ARM.format(a="0x1", mass="1e1"))
    robot = read_model_file(path)
    assert robot.n == 1


# -- 2. read_dict on anything but a mapping, and on deep nesting ---------------------------------------------


@pytest.mark.parametrize("data", [[], [1, 2], None, "tau", 3, 2.5])
def test_read_dict_refuses_anything_but_a_mapping(data):
    with pytest.raises(ModelError) as info:
        read_dict(data)
    assert "expected a mapping" in one_line(info.value)


def test_read_dict_refuses_deep_nesting():
    deep: object = "q1"
    for _ in range(600):
        deep = [deep]
    with pytest.raises(ModelError) as info:
        read_dict({"q": ["q1"], "tau": deep})
    text = one_line(info.value)
    assert "field 'tau'" in text and "nested" in text


def test_read_dict_still_reads_a_matrix():
    out = read_dict({"q": ["q1"], "M": [["q1", "0"], ["0", "1"]], "tau": ["q1"]})
    assert out["M"].shape == (2, 2) and out["tau"].shape == (1, 1)


# -- 3. trajectory CSVs -----------------------------------------------------------------------------------


def test_csv_field_over_the_csv_limit_is_one_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("t,q1\n0,0\n1," + "1" * 140_000 + "\n2,0\n")
    with pytest.raises(TrajectoryError) as info:
        trajectory_from_csv(path, 1)
    text = one_line(info.value)
    assert str(path) in text and "line" in text


def test_csv_long_number_is_one_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("t,q1\n0,0\n1," + "x" * 100_000 + "\n2,0\n")
    with pytest.raises(TrajectoryError) as info:
        trajectory_from_csv(path, 1)
    assert "not a number" in one_line(info.value)


@pytest.mark.parametrize("header", ["t,q1,q1", "t,q1,t", "t,Q1,q1"])
def test_csv_duplicated_column_is_refused(tmp_path, header):
    path = tmp_path / "t.csv"
    path.write_text(header + "\n0,0,0\n1,1,1\n2,2,2\n")
    with pytest.raises(TrajectoryError) as info:
        trajectory_from_csv(path, 1)
    text = one_line(info.value)
    assert str(path) in text and "twice" in text


@pytest.mark.parametrize("header", ["", "t,q1\n"])
def test_csv_more_rows_than_max_samples_is_refused(tmp_path, monkeypatch, header):
    monkeypatch.setattr(trajectories, "MAX_SAMPLES", 5)
    path = tmp_path / "t.csv"
    path.write_text(header + "".join(f"{k},{k}\n" for k in range(6)))
    with pytest.raises(TrajectoryError) as info:
        trajectory_from_csv(path, 1)
    text = one_line(info.value)
    assert str(path) in text and "more than 5 rows" in text
    path.write_text(header + "".join(f"{k},{k}\n" for k in range(5)))
    assert trajectory_from_csv(path, 1).t.size == 5


@pytest.mark.parametrize("text", ["1e3", "0o17", "0x1F", ".inf", "-.Inf", ".nan", "true", "False", "null", "~", "5"])
def test_model_files_write_text_that_reads_back_as_text(text: str) -> None:
    """The writer (YAML 1.1, PyYAML's) quotes the text that the reader (YAML 1.2) would take for a number, a
    boolean or null: a description written is read back as written."""
    robot = dataclasses.replace(rd.load("double_pendulum"), description=text)
    data = parse_text(dumps(robot), json_format=False)
    assert data["description"] == text


def test_escaped_surrogate_pairs_are_one_character_and_lone_surrogates_are_refused(tmp_path) -> None:
    """JSON writers escape an emoji as a UTF-16 pair ("\\ud83e\\udd16"); PyYAML decodes the two halves apart. The
    model-file reader joins a pair into its character, as JSON does, and a lone half is refused as not text."""
    assert parse_text('d: "\\ud83e\\udd16 robot"', json_format=False) == {"d": "\U0001f916 robot"}
    path = tmp_path / "lone.yaml"
    path.write_text('name: lone\ndescription: "a \\ud800 b"\nlinks:\n  - {joint: R, a: 0.5, mass: 1}\n')
    with pytest.raises(ModelError, match=r"lone\.yaml: field 'description': not valid Unicode text"):
        read_model_file(path)

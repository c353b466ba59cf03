"""Random model data, expression strings and URDF mutations: a Manipulator or a ModelError, nothing else.

The readers are the API under the CLI (``manipulator_from_dict``, ``rd.load``, the expression whitelist of
:mod:`robodyn.model.expr`, :func:`robodyn.formats.urdf.read_urdf`); any other exception is a crash the CLI would print
as
a traceback. Examples are few (the ``fuzz`` settings) so this runs in seconds; raise ``ROBODYN_FUZZ_EXAMPLES``
for a longer search.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import pytest
import sympy
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import robodyn as rd
from robodyn.errors import ModelError
from robodyn.formats.model_file import manipulator_from_dict, parse_text
from robodyn.model.expr import parse_expression, to_expr

EXAMPLES = int(os.environ.get("ROBODYN_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                              HealthCheck.data_too_large])

# -- values and models ----------------------------------------------------------------------------------------

TOKENS = ["l1", "m2", "a_3", "pi", "sin", "cos", "sqrt", "q1", "qd2", "nan", "inf", "__import__", "os", "lambda",
          "x", "0", "1", "2", "0.5", "1e308", "1e999", "64", "65", "9" * 40, "+", "-", "*", "/", "**", "%", "//",
          "(", ")", ",", ".", "[", "]", "'", "\"", ":", " ", "!", "=", "@", "{", "}", "\\", "\n"]

expression_text = st.one_of(
    st.lists(st.sampled_from(TOKENS), max_size=12).map("".join),
    st.text(max_size=30),
    st.builds(lambda a, op, b: f"{a}{op}{b}", st.sampled_from(TOKENS[:20]), st.sampled_from(["+", "-", "*", "/",
                                                                                          "**"]),
              st.sampled_from(TOKENS[:20])),
)
numbers = st.one_of(
    st.integers(min_value=-(10**400), max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -0.0, 1e-320, 1e308, -1e308, 2**64, True, False]),
)
scalars = st.one_of(numbers, expression_text, st.none(), st.just(""), st.binary(max_size=4))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=5),
                                                        st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                      max_leaves=20)


def vector(size: int = 3) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(st.one_of(numbers, expression_text), min_size=size, max_size=size), values)


inertia = st.one_of(vector(3), st.lists(vector(3), min_size=3, max_size=3), values)
transform = st.one_of(st.lists(vector(4), min_size=4, max_size=4), values)
link = st.fixed_dictionaries(
    {"joint": st.one_of(st.sampled_from(["R", "P", "r", "revolute", "PRISMATIC", "S", ""]), values)},
    optional={"a": st.one_of(numbers, expression_text), "alpha": st.one_of(numbers, expression_text),
              "d": st.one_of(numbers, expression_text), "theta": st.one_of(numbers, expression_text),
              "b": numbers, "mass": st.one_of(numbers, expression_text, values), "com": vector(),
              "inertia": inertia, "damping": numbers, "armature": numbers, "placement": transform,
              "extra": values},
)
model = st.fixed_dictionaries(
    {"links": st.one_of(st.lists(st.one_of(link, values), min_size=0, max_size=3), values)},
    optional={"name": st.one_of(st.text(max_size=20), values), "convention": st.one_of(
        st.sampled_from(["standard", "modified", "angeles", "dh"]), values), "gravity": vector(),
              "description": values, "tip_load": st.one_of(st.fixed_dictionaries(
                  {}, optional={"force": vector(), "moment": vector()}), values),
              "payload": st.one_of(st.fixed_dictionaries({}, optional={"mass": numbers, "com": vector(),
                                                                      "inertia": inertia}), values),
              "tool": transform},
)


def build_or_refuse(build: Any) -> None:
    """Call ``build()``: a Manipulator or a ModelError with a one-line message are fine; anything else fails."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            robot = build()
        except ModelError as exc:
            assert "\n" not in str(exc) and str(exc).strip()
            return
    assert isinstance(robot, rd.Manipulator)
    for value in (*robot.gravity, *(x for link in robot.links for x in (link.a, link.mass, *link.com))):
        if value.is_number:
            assert math.isfinite(float(value))


@FUZZ
@given(model)
def test_model_dict_builds_or_is_refused(data: dict[str, Any]) -> None:
    build_or_refuse(lambda: manipulator_from_dict(data))


@FUZZ
@given(model, st.sampled_from(["yaml", "json"]))
def test_model_file_loads_or_is_refused(data: dict[str, Any], fmt: str) -> None:
    try:
        text = (json.dumps(data, default=repr) if fmt == "json" else
                yaml.safe_dump(json.loads(json.dumps(data, default=repr)), allow_unicode=True))
    except (ValueError, yaml.YAMLError):
        return  # not representable in that format (an integer too long for json, say)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"model.{fmt}"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        build_or_refuse(lambda: rd.load(path))


@FUZZ
@given(st.one_of(st.text(max_size=200), st.lists(st.sampled_from(
    ["links:", " - ", "{", "}", "[", "]", "joint: R", "mass: ", "&a ", "*a", "!!python/object ", "!!binary ",
     ".nan", ".inf", "1e999", "\n", "  ", ":", "? ", "---", "%TAG ", "<<: ", "'", "\"", "#", "\t", "\x00"]),
    max_size=30).map("".join)))
def test_yaml_text_parses_or_is_refused(text: str) -> None:
    try:
        parse_text(text, json_format=False, file="fuzz.yaml")
    except ModelError as exc:
        assert "fuzz.yaml" in str(exc) and "\n" not in str(exc)


# -- expressions ----------------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # ast.parse warns about text such as "1and"
@FUZZ
@given(expression_text)
def test_expression_parses_or_is_refused(text: str) -> None:
    try:
        expr = parse_expression(text, field="a")
    except ModelError as exc:
        assert "field 'a'" in str(exc) and "\n" not in str(exc)
        return
    assert isinstance(expr, sympy.Expr)
    if expr.is_number:
        assert math.isfinite(float(expr))


@FUZZ
@given(st.one_of(values, st.builds(sympy.Symbol, st.sampled_from(["x", "q1", "nan"])),
                 st.sampled_from([sympy.nan, sympy.oo, sympy.zoo, sympy.I, sympy.Matrix([1]), sympy.Float("1e400")])))
def test_to_expr_converts_or_is_refused(value: Any) -> None:
    try:
        expr = to_expr(value, "mass")
    except ModelError as exc:
        assert "field 'mass'" in str(exc) and "\n" not in str(exc)
        return
    assert isinstance(expr, sympy.Expr)


# -- URDF mutations -------------------------------------------------------------------------------------------

BASE_URDF = """<?xml version="1.0"?>
<robot name="fuzz">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0.1 0 0" rpy="0 0 0"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0.1 0 0" rpy="0 0 0"/><mass value="0.5"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.5" rpy="0 0 0"/><axis xyz="0 0 1"/><dynamics damping="0.1"/></joint>
  <joint name="j2" type="prismatic"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.4 0 0" rpy="1.5707963 0 0"/><axis xyz="0 1 0"/></joint>
</robot>
"""
ATTRIBUTE_VALUES = ["", "nan", "inf", "-inf", "1e999", "-1", "0", "1e308", "1 2", "1 2 3 4", "a b c", "0 0 0",
                    "base", "l1", "l2", "j1", "floating", "planar", "continuous", "fixed", "spherical", "&#0;",
                    "\u202e", "1e-320 0 0"]


@st.composite
def mutated_urdf(draw: st.DrawFn) -> str:
    text = BASE_URDF
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["value", "delete", "duplicate", "truncate", "rename"]))
        quoted = [k for k, c in enumerate(text) if c == '"']
        if kind == "value" and len(quoted) >= 2:
            k = draw(st.integers(0, len(quoted) // 2 - 1))
            start, end = quoted[2 * k], quoted[2 * k + 1]
            value = draw(st.one_of(st.sampled_from(ATTRIBUTE_VALUES),
                                   st.text(alphabet="0123456789.e- na", max_size=12)))
            text = text[: start + 1] + value.replace('"', "") + text[end:]
        elif kind in ("delete", "duplicate") and text.count("\n") > 4:
            lines = text.splitlines(keepends=True)
            k = draw(st.integers(2, len(lines) - 2))
            lines[k:k + 1] = [] if kind == "delete" else [lines[k], lines[k]]
            text = "".join(lines)
        elif kind == "truncate":
            text = text[: draw(st.integers(0, len(text)))]
        elif kind == "rename":
            old = draw(st.sampled_from(["link", "joint", "robot", "inertia", "mass", "origin", "axis", "parent"]))
            new = draw(st.sampled_from(["lnk", "mimic", "robots", "", "inertial", "joint", "link"]))
            text = text.replace(f"<{old} ", f"<{new} ", 1) if new else text.replace(f"<{old} ", "<", 1)
    return text


@FUZZ
@given(mutated_urdf())
def test_urdf_mutation_loads_or_is_refused(text: str) -> None:
    pytest.importorskip("lxml")
    from robodyn.formats.urdf import read_urdf

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "arm.urdf"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        build_or_refuse(lambda: read_urdf(path))

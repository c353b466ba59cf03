"""docs/guide/model-files.md's "Every field" section names every field the model-file reader takes (issue 43,
point 6): the top level's, a link's (both conventions), a coupling's, a loop's, a body's (payload, base) and a
frame's, and every joint type of a link and of a loop's closing joint. A field added to the reader without a line
in the docs fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from robodyn.formats import model_file
from robodyn.model.frames import FRAME_KEYS
from robodyn.model.link import JOINT_TYPES as LINK_JOINT_TYPES
from robodyn.model.loops import JOINT_TYPES as LOOP_JOINT_TYPES

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "model-files.md"


def _section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("## Every field")
    return text[start:text.index("\n## ", start + 1)]


def _named(section: str) -> set[str]:
    """Every word in backticks, and every key of a backticked mapping such as `{name, link, placement}`."""
    named: set[str] = set()
    for quoted in re.findall(r"`([^`]+)`", section):
        named.update(re.findall(r"[A-Za-z_][A-Za-z_0-9+-]*", quoted))
    return named


@pytest.mark.parametrize("what, fields", [
    ("top level", model_file.TOP_KEYS),
    ("link", model_file.LINK_KEYS | model_file.ANGELES_LINK_KEYS),
    ("coupling", model_file.COUPLING_KEYS),
    ("loop", model_file.LOOP_KEYS),
    ("payload or base", model_file.BODY_KEYS),
    ("frame", set(FRAME_KEYS)),
    ("loop joint type", set(LOOP_JOINT_TYPES)),
])
def test_every_field_is_documented(what: str, fields: set[str]) -> None:
    missing = sorted(set(fields) - _named(_section()))
    assert not missing, f"docs/guide/model-files.md names no {what} field {missing}"


def test_every_link_joint_type_is_documented() -> None:
    """Each spelling the reader takes (R, revolute, S, spherical, planar, ...), case as a file writes it."""
    named = {word.upper() for word in _named(_section())}
    missing = sorted(spelling for spelling in LINK_JOINT_TYPES if spelling.upper() not in named)
    assert not missing, f"docs/guide/model-files.md names no link joint type {missing}"

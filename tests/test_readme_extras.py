"""The README's list of extras names every extra of pyproject.toml (issue 43: mjcf, dask and cuda were missing)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_readme_names_every_extra() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    listed = text[text.index("The extras ("):]
    listed = listed[:listed.index(". ")]  # the sentence that lists them
    named = set(re.findall(r"`(\w+)` \(", listed))
    assert named == set(extras), (sorted(set(extras) - named), sorted(named - set(extras)))

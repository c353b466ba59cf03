"""What a user reads cites only what a user has (issue 43, point 6): no docstring, comment, built-in model file,
documentation page, README or example points into the project's own working folders outside the repository (its
architecture notes, style guide, seeds or reference folder)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Names of the project's working documents that no user has.
OUTSIDE = re.compile(r"ARCHITECTURE\.md|STYLE\.md|\bshared/(reference|seeds)|\.\./shared\b|\bseeds/INDEX")
READ_BY_USERS = ("src/**/*.py", "src/**/*.yaml", "docs/**/*.md", "examples/**/*.py", "examples/**/*.yaml",
                 "README.md", "CHANGELOG.md")


def _files() -> list[Path]:
    return sorted({p for pattern in READ_BY_USERS for p in ROOT.glob(pattern) if "_build" not in p.parts})


def test_user_text_cites_only_the_repository() -> None:
    files = _files()
    assert len(files) > 100  # (the globs still find the package, docs and examples)
    hits = [f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}" for path in files
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if OUTSIDE.search(line)]
    assert not hits, "user text points outside the repository:\n" + "\n".join(hits)

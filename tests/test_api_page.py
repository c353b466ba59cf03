"""docs/api/index.md's table of the package face: every call written there (``rd.compile(robot, outputs=...)``) is
one the function takes, in a fresh process that imports only ``robodyn`` as a user's script would (its positional
arguments within the signature's, each keyword a parameter of it or taken by its ``**options``), and every name the
table lists is an attribute of ``robodyn`` (issue 43, point 6: the API page's signatures are tested)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "api" / "index.md"

CHECK = r"""
import inspect, json, sys
import robodyn as rd
problems = []
for name, args in json.loads(sys.argv[1]):
    target = getattr(rd, name, None)
    if target is None:
        problems.append(f"rd.{name} is not in the package face")
        continue
    if args is None:
        continue
    parameters = inspect.signature(target).parameters.values()
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keywords = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    given = [a for a in args if "=" not in a and not a.startswith("*")]
    if any(a.startswith("**") for a in args) and not any(p.kind == p.VAR_KEYWORD for p in parameters):
        problems.append(f"rd.{name} takes no **keywords")
    if len(given) > len(positional) and not any(p.kind == p.VAR_POSITIONAL for p in parameters):
        problems.append(f"rd.{name} takes {len(positional)} positional arguments, the page gives {given}")
    for keyword in (a.split("=")[0] for a in args if "=" in a):
        if keyword not in keywords and not any(p.kind == p.VAR_KEYWORD for p in parameters):
            problems.append(f"rd.{name} has no parameter {keyword!r}")
print(json.dumps(problems))
"""


def _written() -> list[tuple[str, list[str] | None]]:
    """(name, the arguments written or None for a bare name) of every ``rd.`` name in the page's table."""
    rows = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith("| `rd.")]
    out: list[tuple[str, list[str] | None]] = []
    for row in rows:
        for code in re.findall(r"`rd\.([^`]+)`", row.split("|")[1]):
            name, _, rest = code.partition("(")
            args = [a.strip() for a in rest.rstrip(")").split(",") if a.strip() and a.strip() != "..."] \
                if rest else None
            out.append((name, args))
    return out


def test_the_api_table_calls_what_the_package_has() -> None:
    written = _written()
    assert len(written) >= 15 and ("load", ["name_or_path", "**options"]) in written
    done = subprocess.run([sys.executable, "-c", CHECK, json.dumps(written)], capture_output=True, text=True,
                          timeout=300, check=True)
    assert json.loads(done.stdout) == []

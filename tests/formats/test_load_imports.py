"""Loading a robot (a built-in name, a model file) imports no module of the numeric engine, the code generators or
the straight-line programs: the readers use the float kit of :mod:`robodyn.model.spatial` (issue 27, item 4)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"

SCRIPT = """
import json, sys, warnings
warnings.simplefilter("ignore")
import robodyn as rd
rd.load("puma560")
rd.load(sys.argv[1])
print(json.dumps(sorted(m for m in sys.modules
                        if m.startswith(("robodyn.numeric", "robodyn.codegen", "robodyn.program")))))
"""


def test_load_imports_no_numeric_codegen_or_program_module() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(DATA / "torso_two_arms.yaml")], capture_output=True,
                         text=True, check=True, timeout=600)  # a hang guard, not a measure
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []

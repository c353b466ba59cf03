"""Checksums of every generated program: a refactoring must leave them byte-identical.

    python benchmarks/checksums.py            # one line per robot, language and file: sha256, bytes, name
    python benchmarks/checksums.py > a.txt    # before; after the change: diff a.txt <(python ...)

Covers the built-in robots and the test tree (tests/data/torso_two_arms.yaml; also on a floating base, and with a
ball shoulder) in every language with every output (derivatives included), the PUMA in base parameters, and the
operation counts of ``robodyn count`` for each routine's outputs (so a changed count shows here even where the
printed code would not).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import robodyn as rd
from robodyn import codegen, library, program
from robodyn.model.manipulator import RigidBody

ROOT = Path(__file__).resolve().parent.parent
ALL = ("tau", "M", "h", "bias", "G", "forward", "dtau", "dqdd")
#: Robots whose derivative programs take long to build are checked without them.
QUICK = ("tau", "M", "h", "bias", "G", "forward")


def _robots() -> list[tuple[str, object, tuple[str, ...]]]:
    robots = [(name, robot, ALL if name in ("puma560", "double_pendulum", "two_link_fu") else QUICK)
              for name in library.names() if not (robot := rd.load(name)).implicit]  # implicit loops: numeric only
    torso = rd.load(str(ROOT / "tests" / "data" / "torso_two_arms.yaml"))
    robots.append(("torso_two_arms", torso, QUICK))
    # the same tree on a floating base (with a base body), and with a ball shoulder: nq != nv (robodyn.program.floating)
    robots.append(("torso_two_arms-floating",
                   torso.replace(floating=True, base=RigidBody(mass=5, com=[0, 0, "1/10"], inertia=["1/10", "1/5",
                                                                                                   "3/10"])), ALL))
    robots.append(("torso_two_arms-ball", torso.replace(links=tuple(link.replace(joint="S") if link.name == "l_shoulder"
                                                                    else link for link in torso.links)), ALL))
    return robots


def main() -> int:
    for label, robot, outputs in _robots():
        spec = codegen.module_spec(robot, outputs)
        for language in codegen.LANGUAGES:
            for filename, text in sorted(codegen.generate(robot, language, spec=spec).items()):
                data = text.encode()
                print(f"{hashlib.sha256(data).hexdigest()[:16]} {len(data):8d} {label} {language} {filename}")
        for output in ("tau", "M", "h", "G", "forward"):
            counts = program.build(robot, (output,)).count()
            text = json.dumps({k: str(v) for k, v in counts.items()}, sort_keys=True)
            print(f"{hashlib.sha256(text.encode()).hexdigest()[:16]} counts {label} {output}: {counts['evaluation']}")
    puma = rd.load("puma560")
    for filename, text in sorted(codegen.generate(puma, "c", ("tau",), base=True).items()):
        print(f"{hashlib.sha256(text.encode()).hexdigest()[:16]} {len(text):8d} puma560-base c {filename}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

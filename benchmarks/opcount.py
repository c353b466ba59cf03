"""Operation counts of the cheapest programs beside the published figures (the table in docs/guide/programs.md).

    python benchmarks/opcount.py [--json out.json] [--base-breakdown]

Counting rules: see :mod:`robodyn.program` (each binary * or / one multiplication, each binary
+ or - one addition, negation free, sin/cos apart, the constants block not charged).
"""

from __future__ import annotations

import argparse
import json
import re
import time
import warnings
from collections import Counter
from typing import Any

import symengine as se

import robodyn as rd
from robodyn.program.targets import FIGURES, count_summary

#: (robot, output, in base parameters?)
ROWS = [
    ("puma560_symbolic", "elements", False),
    ("puma560_symbolic", "tau", False),
    ("puma560", "tau", False),
    ("puma560", "tau", True),
    ("rx90", "tau", True),
    ("two_link_payload", "tau", False),
    ("two_link_payload", "forward", False),
    ("puma560_symbolic", "M", False),
    ("puma560", "forward", False),
    ("industrial_6r", "tau", False),
    ("stanford_arm", "tau", False),
]


def rx90() -> rd.Manipulator:
    """The Staubli RX-90's geometry (Khalil and Dombre's modified-DH table: D3 and RL4 its only lengths), every
    inertial parameter a symbol: the arm SYMORO+'s published base-parameter count (160, 113) is for."""
    rows = [(0, 0, 0), ("-pi/2", 0, 0), (0, "D3", 0), ("pi/2", 0, "RL4"), ("-pi/2", 0, 0), ("pi/2", 0, 0)]
    links = []
    for j, (alpha, a, d) in enumerate(rows, start=1):
        inertia = [[f"Ixx{j}", f"Ixy{j}", f"Ixz{j}"], [f"Ixy{j}", f"Iyy{j}", f"Iyz{j}"],
                   [f"Ixz{j}", f"Iyz{j}", f"Izz{j}"]]
        links.append({"joint": "R", "alpha": alpha, "a": a, "d": d, "mass": f"m{j}",
                      "com": [f"cx{j}", f"cy{j}", f"cz{j}"], "inertia": inertia, "armature": f"Ia{j}",
                      "damping": f"fv{j}"})
    return rd.Manipulator.from_dh(links, convention="modified", gravity=[0, 0, "-g"], name="rx90")


def robot(name: str) -> rd.Manipulator:
    return rx90() if name == "rx90" else rd.load(name)


def base_breakdown(name: str) -> dict[str, Any]:
    """Where the multiplications of tau in base parameters go (issue 33, item 3): per link, those by an inertial base
    parameter (each parameter times each wrench component it enters), those by damping and armature, and the rest
    (geometry and gravity symbols; products of sines, cosines and rates; squares of rates)."""
    arm = robot(name)
    b = rd.identification.base_parameters(arm)
    program = rd.program.build(arm, ("tau",), base=b)
    link_of = {se.Symbol(s): (s[:2] in ("FV", "IA"), int(re.search(r"(\d+)$", s).group(1))) for s in b.names}
    for a in program.constants:  # XXR2 - ZZR2 and the like: the link's inertial parameters
        link_of[se.Symbol(a.name)] = (False, next(link_of[s][1] for s in a.expr.free_symbols if s in link_of))
    geometry = {str(s) for s in program.inputs["parameters"][len(b):]}
    counts: Counter[str] = Counter()

    def walk(e: Any) -> None:
        if isinstance(e, se.Mul):
            factors = [x for x in e.args if not (x.is_Number and abs(float(x)) == 1)]
            by = [link_of[x] for x in factors if x in link_of]
            key = (f"{'damping, armature' if by[0][0] else 'inertial'} link {by[0][1]}" if by else
                   "geometry, gravity" if any(str(x) in geometry for x in factors) else "sin, cos, rates")
            counts[key] += len(factors) - 1
        elif isinstance(e, se.Pow):
            counts["squares of rates"] += int(e.args[1]) - 1
        for x in e.args:
            walk(x)

    for expr in [a.expr for a in program.body] + list(program.outputs["tau"]):
        walk(expr)
    c = program.count()["evaluation"]
    return {"robot": name, "multiplications": c.multiplications, "additions": c.additions,
            **dict(sorted(counts.items()))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--base-breakdown", action="store_true",
                        help="print where the multiplications of tau in base parameters go (RX-90, PUMA 560) and stop")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.base_breakdown:
        for name in ("rx90", "puma560"):
            print(json.dumps(base_breakdown(name)))
        return
    rows = []
    print(f"{'arm':<18} {'output':<14} {'mult':>5} {'add':>5} {'trig':>4}  {'route':<32} {'s':>5}  published")
    for name, output, base in ROWS:
        start = time.perf_counter()
        arm = robot(name)
        summary = count_summary(arm, output, base=rd.identification.base_parameters(arm) if base else None)
        seconds = time.perf_counter() - start
        key = (name, summary["output"]) if name != "rx90" else ("puma560", summary["output"])
        published = "; ".join(f"{f.source}: {f.multiplications}/{f.additions}" for f in FIGURES.get(key, ()))
        shown = output + (" (base)" if base else "")
        print(
            f"{name:<18} {shown:<14} {summary['multiplications']:>5} {summary['additions']:>5} "
            f"{summary['trig']:>4}  {summary['route']:<32} {seconds:>5.1f}  {published}"
        )
        rows.append({**summary, "seconds": seconds})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()

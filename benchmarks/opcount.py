"""Operation counts of the cheapest programs beside the published figures (the table in docs/guide/programs.md).

    python benchmarks/opcount.py [--json out.json]

Counting rules: see :mod:`robodyn.program` (each binary * or / one multiplication, each binary
+ or - one addition, negation free, sin/cos apart, the constants block not charged).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
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

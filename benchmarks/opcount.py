"""Operation counts of the cheapest programs beside the figures to beat (issue 4's table).

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

ROWS = [
    ("puma560_symbolic", "elements"),
    ("puma560_symbolic", "tau"),
    ("puma560", "tau"),
    ("two_link_payload", "tau"),
    ("two_link_payload", "forward"),
    ("puma560_symbolic", "M"),
    ("puma560", "forward"),
    ("industrial_6r", "tau"),
    ("stanford_arm", "tau"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    rows = []
    print(f"{'arm':<18} {'output':<9} {'mult':>5} {'add':>5} {'trig':>4}  {'route':<32} {'s':>5}  to beat")
    for name, output in ROWS:
        start = time.perf_counter()
        summary = count_summary(rd.load(name), output)
        seconds = time.perf_counter() - start
        beat = "; ".join(f"{f.source}: {f.multiplications}/{f.additions}" for f in FIGURES.get((name, output), ()))
        print(
            f"{name:<18} {output:<9} {summary['multiplications']:>5} {summary['additions']:>5} "
            f"{summary['trig']:>4}  {summary['route']:<32} {seconds:>5.1f}  {beat}"
        )
        rows.append({**summary, "seconds": seconds})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()

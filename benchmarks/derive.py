"""Wall time to derive tau symbolically, by method and arm (prints a table; never asserts).

    python benchmarks/derive.py [--max-n 12] [--json out.json]

Columns: ``build`` is derive() (the formulation's recursion, nested expressions); ``expand`` is
bringing tau to canonical, expanded form (what ``eqs.tau`` returns). The chain of n revolute
joints has every parameter symbolic (a_i, alpha_i, d_i, mass, centre of mass, full inertia).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
import warnings

import robodyn as rd
from robodyn.formulations import AVAILABLE

LIBRARY = ["double_pendulum", "stanford_modified", "puma560_symbolic"]
EXPAND_UP_TO = 4  # expanding a general symbolic chain (symbolic twists) grows exponentially
#: Methods whose 6-joint results are also expanded here (d'Alembert's and Kane's nested PUMA
#: expressions take minutes to expand; their agreement is checked numerically instead).
EXPANDED_METHODS = ("newton-euler", "lagrange-euler")


def chain(n: int) -> rd.Manipulator:
    """n revolute joints, every DH and inertial parameter a symbol (modified DH)."""
    rows = []
    for i in range(1, n + 1):
        rows.append(
            {
                "joint": "R",
                "a": f"a{i}",
                "alpha": f"alpha{i}",
                "d": f"d{i}",
                "theta": 0,
                "mass": f"m{i}",
                "com": [f"cx{i}", f"cy{i}", f"cz{i}"],
                "inertia": [
                    [f"Ixx{i}", f"Ixy{i}", f"Ixz{i}"],
                    [f"Ixy{i}", f"Iyy{i}", f"Iyz{i}"],
                    [f"Ixz{i}", f"Iyz{i}", f"Izz{i}"],
                ],
            }
        )
    return rd.Manipulator.from_dh(rows, convention="modified", name=f"chain{n}")


def timed(robot: rd.Manipulator, method: str, expand: bool) -> dict:
    start = time.perf_counter()
    eqs = rd.derive(robot, method)
    build = time.perf_counter() - start
    row = {"robot": robot.name, "n": robot.n, "method": method, "build_s": build}
    if expand:
        start = time.perf_counter()
        eqs.canonical("tau")
        row["expand_s"] = time.perf_counter() - start
        row["terms_tau"] = eqs.terms()["tau"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=int, default=12)
    parser.add_argument("--json", help="also write the rows as JSON")
    args = parser.parse_args()
    warnings.simplefilter("ignore", rd.ModelWarning)
    print(f"# derive benchmark, {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    print("| robot | n | method | build s | expand s | terms in tau |")
    print("|---|---|---|---|---|---|", flush=True)
    jobs = [
        (robot, method, robot.n <= 3 or method in EXPANDED_METHODS)
        for robot in (rd.load(name) for name in LIBRARY)
        for method in AVAILABLE
    ]
    jobs += [(chain(n), "newton-euler", n <= EXPAND_UP_TO) for n in range(2, args.max_n + 1)]
    rows = []
    for robot, method, expand in jobs:
        r = timed(robot, method, expand)
        rows.append(r)
        expanded = f"{r['expand_s']:.3f}" if "expand_s" in r else "-"
        terms = str(r.get("terms_tau", "-"))
        print(f"| {r['robot']} | {r['n']} | {r['method']} | {r['build_s']:.4f} | {expanded} | {terms} |", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(rows, handle, indent=1)


if __name__ == "__main__":
    main()

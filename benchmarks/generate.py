"""Wall time and peak memory to produce the cheapest program (issue 4; EMDEG needed 10 CPU
minutes on a VAX 11/780 for the PUMA's elements).

    python benchmarks/generate.py [--max-n 12]

Rows: puma560_symbolic (tau, all distinct elements, and M with the bias forces), then chains of n
revolute joints of general geometry (every DH and inertial parameter a symbol,
:func:`robodyn.program.opcount.general_arm`) with their tau counts per joint, so that the growth with n is
visible.

Each row runs in a fresh subprocess. Its peak memory is the growth of the process's peak resident set
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) from just after the imports and the model's loading to
just after the build: it includes symengine's C++ memory, which Python's tracemalloc cannot see
(tracemalloc reported 0.3 MiB for a build that grows the process by about 3.5 MiB). The wall time is
that of the same single build.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys


def row(arm: str, outputs: tuple[str, ...]) -> dict:
    """One build in this process (the child's side): seconds, peak growth in MiB, counts."""
    import resource
    import time
    import warnings

    warnings.simplefilter("ignore")
    import robodyn as rd
    import robodyn.formulations.emdeg
    import robodyn.program.factor
    import robodyn.program.routes
    import robodyn.recursions.newton_euler  # before the baseline, like everything build uses
    from robodyn.program import build
    from robodyn.program.opcount import general_arm

    robot = general_arm("R" * int(arm.split(":")[1])) if arm.startswith("chain:") else rd.load(arm)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    start = time.perf_counter()
    program = build(robot, outputs)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    c = program.count()["evaluation"]
    return {"seconds": seconds, "peak_mib": (after - before) / 1024, "base_mib": before / 1024,
            "multiplications": c.multiplications, "additions": c.additions, "route": program.route}


def measure(arm: str, outputs: tuple[str, ...]) -> dict:
    """:func:`row` in a fresh Python process."""
    proc = subprocess.run([sys.executable, __file__, "--row", arm, *outputs], capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-n", type=int, default=12)
    parser.add_argument("--row", nargs="+", help=argparse.SUPPRESS)  # the child: ARM OUTPUT...
    args = parser.parse_args()
    if args.row:
        print(json.dumps(row(args.row[0], tuple(args.row[1:]))))
        return
    print("peak MiB: growth of the peak resident set (ru_maxrss) from after the imports to after the build, "
          "one subprocess per row")
    print(f"{'arm':<22} {'output':<9} {'s':>7} {'peak MiB':>9} {'mult':>6} {'add':>6} {'mult/n':>7} {'add/n':>6}"
          "  route")
    for outputs in (("tau",), ("elements",), ("M", "bias")):
        r = measure("puma560_symbolic", outputs)
        print(f"{'puma560_symbolic':<22} {'+'.join(outputs):<9} {r['seconds']:>7.2f} {r['peak_mib']:>9.1f} "
              f"{r['multiplications']:>6} {r['additions']:>6} {'':>7} {'':>6}  {r['route']}")
    for n in range(2, args.max_n + 1):
        r = measure(f"chain:{n}", ("tau",))
        m, a = r["multiplications"], r["additions"]
        print(f"{f'general {n}R chain':<22} {'tau':<9} {r['seconds']:>7.2f} {r['peak_mib']:>9.1f} {m:>6} {a:>6} "
              f"{m / n:>7.1f} {a / n:>6.1f}  {r['route']}")


if __name__ == "__main__":
    main()

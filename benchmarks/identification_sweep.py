"""Base parameters against the numerical rank on many random arms, with the time each takes.

    python benchmarks/identification_sweep.py [--seeds 12-80] [--conventions standard,modified]

For each seed and convention, a random arm of 1 to 6 joints (R/P mixes, general and right-angled twists, random
gravity directions: tests/identification/test_identification.py's ``_check_random_arm``): the number of base
parameters equals the numerical rank of the regressor, and the base regressor times the base parameter values is
the inverse dynamics at random states. The suite checks seeds 0 to 11 in both conventions
(``test_base_parameters_equal_the_numerical_rank_for_random_arms``); this sweep runs the seeds after them, 12 to 79
by default. One line per arm, the counts at the end; exit status 1 where an arm fails.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # (the suite's check: run as a script)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="12-80", help="FIRST-END (END excluded), or seeds separated by commas")
    parser.add_argument("--conventions", default="standard,modified")
    args = parser.parse_args()
    first, dash, end = args.seeds.partition("-")
    seeds = list(range(int(first), int(end))) if dash else [int(s) for s in args.seeds.split(",")]
    warnings.simplefilter("ignore")
    from tests.identification.test_identification import _check_random_arm

    failed = 0
    started = time.perf_counter()
    for seed in seeds:
        for convention in args.conventions.split(","):
            start = time.perf_counter()
            try:
                _check_random_arm(seed, convention)
                result = "ok"
            except Exception as exc:  # (the assertion's message: joint types, base parameters, rank)
                result = f"FAILED: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
                failed += 1
            print(f"seed {seed:>3} {convention:<9} {result} ({time.perf_counter() - start:.2f} s)", flush=True)
    total = len(seeds) * len(args.conventions.split(","))
    print(f"{total - failed} of {total} arms agree with the numerical rank ({time.perf_counter() - started:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The CUDA kernels' one-state routines built as host C99 against the C backend, for the Panda (and any robot named):
the largest difference over random states and every routine, and the time each build and check takes.

    python benchmarks/cuda_host.py [--robots panda,puma560,chain20] [--precisions fp64,fp32] [--states 20]

The kernels' file compiled by the host's C compiler (``-std=c99 -pedantic -Wall -Wextra -Werror``: the kernels sit
under ``__CUDACC__``) gives the one-state routines alone; each is compared with ``rd.compile``'s C on random
states, every output included (the derivatives too): relative to the largest entry of each output, the forward
dynamics by its normwise backward error (tests/codegen/test_cuda.py's ``_compare``, the same check). The suite runs
it on the PUMA in fp64 and fp32; the Panda's C with its derivatives takes about 25 s to build, so its check is
here. The bound is the suite's: 1e-13 (fp64), 1e-4 (fp32). Needs a C compiler (and example-robot-data for the
Panda). Figures, and exit status 1 where a difference is over its bound or a build fails.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # (the suite's check, tests.codegen.test_cuda._compare: run as a script)

#: The suite's bound on each precision's difference.
BOUNDS = {"fp64": 1e-13, "fp32": 1e-4}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", default="panda", help="puma560, panda (example-robot-data's), chain20")
    parser.add_argument("--precisions", default="fp64")
    parser.add_argument("--states", type=int, default=20, help="random states per routine")
    args = parser.parse_args()
    from benchmarks.urdf_survey import robots_directory
    from tests.codegen.test_cuda import _compare

    from robodyn.runtime.toolchain import find_compiler

    if find_compiler() is None:
        print("no C compiler: nothing to do")
        return 0
    warnings.simplefilter("ignore")
    failed = False
    print(f"{'robot':<9} {'precision':<9} {'worst':>9} {'bound':>7} {'s':>6}")
    for label in args.robots.split(","):
        if label == "panda" and robots_directory() is None:
            print("panda: example-robot-data is not installed, skipped")
            continue
        for precision in args.precisions.split(","):
            start = time.perf_counter()
            with tempfile.TemporaryDirectory() as directory:
                try:
                    worst = _compare(label, precision, Path(directory), args.states)
                except Exception as exc:  # a build that fails: say which, go on
                    print(f"{label:<9} {precision:<9} FAILED: {type(exc).__name__}: {exc}")
                    failed = True
                    continue
            over = worst > BOUNDS[precision]
            failed |= over
            print(f"{label:<9} {precision:<9} {worst:>9.1e} {BOUNDS[precision]:>7.0e} "
                  f"{time.perf_counter() - start:>6.1f}{'  OVER THE BOUND' if over else ''}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

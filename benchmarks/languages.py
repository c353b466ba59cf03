"""Generated C, Fortran, NumPy and JAX of every built-in robot against the symbolic equations, with the time each
takes (tests/codegen/test_codegen.py's checks, on the robots the suite leaves out).

    python benchmarks/languages.py [--robots industrial_6r,puma560_symbolic,stanford_arm] [--languages c,fortran,...]

Each language runs on the same random states and parameters and is compared, routine by routine, with the symbolic
Equations of Newton-Euler to 1e-12 relative, the forward dynamics by its residual and against the solve of the
symbolic M within cond(M) * 1e-13 (:func:`tests.codegen.test_codegen.check_routines`). The suite checks the
built-in robots but the six-joint arms that take seconds each to build in every language (industrial_6r,
puma560_symbolic, stanford_arm: ``tests.codegen.test_codegen.BIG``), which are checked here, by default; ``--robots
all`` checks every built-in robot that is a tree. Fortran needs gfortran, JAX ``pip install 'robodyn[jax]'``
(skipped without them). Figures, and exit status 1 where a check fails.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # (the suite's checks, tests.codegen.test_codegen: run as a script)

LANGUAGES = ("c", "fortran", "numpy", "jax")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", default="big", help="big (the suite's BIG), all, or names separated by commas")
    parser.add_argument("--languages", default=",".join(LANGUAGES))
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    from tests.codegen import test_codegen as checks
    from tests.conftest import without_loops

    import robodyn as rd

    robots = (sorted(checks.BIG) if args.robots == "big" else without_loops(rd.library.names()) if args.robots == "all"
              else args.robots.split(","))
    failed = False
    with tempfile.TemporaryDirectory() as directory:
        work = Path(directory)
        runs = {
            "c": lambda name: checks.check_compiled(name, checks.compiled_c(name, work / "cache")),
            "fortran": lambda name: checks.check_compiled(
                name, checks.compiled_fortran(name, Path(tempfile.mkdtemp(dir=work)))),
            "numpy": lambda name: checks.check_python(name, "numpy"),
            "jax": lambda name: checks.check_python(name, "jax"),
        }
        print(f"{'robot':<18} {'language':<8} {'result':<60} {'s':>6}")
        for name in robots:
            start = time.perf_counter()
            checks.case(name)  # the symbolic reference, once per robot
            print(f"{name:<18} {'(ref)':<8} {'the symbolic equations at the random states':<60} "
                  f"{time.perf_counter() - start:>6.1f}", flush=True)
            for language in args.languages.split(","):
                if language == "fortran" and shutil.which("gfortran") is None:
                    print(f"{name:<18} {language:<8} skipped: gfortran not installed")
                    continue
                if language == "jax":
                    try:
                        import jax
                    except ImportError:
                        print(f"{name:<18} {language:<8} skipped: jax not installed")
                        continue
                    jax.config.update("jax_enable_x64", True)
                start = time.perf_counter()
                try:
                    runs[language](name)
                    result = "agrees to 1e-12"
                except Exception as exc:  # (an AssertionError with the routine and the difference, or a build)
                    result = f"FAILED: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
                    failed = True
                print(f"{name:<18} {language:<8} {result:<60} {time.perf_counter() - start:>6.1f}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

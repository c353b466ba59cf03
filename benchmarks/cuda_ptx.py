"""Every CUDA kernel of the PUMA 560, the Panda and a 20-joint chain built without a GPU: NVRTC to PTX (no message
at all), ptxas for sm_80 and sm_90 (warnings as errors), in fp64 and fp32, with the time each step takes.

    python benchmarks/cuda_ptx.py [--robots puma560,panda,chain20] [--precisions fp64,fp32] [--archs sm_80,sm_90]

The suite compiles every kernel of the PUMA this way (tests/codegen/test_cuda.py); the Panda's and the 20-joint
chain's are compiled here, in both precisions and through ptxas, which takes minutes on such long straight-line
kernels (one thread runs a whole state: ptxas allocates registers over thousands of statements).
Needs the ``cuda`` extra (NVRTC and ptxas); without it, says so and exits 0. Figures only, no assertions: a
failure to compile is printed and the script exits 1.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from pathlib import Path

import robodyn as rd
from robodyn import codegen
from robodyn.codegen.cuda import CudaEmitter
from robodyn.runtime import cuda
from robodyn.runtime.toolchain import CompileError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # (tests.conftest's random chain, benchmarks.urdf_survey: run as a script)

#: Every output a kernel is generated for.
OUTPUTS = ("tau", "M", "h", "bias", "G", "forward", "dtau", "dqdd")


def robot(label: str) -> rd.Manipulator | None:
    """The robot of ``label``: a built-in, ``panda`` (example-robot-data's URDF), ``chain20`` (the suite's random
    20-joint chain)."""
    if label == "panda":
        from benchmarks.urdf_survey import robots_directory

        directory = robots_directory()
        return None if directory is None else rd.load(directory / "panda_description/urdf/panda.urdf")
    if label.startswith("chain"):
        from tests.conftest import random_robot

        return random_robot(3, int(label[5:]), "standard", extras=False)
    return rd.load(label)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", default="puma560,panda,chain20")
    parser.add_argument("--precisions", default="fp64,fp32")
    parser.add_argument("--archs", default="sm_80,sm_90")
    args = parser.parse_args()
    if cuda.find_nvrtc() is None or cuda.find_ptxas() is None:
        print("NVRTC or ptxas is not installed (pip install 'robodyn[cuda]'): nothing to do")
        return 0
    warnings.simplefilter("ignore")
    print(f"NVRTC {cuda.nvrtc_version()}; times are wall-clock seconds")
    print(f"{'robot':<9} {'output':<7} {'precision':<9} {'source KB':>9} {'NVRTC s':>8} {'PTX KB':>7} "
          + " ".join(f"{arch + ' s':>9}" for arch in args.archs.split(",")))
    failed = False
    with tempfile.TemporaryDirectory() as directory:
        for label in args.robots.split(","):
            arm = robot(label)
            if arm is None:
                print(f"{label}: example-robot-data is not installed, skipped")
                continue
            for output in OUTPUTS:
                spec = codegen.module_spec(arm, (output,))
                for precision in args.precisions.split(","):
                    (name, text), = CudaEmitter(precision).files(spec).items()
                    row = f"{label:<9} {output:<7} {precision:<9} {len(text) / 1e3:>9.0f} "
                    try:
                        start = time.perf_counter()
                        ptx = cuda.ptx(text, name)
                        row += f"{time.perf_counter() - start:>8.1f} {len(ptx) / 1e3:>7.0f} "
                        path = Path(directory) / f"{spec.name}_{output}_{precision}.ptx"
                        path.write_text(ptx)
                        for arch in args.archs.split(","):
                            start = time.perf_counter()
                            cuda.assemble(path, arch)
                            row += f"{time.perf_counter() - start:>9.1f} "
                    except CompileError as exc:
                        row += f"FAILED: {exc}"
                        failed = True
                    print(row, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The CUDA kernels on a GPU: states per second of the PUMA's and the Panda's inverse dynamics (ID), forward dynamics
(FD) and its derivatives (dFD), in fp64 and fp32, against the generated JAX module on the same GPU.

    python benchmarks/cuda.py [--sizes 100000,1000000,10000000] [--repeats 5] [--robots puma560,panda]

Needs CuPy and an NVIDIA GPU (and NVRTC: ``pip install 'robodyn[cuda]' cupy-cuda12x``); without them it says so and
exits 0. The kernels (:mod:`robodyn.codegen.cuda`) are compiled by NVRTC for the GPU's architecture
(:func:`robodyn.runtime.cuda.ptx`) and launched by CuPy, 256 threads a block, a grid of at most 32 blocks per
multiprocessor (grid-stride loop), on device arrays made once (the transfers are not timed); the time is the median
of ``--repeats`` launches, by CUDA events. JAX: the generated module's routine (``codegen.load_python(robot,
"jax")``), jitted, on device arrays of the same states (fp64 with ``jax_enable_x64``; sizes whose arrays would not
fit are skipped). A reference point: GRiD (A2R-Lab's generated CUDA) reports 0.045 us per state for the iiwa's
inverse dynamics in fp32 at N = 256 on an RTX 5090; a H100's memory bandwidth bounds the PUMA's fp64 inverse
dynamics (144 bytes in, 48 out a state) at about 1.7e10 states per second. Figures only, no assertions.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from typing import Any

import numpy as np

import robodyn as rd
from robodyn import codegen
from robodyn.codegen.cuda import generate_cuda, kernel_name
from robodyn.codegen.spec import KEYS, output_shape

#: The routines timed: key -> label.
ROUTINES = {"tau": "ID", "forward": "FD", "dqdd": "dFD"}
BLOCK = 256


def _robot(name: str) -> rd.Manipulator:
    if name == "panda":
        from benchmarks.urdf_survey import robots_directory

        directory = robots_directory()
        if directory is None:
            raise SystemExit("example-robot-data is not installed (the Panda's URDF)")
        return rd.load(directory / "panda_description/urdf/panda.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        return rd.load(name)


def _gpu() -> tuple[Any, str] | None:
    try:
        from robodyn.runtime import cuda

        return cuda.require_gpu()
    except Exception as exc:  # (CudaUnavailableError, or CuPy without a driver)
        print(f"no GPU run: {exc}")
        return None


def _median_seconds(cupy: Any, launch: Any, repeats: int) -> float:
    launch()  # (warm: the module's first launch)
    times = []
    for _ in range(repeats):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        launch()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3)
    return float(np.median(times))


def _kernels(cupy: Any, spec: codegen.ModuleSpec, precision: str, arch: str) -> Any:
    from robodyn.runtime import cuda

    (name, text), = generate_cuda(spec, precision).items()
    start = time.perf_counter()
    ptx = cuda.ptx(text, name, arch=arch)
    seconds = time.perf_counter() - start
    module = cupy.cuda.function.Module()
    module.load(ptx.encode())
    print(f"  {name}: NVRTC {seconds:.1f} s, PTX {len(ptx) / 1e3:.0f} kB")
    return module


def _jax_time(robot: rd.Manipulator, spec: codegen.ModuleSpec, key: str, inputs: list[np.ndarray], precision: str,
              repeats: int) -> float | None:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", precision == "fp64")
    module = codegen.load_python(None, "jax", spec=spec)
    routine = jax.jit(getattr(module, KEYS[key].name))
    dtype = jnp.float64 if precision == "fp64" else jnp.float32
    k = jnp.asarray(np.asarray(module.constants([]), dtype=float), dtype=dtype)
    arrays = [jnp.asarray(a, dtype=dtype) for a in inputs]
    jax.block_until_ready(routine(k, *arrays))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(routine(k, *arrays))
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000,10000000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--robots", default="puma560,panda")
    parser.add_argument("--no-jax", action="store_true")
    parser.add_argument("--memory-gb", type=float, default=60.0, help="skip sizes whose arrays need more")
    args = parser.parse_args(argv)
    found = _gpu()
    if found is None:
        return 0
    cupy, arch = found
    device = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    processors = cupy.cuda.Device().attributes["MultiProcessorCount"]
    print(f"GPU: {device['name'].decode()} ({arch}, {processors} multiprocessors)")
    print(f"{'robot':>8} {'routine':>7} {'prec':>5} {'N':>9} {'kernel s':>10} {'states/s':>10} {'us/state':>9} "
          f"{'JAX s':>9} {'JAX states/s':>12}")
    for name in args.robots.split(","):
        robot = _robot(name)
        spec = codegen.module_spec(robot, list(ROUTINES))
        n = robot.nv
        for precision in ("fp64", "fp32"):
            module = _kernels(cupy, spec, precision, arch)
            dtype = cupy.float64 if precision == "fp64" else cupy.float32
            for key, label in ROUTINES.items():
                kind = KEYS[key]
                kernel = module.get_function(kernel_name(spec.name, kind.name))
                tail = output_shape(kind.output, n)
                for N in (int(s) for s in args.sizes.split(",")):
                    size = np.dtype(dtype).itemsize
                    if N * size * (len(kind.inputs) * n + int(np.prod(tail))) > args.memory_gb * 1e9:
                        print(f"{name:>8} {label:>7} {precision:>5} {N:>9} skipped (memory)")
                        continue
                    rng = np.random.default_rng(0)
                    host = [rng.uniform(-1, 1, (N, n)) for _ in kind.inputs]
                    arrays = [cupy.asarray(a, dtype=dtype) for a in host]
                    out = cupy.empty((N, *tail), dtype=dtype)
                    k = cupy.zeros(max(spec.n_constants, 1), dtype=dtype)
                    grid = max(1, min((N + BLOCK - 1) // BLOCK, 32 * processors))

                    def launch(kernel: Any = kernel, grid: int = grid, arrays: list[Any] = arrays, out: Any = out,
                               k: Any = k, N: int = N) -> None:
                        kernel((grid,), (BLOCK,), (k, *arrays, out, np.uint64(N)))

                    seconds = _median_seconds(cupy, launch, args.repeats)
                    del arrays, out
                    jax_seconds = None if args.no_jax else _jax_time(robot, spec, key, host, precision, args.repeats)
                    jax_text = (f"{jax_seconds:9.4f} {N / jax_seconds:12.3g}" if jax_seconds else
                                f"{'-':>9} {'-':>12}")
                    print(f"{name:>8} {label:>7} {precision:>5} {N:>9} {seconds:10.5f} {N / seconds:10.3g} "
                          f"{seconds / N * 1e6:9.4f} {jax_text}", flush=True)
    print("GRiD (published): iiwa ID fp32, 0.045 us per state at N = 256 (RTX 5090)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

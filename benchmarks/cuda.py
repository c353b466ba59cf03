"""The CUDA kernels on a GPU: states per second of the PUMA's and the Panda's inverse dynamics (ID), forward dynamics
(FD) and its derivatives (dFD), in fp64 and fp32, on device arrays, against the generated JAX module on the same GPU.

    python benchmarks/cuda.py [--sizes 100000,1000000,10000000] [--repeats 5] [--robots puma560,panda] [--no-jax]

Needs CuPy and an NVIDIA GPU (and NVRTC: ``pip install 'robodyn[cuda]' cupy-cuda12x``); without them it says so and
exits 0. Each robot is compiled by ``rd.compile(robot, outputs=["tau", "forward", "dqdd"], backend="cuda",
precision=...)`` (NVRTC for the GPU's architecture, the PTX kept in the compile cache, loaded by CuPy): the methods
are called on CuPy arrays made once, with a CuPy ``out`` (nothing crosses to the host: what is timed is the
method's call, its launch of 256 threads a block, at most 32 blocks per multiprocessor, grid-stride loop); the
time is the median of ``--repeats`` calls, by CUDA events. Before timing, each routine's results on the first
states are checked against the compiled C (the largest difference relative to the largest entry), and one call
takes its inputs from JAX arrays by DLPack (where JAX is installed). JAX: the generated module's routine
(``codegen.load_python(robot, "jax")``), jitted, on JAX device arrays of the same states (fp64 with
``jax_enable_x64``; a size that fails, out of memory say, is shown as ``-``). A reference point: GRiD (A2R-Lab's
generated CUDA) reports 0.045 us per state for the iiwa's inverse dynamics in fp32 at N = 256 on an RTX 5090; a
H100's memory bandwidth bounds the PUMA's fp64 inverse dynamics (144 bytes in, 48 out a state) at about 1.7e10
states per second. Figures only, no assertions.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

import robodyn as rd
from robodyn import codegen
from robodyn.codegen.spec import KEYS, output_shape

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # (benchmarks.urdf_survey: run as a script, the repository root is not on the path)

#: The routines timed: key -> label.
ROUTINES = {"tau": "ID", "forward": "FD", "dqdd": "dFD"}
#: States checked against the compiled C.
CHECKED = 1000


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


def _check(cupy: Any, gpu: Any, c: Any, key: str, host: list[np.ndarray]) -> float:
    """The largest difference between the GPU's and the C's results on the first states, relative to the largest
    entry (a DLPack round through JAX, where installed, gives the same numbers)."""
    name = KEYS[key].name
    first = [a[:CHECKED] for a in host]
    found = getattr(gpu, name)(*(cupy.asarray(a) for a in first))
    found = cupy.stack(found, axis=1) if isinstance(found, tuple) else found
    expected = getattr(c, name)(*first)
    expected = np.stack(expected, axis=1) if isinstance(expected, tuple) else expected
    worst = float(np.abs(cupy.asnumpy(found) - expected).max() / max(np.abs(expected).max(), 1e-300))
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return worst
    jax.config.update("jax_enable_x64", gpu.precision == "fp64")
    through = getattr(gpu, name)(*(jnp.asarray(a, dtype=jnp.float32 if gpu.precision == "fp32" else None)
                                   for a in first))  # (DLPack from JAX's device arrays)
    through = cupy.stack(through, axis=1) if isinstance(through, tuple) else through
    if not isinstance(through, cupy.ndarray) or not bool(cupy.allclose(through, found, rtol=1e-6, atol=0)):
        print(f"    DLPack from JAX: {type(through).__name__}, not the CuPy result of the same states")
    return worst


def _jax_time(spec: codegen.ModuleSpec, key: str, inputs: list[np.ndarray], precision: str,
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
    try:
        k = jnp.asarray(np.asarray(module.constants([]), dtype=float), dtype=dtype)
        arrays = [jnp.asarray(a, dtype=dtype) for a in inputs]
        jax.block_until_ready(routine(k, *arrays))
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            jax.block_until_ready(routine(k, *arrays))
            times.append(time.perf_counter() - start)
    except Exception as exc:  # (XLA out of memory, mostly)
        print(f"    JAX {KEYS[key].name} at N = {inputs[0].shape[0]}: {' '.join(str(exc).split())[:160]}")
        return None
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
    print(f"{'robot':>8} {'routine':>7} {'prec':>5} {'N':>9} {'call s':>10} {'states/s':>10} {'us/state':>9} "
          f"{'JAX s':>9} {'JAX states/s':>12} {'GPU/JAX':>7}")
    for name in args.robots.split(","):
        robot = _robot(name)
        spec = codegen.module_spec(robot, list(ROUTINES))
        c = rd.compile(robot, outputs=list(ROUTINES), spec=spec)
        n = robot.nv
        for precision in ("fp64", "fp32"):
            start = time.perf_counter()
            gpu = rd.compile(robot, outputs=list(ROUTINES), spec=spec, backend="cuda", precision=precision)
            print(f"  {name} {precision}: rd.compile (NVRTC, or the cache) {time.perf_counter() - start:.1f} s")
            dtype = gpu.dtype
            checked: set[str] = set()
            for key, label in ROUTINES.items():
                kind = KEYS[key]
                tail = output_shape(kind.output, n)
                method = getattr(gpu, kind.name)
                for N in (int(s) for s in args.sizes.split(",")):
                    size = np.dtype(dtype).itemsize
                    if N * size * (len(kind.inputs) * n + int(np.prod(tail))) > args.memory_gb * 1e9:
                        print(f"{name:>8} {label:>7} {precision:>5} {N:>9} skipped (memory)")
                        continue
                    rng = np.random.default_rng(0)
                    host = [rng.uniform(-1, 1, (N, n)) for _ in kind.inputs]
                    if key not in checked:
                        checked.add(key)
                        worst = _check(cupy, gpu, c, key, host)
                        print(f"    {label} {precision}: GPU against C on {CHECKED} states: {worst:.1e} (relative)")
                    arrays = [cupy.asarray(a, dtype=dtype) for a in host]
                    out = cupy.empty((N, *tail), dtype=dtype)

                    def launch(method: Any = method, arrays: list[Any] = arrays, out: Any = out) -> None:
                        method(*arrays, out=out)

                    seconds = _median_seconds(cupy, launch, args.repeats)
                    del arrays, out
                    cupy.get_default_memory_pool().free_all_blocks()
                    jax_seconds = None if args.no_jax else _jax_time(spec, key, host, precision, args.repeats)
                    jax_text = (f"{jax_seconds:9.4f} {N / jax_seconds:12.3g} {jax_seconds / seconds:7.1f}"
                                if jax_seconds else f"{'-':>9} {'-':>12} {'-':>7}")
                    print(f"{name:>8} {label:>7} {precision:>5} {N:>9} {seconds:10.5f} {N / seconds:10.3g} "
                          f"{seconds / N * 1e6:9.4f} {jax_text}", flush=True)
    print("GRiD (published): iiwa ID fp32, 0.045 us per state at N = 256 (RTX 5090)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

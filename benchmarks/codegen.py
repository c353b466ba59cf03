"""Generated code against Pinocchio: per-state times on large batches (prints markdown; never asserts).

    python benchmarks/codegen.py [--robots puma560 industrial_6r] [--states 1000000] [--loop N]
                                 [--python-states 1000000] [--jax-states 1000000] [--gpu-states 10000000]

One process, one run. For each robot, on the same ``--states`` random states (10^6 by default):

- ``robodyn.runtime`` (the generated C, its batch loops vectorised across states): ``inverse_dynamics``
  and ``forward_dynamics``, against Pinocchio's ``rnea``/``aba`` called in a Python loop over the
  states (all of them unless ``--loop`` asks for fewer, which the output then says) and
  ``rneaInParallel``/``abaInParallel`` on one thread over all of them (the arm built from the DH table
  by tests/test_pinocchio.py);
- the generated NumPy module (blocks of states, ufunc calls on preallocated rows; and the same with
  libm's sin and cos, ``NumPyEmitter(half_angle=False)``), and the generated JAX module (the whole
  batch function under ``jax.jit``, float64) on the CPU, and on a GPU for ``--gpu-states`` states
  where JAX sees one;
- the ratios, and the issue's goals marked met or missed: compiled C inverse and forward dynamics each
  >= 4x the states per second of Pinocchio's one-thread batch call and >= 10x its Python loop; the
  NumPy module >= 3x the one-thread batch call.

Then, for ``puma560_symbolic``: the time to generate the C (Program and spec, then text) and the
compiler's own time, rd.compile from an empty cache, and the size of the generated C.
Times are the best of a few interleaved rounds, in steady state (see ``steady_times``).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np

import robodyn as rd
from robodyn import codegen

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.numeric import states  # noqa: E402 - the repository root is on the path now

Call = tuple[str, int, Callable[[], object]]
C_ID, C_FD = "compiled C inverse_dynamics", "compiled C forward_dynamics"
PIN_ID_LOOP, PIN_FD_LOOP = "pinocchio rnea (Python loop)", "pinocchio aba (Python loop)"
PIN_ID_BATCH, PIN_FD_BATCH = "pinocchio rneaInParallel (1 thread)", "pinocchio abaInParallel (1 thread)"
NP_ID, NP_FD = "generated NumPy inverse_dynamics", "generated NumPy forward_dynamics"
NP_ID_LIBM = "generated NumPy inverse_dynamics, libm sin/cos"
NP_FD_LIBM = "generated NumPy forward_dynamics, libm sin/cos"
JAX_ID, JAX_FD = "generated JAX inverse_dynamics (jit, CPU)", "generated JAX forward_dynamics (jit, CPU)"
GPU_ID, GPU_FD = "generated JAX inverse_dynamics (jit, GPU)", "generated JAX forward_dynamics (jit, GPU)"
#: (ours, theirs, goal): the issue's goals, in states per second of ours over theirs.
GOALS = [
    (C_ID, PIN_ID_BATCH, 4.0), (C_FD, PIN_FD_BATCH, 4.0), (C_ID, PIN_ID_LOOP, 10.0), (C_FD, PIN_FD_LOOP, 10.0),
    (NP_ID, PIN_ID_BATCH, 3.0), (NP_FD, PIN_FD_BATCH, 3.0),
]
#: Ratios printed without a goal.
OTHER_RATIOS = [(NP_ID_LIBM, PIN_ID_BATCH), (NP_FD_LIBM, PIN_FD_BATCH), (JAX_ID, PIN_ID_BATCH),
                (JAX_FD, PIN_FD_BATCH), (GPU_ID, PIN_ID_BATCH), (GPU_FD, PIN_FD_BATCH)]


def compiled_calls(robot: rd.Manipulator, N: int) -> list[Call]:
    dyn = rd.compile(robot)
    q, qd, qdd = states(robot.n, N)
    tau = dyn.inverse_dynamics(q, qd, qdd)
    return [(C_ID, N, lambda: dyn.inverse_dynamics(q, qd, qdd)), (C_FD, N, lambda: dyn.forward_dynamics(q, qd, tau))]


def pinocchio_calls(robot: rd.Manipulator, N: int, loop: int) -> list[Call]:
    import pinocchio as pin
    from tests.test_pinocchio import pinocchio_model

    model = pinocchio_model(robot)
    data = model.createData()
    q, qd, qdd = states(robot.n, N)  # the same states as the other calls (same seed)
    tau = rd.numeric.inverse_dynamics(robot, q, qd, qdd)

    def python_loop(f: Callable[..., object], *arrays: np.ndarray) -> Callable[[], None]:
        def run() -> None:
            for rows in zip(*(a[:loop] for a in arrays), strict=True):  # one state's rows at a time
                f(model, data, *rows)

        return run

    pool = pin.ModelPool(model, 1)
    qT, qdT, qddT, tauT = (np.asfortranarray(a.T) for a in (q, qd, qdd, tau))
    out = np.zeros((robot.n, N), order="F")
    return [
        (PIN_ID_LOOP, loop, python_loop(pin.rnea, q, qd, qdd)),
        (PIN_FD_LOOP, loop, python_loop(pin.aba, q, qd, tau)),
        (PIN_ID_BATCH, N, lambda: pin.rneaInParallel(1, pool, qT, qdT, qddT, out)),
        (PIN_FD_BATCH, N, lambda: pin.abaInParallel(1, pool, qT, qdT, tauT, out)),
    ]


def numpy_calls(spec: codegen.ModuleSpec, N: int) -> list[Call]:
    from robodyn.codegen.numpy_ import NumPyEmitter

    calls: list[Call] = []
    q, qd, qdd = states(spec.n, N)
    for half_angle, labels in ((True, (NP_ID, NP_FD)), (False, (NP_ID_LIBM, NP_FD_LIBM))):
        ((filename, text),) = NumPyEmitter(half_angle=half_angle).files(spec).items()
        module = ModuleType(filename.removesuffix(".py"))
        exec(compile(text, filename, "exec"), module.__dict__)
        k = module.constants([])
        tau = module.inverse_dynamics(k, q, qd, qdd)
        calls += [(labels[0], N, lambda m=module, k=k: m.inverse_dynamics(k, q, qd, qdd)),
                  (labels[1], N, lambda m=module, k=k, tau=tau: m.forward_dynamics(k, q, qd, tau))]
    return calls


def jax_calls(spec: codegen.ModuleSpec, N: int, device: object, labels: tuple[str, str]) -> list[Call]:
    """The batch functions under one ``jax.jit`` each, on ``device`` (inputs committed there)."""
    import jax

    module = codegen.load_python(None, "jax", spec=spec)
    k = jax.device_put(np.asarray(module.constants(np.zeros(0))), device)
    q, qd, qdd = (jax.device_put(a, device) for a in states(spec.n, N))
    inverse, forward = jax.jit(module.inverse_dynamics), jax.jit(module.forward_dynamics)
    tau = inverse(k, q, qd, qdd).block_until_ready()  # compiles
    forward(k, q, qd, tau).block_until_ready()
    return [(labels[0], N, lambda: inverse(k, q, qd, qdd).block_until_ready()),
            (labels[1], N, lambda: forward(k, q, qd, tau).block_until_ready())]


def gpu_device() -> object | None:
    try:
        import jax

        devices = jax.devices("gpu")
    except Exception:  # no JAX, or no GPU backend: JAX raises RuntimeError
        return None
    return devices[0] if devices else None


def steady_times(calls: list[Call], budget_s: float = 0.3, repeats: int = 3) -> list[tuple[str, int, float]]:
    """Best wall time per state of each call in steady state: benchmarks/numeric.py's ``best_times``
    (rounds interleaving the calls, each call repeated to fill about budget_s / repeats), except that
    every timed stretch of a call under half a second starts with one untimed call. Each call returns
    a fresh result of N states (48 MB for 10^6 states of six joints); in a virtual machine that hands
    idle memory back to its host, the first such allocation after a pause of a second or two (the
    Python loops take seconds) faults its pages back in at some 0.1 us per state, which is the
    machine's, not the generated code's."""
    inner, warm = [], []
    for _, _, call in calls:
        start = time.perf_counter()
        call()
        once = max(time.perf_counter() - start, 1e-7)
        inner.append(max(1, min(10_000, int(budget_s / repeats / once))))
        warm.append(once < 0.5)
    best = [float("inf")] * len(calls)
    for _ in range(repeats):
        for k, (_, _, call) in enumerate(calls):
            if warm[k]:
                call()
            start = time.perf_counter()
            for _ in range(inner[k]):
                call()
            best[k] = min(best[k], (time.perf_counter() - start) / inner[k])
    return [(label, N, t / N) for (label, N, _), t in zip(calls, best, strict=True)]


def report(robot: rd.Manipulator, spec: codegen.ModuleSpec, rows: list[tuple[str, int, float]], loop: int,
           N: int) -> str:
    values = {label: (n, t) for label, n, t in rows}
    lines = [f"\n## {robot.name} (n = {robot.n})\n"]
    counts = ", ".join(f"{r.name} {r.count.multiplications}m/{r.count.additions}a/{r.count.trig}sc"
                       for r in spec.routines if r.batched)
    lines.append(f"operations per state: {counts}\n")
    if PIN_ID_LOOP in values and loop < N:
        lines.append(f"**Note: the Pinocchio Python loop ran over the first {loop:,} of the {N:,} states "
                     "(--loop); its per-state time is compared with the others' over all of them.**\n")
    lines += ["| function | states | us/state | states/s |", "|---|---:|---:|---:|"]
    for label, (n, t) in values.items():
        lines.append(f"| {label} | {n:,} | {t * 1e6:.3f} | {1 / t:,.0f} |")
    lines.append("")
    for ours, theirs, goal in GOALS:
        if ours in values and theirs in values:
            ratio = values[theirs][1] / values[ours][1]
            verdict = "met" if ratio >= goal else "MISSED"
            lines.append(f"- {ours}: {ratio:.1f}x the states/s of {theirs} (goal >= {goal:g}x: {verdict})")
    for ours, theirs in OTHER_RATIOS:
        if ours in values and theirs in values:
            lines.append(f"- {ours}: {values[theirs][1] / values[ours][1]:.1f}x the states/s of {theirs} (no goal)")
    return "\n".join(lines)


def compile_figures(name: str = "puma560_symbolic") -> str:
    """Generation and compiler time, rd.compile from an empty cache, size of the C."""
    compile_module = importlib.import_module("robodyn.runtime.entry")  # (rd.compile is the function)
    robot = rd.load(name)
    start = time.perf_counter()
    spec = codegen.module_spec(robot)
    program = time.perf_counter() - start
    start = time.perf_counter()
    files = codegen.generate(None, "c", spec=spec)
    text = time.perf_counter() - start
    command = compile_module.find_compiler()
    lines = [f"\n## {name}: generation and compilation\n"]
    lines.append(f"- generation: Program and spec {program:.2f} s, C text {text:.2f} s")
    if command is not None:
        command = [*command, *compile_module.C_FLAGS, *compile_module.native_flags()]
        with tempfile.TemporaryDirectory() as work:
            for filename, body in files.items():
                Path(work, filename).write_text(body, encoding="utf-8")
            run = [*command, "-o", str(Path(work, "lib.so")), str(Path(work, f"{spec.name}.c")), "-lm"]
            start = time.perf_counter()
            result = subprocess.run(run, capture_output=True, text=True, check=False)
            compiler = time.perf_counter() - start
        if result.returncode == 0:
            lines.append(f"- compiler: {compiler:.2f} s (`{' '.join([Path(command[0]).name, *command[1:]])}`)")
        else:
            lines.append(f"- compiler failed: {' '.join(result.stderr.split())[-300:]}")
        with tempfile.TemporaryDirectory() as cache:
            start = time.perf_counter()
            rd.compile(robot, cache=cache)
            total = time.perf_counter() - start
        lines.append(f"- rd.compile from an empty cache (generation + compiler + loading): {total:.2f} s")
    else:
        lines.append("- no C compiler found: nothing compiled")
    source = files[f"{spec.name}.c"]
    lines.append(f"- {spec.name}.c: {len(source.encode()):,} bytes, {source.count(chr(10)):,} lines; "
                 f"{spec.name}.h: {len(files[spec.name + '.h'].encode()):,} bytes; "
                 f"{len(spec.parameters)} parameters, {spec.n_constants} constants")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["puma560", "industrial_6r"])
    parser.add_argument("--states", type=int, default=1_000_000, help="batch for the compiled C and Pinocchio")
    parser.add_argument("--loop", type=int, default=None,
                        help="states of the Pinocchio Python loop (default: all --states; fewer is reported)")
    parser.add_argument("--python-states", type=int, default=1_000_000, help="batch for the NumPy module")
    parser.add_argument("--jax-states", type=int, default=1_000_000, help="batch for JAX on the CPU (0: skip)")
    parser.add_argument("--gpu-states", type=int, default=10_000_000, help="batch for JAX on a GPU (0: skip)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    loop = min(args.loop if args.loop is not None else args.states, args.states)
    has_pin = importlib.util.find_spec("pinocchio") is not None
    has_jax = importlib.util.find_spec("jax") is not None
    print("# Generated code: compiled C, NumPy and JAX against Pinocchio\n")
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, NumPy {np.__version__}"
          + (", Pinocchio " + __import__("pinocchio").__version__ if has_pin else ", no Pinocchio"))
    print(f"Times: best of {args.repeats} interleaved rounds, each timed stretch after one untimed call (steady state:"
          " see steady_times).")
    gpu = None
    if has_jax:
        import jax

        jax.config.update("jax_enable_x64", True)
        cpu = jax.devices("cpu")[0]
        gpu = gpu_device() if args.gpu_states > 0 else None
        where = f"a GPU ({getattr(gpu, 'device_kind', gpu)}) for N = {args.gpu_states:,}" if gpu else "no GPU"
        print(f"JAX {jax.__version__}, float64, CPU; {where}")
    for name in args.robots:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rd.ModelWarning)
            robot = rd.load(name)
        spec = codegen.module_spec(robot)
        calls = compiled_calls(robot, args.states)
        calls += pinocchio_calls(robot, args.states, loop) if has_pin else []
        calls += numpy_calls(spec, args.python_states)
        if has_jax and args.jax_states > 0:
            calls += jax_calls(spec, args.jax_states, cpu, (JAX_ID, JAX_FD))
        if gpu is not None:
            calls += jax_calls(spec, args.gpu_states, gpu, (GPU_ID, GPU_FD))
        rows = steady_times(calls, budget_s=0.3, repeats=args.repeats)
        print(report(robot, spec, rows, loop, args.states))
    print(compile_figures())


if __name__ == "__main__":
    main()

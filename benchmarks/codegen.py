"""Generated code against Pinocchio: per-state times on large batches (prints markdown; never asserts).

    python benchmarks/codegen.py [--robots puma560 industrial_6r] [--states 1000000] [--loop 20000]
                                 [--python-states 200000] [--jax-states 1000000]

One process, one run. For each robot:

- ``robodyn.compile`` (the generated C, cc -O2, a loop over the batch in C): ``inverse_dynamics`` and
  ``forward_dynamics`` on ``--states`` states, against Pinocchio's ``rnea``/``aba`` called in a Python
  loop over the first ``--loop`` states and ``rneaInParallel``/``abaInParallel`` on one thread over all
  of them (the arm built from the DH table by tests/test_pinocchio.py); the ratios are printed;
- the generated NumPy module (blocks of states, vectorised) and the generated JAX module (``jax.jit``,
  on JAX's default device) on ``--python-states`` / ``--jax-states`` states: states per second.

Then the generation and compile time and the size of the generated C for ``puma560_symbolic``.
Times are the best of a few interleaved rounds (benchmarks/numeric.py's ``best_times``).
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

import robodyn as rd
from robodyn import codegen

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.numeric import best_times, states  # noqa: E402 - the repository root is on the path now

Call = tuple[str, int, Callable[[], object]]
C_ID, C_FD = "compiled C inverse_dynamics", "compiled C forward_dynamics"
PIN_ID_LOOP, PIN_FD_LOOP = "pinocchio rnea (Python loop)", "pinocchio aba (Python loop)"
PIN_ID_BATCH, PIN_FD_BATCH = "pinocchio rneaInParallel (1 thread)", "pinocchio abaInParallel (1 thread)"
NP_ID, NP_FD = "generated NumPy inverse_dynamics", "generated NumPy forward_dynamics"
JAX_ID, JAX_FD = "generated JAX inverse_dynamics (jit)", "generated JAX forward_dynamics (jit)"


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
    q, qd, qdd = states(robot.n, N)
    tau = rd.numeric.inverse_dynamics(robot, q, qd, qdd)

    def python_loop(f: Callable[..., object], *arrays: np.ndarray) -> Callable[[], None]:
        def run() -> None:
            for k in range(loop):
                f(model, data, *(a[k] for a in arrays))

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
    module = codegen.load_python(None, "numpy", spec=spec)
    k = module.constants([])
    q, qd, qdd = states(spec.n, N)
    tau = module.inverse_dynamics(k, q, qd, qdd)
    return [(NP_ID, N, lambda: module.inverse_dynamics(k, q, qd, qdd)),
            (NP_FD, N, lambda: module.forward_dynamics(k, q, qd, tau))]


def jax_calls(spec: codegen.ModuleSpec, N: int) -> list[Call]:
    import jax

    jax.config.update("jax_enable_x64", True)
    module = codegen.load_python(None, "jax", spec=spec)
    k = jax.numpy.asarray(module.constants(np.zeros(0)))
    q, qd, qdd = (jax.device_put(a) for a in states(spec.n, N))
    inverse, forward = jax.jit(module.inverse_dynamics), jax.jit(module.forward_dynamics)
    tau = inverse(k, q, qd, qdd).block_until_ready()  # compiles
    forward(k, q, qd, tau).block_until_ready()
    return [(JAX_ID, N, lambda: inverse(k, q, qd, qdd).block_until_ready()),
            (JAX_FD, N, lambda: forward(k, q, qd, tau).block_until_ready())]


def report(robot: rd.Manipulator, spec: codegen.ModuleSpec, rows: list[tuple[str, int, float]]) -> str:
    values = {label: (N, t) for label, N, t in rows}
    lines = [f"\n## {robot.name} (n = {robot.n})\n"]
    counts = ", ".join(f"{r.name} {r.count.multiplications}m/{r.count.additions}a" for r in spec.routines if r.batched)
    lines.append(f"operations per state: {counts}\n")
    lines += ["| function | states | us/state | states/s |", "|---|---:|---:|---:|"]
    for label, (N, t) in values.items():
        lines.append(f"| {label} | {N:,} | {t * 1e6:.3f} | {1 / t:,.0f} |")
    lines.append("")
    for ours, theirs in ((C_ID, PIN_ID_BATCH), (C_ID, PIN_ID_LOOP), (C_FD, PIN_FD_BATCH), (C_FD, PIN_FD_LOOP),
                         (NP_ID, PIN_ID_BATCH), (NP_FD, PIN_FD_BATCH), (JAX_ID, PIN_ID_BATCH)):
        if ours in values and theirs in values:
            ratio = values[theirs][1] / values[ours][1]
            lines.append(f"- {ours}: {ratio:.1f}x the states/s of {theirs}")
    return "\n".join(lines)


def compile_figures(name: str = "puma560_symbolic") -> str:
    robot = rd.load(name)
    start = time.perf_counter()
    spec = codegen.module_spec(robot)
    files = codegen.generate(None, "c", spec=spec)
    generated = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        rd.compile(robot, cache=cache)
        total = time.perf_counter() - start
    source = files[f"{spec.name}.c"]
    return (f"\n## {name}: generation and compilation\n\n"
            f"- Program + C text: {generated:.2f} s; rd.compile from an empty cache (generate + cc -O2): "
            f"{total:.2f} s\n"
            f"- {spec.name}.c: {len(source.encode()):,} bytes, {source.count(chr(10)):,} lines; "
            f"{spec.name}.h: {len(files[spec.name + '.h'].encode()):,} bytes; "
            f"{len(spec.parameters)} parameters, {spec.n_constants} constants")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["puma560", "industrial_6r"])
    parser.add_argument("--states", type=int, default=1_000_000, help="batch for the compiled C and Pinocchio")
    parser.add_argument("--loop", type=int, default=20_000, help="states of the Pinocchio Python loop")
    parser.add_argument("--python-states", type=int, default=200_000, help="batch for the NumPy module")
    parser.add_argument("--jax-states", type=int, default=1_000_000, help="batch for the JAX module (0: skip)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    has_pin = importlib.util.find_spec("pinocchio") is not None
    has_jax = importlib.util.find_spec("jax") is not None and args.jax_states > 0
    print("# Generated code: compiled C, NumPy and JAX against Pinocchio\n")
    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, NumPy {np.__version__}"
          + (", Pinocchio " + __import__("pinocchio").__version__ if has_pin else ", no Pinocchio"))
    if has_jax:
        import jax

        print(f"JAX {jax.__version__} on {jax.default_backend()} ({jax.devices()[0].device_kind})")
    for name in args.robots:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rd.ModelWarning)
            robot = rd.load(name)
        spec = codegen.module_spec(robot)
        calls = compiled_calls(robot, args.states)
        calls += pinocchio_calls(robot, args.states, min(args.loop, args.states)) if has_pin else []
        calls += numpy_calls(spec, args.python_states)
        calls += jax_calls(spec, args.jax_states) if has_jax else []
        rows = best_times(calls, budget_s=0.3, repeats=args.repeats)
        print(report(robot, spec, rows))
    print(compile_figures())


if __name__ == "__main__":
    main()

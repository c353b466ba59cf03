"""One state from Python: what a call costs, against a bare ctypes call and Pinocchio's (prints markdown).

    python benchmarks/calls.py [--robots puma560 panda] [--number 20000]

Per robot, the time of one call on one state (best of 5 rounds of ``--number`` calls, :mod:`timeit`; the same
random state throughout):

- the floor: a bare ctypes call of the compiled inverse-dynamics routine (``robodyn.runtime.entry``'s library,
  opened again with :class:`ctypes.CDLL`), its pointers bound once with :func:`functools.partial`, the arrays
  already in place: what any ctypes wrapper of the routine pays at least;
- ``CompiledDynamics.one_state(...)`` and the methods (``dyn.inverse_dynamics(q, qd, qdd)``) on one state, through
  ``robodyn._fastcall`` where it was built (``fastcall: no`` in the header otherwise);
- ``robodyn.numeric`` and the toolbox aliases over them, over Python floats and on the hot path (the compiled
  routines after ``$ROBODYN_HOT_CALLS`` calls: :mod:`robodyn.numeric.hotpath`);
- Pinocchio's ``rnea``, ``aba`` and ``crba`` on the same model (read from the same URDF for the Panda,
  :func:`robodyn.formats.pinocchio.to_pinocchio` for the PUMA), one thread.

Ratios: one_state against the floor, and every call against Pinocchio's call of the same quantity.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import importlib
import platform
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

import numpy as np

import robodyn as rd
from robodyn import numeric
from robodyn.analysis import toolbox

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.derivatives import load  # noqa: E402 - the repository root is on the path now


def per_call(fn: Callable[[], object], number: int) -> float:
    """Microseconds per call: the best of 5 rounds."""
    fn()
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def floor_call(dyn: rd.CompiledDynamics, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> Callable[[], None]:
    """The bare ctypes call of the library's inverse-dynamics routine on (q, qd, qdd), pointers bound once."""
    library = ctypes.CDLL(str(dyn.path))
    f = getattr(library, f"{Path(str(dyn.path)).stem}_inverse_dynamics_batch")
    f.argtypes = [ctypes.c_void_p] * 5 + [ctypes.c_size_t]
    f.restype = None
    k = dyn.constants()
    k = k if k.size else np.zeros(1)
    out = np.empty(dyn.n)
    call = functools.partial(f, k.ctypes.data, q.ctypes.data, qd.ctypes.data, qdd.ctypes.data, out.ctypes.data, 1)
    call()
    assert np.array_equal(out, dyn.inverse_dynamics(q, qd, qdd))  # the same routine, the same numbers
    call.keep = (library, k, out)  # type: ignore[attr-defined]
    return call


def run(name: str, number: int) -> str:
    import pinocchio as pin

    robot, model = load(name)
    data = model.createData()  # type: ignore[attr-defined]
    dyn = rd.compile(robot)
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1, 1, robot.n) for _ in range(3))
    pins = {"rnea": per_call(lambda: pin.rnea(model, data, q, qd, qdd), number),
            "aba": per_call(lambda: pin.aba(model, data, q, qd, qdd), number),
            "crba": per_call(lambda: pin.crba(model, data, q), number)}
    floor = per_call(floor_call(dyn, q, qd, qdd), number)
    one = dyn.one_state("inverse_dynamics")
    rows = [("bare ctypes call of the C (the floor)", "tau", floor, "rnea"),
            ("`dyn.one_state('inverse_dynamics')(q, qd, qdd)`", "tau", per_call(lambda: one(q, qd, qdd), number),
             "rnea"),
            ("`dyn.inverse_dynamics(q, qd, qdd)`", "tau", per_call(lambda: dyn.inverse_dynamics(q, qd, qdd), number),
             "rnea"),
            ("`dyn.forward_dynamics(q, qd, tau)`", "qdd", per_call(lambda: dyn.forward_dynamics(q, qd, qdd), number),
             "aba")]
    hot = numeric.hot_path(robot)
    calls = [("`numeric.inverse_dynamics`", "tau", lambda: numeric.inverse_dynamics(robot, q, qd, qdd), "rnea"),
             ("`numeric.forward_dynamics`", "qdd", lambda: numeric.forward_dynamics(robot, q, qd, qdd), "aba"),
             ("`numeric.mass_matrix`", "M", lambda: numeric.mass_matrix(robot, q), "crba"),
             ("`toolbox.rne`", "tau", lambda: toolbox.rne(robot, q, qd, qdd), "rnea"),
             ("`toolbox.accel`", "qdd", lambda: toolbox.accel(robot, q, qd, qdd), "aba")]
    hot.limit = 0  # over floats
    floats = [per_call(fn, max(1, number // 10)) for _, _, fn, _ in calls]
    hot.limit = hot.calls + 1  # the next call switches
    numeric.inverse_dynamics(robot, q, qd, qdd)
    if not hot.wait(timeout=600):
        raise SystemExit(f"the hot path did not switch: {hot.failure}")
    for (label, what, fn, peer), slow in zip(calls, floats, strict=True):
        rows.append((f"{label} over floats", what, slow, peer))
        rows.append((f"{label}, hot path", what, per_call(fn, number), peer))
    lines = [f"### {robot.name} ({robot.n} joints)", "",
             f"Pinocchio: rnea {pins['rnea']:.2f} us, aba {pins['aba']:.2f} us, crba {pins['crba']:.2f} us; "
             f"one_state / floor = {rows[1][2] / floor:.2f}", "",
             "| call on one state | result | us | Pinocchio's call | ratio to it |", "|---|---|---:|---|---:|"]
    lines += [f"| {label} | {what} | {us:.2f} | {peer} | {us / pins[peer]:.2f}x |" for label, what, us, peer in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["puma560", "panda"])
    parser.add_argument("--number", type=int, default=20_000, help="calls per timed round")
    args = parser.parse_args()
    try:
        importlib.import_module("robodyn._fastcall")
        built = "yes"
    except ImportError:
        built = "no (ctypes)"
    print(f"# One-state calls: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"NumPy {np.__version__}, fastcall: {built}\n")
    for name in args.robots:
        print(run(name, args.number), "\n", flush=True)


if __name__ == "__main__":
    main()

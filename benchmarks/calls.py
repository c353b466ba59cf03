"""One state from Python: what a call costs, against a bare ctypes call and Pinocchio's (prints markdown).

    python benchmarks/calls.py [--robots puma560 panda] [--number 20000]

Per robot, the time of one call on one state (best of 5 rounds of ``--number`` calls, :mod:`timeit`; the same
random state throughout):

- the floor: a bare ctypes call of the compiled inverse-dynamics routine (``robodyn.runtime.entry``'s library,
  opened again with :class:`ctypes.CDLL`), its pointers bound once with :func:`functools.partial`, the arrays
  already in place: what any ctypes wrapper of the routine pays at least;
- ``CompiledDynamics.one_state(...)`` and the methods (``dyn.inverse_dynamics(q, qd, qdd)``) on one state, through
  ``robodyn._fastcall`` where it was built (``fastcall: no`` in the header otherwise), and a batch of
  ``SMALL_BATCH`` states into ``out=`` (its time per state: what the batch call's fixed cost adds to one state);
- ``robodyn.numeric`` and the toolbox aliases over them, over Python floats and on the hot path (the compiled
  routines after ``$ROBODYN_HOT_CALLS`` calls: :mod:`robodyn.numeric.hotpath`). The hot path is reached plainly:
  each robot runs in a process of its own, whose first robodyn calls are a loop of one-state
  ``numeric.inverse_dynamics`` calls with nothing but ``robodyn`` and ``robodyn.numeric`` imported (not
  ``robodyn.runtime``, nor the toolbox, nor the Pinocchio reader, which import it), until the hot path has
  switched; its ratio to ``pinocchio.rnea`` on the same state is the headline;
- Pinocchio's ``rnea``, ``aba`` and ``crba`` on the same model (read from the same URDF for the Panda,
  :func:`robodyn.formats.pinocchio.to_pinocchio` for the PUMA), one thread.

Ratios: one_state against the floor, and every call against Pinocchio's call of the same quantity.
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import importlib
import os
import platform
import subprocess
import sys
import timeit
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

import robodyn as rd
from robodyn import numeric

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.urdf_survey import robots_directory  # noqa: E402 - the repository root is on the path now

#: The small batch's states (an MPC horizon's): its per-state time shows the fixed cost of a batch call.
SMALL_BATCH = 16


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


def load_plain(name: str) -> rd.Manipulator:
    """The robot, read without the Pinocchio reader (which imports robodyn.runtime)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)  # the mimic finger; the PUMA's published inertias
        if name == "panda":
            directory = robots_directory()
            if directory is None:
                raise SystemExit("example-robot-data is not installed (pip install example-robot-data)")
            return rd.load(directory / "panda_description" / "urdf" / "panda.urdf", mimic="independent")
        return rd.load(name)


def pinocchio_model(name: str, robot: rd.Manipulator) -> object:
    """Pinocchio's model of the robot: from the same URDF for the Panda, else to_pinocchio."""
    import pinocchio as pin

    if name == "panda":
        directory = robots_directory()
        assert directory is not None
        return pin.buildModelFromUrdf(str(directory / "panda_description" / "urdf" / "panda.urdf"))
    from robodyn.formats.pinocchio import to_pinocchio

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        return to_pinocchio(robot)


def switch_plainly(robot: rd.Manipulator, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> tuple[bool, int, float]:
    """One-state numeric.inverse_dynamics calls, as a user's loop makes them, until the hot path has switched:
    (whether robodyn.runtime was imported before the loop, the calls made, seconds until the switch)."""
    imported = "robodyn.runtime" in sys.modules
    hot = numeric.hot_path(robot)
    start = timeit.default_timer()
    calls = 0
    while hot.routines is None and hot.failure is None and calls < 10 * hot.limit:
        numeric.inverse_dynamics(robot, q, qd, qdd)
        calls += 1
    if not hot.wait(timeout=600):
        raise SystemExit(f"the hot path did not switch: {hot.failure or hot}")
    return imported, calls, timeit.default_timer() - start


def run(name: str, number: int) -> str:
    import pinocchio as pin

    robot = load_plain(name)
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1, 1, robot.n) for _ in range(3))
    imported, switch_calls, switch_s = switch_plainly(robot, q, qd, qdd)
    hot_tau = per_call(lambda: numeric.inverse_dynamics(robot, q, qd, qdd), number)

    from robodyn.analysis import toolbox  # (it imports robodyn.runtime: after the switch)

    model = pinocchio_model(name, robot)
    data = model.createData()  # type: ignore[attr-defined]
    pins = {"rnea": per_call(lambda: pin.rnea(model, data, q, qd, qdd), number),
            "aba": per_call(lambda: pin.aba(model, data, q, qd, qdd), number),
            "crba": per_call(lambda: pin.crba(model, data, q), number)}
    dyn = rd.compile(robot)
    floor = per_call(floor_call(dyn, q, qd, qdd), number)
    one = dyn.one_state("inverse_dynamics")
    rows = [("bare ctypes call of the C (the floor)", "tau", floor, "rnea"),
            ("`dyn.one_state('inverse_dynamics')(q, qd, qdd)`", "tau", per_call(lambda: one(q, qd, qdd), number),
             "rnea"),
            ("`dyn.inverse_dynamics(q, qd, qdd)`", "tau", per_call(lambda: dyn.inverse_dynamics(q, qd, qdd), number),
             "rnea"),
            ("`dyn.forward_dynamics(q, qd, tau)`", "qdd", per_call(lambda: dyn.forward_dynamics(q, qd, qdd), number),
             "aba")]
    Q, QD, QDD = (np.repeat(x[None], SMALL_BATCH, 0) for x in (q, qd, qdd))
    out = np.empty((SMALL_BATCH, robot.n))
    small = per_call(lambda: dyn.inverse_dynamics(Q, QD, QDD, out=out), max(1, number // SMALL_BATCH))
    rows.append((f"`dyn.inverse_dynamics(Q, QD, QDD, out=out)`, {SMALL_BATCH} states, per state", "tau",
                 small / SMALL_BATCH, "rnea"))
    slow = load_plain(name)  # another robot object: its own compiled model, its hot path off (over floats)
    numeric.hot_path(slow).limit = 0

    def calls(r: rd.Manipulator) -> list[tuple[str, str, Callable[[], object], str]]:
        return [("`numeric.inverse_dynamics`", "tau", lambda: numeric.inverse_dynamics(r, q, qd, qdd), "rnea"),
                ("`numeric.forward_dynamics`", "qdd", lambda: numeric.forward_dynamics(r, q, qd, qdd), "aba"),
                ("`numeric.mass_matrix`", "M", lambda: numeric.mass_matrix(r, q), "crba"),
                ("`toolbox.rne`", "tau", lambda: toolbox.rne(r, q, qd, qdd), "rnea"),
                ("`toolbox.accel`", "qdd", lambda: toolbox.accel(r, q, qd, qdd), "aba")]

    for (label, what, fn, peer), (_, _, fast, _) in zip(calls(slow), calls(robot), strict=True):
        rows.append((f"{label} over floats", what, per_call(fn, max(1, number // 10)), peer))
        rows.append((f"{label}, hot path", what, per_call(fast, number), peer))
    assert numeric.hot_path(robot).routines is not None and numeric.hot_path(slow).routines is None
    lines = [f"### {robot.name} ({robot.n} joints)", "",
             f"Hot path, reached plainly (robodyn.runtime imported before the loop: {'yes' if imported else 'no'}; "
             f"{switch_calls} one-state calls before waiting for the build, switched after {switch_s:.1f} s): "
             f"`numeric.inverse_dynamics` "
             f"{hot_tau:.2f} us, `pinocchio.rnea` {pins['rnea']:.2f} us on the same state: "
             f"**{hot_tau / pins['rnea']:.2f}x**", "",
             f"Pinocchio: rnea {pins['rnea']:.2f} us, aba {pins['aba']:.2f} us, crba {pins['crba']:.2f} us; "
             f"one_state / floor = {rows[1][2] / floor:.2f}", "",
             "| call on one state | result | us | Pinocchio's call | ratio to it |", "|---|---|---:|---|---:|"]
    lines += [f"| {label} | {what} | {us:.2f} | {peer} | {us / pins[peer]:.2f}x |" for label, what, us, peer in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["puma560", "panda"])
    parser.add_argument("--number", type=int, default=20_000, help="calls per timed round")
    parser.add_argument("--quiet", action="store_true", help="no header (one robot of several)")
    args = parser.parse_args()
    try:
        importlib.import_module("robodyn._fastcall")
        built = "yes"
    except ImportError:
        built = "no (ctypes)"
    if not args.quiet:
        print(f"# One-state calls: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
              f"NumPy {np.__version__}, fastcall: {built}\n", flush=True)
    if len(args.robots) == 1:
        print(run(args.robots[0], args.number), "\n", flush=True)
        return
    for name in args.robots:  # each in a process of its own: the hot path reached plainly in each
        result = subprocess.run([sys.executable, __file__, "--robots", name, "--number", str(args.number),
                                 "--quiet"], check=False, env=os.environ)
        if result.returncode:
            raise SystemExit(result.returncode)


if __name__ == "__main__":
    main()

"""What a cold ``rd.compile`` costs: the C compiler's CPU time and peak memory, the size of the C, and the speed
of the library it builds (prints a table; never asserts).

    python benchmarks/compile_cost.py [--robots puma560 panda:tau,M,forward,dtau,dqdd chain20] [--states 4096]
                                      [--split N]

For each robot (``NAME`` or ``NAME:OUTPUTS``, OUTPUTS comma-separated ``--outputs`` keys; default rd.compile's:
tau, M, h, bias, G, forward), in a fresh child process (so that the compiler's figures are its own): its routines
are generated first (not counted), then ``rd.compile`` builds them
into an empty cache; the compiler's CPU time (user + system) and peak resident memory are the children's
(``resource.getrusage(RUSAGE_CHILDREN)``: ``cc`` and the ``cc1`` it runs). Then the per-state time of every
routine on ``--states`` random states (best of 5). ``panda`` is example-robot-data's Panda URDF (its 9 joints,
fingers included); ``chainN`` an N-joint revolute chain with numeric parameters (modified DH, alternating twists);
any other name is ``rd.load``'s. ``--split N``: split routines above N statements (the C emitter's
``SPLIT_STATEMENTS``; 0 never splits), to compare.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
ROUTINES = {  # routine -> its inputs' names (q, qd, second)
    "inverse_dynamics": 3, "mass_matrix": 1, "coriolis": 2, "bias_forces": 2, "gravity": 1, "forward_dynamics": 3,
    "inverse_dynamics_derivatives": 3, "forward_dynamics_derivatives": 3,
}
SHORT = {"inverse_dynamics": "tau", "mass_matrix": "M", "coriolis": "h", "bias_forces": "bias", "gravity": "G",
         "forward_dynamics": "fwd", "inverse_dynamics_derivatives": "dtau", "forward_dynamics_derivatives": "dqdd"}
#: The issue's figures: the Panda's five outputs with the derivatives (524 KB of C), the 20-joint chain's defaults.
DEFAULT_ROBOTS = ["puma560", "panda:tau,M,forward,dtau,dqdd", "chain20"]


def chain(n: int, where: Path) -> Any:
    """An ``n``-joint revolute chain with numeric parameters (modified DH, alternating twists)."""
    import yaml

    import robodyn as rd

    links = [{"joint": "R", "a": 0.1 + 0.01 * i, "alpha": "pi/2" if i % 2 else "-pi/2", "d": 0.05 * (i % 3),
              "theta": 0.0, "mass": 1.0 + 0.1 * i, "com": [0.01, 0.02 * (i % 2), 0.03],
              "inertia": [[0.01, 0.001, 0.0], [0.001, 0.02, 0.0], [0.0, 0.0, 0.015]]} for i in range(n)]
    path = where / f"chain{n}.yaml"
    path.write_text(yaml.safe_dump({"name": f"chain{n}", "convention": "modified", "gravity": [0, 0, -9.81],
                                    "links": links}, sort_keys=False))
    return rd.load(str(path))


def robot(name: str, where: Path) -> Any:
    import robodyn as rd

    if name.startswith("chain") and name[5:].isdigit():
        return chain(int(name[5:]), where)
    if name == "panda":
        sys.path.insert(0, str(ROOT))
        from benchmarks.urdf_survey import robots_directory

        directory = robots_directory()
        path = directory / "panda_description" / "urdf" / "panda.urdf" if directory else Path("/tmp/panda.urdf")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return rd.load(str(path), mimic="independent")
    return rd.load(name)


def measure(label: str, states: int, split: int | None) -> dict[str, Any]:
    """One robot (``NAME[:OUTPUTS]``), in this process: generation, the cold compile, the per-state times."""
    import robodyn as rd
    from robodyn import codegen
    from robodyn.codegen import c as c_emitter

    if split is not None:
        c_emitter.SPLIT_STATEMENTS = split
    with tempfile.TemporaryDirectory() as tmp:
        name, _, keys = label.partition(":")
        outputs = tuple(keys.split(",")) if keys else None
        arm = robot(name, Path(tmp))
        start = time.process_time()
        spec = codegen.module_spec(arm, outputs)
        source = codegen.generate(arm, "c", spec=spec)[f"{spec.name}.c"]
        generate = time.process_time() - start
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.perf_counter()
        dyn = rd.compile(arm, outputs=outputs, cache=Path(tmp) / "cache", spec=spec)
        wall = time.perf_counter() - wall
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        rng = np.random.default_rng(0)
        n = arm.nv
        arrays = [rng.uniform(-np.pi, np.pi, (states, n)), rng.uniform(-2, 2, (states, n)),
                  rng.uniform(-5, 5, (states, n))]
        times = {}
        for routine, count in ROUTINES.items():
            if routine not in dyn.routines:
                continue
            method = getattr(dyn, routine)
            method(*arrays[:count])
            best = float("inf")
            for _ in range(5):
                t = time.perf_counter()
                method(*arrays[:count])
                best = min(best, time.perf_counter() - t)
            times[routine] = best / states * 1e9
    return {"robot": label, "n": n, "generate_s": generate, "cc_cpu_s": cpu, "cc_wall_s": wall,
            "cc_peak_mib": after.ru_maxrss / 1024, "c_kb": len(source.encode()) / 1000,
            "c_lines": source.count("\n"), "ns_per_state": times}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", nargs="+", default=DEFAULT_ROBOTS)
    parser.add_argument("--states", type=int, default=4096)
    parser.add_argument("--split", type=int, default=None, help="statements above which a routine is split")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.states, args.split)))
        return 0
    rows = []
    for name in args.robots:
        command = [sys.executable, __file__, "--one", name, "--states", str(args.states)]
        if args.split is not None:
            command += ["--split", str(args.split)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"split: {args.split if args.split is not None else 'default'}; {args.states} states; ns per state")
    print("| robot | n | C KB | C lines | generate s | cc CPU s | cc wall s | cc peak MiB | "
          + " | ".join(SHORT.values()) + " |")
    print("|---" * (8 + len(SHORT)) + "|")
    for row in rows:
        speeds = " | ".join(f"{row['ns_per_state'].get(r, float('nan')):.0f}" for r in SHORT)
        print(f"| {row['robot']} | {row['n']} | {row['c_kb']:.0f} | {row['c_lines']} | {row['generate_s']:.1f} | "
              f"{row['cc_cpu_s']:.1f} | {row['cc_wall_s']:.1f} | {row['cc_peak_mib']:.0f} | {speeds} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""CPU and wall time of ``program.build`` where the route choice used to stall (issue 29): right-angled chains'
``forward`` (``robodyn count CHAIN -O forward``) and ``tau, M, h, G`` of 7-joint arms (the goal: under 10 s).

    python benchmarks/route_choice.py [--max-n 20]

Rows, each in a fresh subprocess (the figures are of one build, after the imports and the model's loading):

- ``chain N``: N revolute joints, twists alternating -pi/2, pi/2, every length and inertia a floating-point number
  (the chain of the issue), ``forward``;
- ``kuka_iiwa14``: tests/data/kuka_iiwa14.yaml (DH table, masses of Stuerz et al. 2017), and the same
  with every length and inertial parameter a symbol (exact data: the factored route is tried there);
- ``lbr_iiwa (URDF)``: pybullet_data's kuka_iiwa/model.urdf (rtkg/lbr_iiwa), when pybullet is installed;
- ``panda``: example-robot-data's panda.urdf with both fingers locked (7 joints), when installed;
- ``puma560_symbolic``: M and G (the factored route wins both: the factoring itself still runs).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
IIWA = ROOT.parent / "tests" / "data" / "kuka_iiwa14.yaml"
DYNAMICS = ("tau", "M", "h", "G")


def chain(n: int) -> dict:
    """The issue's right-angled chain of n revolute joints (floating-point numbers)."""
    links = [{"joint": "R", "a": 0.1 + 0.01 * i, "alpha": "pi/2" if i % 2 else "-pi/2", "d": 0.05 * (i % 3),
              "theta": 0.0, "mass": 1.0 + 0.1 * i, "com": [0.01, 0.02 * (i % 2), 0.03],
              "inertia": [[0.01, 0.001, 0.0], [0.001, 0.02, 0.0], [0.0, 0.0, 0.015]]} for i in range(n)]
    return {"name": f"chain{n}", "convention": "modified", "gravity": [0, 0, -9.81], "links": links}


def symbolic_iiwa() -> dict:
    """kuka_iiwa14 with its lengths d1, d3, d5, d7, gravity g and every inertial parameter a symbol."""
    import yaml

    data = yaml.safe_load(IIWA.read_text())
    data["name"], data["gravity"] = "kuka_iiwa14_symbolic", [0, 0, "-g"]
    for k, link in enumerate(data["links"], 1):
        link["d"] = f"d{k}" if link["d"] else 0
        link["mass"], link["com"] = f"m{k}", [f"cx{k}", f"cy{k}", f"cz{k}"]
        link["inertia"] = [[f"I{a}{b}{k}" if a <= b else f"I{b}{a}{k}" for b in "xyz"] for a in "xyz"]
    return data


def load(arm: str) -> Any:  # a Manipulator (robodyn is imported in the child only)
    import robodyn as rd
    from robodyn import library
    from robodyn.formats.model_file import manipulator_from_dict

    if arm.startswith("chain:"):
        return manipulator_from_dict(chain(int(arm.split(":")[1])))
    if arm == "iiwa-symbolic":
        return manipulator_from_dict(symbolic_iiwa())
    if arm == "panda":
        return rd.load(arm_path(arm), lock={"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0})
    return rd.load(arm if arm in library.names() else arm_path(arm))


def arm_path(arm: str) -> Path:
    if arm == "iiwa":
        return IIWA
    if arm == "iiwa-urdf":
        import pybullet_data

        return Path(pybullet_data.getDataPath()) / "kuka_iiwa" / "model.urdf"
    if arm == "panda":  # example-robot-data (a test dependency) ships the URDF
        import importlib.metadata

        dist = importlib.metadata.distribution("example-robot-data")
        relative = "panda_description/urdf/panda.urdf"
        return next(Path(dist.locate_file(f)) for f in dist.files or [] if str(f).endswith(relative))
    return Path(arm)


def row(arm: str, outputs: tuple[str, ...]) -> dict:
    """One build in this process (the child's side)."""
    import time
    import warnings

    warnings.simplefilter("ignore")
    import robodyn.program.routes  # noqa: F401 (imported before the clock starts, as everything build uses)
    from robodyn.program import build

    robot = load(arm)
    cpu, wall = time.process_time(), time.perf_counter()
    program = build(robot, outputs)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    c = program.count()["evaluation"]
    return {"name": robot.name, "n": robot.n, "cpu": cpu, "wall": wall, "route": program.route,
            "multiplications": c.multiplications, "additions": c.additions}


def measure(arm: str, outputs: tuple[str, ...]) -> dict | None:
    """:func:`row` in a fresh Python process (None: the model is not installed here)."""
    proc = subprocess.run([sys.executable, __file__, "--row", arm, *outputs], capture_output=True, text=True,
                          check=False)
    if proc.returncode:
        if "ModuleNotFoundError" in proc.stderr or "PackageNotFoundError" in proc.stderr:
            return None
        raise RuntimeError(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-n", type=int, default=20)
    parser.add_argument("--row", nargs="+", help=argparse.SUPPRESS)  # the child: ARM OUTPUT...
    args = parser.parse_args()
    if args.row:
        print(json.dumps(row(args.row[0], tuple(args.row[1:]))))
        return
    print(f"{'arm':<26} {'n':>3} {'outputs':<10} {'CPU s':>7} {'wall s':>7} {'mult':>6} {'add':>6}  route")
    rows = [(f"chain:{n}", ("forward",)) for n in (6, 8, 10, 14, 20) if n <= args.max_n]
    rows += [("iiwa", DYNAMICS), ("iiwa-symbolic", DYNAMICS), ("iiwa-urdf", DYNAMICS), ("panda", DYNAMICS),
             ("puma560_symbolic", ("M", "G"))]
    for arm, outputs in rows:
        r = measure(arm, outputs)
        if r is None:
            print(f"{arm:<26} (not installed)")
            continue
        label = {"iiwa-urdf": "lbr_iiwa (URDF)"}.get(arm, r["name"])
        print(f"{label:<26} {r['n']:>3} {','.join(outputs):<10} {r['cpu']:>7.2f} {r['wall']:>7.2f} "
              f"{r['multiplications']:>6} {r['additions']:>6}  {r['route']}")


if __name__ == "__main__":
    main()

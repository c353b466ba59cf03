"""Trees and chains read from URDF, against Pinocchio: operation counts and compiled batch speed (prints markdown).

    python benchmarks/trees.py [--states 200000] [--robots panda icub_arm icub]

Robots, from example-robot-data's URDF files:

- ``panda``: the Panda with its two fingers, a tree of 9 joints (7 revolute, 2 prismatic on the hand); the
  mimic finger is read as an independent joint (``mimic="independent"``), as Pinocchio's reader does;
- ``icub_arm``: iCub's torso and left arm, a chain of 10 joints (icub.urdf, every other joint locked at 0);
- ``icub``: the whole iCub, a tree of 32 joints (legs, torso, arms, neck).

For each: the operation counts of ``tau``, ``M`` and ``forward`` (with both candidates, LDL^T over M and
Featherstone's ABA, and the one kept), then the per-state time of ``robodyn.runtime``'s C inverse and
forward dynamics against Pinocchio's ``rneaInParallel`` / ``abaInParallel`` on one thread over the same
states (its model built from the same description by :func:`robodyn.formats.pinocchio.to_pinocchio`), with the
ratios. Times are the best of a few interleaved rounds (benchmarks/codegen.py's ``steady_times``).
"""

from __future__ import annotations

import argparse
import platform
import sys
import warnings
from pathlib import Path

import robodyn as rd
from robodyn import program

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.codegen import (  # noqa: E402 - the repository root is on the path now
    C_FD,
    C_ID,
    PIN_FD_BATCH,
    PIN_ID_BATCH,
    compiled_calls,
    pinocchio_calls,
    steady_times,
)
from benchmarks.urdf_survey import robots_directory  # noqa: E402

ICUB_ARM = ("torso_pitch", "torso_roll", "torso_yaw", "l_shoulder_pitch", "l_shoulder_roll", "l_shoulder_yaw",
            "l_elbow", "l_wrist_prosup", "l_wrist_pitch", "l_wrist_yaw")


def load(name: str, directory: Path) -> rd.Manipulator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)  # the mimic finger; iCub's rounding noise
        if name == "panda":
            return rd.load(directory / "panda_description" / "urdf" / "panda.urdf", mimic="independent")
        path = directory / "icub_description" / "robots" / "icub.urdf"
        robot = rd.load(path)
        if name == "icub":
            return robot
        others = {link.name: 0.0 for link in robot.links if link.name not in ICUB_ARM}
        return rd.load(path, lock=others)


def counts(robot: rd.Manipulator) -> list[str]:
    lines = ["| output | route | mult | add | sin/cos |", "|---|---|---:|---:|---:|"]
    for output in ("tau", "M", "forward"):
        built = program.build(robot, (output,))
        c = built.count()["evaluation"]
        lines.append(f"| {output} | {built.route} | {c.multiplications} | {c.additions} | {c.trig} |")
        for name, (route, candidate) in built.candidates.items():
            lines.append(f"| {output}, candidate {name} | {route} | {candidate.multiplications} | "
                         f"{candidate.additions} | {candidate.trig} |")
    return lines


def speed(robot: rd.Manipulator, N: int) -> list[str]:
    rows = steady_times(compiled_calls(robot, N) + [c for c in pinocchio_calls(robot, N, 1)
                                                     if c[0] in (PIN_ID_BATCH, PIN_FD_BATCH)])
    values = {label: t for label, _, t in rows}
    lines = ["| function | us/state |", "|---|---:|"]
    lines += [f"| {label} | {t * 1e6:.3f} |" for label, t in values.items()]
    lines.append("")
    for ours, theirs in ((C_ID, PIN_ID_BATCH), (C_FD, PIN_FD_BATCH)):
        lines.append(f"- {ours}: {values[theirs] / values[ours]:.1f}x the states/s of {theirs}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--states", type=int, default=200_000)
    parser.add_argument("--robots", nargs="+", default=["panda", "icub_arm", "icub"],
                        choices=["panda", "icub_arm", "icub"])
    args = parser.parse_args()
    directory = robots_directory()
    if directory is None:
        sys.exit("example-robot-data's robots directory was not found (pip install example-robot-data)")
    print(f"# Trees from URDF ({platform.machine()}, Python {platform.python_version()}, {args.states:,} states)")
    for name in args.robots:
        robot = load(name, directory)
        kind = "tree" if robot.is_tree else "chain"
        print(f"\n## {name}: {robot.n} joints, a {kind} ({robot.joint_types})\n")
        print("\n".join(counts(robot)))
        print()
        print("\n".join(speed(robot, args.states)))


if __name__ == "__main__":
    main()

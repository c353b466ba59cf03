"""Operation counts of robodyn's programs beside Pinocchio's algorithms traced on CasADi SX (issue 33).

    python benchmarks/pinocchio_sx.py [--n 6 12 20 40] [--chains general tests] [--derivatives]
                                      [--peer-python /tmp/pinsx/bin/python] [--json out.json]

The peer, Pinocchio<SX>: Pinocchio 2.6.20 templated on ``casadi::SX`` as casadi_kin_dyn builds it (its
``crba()``, ``rnea()``: ``pinocchio::crba`` and ``pinocchio::rnea`` run on SX scalars, returned as a
``casadi.Function``). The PyPI wheels of ``pin`` ship no ``pinocchio.casadi`` (2.6.21, 2.7.0, 3.4.0, 3.9.0 and 4.1.0
looked at), but ``cmeel-casadi-kin-dyn`` brings Pinocchio and CasADi compiled together; it pins pin==2.6.20 and
CasADi 3.6, so it lives in a virtual environment of its own:

    python3.11 -m venv /tmp/pinsx && /tmp/pinsx/bin/pip install cmeel-casadi-kin-dyn

(its CasADi loads with ``LD_LIBRARY_PATH`` at the wheel's ``cmeel.prefix/lib``, which this script sets).

This file runs under both interpreters. Under robodyn's it draws the chains, counts robodyn's cheapest programs
(``robodyn.program.build``, the counting rules of :mod:`robodyn.program`: each binary * or / one multiplication,
each binary + or - one addition, negation free, sin/cos apart, the constants block not charged), writes each chain
as URDF (robodyn's writer, its joints made ``revolute`` so that Pinocchio's q is the angle, as robodyn's program
gets it, not Pinocchio's (cos, sin) of a ``continuous`` joint) and runs itself under the peer's interpreter with
``--peer URDF...``, which imports only casadi and casadi_kin_dyn and counts the instructions of each SX function
by the same rules (OP_MUL, OP_DIV, OP_SQ, OP_INV: multiplications; OP_ADD, OP_SUB, OP_TWICE: additions; OP_NEG,
constants, inputs, outputs: free; OP_SIN, OP_COS: trig; anything else: other), as traced and after CasADi's
common-subexpression elimination (``casadi.cse``, where the CasADi has it); the ratios are against the smaller.

M: both sides give the full n x n matrix and compute its upper triangle (Pinocchio's crba fills the upper
triangle; casadi_kin_dyn mirrors it, robodyn's lower entries refer to the upper ones: no operations either way).

Chains (numeric, gravity (0, 0, -9.81), no armature, damping or tip load):

- ``general``: n revolute joints of general geometry, every twist, length, offset and joint-angle offset a
  random non-zero number, dense inertias (tests/program/test_mass_matrix_route.py's ``general_chain(0, n)``);
- ``tests``: tests/conftest.py's ``random_robot(0, n, "modified", extras=False)``, the arms the test-suite
  draws (revolute and prismatic joints, 60 % of the twists 0 or +-pi/2).

``--derivatives`` adds CasADi's jacobian of Pinocchio<SX>'s rnea with respect to q and v beside robodyn's
``dtau`` (which robodyn builds up to a 40-link chain's size: ``robodyn.program.choice.MAX_DERIVATIVE_WORK``), and
CasADi's jacobian of Pinocchio<SX>'s aba (casadi_kin_dyn's ``aba()``: ``pinocchio::aba`` on SX) with respect to
q, v and tau beside robodyn's ``dqdd`` (dqdd_dq, dqdd_dqd, dqdd_dtau).

``--panda`` adds the Panda of example-robot-data (``panda_description/urdf/panda.urdf``, 7 arm joints and the two
finger joints: 9 coordinates on both sides; robodyn reads it with ``mimic="independent"``, as Pinocchio 2.6's URDF
parser does, which ignores the mimic tag); the peer reads the same file.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PEER_PYTHON = "/tmp/pinsx/bin/python"


# -- the peer's side (Pinocchio 2.6 on CasADi SX; imports no robodyn) ---------------------------------------------
def count_function(f: Any) -> dict[str, int]:
    """Operations of a casadi.Function of SX by the counting rules of the module docstring."""
    import casadi as cs

    kinds = {cs.OP_MUL: "multiplications", cs.OP_DIV: "multiplications", cs.OP_SQ: "multiplications",
             cs.OP_INV: "multiplications", cs.OP_ADD: "additions", cs.OP_SUB: "additions",
             cs.OP_TWICE: "additions", cs.OP_SIN: "trig", cs.OP_COS: "trig"}
    free = {cs.OP_NEG, cs.OP_CONST, cs.OP_INPUT, cs.OP_OUTPUT, cs.OP_PARAMETER}
    out = {"multiplications": 0, "additions": 0, "trig": 0, "other": 0}
    for k in range(f.n_instructions()):
        op = f.instruction_id(k)
        if op not in free:
            out[kinds.get(op, "other")] += 1
    return out


def count_both(f: Any) -> dict[str, Any]:
    """As traced, and after casadi.cse (when this CasADi has it)."""
    import casadi as cs

    out: dict[str, Any] = {"traced": count_function(f)}
    if hasattr(cs, "cse"):
        inputs = [cs.SX.sym(f.name_in(i), f.sparsity_in(i)) for i in range(f.n_in())]
        outputs = f.call(inputs)
        out["cse"] = count_function(cs.Function(f.name(), inputs, cs.cse(outputs)))
    return out


def peer(paths: list[str], derivatives: bool) -> None:
    """Counts of Pinocchio<SX>'s crba, rnea (and the jacobian of rnea in q and v) for each URDF, as JSON lines."""
    import casadi as cs
    from casadi_kin_dyn import casadi_kin_dyn as ckd

    for path in paths:
        kindyn = ckd.CasadiKinDyn(Path(path).read_text())
        row: dict[str, Any] = {"path": path, "nq": kindyn.nq(), "nv": kindyn.nv()}
        row["crba"] = count_both(kindyn.crba())
        rnea = kindyn.rnea()
        row["rnea"] = count_both(rnea)
        if derivatives:
            q, v, a = (cs.SX.sym(name, kindyn.nv()) for name in ("q", "v", "a"))
            tau = rnea(q, v, a)
            row["drnea"] = count_both(cs.Function("drnea", [q, v, a], [cs.jacobian(tau, q), cs.jacobian(tau, v)]))
            qdd = kindyn.aba()(q, v, a)  # a: the joint torques here
            row["daba"] = count_both(cs.Function("daba", [q, v, a], [cs.jacobian(qdd, q), cs.jacobian(qdd, v),
                                                                      cs.jacobian(qdd, a)]))
        print(json.dumps(row), flush=True)


# -- robodyn's side ---------------------------------------------------------------------------------------------
def general_chain(seed: int, n: int) -> Any:
    """n revolute joints of general geometry (module docstring; the chains the tests count)."""
    from tests.program.test_mass_matrix_route import general_chain as chain

    return chain(seed, n)


def tests_chain(seed: int, n: int) -> Any:
    """tests/conftest.py's random arm (no extras), with the URDF's gravity."""
    from tests.conftest import random_robot

    return random_robot(seed, n, "modified", extras=False).replace(gravity=(0, 0, -9.81), name=f"tests{n}")


def panda_path() -> Path:
    """example-robot-data's Panda URDF."""
    from benchmarks.urdf_survey import robots_directory

    directory = robots_directory()
    if directory is None:
        raise SystemExit("--panda: example-robot-data is not installed")
    return Path(directory) / "panda_description" / "urdf" / "panda.urdf"


def panda() -> Any:
    """The Panda with its fingers as independent joints (Pinocchio 2.6's reading of the mimic joint)."""
    import robodyn as rd

    return rd.load(panda_path(), mimic="independent")


def urdf_text(robot: Any) -> str:
    """robodyn's URDF of ``robot``, its continuous joints written revolute (Pinocchio's q the angle)."""
    from robodyn.formats.urdf import to_urdf

    return to_urdf(robot).replace('type="continuous">', 'type="revolute">\n    <limit lower="-10.0" upper="10.0" '
                                  'effort="0.0" velocity="0.0" />')


def robodyn_counts(robot: Any, derivatives: bool) -> dict[str, Any]:
    from robodyn.program import build
    from robodyn.program.choice import MAX_DERIVATIVE_WORK, derivative_work
    from robodyn.program.outputs import DERIVATIVE_GROUPS

    out: dict[str, Any] = {}
    groups: dict[str, tuple[str, ...]] = {"M": ("M",), "tau": ("tau",)}
    if derivatives and derivative_work(robot) <= MAX_DERIVATIVE_WORK:
        groups["dtau"] = DERIVATIVE_GROUPS["dtau"]
        groups["dqdd"] = DERIVATIVE_GROUPS["dqdd"]
    for name, outputs in groups.items():
        start = time.process_time()
        c = build(robot, outputs).count()["evaluation"]
        out[name] = {"multiplications": c.multiplications, "additions": c.additions, "trig": c.trig,
                     "cpu_s": round(time.process_time() - start, 1)}
    return out


def run_peer(python: str, script: str, paths: list[Path], derivatives: bool) -> list[dict[str, Any]]:
    """The JSON rows ``script --peer PATHS [--derivatives]`` prints, run under the peer's ``python`` (a venv with
    cmeel-casadi-kin-dyn; its CasADi's libraries on LD_LIBRARY_PATH)."""
    prefix = Path(python).absolute().parent.parent  # the venv (not resolved: its python is a link)
    libs = sorted(prefix.glob("lib/python3*/site-packages/cmeel.prefix/lib"))
    env = dict(os.environ)
    if libs:
        env["LD_LIBRARY_PATH"] = os.pathsep.join([str(libs[0]), env.get("LD_LIBRARY_PATH", "")]).rstrip(os.pathsep)
    command = [python, script, "--peer", *map(str, paths)] + (["--derivatives"] if derivatives else [])
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"the peer ({python}) failed: {done.stderr.strip().splitlines()[-1:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def peer_counts(python: str, paths: list[Path], derivatives: bool) -> list[dict[str, Any]]:
    return run_peer(python, __file__, paths, derivatives)


def best(peer_row: dict[str, Any]) -> dict[str, int]:
    """The peer's smaller count (after cse where there is one)."""
    return min(peer_row.values(), key=lambda c: (c["multiplications"] + c["additions"], c["multiplications"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, nargs="+", default=[6, 12, 20, 40])
    parser.add_argument("--chains", nargs="+", choices=("general", "tests"), default=["general", "tests"])
    parser.add_argument("--derivatives", action="store_true", help="also the jacobian of rnea against dtau")
    parser.add_argument("--panda", action="store_true", help="also example-robot-data's Panda (9 joints)")
    parser.add_argument("--peer-python", default=PEER_PYTHON, help="the interpreter with casadi_kin_dyn")
    parser.add_argument("--peer", nargs="+", help=argparse.SUPPRESS)  # the peer's side: count these URDFs
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    if args.peer:
        peer(args.peer, args.derivatives)
        return
    import warnings

    sys.path.insert(0, str(ROOT))  # tests.conftest's generators
    warnings.simplefilter("ignore")
    draw = {"general": general_chain, "tests": tests_chain}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        robots, paths = [], []
        for kind in args.chains:
            for n in args.n:
                robot = draw[kind](0, n)
                path = Path(tmp) / f"{kind}{n}.urdf"
                path.write_text(urdf_text(robot))
                robots.append((kind, n, robot))
                paths.append(path)
        if args.panda:
            robots.append(("panda", 9, panda()))
            paths.append(panda_path())
        peers = peer_counts(args.peer_python, paths, args.derivatives)
    parts = [("M", "crba"), ("tau", "rnea")] + ([("dtau", "drnea"), ("dqdd", "daba")] if args.derivatives else [])
    print("counts: multiplications/additions (trig apart); Pinocchio<SX> as traced, and after casadi.cse; "
          "ratio: robodyn / the smaller Pinocchio<SX> (multiplications; multiplications + additions)")
    print(f"{'chain':<8} {'n':>3} {'part':<5} {'robodyn':>13} {'Pinocchio<SX>':>14} {'after cse':>13} "
          f"{'ratio m':>8} {'ratio m+a':>9}")
    for (kind, n, robot), p in zip(robots, peers, strict=True):
        ours = robodyn_counts(robot, args.derivatives)
        for part, theirs in parts:
            if part not in ours:
                continue
            mine, traced, smaller = ours[part], p[theirs]["traced"], best(p[theirs])
            cse = p[theirs].get("cse")
            ratio_m = mine["multiplications"] / smaller["multiplications"]
            ratio_ma = ((mine["multiplications"] + mine["additions"])
                        / (smaller["multiplications"] + smaller["additions"]))
            cse_text = f"{cse['multiplications']}/{cse['additions']}" if cse else "-"
            print(f"{kind:<8} {n:>3} {part:<5} {mine['multiplications']:>6}/{mine['additions']:<6} "
                  f"{traced['multiplications']:>7}/{traced['additions']:<6} {cse_text:>13} {ratio_m:>8.2f} "
                  f"{ratio_ma:>9.2f}")
            rows.append({"chain": kind, "n": n, "part": part, "robodyn": mine, "pinocchio_sx": p[theirs],
                         "ratio_multiplications": ratio_m, "ratio_operations": ratio_ma})
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()

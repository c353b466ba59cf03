"""Closed chains: the palletizers and the parallelogram four-bar, beside HybrDyn's published figures and Pinocchio's
constraint dynamics (prints markdown; figures, not tests).

    python benchmarks/closed_chains.py [--states 20000] [--pinocchio-states 2000]

- Operation counts of ``tau``, ``M`` and ``forward`` (the straight-line program of the coupled tree: each passive
  angle +-q_i +-q_j + const, no trigonometric elimination, no division) and the time to build each, for the
  built-in robots (numbers) and for the palletizer with every inertial parameter a symbol (mass, centre of mass,
  inertia tensor of each link: what HybrDyn's ``_slag_vp2`` functions take, in another parameter form; HybrDyn's
  lengths are symbols too, robodyn's the exact numbers of the model file).
- HybrDyn's figures (SchapplM/robsynth-serhybroblib, the headers of its generated files, "Computational Cost"):
  palh3m2TE_invdynJ_fixb_slag_vp2 (trigonometric elimination) 730 mult + 499 add; palh3m2IC (implicit constraints,
  without the loop solve) 573 mult + 460 add + 8 div; palh3m2TE_inertiaJ_slag_vp2 240 mult + 229 add; a
  parallelogram four-bar 10 mult + 9 add (as issue 30 quotes them); the MPL800 kind (palh1m2, three
  parallelograms): palh1m2TE_invdynJ_fixb_slag_vp2 920 mult + 693 add, palh1m2DE1_invdynJ_fixb_slag_vp2 941 mult +
  626 add, palh1m2IC_invdynJ_fixb_slag_vp2 1373 mult + 967 add + 10 div, palh1m2TE_inertiaJ_slag_vp2 273 mult +
  267 add.
- Per-state time of the compiled C ``forward_dynamics`` and ``inverse_dynamics`` over a batch, against
  Pinocchio's ``constraintDynamics`` (the tree plus CONTACT_3D closures, proximal settings 1e-12 / 1e-10 / 20
  iterations) called in a Python loop, one state per call, and against its ``rnea`` on the tree, in one run.
"""

from __future__ import annotations

import argparse
import platform
import time
from typing import Any

import numpy as np
import sympy

import robodyn as rd
from robodyn import program
from robodyn.formats.pinocchio import to_pinocchio_closed
from robodyn.model.loops import open_tree

HYBRDYN = {("palletizer_kr700pa", "tau"): "730m + 499a (TE); 573m + 460a + 8d (IC, no loop solve)",
           ("palletizer_kr700pa", "M"): "240m + 229a (TE)",
           ("palletizer_mpl800", "tau"): "920m + 693a (TE); 941m + 626a (DE1); 1373m + 967a + 10d (IC)",
           ("palletizer_mpl800", "M"): "273m + 267a (TE)",
           ("fourbar_parallelogram", "tau"): "10m + 9a"}
PALLETIZERS = ("palletizer_kr700pa", "palletizer_mpl800")


def symbolic_inertia(robot: rd.Manipulator) -> rd.Manipulator:
    """``robot`` with every link's mass, centre of mass and inertia tensor symbols (m1, cx1, ..., XX1, XY1, ...)."""
    links = []
    for k, link in enumerate(robot.links, start=1):
        def s(name: str, k: int = k) -> sympy.Symbol:
            return sympy.Symbol(f"{name}{k}")

        inertia = [[s("XX"), s("XY"), s("XZ")], [s("XY"), s("YY"), s("YZ")], [s("XZ"), s("YZ"), s("ZZ")]]
        links.append(link.replace(mass=s("m"), com=(s("cx"), s("cy"), s("cz")), inertia=inertia))
    return robot.replace(links=tuple(links), gravity=(0, 0, -sympy.Symbol("g")), name=f"{robot.name}_symbolic")


def count_rows(label: str, robot: rd.Manipulator, key: str) -> list[str]:
    rows = []
    for output in ("tau", "M", "forward"):
        start = time.perf_counter()
        built = program.build(robot, (output,))
        seconds = time.perf_counter() - start
        c = built.count()["evaluation"]
        trig = f"{c.trig} + {c.functions} other functions" if c.functions else f"{c.trig}"  # sin/cos of sums
        rows.append(f"| {label} | {output} | {c.multiplications}m + {c.additions}a | {trig} | {seconds:.2f} s | "
                    f"{HYBRDYN.get((key, output), '')} |")
    return rows


def best(call: Any, rounds: int = 3) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def speed(name: str, states: int, pinocchio_states: int) -> list[str]:
    import pinocchio as pin

    robot = rd.load(name)
    compiled = rd.compile(robot)
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-0.5, 0.5, (3, states, robot.nv))
    tau = compiled.inverse_dynamics(q, qd, qdd)
    id_c = best(lambda: compiled.inverse_dynamics(q, qd, qdd)) / states
    fd_c = best(lambda: compiled.forward_dynamics(q, qd, tau)) / states
    model, constraints = to_pinocchio_closed(robot)
    data = model.createData()
    datas = pin.StdVec_RigidConstraintData()
    for constraint in constraints:
        datas.append(constraint.createData())
    pin.initConstraintDynamics(model, data, constraints, datas)
    settings = pin.ProximalSettings(1e-12, 1e-10, 20)
    from robodyn.numeric import compile_model, couplings

    tree = compile_model(robot)  # the tree's state from the robot's: q_tree = g(q), its rate and acceleration
    order = np.array(open_tree(robot).depth_first())
    m = min(states, pinocchio_states)
    qt = couplings.position(tree, q[:m])[:, order]
    vt = couplings.rate(tree, qd[:m], q[:m])[:, order]
    at = couplings.acceleration(tree, q[:m], qd[:m], qdd[:m])[:, order]
    actuation = np.zeros((m, robot.n))
    actuation[:, list(robot.independent)] = tau[:m]
    actuation = actuation[:, order]

    def pin_fd() -> None:
        for k in range(m):
            pin.constraintDynamics(model, data, qt[k], vt[k], actuation[k], constraints, datas, settings)

    def pin_id() -> None:
        for k in range(m):
            pin.rnea(model, data, qt[k], vt[k], at[k])

    fd_p, id_p = best(pin_fd) / m, best(pin_id) / m
    worst = 0.0
    for k in range(min(m, 200)):
        ddq = pin.constraintDynamics(model, data, qt[k], vt[k], actuation[k], constraints, datas, settings)
        expected = at[k]
        worst = max(worst, float(np.abs(ddq - expected).max() / max(1.0, np.abs(expected).max())))
    return [f"| {name} | forward | {fd_c * 1e9:.0f} ns | {fd_p * 1e9:.0f} ns (constraintDynamics, loop) | "
            f"{fd_p / fd_c:.0f}x | {worst:.1e} |",
            f"| {name} | inverse | {id_c * 1e9:.0f} ns | {id_p * 1e9:.0f} ns (rnea on the tree, loop) | "
            f"{id_p / id_c:.0f}x | |"]


#: The four-bars: a parallelogram (linear couplings) and a crank-rocker (its passive angles in closed form).
FOURBARS = ("fourbar_parallelogram", "fourbar_crank_rocker")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=20000)
    parser.add_argument("--pinocchio-states", type=int, default=2000)
    args = parser.parse_args()
    print(f"closed chains ({platform.processor() or platform.machine()}, Python {platform.python_version()})\n")
    print("| robot | output | robodyn | trig | built in | HybrDyn (published) |")
    print("|---|---|---|---|---|---|")
    for name in PALLETIZERS:
        palletizer = rd.load(name)
        for label, robot in ((f"{name} (numbers)", palletizer), (f"{name} (inertia symbolic)",
                                                                 symbolic_inertia(palletizer))):
            for row in count_rows(label, robot, name):
                print(row)
    for name in FOURBARS:
        for row in count_rows(name, rd.load(name), name):
            print(row)
    print("\n| robot | routine | robodyn C, per state | Pinocchio, per state | ratio | max rel. difference |")
    print("|---|---|---|---|---|---|")
    for name in (*PALLETIZERS, *FOURBARS):
        for row in speed(name, args.states, args.pinocchio_states):
            print(row)


if __name__ == "__main__":
    main()

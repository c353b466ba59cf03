"""Published operation counts, and the summary ``robodyn count`` prints."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from robodyn.model.manipulator import Manipulator
from robodyn.program import build
from robodyn.program.outputs import DERIVATIVE_GROUPS


@dataclass(frozen=True)
class Figure:
    source: str
    multiplications: int
    additions: int


#: (library robot, output) -> the operation counts published for it.
FIGURES: dict[tuple[str, str], tuple[Figure, ...]] = {
    ("puma560_symbolic", "tau"): (
        Figure("EMDEG (Burdick 1986)", 401, 254),
        Figure("SymPyBotics, modified DH, all inertial parameters symbolic", 362, 319),
    ),
    ("puma560_symbolic", "elements"): (Figure("EMDEG (Burdick 1986)", 291, 131),),
    ("puma560", "tau (base parameters)"): (
        Figure("customised Newton-Euler, base parameters as symbols, Staubli RX-90 (SYMORO+; Khalil and Dombre)",
               160, 113),
    ),
    ("puma560", "tau"): (
        Figure("Angeles, Ma and Rojas 1989, general geometry", 521, 435),
    ),
    ("two_link_payload", "tau"): (
        Figure("Macsyma (thesis appendix)", 30, 17),
        Figure("minimum quoted in the Macsyma thesis appendix", 20, 14),
    ),
    ("two_link_payload", "forward"): (
        Figure("Macsyma (thesis appendix)", 57, 33),
    ),
}


def count_summary(
    robot: Manipulator, output: str = "tau", route: str = "auto", *, base: Any = None
) -> dict[str, Any]:
    """What ``robodyn count`` reports: the counts of the cheapest program for ``output``,
    the route taken, the constants block apart, and the published figures for this robot
    (``base``: the robot's base parameters, for the model in them, :func:`robodyn.program.build`).
    ``output`` may also name a group of derivatives built as one program
    (:data:`~robodyn.program.outputs.DERIVATIVE_GROUPS`: ``dtau``, ``dqdd``)."""
    program = build(robot, DERIVATIVE_GROUPS.get(output, (output,)), route=route, base=base)
    counts = program.count()
    run, constants = counts["evaluation"], counts["constants"]
    key = (robot.name, f"{output} (base parameters)" if base is not None else output)
    return {
        "robot": robot.name,
        "output": key[1],
        "route": program.route,
        "multiplications": run.multiplications,
        "additions": run.additions,
        "trig": run.trig,
        "constants": {"multiplications": constants.multiplications, "additions": constants.additions},
        "parameters": [str(s) for s in program.inputs["parameters"]],
        "unused_parameters": [str(s) for s in program.unused_parameters()],
        "published": [asdict(f) for f in FIGURES.get(key, ())],
        **_candidates(program),
    }


def _candidates(program: Any) -> dict[str, Any]:
    """The ways to ``forward`` that :func:`robodyn.program.build` tried (L D L^T and the articulated-body
    algorithm), each one's route and count, and the one kept (``picked``); nothing for other outputs."""
    if not program.candidates:
        return {}
    counts = {name: {"route": route, "multiplications": c.multiplications, "additions": c.additions}
              for name, (route, c) in program.candidates.items()}
    picked = next(name for name, (route, _) in program.candidates.items() if route == program.route)
    return {"forward_candidates": counts, "picked": picked}


def format_summary(summary: dict[str, Any]) -> str:
    """Plain text of :func:`count_summary`."""
    lines = [
        f"{summary['robot']}, {summary['output']}: {summary['multiplications']} multiplications, "
        f"{summary['additions']} additions, {summary['trig']} sin/cos per evaluation "
        f"(route: {summary['route']}); constants computed once: {summary['constants']['multiplications']} "
        f"multiplications, {summary['constants']['additions']} additions",
    ]
    if "forward_candidates" in summary:
        ways = [f"by {name} (route {c['route']}): {c['multiplications']} multiplications, {c['additions']} additions"
                for name, c in summary["forward_candidates"].items()]
        lines.append(f"  forward {'; '.join(ways)}; picked {summary['picked']}, the cheaper")
    if summary["unused_parameters"]:
        lines.append(f"  parameters that cannot act on {summary['output']}: " + ", ".join(summary["unused_parameters"]))
    if "base" in summary["output"]:
        lines.append(f"  inputs: {len(summary['parameters'])} parameters, in this order: "
                     + ", ".join(summary["parameters"]))
    for f in summary["published"]:
        lines.append(f"  {f['source']}: {f['multiplications']} multiplications, {f['additions']} additions")
    return "\n".join(lines)

"""The route choice without expansion (issue 29): the plans of the built-in robots as they were, a long chain's
routes chosen from an estimate (no canonical form computed), the factoring capped, and the command line's
``count`` of a 20-joint chain finishing, and stopping on Ctrl-C with one line. Durations are in
benchmarks/route_choice.py."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

import pytest
import yaml

from robodyn import library
from robodyn.formats.model_file import manipulator_from_dict
from robodyn.program import build, choice, routes
from robodyn.program.outputs import PARTS
from robodyn.program.progress import reporting
from tests.conftest import load_quiet, random_robot, without_loops

DATA = Path(__file__).resolve().parent.parent / "data"
#: The route of every part that ``route="auto"`` tries to factor, as chosen before issue 29 (by expanding first).
PLANS = {
    **{name: dict.fromkeys(PARTS, "factored")
       for name in ("double_pendulum", "stanford_modified", "two_link_fu", "two_link_payload")},
    **{name: {"M": "recursive", "G": "recursive"}
       for name in ("industrial_6r", "puma560", "puma560_rtb", "stanford_arm", "torso_two_arms")},
    "puma560_symbolic": {"M": "factored", "G": "factored"},
}


def chain(n: int) -> dict[str, Any]:
    """n revolute joints, twists alternating -pi/2, pi/2, every number floating-point (the issue's chain)."""
    links = [{"joint": "R", "a": 0.1 + 0.01 * i, "alpha": "pi/2" if i % 2 else "-pi/2", "d": 0.05 * (i % 3),
              "theta": 0.0, "mass": 1.0 + 0.1 * i, "com": [0.01, 0.02 * (i % 2), 0.03],
              "inertia": [[0.01, 0.001, 0.0], [0.001, 0.02, 0.0], [0.0, 0.0, 0.015]]} for i in range(n)]
    return {"name": f"chain{n}", "convention": "modified", "gravity": [0, 0, -9.81], "links": links}


def write_chain(tmp_path: Path, n: int) -> Path:
    path = tmp_path / f"chain{n}.yaml"
    path.write_text(yaml.safe_dump(chain(n), sort_keys=False))
    return path


def no_factoring(monkeypatch: pytest.MonkeyPatch, *, expansion: bool = True) -> None:
    """Any factoring (and, ``expansion=False``, any canonical form) fails the test."""
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the factored route was tried" if expansion else "a canonical form was computed")

    monkeypatch.setitem(routes.PART_ROUTES, "factored", refused)
    if not expansion:
        monkeypatch.setattr(routes, "canonical_terms", refused)
        monkeypatch.setattr(routes, "factored_size", refused)


@pytest.mark.parametrize("name", sorted(PLANS))
def test_the_plans_of_the_built_in_robots_are_unchanged(name: str) -> None:
    robot = load_quiet(str(DATA / f"{name}.yaml")) if name == "torso_two_arms" else load_quiet(name)
    ctx = routes.Context(robot)
    assert {part: choice._cheapest_route(ctx, part) for part in PLANS[name]} == PLANS[name]


def test_every_built_in_robot_is_in_the_table() -> None:
    assert set(without_loops(library.names())) <= set(PLANS)  # closed chains: the coupled recursive route


@pytest.mark.parametrize("name", ["puma560", "puma560_symbolic", "industrial_6r", "stanford_arm", "two_link_payload"])
def test_the_term_estimate_is_near_the_canonical_count(name: str) -> None:
    """The estimate (no expansion) against the count of the expanded form: within the factors
    choice.FACTORED_ESTIMATE's comment gives."""
    ctx = routes.Context(load_quiet(name))
    for part in ("M", "G"):
        terms, _ = routes.factored_size(ctx, part)
        assert 1.0 * terms <= routes.term_estimate(ctx, part) <= 15 * terms


def test_a_long_chain_is_planned_without_expanding(monkeypatch: pytest.MonkeyPatch) -> None:
    robot = manipulator_from_dict(chain(12))
    ctx = routes.Context(robot)
    assert min(routes.term_estimate(ctx, part) for part in ("M", "G")) > choice.FACTORED_ESTIMATE
    no_factoring(monkeypatch, expansion=False)
    assert build(robot, ("tau", "M", "h", "G")).route == "recursive"


def right_angled_arm(seed: int, n: int) -> Any:
    """A random right-angled arm (floating-point numbers) with no joint offsets: one the factored route is tried on."""
    robot = random_robot(seed, n, "modified", right_angled=True)
    return robot.replace(links=tuple(link.replace(theta=0) for link in robot.links))


def test_floating_point_arms_whose_recursion_is_cheap_are_not_factored(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 5-joint right-angled arm with floating-point data: its G is expanded (388 terms) but not factored, the
    recursion costing less than FLOAT_TERM_COST operations a term (52 operations; factored: 221)."""
    robot = right_angled_arm(4, 5)
    ctx = routes.Context(robot)
    terms, _ = routes.factored_size(ctx, "G")
    assert robot.has_floats and routes.right_angled(robot)
    assert routes.part_cost(ctx, "G", "recursive")[0] <= choice.FLOAT_TERM_COST * terms
    no_factoring(monkeypatch)
    assert choice._cheapest_route(ctx, "G") == "recursive"


@pytest.mark.parametrize(("seed", "plan"), [(1, {"M": "factored", "G": "factored"}),
                                            (4, {"M": "recursive", "G": "factored"})])
def test_floating_point_arms_keep_the_factored_route_where_it_wins(seed: int, plan: dict[str, str]) -> None:
    """4-joint right-angled random arms (floating-point numbers) whose parts the factored route wins: seed 1's M
    and G (17 operations against 18, 8 against 19), seed 4's G (34 against 39: 0.39 operations a term by the
    recursion, the least among the wins measured); seed 4's M it loses (57 against 53)."""
    robot = right_angled_arm(seed, 4)
    ctx = routes.Context(robot)
    assert robot.has_floats and robot.n > choice.FACTORED_LIMIT
    assert {part: choice._cheapest_route(ctx, part) for part in ("M", "G")} == plan


def test_the_factoring_work_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond FACTORED_WORK (entries times terms) the recursion is taken without trying to factor: the symbolic
    PUMA's M (which the factored route wins under the default cap) with the cap lowered below its 13,072."""
    ctx = routes.Context(load_quiet("puma560_symbolic"))
    terms, entries = routes.factored_size(ctx, "M")
    assert terms * entries <= choice.FACTORED_WORK
    monkeypatch.setattr(choice, "FACTORED_WORK", terms * entries - 1)
    no_factoring(monkeypatch)
    assert choice._cheapest_route(ctx, "M") == "recursive"


def test_the_stages_of_a_build_are_told() -> None:
    told: list[str] = []
    with reporting(told.append):
        build(load_quiet("puma560"), ("M", "forward"))
    for step in ("choosing the route of M", "building M (recursive)", "forward by L D L^T",
                 "forward by the articulated-body algorithm", "tidying the program"):
        assert step in told, (step, told)
    build(load_quiet("double_pendulum"), ("M",))  # no listener: nothing told, nothing fails
    assert told.count("choosing the route of M") == 1


def test_count_forward_on_a_20_joint_chain(tmp_path: Path) -> None:
    """``robodyn count CHAIN20 -O forward`` (which expanded M for minutes) finishes: the articulated-body
    algorithm picked, both candidates counted. A fresh process, with a hang guard only."""
    path = write_chain(tmp_path, 20)
    proc = subprocess.run([sys.executable, "-m", "robodyn", "count", str(path), "-O", "forward", "-f", "json"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    assert data["picked"] == "ABA" and data["route"] == "aba"
    assert (data["multiplications"], data["additions"], data["trig"]) == (3620, 2947, 40)
    # LDL^T over M projected in the root frame (issue 33): 5302 + 4409 where the carried M gave 5543 + 4362
    assert data["forward_candidates"]["LDL^T"] == {"route": "recursive", "multiplications": 5302, "additions": 4409}


def _lines_until(stream: IO[str], prefix: str, hang: float) -> list[str]:
    """The lines read from ``stream`` up to the first that starts with ``prefix``; AssertionError if the stream
    ends first or none comes within ``hang`` seconds (a hang guard, not a timing)."""
    found: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for line in stream:
            found.put(line)
            if line.startswith(prefix):
                return
        found.put(None)

    threading.Thread(target=read, daemon=True).start()
    lines: list[str] = []
    while True:
        try:
            line = found.get(timeout=hang)
        except queue.Empty:
            raise AssertionError(f"no line {prefix!r} within {hang} s: {lines}") from None
        if line is None:
            raise AssertionError(f"the stream ended before a line {prefix!r}: {lines}")
        lines.append(line)
        if line.startswith(prefix):
            return lines


def test_ctrl_c_stops_a_long_count_with_one_line(tmp_path: Path) -> None:
    """SIGINT during the build of a 30-joint chain's derivatives (tens of seconds of work), sent once the build
    says on stderr that it has begun (``$ROBODYN_PROGRESS=lines``): exit code 130 and the one line "interrupted"
    after the build's lines, no traceback. The bounds are hang guards, not timings."""
    path = write_chain(tmp_path, 30)
    proc = subprocess.Popen([sys.executable, "-m", "robodyn", "count", str(path), "-O", "dqdd"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "ROBODYN_PROGRESS": "lines"})
    assert proc.stderr is not None
    try:
        _lines_until(proc.stderr, "building the program for chain30: building", 300)
    except AssertionError:
        proc.kill()
        raise
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("the count did not stop within 60 s of SIGINT") from None
    assert proc.returncode == 130, err[-2000:]
    told = [line for line in err.splitlines() if line.strip() and not line.startswith("building the program")]
    assert told == ["interrupted"], err[-2000:]

"""Shared fixtures: random arms drawn from a seed (so hypothesis can shrink the seed)."""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import settings

import robodyn as rd
from robodyn.model.params import random_values
from tests.fuzz import harness

# The numeric engine's hot path compiles a robot's routines in the background after many one-state calls
# (robodyn.numeric.hotpath): the suite keeps such calls over floats (no compiles racing the tests);
# tests/runtime/test_hotpath.py turns it on for robots of its own.
os.environ.setdefault("ROBODYN_HOT_CALLS", "0")

# CI draws the same examples every run (reproducible timing and failures); locally they vary.
settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q @ np.diag(np.sign(np.diag(r)))
    return q if np.linalg.det(q) > 0 else -q


def random_inertia(rng: np.random.Generator, mass: float) -> list[list[float]]:
    """A physically valid tensor: second moments x, y, z > 0 give moments (y+z, x+z, x+y)."""
    x, y, z = rng.uniform(0.001, 0.05, 3) * mass
    R = random_rotation(rng)
    tensor = R @ np.diag([y + z, x + z, x + y]) @ R.T
    tensor = (tensor + tensor.T) / 2
    return tensor.tolist()


def random_robot(
    seed: int,
    n: int,
    convention: str,
    *,
    extras: bool = True,
    right_angled: bool = False,
) -> rd.Manipulator:
    """A random serial arm with mixed R/P joints, all parameters numeric (floats).

    ``right_angled``: every twist a multiple of pi/2 (written exactly), as most industrial arms."""
    rng = np.random.default_rng(seed)
    alphas = [0.0, np.pi / 2, -np.pi / 2]
    rows = []
    for _ in range(n):
        mass = float(rng.uniform(0.2, 5.0))
        rows.append(
            {
                "joint": "R" if rng.random() < 0.7 else "P",
                "a": float(rng.uniform(-0.8, 0.8)),
                "alpha": (["0", "pi/2", "-pi/2"][rng.integers(3)] if right_angled
                          else alphas[rng.integers(3)] if rng.random() < 0.6
                          else float(rng.uniform(-np.pi, np.pi))),
                "d": float(rng.uniform(-0.5, 0.5)),
                "theta": 0.0 if rng.random() < 0.5 else float(rng.uniform(-np.pi, np.pi)),
                "mass": mass,
                "com": rng.uniform(-0.3, 0.3, 3).tolist(),
                "inertia": random_inertia(rng, mass),
                "damping": float(rng.uniform(0, 1)) if extras else 0.0,
                "armature": float(rng.uniform(0, 0.3)) if extras else 0.0,
            }
        )
    kwargs = {}
    if extras:
        kwargs["tip_force"] = rng.uniform(-5, 5, 3).tolist()
        kwargs["tip_moment"] = rng.uniform(-2, 2, 3).tolist()
        if rng.random() < 0.5:
            pm = float(rng.uniform(0.1, 2))
            kwargs["payload"] = rd.Payload(mass=pm, com=rng.uniform(-0.2, 0.2, 3).tolist(),
                                           inertia=random_inertia(rng, pm))
    gravity = rng.normal(size=3)
    gravity = (9.81 * gravity / np.linalg.norm(gravity)).tolist()
    return rd.Manipulator.from_dh(rows, convention=convention, gravity=gravity, name=f"random{seed}", **kwargs)


def random_tree(seed: int, n: int, convention: str, *, extras: bool = True, placements: bool = True) -> rd.Manipulator:
    """A random kinematic tree: the links of :func:`random_robot`, each hung on a random earlier link or the
    base (at least one branch; any order, not only depth first), a third of them with a random fixed
    placement unless ``placements=False`` (Kane's algorithm refuses placements)."""
    chain = random_robot(seed, n, convention, extras=extras)
    rng = np.random.default_rng(seed + 10_000)
    parents = [-1] + [int(rng.integers(-1, i)) for i in range(1, n)]
    if parents == list(range(-1, n - 1)):
        parents[-1] = -1 if n < 3 else n - 3
    links = []
    for link in chain.links:
        if rng.random() < 1 / 3 and placements:
            T = np.eye(4)
            T[:3, :3] = random_rotation(rng)
            T[:3, 3] = rng.uniform(-0.4, 0.4, 3)
            link = link.replace(placement=T.tolist())
        links.append(link)
    return chain.replace(links=tuple(links), parent=tuple(parents), name=f"tree{seed}")


@pytest.fixture(scope="session", autouse=True)
def private_compile_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Libraries compiled by the tests go to a temporary cache, not the user's ~/.cache/robodyn."""
    if "ROBODYN_CACHE" not in os.environ:
        os.environ["ROBODYN_CACHE"] = str(tmp_path_factory.mktemp("robodyn-cache"))


@pytest.fixture(scope="session")
def library_robots() -> dict[str, rd.Manipulator]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        return {name: rd.load(name) for name in rd.library.names()}


def without_loops(names: list[str]) -> list[str]:
    """The built-in robots among ``names`` that are trees (read from their files): the closed chains
    (``loops:``, coordinates q of their actuated joints, nv < n) have their own checks, tests/model/test_loops.py and
    tests/analysis/test_closed_chains.py."""
    return [name for name in names if "\nloops:" not in rd.library.text(name)[1]]


def without_coulomb(names: list[str]) -> list[str]:
    """The built-in robots among ``names`` with no Coulomb friction (read from their files, without building them):
    the standard and base parameters of identification hold symmetric Coulomb friction only, in the FC column."""
    return [name for name in names if "coulomb:" not in rd.library.text(name)[1]]


def load_quiet(name: str) -> rd.Manipulator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        return rd.load(name)


def random_params(robot: rd.Manipulator, rng: np.random.Generator, low: float = 0.5,
                  high: float = 2.0) -> dict[str, float]:
    """A value in [low, high) for every parameter of ``robot``, physical: off-diagonal inertia symbols scaled by
    0.1 (:func:`robodyn.model.params.random_values`)."""
    return random_values(robot, rng, low, high, off_diagonal_scale=0.1)


# -- the fuzz run's counts at the end of the report (inputs tried, refused cleanly, crashed, hung) --------------
# The run happens in a worker when the suite runs on several cores (pytest-xdist): its counts travel to the report
# as a user property of one test (tests/fuzz/test_fuzz_corpus.py::test_counts_are_reported), read back here from
# every test report, in the process that prints the summary.

#: The name of the user property that carries the counts.
FUZZ_COUNTS = "fuzz_counts"


def pytest_runtest_logreport(report: Any) -> None:
    for name, value in getattr(report, "user_properties", ()):
        if name == FUZZ_COUNTS and isinstance(value, dict):
            harness.LAST_COUNTS.update(value)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if harness.LAST_COUNTS:
        counts = ", ".join(f"{k}: {v}" for k, v in harness.LAST_COUNTS.items())
        terminalreporter.write_sep("-", "fuzz corpus")
        terminalreporter.write_line(counts)

"""Large C routines split into parts (robodyn.codegen.c: SPLIT_STATEMENTS, split_program): the parts pass
exactly the values that cross their boundaries, the split C computes what the one-function C computes, and the
library exports the same functions."""

from __future__ import annotations

import re
import shutil
import subprocess
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn import codegen
from robodyn.codegen import c
from robodyn.codegen.c import Part, crossing, slots, split_program
from robodyn.codegen.spec import ModuleSpec
from robodyn.runtime.compiled import load_library
from robodyn.runtime.toolchain import C_FLAGS, compile_library, find_compiler, native_flags

OUTPUTS = ("tau", "M", "h", "bias", "G", "forward", "dtau", "dqdd")


def test_split_program_passes_exactly_the_live_values() -> None:
    """a = .; b = a; c = a + b; out0 = c; d = b; e = a + d; out1 = e + c; out2 = d, in parts of 2: a and b cross
    into parts 2 and 3, c into part 4, d and e from part 3 into part 4; a value read in its own part only
    crosses nothing, and every value comes in the order of the definitions."""
    statements: list[tuple[str | None, frozenset[str]]] = [
        ("a", frozenset()), ("b", frozenset("a")),
        ("c", frozenset("ab")), (None, frozenset("c")),
        ("d", frozenset("b")), ("e", frozenset("ad")),
        (None, frozenset("ec")), (None, frozenset("d")),
    ]
    parts = split_program(statements, 2)
    assert parts == [
        Part(0, 2, (), ("a", "b")),
        Part(2, 4, ("a", "b"), ("c",)),
        Part(4, 6, ("a", "b"), ("d", "e")),
        Part(6, 8, ("c", "d", "e"), ()),
    ]
    # a and b are read up to part 3, so d and e take new rows
    assert slots(parts) == {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4}
    # a row freed after its last reader is taken again by a later value
    chain = [("a", frozenset()), ("b", frozenset("a")), ("c", frozenset("b")), (None, frozenset("c"))]
    assert [p.live_in for p in split_program(chain, 1)] == [(), ("a",), ("b",), ("c",)]
    assert slots(split_program(chain, 1)) == {"a": 0, "b": 1, "c": 0}
    # one part: nothing crosses
    assert split_program(chain, 8) == [Part(0, 4, (), ())]



def test_split_program_cuts_where_fewest_values_cross() -> None:
    """a; out(a); b; c; out(b, c); d; out(d); out(d) in parts of about 4: the equal cut (before statement 4)
    would pass b and c, the one a statement later (within a quarter of 4) passes nothing."""
    statements: list[tuple[str | None, frozenset[str]]] = [
        ("a", frozenset()), (None, frozenset("a")), ("b", frozenset()), ("c", frozenset()),
        (None, frozenset("bc")), ("d", frozenset()), (None, frozenset("d")), (None, frozenset("d")),
    ]
    assert crossing(statements) == [0, 1, 0, 1, 2, 0, 1, 1, 0]
    assert split_program(statements, 4) == [Part(0, 5, (), ()), Part(5, 8, (), ())]


def test_split_program_cuts_a_part_with_too_many_references() -> None:
    """Twelve values, then twelve stores each reading one: one part of 24 statements without a bound (12 stores);
    with at most 10 references (values in and out, stores: PART_REFERENCES, GCC's limit on a vectorised loop) it
    is cut where fewest values cross in its middle half, again while a part of 8 statements or more has too
    many, and the parts still pass exactly what crosses them."""
    names = [f"v{i}" for i in range(12)]
    statements: list[tuple[str | None, frozenset[str]]] = [(v, frozenset()) for v in names]
    statements += [(None, frozenset([v])) for v in names]
    assert split_program(statements, 32) == [Part(0, 24, (), ())]
    parts = split_program(statements, 32, max_references=10)
    assert len(parts) > 1 and parts[0].start == 0 and parts[-1].stop == 24
    assert all(a.stop == b.start for a, b in pairwise(parts))
    for part in parts:
        stores = sum(1 for i in range(part.start, part.stop) if statements[i][0] is None)
        assert part.stop - part.start < 8 or len(part.live_in) + len(part.live_out) + stores <= 10
    defined_in = {v: k for k, part in enumerate(parts) for i, (v, _) in enumerate(statements)
                  if part.start <= i < part.stop and v is not None}
    for k, part in enumerate(parts):  # exactly the values read here and defined in an earlier part
        read = {r for i in range(part.start, part.stop) for r in statements[i][1]}
        assert set(part.live_in) == {r for r in read if defined_in[r] < k}


@pytest.fixture(scope="module")
def puma_split(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleSpec, dict[str, str], dict[str, str]]:
    """The PUMA's routines, derivatives included: the C as generated, and with routines of more than 20
    statements (all of them) split into parts of at most 16."""
    robot = rd.load("puma560")
    spec = codegen.module_spec(robot, OUTPUTS)
    whole = codegen.generate(robot, "c", spec=spec)
    saved = c.SPLIT_STATEMENTS, c.PART_STATEMENTS
    c.SPLIT_STATEMENTS, c.PART_STATEMENTS = 20, 16
    try:
        split = codegen.generate(robot, "c", spec=spec)
    finally:
        c.SPLIT_STATEMENTS, c.PART_STATEMENTS = saved
    return spec, whole, split


def test_below_the_threshold_nothing_is_split(
        puma_split: tuple[ModuleSpec, dict[str, str], dict[str, str]]) -> None:
    """Every routine of the PUMA (the largest: its forward-dynamics derivatives, 1,006 statements) is below
    SPLIT_STATEMENTS: one function each, no parts."""
    _, whole, _ = puma_split
    assert "_part1" not in whole["puma560.c"] and "NOINLINE" not in whole["puma560.c"]


def _build(files: dict[str, str], where: Path) -> Path:
    compiler = find_compiler()
    if compiler is None:
        pytest.skip("no C compiler")
    where.mkdir()
    for name, text in files.items():
        (where / name).write_text(text)
    library = where / "libpuma560.so"
    # (at -O1, the last -O given: the whole and the split C built alike, a third of -O3's compile time)
    compile_library([*compiler, *C_FLAGS, *native_flags(), "-O1"], where / "puma560.c", library)
    return library


@pytest.fixture(scope="module")
def libraries(puma_split: tuple[ModuleSpec, dict[str, str], dict[str, str]],
              tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The whole C and the split C, each built once for the module."""
    _, whole, split = puma_split
    where = tmp_path_factory.mktemp("split")
    return _build(whole, where / "whole"), _build(split, where / "split")


def _stacked(result: np.ndarray | tuple[np.ndarray, ...]) -> np.ndarray:
    """A routine's result as one array (the derivatives' tuple stacked as the C stores it)."""
    return np.stack(result, axis=-3) if isinstance(result, tuple) else np.asarray(result)


def test_split_c_agrees_with_the_whole(puma_split: tuple[ModuleSpec, dict[str, str], dict[str, str]],
                                       libraries: tuple[Path, Path]) -> None:
    """Every routine split (gravity, 25 statements, into two parts; the forward-dynamics derivatives, 1,006,
    into 63), the header unchanged, and the split library's results equal to the whole one's to 1e-13
    (relative to the largest entry) on random states, batches of several chunks and single states."""
    spec, whole, split = puma_split
    assert split["puma560.h"] == whole["puma560.h"]
    source = split["puma560.c"]
    for batched in (r for r in spec.routines if r.batched):
        parts = re.findall(rf"void puma560_{batched.name}_part(\d+)\(", source)
        statements = len(batched.assignments) + len(batched.stores)
        assert parts == [str(p + 1) for p in range(-(-statements // 16))], batched.name
    assert "void puma560_forward_dynamics_derivatives_part63(" in source
    a, b = (load_library(library, spec) for library in libraries)
    rng = np.random.default_rng(7)
    states = 203  # several chunks and a partial one
    q, qd, third = (rng.uniform(-3, 3, (states, 6)) for _ in range(3))
    arguments = {"inverse_dynamics": (q, qd, third), "mass_matrix": (q,), "coriolis": (q, qd),
                 "bias_forces": (q, qd), "gravity": (q,), "forward_dynamics": (q, qd, third),
                 "inverse_dynamics_derivatives": (q, qd, third), "forward_dynamics_derivatives": (q, qd, third)}
    assert set(arguments) == {r.name for r in spec.routines if r.batched}
    for routine, args in arguments.items():
        expected = _stacked(getattr(a, routine)(*args))
        got = _stacked(getattr(b, routine)(*args))
        scale = max(float(np.max(np.abs(expected))), 1.0)
        assert float(np.max(np.abs(got - expected))) <= 1e-13 * scale, routine
        one = _stacked(getattr(b, routine)(*(x[5] for x in args)))
        assert float(np.max(np.abs(one - expected[5]))) <= 1e-13 * scale, routine


def test_split_c_exports_the_same_functions_and_is_strict_c99(
        puma_split: tuple[ModuleSpec, dict[str, str], dict[str, str]], libraries: tuple[Path, Path],
        tmp_path: Path) -> None:
    """The parts are static: the split library defines the same global symbols as the whole one; and the split
    C compiles as strict C99 without a warning."""
    split = puma_split[2]
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm")

    def exported(library: Path) -> set[str]:
        lines = subprocess.run([nm, "-D", "--defined-only", str(library)], capture_output=True, text=True,
                               check=True).stdout.splitlines()
        return {line.split()[-1] for line in lines if line.split()[-2] == "T"}

    names = exported(libraries[0])
    assert names == exported(libraries[1])
    assert "puma560_forward_dynamics_derivatives_batch" in names
    assert not any("_part" in name for name in names)
    (tmp_path / "strict").mkdir()
    for name, text in split.items():
        (tmp_path / "strict" / name).write_text(text)
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-c", "-o", str(tmp_path / "x.o")]
    proc = subprocess.run(["cc", *flags, str(tmp_path / "strict" / "puma560.c")], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr

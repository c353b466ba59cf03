"""Generated C, Fortran, NumPy and JAX against the symbolic equations.

Every language is run on the same random states and parameters and compared, routine by routine,
with the symbolic Equations of Newton-Euler (tau, M, h, G, damping and load, evaluated by symengine's
Lambdify: :func:`symbolic_reference`), for the built-in robots (the six-joint arms of :data:`BIG` in
benchmarks/languages.py) and random arms: 1e-12 relative (to the largest entry, or 1); for the small arms
also with sympy's own lambdify of ``eqs.tau`` etc. Forward
dynamics is checked by its residual M qdd + bias - tau (a backward error, independent of how well
conditioned M is) and against the solve of the symbolic M within cond(M) * 1e-13.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import re
import shutil
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
import sympy
from typer.testing import CliRunner

import robodyn as rd
from robodyn import codegen, numeric
from robodyn.cli import app
from robodyn.codegen.spec import ModuleSpec
from robodyn.runtime.entry import CompiledDynamics, load_library
from tests.conftest import load_quiet, random_robot, without_loops

ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-12
N = 6
#: The six-joint arms take seconds to build in each language: puma560 runs in the suite, the others in every
#: language are benchmarks/languages.py (the same checks, with their times).
BIG = {"industrial_6r", "puma560_symbolic", "stanford_arm"}
LIBRARY = [name for name in without_loops(rd.library.names())  # closed chains: tests/analysis/test_closed_chains.py
           if name not in BIG]
RANDOM = [(0, 2, "standard"), (1, 3, "modified"), (2, 4, "standard"), (3, 3, "modified")]
GFORTRAN = shutil.which("gfortran")
needs_gfortran = pytest.mark.skipif(GFORTRAN is None, reason="gfortran not installed (apt-get install gfortran)")
ARGS = {"inverse_dynamics": ("q", "qd", "qdd"), "mass_matrix": ("q",), "coriolis": ("q", "qd"),
        "bias_forces": ("q", "qd"), "gravity": ("q",)}


# -- robots, specs, references (computed once per session) -----------------------------------------


@functools.cache
def robot_of(name: str) -> rd.Manipulator:
    if name.startswith("random"):
        seed, n, convention = RANDOM[int(name.removeprefix("random"))]
        return random_robot(seed, n, convention)
    return load_quiet(name)


@functools.cache
def spec_of(name: str) -> ModuleSpec:
    return codegen.module_spec(robot_of(name))


def symbolic_reference(robot: rd.Manipulator, states: dict, params: dict) -> dict[str, np.ndarray]:
    """The routines' results from the symbolic Equations themselves (Newton-Euler's tau, M, h, G, damping,
    load, unexpanded, evaluated by symengine's Lambdify) at the states: what every language must give."""
    import symengine as se

    eqs = rd.derive(robot)
    n = robot.n
    q, qd, qdd = eqs.symbols.symengine()
    variables = [*q, *qd, *qdd, *(se.Symbol(s.name) for s in robot.parameters())]
    parts = ("tau", "M", "h", "G", "damping", "load")
    exprs = [x for part in parts for x in eqs.raw(part)]
    f = se.Lambdify(variables, exprs, cse=True)
    values = [params[s.name] for s in robot.parameters()]
    rows = np.hstack([states["q"], states["qd"], states["qdd"], np.tile(values, (len(states["q"]), 1))])
    out = np.array([np.asarray(f(row), dtype=float).ravel() for row in rows])
    sizes = {"tau": n, "M": n * n, "h": n, "G": n, "damping": n, "load": n}
    split, k = {}, 0
    for part in parts:
        split[part] = out[:, k : k + sizes[part]]
        k += sizes[part]
    return {
        "inverse_dynamics": split["tau"],
        "mass_matrix": split["M"].reshape(-1, n, n),
        "coriolis": split["h"],
        "bias_forces": split["h"] + split["G"] + split["damping"] + split["load"],
        "gravity": split["G"],
    }


@functools.cache
def case(name: str) -> dict:
    """Random states, parameters and the symbolic Equations' results for robot ``name``."""
    robot = robot_of(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    params = {s.name: float(v) for s, v in zip(robot.parameters(), rng.uniform(0.5, 2.0, len(robot.parameters())),
                                                  strict=True)}
    states = {"q": rng.uniform(-np.pi, np.pi, (N, robot.n)), "qd": rng.uniform(-2, 2, (N, robot.n)),
              "qdd": rng.uniform(-5, 5, (N, robot.n))}
    ref = symbolic_reference(robot, states, params)
    states["tau"] = ref["inverse_dynamics"] + rng.uniform(-1, 1, (N, robot.n))
    M, rhs = ref["mass_matrix"], states["tau"] - ref["bias_forces"]
    ref["forward_dynamics"] = np.linalg.solve(M, rhs[..., None])[..., 0]
    return {"robot": robot, "params": params, "states": states, "ref": ref}


def rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(a) - b)) / max(float(np.max(np.abs(b))), 1.0))


def check_routines(name: str, call: Callable[..., np.ndarray], routines: tuple[str, ...]) -> None:
    """``call(routine, *arrays)`` (batch arrays, k bound) against the symbolic Equations, every routine."""
    c = case(name)
    s, ref = c["states"], c["ref"]
    for routine in routines:
        if routine == "forward_dynamics":
            continue
        got = call(routine, *(s[a] for a in ARGS[routine]))
        assert rel(got, ref[routine]) < TOL, f"{name}: {routine} off by {rel(got, ref[routine]):.2e}"
    if "forward_dynamics" in routines:
        qdd = np.asarray(call("forward_dynamics", s["q"], s["qd"], s["tau"]))
        M, bias = ref["mass_matrix"], ref["bias_forces"]
        error = rel(np.einsum("kij,kj->ki", M, qdd) + bias, s["tau"])  # M qdd + bias - tau, relative
        assert error < TOL, f"{name}: forward dynamics residual {error:.2e}"
        condition = max(np.linalg.cond(m) for m in M)
        assert rel(qdd, ref["forward_dynamics"]) < max(TOL, condition * 1e-13), f"{name}: forward dynamics"


def check_compiled(name: str, dyn: CompiledDynamics) -> None:
    params = case(name)["params"] or None

    def call(routine: str, *arrays: np.ndarray) -> np.ndarray:
        return getattr(dyn, routine)(*arrays, params=params)

    check_routines(name, call, dyn.routines)


# -- C ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def code_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("robodyn-cache")


@functools.cache
def compiled_c(name: str, cache: Path) -> CompiledDynamics:
    return rd.compile(robot_of(name), cache=cache, spec=spec_of(name))


@pytest.mark.parametrize("name", LIBRARY + [f"random{i}" for i in range(len(RANDOM))])
def test_c_agrees_with_the_equations(name: str, code_cache: Path) -> None:
    check_compiled(name, compiled_c(name, code_cache))


@pytest.mark.parametrize("name", ["double_pendulum", "two_link_payload", "stanford_modified"])
def test_c_agrees_with_symbolic_equations(name: str, code_cache: Path) -> None:
    """The generated code evaluates the sympy Equations themselves (tau, M, h, G)."""
    c = case(name)
    robot, params, s = c["robot"], c["params"], c["states"]
    eqs = rd.derive(robot)
    sym = eqs.symbols
    variables = [*sym.q, *sym.qd, *sym.qdd, *robot.parameters()]
    dyn = compiled_c(name, code_cache)
    parts = {"tau": dyn.inverse_dynamics(s["q"], s["qd"], s["qdd"], params=params),
             "M": dyn.mass_matrix(s["q"], params=params), "h": dyn.coriolis(s["q"], s["qd"], params=params),
             "G": dyn.gravity(s["q"], params=params)}
    for part, got in parts.items():
        f = sympy.lambdify(variables, getattr(eqs, part), "numpy")
        for i in range(N):
            values = [*s["q"][i], *s["qd"][i], *s["qdd"][i], *(params[p.name] for p in robot.parameters())]
            expected = np.array(f(*values), dtype=float).reshape(got[i].shape)
            assert rel(got[i], expected) < TOL, f"{name}: {part} at state {i}"


def _c_files(name: str, directory: Path) -> Path:
    for filename, text in codegen.generate(None, "c", spec=spec_of(name)).items():
        (directory / filename).write_text(text)
    return directory / f"{spec_of(name).name}.c"


def test_large_batches_stream_their_results_and_agree_bit_for_bit(code_cache: Path) -> None:
    """A batch whose results take STREAM_BYTES or more writes them by non-temporal stores (x86-64): the
    PUMA's M for 60,000 states (17 MB) equals, bit for bit, the same states in batches of 5000 (plain)."""
    from robodyn.codegen.c import STREAM_BYTES

    dyn = compiled_c("puma560", code_cache)
    q = np.random.default_rng(11).uniform(-3, 3, (60_000, 6))
    assert q.shape[0] * 36 * 8 >= STREAM_BYTES > 5000 * 36 * 8
    whole = dyn.mass_matrix(q)
    parts = np.concatenate([dyn.mass_matrix(q[i:i + 5000]) for i in range(0, len(q), 5000)])
    assert np.array_equal(whole, parts) and np.isfinite(whole).all()
    out = np.full_like(whole, np.nan)
    assert dyn.mass_matrix(q, out=out) is out and np.array_equal(out, whole)
    source = codegen.generate(None, "c", spec=spec_of("puma560"))["puma560.c"]
    assert "stream = n_states * 36 * sizeof(double) >= puma560_STREAM_BYTES;" in source
    assert f"#define puma560_STREAM_BYTES {STREAM_BYTES}u" in source


def _has_avx2() -> bool:
    try:
        return " avx2" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


@pytest.mark.skipif(not _has_avx2(), reason="the AVX2 transposes need a processor with AVX2")
def test_the_avx2_transposes_hand_over_the_same_bits_as_the_plain_loop(tmp_path: Path) -> None:
    """NAME_scatter's 4 x 4 transposes (AVX2) and its plain loop give the same bits, with plain and with
    non-temporal stores (every batch streamed: ``-Dpuma560_STREAM_BYTES=1``; M, 36 entries, straight from the
    transposes, written on a 32-byte boundary and 8 bytes past one: the entries before the first boundary and after
    the last block one at a time; tau, 6 entries, one at a time): the PUMA's M (21 rows of y: the triangles share
    theirs) and tau for 1, 3, 67 and 68 states (blocks of 4, the remainders, two chunks), the same source built with
    and without AVX2; the one-state routine is the batch's row."""
    source = _c_files("puma560", tmp_path)
    assert "static const puma560_row puma560_mass_matrix_rows[36] = {0, 1, 2, 3, 4, 5, 1, 6," in source.read_text()
    libraries = {}
    for tag, flags in (("avx2", ["-mavx2"]), ("plain", ["-mno-avx2"]),
                       ("avx2 streamed", ["-mavx2", "-Dpuma560_STREAM_BYTES=1"]),
                       ("plain streamed", ["-mno-avx2", "-Dpuma560_STREAM_BYTES=1"])):
        macros = subprocess.run(["cc", "-std=c99", *flags, "-E", "-dM", str(source)], capture_output=True, text=True,
                                check=True).stdout
        assert f"#define puma560_AVX2 {1 if tag.startswith('avx2') else 0}" in macros
        library = tmp_path / f"{tag.replace(' ', '_')}.so"
        built = subprocess.run(["cc", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O3", *flags, "-fPIC",
                                "-shared", "-fno-math-errno", "-ffp-contract=off", str(source), "-o", str(library),
                                "-lm"], capture_output=True, text=True)
        assert built.returncode == 0, built.stderr[-2000:]  # (strict, at -O3: M's 36 entries are 9 blocks of 4)
        libraries[tag] = ctypes.CDLL(str(library))
    c = case("puma560")
    k = np.asarray([c["params"][p] for p in spec_of("puma560").parameters] or [0.0], dtype=float)
    rng = np.random.default_rng(4)
    pointer = ctypes.POINTER(ctypes.c_double)
    for count in (1, 3, 67, 68):
        q, qd, qdd = (rng.uniform(-3, 3, (count, 6)) for _ in range(3))
        constants = np.zeros(max(spec_of("puma560").n_constants, 1))
        results = {}
        for tag, library in libraries.items():
            library.puma560_constants(k.ctypes.data_as(pointer), constants.ctypes.data_as(pointer))
            tau = np.full((count, 6), np.nan)
            room = np.full(count * 36 + 8, np.nan)
            start = (-(room.ctypes.data // 8) % 4 + count % 2) % 4  # on a 32-byte boundary, or 8 bytes past one
            M = room[start:start + count * 36].reshape(count, 6, 6)
            assert M.ctypes.data % 32 == 8 * (count % 2)
            library.puma560_mass_matrix_batch(constants.ctypes.data_as(pointer), q.ctypes.data_as(pointer),
                                              M.ctypes.data_as(pointer), ctypes.c_size_t(count))
            library.puma560_inverse_dynamics_batch(*(a.ctypes.data_as(pointer) for a in (constants, q, qd, qdd, tau)),
                                                   ctypes.c_size_t(count))
            one = np.full((6, 6), np.nan)
            library.puma560_mass_matrix(constants.ctypes.data_as(pointer), q[-1].ctypes.data_as(pointer),
                                        one.ctypes.data_as(pointer))
            assert np.array_equal(one, M[-1])
            results[tag] = (M, tau)
        assert np.isfinite(results["avx2"][0]).all() and np.isfinite(results["avx2"][1]).all()
        assert np.array_equal(M, M.transpose(0, 2, 1))
        for tag in ("plain", "avx2 streamed", "plain streamed"):
            assert np.array_equal(results["avx2"][0], results[tag][0]), tag
            assert np.array_equal(results["avx2"][1], results[tag][1]), tag


def test_tables_of_more_rows_than_an_unsigned_short_holds_are_unsigned_long(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A routine of more entries than NARROW_ROWS (65,535: a tree's dqdd can pass it) makes the file's tables of rows
    unsigned long; the PUMA with the limit lowered to 10 differs from its narrow build in that type alone."""
    from robodyn.codegen import c

    narrow = codegen.generate(None, "c", spec=spec_of("puma560"))["puma560.c"]
    assert "typedef unsigned short puma560_row;" in narrow and "more than 65535 entries" in narrow
    monkeypatch.setattr(c, "NARROW_ROWS", 10)
    wide = codegen.generate(None, "c", spec=spec_of("puma560"))["puma560.c"]
    assert "typedef unsigned long puma560_row;" in wide
    assert wide.replace("unsigned long puma560_row", "unsigned short puma560_row").replace(
        "more than 10 entries", "more than 65535 entries") == narrow


def test_c_streams_on_x86_64_and_compiles_without_it(tmp_path: Path) -> None:
    """The non-temporal stores are on where GCC or Clang target x86-64 (puma560_STREAMS is 1), and the
    portable branch (plain stores) is strict C99 too (built here with __SSE2__ undefined)."""
    source = _c_files("puma560", tmp_path)
    macros = subprocess.run(["cc", "-std=c99", "-E", "-dM", str(source)], capture_output=True, text=True,
                            check=True).stdout
    if platform.machine() in ("x86_64", "AMD64"):
        assert "#define puma560_STREAMS 1" in macros
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-U__SSE2__", "-c",
             "-o", str(tmp_path / "x.o")]
    proc = subprocess.run(["cc", *flags, str(source)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    plain = subprocess.run(["cc", "-std=c99", "-U__SSE2__", "-E", "-dM", str(source)], capture_output=True,
                           text=True, check=True).stdout
    assert "#define puma560_STREAMS 0" in plain


@pytest.mark.parametrize("name", ["puma560", "two_link_payload", "random0"])
def test_c_is_strict_c99(name: str, tmp_path: Path) -> None:
    source = _c_files(name, tmp_path)
    flags = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-c", "-o", str(tmp_path / "x.o")]
    proc = subprocess.run(["cc", *flags, str(source)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include "NAME.h"

static double *load(FILE *f, size_t count) {
    double *x = malloc(count * sizeof(double));
    if (x == NULL || fread(x, sizeof(double), count, f) != count) { exit(3); }
    return x;
}

int main(int argc, char **argv) {
    size_t N = (size_t)atol(argv[1]), n = UPPER_NUM_JOINTS, P = UPPER_NUM_PARAMETERS;
    size_t K = UPPER_NUM_CONSTANTS > 0 ? UPPER_NUM_CONSTANTS : 1;
    FILE *in = fopen(argv[2], "rb"), *out = fopen(argv[3], "wb");
    double *params, *k = malloc(K * sizeof(double)), *q, *qd, *qdd, *tau, *M, *r;
    if (argc != 4 || in == NULL || out == NULL || k == NULL) { return 2; }
    params = load(in, P > 0 ? P : 1);
    q = load(in, N * n); qd = load(in, N * n); qdd = load(in, N * n); tau = load(in, N * n);
    M = malloc(N * n * n * sizeof(double)); r = malloc(N * n * sizeof(double));
    NAME_constants(params, k);
    NAME_inverse_dynamics_batch(k, q, qd, qdd, r, N); fwrite(r, sizeof(double), N * n, out);
    NAME_mass_matrix_batch(k, q, M, N); fwrite(M, sizeof(double), N * n * n, out);
    NAME_coriolis_batch(k, q, qd, r, N); fwrite(r, sizeof(double), N * n, out);
    NAME_bias_forces_batch(k, q, qd, r, N); fwrite(r, sizeof(double), N * n, out);
    NAME_gravity_batch(k, q, r, N); fwrite(r, sizeof(double), N * n, out);
    NAME_forward_dynamics_batch(k, q, qd, tau, r, N); fwrite(r, sizeof(double), N * n, out);
    free(params); free(k); free(q); free(qd); free(qdd); free(tau); free(M); free(r);
    fclose(in); fclose(out);
    return 0;
}
"""


@pytest.mark.parametrize("name", ["two_link_payload", "puma560"])
def test_c_batch_under_address_and_undefined_sanitizers(name: str, tmp_path: Path) -> None:
    """A small driver runs every batch routine on exactly sized heap arrays under ASan and UBSan."""
    spec = spec_of(name)
    source = _c_files(name, tmp_path)
    driver = tmp_path / "driver.c"
    driver.write_text(DRIVER.replace("UPPER", spec.name.upper()).replace("NAME", spec.name))
    exe = tmp_path / "driver"
    flags = ["-std=c99", "-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
             "-fno-omit-frame-pointer"]
    proc = subprocess.run(["cc", *flags, "-o", str(exe), str(driver), str(source), "-lm"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0 and "asan" in proc.stderr.lower():
        pytest.skip(f"the compiler has no sanitizer runtime: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 0, proc.stderr
    c = case(name)
    s, params = c["states"], c["params"]
    values = [params[p] for p in spec.parameters] or [0.0]
    blob = np.concatenate([np.asarray(values, dtype=float)] + [s[a].ravel() for a in ("q", "qd", "qdd", "tau")])
    (tmp_path / "in.bin").write_bytes(blob.tobytes())
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0", "UBSAN_OPTIONS": "print_stacktrace=1"}
    run = subprocess.run([str(exe), str(N), str(tmp_path / "in.bin"), str(tmp_path / "out.bin")],
                         capture_output=True, text=True, check=False, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "runtime error" not in run.stderr, run.stderr[-2000:]
    results = np.frombuffer((tmp_path / "out.bin").read_bytes())
    n = spec.n
    sizes = {"inverse_dynamics": n, "mass_matrix": n * n, "coriolis": n, "bias_forces": n, "gravity": n,
             "forward_dynamics": n}
    got, start = {}, 0
    for routine, size in sizes.items():
        got[routine] = results[start : start + N * size].reshape((N, n, n) if size == n * n else (N, n))
        start += N * size
    check_routines(name, lambda routine, *arrays: got[routine], tuple(sizes))


# -- Fortran -----------------------------------------------------------------------------------------


@functools.cache
def compiled_fortran(name: str, directory: Path) -> CompiledDynamics:
    spec = spec_of(name)
    ((filename, text),) = codegen.generate(None, "fortran", spec=spec).items()
    work = directory / spec.name
    work.mkdir()
    (work / filename).write_text(text)
    library = work / f"{spec.name}_f90.so"
    flags = ["-std=f2008", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O1",
             "-fPIC", "-shared", "-J", str(work)]
    proc = subprocess.run([GFORTRAN or "gfortran", *flags, "-o", str(library), str(work / filename)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return load_library(library, spec)


@needs_gfortran
@pytest.mark.parametrize("name", [*LIBRARY, "random1", "random2"])
def test_fortran_agrees_with_the_equations(name: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """gfortran -std=f2008 -Wall -Wextra -pedantic -Werror (an unused dummy argument is allowed: the
    interface is fixed); the subroutines are called through their C binding labels."""
    check_compiled(name, compiled_fortran(name, tmp_path_factory.mktemp("f90")))


# -- NumPy and JAX -----------------------------------------------------------------------------------


@functools.cache
def python_module(name: str, language: str) -> ModuleType:
    return codegen.load_python(None, language, spec=spec_of(name))


def check_python(name: str, language: str, wrap: Callable[[Callable], Callable] = lambda f: f) -> None:
    module = python_module(name, language)
    params = case(name)["params"]
    k = module.constants([params[p] for p in module.PARAMETERS])

    def call(routine: str, *arrays: np.ndarray) -> np.ndarray:
        return np.asarray(wrap(getattr(module, routine))(k, *arrays))

    check_routines(name, call, module.ROUTINES)


@pytest.mark.parametrize("name", LIBRARY + [f"random{i}" for i in range(len(RANDOM))])
def test_numpy_agrees_with_the_equations(name: str) -> None:
    check_python(name, "numpy")


@pytest.mark.parametrize("name", ["puma560", "random1"])
def test_numpy_kernels_run_in_the_programs_order(name: str) -> None:
    """program_order: a permutation of the spec's assignments in which each is computed after what it reads,
    and the Program's statements (t<j>, j below the first temporary the spec added) in the Program's order
    (the spec's own depth-first order fails this on the PUMA's inverse dynamics, among others)."""
    from robodyn.codegen.numpy_ import program_order
    from robodyn.codegen.spec import OUTPUTS, build, select

    parts = tuple(p for p in OUTPUTS if any(p in kind.parts for kind in select(None)))  # as module_spec builds
    statements = len(build(robot_of(name), outputs=parts).body)  # the spec's own temporaries come after
    for routine in spec_of(name).routines:
        ordered = program_order(routine.assignments)
        assert sorted(ordered, key=str) == sorted(routine.assignments, key=str)
        done: set[str] = set()
        names = {n for n, _ in ordered}
        for n, expr in ordered:
            assert {str(s) for s in expr.free_symbols} & names <= done, (routine.name, n)
            done.add(n)
        body = [int(n[1:]) for n, _ in ordered if int(n[1:]) < statements]
        assert body == sorted(body) and len(body) >= len(ordered) // 2, routine.name
    assert program_order((("a", sympy.Symbol("x")),)) == (("a", sympy.Symbol("x")),)
    text = next(iter(codegen.generate(None, "numpy", spec=spec_of(name)).values()))
    for kernel in re.findall(r"\ndef _(?:inverse|forward)_dynamics\(.*?(?=\ndef )", text, re.S):
        printed = [int(j) for j in re.findall(r"# t(\d+) = ", kernel) if int(j) < statements]
        assert len(printed) > 20 and printed == sorted(printed)  # the emitter prints them in that order


def test_numpy_single_state_blocks_and_broadcasting() -> None:
    module = python_module("puma560", "numpy")
    k = module.constants([])
    rng = np.random.default_rng(5)
    q, qd, qdd = (rng.uniform(-2, 2, (module.BLOCK * 2 + 3, 6)) for _ in range(3))
    tau = module.inverse_dynamics(k, q, qd, qdd)
    assert tau.shape == q.shape and tau.flags.c_contiguous
    assert np.array_equal(module.inverse_dynamics(k, q[7], qd[7], qdd[7]), tau[7])
    assert np.allclose(module.inverse_dynamics(k, q, qd[0], qdd[0]), module.inverse_dynamics(k, q, qd[:1], qdd[:1]))
    assert module.mass_matrix(k, q[:4]).shape == (4, 6, 6)
    with pytest.raises(ValueError, match="shape"):
        module.gravity(k, q[:, :5])


@pytest.fixture(scope="module")
def jax() -> ModuleType:
    jax = pytest.importorskip("jax", reason="jax not installed (pip install 'robodyn[jax]')")
    jax.config.update("jax_enable_x64", True)
    return jax


@pytest.mark.parametrize("name", [*LIBRARY, "random1", "random3"])
def test_jax_agrees_with_the_equations(name: str, jax: ModuleType) -> None:
    check_python(name, "jax")


def test_jax_jit_and_vmap(jax: ModuleType) -> None:
    """jit of the batch functions, and vmap of the single-state function over states and over params."""
    check_python("two_link_payload", "jax", jax.jit)
    module = python_module("two_link_payload", "jax")
    c = case("two_link_payload")
    s, params = c["states"], c["params"]
    values = np.array([params[p] for p in module.PARAMETERS])
    k = module.constants(values)
    mapped = jax.jit(jax.vmap(module.inverse_dynamics, in_axes=(None, 0, 0, 0)))(k, s["q"], s["qd"], s["qdd"])
    assert rel(mapped, c["ref"]["inverse_dynamics"]) < TOL
    ks = jax.vmap(module.constants)(np.stack([values, 2 * values]))
    both = jax.vmap(module.gravity, in_axes=(0, None))(ks, s["q"][0])
    assert both.shape == (2, 2) and rel(both[0], c["ref"]["gravity"][0]) < TOL
    assert module.mass_matrix(k, s["q"]).shape == (N, 2, 2)


def test_jax_computes_each_sine_and_cosine_once(jax: ModuleType) -> None:
    """XLA's CPU fusion copies a value it deems cheap (sin and cos among them) into every fused loop that
    reads it; the generated code divides each sine and cosine by ``_unit(...)`` (ones that XLA cannot fold),
    which XLA never copies. Without that, the PUMA's compiled forward dynamics held 182 sines and cosines."""
    module = python_module("puma560", "jax")
    program = next(r for r in spec_of("puma560").routines if r.name == "forward_dynamics").count.trig
    q = np.zeros((1000, 6))
    with jax.default_device(jax.devices("cpu")[0]):
        text = jax.jit(module.forward_dynamics).lower(module.constants([]), q, q, q).compile().as_text()
    assert 0 < len(re.findall(r"\b(?:sine|cosine)\(", text)) <= program == 10


def test_jax_unit_is_one_for_every_input_and_keeps_nan_where_it_was(jax: ModuleType) -> None:
    module = python_module("puma560", "jax")
    ones = module._unit(jax.numpy.asarray([np.nan, np.inf, -np.inf, 0.0, -0.0, 5.0, -1e308]))
    assert np.array_equal(np.asarray(ones), np.ones(7))
    reference = python_module("puma560", "numpy")
    q, qd, qdd = np.random.default_rng(3).uniform(-2, 2, (3, 4, 6))
    q[1, 5], q[2, 1], qd[3, 2] = np.nan, np.inf, np.nan
    ours = np.asarray(module.inverse_dynamics(module.constants([]), q, qd, qdd))
    with np.errstate(invalid="ignore"):
        theirs = reference.inverse_dynamics(reference.constants([]), q, qd, qdd)
    assert np.array_equal(np.isnan(ours), np.isnan(theirs)) and np.isnan(ours).any()
    assert np.allclose(ours[~np.isnan(ours)], theirs[~np.isnan(theirs)], rtol=1e-12, atol=1e-12)


# -- determinism, names, interface ---------------------------------------------------------------------

GENERATE = """
import sys, warnings, hashlib
import robodyn as rd
from robodyn import codegen
from tests.conftest import random_robot
warnings.simplefilter("ignore")
for name in sys.argv[1:]:
    spec = codegen.module_spec(random_robot(1, 3, "modified") if name == "random1" else rd.load(name))
    for language in codegen.LANGUAGES:
        for filename, text in sorted(codegen.generate(None, language, spec=spec).items()):
            print(filename, hashlib.sha256(text.encode()).hexdigest())
"""


def test_generated_files_are_deterministic() -> None:
    """Byte-identical files from two processes with different hash seeds (and in this process)."""
    names = ["two_link_payload", "random1"]  # symbolic, and floating-point data
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-c", GENERATE, *names], capture_output=True, text=True,
                              check=True, env=env, cwd=ROOT)
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1] and outputs[0].count("\n") == 2 * 5
    for name in names:
        spec = codegen.module_spec(robot_of(name))
        assert codegen.generate(None, "c", spec=spec) == codegen.generate(None, "c", spec=spec_of(name))


def test_names_are_sanitised_for_every_language(tmp_path: Path, code_cache: Path) -> None:
    assert codegen.sanitize("2nd arm-v1.0 (test)") == "robot_2nd_arm_v1_0_test"  # (such a name is refused)
    robot = random_robot(4, 2, "standard").replace(name="Arm_V1")
    assert codegen.sanitize(robot.name) == "arm_v1"  # lower case: Fortran does not tell Arm_V1 from arm_v1
    dyn = rd.compile(robot, cache=code_cache)
    assert dyn.inverse_dynamics(np.zeros(2), np.zeros(2), np.zeros(2)).shape == (2,)
    files = codegen.generate(robot, "fortran")
    assert list(files) == ["arm_v1.f90"]
    assert "module arm_v1" in files["arm_v1.f90"]


def test_header_states_parameter_order_and_operation_counts() -> None:
    spec = spec_of("double_pendulum")
    files = codegen.generate(None, "c", spec=spec)
    header, source = files["double_pendulum.h"], files["double_pendulum.c"]
    for i, name in enumerate(load_quiet("double_pendulum").parameters()):
        assert f"params[{i}] = {name}" in header
    assert "#define DOUBLE_PENDULUM_NUM_PARAMETERS 5" in header
    for routine in spec.routines:
        marker = f"void double_pendulum_{routine.name}("
        assert marker in header
        before = source[: source.index(marker)]
        assert before.rstrip().endswith(f"Operations per call: {routine.count_text()}.\n */".rstrip())
    tau = spec.routine("inverse_dynamics").count
    assert 0 < tau.multiplications < 60 and tau.trig > 0


def test_outputs_choose_the_routines() -> None:
    files = codegen.generate(load_quiet("two_link_fu"), "c", ["tau", "forward"])
    header = files["two_link_fu.h"]
    assert "two_link_fu_inverse_dynamics(" in header and "two_link_fu_forward_dynamics(" in header
    assert "two_link_fu_mass_matrix(" not in header
    with pytest.raises(ValueError, match="unknown output"):
        codegen.generate(load_quiet("two_link_fu"), "c", ["tau", "D"])
    with pytest.raises(ValueError, match="unknown language"):
        codegen.generate(load_quiet("two_link_fu"), "rust")


def test_forward_dynamics_refuses_a_massless_distal_link() -> None:
    robot = rd.Manipulator.from_dh([{"joint": "R", "a": 1, "alpha": 0, "mass": 1}, {"joint": "R", "a": 1, "alpha": 0}])
    with pytest.raises(ValueError, match="identically zero"):
        codegen.module_spec(robot, ["forward"])
    assert "inverse_dynamics" in codegen.module_spec(robot, ["tau"]).kinds


# -- CLI ---------------------------------------------------------------------------------------------------

runner = CliRunner()


@pytest.mark.parametrize("language, expected", [("c", ["two_link_fu.h", "two_link_fu.c"]),
                                                ("fortran", ["two_link_fu.f90"]), ("numpy", ["two_link_fu.py"]),
                                                ("jax", ["two_link_fu_jax.py"])])
def test_cli_codegen_writes_the_files(language: str, expected: list[str], tmp_path: Path) -> None:
    out = tmp_path / "gen"
    result = runner.invoke(app, ["codegen", "two_link_fu", "--lang", language, "--outputs", "tau,M,forward",
                                 "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == sorted(expected)
    spec = codegen.module_spec(load_quiet("two_link_fu"), ["tau", "M", "forward"])
    assert {p.name: p.read_text() for p in out.iterdir()} == codegen.generate(None, language, spec=spec)


@pytest.mark.parametrize("args, expect", [
    (["--outputs", "tau,D"], "--outputs"),
    (["--outputs", ","], "--outputs"),
    (["--lang", "rust"], "--lang"),
])
def test_cli_codegen_errors_are_one_line(args: list[str], expect: str, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "robodyn.cli", "codegen", "two_link_fu", *args, "-o", str(tmp_path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stdout == "" and proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: ")
    assert expect in proc.stderr


def test_cli_codegen_output_must_be_a_directory(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    result = runner.invoke(app, ["codegen", "two_link_fu", "-o", str(target)])
    assert result.exit_code == 2 and "not a directory" in result.output


def test_cli_codegen_writes_all_files_or_none(tmp_path: Path) -> None:
    """A failure on the second file leaves nothing behind: no first file, no temporary."""
    out = tmp_path / "gen"
    (out / "two_link_fu.c").mkdir(parents=True)  # the .c cannot be written; the .h comes first
    result = runner.invoke(app, ["codegen", "two_link_fu", "--lang", "c", "-o", str(out)])
    assert result.exit_code == 2 and "two_link_fu.c" in result.output and "no file written" in result.output
    assert [p.name for p in out.iterdir()] == ["two_link_fu.c"] and not any((out / "two_link_fu.c").iterdir())
    fresh = tmp_path / "new" / "dir"
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "dir").write_text("x")  # not a directory: refused before anything is made
    assert runner.invoke(app, ["codegen", "two_link_fu", "-o", str(fresh)]).exit_code == 2
    made = tmp_path / "made" / "here"  # directories made for the files are removed again on failure
    original = os.replace

    def failing(src: object, dst: object) -> None:
        if str(dst).endswith(".c"):
            raise PermissionError(13, "Permission denied", str(dst))
        original(src, dst)  # type: ignore[arg-type]

    try:
        os.replace = failing  # type: ignore[assignment]
        result = runner.invoke(app, ["codegen", "two_link_fu", "--lang", "c", "-o", str(made)])
    finally:
        os.replace = original
    assert result.exit_code == 2 and "Permission denied" in result.output
    assert not (tmp_path / "made").exists()


# -- the generated NumPy and C: how they compute --------------------------------------------------------


def test_numpy_half_angle_sine_and_cosine_match_libm() -> None:
    """The NumPy kernels take sin and cos of an angle from one tan(x/2): the sine within 3 ulp of libm's,
    the cosine within 4e-16 absolute (not relative: near its zeros that is many ulp), NaN for inf and
    NaN; half_angle=False prints
    numpy.sin and numpy.cos and gives the plain expressions' numbers bit for bit."""
    from robodyn.codegen.numpy_ import NumPyEmitter

    spec = spec_of("two_link_payload")  # sines and cosines of q1, q2 and q1 + q2
    params = case("two_link_payload")["params"]
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-4, 4, 5000), rng.uniform(-1e5, 1e5, 2000), np.pi / 2 + rng.normal(0, 1e-9, 50),
                        np.pi + rng.normal(0, 1e-9, 50), [0.0, -0.0, 1e-300, np.pi, -np.pi, 1e300]])
    q = rng.uniform(-4, 4, (3000, 2))  # (for large angles, sin(q1 + q2) and numeric's rotations differ more)
    modules = {}
    for half in (True, False):
        ((_, text),) = NumPyEmitter(half_angle=half).files(spec).items()
        calls = {line.split("(")[0] for line in text.split("def _inverse_dynamics")[1].splitlines()
                 if line.startswith("    ") and not line.strip().startswith("#")}
        assert ("    tan" in calls) == half and ("    sin" in calls) != half and ("    cos" in calls) != half
        modules[half] = ModuleType("m")
        exec(text, modules[half].__dict__)
    assert codegen.generate(None, "numpy", spec=spec) == NumPyEmitter(half_angle=True).files(spec)  # the default
    k = modules[True].constants([params[p] for p in spec.parameters])
    reference = numeric.gravity(robot_of("two_link_payload"), q, params=params)
    scale = np.max(np.abs(reference))
    assert np.max(np.abs(modules[False].gravity(k, q) - reference)) <= 1e-15 * scale
    assert np.max(np.abs(modules[True].gravity(k, q) - reference)) <= 2e-15 * scale
    t = np.tan(x / 2)  # the formulas themselves, against libm
    r = 1 / (t * t + 1)
    sine, cosine = t * r + t * r, ((1 - t) * (t + 1)) * r
    assert np.max(np.abs(sine - np.sin(x)) / np.spacing(np.abs(np.sin(x)))) <= 4
    assert np.max(np.abs(cosine - np.cos(x)) / np.maximum(np.spacing(np.abs(np.cos(x))), 1e-16)) <= 4
    with np.errstate(invalid="ignore"):
        assert np.isnan(modules[True].gravity(k, np.array([[np.inf, 0.0], [np.nan, 1.0]]))).all(axis=1).all()


def test_c_single_state_is_the_batch_on_one_state(code_cache: Path) -> None:
    """The one-state routine runs the batch code on one state: the same numbers, bit for bit; and the
    batch's own sine and cosine (fdlibm kernels, libm beyond 1e5 rad) agree with libm's."""
    dyn = compiled_c("puma560", code_cache)
    rng = np.random.default_rng(11)
    q, qd, qdd = (rng.uniform(-3, 3, (67, 6)) for _ in range(3))  # more than one chunk of 64
    tau = dyn.inverse_dynamics(q, qd, qdd)
    assert all(np.array_equal(dyn.inverse_dynamics(q[i], qd[i], qdd[i]), tau[i]) for i in (0, 63, 64, 66))
    robot = robot_of("puma560")
    angles = np.concatenate([rng.uniform(-1e4, 1e4, (40, 6)), rng.uniform(-1e7, 1e7, (10, 6)),
                             np.full((1, 6), np.pi / 2), np.full((1, 6), 1e5), np.full((1, 6), -1.0000001e5)])
    reference = numeric.gravity(robot, angles)
    assert rel(dyn.gravity(angles), reference) < 1e-14
    assert np.isnan(dyn.gravity(np.full(6, np.nan))).any()


def test_c_batch_loops_are_vectorisable(tmp_path: Path) -> None:
    """With -O3 the compiler vectorises the sine-cosine loop and the straight-line loop across states
    (GCC says so with -fopt-info-vec)."""
    source = _c_files("puma560", tmp_path)
    proc = subprocess.run(["cc", "-O3", "-std=c99", "-fopt-info-vec-optimized", "-c", "-o", str(tmp_path / "x.o"),
                           str(source)], capture_output=True, text=True, check=False)
    if proc.returncode != 0 or "-fopt-info" in proc.stderr:
        pytest.skip("not GCC")
    vectorised = {int(line.split(":")[1]) for line in proc.stderr.splitlines() if "loop vectorized" in line}
    lines = source.read_text().splitlines()
    sincos = next(i for i, line in enumerate(lines) if "_sincos(const double" in line)
    fast = next(i for i in range(sincos, len(lines)) if lines[i] == "#else")  # (after libm's loop for x87)
    assert lines[fast + 1].strip().startswith("for (i = 0; i < count; ++i)")
    assert fast + 2 in vectorised, proc.stderr[-2000:]  # (line numbers count from 1)
    # the straight-line loop of each of the six batch routines (the gather and scatter loops start with s)
    body = {i + 1 for i, line in enumerate(lines)
            if line.strip() == "for (j = 0; j < m; ++j) {" and "const size_t s" not in lines[i + 1]}
    assert len(body) == 6 and body <= vectorised, proc.stderr[-2000:]


def generated_sincos(tmp_path: Path, compiler: str, flags: list[str]) -> Callable[[np.ndarray], tuple[np.ndarray, ...]]:
    """The generated C's ``NAME_sincos`` (the double pendulum's), compiled with ``flags``, as x -> (sin x, cos x)."""
    import ctypes

    for filename, text in codegen.generate(robot_of("double_pendulum"), "c", ["G"]).items():
        (tmp_path / filename).write_text(text)
    (tmp_path / "harness.c").write_text(
        '#include "double_pendulum.c"\n'
        "void harness(const double *x, size_t n, double *s, double *c) { double_pendulum_sincos(x, n, s, c); }\n")
    subprocess.run([compiler, *flags, "-shared", "-fPIC", "-o", str(tmp_path / "h.so"), str(tmp_path / "harness.c"),
                    "-lm"], check=True, capture_output=True)
    lib = ctypes.CDLL(str(tmp_path / "h.so"))
    pointer = ctypes.POINTER(ctypes.c_double)

    def sincos(x: np.ndarray) -> tuple[np.ndarray, ...]:
        x = np.ascontiguousarray(x, dtype=float)
        s, c = np.empty_like(x), np.empty_like(x)
        lib.harness(x.ctypes.data_as(pointer), ctypes.c_size_t(x.size), s.ctypes.data_as(pointer),
                    c.ctypes.data_as(pointer))
        return s, c

    return sincos


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_c_vectorisable_sincos_is_within_one_ulp_of_libm(tmp_path: Path) -> None:
    """The generated ``NAME_sincos`` (fdlibm kernels after a Cody-Waite reduction, libm beyond 1e5 rad)
    called directly on angles that stress the reduction: near multiples of pi/2, tiny, large, negative."""
    import math

    sincos = generated_sincos(tmp_path, shutil.which("cc") or shutil.which("gcc") or "cc", ["-O3", "-std=c99"])
    rng = np.random.default_rng(3)
    k = np.arange(-200, 201)
    x = np.concatenate([rng.uniform(-10, 10, 20000), rng.uniform(-1e5, 1e5, 5000), k * np.pi / 2,
                        k * np.pi / 2 + rng.normal(0, 1e-12, k.size), rng.normal(0, 1e-300, 10), [0.0, -0.0],
                        [1e5, -1e5, 1.5e5, 1e300, -1e300]])
    s, c = sincos(x)
    ref_s = np.array([math.sin(v) for v in x])
    ref_c = np.array([math.cos(v) for v in x])
    assert np.all(np.abs(s - ref_s) <= np.spacing(np.abs(ref_s))), np.max(np.abs(s - ref_s) / np.spacing(np.abs(ref_s)))
    assert np.all(np.abs(c - ref_c) <= np.spacing(np.abs(ref_c))), np.max(np.abs(c - ref_c) / np.spacing(np.abs(ref_c)))
    assert np.array_equal(np.signbit(s), np.signbit(ref_s))  # the quadrant's sign bits: sin(-0) = -0, as libm's


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64") or shutil.which("gcc") is None,
                    reason="x87 arithmetic on x86-64 through gcc's -mfpmath=387")
def test_c_sincos_with_extended_precision_doubles_calls_libm(tmp_path: Path) -> None:
    """With doubles evaluated in 80 bits (x87: FLT_EVAL_METHOD 2, GNU C's fast excess precision), rounding by
    adding 1.5 * 2^52 does not round: ``NAME_sincos`` calls libm there (its kernels measured 1e16 ulp off)."""
    import math

    sincos = generated_sincos(tmp_path, "gcc", ["-O3", "-std=gnu99", "-mfpmath=387"])
    x = np.random.default_rng(4).uniform(-10, 10, 257)
    s, c = sincos(x)
    assert np.array_equal(s, [math.sin(v) for v in x]) and np.array_equal(c, [math.cos(v) for v in x])


def test_code_in_base_parameters(tmp_path: Path, code_cache: Path) -> None:
    """The reduced model (issue 7): generated and compiled with the base parameters as its parameter vector,
    fed the robot's own base parameter values it is the robot's dynamics."""
    from robodyn.identification import base_parameters

    robot = robot_of("puma560")
    b = base_parameters(robot)
    rng = np.random.default_rng(2)
    q, qd, qdd = (rng.uniform(-2, 2, (20, 6)) for _ in range(3))
    ref = numeric.inverse_dynamics(robot, q, qd, qdd)
    module = codegen.load_python(robot, "numpy", ["tau"], base=True)
    assert tuple(module.PARAMETERS) == b.names and module.__name__ == "puma560_base"
    tau = module.inverse_dynamics(module.constants(b.numeric_values()), q, qd, qdd)
    assert np.max(np.abs(tau - ref)) / np.max(np.abs(ref)) < 1e-12
    if shutil.which("cc") or shutil.which("gcc"):
        dyn = rd.compile(robot, outputs=["tau", "forward"], base=True, cache=code_cache)
        assert dyn.parameters == b.names
        got = dyn.inverse_dynamics(q, qd, qdd, params=b.numeric_values())
        assert np.max(np.abs(got - ref)) / np.max(np.abs(ref)) < 1e-12
        qdd_back = dyn.forward_dynamics(q, qd, ref, params=dict(zip(b.names, b.numeric_values(), strict=True)))
        assert np.max(np.abs(qdd_back - qdd)) < 1e-9
    result = CliRunner().invoke(app, ["codegen", "puma560", "--base", "--lang", "c", "--outputs", "tau",
                                      "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    header = (tmp_path / "puma560_base.h").read_text()
    assert "params[0] = ZZR1" in header


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_c_refuses_fast_math(tmp_path: Path) -> None:
    """-ffast-math would fold the rounding of the vectorisable sincos away (sines off by up to 1): the
    generated source stops the compile with a message instead."""
    for filename, text in codegen.generate(robot_of("double_pendulum"), "c", ["G"]).items():
        (tmp_path / filename).write_text(text)
    compiler = shutil.which("cc") or shutil.which("gcc")
    source = str(tmp_path / "double_pendulum.c")
    fast = subprocess.run([compiler, "-O3", "-ffast-math", "-std=c99", "-c", source, "-o", str(tmp_path / "f.o")],
                          capture_output=True, text=True)
    assert fast.returncode != 0 and "-ffast-math" in fast.stderr
    plain = subprocess.run([compiler, "-O3", "-std=c99", "-c", source, "-o", str(tmp_path / "p.o")],
                           capture_output=True, text=True)
    assert plain.returncode == 0, plain.stderr


def test_c_chunks_of_long_arms_stay_small_on_the_stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A routine with many rows (the mass matrix of a long arm: n^2 outputs) takes chunks of fewer than 64
    states so that its work arrays stay within STACK_BYTES; with the limit lowered, a 4-joint arm's mass
    matrix is printed in chunks of 16 and still agrees with the numeric engine (chunk ends included)."""
    from robodyn.codegen import c

    assert c.chunk_size(10) == c.CHUNK and c.chunk_size(100) == 32 and c.chunk_size(10**6) == 8
    assert all(8 * c.chunk_size(rows) * rows <= c.STACK_BYTES or c.chunk_size(rows) == 8 for rows in range(1, 2049))
    monkeypatch.setattr(c, "STACK_BYTES", 8 * 16 * 20)  # (its 14 rows: x 1, y 10 (M's distinct entries), 3 angles)
    robot = random_robot(5, 4, "modified")
    spec = codegen.module_spec(robot, ["M"])
    assert "in chunks of 16 states" in codegen.generate(None, "c", spec=spec)[f"{spec.name}.c"]
    if shutil.which("cc") or shutil.which("gcc"):
        dyn = rd.compile(robot, outputs=["M"], cache=tmp_path, spec=spec)
        q = np.random.default_rng(1).uniform(-2, 2, (37, 4))
        assert np.allclose(dyn.mass_matrix(q), numeric.mass_matrix(robot, q), rtol=1e-12, atol=1e-12)


def huge_angles(n: int) -> np.ndarray:
    """Joint angles of 1e6, 1e10, 1e15 and 1e300 rad (both signs, mixed), and random ones up to 1e300."""
    rng = np.random.default_rng(8)
    fixed = [np.full((2, n), m) * np.array([[1.0], [-1.0]]) for m in (1e6, 1e10, 1e15, 1e300)]
    mixed = np.array([[1e15, -1e10], [1e300, 3.0], [-1e6, 1e15]])[:, :n]
    random = rng.choice([-1, 1], (40, n)) * 10.0 ** rng.uniform(5, 300, (40, n))
    return np.concatenate([*fixed, mixed, random])


@pytest.mark.parametrize("backend", ["c", "numpy", "numpy-libm"])
def test_sum_angles_stay_accurate_at_huge_angles(backend: str, code_cache: Path) -> None:
    """sin(q1 + q2) at q ~ 1e15: the rounded sum q1 + q2 is off by up to 0.06 rad there (8 % of the
    torques before), so the generated C and NumPy take the sines and cosines of a sum angle from those of its
    terms. Against mpmath (50 digits, from the exact doubles) for G2 = g L2 m2 sin(q1 + q2), and against
    the numeric engine (whose rotations compose sines and cosines of single angles) for every output."""
    import mpmath

    from robodyn.codegen.numpy_ import NumPyEmitter

    robot, spec = robot_of("double_pendulum"), spec_of("double_pendulum")
    params = {"L1": 1.0, "L2": 0.5, "g": 9.81, "m1": 2.0, "m2": 1.0}
    if backend == "c":
        if not (shutil.which("cc") or shutil.which("gcc")):
            pytest.skip("no C compiler")
        dyn = compiled_c("double_pendulum", code_cache)
        k = dyn.constants(params)
        run = {r: (lambda *a, r=r: getattr(dyn, r)(*a, params=params)) for r in ARGS}
    else:
        ((_, text),) = NumPyEmitter(half_angle=backend == "numpy").files(spec).items()
        module = ModuleType("m")
        exec(text, module.__dict__)
        k = module.constants([params[p] for p in spec.parameters])
        run = {r: (lambda *a, r=r: getattr(module, r)(k, *a)) for r in ARGS}
    q = huge_angles(2)
    rng = np.random.default_rng(9)
    qd, qdd = rng.uniform(-2, 2, q.shape), rng.uniform(-5, 5, q.shape)
    mpmath.mp.dps = 50
    exact = np.array([float(9.81 * 0.5 * mpmath.sin(mpmath.fadd(a, b, exact=True))) for a, b in q])  # exact sum
    assert np.max(np.abs(run["gravity"](q)[:, 1] - exact)) <= 4 * np.spacing(4.905)
    states = {"q": q, "qd": qd, "qdd": qdd, "tau": rng.uniform(-5, 5, q.shape)}
    for routine, names in ARGS.items():
        reference = getattr(numeric, routine)(robot, *(states[a] for a in names), params=params)
        assert rel(run[routine](*(states[a] for a in names)), reference) < 1e-14, routine


@needs_gfortran
@pytest.mark.parametrize("name", ["puma560", "double_pendulum"])
def test_fortran_compiles_with_every_warning_an_error(name: str, tmp_path: Path) -> None:
    """gfortran -Wall -Wextra -pedantic -Werror, unused dummy arguments included: the numeric PUMA's
    routines do not read k nor its constants routine params, the symbolic double pendulum's read both."""
    ((filename, text),) = codegen.generate(None, "fortran", spec=spec_of(name)).items()
    (tmp_path / filename).write_text(text)
    flags = ["-std=f2008", "-Wall", "-Wextra", "-pedantic", "-Werror", "-c", "-J", str(tmp_path)]
    proc = subprocess.run([GFORTRAN or "gfortran", *flags, "-o", str(tmp_path / "m.o"), str(tmp_path / filename)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert ("if (.false.) tau(1) = k(1)" in text) == (name == "puma560")

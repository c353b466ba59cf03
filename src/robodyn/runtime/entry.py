"""``rd.compile(robot)``: the generated code, compiled by the system compiler (or a generated NumPy or JAX module),
cached, loaded.

    import robodyn as rd
    dyn = rd.compile(rd.load("puma560"))
    tau = dyn.inverse_dynamics(q, qd, qdd)          # q: (n,) for one state or (N, n) for a batch
    qdd = dyn.forward_dynamics(q, qd, tau)
    dyn = rd.compile(rd.load("double_pendulum"))
    dyn.parameters                                  # ('L1', 'L2', 'g', 'm1', 'm2'): the order of params
    dyn.gravity(q, params={"L1": 1, "L2": 0.5, "m1": 2, "m2": 1, "g": 9.81})

The entry: :func:`compile` picks the backend's record (:mod:`robodyn.runtime.backends`: the C, compiled by
:mod:`robodyn.runtime.toolchain`; the NumPy or JAX module), finds the entry of the model in the checked compile
cache (:mod:`robodyn.runtime.cache`: what it trusts, and why) or builds it there, and loads it as a
:class:`~robodyn.runtime.compiled.CompiledDynamics`. :func:`hot_routines` is the numeric engine's way in
(:mod:`robodyn.numeric.hotpath`, which imports it when its first model gets hot).

Without a C compiler, or when the compiler fails, :class:`~robodyn.runtime.toolchain.CompileError` says so and
names the fallback: the generated NumPy module, ``rd.compile(robot, backend="numpy")``, which gives the same object
without compiling.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from robodyn.codegen.cuda import PRECISIONS
from robodyn.codegen.spec import DEFAULT_KEYS, KEYS, KINDS, ModuleSpec, frames_of, module_spec, sanitize
from robodyn.errors import ModelError
from robodyn.program.progress import DELAY, on_terminal
from robodyn.runtime import cache as _cache
from robodyn.runtime import compiled
from robodyn.runtime.backends import BACKENDS, RECORDS, cuda_record
from robodyn.runtime.cache import CACHE_ENV, Expected, cache_dir
from robodyn.runtime.compiled import CompiledDynamics, load_library
from robodyn.runtime.toolchain import C_FLAGS, FALLBACK, CompileError, find_compiler, host_fingerprint, native_flags

__all__ = ["CompileError", "CompiledDynamics", "cache_dir", "compile", "find_compiler", "host_fingerprint",
           "hot_routines", "load_library", "native_flags"]


def compile(
    robot: Any,
    *,
    outputs: Iterable[str] | None = None,
    backend: str = "c",
    cache: str | Path | None = None,
    compiler: Sequence[str] | None = None,
    spec: ModuleSpec | None = None,
    base: bool = False,
    precision: str = "fp64",
    frames: Sequence[str] | None = None,
    progress: bool = True,
) -> CompiledDynamics:
    """Generate, compile (or find in the cache) and load the dynamics routines of ``robot``.

    ``outputs``: ``--outputs`` keys (``tau``, ``M``, ``h``, ``bias``, ``G``, ``forward``, and the derivatives
    ``dtau`` and ``dqdd``; default all but the derivatives);
    ``base``: the model in the robot's base parameters, whose ``parameters`` are then the base
    parameters (:func:`robodyn.identification.base_parameters`: pass identified values) and any
    geometry symbols;
    ``backend``: ``"c"`` (compiled), ``"numpy"`` or ``"jax"`` (the generated NumPy or JAX module, nothing
    compiled; cached like the library, see :mod:`robodyn.runtime.backends`), ``"cuda"`` (the CUDA kernels on an
    NVIDIA GPU through CuPy, whose methods also take CuPy arrays and DLPack producers on the GPU, and then give
    CuPy arrays: :mod:`robodyn.runtime.cuda`); ``precision``: ``"fp64"``, or ``"fp32"`` for the CUDA kernels in
    float;
    ``cache``: the cache directory (default :func:`cache_dir`); ``compiler``: the command (default
    :func:`find_compiler`); ``spec``: the routines of ``robot`` if already generated
    (:func:`robodyn.codegen.module_spec` of the same outputs), to skip generating them again;
    ``frames``: the named frames (:meth:`~robodyn.Manipulator.frame`) of the frames' routines, asked for by the
    outputs ``pose``, ``jacobian``, ``jacobian_world``, ``jacobian_local`` and their ``_dot`` (default the tool
    frame): ``dyn.frame_pose(q, frame="panda_hand")``. A routine or frame left out is built on its first call, with
    the same options (a :class:`~robodyn.errors.BuildNote` says so once): ``dyn.center_of_mass(q)`` works after
    the default outputs too.
    ``progress``: a build that takes more than a second shows its stages and the time elapsed on stderr where that
    is a terminal (nothing elsewhere), then one line with the time of the programs and of the C compiler
    (:func:`robodyn.program.progress.on_terminal`); False shows nothing.
    Raises :class:`CompileError` without a compiler or if compiling fails."""
    sized = getattr(robot, "nq", None) != getattr(robot, "nv", None)  # a floating base, spherical joints
    if sized and backend == "cuda":  # before the cache is looked up
        what = "floating base" if robot.floating else f"{robot.links[robot.multi_dof[0]].kind} joint"
        raise ModelError(f"{robot.name}: {what}: rd.compile builds it with backend='c', 'numpy' or 'jax' "
                         f"so far, not 'cuda' (q of {robot.nq} entries, the rest {robot.nv})")
    wanted = set(DEFAULT_KEYS if outputs is None else outputs)
    keys = tuple(kind.key for kind in KINDS if kind.key in wanted)
    if outputs is not None:
        unknown = sorted(set(outputs) - set(KEYS))
        if unknown:
            raise ValueError(f"unknown output {unknown[0]!r}; choose from {', '.join(KEYS)}")
    if spec is not None and spec.kinds != tuple(kind.name for kind in KINDS if kind.key in keys):
        raise ValueError(f"spec has routines {spec.kinds}, not those of outputs {keys}")
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose {', '.join(repr(b) for b in BACKENDS)}")
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose from {', '.join(PRECISIONS)}")
    if precision != "fp64" and backend != "cuda":
        raise ValueError(f"precision={precision!r} is the CUDA kernels' only: backend='cuda'")
    record = cuda_record(precision) if backend == "cuda" else backend
    command_of = RECORDS[record].command
    if command_of is not None:  # (CUDA: NVRTC; CompileError where CuPy, a GPU or NVRTC is missing)
        command = command_of()
    elif RECORDS[record].compiled:
        chosen = list(compiler) if compiler is not None else find_compiler()
        if not chosen:
            raise CompileError(f"no C compiler found (tried $CC, cc and gcc); {FALLBACK}")
        command = [*chosen, *C_FLAGS, *native_flags()]
    else:
        command = [f"robodyn-{backend}-module"]  # nothing is compiled: the key names the backend
    name = sanitize(f"{robot.name}_base" if base else robot.name)
    named = frames_of(robot, [kind for kind in KINDS if kind.key in keys], frames)
    if spec is not None and spec.frames != named:
        raise ValueError(f"spec has frames {spec.frames}, not {named}")
    key = _cache._cache_key(robot, keys, command, base, named)
    expected = Expected(name, robot.nv, tuple(kind.name for kind in KINDS if kind.key in keys),
                        None if base else tuple(s.name for s in robot.parameters()), key, record, named,
                        robot.nq if sized else None)
    entry = _cache._cache_root(cache) / f"{name}-{key}"

    def more(outputs: tuple[str, ...], frames: tuple[str, ...] | None) -> CompiledDynamics:
        return compile(robot, outputs=outputs, backend=backend, cache=cache, compiler=compiler, base=base,
                       precision=precision, frames=frames, progress=progress)

    found = _found_or_built(robot, spec, entry, command, expected, base, progress)
    found._more = more
    return found


def _found_or_built(robot: Any, spec: ModuleSpec | None, entry: Path, command: list[str], expected: Expected,
                    base: bool, progress: bool) -> CompiledDynamics:
    """The entry's CompiledDynamics from the cache, else built there (its programs generated unless ``spec``
    has them), the build's stages shown on a terminal where ``progress``."""
    replace = False
    try:
        found = _cache._load_entry(entry, expected)
    except _cache._UnloadableError:  # it passes every check but does not load here: build it again, replacing it
        found, replace = None, True
    if found is not None:
        return found
    if not progress:
        return _build_and_load(robot, spec, entry, command, expected, base, replace, {})
    times: dict[str, float] = {}
    with on_terminal(f"compiling {robot.name}"):
        built = _build_and_load(robot, spec, entry, command, expected, base, replace, times)
    if sum(times.values()) > DELAY and sys.stderr is not None and sys.stderr.isatty():
        tool = Path(command[0]).name if RECORDS[expected.backend].compiled else expected.backend
        count = len(built.routines)
        print(f"robodyn: compiled {count} routine{'' if count == 1 else 's'} of {robot.name} in "
              f"{sum(times.values()):.1f} s "
              f"(programs {times['programs']:.1f} s, {tool} {times['build']:.1f} s), cached in {entry}",
              file=sys.stderr)
    return built


def _build_and_load(robot: Any, spec: ModuleSpec | None, entry: Path, command: list[str], expected: Expected,
                    base: bool, replace: bool, times: dict[str, float]) -> CompiledDynamics:
    """Build the entry (generating its programs unless ``spec`` has them) and load it; ``times`` gets the seconds
    of the programs and of the build (writing, compiling)."""
    name, keys = expected.name, tuple(kind.key for kind in KINDS if kind.name in expected.kinds)
    start = time.perf_counter()
    spec = spec or module_spec(robot, keys, base=base, frames=expected.frames or None)
    times["programs"] = time.perf_counter() - start
    if spec.name != name:
        raise ValueError(f"spec is named {spec.name!r}, but the routines of this robot{' (base=True)' if base else ''} "
                         f"are named {name!r}: build it with module_spec(robot, outputs, base={base})")
    problem = expected.problem(spec)
    if problem:
        raise ValueError(f"spec does not describe {robot.name!r}: {problem}")
    while True:
        start = time.perf_counter()
        try:
            _cache._build(spec, entry, command, expected, replace=replace)
        except OSError as exc:  # the cache directory cannot be written
            raise CompileError(f"cannot write the compile cache {entry.parent} ({exc.strerror or exc}); set "
                               f"${CACHE_ENV} to a writable directory, or {FALLBACK}") from None
        times["build"] = times.get("build", 0.0) + time.perf_counter() - start
        try:
            found = _cache._load_entry(entry, expected)
        except _cache._UnloadableError as exc:
            if not replace:  # the entry kept was another process's, and does not load here: replace it, once
                replace = True
                continue
            raise CompileError(f"the library just built in {entry} does not load ({exc}); {FALLBACK}") from None
        if found is None:
            raise CompileError(f"the library just built in {entry} does not load; {FALLBACK}")
        return found


def hot_routines(robot: Any, params: Any) -> dict[str, Callable[..., Any]]:
    """The numeric engine's hot path (:mod:`robodyn.numeric.hotpath`, which imports this on use): ``robot``'s
    default routines, compiled (or from the cache), each on one state with ``params`` bound, answering
    NotImplemented to anything else. CompileError without the ``robodyn._fastcall`` extension or a compiler."""
    if compiled.Caller is None:
        raise CompileError("the robodyn._fastcall extension was not built (no Python.h when robodyn was installed)")
    dyn = compile(robot, progress=False)  # (built in a thread of the numeric engine, while the user's loop runs)
    assert dyn._fast_call is not None
    values = {str(key): value for key, value in (params or {}).items()} if dyn.parameters else None
    k = dyn.constants(values)
    return {routine: dyn._fast_call(routine, k, dyn._tail(routine)) for routine in dyn.routines}

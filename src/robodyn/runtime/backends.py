"""What :func:`robodyn.compile` can build, one record each: the compiled C, the generated NumPy module, the
generated JAX module, the CUDA kernels.

A :class:`Backend` says how an entry of the compile cache (:mod:`robodyn.runtime.cache`) is made and loaded:
``generate`` (the routine description -> the generated files, by :func:`robodyn.codegen.generate`), ``build``
(the generated files, written into the entry's private work directory -> the files made from them there: the
shared library, for C), ``load`` (a checked entry -> a :class:`~robodyn.runtime.compiled.CompiledDynamics`),
with the entry's files (:attr:`Backend.files`: the last one is what is loaded) and whether it needs the C
compiler. :data:`BACKENDS`, the names ``rd.compile(robot, backend=...)`` accepts, are the records' names.

The NumPy and JAX backends (``backend="numpy"`` or ``"jax"``) are cached the same way as the library: an entry
holds the generated module ``NAME.py`` (``NAME_jax.py``) and its ``spec.json`` (the command part of the key is
the backend's name); the module's bytes are read once through the checked descriptor, hashed, and the bytes
that matched are executed, so a later process skips generating them (the PUMA: 2 s -> 0.1 s). The JAX module's
routines are each wrapped in :func:`jax.jit` once, when it is loaded: a call traces and compiles the routine with
XLA the first time it sees a shape, and runs the compiled computation after that (NumPy arrays in, NumPy
arrays out).

The CUDA backend (``backend="cuda"``, :mod:`robodyn.runtime.cuda`) keeps the kernels ``NAME.cu``
(:mod:`robodyn.codegen.cuda`, fp64) and their PTX ``NAME.ptx``, built by NVRTC for the GPU's compute capability
(the NVRTC version and the architecture are the command part of the key); the PTX's checked bytes are loaded by
CuPy. ``precision="fp32"`` is its own record, ``cuda-fp32`` (``NAME_fp32.cu``, ``NAME_fp32.ptx``; the precision is
part of the command, so of the key). Its :attr:`Backend.command` refuses, in one line and before anything is
generated, where CuPy, a GPU or NVRTC is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from robodyn.codegen import exec_python, generate, python_file
from robodyn.codegen.cuda import cuda_file, generate_cuda
from robodyn.codegen.spec import ModuleSpec
from robodyn.program.progress import stage
from robodyn.runtime import cuda
from robodyn.runtime.compiled import CompiledDynamics, load_library
from robodyn.runtime.toolchain import compile_library, sized_command

__all__ = ["BACKENDS", "RECORDS", "Backend", "cuda_record"]


@dataclass(frozen=True)
class Backend:
    """How one backend's cache entry is generated, built and loaded (see the module)."""

    #: ``rd.compile``'s ``backend=``.
    name: str
    #: The entry's files besides its manifest, for a module name: the last one is what is loaded.
    files: Callable[[str], list[str]]
    #: spec -> {file name: text}: the generated files.
    generate: Callable[[ModuleSpec], Mapping[str, str]]
    #: (work directory holding the generated files, spec, command) -> the names of the files built there.
    build: Callable[[Path, ModuleSpec, list[str]], list[str]]
    #: (entry directory, its checked spec, the descriptor of its checked library or None, the checked bytes of
    #: its module or None) -> the compiled object; ``unloadable`` is what it raises for an entry that passes its
    #: checks but does not load here (it is built again, once).
    load: Callable[[Path, ModuleSpec, int | None, bytes | None], CompiledDynamics]
    unloadable: tuple[type[Exception], ...]
    #: Compiled with the C compiler (the command is the compiler's; the library is loaded from its descriptor),
    #: else loaded from its checked bytes: a Python module executed (the command is only the backend's name, for
    #: the key), or the CUDA kernels' PTX.
    compiled: bool
    #: The build command when it is not the C compiler's (CUDA: NVRTC's version and options, part of the key): it
    #: raises CompileError, in one line, where the backend cannot run here.
    command: Callable[[], list[str]] | None = None


def _c_files(name: str) -> list[str]:
    return [f"{name}.c", f"{name}.h", f"{name}.so"]


def _c_build(work: Path, spec: ModuleSpec, command: list[str]) -> list[str]:
    library, source = work / f"{spec.name}.so", work / f"{spec.name}.c"
    size = source.stat().st_size
    command = sized_command(command, size)
    level = " ".join(flag for flag in command if flag.startswith("-O"))
    stage(f"{Path(command[0]).name} {level} on {size // 1024} KB of C")
    compile_library(command, source, library)
    return [library.name]


def _c_load(entry: Path, spec: ModuleSpec, fd: int | None, module: bytes | None) -> CompiledDynamics:
    return load_library(entry / f"{spec.name}.so", spec, fd=fd)


def _python_load(language: str) -> Callable[[Path, ModuleSpec, int | None, bytes | None], CompiledDynamics]:
    def load(entry: Path, spec: ModuleSpec, fd: int | None, module: bytes | None) -> CompiledDynamics:
        return _python_backend(spec, language, (module or b"").decode("utf-8"))

    return load


def _python_backend(spec: ModuleSpec, language: str, text: str) -> CompiledDynamics:
    """A :class:`CompiledDynamics` over the generated NumPy or JAX module ``text`` (of ``spec``); the JAX
    module's routines jitted (see the module)."""
    module = exec_python(text, python_file(spec.name, language))
    functions: dict[str, Callable[..., Any]] = {r.name: getattr(module, r.name) for r in spec.routines
                                                if hasattr(module, r.name)}
    if language == "jax":
        import jax

        functions = {name: jax.jit(f) for name, f in functions.items()}

    def call(routine: str, k: np.ndarray, arrays: list[np.ndarray], tail: tuple[int, ...],
             out: np.ndarray | None = None) -> np.ndarray:
        if routine == "constants":
            return np.asarray(functions["constants"](arrays[0]), dtype=float).reshape(tail)
        result = np.asarray(functions[routine](k, *arrays), dtype=float)
        if out is None:
            return result
        out[...] = result
        return out

    call.functions = functions  # type: ignore[attr-defined]  # (the routines called: jitted for JAX)
    return CompiledDynamics(spec, call, backend=language)


def _python(language: str) -> Backend:
    return Backend(name=language, files=lambda name: [python_file(name, language)],
                   generate=lambda spec: generate(None, language, spec=spec), build=lambda work, spec, command: [],
                   load=_python_load(language), unloadable=(SyntaxError, UnicodeDecodeError), compiled=False)


def _cuda_command(precision: str) -> Callable[[], list[str]]:
    def command() -> list[str]:
        _, arch = cuda.require_gpu()
        chosen = [] if precision == "fp64" else [f"precision={precision}"]  # (the fp64 key as it was)
        return [f"nvrtc-{cuda.nvrtc_version()}", f"--gpu-architecture={arch}", *cuda.NVRTC_OPTIONS, *chosen]

    return command


def _cuda_build(precision: str) -> Callable[[Path, ModuleSpec, list[str]], list[str]]:
    def build(work: Path, spec: ModuleSpec, command: list[str]) -> list[str]:
        arch = next(option.split("=", 1)[1] for option in command if option.startswith("--gpu-architecture="))
        source = work / cuda_file(spec.name, precision)
        target = source.with_suffix(".ptx")
        target.write_text(cuda.ptx(source.read_text(encoding="utf-8"), source.name, arch=arch), encoding="utf-8")
        return [target.name]

    return build


def _cuda(precision: str) -> Backend:
    """The CUDA kernels in ``precision``: record ``cuda`` (fp64) or ``cuda-fp32``."""

    def files(name: str) -> list[str]:
        source = cuda_file(name, precision)
        return [source, source.removesuffix(".cu") + ".ptx"]

    def load(entry: Path, spec: ModuleSpec, fd: int | None, module: bytes | None) -> CompiledDynamics:
        return cuda.load_ptx(module or b"", spec, precision)

    return Backend(name=cuda_record(precision), files=files, generate=lambda spec: generate_cuda(spec, precision),
                   build=_cuda_build(precision), load=load, unloadable=(RuntimeError, OSError), compiled=False,
                   command=_cuda_command(precision))


def cuda_record(precision: str) -> str:
    """The record of the CUDA kernels in ``precision``: ``cuda`` (fp64), ``cuda-fp32``."""
    return "cuda" if precision == "fp64" else f"cuda-{precision}"


C = Backend(name="c", files=_c_files, generate=lambda spec: generate(None, "c", spec=spec), build=_c_build,
            load=_c_load, unloadable=(OSError, AttributeError), compiled=True)
NUMPY = _python("numpy")
JAX = _python("jax")
CUDA = _cuda("fp64")
CUDA_FP32 = _cuda("fp32")

#: The backends by name.
RECORDS: dict[str, Backend] = {backend.name: backend for backend in (C, NUMPY, JAX, CUDA, CUDA_FP32)}
#: What :func:`robodyn.compile` can build: the compiled C, the generated NumPy or JAX module, the CUDA kernels
#: (``backend="cuda"``; its fp32 record is ``precision="fp32"``).
BACKENDS = ("c", "numpy", "jax", "cuda")

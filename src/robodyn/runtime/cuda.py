"""The CUDA toolchain and runtime: kernels (:mod:`robodyn.codegen.cuda`) to PTX by NVRTC, checked by ptxas,
loaded by CuPy.

PTX comes from NVRTC, CUDA's run-time compiler library (``libnvrtc.so``: the ``nvidia-cuda-nvrtc-cu12`` wheel of
the ``cuda`` extra, or a CUDA installation's), called through :mod:`ctypes`: it needs no GPU, no host compiler and
no CUDA headers (the kernels include none). The ``nvidia-cuda-nvcc-cu12`` wheel holds no ``nvcc`` driver (only
``ptxas`` and NVVM); its ``ptxas`` assembles the PTX for a real architecture (``sm_80``, ``sm_90``), which checks
it to the end without a GPU (:func:`assemble`). Where the library or ``ptxas`` is missing, :class:`CudaUnavailableError`
says so in one line.

``rd.compile(robot, backend="cuda")`` (:data:`robodyn.runtime.backends.CUDA`) also needs CuPy and an NVIDIA GPU:
the PTX, built for the GPU's compute capability and kept in the compile cache like the C's library, is loaded by CuPy
(``cupy.cuda.function.Module``); the :class:`~robodyn.runtime.compiled.CompiledDynamics` it gives takes NumPy
arrays, copied to the GPU and back (device arrays in place, CuPy's or by DLPack, are left for later: they need
:class:`~robodyn.runtime.compiled.CompiledDynamics` to keep them as they are). Without CuPy or a GPU it raises
:class:`~robodyn.runtime.toolchain.CompileError` in one line before anything is generated.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from robodyn.codegen.cuda import kernel_name
from robodyn.codegen.spec import ModuleSpec
from robodyn.runtime.compiled import CompiledDynamics
from robodyn.runtime.toolchain import CompileError

__all__ = ["CudaUnavailableError", "assemble", "find_nvrtc", "find_ptxas", "load_ptx", "nvrtc_version", "ptx",
           "require_gpu"]

#: The environment variable naming libnvrtc.so (else the wheel's, else the system's).
NVRTC_ENV = "ROBODYN_NVRTC"
#: Threads per block of the kernels' launches.
BLOCK = 256
#: Options every kernel is compiled with: C++17, and no warning allowed (:func:`ptx` fails on any log).
NVRTC_OPTIONS = ("--std=c++17",)
#: The architecture of PTX built without a GPU (sm_80: A100; the PTX runs on any later GPU by JIT).
DEFAULT_ARCH = "compute_80"
WHAT = "robodyn's CUDA kernels"


class CudaUnavailableError(CompileError):
    """NVRTC, ptxas, CuPy or a GPU is missing (one line saying which, and what to install)."""


def _wheel_path(package: str, *parts: str) -> Path | None:
    try:
        found = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    for location in found.submodule_search_locations:
        path = Path(location, *parts)
        if path.exists():
            return path
    return None


def find_nvrtc() -> str | None:
    """libnvrtc: ``$ROBODYN_NVRTC``, else the ``nvidia-cuda-nvrtc-cu12`` wheel's, else the system's; None if none."""
    given = os.environ.get(NVRTC_ENV)
    if given:
        return given
    lib = _wheel_path("nvidia.cuda_nvrtc", "lib")
    if lib is not None:
        names = sorted(p for p in lib.glob("libnvrtc.so*") if "alt" not in p.name)
        if names:
            return str(names[0])
    return ctypes.util.find_library("nvrtc")


def find_ptxas() -> str | None:
    """ptxas: the ``nvidia-cuda-nvcc-cu12`` wheel's, else on the PATH; None if neither."""
    wheel = _wheel_path("nvidia.cuda_nvcc", "bin", "ptxas")
    if wheel is not None and os.access(wheel, os.X_OK):
        return str(wheel)
    return shutil.which("ptxas")


_NVRTC: dict[str, Any] = {}


def _nvrtc() -> Any:
    path = find_nvrtc()
    if path is None:
        raise CudaUnavailableError(f"NVRTC (libnvrtc.so) is not found: pip install 'robodyn[cuda]' (the "
                              f"nvidia-cuda-nvrtc-cu12 wheel), or set ${NVRTC_ENV} to a libnvrtc.so")
    if path not in _NVRTC:
        try:
            lib = ctypes.CDLL(path)
        except OSError as exc:
            raise CudaUnavailableError(f"NVRTC at {path} does not load ({exc})") from None
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        _NVRTC[path] = lib
    return _NVRTC[path]


def nvrtc_version() -> str:
    """NVRTC's version, ``"12.9"`` (CudaUnavailableError without it)."""
    lib = _nvrtc()
    major, minor = ctypes.c_int(), ctypes.c_int()
    lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return f"{major.value}.{minor.value}"


def ptx(source: str, name: str = "kernels.cu", *, arch: str = DEFAULT_ARCH, options: Sequence[str] = ()) -> str:
    """The PTX of the CUDA ``source``, compiled by NVRTC for ``arch`` (``compute_80``...). CompileError naming the
    file if NVRTC fails or says anything (a warning too: its log must be empty)."""
    lib = _nvrtc()
    program = ctypes.c_void_p()
    _check(lib, lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), name.encode(), 0, None, None), name)
    try:
        flags = [f"--gpu-architecture={arch}", *NVRTC_OPTIONS, *options]
        array = (ctypes.c_char_p * len(flags))(*(f.encode() for f in flags))
        status = lib.nvrtcCompileProgram(program, len(flags), array)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
        log = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(program, log)
        text = log.value.decode(errors="replace").strip()
        if status != 0 or text:
            what = lib.nvrtcGetErrorString(status).decode()
            raise CompileError(f"NVRTC on {name} ({arch}): {what}: {' '.join(text.split())[-800:]}")
        lib.nvrtcGetPTXSize(program, ctypes.byref(size))
        buffer = ctypes.create_string_buffer(size.value)
        _check(lib, lib.nvrtcGetPTX(program, buffer), name)
        return buffer.value.decode()
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(program))


def _check(lib: Any, status: int, name: str) -> None:
    if status != 0:
        raise CompileError(f"NVRTC on {name}: {lib.nvrtcGetErrorString(status).decode()}")


def assemble(ptx_file: Path, arch: str = "sm_80") -> Path:
    """ptxas on ``ptx_file`` for ``arch``, warnings as errors: the cubin beside it (CompileError if ptxas fails or
    warns; CudaUnavailableError without ptxas)."""
    ptxas = find_ptxas()
    if ptxas is None:
        raise CudaUnavailableError("ptxas is not found: pip install 'robodyn[cuda]' (the nvidia-cuda-nvcc-cu12 wheel)")
    cubin = ptx_file.with_suffix(f".{arch}.cubin")
    command = [ptxas, f"-arch={arch}", "--warning-as-error", "-o", str(cubin), str(ptx_file)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0 or result.stderr.strip():
        raise CompileError(f"ptxas on {ptx_file.name} ({arch}) failed (exit {result.returncode}): "
                           f"{' '.join(result.stderr.split())[-800:]}")
    return cubin


# -- the GPU -------------------------------------------------------------------------------------------


def require_gpu() -> tuple[Any, str]:
    """(cupy, the GPU's architecture ``compute_XY``): CudaUnavailableError (one line) without CuPy, a GPU or NVRTC."""
    fallback = "or compile for the CPU: robodyn.compile(robot) (the C backend)"
    try:
        import cupy
    except ImportError:
        raise CudaUnavailableError(f"backend 'cuda' needs CuPy and an NVIDIA GPU: CuPy is not installed (pip install "
                              f"cupy-cuda12x); {fallback}") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
        capability = str(cupy.cuda.Device().compute_capability) if count else ""
    except Exception as exc:  # CuPy's errors where there is no driver or no device
        problem = " ".join(str(exc).split())
        raise CudaUnavailableError(f"backend 'cuda' needs an NVIDIA GPU: {problem}; {fallback}") from None
    if not count:
        raise CudaUnavailableError(f"backend 'cuda' needs an NVIDIA GPU: CuPy sees none; {fallback}")
    nvrtc_version()  # (CudaUnavailableError without NVRTC)
    return cupy, f"compute_{capability}"


def load_ptx(text: bytes, spec: ModuleSpec) -> CompiledDynamics:
    """A :class:`CompiledDynamics` over the kernels of ``spec`` in the PTX ``text``, loaded by CuPy."""
    cupy, _ = require_gpu()
    module = cupy.cuda.function.Module()
    module.load(text)
    kernels = {r.name: module.get_function(kernel_name(spec.name, r.name)) for r in spec.routines}
    processors = cupy.cuda.Device().attributes["MultiProcessorCount"]

    def call(routine: str, k: np.ndarray, arrays: list[np.ndarray], tail: tuple[int, ...],
             out: np.ndarray | None = None) -> np.ndarray:
        if routine == "constants":
            k_out = cupy.empty(max(tail[0], 1))
            params = cupy.asarray(arrays[0]) if arrays[0].size else cupy.zeros(1)
            kernels[routine]((1,), (1,), (params, k_out))
            return np.asarray(cupy.asnumpy(k_out[: tail[0]]))
        N = arrays[0].shape[0]
        given = [cupy.asarray(a) for a in arrays]  # (float64, C-contiguous: CompiledDynamics made them so)
        result = cupy.empty((N, *tail))
        kk = cupy.asarray(k if k.size else np.zeros(1))
        grid = max(1, min((N + BLOCK - 1) // BLOCK, 32 * processors))
        kernels[routine]((grid,), (BLOCK,), (kk, *given, result, np.uint64(N)))
        if out is not None:
            result.get(out=out)
            return out
        return np.asarray(result.get())

    call.module = module  # type: ignore[attr-defined]  # (kept alive with the closure)
    return CompiledDynamics(spec, call, backend="cuda")

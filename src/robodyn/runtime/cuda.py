"""The CUDA toolchain and runtime: kernels (:mod:`robodyn.codegen.cuda`) to PTX by NVRTC, checked by ptxas,
loaded by CuPy.

PTX comes from NVRTC, CUDA's run-time compiler library (``libnvrtc.so``: the ``nvidia-cuda-nvrtc-cu12`` wheel of
the ``cuda`` extra, or a CUDA installation's), called through :mod:`ctypes`: it needs no GPU, no host compiler and
no CUDA headers (the kernels include none). The ``nvidia-cuda-nvcc-cu12`` wheel holds no ``nvcc`` driver (only
``ptxas`` and NVVM); its ``ptxas`` assembles the PTX for a real architecture (``sm_80``, ``sm_90``), which checks
it to the end without a GPU (:func:`assemble`). Where the library or ``ptxas`` is missing, :class:`CudaUnavailableError`
says so in one line.

``rd.compile(robot, backend="cuda")`` (:data:`robodyn.runtime.backends.CUDA`; ``precision="fp32"``: the float
kernels) also needs CuPy and an NVIDIA GPU: the PTX, built for the GPU's compute capability and kept in the compile
cache like the C's library, is loaded by CuPy (``cupy.cuda.function.Module``) as a :class:`CudaDynamics`, the
:class:`~robodyn.runtime.compiled.CompiledDynamics` whose methods take device arrays where they are (CuPy's, or
by DLPack from JAX or PyTorch: :func:`to_device`) and give CuPy arrays, or take NumPy arrays, copied to the GPU and
back. Without CuPy or a GPU it raises :class:`~robodyn.runtime.toolchain.CompileError` in one line before anything
is generated.
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

__all__ = ["CudaDynamics", "CudaUnavailableError", "assemble", "find_nvrtc", "find_ptxas", "load_ptx", "nvrtc_version",
           "placement", "ptx", "require_gpu", "to_device"]

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


# -- device arrays ---------------------------------------------------------------------------------------

#: Where an argument is: already a CuPy array, a DLPack producer on a CUDA device (JAX, PyTorch), another
#: library's CUDA array (``__cuda_array_interface__``: Numba...), or host memory (NumPy, lists, CPU tensors).
CUPY, DLPACK, INTERFACE, HOST = "cupy", "dlpack", "interface", "host"
#: DLPack's device types of memory a CUDA kernel reads in place: kDLCUDA, kDLCUDAManaged.
DLPACK_CUDA = (2, 13)


def placement(array: Any, device_array: type) -> str:
    """Where ``array`` is (:data:`CUPY`, :data:`DLPACK`, :data:`INTERFACE` or :data:`HOST`); ``device_array``: CuPy's
    array type. A DLPack producer that is not on a CUDA device (a NumPy array, a CPU tensor) is on the host."""
    if isinstance(array, device_array):
        return CUPY
    if isinstance(array, np.ndarray):
        return HOST
    if hasattr(array, "__dlpack__") and hasattr(array, "__dlpack_device__"):
        try:
            device_type = int(array.__dlpack_device__()[0])
        except Exception:  # (a producer that cannot say: read it on the host)
            return HOST
        if device_type in DLPACK_CUDA:
            return DLPACK
        return HOST
    try:
        if getattr(array, "__cuda_array_interface__", None) is not None:
            return INTERFACE
    except Exception:  # (PyTorch raises for a tensor that requires grad)
        pass
    return HOST


def to_device(array: Any, cupy: Any, dtype: Any) -> tuple[Any, bool]:
    """(``array`` as a CuPy array of ``dtype``, whether it was on the GPU already): a CuPy array as it is (cast on the
    GPU if its dtype differs), a DLPack producer on a CUDA device by ``cupy.from_dlpack`` and another library's
    CUDA array by ``cupy.asarray`` (both without a copy), anything else converted by NumPy and copied in."""
    where = placement(array, cupy.ndarray)
    if where == HOST:
        return cupy.asarray(np.asarray(array, dtype=dtype)), False
    found = array if where == CUPY else cupy.from_dlpack(array) if where == DLPACK else cupy.asarray(array)
    return (found if found.dtype == dtype else found.astype(dtype)), True


def _span(array: Any) -> tuple[int, int]:
    """The device addresses [start, end) of a C-contiguous CuPy array's data."""
    start = int(array.__cuda_array_interface__["data"][0])
    return start, start + int(array.nbytes)


def _checked_out(out: Any, shape: tuple[int, ...], dtype: Any, on_device: bool, cupy: Any) -> None:
    """ValueError unless ``out`` is a C-contiguous array of ``shape`` and ``dtype``, a CuPy array for device inputs
    or a writeable NumPy array for host inputs."""
    kind = cupy.ndarray if on_device else np.ndarray
    where = "CuPy" if on_device else "writeable NumPy"
    fits = (isinstance(out, kind) and out.dtype == dtype and out.shape == shape and out.flags.c_contiguous
            and (on_device or out.flags.writeable))
    if not fits:
        got = f"{type(out).__name__} {getattr(out, 'shape', '')} {getattr(out, 'dtype', '')}".strip()
        raise ValueError(f"out must be a C-contiguous {where} {np.dtype(dtype).name} array of shape {shape} (the "
                         f"inputs are {'on the GPU' if on_device else 'on the host'}), got {got}")


class CudaDynamics(CompiledDynamics):
    """The :class:`~robodyn.runtime.compiled.CompiledDynamics` of the CUDA kernels (``backend="cuda"``).

    Its methods take device arrays where they are (:func:`to_device`): CuPy arrays, DLPack producers on a CUDA device
    (JAX, PyTorch; read in place by ``cupy.from_dlpack``), other CUDA arrays (``__cuda_array_interface__``). If any
    input is on the GPU the result is a CuPy array on the GPU (nothing comes back to the host; ``out`` then a CuPy
    array; hand it to ``torch.from_dlpack`` or ``jax.dlpack.from_dlpack`` without a copy); host inputs alone
    (NumPy) are copied in, and the result is copied out into a NumPy array. Results are in the kernels'
    precision (:attr:`dtype`: float64, or float32 for ``precision="fp32"``); inputs of another dtype are cast.
    ``kernels``: routine name -> the kernel (called as CuPy's ``RawKernel``/``Function``: ``(grid, block, args)``);
    ``processors``: the GPU's multiprocessors (the grid is at most 32 blocks each, the kernels loop over the
    rest)."""

    #: The loaded module (kept alive with its kernels).
    _module: Any = None

    def __init__(self, spec: ModuleSpec, kernels: dict[str, Any], cupy: Any, *, precision: str = "fp64",
                 processors: int = 1) -> None:
        self.precision = precision
        self.dtype = np.dtype(np.float64 if precision == "fp64" else np.float32)
        self._kernels = kernels
        self._cupy = cupy
        self._processors = processors
        self._k_device: tuple[np.ndarray, Any] | None = None
        super().__init__(spec, self._constants_call, backend="cuda")

    def _constants_call(self, routine: str, k: np.ndarray, arrays: list[np.ndarray], tail: tuple[int, ...],
                        out: np.ndarray | None = None) -> np.ndarray:
        """The constants kernel, on one thread (what :meth:`constants` calls)."""
        cupy = self._cupy
        k_out = cupy.empty(max(tail[0], 1), dtype=self.dtype)
        params = cupy.asarray(np.asarray(arrays[0] if arrays[0].size else np.zeros(1), dtype=self.dtype))
        self._kernels["constants"]((1,), (1,), (params, k_out))
        return np.asarray(k_out[: tail[0]].get())

    def _device_constants(self, params: Any) -> Any:
        k = self.constants(params)
        with self._lock:
            if self._k_device is None or self._k_device[0] is not k:  # (copied in once per parameter values)
                self._k_device = (k, self._cupy.asarray(k if k.size else np.zeros(1, dtype=self.dtype)))
            return self._k_device[1]

    def _run(self, routine: str, arrays: Sequence[Any], params: Any, out: Any = None) -> Any:
        if routine not in self.routines:
            raise ValueError(f"{routine} was not generated for {self.name!r} (generated: {', '.join(self.routines)})")
        cupy = self._cupy
        placed = [to_device(a, cupy, self.dtype) for a in arrays]
        given = [a for a, _ in placed]
        on_device = any(there for _, there in placed)
        self._check_joint_arrays(given)
        shape, batch, flat = self._batched(given, cupy)
        tail = self._tail(routine)
        packed = (batch[0], *tail)
        if out is not None:
            _checked_out(out, shape[:-1] + tail, self.dtype, on_device, cupy)
        if on_device and out is not None:
            result = out.reshape(packed)
            ends = _span(result)
            if any(max(ends[0], s[0]) < min(ends[1], s[1]) for s in map(_span, flat)):
                raise ValueError("out must not overlap the input arrays")
        else:
            result = cupy.empty(packed, dtype=self.dtype)
        k = self._device_constants(params)
        N = batch[0]
        grid = max(1, min((N + BLOCK - 1) // BLOCK, 32 * self._processors))
        self._kernels[routine]((grid,), (BLOCK,), (k, *flat, result, np.uint64(N)))
        if on_device:
            return out if out is not None else result[0] if len(shape) == 1 else result
        if out is not None:
            result.get(out=out.reshape(packed))
            return out
        host = np.asarray(result.get())
        return host[0] if len(shape) == 1 else host


def load_ptx(text: bytes, spec: ModuleSpec, precision: str = "fp64") -> CompiledDynamics:
    """A :class:`CudaDynamics` over the kernels of ``spec`` in the PTX ``text`` (``precision``'s), loaded by CuPy."""
    cupy, _ = require_gpu()
    module = cupy.cuda.function.Module()
    module.load(text)
    kernels = {r.name: module.get_function(kernel_name(spec.name, r.name)) for r in spec.routines}
    processors = int(cupy.cuda.Device().attributes["MultiProcessorCount"])
    dynamics = CudaDynamics(spec, kernels, cupy, precision=precision, processors=processors)
    dynamics._module = module  # (kept alive with the kernels)
    return dynamics

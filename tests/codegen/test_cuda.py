"""The CUDA kernels (robodyn.codegen.cuda), checked without a GPU: every kernel of the PUMA compiles to PTX with
NVRTC (no message at all: a warning fails) and assembles with ptxas for sm_80 and sm_90 (warnings as errors), in
fp64 and fp32, and the fp32 source holds no double-precision literal or function; the one-state routines of the
PUMA, built as host C99 by the C compiler, agree with the C backend to 1e-13 (fp64) at random states (the Panda's:
benchmarks/cuda_host.py). The same PTX check on every kernel of the Panda and of a 20-joint chain, derivatives
included, is benchmarks/cuda_ptx.py (minutes of NVRTC and ptxas; run for each change to the emitter). Skipped where
NVRTC or ptxas (the ``cuda`` extra) is missing. A GPU run is a benchmark (benchmarks/cuda.py)."""

from __future__ import annotations

import ctypes
import re
import subprocess
import warnings
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import robodyn as rd
from robodyn import codegen, numeric
from robodyn.codegen.cuda import CudaEmitter, cuda_file, kernel_name
from robodyn.runtime import cuda
from robodyn.runtime.toolchain import CompileError, find_compiler
from tests.conftest import random_robot

ALL = ("tau", "M", "h", "bias", "G", "forward", "dtau", "dqdd")
#: The 20-joint chain's outputs checked with the others; its derivatives have a test of their own (NVRTC takes about
#: a minute on them, ptxas several: benchmarks/cuda_ptx.py assembles them).
CHAIN = ("tau", "M", "forward")
ROBOTS = ("puma560",)  # (the Panda's and the chain's kernels: benchmarks/cuda_ptx.py)

needs_nvrtc = pytest.mark.skipif(cuda.find_nvrtc() is None or cuda.find_ptxas() is None,
                                 reason="NVRTC or ptxas not installed (pip install 'robodyn[cuda]')")


@cache
def _robot(label: str) -> tuple[rd.Manipulator, tuple[str, ...]]:
    if label == "puma560":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rd.ModelWarning)
            return rd.load("puma560"), ALL
    if label == "panda":
        from benchmarks.urdf_survey import robots_directory

        directory = robots_directory()
        if directory is None:
            pytest.skip("example-robot-data is not installed")
        return rd.load(directory / "panda_description/urdf/panda.urdf"), ALL
    return random_robot(3, 20, "standard", extras=False), CHAIN


@cache
def _spec(label: str) -> codegen.ModuleSpec:
    robot, outputs = _robot(label)
    return codegen.module_spec(robot, outputs)


def _code(text: str) -> str:
    """The source without its comments."""
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


@needs_nvrtc
@pytest.mark.parametrize("precision", ["fp64", "fp32"])
@pytest.mark.parametrize("label", ROBOTS)
def test_every_kernel_compiles_to_ptx_and_assembles_without_a_warning(label: str, precision: str,
                                                                      tmp_path: Path) -> None:
    spec = _spec(label)
    (name, text), = CudaEmitter(precision).files(spec).items()
    assert name == cuda_file(spec.name, precision)
    ptx = cuda.ptx(text, name)  # (raises on any NVRTC message)
    for routine in spec.routines:
        assert f".entry {spec.name}_{routine.name}_kernel(" in ptx, routine.name
    path = tmp_path / f"{spec.name}.ptx"
    path.write_text(ptx)
    for arch in ("sm_80", "sm_90"):
        assert cuda.assemble(path, arch).stat().st_size > 0
    code = _code(text)
    if precision == "fp32":
        assert "double" not in code
        assert not re.findall(r"\b(sin|cos|sqrt|fabs|pow|exp|log)\(", code)  # only sinf, cosf, ...
        literals = re.findall(r"(?<![\w.])\d+\.\d*(?:[eE][-+]?\d+)?F?", code)
        assert literals and all(literal.endswith("F") for literal in literals)
    else:
        assert "float" not in code


def _host_library(text: str, directory: Path, name: str) -> ctypes.CDLL:
    """The kernels' file built as host C99 (the one-state routines; the kernels are under __CUDACC__)."""
    compiler = find_compiler()
    if compiler is None:
        pytest.skip("no C compiler")
    source = directory / name
    source.write_text(text)
    library = directory / f"{name}.so"
    command = [*compiler, "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O1", "-fPIC", "-shared",
               "-ffp-contract=off", "-x", "c", str(source), "-o", str(library), "-lm"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0 and not result.stderr, result.stderr
    return ctypes.CDLL(str(library))


def _compare(label: str, precision: str, tmp_path: Path, states: int) -> float:
    """The largest difference between the host build of the kernels' one-state routines and the C backend, relative
    to the largest magnitude of each output, over ``states`` random states and every routine."""
    robot, outputs = _robot(label)
    spec = _spec(label)
    (name, text), = CudaEmitter(precision).files(spec).items()
    host = _host_library(text, tmp_path, name)
    dyn = rd.compile(robot, outputs=outputs, spec=spec)
    real = np.float64 if precision == "fp64" else np.float32
    k = np.asarray(dyn.constants(), dtype=real)
    k = k if k.size else np.zeros(1, dtype=real)
    rng = np.random.default_rng(11)
    worst = 0.0
    for routine in spec.routines:
        if not routine.batched:
            continue
        inputs = [rng.uniform(-np.pi, np.pi, (states, robot.nv)) for _ in routine.inputs[1:]]
        result = getattr(dyn, routine.name)(*inputs)
        reference = np.stack(result, axis=1) if isinstance(result, tuple) else result  # (derivatives: packed)
        function = getattr(host, f"{spec.name}_{routine.name}")
        for s in range(states):
            arrays = [np.ascontiguousarray(a[s], dtype=real) for a in inputs]
            out = np.empty(routine.output.shape, dtype=real)
            function(*(ctypes.c_void_p(a.ctypes.data) for a in (k, *arrays, out)))
            scale = max(float(np.abs(reference[s]).max()), 1e-300)
            if routine.name.startswith("forward_dynamics"):
                # the normwise backward error of the solves with M (qdd, and dqdd = -M^-1 dtau/dx): |M d| / (|M| |x|)
                # (cond(M) of the 20-joint chain, up to 4e4, amplifies the one-ulp sines and cosines: 1e-12)
                M = numeric.mass_matrix(robot, arrays[0].astype(float))
                scale *= float(np.abs(M).sum(axis=1).max())
                out = M @ out.astype(float) - M @ reference[s] + reference[s]
            worst = max(worst, float(np.abs(out - reference[s]).max()) / scale)
    return worst


@needs_nvrtc
# (the Panda's, whose C with its derivatives takes about 25 s to build: benchmarks/cuda_host.py)
@pytest.mark.parametrize("label", ["puma560"])
def test_the_kernel_body_built_as_host_c_agrees_with_the_c_backend(label: str, tmp_path: Path) -> None:
    """Every routine to 1e-13 of its largest entry; the forward dynamics by its normwise backward error (see
    :func:`_compare`): the sines and cosines differ by an ulp (the host's libm against the C's own kernels)."""
    assert _compare(label, "fp64", tmp_path, 20) <= 1e-13


@needs_nvrtc
def test_the_fp32_kernel_body_agrees_with_the_c_backend_to_single_precision(tmp_path: Path) -> None:
    assert _compare("puma560", "fp32", tmp_path, 20) <= 1e-4


def test_generate_names_cuda_and_the_cuda_backend_refuses_in_one_line_without_a_gpu() -> None:
    robot = rd.load("two_link_fu")
    files = codegen.generate(robot, "cuda", ["tau"])
    assert list(files) == ["two_link_fu.cu"] and "two_link_fu_inverse_dynamics_kernel" in files["two_link_fu.cu"]
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount():
            pytest.skip("a GPU is present: benchmarks/cuda.py runs the backend")
    except ImportError:
        pass
    except Exception:  # CuPy installed without a driver: the backend must refuse, as checked below
        pass
    with pytest.raises(CompileError) as caught:
        rd.compile(robot, outputs=["tau"], backend="cuda")
    message = str(caught.value)
    assert "\n" not in message and "backend 'cuda' needs" in message and "robodyn.compile(robot)" in message


# -- the CUDA backend's device arrays, without a GPU: CuPy stood in for by NumPy, each kernel by the C backend ------


class FakeGPUArray(np.ndarray):
    """A CuPy array stood in for: NumPy memory said to be on the GPU (``__cuda_array_interface__``); ``get`` (the copy
    to the host) is counted."""

    downloads = 0

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ctypes.data, False), "version": 3,
                "strides": None}

    def get(self, out: np.ndarray | None = None) -> np.ndarray:
        FakeGPUArray.downloads += 1
        host = np.array(self, copy=True).view(np.ndarray)
        if out is None:
            return host
        out[...] = host
        return out


class DLPackOnGPU:
    """A JAX or PyTorch array on a CUDA device, stood in for: DLPack's protocol, device type kDLCUDA."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def __dlpack__(self, stream: Any = None) -> Any:
        raise AssertionError("read through the fake cupy.from_dlpack")

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)


class InterfaceOnGPU:
    """A Numba device array, stood in for: only ``__cuda_array_interface__``."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values
        self.__cuda_array_interface__ = {"shape": values.shape, "typestr": values.dtype.str,
                                         "data": (values.ctypes.data, False), "version": 3, "strides": None}


class FakeCupy:
    """The parts of CuPy the backend uses, over NumPy: host arrays copied in are counted (``uploads``), device
    arrays and DLPack producers read in place; ``cuda.function.Module`` hands out ``kernels`` by name."""

    ndarray = FakeGPUArray
    float64, float32 = np.float64, np.float32

    def __init__(self, kernels: dict[str, Any] | None = None) -> None:
        self.uploads: list[Any] = []
        self.dlpack: list[Any] = []
        kernels = kernels or {}

        class Module:
            def load(self, text: bytes) -> None:
                self.text = text

            def get_function(self, name: str) -> Any:
                return kernels[name]

        class Device:
            def __init__(self) -> None:
                self.attributes = {"MultiProcessorCount": 2}

        self.cuda = SimpleNamespace(function=SimpleNamespace(Module=Module), Device=Device)

    def asarray(self, a: Any, dtype: Any = None) -> FakeGPUArray:
        if isinstance(a, FakeGPUArray) and (dtype is None or a.dtype == dtype):
            return a
        if isinstance(a, InterfaceOnGPU):
            return a.values.view(FakeGPUArray)
        self.uploads.append(a)
        return np.array(a, dtype=dtype).view(FakeGPUArray)

    def from_dlpack(self, a: DLPackOnGPU) -> FakeGPUArray:
        self.dlpack.append(a)
        return a.values.view(FakeGPUArray)

    def empty(self, shape: Any, dtype: Any = np.float64) -> FakeGPUArray:
        return np.empty(shape, dtype=dtype).view(FakeGPUArray)

    def ascontiguousarray(self, a: np.ndarray) -> FakeGPUArray:
        return np.ascontiguousarray(a).view(FakeGPUArray)

    def broadcast_to(self, a: np.ndarray, shape: tuple[int, ...]) -> FakeGPUArray:
        return np.broadcast_to(a, shape).view(FakeGPUArray)


DEVICE_OUTPUTS = ("tau", "M", "forward", "dqdd")


@cache
def _pendulum() -> tuple[rd.Manipulator, codegen.ModuleSpec, Any]:
    """The double pendulum (symbolic lengths, masses and g), its spec and its compiled C."""
    robot = rd.load("double_pendulum")
    spec = codegen.module_spec(robot, DEVICE_OUTPUTS)
    return robot, spec, rd.compile(robot, outputs=DEVICE_OUTPUTS, spec=spec)


def _c_kernels(dyn: Any, spec: codegen.ModuleSpec, launches: list[tuple[str, str]]) -> dict[str, Any]:
    """Each kernel of ``spec`` stood in for by the C backend's batch routine, in float64 whatever the arrays' dtype
    (each launch recorded with its arrays' dtype)."""

    def kernel(name: str) -> Any:
        def launch(grid: tuple[int], block: tuple[int], args: tuple[Any, ...]) -> None:
            arrays = [np.asarray(a) for a in args if isinstance(a, np.ndarray)]
            launches.append((name, str(arrays[0].dtype)))
            assert all(a.dtype == arrays[0].dtype and a.flags.c_contiguous for a in arrays)
            if name == "constants":
                params, k_out = arrays
                k = dyn._call("constants", np.zeros(0), [params[: len(dyn.parameters)].astype(float)],
                              (spec.n_constants,))
                k_out[: k.size] = k
                return
            *inputs, out = arrays
            N = int(args[-1])
            assert grid[0] * block[0] >= min(N, 32 * 2 * block[0])  # (the grid covers N, or 32 blocks per SM)
            result = dyn._call(name, inputs[0].astype(float), [a.astype(float) for a in inputs[1:]],
                               dyn._tail(name))
            out[...] = result.reshape(out.shape)

        return launch

    return {kernel_name(spec.name, r.name): kernel(r.name) for r in spec.routines}


PARAMS = {"L1": 0.7, "L2": 0.4, "g": 9.81, "m1": 1.5, "m2": 0.8}


def _cuda_dynamics(precision: str = "fp64") -> tuple[cuda.CudaDynamics, FakeCupy, Any, list[tuple[str, str]]]:
    _, spec, dyn = _pendulum()
    launches: list[tuple[str, str]] = []
    kernels = _c_kernels(dyn, spec, launches)
    fake = FakeCupy()
    by_routine = {r.name: kernels[kernel_name(spec.name, r.name)] for r in spec.routines}
    return cuda.CudaDynamics(spec, by_routine, fake, precision=precision, processors=2), fake, dyn, launches


def test_placement_says_where_an_array_is() -> None:
    values = np.zeros((3, 2))
    assert cuda.placement(values, FakeGPUArray) == cuda.HOST  # (NumPy has __dlpack__ too: on the CPU)
    assert cuda.placement([[0.0, 1.0]], FakeGPUArray) == cuda.HOST
    assert cuda.placement(values.view(FakeGPUArray), FakeGPUArray) == cuda.CUPY
    assert cuda.placement(DLPackOnGPU(values), FakeGPUArray) == cuda.DLPACK
    assert cuda.placement(InterfaceOnGPU(values), FakeGPUArray) == cuda.INTERFACE

    class CPUTensor(DLPackOnGPU):
        def __dlpack_device__(self) -> tuple[int, int]:
            return (1, 0)

        def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
            return self.values

    class GradTensor:  # PyTorch's tensor that requires grad refuses the interface
        @property
        def __cuda_array_interface__(self) -> Any:
            raise RuntimeError("requires grad")

    assert cuda.placement(CPUTensor(values), FakeGPUArray) == cuda.HOST
    assert cuda.placement(GradTensor(), FakeGPUArray) == cuda.HOST
    fake = FakeCupy()
    on, there = cuda.to_device(CPUTensor(values), fake, np.float32)
    assert not there and isinstance(on, FakeGPUArray) and on.dtype == np.float32 and len(fake.uploads) == 1


def test_device_arrays_stay_on_the_device_and_agree_with_the_c() -> None:
    gpu, fake, dyn, launches = _cuda_dynamics()
    rng = np.random.default_rng(3)
    q, qd, qdd = (rng.uniform(-2, 2, (7, 2)) for _ in range(3))
    gpu.constants(PARAMS)  # (k: computed on the GPU once per parameter values, and kept on both sides)
    before, uploaded = FakeGPUArray.downloads, len(fake.uploads)
    tau = gpu.inverse_dynamics(q.view(FakeGPUArray), DLPackOnGPU(qd), InterfaceOnGPU(qdd), params=PARAMS)
    assert type(tau) is FakeGPUArray and tau.shape == (7, 2)
    assert np.array_equal(np.asarray(tau), dyn.inverse_dynamics(q, qd, qdd, params=PARAMS))  # (the same C)
    assert FakeGPUArray.downloads == before  # nothing came back to the host
    assert len(fake.uploads) == uploaded + 1 and len(fake.dlpack) == 1  # (k went in once, kept there)
    M = gpu.mass_matrix(q[0].view(FakeGPUArray), params=PARAMS)  # one state
    assert type(M) is FakeGPUArray and np.array_equal(np.asarray(M), dyn.mass_matrix(q[0], params=PARAMS))
    mixed = gpu.forward_dynamics(q.view(FakeGPUArray), qd, tau, params=PARAMS)  # (qd on the host: copied in)
    assert type(mixed) is FakeGPUArray and np.allclose(np.asarray(mixed), qdd, rtol=1e-12, atol=1e-12)
    parts = gpu.forward_dynamics_derivatives(q.view(FakeGPUArray), qd.view(FakeGPUArray), tau, params=PARAMS)
    for part, expected in zip(parts, dyn.forward_dynamics_derivatives(q, qd, np.asarray(tau), params=PARAMS),
                              strict=True):
        assert type(part) is FakeGPUArray and np.array_equal(np.asarray(part), expected)
    out = np.empty((7, 2)).view(FakeGPUArray)
    assert gpu.inverse_dynamics(q.view(FakeGPUArray), qd.view(FakeGPUArray), qdd.view(FakeGPUArray), params=PARAMS,
                                out=out) is out
    assert np.array_equal(np.asarray(out), np.asarray(tau)) and FakeGPUArray.downloads == before
    device_q = q.view(FakeGPUArray)
    with pytest.raises(ValueError, match="overlap"):
        gpu.inverse_dynamics(device_q, qd.view(FakeGPUArray), qdd.view(FakeGPUArray), params=PARAMS, out=device_q)
    with pytest.raises(ValueError, match="CuPy float64 array of shape"):
        gpu.inverse_dynamics(device_q, qd, qdd, params=PARAMS, out=np.empty((7, 2)))
    assert {dtype for _, dtype in launches} == {"float64"}


def test_host_arrays_are_copied_in_and_out() -> None:
    gpu, _, dyn, _ = _cuda_dynamics()
    rng = np.random.default_rng(4)
    q, qd, qdd = (rng.uniform(-2, 2, (5, 2)) for _ in range(3))
    tau = gpu.inverse_dynamics(q, qd, qdd, params=PARAMS)
    assert type(tau) is np.ndarray and np.array_equal(tau, dyn.inverse_dynamics(q, qd, qdd, params=PARAMS))
    one = gpu.inverse_dynamics(q[0].tolist(), qd[0], qdd[0], params=PARAMS)
    assert type(one) is np.ndarray and one.shape == (2,) and np.array_equal(one, tau[0])
    out = np.empty((5, 2, 2))
    assert gpu.mass_matrix(q, params=PARAMS, out=out) is out
    assert np.array_equal(out, dyn.mass_matrix(q, params=PARAMS))
    with pytest.raises(ValueError, match=r"joint arrays .* must have shape"):
        gpu.mass_matrix(np.zeros((5, 3)), params=PARAMS)
    with pytest.raises(ValueError, match="was not generated"):
        gpu.gravity(q, params=PARAMS)


def test_fp32_casts_every_array_and_gives_float32() -> None:
    gpu, _, dyn, launches = _cuda_dynamics("fp32")
    rng = np.random.default_rng(5)
    q, qd, qdd = (rng.uniform(-2, 2, (6, 2)) for _ in range(3))
    on_device = gpu.inverse_dynamics(q.view(FakeGPUArray), qd.view(FakeGPUArray), qdd, params=PARAMS)
    on_host = gpu.inverse_dynamics(q, qd, qdd, params=PARAMS)
    reference = dyn.inverse_dynamics(q, qd, qdd, params=PARAMS)
    for result in (on_device, on_host):
        assert result.dtype == np.float32
        assert np.allclose(result, reference, rtol=1e-5, atol=1e-5 * np.abs(reference).max())
    assert type(on_device) is FakeGPUArray and type(on_host) is np.ndarray
    assert {dtype for _, dtype in launches} == {"float32"}
    with pytest.raises(ValueError, match="float32 array"):
        gpu.inverse_dynamics(q, qd, qdd, params=PARAMS, out=np.empty((6, 2)))


@needs_nvrtc
@pytest.mark.parametrize("precision", ["fp64", "fp32"])
def test_rd_compile_cuda_builds_loads_and_caches_the_ptx(precision: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """rd.compile(robot, backend="cuda", precision=...) with CuPy stood in for (the PTX really built by NVRTC, kept in
    the cache under the precision's names, found there again), its kernels by the C backend."""
    robot, spec, dyn = _pendulum()
    launches: list[tuple[str, str]] = []
    fake = FakeCupy(_c_kernels(dyn, spec, launches))
    monkeypatch.setattr(cuda, "require_gpu", lambda: (fake, "compute_80"))
    gpu = rd.compile(robot, outputs=DEVICE_OUTPUTS, backend="cuda", precision=precision, cache=tmp_path)
    assert isinstance(gpu, cuda.CudaDynamics) and gpu.precision == precision and gpu.parameters == dyn.parameters
    (entry,) = tmp_path.iterdir()
    stem = cuda_file(spec.name, precision).removesuffix(".cu")
    ptx = (entry / f"{stem}.ptx").read_text()
    assert ".entry double_pendulum_inverse_dynamics_kernel(" in ptx and ((".f32" in ptx) == (precision == "fp32"))
    q = np.random.default_rng(6).uniform(-1, 1, (4, 2))
    tau = gpu.inverse_dynamics(q.view(FakeGPUArray), q, q, params=PARAMS)
    assert type(tau) is FakeGPUArray and np.allclose(tau, dyn.inverse_dynamics(q, q, q, params=PARAMS), rtol=1e-5)
    again = rd.compile(robot, outputs=DEVICE_OUTPUTS, backend="cuda", precision=precision, cache=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [entry.name] and isinstance(again, cuda.CudaDynamics)


def test_precision_is_the_cuda_backends_only() -> None:
    robot = rd.load("two_link_fu")
    with pytest.raises(ValueError, match="precision='fp32' is the CUDA kernels' only"):
        rd.compile(robot, outputs=["tau"], backend="numpy", precision="fp32")
    with pytest.raises(ValueError, match="unknown precision 'fp16'"):
        rd.compile(robot, outputs=["tau"], backend="cuda", precision="fp16")
    from robodyn.runtime import backends

    assert backends.RECORDS["cuda-fp32"].files("arm") == ["arm_fp32.cu", "arm_fp32.ptx"]
    assert "cuda-fp32" not in backends.BACKENDS

"""The CUDA kernels (robodyn.codegen.cuda), checked without a GPU: every kernel of the PUMA, the Panda and a
20-joint chain compiles to PTX with NVRTC (no message at all: a warning fails) and assembles with ptxas for sm_80
and sm_90 (warnings as errors), in fp64 and fp32; the fp32 source holds no double-precision literal or function;
and the one-state routines, built as host C99 by the C compiler, agree with the C backend to 1e-13 (fp64) at random
states. Skipped where NVRTC or ptxas (the ``cuda`` extra) is missing. A GPU run is a benchmark
(benchmarks/cuda.py)."""

from __future__ import annotations

import ctypes
import re
import subprocess
import warnings
from functools import cache
from pathlib import Path

import numpy as np
import pytest

import robodyn as rd
from robodyn import codegen
from robodyn.codegen.cuda import CudaEmitter, cuda_file
from robodyn.runtime import cuda
from robodyn.runtime.toolchain import CompileError, find_compiler
from tests.conftest import random_robot

ALL = ("tau", "M", "h", "bias", "G", "forward", "dtau", "dqdd")
#: The 20-joint chain's outputs (its derivative programs take long to build and are not asked for).
CHAIN = ("tau", "M", "forward")
ROBOTS = ("puma560", "panda", "chain20")

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
            if routine.name == "forward_dynamics":  # the normwise backward error of the solve M qdd = tau - bias:
                M = dyn.mass_matrix(arrays[0].astype(float))  # |M dqdd| / (|M| |qdd|) (cond(M) of the 20-joint
                scale *= float(np.abs(M).sum(axis=1).max())  # chain, up to 4e4, amplifies the one-ulp sines and
                out = M @ out.astype(float) - M @ reference[s] + reference[s]  # cosines into qdd: 4e-13)
            worst = max(worst, float(np.abs(out - reference[s]).max()) / scale)
    return worst


@needs_nvrtc
@pytest.mark.parametrize("label", [
    "puma560",
    pytest.param("panda", marks=pytest.mark.slow),  # (the Panda's C with its derivatives compiles in about 25 s)
    pytest.param("chain20", marks=pytest.mark.slow),
])
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

"""CUDA: one file of kernels per robot, the C emitter's statements on one state per thread.

For a robot ``NAME`` (sanitised) and each routine of the spec, ``NAME.cu`` (fp64) or ``NAME_fp32.cu`` (fp32) holds

    NAME_FUNCTION void NAME_<routine>(const double *k, const double *q, ..., double *tau);   /* one state */
    extern "C" __global__ void NAME_<routine>_kernel(const double *k, const double *q, ..., double *tau,
                                                     unsigned long long n_states);
    extern "C" __global__ void NAME_constants_kernel(const double *params, double *k);          /* one thread */

(``float`` throughout for fp32). The one-state routine is the straight-line code of the C emitter
(:class:`~robodyn.codegen.c.CEmitter`'s loads, assignments and stores, printed by the same printer: for fp32 with
sympy's ``float32`` type alias, so that literals carry the ``F`` suffix and the math functions are ``sinf``,
``cosf``, ``sqrtf``); each kernel runs it on state ``s`` of a grid-stride loop over ``n_states`` states stored
one after the other, as the C's batch routines take them (row-major (N, n), (N, n, n), (N, 2, n, n)...), so one
thread computes one state, whatever the grid. ``k`` (the constants) is read by every thread.

Under ``__CUDACC__`` (nvcc, NVRTC) the one-state routines are ``static __device__ __forceinline__``; compiled as
C99 by a host compiler (``cc -std=c99 -x c NAME.cu``) the kernels are left out and the one-state routines are
ordinary external functions with ``<math.h>``: the suite checks them against the C backend on the host, and
compiles the kernels to PTX with NVRTC (:mod:`robodyn.runtime.cuda`), which needs no GPU.

What the C's batch routines do beyond the straight-line code is left out: the sines and cosines come from
CUDA's ``sin`` and ``cos`` (``sinf``, ``cosf``), a sum angle such as ``q2 + q3`` is taken as its rounded sum
(the C composes it by angle addition, which matters beyond about 1e8 rad), and there are no chunks or
non-temporal stores.
"""

from __future__ import annotations

from typing import Any

import sympy as sp
from sympy.codegen.ast import float32, real
from sympy.printing.c import C99CodePrinter

from robodyn.codegen.base import PRINTER_SETTINGS, join
from robodyn.codegen.c import CEmitter, _Printer
from robodyn.codegen.spec import ModuleSpec, Routine

#: The precisions of the kernels: the C's ``double``, or ``float``.
PRECISIONS = ("fp64", "fp32")
#: The CUDA type of each precision.
SCALARS = {"fp64": "double", "fp32": "float"}
#: The type of the state count and index: ``size_t`` needs a header (NVRTC has none by default).
INDEX = "unsigned long long"


class _CudaPrinter(_Printer):
    """The C emitter's printer; for fp32 sympy's float32 literals and functions, and pi as a float literal."""

    def __init__(self, settings: dict[str, Any], suffix: str) -> None:
        super().__init__(settings)
        self.suffix = suffix

    def _print_Pi(self, expr: sp.Expr) -> str:
        return super()._print_Pi(expr) + self.suffix

    # the C's sines and cosines of precomputed angles do not apply: sympy's math functions (sinf, cosf in fp32)
    _print_sin = C99CodePrinter._print_sin
    _print_cos = C99CodePrinter._print_cos


class CudaEmitter(CEmitter):
    """The kernels of a spec in ``precision`` (``"fp64"`` or ``"fp32"``): see the module."""

    def __init__(self, precision: str = "fp64") -> None:
        if precision not in PRECISIONS:
            raise ValueError(f"unknown precision {precision!r}; choose from {', '.join(PRECISIONS)}")
        self.precision = precision
        self.scalar = SCALARS[precision]
        super().__init__()

    def make_printer(self) -> _CudaPrinter:
        if self.precision == "fp32":
            return _CudaPrinter({**PRINTER_SETTINGS, "type_aliases": {real: float32}}, "F")
        return _CudaPrinter(dict(PRINTER_SETTINGS), "")

    # -- frame ------------------------------------------------------------------------------------------
    def signature(self, spec: ModuleSpec, routine: Routine, batch: bool = False,  # type: ignore[override]
                  restrict: bool = False) -> str:
        """The one-state routine (``batch`` and ``restrict`` are the C's: its pointers are always restrict)."""
        pointer = f"*{spec.name.upper()}_RESTRICT "
        args = [f"const {self.scalar} {pointer}{a.name}" for a in routine.inputs]
        args.append(f"{self.scalar} {pointer}{routine.output.name}")
        return f"{spec.name.upper()}_FUNCTION void {spec.name}_{routine.name}({', '.join(args)})"

    def kernel(self, spec: ModuleSpec, routine: Routine) -> list[str]:
        """The kernel of ``routine``: its one-state routine on every state of a grid-stride loop (constants: one
        thread)."""
        pointer = "*__restrict__ "
        args = [f"const {self.scalar} {pointer}{a.name}" for a in routine.inputs]
        args.append(f"{self.scalar} {pointer}{routine.output.name}")
        name = kernel_name(spec.name, routine.name)
        if not routine.batched:
            call = f"{spec.name}_{routine.name}({', '.join(a.name for a in routine.arrays)});"
            return [
                *self.block_comment([f"{routine.name} on one thread (launch one block of one thread)."]),
                f'extern "C" __global__ void {name}({", ".join(args)})',
                "{",
                self.indent + "if (blockIdx.x == 0 && threadIdx.x == 0) {",
                self.indent * 2 + call,
                self.indent + "}",
                "}",
            ]
        offsets = [a.name if a.name == "k" else f"{a.name} + {a.size}ull * s" for a in routine.arrays]
        return [
            *self.block_comment([f"{routine.name} for n_states states stored one after the other: one thread per "
                                 "state (a grid-stride loop: any grid covers them)."]),
            f'extern "C" __global__ void {name}({", ".join([*args, f"{INDEX} n_states"])})',
            "{",
            *self.indented([
                f"const {INDEX} stride = ({INDEX})blockDim.x * gridDim.x;",
                f"for ({INDEX} s = ({INDEX})blockIdx.x * blockDim.x + threadIdx.x; s < n_states; s += stride) {{",
                self.indent + f"{spec.name}_{routine.name}({', '.join(offsets)});",
                "}",
            ]),
            "}",
        ]

    # -- files ------------------------------------------------------------------------------------------
    def preamble(self, spec: ModuleSpec) -> list[str]:
        macro = spec.name.upper()
        return [
            "#if defined(__CUDACC__)",
            f"#define {macro}_FUNCTION static __device__ __forceinline__",
            f"#define {macro}_RESTRICT __restrict__",
            "#else /* host C99: the one-state routines only, external (the kernels are left out) */",
            "#include <math.h>",
            f"#define {macro}_FUNCTION",
            f"#define {macro}_RESTRICT restrict",
            "#endif",
            "",
            f"#define {macro}_NUM_JOINTS {spec.n}",
            f"#define {macro}_NUM_PARAMETERS {len(spec.parameters)}",
            f"#define {macro}_NUM_CONSTANTS {spec.n_constants}",
        ]

    def source(self, spec: ModuleSpec) -> str:
        filename = cuda_file(spec.name, self.precision)
        lines = self.banner(spec, f"CUDA kernels ({self.precision}, {self.scalar})")
        lines[0] = f"{filename}: {lines[0]}"
        lines += [
            "Each kernel runs its one-state routine on every state of a grid-stride loop over n_states states",
            "stored one after the other ((N, n) row-major arrays, as the C's batch routines). Compiled as C99 by a",
            "host compiler (cc -std=c99 -x c), the one-state routines alone are built.",
        ]
        out = [*self.block_comment(lines), "", *self.preamble(spec), ""]
        for routine in spec.routines:
            out += [*self.function(spec, routine), ""]
        out += ["#if defined(__CUDACC__)", ""]
        for routine in spec.routines:
            out += [*self.kernel(spec, routine), ""]
        out += ["#endif /* __CUDACC__ */"]
        return join(out)

    def files(self, spec: ModuleSpec) -> dict[str, str]:
        return {cuda_file(spec.name, self.precision): self.source(spec)}


def cuda_file(name: str, precision: str = "fp64") -> str:
    """The file name of the kernels of module ``name`` in ``precision``."""
    return f"{name}.cu" if precision == "fp64" else f"{name}_{precision}.cu"


def kernel_name(name: str, routine: str) -> str:
    """The kernel of ``routine`` (``constants``, ``inverse_dynamics``, ...) in the module ``name``."""
    return f"{name}_{routine}_kernel"


def generate_cuda(spec: ModuleSpec, precision: str = "fp64") -> dict[str, str]:
    """File name -> text of the kernels of ``spec`` in ``precision`` (``"fp64"``, ``"fp32"``)."""
    return CudaEmitter(precision).files(spec)

"""NumPy: a Python module per robot, printed with sympy's ``NumPyPrinter``.

Each routine's straight-line code runs on whole columns (``q[..., i]`` of shape (N,)), so a call
evaluates a batch at NumPy speed without a Python loop over states; large batches are cut into blocks
of ``BLOCK`` states so that the temporaries stay in cache. Depends on NumPy only.
"""

from __future__ import annotations

from sympy.printing.numpy import NumPyPrinter

from robodyn.codegen.base import PRINTER_SETTINGS
from robodyn.codegen.python import PythonEmitter
from robodyn.codegen.spec import Routine

BLOCK = 2048

PRELUDE = f'''import numpy

BLOCK = {BLOCK}  # states per block: the temporaries of one block stay in cache


def _assemble(entries, arrays, shape):
    lead = numpy.broadcast_shapes(*(numpy.shape(a)[:-1] for a in arrays))
    out = numpy.empty(lead + (len(entries),), order="F")  # each entry a contiguous column
    for i, entry in enumerate(entries):
        out[..., i] = entry
    return numpy.ascontiguousarray(out.reshape(lead + shape))


def _blocked(function, k, *arrays):
    arrays = [numpy.asarray(a, dtype=float) for a in arrays]
    for a in arrays:
        if a.ndim not in (1, 2) or a.shape[-1] != JOINTS:
            raise ValueError(f"joint arrays must have shape ({{JOINTS}},) or (N, {{JOINTS}}), got {{a.shape}}")
    arrays = [numpy.asfortranarray(a) for a in numpy.broadcast_arrays(*arrays)]  # contiguous columns
    k = numpy.asarray(k, dtype=float)
    if arrays[0].ndim == 1 or len(arrays[0]) <= BLOCK:
        return function(k, *arrays)
    blocks = [function(k, *(a[i : i + BLOCK] for a in arrays)) for i in range(0, len(arrays[0]), BLOCK)]
    return numpy.concatenate(blocks)

'''


class NumPyEmitter(PythonEmitter):
    array_module = "numpy"
    flavour = "NumPy"

    def make_printer(self) -> NumPyPrinter:
        return NumPyPrinter(PRINTER_SETTINGS)

    def prelude(self) -> list[str]:
        return PRELUDE.splitlines()

    def routine(self, routine: Routine) -> list[str]:
        args = ", ".join(a.name for a in routine.inputs)
        wrapper = [
            f"def {routine.name}({args}):",
            *self.indented([*self.docstring(routine), f"return _blocked(_{routine.name}, {args})"]),
            "",
            "",
        ]
        return self.function(f"_{routine.name}", routine, []) + wrapper

"""JAX: a Python module per robot, printed with sympy's ``JaxPrinter``.

The same straight-line code as the NumPy module on ``jax.numpy`` columns: pure functions of arrays
(no in-place updates, no Python control flow on values), so ``jax.jit``, ``jax.vmap`` and ``jax.grad``
apply, on the CPU or a GPU. They follow the dtype of their inputs: enable ``jax_enable_x64`` for
double precision. Depends on JAX only (``pip install robodyn[jax]``).
"""

from __future__ import annotations

from sympy.printing.numpy import JaxPrinter

from robodyn.codegen.base import PRINTER_SETTINGS
from robodyn.codegen.python import PythonEmitter
from robodyn.codegen.spec import Routine

PRELUDE = '''import jax
import jax.numpy


def _assemble(entries, arrays, shape):
    lead = jax.numpy.broadcast_shapes(*(jax.numpy.shape(a)[:-1] for a in arrays))
    dtype = jax.numpy.result_type(*arrays, float)
    if not entries:
        return jax.numpy.zeros(lead + shape, dtype=dtype)
    columns = [jax.numpy.broadcast_to(jax.numpy.asarray(e, dtype=dtype), lead) for e in entries]
    return jax.numpy.stack(columns, axis=-1).reshape(lead + shape)

'''


class JaxEmitter(PythonEmitter):
    array_module = "jax.numpy"
    flavour = "JAX"
    suffix = "_jax"

    def make_printer(self) -> JaxPrinter:
        return JaxPrinter(PRINTER_SETTINGS)

    def prelude(self) -> list[str]:
        return PRELUDE.splitlines()

    def routine(self, routine: Routine) -> list[str]:
        convert = [f"{a.name} = jax.numpy.asarray({a.name})" for a in routine.inputs]
        return self.function(routine.name, routine, convert)

"""JAX: a Python module per robot, printed with sympy's ``JaxPrinter``.

The spec's straight-line code as ``jax.numpy`` expressions (sines and cosines included: XLA vectorises
them): pure functions of arrays
(no in-place updates, no Python control flow on values), so ``jax.jit``, ``jax.vmap`` and ``jax.grad``
apply, on the CPU or a GPU. They follow the dtype of their inputs: enable ``jax_enable_x64`` for
double precision. Inside, each array is turned joint axis first (``_rows``) and entries are read as
rows ``q[i]`` and results stacked along a first axis, which XLA compiles to code some twice as fast
as on the columns ``q[..., i]``; for batches, ``jax.jit`` the functions (as a whole: one XLA
computation). Depends on JAX only (``pip install robodyn[jax]``).

Sines and cosines are computed once per state. XLA's CPU fusion copies a shared value that it deems
cheap into every fused loop that reads it, and it deems ``sin`` and ``cos`` cheap, so a robot's
sines and cosines were computed again in every loop of a routine: 108 for the Panda's inverse
dynamics where the program has 12, 320 in its forward dynamics. XLA never copies a value it deems
expensive, a float division among them, so each sine and cosine is divided by ``_one``, an array of
ones that XLA cannot fold to the constant 1 (``_unit``: it depends on an input; ``x / 1`` is exact
for every x, NaN and infinities included). This takes the Panda's forward dynamics on the CPU from
1.58 to 0.44 us per state (10^5 states, 2 cores). Measured on the CPU only: on a GPU the sines and
cosines may now go through device memory instead of being recomputed in registers. The derivatives that
``jax.jvp`` or ``jax.grad`` build (the cosine in the derivative of ``sin(x) / _one``) are not divided, so
XLA may copy those again.
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.numpy import JaxPrinter

from robodyn.codegen.base import PRINTER_SETTINGS
from robodyn.codegen.python import PythonEmitter
from robodyn.codegen.spec import Load, Routine

PRELUDE = '''import jax
import jax.numpy


def _unit(a):
    """Ones of a's shape that XLA cannot fold to the constant 1 (whatever a holds, NaN included):
    dividing a value by them makes XLA compute it once, not again in each loop that reads it."""
    return jax.numpy.fmax(0.0 * a, 1.0)


def _rows(a):
    """a with its last (joint) axis first, so that a[i] is entry i over the batch: XLA runs the
    straight-line code on these rows some twice as fast as on the columns a[..., i]."""
    return jax.numpy.moveaxis(jax.numpy.asarray(a), -1, 0)


def _assemble(entries, arrays, shape):
    lead = jax.numpy.broadcast_shapes(*(jax.numpy.shape(a)[1:] for a in arrays))
    dtype = jax.numpy.result_type(*arrays, float)
    if not entries:
        return jax.numpy.zeros(lead + shape, dtype=dtype)
    columns = [jax.numpy.broadcast_to(jax.numpy.asarray(e, dtype=dtype), lead) for e in entries]
    return jax.numpy.moveaxis(jax.numpy.stack(columns), 0, -1).reshape(lead + shape)

'''


class JaxEmitter(PythonEmitter):
    array_module = "jax.numpy"
    flavour = "JAX"
    suffix = "_jax"

    def make_printer(self) -> JaxPrinter:
        return JaxPrinter(PRINTER_SETTINGS)

    def prelude(self) -> list[str]:
        return PRELUDE.splitlines()

    def load(self, load: Load) -> str:
        return f"{load.local} = {load.array}[{load.index}]"  # (the arrays have their joint axis first)

    def after_loads(self, routine: Routine) -> list[str]:
        if not any(_computed_once(expr) for _, expr in routine.assignments):
            return []
        rows = [load.local for load in routine.loads if load.array != "k"]
        # (every run-time routine loads a joint array; without one, x / 1.0 is folded away by XLA: still exact)
        return [f"_one = _unit({rows[0]})" if rows else "_one = 1.0"]

    def assign(self, name: str, expr: sp.Expr) -> str:
        return f"{name} = {self.expr(expr)} / _one" if _computed_once(expr) else super().assign(name, expr)

    def constants(self, routine: Routine) -> list[str]:
        convert = ["params = _rows(jax.numpy.asarray(params, dtype=float))"]
        return self.function("constants", routine, convert)

    def routine(self, routine: Routine) -> list[str]:
        convert = [f"{a.name} = _rows({a.name})" for a in routine.inputs]
        return self.function(routine.name, routine, convert)


def _computed_once(expr: sp.Expr) -> bool:
    """Whether an assignment's value is one that XLA would compute again in each loop reading it."""
    return isinstance(expr, (sp.sin, sp.cos))

"""Fortran 90: one module per robot, printed with sympy's ``FCodePrinter`` (free form).

Module ``NAME`` holds the same routines as the C code, as subroutines with explicit-shape arrays
(``q(n)``, ``M(n, n)``; M is symmetric, so its memory layout is also C's row-major; the stacked derivatives,
C's (2, n, n), are declared ``dtau(n, n, 2)`` and indexed in reverse, which is C's layout), and the batch
twins take ``q(n, n_states)``: one state per column, which is C's (N, n) row-major layout. Each
subroutine is also given a C binding label (``bind(C, name="NAME_inverse_dynamics")``, from
Fortran 2003's ``iso_c_binding``, as every current compiler has it), so the compiled object has
exactly the C code's interface and can be loaded the same way. ``n_states`` is passed by value.
"""

from __future__ import annotations

from typing import Any

import sympy as sp
from sympy.printing.fortran import FCodePrinter

from robodyn.codegen.base import PRINTER_SETTINGS, Emitter, join
from robodyn.codegen.spec import Array, Load, ModuleSpec, Routine

DECLARATIONS_PER_LINE = 8


class _Printer(FCodePrinter):
    """FCodePrinter with sign(x) as two comparisons (sympy's ``x == 0d0`` is an equality of reals, which
    gfortran -Wall flags)."""

    def _print_sign(self, expr: Any) -> str:
        x = self._print(expr.args[0])
        return f"merge(1d0, merge(-1d0, 0d0, {x} < 0d0), {x} > 0d0)"


class FortranEmitter(Emitter):
    comment_mark = "!"
    indent = "  "

    def make_printer(self) -> FCodePrinter:
        return _Printer({**PRINTER_SETTINGS, "source_format": "free", "standard": 95, "name_mangling": False})

    # -- statements ---------------------------------------------------------------------------------
    def load(self, load: Load) -> str:
        return f"{load.local} = {load.array}({load.index + 1})"

    def assign(self, name: str, expr: sp.Expr) -> str:
        return self.printer.doprint(expr, assign_to=sp.Symbol(name))

    def store(self, routine: Routine, index: int, expr: sp.Expr) -> str:
        array = routine.output
        if len(array.shape) == 2:  # (i, j) of the row-major entry i*n + j
            i, j = divmod(index, array.shape[1])
            target = f"{array.name}({i + 1}, {j + 1})"
        elif len(array.shape) == 3:  # (j, i, s) of C's entry [s][i][j]: the same memory
            s, rest = divmod(index, array.shape[1] * array.shape[2])
            i, j = divmod(rest, array.shape[2])
            target = f"{array.name}({j + 1}, {i + 1}, {s + 1})"
        else:
            target = f"{array.name}({index + 1})"
        return self.printer.doprint(expr, assign_to=sp.Symbol(target))

    # -- frame ------------------------------------------------------------------------------------------
    @staticmethod
    def _extent(array: Array, batch: bool) -> str:
        if array.name in ("k", "params"):
            return "(*)"  # may be empty
        shape = array.shape[::-1] if len(array.shape) == 3 else array.shape  # C's layout (see store)
        dims = [str(d) for d in shape] + (["n_states"] if batch else [])
        return f"({', '.join(dims)})"

    def _declare(self, routine: Routine, batch: bool) -> list[str]:
        lines = []
        if batch:
            lines.append("integer(c_size_t), value, intent(in) :: n_states")
        for array in routine.inputs:
            lines.append(f"real(c_double), intent(in) :: {array.name}{self._extent(array, batch)}")
        out = routine.output
        lines.append(f"real(c_double), intent(out) :: {out.name}{self._extent(out, batch)}")
        return lines

    def _locals(self, routine: Routine) -> list[str]:
        names = [load.local for load in routine.loads] + [name for name, _ in routine.assignments]
        return [
            "real(c_double) :: " + ", ".join(names[i : i + DECLARATIONS_PER_LINE])
            for i in range(0, len(names), DECLARATIONS_PER_LINE)
        ]

    def _subroutine(self, spec: ModuleSpec, routine: Routine, batch: bool, body: list[str]) -> list[str]:
        name = routine.name + ("_batch" if batch else "")
        args = [a.name for a in routine.arrays] + (["n_states"] if batch else [])
        return [
            f"subroutine {name}({', '.join(args)}) &",
            f'    bind(C, name="{spec.name}_{name}")',
            *self.indented(self._declare(routine, batch) + body),
            f"end subroutine {name}",
        ]

    @staticmethod
    def _unused(routine: Routine) -> list[str]:
        """``if (.false.)`` assignments naming the arguments that the C interface has but the routine
        does not read (k of a numeric robot, params without parameters), and an output it never sets:
        ``gfortran -Wall -Werror`` accepts the routine, and no code is generated for them."""
        names = routine.unused_inputs()
        if not names and routine.stores:
            return []
        out = routine.output
        target = f"{out.name}({', '.join(['1'] * len(out.shape))})"
        sources = [f"{name}(1)" for name in names] or ["0.0_c_double"]
        return ["! (never run: the arguments of the C interface that this routine does not use)",
                *[f"if (.false.) {target} = {source}" for source in sources]]

    def function(self, spec: ModuleSpec, routine: Routine) -> list[str]:
        body = self._locals(routine) + self._unused(routine) + self.statements(routine)
        return self.comment(self.routine_doc(routine)) + self._subroutine(spec, routine, False, body)

    def batch(self, spec: ModuleSpec, routine: Routine) -> list[str]:
        def column(array: Array) -> str:
            return array.name if array.name == "k" else f"{array.name}({', '.join([':'] * len(array.shape))}, i)"

        body = [
            "integer(c_size_t) :: i",
            "do i = 1, n_states",
            f"  call {routine.name}({', '.join(column(a) for a in routine.arrays)})",
            "end do",
        ]
        doc = self.comment([f"{routine.name} for n_states states, one per column."])
        return doc + self._subroutine(spec, routine, True, body)

    def files(self, spec: ModuleSpec) -> dict[str, str]:
        public = [r.name + suffix for r in spec.routines for suffix in (("", "_batch") if r.batched else ("",))]
        doc = self.banner(spec, "Fortran dynamics routines")
        doc[0] = f"{spec.name}.f90: {doc[0]}"
        doc += ["Batch routines take q(n, n_states): one state per column. params(i + 1) holds params[i]."]
        lines = self.comment(doc)
        lines += [
            f"module {spec.name}",
            "  use, intrinsic :: iso_c_binding, only: c_double, c_size_t",
            "  implicit none",
            "  private",
            f"  integer, parameter, public :: num_joints = {spec.n}",
            f"  integer, parameter, public :: num_parameters = {len(spec.parameters)}",
            f"  integer, parameter, public :: num_constants = {spec.n_constants}",
            *[f"  public :: {name}" for name in public],
            "contains",
            "",
        ]
        for routine in spec.routines:
            lines += [*self.indented(self.function(spec, routine)), ""]
            if routine.batched:
                lines += [*self.indented(self.batch(spec, routine)), ""]
        lines.append(f"end module {spec.name}")
        return {f"{spec.name}.f90": join(lines)}

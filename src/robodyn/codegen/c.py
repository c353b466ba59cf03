"""C99: a header and a source file per robot, printed with sympy's ``C99CodePrinter``.

For a robot ``NAME`` (sanitised), every routine of the spec becomes::

    void NAME_constants(const double *params, double *k);
    void NAME_inverse_dynamics(const double *k, const double *q, const double *qd, const double *qdd,
                               double *tau);
    void NAME_mass_matrix(const double *k, const double *q, double *M);           /* n*n, row-major */
    void NAME_coriolis(const double *k, const double *q, const double *qd, double *h);
    void NAME_bias_forces(const double *k, const double *q, const double *qd, double *bias);
    void NAME_gravity(const double *k, const double *q, double *G);
    void NAME_forward_dynamics(const double *k, const double *q, const double *qd, const double *tau,
                               double *qdd);

and each run-time routine has a ``NAME_<routine>_batch`` twin with the same arguments and a final
``size_t n_states``: the arrays then hold ``n_states`` states one after the other (row-major (N, n)
and (N, n, n)), and the loop runs in C. Strict C99 (``-std=c99 -Wall -Wextra -Werror -pedantic``
compiles it), only ``<math.h>`` and ``<stddef.h>``.
"""

from __future__ import annotations

from sympy.printing.c import C99CodePrinter

from robodyn.codegen.base import PRINTER_SETTINGS, Emitter, join
from robodyn.codegen.spec import Load, ModuleSpec, Routine


class CEmitter(Emitter):
    comment_mark = " *"

    def make_printer(self) -> C99CodePrinter:
        return C99CodePrinter(PRINTER_SETTINGS)

    # -- statements ---------------------------------------------------------------------------------
    def load(self, load: Load) -> str:
        return f"const double {load.local} = {load.array}[{load.index}];"

    def assign(self, name: str, expr: object) -> str:
        return f"const double {name} = {self.expr(expr)};"

    def store(self, routine: Routine, index: int, expr: object) -> str:
        return f"{routine.output.name}[{index}] = {self.expr(expr)};"

    # -- frame ------------------------------------------------------------------------------------------
    @staticmethod
    def signature(spec: ModuleSpec, routine: Routine, batch: bool = False) -> str:
        args = [f"const double *{a.name}" for a in routine.inputs] + [f"double *{routine.output.name}"]
        if batch:
            args.append("size_t n_states")
        suffix = "_batch" if batch else ""
        return f"void {spec.name}_{routine.name}{suffix}({', '.join(args)})"

    def block_comment(self, lines: list[str]) -> list[str]:
        return ["/*", *self.comment(lines), " */"]

    def function(self, spec: ModuleSpec, routine: Routine) -> list[str]:
        unused = [f"(void){name};" for name in routine.unused_inputs()]
        if not routine.stores:
            unused.append(f"(void){routine.output.name};")
        return [
            *self.block_comment(self.routine_doc(routine)),
            self.signature(spec, routine),
            "{",
            *self.indented(unused + self.statements(routine)),
            "}",
        ]

    def batch(self, spec: ModuleSpec, routine: Routine) -> list[str]:
        strides = [a.name if a.name == "k" else f"{a.name} + {a.size} * i" for a in routine.arrays]
        return [
            *self.block_comment([f"{routine.name} for n_states states stored one after the other."]),
            self.signature(spec, routine, batch=True),
            "{",
            self.indent + "size_t i;",
            self.indent + "for (i = 0; i < n_states; ++i) {",
            self.indent * 2 + f"{spec.name}_{routine.name}({', '.join(strides)});",
            self.indent + "}",
            "}",
        ]

    # -- files ------------------------------------------------------------------------------------------
    def file_comment(self, spec: ModuleSpec, filename: str) -> list[str]:
        lines = self.banner(spec, "C99 dynamics routines")
        lines[0] = f"{filename}: {lines[0]}"
        lines.append("A batch routine takes n_states states one after the other: (N, n) row-major arrays.")
        return self.block_comment(lines)

    def header(self, spec: ModuleSpec) -> str:
        macro = spec.name.upper()
        lines = self.file_comment(spec, f"{spec.name}.h")
        lines += [f"#ifndef ROBODYN_{macro}_H", f"#define ROBODYN_{macro}_H", "", "#include <stddef.h>", ""]
        lines += [
            f"#define {macro}_NUM_JOINTS {spec.n}",
            f"#define {macro}_NUM_PARAMETERS {len(spec.parameters)}",
            f"#define {macro}_NUM_CONSTANTS {spec.n_constants}",
            "",
            "#ifdef __cplusplus",
            'extern "C" {',
            "#endif",
            "",
        ]
        for routine in spec.routines:
            lines += self.block_comment(self.routine_doc(routine))
            lines.append(self.signature(spec, routine) + ";")
            if routine.batched:
                lines.append(self.signature(spec, routine, batch=True) + ";")
            lines.append("")
        lines += ["#ifdef __cplusplus", "}", "#endif", "", f"#endif /* ROBODYN_{macro}_H */"]
        return join(lines)

    def source(self, spec: ModuleSpec) -> str:
        lines = self.file_comment(spec, f"{spec.name}.c")
        lines += [f'#include "{spec.name}.h"', "", "#include <math.h>", ""]
        for routine in spec.routines:
            lines += [*self.function(spec, routine), ""]
            if routine.batched:
                lines += [*self.batch(spec, routine), ""]
        return join(lines)

    def files(self, spec: ModuleSpec) -> dict[str, str]:
        return {f"{spec.name}.h": self.header(spec), f"{spec.name}.c": self.source(spec)}

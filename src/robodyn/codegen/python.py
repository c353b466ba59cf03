"""The Python emitters' common frame (NumPy and JAX differ only in printer, helpers and wrappers).

A generated module has ``constants(params)`` and one function per routine, each taking
``k = constants(params)`` first and then joint arrays of shape ``(n,)`` or ``(N, n)``; the body is
straight-line array code on the columns ``q[..., i]``, so one call evaluates all N states at once.
Results have shape ``(..., n)``, or ``(..., n, n)`` for M. For a floating base (``spec.nq``) q has its own
length, ``NQ = nq`` (position, unit quaternion (x, y, z, w), joints; a spherical joint's unit quaternion in its
place), the other arrays n = nv.
"""

from __future__ import annotations

from abc import abstractmethod

import sympy as sp

from robodyn.codegen.base import Emitter, join
from robodyn.codegen.spec import Load, ModuleSpec, Routine


class PythonEmitter(Emitter):
    comment_mark = "#"
    #: The module that the printer qualifies functions with (``numpy`` or ``jax.numpy``).
    array_module: str = "numpy"
    #: What the module's docstring calls it.
    flavour: str = "NumPy"
    #: File name suffix (``NAME.py``, ``NAME_jax.py``).
    suffix: str = ""

    # -- statements ---------------------------------------------------------------------------------
    def load(self, load: Load) -> str:
        return f"{load.local} = {load.array}[..., {load.index}]"

    def assign(self, name: str, expr: sp.Expr) -> str:
        return f"{name} = {self.expr(expr)}"

    def store(self, routine: Routine, index: int, expr: sp.Expr) -> str:
        return f"{self.expr(expr)},"

    def statements(self, routine: Routine) -> list[str]:
        """Loads, assignments (each temporary deleted after its last use, so that a block's working
        set stays small: temporaries are whole arrays here), then ``return _assemble(...)``."""
        lines = [self.load(load) for load in routine.loads] + self.after_loads(routine)
        for name, expr, dead in _with_last_uses(routine):
            lines.append(self.assign(name, expr))
            if dead:
                lines.append(f"del {', '.join(dead)}")
        entries = [self.indent + self.store(routine, i, x) for i, x in enumerate(routine.stores)]
        arrays = ", ".join(a.name for a in routine.inputs if a.name != "k") + ","
        shape = ", ".join(str(d) for d in routine.output.shape) + ","
        return [*lines, "return _assemble((", *entries, f"), ({arrays}), ({shape}))"]

    def after_loads(self, routine: Routine) -> list[str]:
        """Lines between the loads and the assignments (none here)."""
        return []

    # -- frame ------------------------------------------------------------------------------------------
    def docstring(self, routine: Routine) -> list[str]:
        return ['"""' + self.routine_doc(routine)[0], "", self.routine_doc(routine)[1] + '"""']

    def function(self, name: str, routine: Routine, conversions: list[str]) -> list[str]:
        args = ", ".join(a.name for a in routine.inputs)
        return [f"def {name}({args}):", *self.indented(self.docstring(routine) + conversions
                                                           + self.statements(routine)), "", ""]

    def notes(self) -> list[str]:
        """More lines for the module's docstring."""
        return []

    @abstractmethod
    def prelude(self) -> list[str]:
        """Imports and the helpers ``_assemble`` (and whatever the wrappers use)."""

    @abstractmethod
    def routine(self, routine: Routine) -> list[str]:
        """The function(s) of one run-time routine."""

    def constants(self, routine: Routine) -> list[str]:
        convert = [f"params = {self.array_module}.asarray(params, dtype=float)"]
        return self.function("constants", routine, convert)

    def files(self, spec: ModuleSpec) -> dict[str, str]:
        doc = self.banner(spec, f"{self.flavour} dynamics routines")
        doc[0] = f"{spec.name}{self.suffix}: {doc[0]}"
        doc += ["", "Every function takes k = constants(params) first (params in the order above; an empty",
                "sequence for a numeric robot), then joint arrays of shape (n,) or (N, n), vectorised over N.",
                *self.notes()]
        lines = ['"""' + doc[0], *doc[1:], '"""', "", *self.prelude(), ""]
        lines += [
            f"NAME = {spec.robot!r}",
            f"JOINTS = {spec.n}",
            *([f"NQ = {spec.nq}  # the length of q ({_nq_reason(spec)}); qd, qdd, tau: JOINTS"]
              if spec.nq is not None else []),
            f"PARAMETERS = {tuple(spec.parameters)!r}",
            f"NUM_CONSTANTS = {spec.n_constants}",
            f"ROUTINES = {spec.kinds!r}",
            "",
            "",
        ]
        for routine in spec.routines:
            lines += self.constants(routine) if not routine.batched else self.routine(routine)
        return {f"{spec.name}{self.suffix}.py": join(lines)}


def _with_last_uses(routine: Routine) -> list[tuple[str, sp.Expr, list[str]]]:
    """(name, expr, temporaries whose last use is this assignment) for every assignment."""
    temporaries = {name for name, _ in routine.assignments}
    needed_at_end = set().union(*(map(str, x.free_symbols) for x in routine.stores)) if routine.stores else set()
    seen: set[str] = set(needed_at_end)
    out: list[tuple[str, sp.Expr, list[str]]] = []
    for name, expr in reversed(routine.assignments):
        used = sorted({str(s) for s in expr.free_symbols} & temporaries - seen)
        seen |= set(used)
        out.append((name, expr, used))
    return out[::-1]


def _nq_reason(spec: ModuleSpec) -> str:
    """What makes q longer than the other arrays: a floating base, spherical and planar joints."""
    return " and ".join(what for what, present in (("a floating base", spec.floating),
                                                   ("spherical joints", bool(spec.quaternions)),
                                                   ("planar joints", bool(spec.planar))) if present)

"""The part every emitter shares: routines cut from one straight-line Program.

Only the Program's interface is used (:func:`robodyn.program.build`: inputs, a parameter-only
constants block, a run-time body, named outputs), never a formulation, so a cheaper builder gives
cheaper code in every language at once. For one robot this module makes a :class:`ModuleSpec`:

- ``constants(params, k)``: the Program's constants block, computed once (the Macsyma appendix's
  first routine); parameters that the run-time code uses directly are copied into ``k``
  after the constants, so every run-time routine reads only ``k`` and the joint arrays;
- one run-time :class:`Routine` per requested output (:data:`KINDS`), each keeping only the body
  assignments its outputs need (dead code removed per routine, common subexpressions shared within);
- ``forward_dynamics``: the Program's own ``forward`` output, which :func:`robodyn.program.build` makes the
  cheaper way: M and the bias, then an unrolled square-root-free Cholesky (L D L^T) factorisation and the two
  triangular solves (:func:`robodyn.program.routes.ldlt_solve`; Featherstone's LTDL on a tree, exact zeros
  folded), or Featherstone's articulated-body algorithm (:mod:`robodyn.recursions.aba`, O(n): long chains).

Names are made safe for every language at once: joint inputs become ``q1..qn``, ``qd1..``,
``qdd1..`` (``tau1..`` for forward dynamics), parameters ``p0..``, constants ``k0..`` and temporaries
``t0..`` (lower case and unique regardless of case, for Fortran). Statements are kept short enough for
Fortran's continuation limit (long sums split, powers of compound bases hoisted), which changes no
operation count. Expressions are handed to the emitters as *unevaluated* sympy trees, so that
sympy's code printers print the Program's own structure (``sympy.sympify`` would re-evaluate, e.g.
distribute ``2*(a + b)`` into ``2*a + 2*b`` and change the count), in sympy's canonical order of terms
and factors (so the text does not depend on symengine's internal order; printers get ``order="none"``);
floating-point numbers carry 17 significant digits (they round-trip exactly) and small integer powers
are written as products.
"""

from __future__ import annotations

import builtins
import hashlib
import keyword
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import symengine as se
import sympy as sp

from robodyn.algebra import SeExpr, to_sympy
from robodyn.errors import ModelError, finite_constant
from robodyn.identification import base_parameters
from robodyn.model.expr import IDENTIFIER, check_name, check_parameter_name, shown, to_identifier
from robodyn.model.frames import check_frame_name
from robodyn.program import OUTPUTS, OperationCount, Program, build, count_operations
from robodyn.program.outputs import DEFAULT_KEYS, FRAME_OUTPUTS, KEYS, KINDS, PACKED, Kind, frame_output

#: Bump when the generated code changes for the same Program (part of the compile cache key).
GENERATOR_VERSION = "2"

#: Sums longer than this are split into partial sums, and statements larger than ``MAX_NODES``
#: expression nodes are cut into temporaries: Fortran allows 255 continuation lines per statement.
SUM_CHUNK = 24
MAX_NODES = 240
#: x**k for 2 <= |k| <= POW_LIMIT is written as a product (x*x*x), as the operation count charges it.
POW_LIMIT = 8


#: The routines (:class:`Kind`: name, ``--outputs`` key, the Program outputs each needs, its arguments, its summary),
#: ``--outputs`` key -> kind (``KEYS``), and the kinds generated when no ``outputs`` are named (``DEFAULT_KEYS``: all
#: but the derivatives) come from the one vocabulary, :mod:`robodyn.program.outputs`, and are re-exported here.


#: The output arrays of the frames' routines (:data:`~robodyn.program.outputs.FRAME_OUTPUTS`), and the shape of one
#: frame's entry in them (the routine's array stacks one per compiled frame).
FRAME_ARRAYS = {kind.output: kind for kind in KINDS if kind.key in FRAME_OUTPUTS}


def output_shape(name: str, n: int, frames: int = 1) -> tuple[int, ...]:
    """The shape of a routine's output array: (n, n) for M, (n(n+1)/2,) for its packed upper triangle, (2, n, n)
    and (3, n, n) for the stacked derivatives (each n x n row-major: [i, j] = d out_i / d in_j), (frames, 4, 4)
    for the frames' poses and
    (frames, 6, n) for their Jacobians (one per compiled frame, :attr:`ModuleSpec.frames`), (3,), (3, n), (6, n)
    and (6,) for a floating base's centroidal outputs, else (n,)."""
    if name in FRAME_ARRAYS:
        return (frames, 4, 4) if name == "pose" else (frames, 6, n)
    centroidal = {"com": (3,), "jcom": (3, n), "ag": (6, n), "dag_v": (6,)}  # (robodyn.program.centroidal)
    if name in centroidal:
        return centroidal[name]
    if name == "Mp":  # M's upper triangle, packed row by row (mass_matrix_packed)
        return (n * (n + 1) // 2,)
    stacked = {"M": (), "dtau": (2,), "dqdd": (3,)}
    return (*stacked[name], n, n) if name in stacked else (n,)


def kind_parts(kind: Kind, frames: Sequence[str] = ()) -> tuple[str, ...]:
    """The Program outputs a routine stores, in order: its ``parts``, or for a frame's routine its output of each
    frame of ``frames`` ("" the tool frame: :func:`~robodyn.program.outputs.frame_output`)."""
    if kind.key in FRAME_OUTPUTS:
        return tuple(frame_output(kind.key, frame) for frame in frames)
    return kind.parts
#: The summary of ``forward_dynamics`` when the Program's ``forward`` (articulated-body algorithm) is used.
ABA_SUMMARY = "qdd solving M(q) qdd = tau - bias(q, qd), by Featherstone's articulated-body algorithm"
#: Local-variable prefix and first index of each array's entries.
LOCALS: dict[str, tuple[str, int]] = {
    "q": ("q", 1), "qd": ("qd", 1), "qdd": ("qdd", 1), "tau": ("tau", 1), "k": ("k", 0), "params": ("p", 0),
}


@dataclass(frozen=True)
class Array:
    """A routine argument: a flat array of doubles (M is n x n, row-major)."""

    name: str
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        size = 1
        for extent in self.shape:
            size *= extent
        return size


@dataclass(frozen=True)
class Load:
    """``local = array[index]`` (0-based flat index)."""

    local: str
    array: str
    index: int


@dataclass(frozen=True)
class Routine:
    """A straight-line routine: loads, assignments to locals, then the output entries (flat)."""

    name: str
    summary: str
    inputs: tuple[Array, ...]
    output: Array
    loads: tuple[Load, ...]
    assignments: tuple[tuple[str, sp.Expr], ...]
    stores: tuple[sp.Expr, ...]
    count: OperationCount
    batched: bool

    @property
    def arrays(self) -> tuple[Array, ...]:
        return (*self.inputs, self.output)

    def unused_inputs(self) -> list[str]:
        used = {load.array for load in self.loads}
        return [a.name for a in self.inputs if a.name not in used]

    def count_text(self) -> str:
        c = self.count
        text = f"{c.multiplications} multiplications, {c.additions} additions, {c.trig} sin/cos"
        return text + (f", {c.functions} other function calls" if c.functions else "")


@dataclass(frozen=True)
class ModuleSpec:
    """Everything an emitter prints for one robot."""

    name: str
    robot: str
    n: int
    parameters: tuple[str, ...]
    n_constants: int
    routines: tuple[Routine, ...]
    version: str = GENERATOR_VERSION
    #: The named frames of the frames' routines (:data:`~robodyn.program.outputs.FRAME_OUTPUTS`), in the order of
    #: their arrays' first axis ("" the tool frame); () when there are none.
    frames: tuple[str, ...] = ()
    #: The length of ``q`` where it differs from ``n`` (a floating base, :mod:`robodyn.program.floating`: nq = n + 1,
    #: ``n`` being nv, the length of qd, qdd, tau and the outputs' rows); None otherwise.
    nq: int | None = None
    #: Where each spherical joint's unit quaternion (x, y, z, w) starts in ``q`` and its 3 velocities in ``qd``
    #: (:mod:`robodyn.program.floating`: its inputs ``q{j}_x`` ... ``q{j}_w``, ``qd{j}_x`` ...); () without one.
    quaternions: tuple[tuple[int, int], ...] = ()
    #: Where each planar joint's (x, y, cos theta, sin theta) starts in ``q`` and its (vx, vy, w_z) in ``qd`` (its
    #: inputs ``q{j}_x`` ... ``q{j}_sin``, ``qd{j}_x`` ...); () without one.
    planar: tuple[tuple[int, int], ...] = ()

    @property
    def floating(self) -> bool:
        """A floating base: q's 7 coordinates for its 6 velocities (the one entry of nq - n that no spherical or
        planar joint makes)."""
        return self.nq is not None and self.nq - self.n - len(self.quaternions) - len(self.planar) == 1

    def __post_init__(self) -> None:
        """Only names of robodyn's grammar reach the emitters (a spec may come from a cache's spec.json): the
        module name is an identifier of every language, the robot and parameter names are
        :data:`~robodyn.model.expr.IDENTIFIER` names (no quote, comment marker or newline to print)."""
        if sanitize(self.name) != self.name:
            raise ModelError(f"module name {shown(self.name)} is not a sanitised identifier", field="name")
        check_name(self.robot, "robot")
        for name in self.parameters:
            check_parameter_name(name, "parameters")
        for routine in self.routines:
            if not IDENTIFIER.fullmatch(routine.name):
                raise ModelError(f"routine name {shown(routine.name)} is not an identifier", field="routines")
        for frame in self.frames:  # data (the wrapper's names), never printed into code
            if frame:
                check_frame_name(frame, "frames")

    def routine(self, name: str) -> Routine:
        return next(r for r in self.routines if r.name == name)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.routines if r.batched)

    def parameter_lines(self) -> list[str]:
        """``params[i] = name`` for the header comments (0-based)."""
        if not self.parameters:
            return ["none: the robot is numeric, its numbers are folded into the code"]
        return [f"params[{i}] = {name}" for i, name in enumerate(self.parameters)]


#: C, Fortran and Python names that a module name must not be (:func:`sanitize` appends :data:`RESERVED_SUFFIX`).
#: The module name is one name for every language (it names the Fortran module, the C files and prefixes, the
#: Python files), so it avoids the names of all of them: what the generated code itself declares or uses (the
#: routines, their batch twins, arguments and outputs, the module-level constants, the intrinsic module
#: ``iso_c_binding`` and its kinds, the intrinsic functions printed; Fortran rejects a module named like any of
#: them), Fortran, C and Python keywords, C's standard headers (``math.h`` beside the source would be included
#: for ``<math.h>``) and common libc names, Python's builtins, and the modules a generated ``NAME.py`` would
#: shadow in its directory: the standard library (``sys.stdlib_module_names``) and numpy, jax, scipy, sympy...
RESERVED_NAMES: frozenset[str] = frozenset(
    name.lower() for name in {
        # the generated code's own names
        *(kind.name for kind in KINDS), *(f"{kind.name}_batch" for kind in KINDS), "constants", "constants_batch",
        *(name for kind in KINDS for name in (*kind.inputs, kind.output)), *LOCALS, *(p for p, _ in LOCALS.values()),
        "num_joints", "num_parameters", "num_constants", "n_states", "i", "j", "m", "g", "h", "bias", "x", "y", "w",
        "o", "n", "e", "s", "r", "a", "f", "kernel", "work", "stream", "ang", "sn", "cs",
        # Fortran: the intrinsic module and its kinds, words of the code, intrinsic procedures
        "iso_c_binding", "iso_fortran_env", "c_double", "c_size_t", "c_int", "c_float", "c_ptr", "c_loc",
        "module", "end", "subroutine", "function", "program", "contains", "use", "intrinsic", "only", "implicit",
        "none", "private", "public", "parameter", "integer", "real", "double", "precision", "complex", "logical",
        "character", "intent", "in", "out", "inout", "value", "bind", "name", "call", "do", "if", "then", "else",
        "return", "result", "merge", "sign", "abs", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "atan2",
        "sinh", "cosh", "tanh", "exp", "log", "log10", "max", "min", "mod", "dble", "floor", "ceiling", "sum",
        "product", "size", "shape", "kind", "huge", "tiny", "epsilon",
        # C: keywords, standard headers, libc names the code uses
        "auto", "break", "case", "char", "const", "continue", "default", "enum", "extern", "float", "for", "goto",
        "inline", "int", "long", "register", "restrict", "short", "signed", "sizeof", "static", "struct", "switch",
        "typedef", "union", "unsigned", "void", "volatile", "while", "bool", "true", "false",
        "assert", "ctype", "errno", "fenv", "inttypes", "iso646", "limits", "locale", "math", "setjmp", "signal",
        "stdalign", "stdarg", "stdatomic", "stdbool", "stddef", "stdint", "stdio", "stdlib", "stdnoreturn", "string",
        "tgmath", "threads", "time", "uchar", "wchar", "wctype", "emmintrin", "immintrin", "arm_neon",
        "size_t", "memcpy", "memset", "fabs", "sincos", "fma", "pow", "hypot", "main", "libc", "libm",
        # Python: keywords, builtins, the standard library and the modules the generated code imports or runs beside
        *keyword.kwlist, *keyword.softkwlist,
        *(name for name in dir(builtins) if name.islower() and not name.startswith("_")),
        *(name.lower() for name in sys.stdlib_module_names),
        "numpy", "jax", "jaxlib", "scipy", "sympy", "symengine", "mpmath", "casadi", "robodyn",
    }
)
#: What :func:`sanitize` appends to a reserved module name.
RESERVED_SUFFIX = "_robot"
#: Local names of the generated code (joint inputs, parameters, constants, temporaries): no module name either.
_LOCAL_NAME = re.compile(r"(q|qd|qdd|tau|k|p|t)[0-9]+")
#: Hex digits of the hash that a truncated name ends with.
HASH_DIGITS = 8


def sanitize(name: str, *, limit: int = 40) -> str:
    """A C, Fortran and Python module name from a robot name: ``[a-z0-9_]``, starting with a letter, at most
    ``limit`` characters, that clashes with nothing in the generated code or beside it.

    Runs of other characters become ``_`` (:func:`~robodyn.model.expr.to_identifier`) and letters lower case; a
    reserved name (:data:`RESERVED_NAMES`, or a local name such as ``q1``) gets :data:`RESERVED_SUFFIX`
    (``numpy`` -> ``numpy_robot``); a name longer than ``limit`` is cut and ends with ``_`` and a hash of the whole
    name (:data:`HASH_DIGITS` hex digits), so that names sharing their first ``limit`` characters still name
    different files. A sanitised name is its own sanitised name."""
    cleaned = to_identifier(name, limit=len(name) + len("robot_") + 1).lower()  # (whole: cut below)
    if cleaned in RESERVED_NAMES or _LOCAL_NAME.fullmatch(cleaned):
        cleaned += RESERVED_SUFFIX
    if len(cleaned) <= limit:
        return cleaned
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_DIGITS]
    head = cleaned[: max(limit - HASH_DIGITS - 1, 1)].rstrip("_")
    return f"{head}_{digest}"


def select(outputs: Iterable[str] | None) -> tuple[Kind, ...]:
    """The kinds for ``--outputs`` keys (tau, M, h, bias, G, forward, dtau, dqdd), in :data:`KINDS` order
    (None: :data:`DEFAULT_KEYS`)."""
    if outputs is None:
        return tuple(kind for kind in KINDS if kind.key in DEFAULT_KEYS)
    wanted = list(outputs)
    unknown = [key for key in wanted if key not in KEYS]
    if unknown:
        raise ValueError(f"unknown output {unknown[0]!r}; choose from {', '.join(KEYS)}")
    if not wanted:
        raise ValueError("no outputs requested")
    return tuple(kind for kind in KINDS if kind.key in wanted)


def module_spec(
    robot: Any, outputs: Iterable[str] | None = None, *, name: str | None = None, base: bool = False,
    frames: Sequence[str] | None = None,
) -> ModuleSpec:
    """The routines for ``robot`` (a :class:`~robodyn.Manipulator`): ``outputs`` are ``--outputs`` keys.

    ``base=True``: the model in the robot's base parameters (:func:`robodyn.program.build`), whose
    parameter vector is the base parameters (then any geometry symbols), for identified values; the
    module is named ``NAME_base``. ``frames``: the named frames (:meth:`~robodyn.Manipulator.frame`) of the frames'
    routines (``pose``, ``jacobian``, ...; default the tool frame, "")."""
    kinds = select(outputs)
    chosen = frames_of(robot, kinds, frames)
    parts = tuple(p for p in OUTPUTS if any(p in kind.parts for kind in kinds))
    parts += tuple(part for kind in kinds if kind.key in FRAME_OUTPUTS for part in kind_parts(kind, chosen))
    program = build(robot, outputs=parts, base=base_parameters(robot) if base else None)
    default = f"{robot.name}_base" if base else robot.name
    return spec_from_program(program, kinds, name=sanitize(name or default), robot=robot.name, frames=chosen)


def frames_of(robot: Any, kinds: Sequence[Kind], frames: Sequence[str] | None) -> tuple[str, ...]:
    """The frames of a module: () without a frame's routine among ``kinds``, else ``frames`` (checked: each a
    name :meth:`~robodyn.Manipulator.frame` answers, or "" for the tool frame), by default the tool frame."""
    if not any(kind.key in FRAME_OUTPUTS for kind in kinds):
        if frames:
            raise ValueError("frames= names the frames of the outputs pose, jacobian, ...: ask for one of them")
        return ()
    chosen = ("",) if frames is None else tuple(frames)
    if isinstance(frames, str) or not chosen:
        raise ValueError("frames= takes a sequence of frame names (\"\" for the tool frame)")
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"frames= names a frame twice: {', '.join(map(repr, chosen))}")
    for frame in chosen:
        if frame:
            robot.frame(frame)  # a ValueError listing the robot's frames
    return chosen


# -- renaming ------------------------------------------------------------------------------------


class _Names:
    """The Program's symbols under safe names; parameters used at run time become constants."""

    def __init__(self, program: Program) -> None:
        self.run: dict[SeExpr, se.Symbol] = {}
        for key in ("q", "qd", "qdd", "tau"):  # tau: a Program with a forward output
            prefix, base = LOCALS[key]
            for i, s in enumerate(program.inputs.get(key, ())):
                self.run[s] = se.Symbol(f"{prefix}{i + base}")
        self.params = list(program.inputs["parameters"])
        self.setup: dict[SeExpr, se.Symbol] = {s: se.Symbol(f"p{i}") for i, s in enumerate(self.params)}
        constants = [(se.Symbol(a.name), a.expr) for a in program.constants]
        for j, (s, _) in enumerate(constants):
            self.setup[s] = self.run[s] = se.Symbol(f"k{j}")
        used = _free([a.expr for a in program.body] + [x for xs in program.outputs.values() for x in xs])
        copied = [p for p in self.params if p in used]
        self.constants = [(self.setup[s], self.rename(e, self.setup)) for s, e in constants]
        for p in copied:
            k = se.Symbol(f"k{len(self.constants)}")
            self.constants.append((k, self.setup[p]))
            self.run[p] = k
        self.body = []
        for j, a in enumerate(program.body):
            expr = self.rename(a.expr, self.run)
            self.run[se.Symbol(a.name)] = symbol = se.Symbol(f"t{j}")
            self.body.append((symbol, expr))
        self.outputs = {part: [self.rename(x, self.run) for x in xs] for part, xs in program.outputs.items()}

    @staticmethod
    def rename(expr: SeExpr, names: dict[SeExpr, se.Symbol]) -> SeExpr:
        free = expr.free_symbols
        missing = [s for s in free if s not in names]
        if missing:
            raise ValueError(f"the program uses {sorted(map(str, missing))[0]!r} before assigning it")
        return expr.xreplace({s: names[s] for s in free}) if free else expr


def _free(exprs: Iterable[SeExpr]) -> set[SeExpr]:
    out: set[SeExpr] = set()
    for e in exprs:
        out |= e.free_symbols
    return out


# -- temporaries, legal statements ---------------------------------------------------------------


class _Temps:
    """New temporaries (``t<N>``, numbered after the body), each expression assigned once."""

    def __init__(self, start: int) -> None:
        self.next = start
        self.assignments: list[tuple[se.Symbol, SeExpr]] = []
        self.memo: dict[SeExpr, se.Symbol] = {}

    def __call__(self, expr: SeExpr) -> SeExpr:
        """``expr`` itself if it is a number, a symbol or minus a symbol, else a temporary."""
        if expr.is_Atom or (isinstance(expr, se.Mul) and len(expr.args) == 2 and expr.args[0] == -1
                            and expr.args[1].is_Atom):
            return expr
        if expr not in self.memo:
            self.memo[expr] = symbol = se.Symbol(f"t{self.next}")
            self.next += 1
            self.assignments.append((symbol, expr))
        return self.memo[expr]


def _legal(expr: SeExpr, temps: _Temps) -> tuple[SeExpr, int]:
    """``expr`` with compound power bases hoisted and long sums or statements cut into temporaries;
    and its size in nodes."""
    if expr.is_Atom:
        return expr, 1
    args, sizes = [], []
    for a in expr.args:
        legal, size = _legal(a, temps)
        args.append(legal)
        sizes.append(size)
    if isinstance(expr, se.Pow) and not args[0].is_Atom:
        args[0], sizes[0] = temps(args[0]), 1
    if isinstance(expr, se.Add) and len(args) > SUM_CHUNK:
        args = [temps(se.Add(*args[i : i + SUM_CHUNK])) for i in range(0, len(args), SUM_CHUNK)]
        sizes = [1] * len(args)
    while sum(sizes) + 1 > MAX_NODES:
        big = max(range(len(args)), key=lambda i: sizes[i])
        args[big], sizes[big] = temps(args[big]), 1
    same = len(args) == len(expr.args) and all(a is b or a == b for a, b in zip(args, expr.args, strict=True))
    return (expr if same else expr.func(*args)), 1 + sum(sizes)


def _legalise(
    assignments: Sequence[tuple[se.Symbol, SeExpr]], stores: Sequence[SeExpr], temps: _Temps
) -> tuple[list[tuple[se.Symbol, SeExpr]], list[SeExpr]]:
    out: list[tuple[se.Symbol, SeExpr]] = []
    temps.memo = {}  # a temporary reused here must be assigned before this statement

    def take(expr: SeExpr) -> SeExpr:
        temps.assignments = []
        legal, _ = _legal(expr, temps)
        out.extend(temps.assignments)
        return legal

    for symbol, expr in assignments:
        out.append((symbol, take(expr)))
    legal_stores = [take(x) for x in stores]
    return out, legal_stores


# -- forward dynamics ------------------------------------------------------------------------------


# -- routines ------------------------------------------------------------------------------------


def _array(name: str, n: int, n_constants: int, n_params: int, frames: int = 1, nq: int | None = None) -> Array:
    if name == "q" and nq is not None:
        return Array("q", (nq,))
    if name == "k":
        return Array("k", (n_constants,))
    if name == "params":
        return Array("params", (n_params,))
    return Array(name, output_shape(name, n, frames))


def _loads(arrays: Sequence[Array], used: set[SeExpr]) -> tuple[Load, ...]:
    loads = []
    for array in arrays:
        prefix, base = LOCALS[array.name]
        for i in range(array.size):
            local = f"{prefix}{i + base}"
            if se.Symbol(local) in used:
                loads.append(Load(local, array.name, i))
    return tuple(loads)


def _routine(
    name: str,
    summary: str,
    inputs: Sequence[Array],
    output: Array,
    assignments: Sequence[tuple[se.Symbol, SeExpr]],
    stores: Sequence[SeExpr],
    temps: _Temps,
    angles: Sequence[se.Symbol],
    batched: bool,
) -> Routine:
    assignments, stores = _legalise(assignments, stores, temps)
    exprs = [e for _, e in assignments] + list(stores)
    count = sum((count_operations(e, angles) for e in exprs), OperationCount())
    return Routine(
        name=name,
        summary=summary,
        inputs=tuple(inputs),
        output=output,
        loads=_loads(inputs, _free(exprs)),
        assignments=tuple((str(s), to_printable(e)) for s, e in assignments),
        stores=tuple(to_printable(x) for x in stores),
        count=count,
        batched=batched,
    )


def _needed(body: Sequence[tuple[se.Symbol, SeExpr]], roots: Iterable[SeExpr]) -> list[tuple[se.Symbol, SeExpr]]:
    """The body assignments that ``roots`` depend on (dead code removed), depth first: for each root in
    turn, each statement right after the ones it reads that are not yet computed (earliest made first).

    A value is then computed close to where it is used, rather than in the order the recursion made it (all
    directions of a derivative link by link): fewer values live at once, fewer register spills in the
    compiled batch loops (the Panda's derivatives 8-12% faster), and the same operations on the same
    operands, so the same numbers."""
    expr_of = dict(body)
    made = {symbol: k for k, (symbol, _) in enumerate(body)}
    done: set[SeExpr] = set()
    out: list[tuple[se.Symbol, SeExpr]] = []

    def reads(expr: SeExpr) -> list[SeExpr]:
        return sorted((s for s in expr.free_symbols if s in expr_of and s not in done), key=made.__getitem__)

    for root in roots:
        stack = [(s, False) for s in reversed(reads(root))]
        while stack:  # iterative: dependency chains are thousands of statements deep
            symbol, ready = stack.pop()
            if symbol in done:
                continue
            if ready:
                done.add(symbol)
                out.append((symbol, expr_of[symbol]))
                continue
            stack.append((symbol, True))
            stack.extend((s, False) for s in reversed(reads(expr_of[symbol])))
    return out


def _run_time(kind: Kind, names: _Names, n: int, n_constants: int, angles: list[se.Symbol], aba: bool,
              frames: Sequence[str] = (), nq: int | None = None) -> Routine:
    stores = [x for part in kind_parts(kind, frames) for x in names.outputs[part]]
    if kind.key in PACKED:  # (M's upper triangle, row by row: the order of np.triu_indices)
        stores = [stores[i * n + j] for i in range(n) for j in range(i, n)]
    summary = ABA_SUMMARY if kind.name == "forward_dynamics" and aba else kind.summary
    body = _needed(names.body, stores)
    inputs = [_array("k", n, n_constants, 0)] + [_array(a, n, n_constants, 0, nq=nq) for a in kind.inputs]
    return _routine(kind.name, summary, inputs, _array(kind.output, n, n_constants, 0, len(frames)), body, stores,
                    _Temps(len(names.body)), angles, True)


def spec_from_program(program: Program, kinds: Sequence[Kind], *, name: str, robot: str,
                      frames: Sequence[str] = ()) -> ModuleSpec:
    """The constants routine and one run-time routine per kind, over ``program`` (the frames' routines over its
    outputs of each of ``frames``, :func:`kind_parts`)."""
    names = _Names(program)
    n = len(program.inputs.get("qd", program.inputs["q"]))  # (nv: a floating base's q has nq = nv + 1)
    nq = len(program.inputs["q"]) if len(program.inputs["q"]) != n else None
    params = tuple(str(p) for p in names.params)
    n_constants = len(names.constants)
    angles = [names.run[s] for s in program.inputs["q"]]
    constants = _routine(
        "constants",
        "the parameter-only constants k, computed once per parameter set",
        [_array("params", n, n_constants, len(params))],
        _array("k", n, n_constants, len(params)),
        names.constants,
        [s for s, _ in names.constants],
        _Temps(len(names.body)),
        angles,
        False,
    )
    aba = "aba" in (program.route or "")  # forward dynamics by the articulated-body algorithm
    routines = [constants] + [_run_time(kind, names, n, n_constants, angles, aba, frames, nq) for kind in kinds]
    quaternions, planar = (_starts(program, suffix) for suffix in ("w", "sin"))
    return ModuleSpec(name=name, robot=robot, n=n, parameters=params, n_constants=n_constants,
                      routines=tuple(routines), frames=tuple(frames), nq=nq, quaternions=quaternions, planar=planar)


def _starts(program: Program, last: str) -> tuple[tuple[int, int], ...]:
    """(where in q, where in qd) each joint whose last coordinate is named ``q{j}_{last}`` starts (4 coordinates,
    3 velocities: :func:`robodyn.program.floating.inputs`)."""
    rates = {str(s): i for i, s in enumerate(program.inputs.get("qd", ()))}
    out = []
    for i, s in enumerate(program.inputs["q"]):
        found = re.fullmatch(rf"q(\d+)_{last}", str(s))
        if found:
            out.append((i - 3, rates[f"qd{found.group(1)}_x"]))
    return tuple(out)


# -- to sympy, structure kept ----------------------------------------------------------------------


def to_printable(expr: SeExpr) -> sp.Expr:
    """An unevaluated sympy tree of ``expr`` for sympy's code printers (see the module docstring)."""
    if expr.is_Symbol:
        return sp.Symbol(expr.name)
    if expr.is_Number:
        finite_constant(expr)  # a literal the compilers and Python can read
    if expr.is_Integer:
        return sp.Integer(int(expr))
    if expr.is_Rational:
        num, den = expr.get_num_den()
        return sp.Rational(int(num), int(den))
    if expr.is_Number:
        return sp.Float(float(expr), 17)
    args = [to_printable(a) for a in expr.args]
    if isinstance(expr, se.Add):
        return sp.Add(*_positive_first(sp.Add(*args, evaluate=False).as_ordered_terms()), evaluate=False)
    if isinstance(expr, se.Mul):
        return sp.Mul(*sp.Mul(*args, evaluate=False).as_ordered_factors(), evaluate=False)
    if isinstance(expr, se.Pow):
        return _power(*args)
    if not args:  # pi, E: constants the printers know
        return to_sympy(expr)
    function = getattr(sp, type(expr).__name__, None)  # sin, cos, ... (to_sympy would evaluate sin(-x))
    if not (isinstance(function, type) and issubclass(function, sp.Function)):
        raise ValueError(f"cannot print {type(expr).__name__}() in generated code")
    return function(*args, evaluate=False)


def _positive_first(terms: list[sp.Expr]) -> list[sp.Expr]:
    """sympy's order of terms, but starting with a positive one where there is one (``b - a`` rather
    than ``-a + b``: a negation costs an operation in array code)."""
    first = next((i for i, t in enumerate(terms) if not t.could_extract_minus_sign()), 0)
    return [terms[first], *terms[:first], *terms[first + 1 :]]


def product_power(base: Any, exponent: Any) -> int:
    """k when base**exponent is written as the product base*...*base (k factors; 1/(...) for k < 0), as the
    operation count charges it; 0 when it stays a power. For sympy and symengine expressions alike."""
    if exponent.is_Integer and 2 <= abs(int(exponent)) <= POW_LIMIT and (base.is_Symbol or base.is_Number):
        return int(exponent)
    return 0


def _power(base: sp.Expr, exponent: sp.Expr) -> sp.Expr:
    k = product_power(base, exponent)
    if k:
        product = sp.Mul(*[base] * abs(k), evaluate=False)
        return product if k > 0 else sp.Pow(product, -1, evaluate=False)
    return sp.Pow(base, exponent, evaluate=False)

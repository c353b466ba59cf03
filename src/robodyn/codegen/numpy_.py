"""NumPy: a Python module per robot, printed with sympy's ``NumPyPrinter`` and lowered to ufunc calls.

A batch is evaluated in blocks of ``BLOCK`` states. Each run-time routine becomes a *block kernel*
``_NAME(k, x, o, w)``: straight-line ufunc calls, one per operation, each writing into a row given as
its last argument (``multiply(w3, c0, w4)``), where ``x`` are the block's input columns (``q1..qn``,
``qd1..``: strided views of the caller's arrays, nothing copied), ``o`` the block's result columns
(views of the array returned) and ``w`` preallocated work rows of one block. Work rows are assigned
like registers by a liveness pass (a dead value's row is reused at once, an operation overwrites an
operand it consumes, the row freed last is taken first), so a kernel keeps a few dozen rows that stay
in cache and allocates nothing per operation; numbers are 0-d arrays (``c0, c1, ...``, listed in
``_NAME_NUMBERS``), which a ufunc call takes faster than Python floats.

Every expression is printed by ``NumPyPrinter`` (the original statement is kept as a comment above
its calls) and lowered through Python's own parse of that text, so the operations, their operands and
their order are those of the plain NumPy expression, with the same results, bit for bit; except sine
and cosine. NumPy evaluates float64 ``sin`` and ``cos`` with scalar libm calls (some 10 ns each,
half the time of a kernel), while its ``tan`` is vectorised; so by default (``half_angle=True``) the
sine and cosine of an angle x both come from one t = tan(x/2): sin x = 2t/(1 + t^2) and
cos x = (1 - t)(1 + t)/(1 + t^2). Both agree with libm's to a few units in the last place (relative;
cos within some 1e-16 absolute near its zeros), for every finite x. ``NumPyEmitter(half_angle=False)``
prints ``sin`` and ``cos`` calls instead. In both, the sine and cosine of a sum angle (``q1 + q2``)
come from those of its terms by angle addition, never from the rounded sum (off by up to 0.06 rad
at 1e15 rad). Depends on NumPy only.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy
import sympy as sp
from sympy.printing.numpy import NumPyPrinter

from robodyn.codegen.base import PRINTER_SETTINGS
from robodyn.codegen.python import PythonEmitter
from robodyn.codegen.spec import LOCALS, ModuleSpec, Routine
from robodyn.errors import finite_constant

#: States per block. A ufunc call costs some 0.3 us whatever its length, so blocks must be long; the
#: work rows of a six-joint arm's routines (50-80 rows of 32 KiB) then still sit in a core's L2 cache.
BLOCK = 4096
#: Work rows are BLOCK + ROW_PAD long, so that rows do not start a power of two apart (cache sets).
ROW_PAD = 8

#: ufuncs of the Python operators (what ``a + b`` on arrays calls).
BINARY = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide"}
#: Functions the printer may call (``numpy.sin``): each one is a ufunc of the same name.
UNARY = {"sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "exp", "log", "sqrt",
         "absolute", "sign", "floor", "ceil", "exp2", "log2", "log10", "expm1", "log1p", "cbrt"}
BINARY_CALLS = {"arctan2", "power", "hypot", "fmod", "maximum", "minimum", "copysign"}

#: The two ``_blocked`` helpers' shared lines: the constants' check, and the loop over blocks of states.
_CHECK_K = '''    k = numpy.asarray(k, dtype=float)
    if k.shape != (NUM_CONSTANTS,):
        raise ValueError(f"k must be constants(params): {NUM_CONSTANTS} values, got shape {k.shape}")
'''
_BLOCKS = f'''    N, size = len(batch[0]), 1
    for extent in shape:
        size *= extent
    out = numpy.empty((N, size))
    w = numpy.empty((work, min(N, BLOCK) + {ROW_PAD}))  # work rows, reused block after block
    width = -1
    for start in range(0, N, BLOCK):
        stop = min(start + BLOCK, N)
        if stop - start != width:
            width = stop - start
            rows = list(w[:, :width])
        # the block's inputs and results are columns: strided views, nothing is copied
        columns = [column for a in batch for column in a[start:stop].T]
        kernel(k, columns, list(out[start:stop].T), rows)
    out = out.reshape((N,) + shape)
    return out[0] if single else out
'''


PRELUDE = f'''import numpy
from numpy import copyto

BLOCK = {BLOCK}  # states per block: a block's work rows stay in cache


def _assemble(entries, arrays, shape):
    lead = numpy.broadcast_shapes(*(numpy.shape(a)[:-1] for a in arrays))
    out = numpy.empty(lead + (len(entries),))
    for i, entry in enumerate(entries):
        out[..., i] = entry
    return out.reshape(lead + shape)


def _numbers(*values):
    """Numbers as 0-d arrays: a ufunc call takes them faster than Python floats (same values)."""
    return [numpy.array(value) for value in values]


def _blocked(kernel, k, arrays, shape, work):
    """kernel over blocks of at most BLOCK states: arrays (n,) or (N, n) in, (...) + shape out."""
    arrays = [numpy.asarray(a, dtype=float) for a in arrays]
    for a in arrays:
        if a.ndim not in (1, 2) or a.shape[-1] != JOINTS:
            raise ValueError(f"joint arrays must have shape ({{JOINTS}},) or (N, {{JOINTS}}), got {{a.shape}}")
    arrays = numpy.broadcast_arrays(*arrays)
{_CHECK_K}    single = arrays[0].ndim == 1
    batch = [a.reshape(-1, JOINTS) for a in arrays]
{_BLOCKS}'''

#: A floating base's ``_blocked`` (q of NQ entries, the other joint arrays of JOINTS: each checked against its own
#: length, the states broadcast); a fixed robot's module keeps the one above, byte for byte.
SIZED_BLOCKED = f'''def _blocked(kernel, k, arrays, shape, work, sizes):
    """kernel over blocks of at most BLOCK states: arrays (size,) or (N, size) in, each of its own size (sizes:
    (name, size) pairs; q has NQ entries, the others JOINTS), (...) + shape out."""
    arrays = [numpy.asarray(a, dtype=float) for a in arrays]
    for a, (name, size) in zip(arrays, sizes):
        if a.ndim not in (1, 2) or a.shape[-1] != size:
            raise ValueError(f"{{name}} must have shape ({{size}},) or (N, {{size}}), got {{a.shape}}")
    lead = numpy.broadcast_shapes(*(a.shape[:-1] for a in arrays))
    arrays = [numpy.broadcast_to(a, lead + a.shape[-1:]) for a in arrays]
{_CHECK_K}    single = not lead
    batch = [a.reshape(-1, a.shape[-1]) for a in arrays]
{_BLOCKS}'''


class NumPyEmitter(PythonEmitter):
    array_module = "numpy"
    flavour = "NumPy"

    def __init__(self, half_angle: bool = True) -> None:
        super().__init__()
        self.half_angle = half_angle
        self._used: set[str] = set()
        self._sized = False  # a floating base's module (q of nq entries): SIZED_BLOCKED

    def make_printer(self) -> NumPyPrinter:
        return NumPyPrinter(PRINTER_SETTINGS)

    def prelude(self) -> list[str]:
        if not self._sized:
            return PRELUDE.splitlines()
        head, _ = PRELUDE.split("def _blocked(", 1)
        return (head + SIZED_BLOCKED).splitlines()

    def notes(self) -> list[str]:
        lines = ["", "Batches run in blocks of BLOCK states, each routine as ufunc calls on preallocated rows",
                 "(the original statements are the comments above them)."]
        if self.half_angle:
            lines += ["The sine and cosine of an angle x come from one vectorised t = tan(x/2):",
                      "sin x = 2t/(1 + t^2), cos x = (1 - t)(1 + t)/(1 + t^2): the sine within 3 ulp of numpy.sin,",
                      "the cosine within 4e-16 absolute of numpy.cos (so some ulp relative only away from its zeros)."]
        return lines

    def files(self, spec: ModuleSpec) -> dict[str, str]:
        self._used = set()
        self._sized = spec.nq is not None
        ((filename, text),) = super().files(spec).items()
        # import the ufuncs that the kernels call, by name (known once every kernel is printed)
        names = ", ".join(sorted(self._used | {"copyto"}))
        return {filename: text.replace("from numpy import copyto\n", f"from numpy import {names}\n", 1)}

    def routine(self, routine: Routine) -> list[str]:
        routine = replace(routine, assignments=program_order(routine.assignments))
        kernel = Kernel.lower(routine, self.expr, half_angle=self.half_angle)
        self._used |= kernel.used
        args = ", ".join(a.name for a in routine.inputs)
        arrays = ", ".join(a.name for a in routine.inputs if a.name != "k") + ","
        shape = ", ".join(str(d) for d in routine.output.shape) + ","
        pairs = ", ".join(f"({a.name!r}, {a.size})" for a in routine.inputs if a.name != "k") + ","
        sized = f", ({pairs})" if self._sized else ""  # (a floating base: each array's name and length)
        wrapper = [
            f"def {routine.name}({args}):",
            *self.indented([*self.docstring(routine),
                            f"return _blocked(_{routine.name}, k, ({arrays}), ({shape}), {kernel.n_work}{sized})"]),
            "",
            "",
        ]
        inputs = [a for a in routine.inputs if a.name != "k"]
        columns = ", ".join(f"{LOCALS[a.name][0]}{LOCALS[a.name][1]}..{LOCALS[a.name][0]}{a.size}" for a in inputs)
        doc = [f'"""{routine.name} on one block of states. x: the input columns {columns}; o: the',
               f"{routine.output.size} result columns ({routine.output.name}, flat); w: {kernel.n_work} work rows. "
               'Each has one entry per state."""']
        body = self.indented(doc + kernel.lines(self.indent))
        table = kernel.numbers_table(self.indent)
        return [*wrapper, f"def _{routine.name}(k, x, o, w):", *body, "", "", *table, *(["", ""] if table else [])]


def program_order(assignments: tuple[tuple[str, sp.Expr], ...]) -> tuple[tuple[str, sp.Expr], ...]:
    """The assignments in the Program's own order, not the spec's depth-first one: ``t<j>`` is the Program's
    j-th statement, and each temporary that the spec added (numbered after them) goes right before the first
    of the Program's statements that reads it, directly or through other temporaries (those that only the
    results read come last). The same operations on the same operands, so the same numbers. The spec
    orders statements depth first from the outputs for the C, whose batch loops then keep fewer values in
    registers; a kernel here keeps whole rows of a block instead, and the PUMA's inverse dynamics takes 7%
    less time in this order (0.175 against 0.188 us per state, 10^6 states). Assignments named otherwise
    are left as they are."""
    names = [name for name, _ in assignments]
    if not all(name[:1] == "t" and name[1:].isdecimal() for name in names):
        return assignments
    position = {name: i for i, name in enumerate(names)}
    readers: dict[str, list[str]] = {name: [] for name in names}
    for name, expr in assignments:
        for symbol in expr.free_symbols:
            if str(symbol) in position:
                readers[str(symbol)].append(name)
    key: dict[str, int] = {}
    for name in reversed(names):  # the spec's order is a topological one: readers come later
        key[name] = min([int(name[1:])] + [key[reader] for reader in readers[name]])
    return tuple(sorted(assignments, key=lambda a: (key[a[0]], position[a[0]])))


# -- lowering to ufunc calls -----------------------------------------------------------------------


@dataclass(eq=False)
class Value:
    """An operand: a row (input, result or work), a scalar (an entry of k, or computed from those),
    or a literal number. Compared by identity."""

    text: str = ""  # the literal, the scalar's name, or (once allocated) the row's name
    kind: str = "row"  # "row", "scalar" or "literal"
    fixed: bool = False  # an input or result row: never reused
    last: int = -1  # index of the last operation that reads it


def literal(value: float) -> Value:
    return Value(repr(finite_constant(value)), "literal")


@dataclass
class Op:
    """``function(*args, result)``, a ufunc call; or, for scalars, ``result = text``."""

    function: str
    args: list[Value]
    result: Value
    comment: list[str] = field(default_factory=list)
    text: str = ""


class Kernel:
    """One routine as straight-line ufunc calls on rows, the rows assigned by liveness."""

    def __init__(self, name: str, half_angle: bool) -> None:
        self.half_angle = half_angle
        self.ops: list[Op] = []
        self.names: dict[str, Value] = {}
        self.inputs: list[str] = []
        self.scalars: list[str] = []  # k loads
        self.n_out = 0
        self.n_work = 0
        self.used: set[str] = set()
        self.pending: list[str] = []  # comment lines for the next operation
        self.halves: dict[Value, tuple[Value, Value]] = {}  # angle -> (tan(x/2), 1/(1 + tan(x/2)^2))
        self.trig_values: dict[tuple[str, Value], Value] = {}  # (sin or cos, angle) -> its value
        self.sum_parts: dict[str, tuple[Value, Value, int, Value, Value]] = {}  # sum angle -> its last step
        self.numbers: list[str] = []
        self.numbers_name = f"_{name.upper()}_NUMBERS"

    # -- building ------------------------------------------------------------------------------------
    @classmethod
    def lower(cls, routine: Routine, printer: Callable[[sp.Expr], str], *, half_angle: bool = True) -> Kernel:
        self = cls(routine.name, half_angle)
        for array in routine.inputs:
            if array.name != "k":
                prefix, base = LOCALS[array.name]
                for i in range(array.size):
                    self.inputs.append(f"{prefix}{i + base}")
                    self.names[self.inputs[-1]] = Value(self.inputs[-1], fixed=True)
        for load in routine.loads:
            if load.array == "k":
                self.names[load.local] = Value(load.local, "scalar")
                self.scalars.append(f"{load.local} = k[{load.index}]")
        self.n_out = routine.output.size
        outputs = [Value(f"o{j}", fixed=True) for j in range(self.n_out)]
        # a temporary that is an output entry as it stands is computed straight into that result row
        direct: dict[str, int] = {}
        for j, x in enumerate(routine.stores):
            if isinstance(x, sp.Symbol) and x.name not in direct and x.name not in self.names:
                direct[x.name] = j
        for name, expr in routine.assignments:
            text = printer(expr)
            self.pending.append(f"{name} = {text}")
            target = outputs[direct[name]] if name in direct else None
            self.names[name] = self.store(ast.parse(text, mode="eval").body, target)
        for j, expr in enumerate(routine.stores):
            if not (isinstance(expr, sp.Symbol) and direct.get(expr.name) == j):
                text = printer(expr)
                self.pending.append(f"{routine.output.name}[{j}] = {text}")
                self.store(ast.parse(text, mode="eval").body, outputs[j])
        self.allocate()
        return self

    def store(self, node: ast.expr, target: Value | None) -> Value:
        """The value of ``node``, written into ``target`` if given."""
        value = self.expression(node, target)
        if target is not None and value is not target:
            self.emit("copyto", [value], target)
            return target
        return value

    def emit(self, function: str, args: list[Value], result: Value | None = None) -> Value:
        if result is None:
            result = Value(kind="row" if any(a.kind == "row" for a in args) else "scalar")
        self.ops.append(Op(function, args, result, comment=self.pending))
        self.pending = []
        return result

    def call(self, function: str, args: list[Value], target: Value | None = None) -> Value:
        if all(a.kind == "literal" for a in args):  # folded now, as Python would at run time
            return literal(getattr(numpy, function)(*(float(a.text) for a in args)))
        return self.emit(function, args, target if any(a.kind == "row" for a in args) else None)

    def expression(self, node: ast.expr, target: Value | None = None) -> Value:
        """The value of ``node``; its last operation writes into ``target`` where it is a row."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return literal(node.value)
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                raise ValueError(f"generated NumPy code reads {node.id!r} before assigning it")
            return self.names[node.id]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "numpy":
            value = getattr(numpy, node.attr, None)  # numpy.pi, numpy.e
            if isinstance(value, float):
                return literal(value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            function = "negative" if isinstance(node.op, ast.USub) else "positive"
            return self.call(function, [self.expression(node.operand)], target)
        if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
            args = [self.expression(node.left), self.expression(node.right)]
            return self.call(BINARY[type(node.op)], args, target)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            return self.power(self.expression(node.left), self.expression(node.right), target)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "numpy"
                and not node.keywords):
            name = node.func.attr
            if name in ("sin", "cos") and len(node.args) == 1 and len(terms := self.terms(node.args[0])) > 1:
                return self.sum_trig(name, node.args[0], terms, target)
            args = [self.expression(a) for a in node.args]
            if name in ("sin", "cos") and len(args) == 1:
                return self.sine_or_cosine(name, args[0], target)
            if (name in UNARY and len(args) == 1) or (name in BINARY_CALLS and len(args) == 2):
                return self.call(name, args, target)
        raise ValueError(f"cannot lower {ast.unparse(node)!r} to NumPy ufunc calls")

    def power(self, base: Value, exponent: Value, target: Value | None) -> Value:
        """``base ** exponent`` as NumPy computes it for an array base: 1/x, x*x or sqrt(x) for these
        exponents (its fast path), else ``power``."""
        if exponent.kind == "literal" and base.kind != "literal":
            e = float(exponent.text)
            if e == -1:
                return self.call("divide", [literal(1), base], target)
            if e == 2:
                return self.call("multiply", [base, base], target)
            if e == 0.5:
                return self.call("sqrt", [base], target)
            if e == 1:
                return base
        return self.call("power", [base, exponent], target)

    def terms(self, node: ast.expr, sign: int = 1) -> list[tuple[int, ast.expr]]:
        """The signed terms of a sum angle (``q1 - q2``: (1, q1), (-1, q2)); one term where ``node`` is
        not a sum, or no term of it depends on the states."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            right = -sign if isinstance(node.op, ast.Sub) else sign
            found = self.terms(node.left, sign) + self.terms(node.right, right)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            found = self.terms(node.operand, -sign)
        else:
            return [(sign, node)]
        rows = {name for name, value in self.names.items() if value.kind == "row"}
        if sign == 1 and not any(isinstance(n, ast.Name) and n.id in rows for n in ast.walk(node)):
            return [(1, node)]
        return found

    def sum_trig(self, name: str, angle: ast.expr, terms: list[tuple[int, ast.expr]], target: Value | None) -> Value:
        """sin or cos of a sum angle from the sines and cosines of its terms (angle addition), never from
        the rounded sum, which loses all accuracy at huge angles (q1 + q2 rounds to a multiple of 0.125 at
        1e15); the steps before the last are shared by the angle's sine and cosine."""
        key = ast.dump(angle)
        if key not in self.sum_parts:
            pairs = [(sign, *self.sine_and_cosine(self.expression(term))) for sign, term in terms]
            sign, s, c = pairs[0]
            s = self.call("negative", [s]) if sign < 0 else s
            for sign, ts, tc in pairs[1:-1]:
                s, c = self.add_angle("sin", s, c, sign, ts, tc), self.add_angle("cos", s, c, sign, ts, tc)
            self.sum_parts[key] = (s, c, *pairs[-1])
        return self.add_angle(name, *self.sum_parts[key], target)

    def add_angle(self, name: str, s: Value, c: Value, sign: int, ts: Value, tc: Value,
                  target: Value | None = None) -> Value:
        """sin or cos of a + sign b from s, c (of a) and ts, tc (of b): s tc +- c ts, or c tc -+ s ts."""
        first, second = (s, c) if name == "sin" else (c, s)
        function = "add" if (sign > 0) == (name == "sin") else "subtract"
        products = [self.call("multiply", [first, tc]), self.call("multiply", [second, ts])]
        return self.call(function, products, target)

    def sine_and_cosine(self, angle: Value) -> tuple[Value, Value]:
        return self.sine_or_cosine("sin", angle), self.sine_or_cosine("cos", angle)

    def sine_or_cosine(self, name: str, angle: Value, target: Value | None = None) -> Value:
        """sin or cos of ``angle``, computed once per kernel: from the half angle (rows, by default)
        or by the ufunc."""
        key = (name, angle)
        if key not in self.trig_values:
            if self.half_angle and angle.kind == "row":
                self.trig_values[key] = self.trig(name, angle, target)
            else:
                self.trig_values[key] = self.call(name, [angle], target)
        return self.trig_values[key]

    def trig(self, name: str, angle: Value, target: Value | None) -> Value:
        """sin or cos of a row from t = tan(angle/2), shared by the sine and cosine of one angle:
        sin = 2 t r and cos = (1 - t)(1 + t) r with r = 1/(1 + t^2)."""
        if angle not in self.halves:
            self.pending.append("(sine and cosine from t = tan(x/2): see the module docstring)")
            t = self.call("tan", [self.call("multiply", [angle, literal(0.5)])])
            r = self.call("divide", [literal(1), self.call("add", [self.call("multiply", [t, t]), literal(1)])])
            self.halves[angle] = (t, r)
        t, r = self.halves[angle]
        if name == "sin":
            s = self.call("multiply", [t, r])
            return self.call("add", [s, s], target)
        product = self.call("multiply", [self.call("subtract", [literal(1), t]), self.call("add", [t, literal(1)])])
        return self.call("multiply", [product, r], target)

    # -- rows ------------------------------------------------------------------------------------------
    def allocate(self) -> None:
        """Liveness, then rows: a result takes the row of an operand that dies here (in place), else
        the row freed last (still warm in cache), else a new one."""
        for i, op in enumerate(self.ops):
            for a in op.args:
                a.last = i
        free: list[str] = []
        n_scalars = 0
        for i, op in enumerate(self.ops):
            dying: list[Value] = []
            for a in op.args:
                if a.kind == "row" and not a.fixed and a.last == i and all(a is not d for d in dying):
                    dying.append(a)
                    free.append(a.text)
            result = op.result
            if result.kind == "scalar":
                result.text = f"s{n_scalars}"
                n_scalars += 1
                op.text = self.scalar_text(op)
            elif not result.text:  # (a result row has its name already)
                if dying:
                    result.text = dying[0].text
                    free.remove(result.text)
                elif free:
                    result.text = free.pop()
                else:
                    result.text = f"w{self.n_work}"
                    self.n_work += 1
                if result.last < i:  # never read
                    free.append(result.text)
        self.used = {op.function for op in self.ops if op.result.kind == "row"}

    @staticmethod
    def scalar_text(op: Op) -> str:
        operators = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "power": "**"}
        args = [a.text for a in op.args]
        if op.function in operators:
            return f"{args[0]} {operators[op.function]} {args[1]}"
        if op.function in ("negative", "positive"):
            return ("-" if op.function == "negative" else "+") + args[0]
        return f"numpy.{op.function}({', '.join(args)})"

    # -- text --------------------------------------------------------------------------------------------
    def lines(self, indent: str) -> list[str]:
        """The kernel's body: unpack its rows and numbers, then one line per operation."""
        numbers: dict[str, str] = {}  # literal -> c<j>

        def operand(a: Value) -> str:
            return numbers.setdefault(a.text, f"c{len(numbers)}") if a.kind == "literal" else a.text

        body = []
        for op in self.ops:
            body += [f"# {c}" for c in op.comment]
            if op.result.kind == "scalar":
                body.append(f"{op.result.text} = {op.text}")
            elif op.function == "copyto":
                body.append(f"copyto({op.result.text}, {op.args[0].text})")
            else:
                body.append(f"{op.function}({', '.join(operand(a) for a in op.args)}, {op.result.text})")
        self.numbers = list(numbers)
        return [*_unpack(self.inputs, "x", indent), *_unpack([f"o{j}" for j in range(self.n_out)], "o", indent),
                *_unpack([f"w{j}" for j in range(self.n_work)], "w", indent),
                *_unpack(list(numbers.values()), self.numbers_name, indent), *self.scalars, *body]

    def numbers_table(self, indent: str) -> list[str]:
        """``_NAME_NUMBERS = _numbers(...)``: the kernel's numbers in order (after :meth:`lines`)."""
        if not self.numbers:
            return []
        return [f"{self.numbers_name} = _numbers(", *_wrap(self.numbers, indent, ","), ")"]


def _wrap(items: list[str], indent: str, end: str = "") -> list[str]:
    """``items`` comma-separated on lines of at most about 100 characters."""
    lines, line = [], ""
    for item in items:
        if line and len(line) + len(item) + 2 > 100:
            lines.append(indent + line + ",")
            line = item
        else:
            line = f"{line}, {item}" if line else item
    lines.append(indent + line + end)
    return lines


def _unpack(names: list[str], source: str, indent: str) -> list[str]:
    """``a, b, c = source`` (wrapped in parentheses when long)."""
    if not names:
        return []
    if len(names) == 1:
        return [f"{names[0]}, = {source}"]
    lines = _wrap(names, indent)
    if len(lines) == 1:
        return [f"{lines[0].strip()} = {source}"]
    return ["(", *lines, f") = {source}"]

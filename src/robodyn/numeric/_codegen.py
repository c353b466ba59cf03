"""The recursions of :mod:`robodyn.recursions`, traced once per model into straight-line NumPy.

For one :class:`~robodyn.numeric.model.NumericModel` (and one choice of the switches of
:func:`robodyn.numeric.rnea.rnea`) the customised Newton-Euler recursion
(:func:`robodyn.recursions.newton_euler.inverse_dynamics`) or the composite-body algorithm
(:func:`robodyn.recursions.composite.inertia_matrix`) runs once, at compile time, on the scalars of
:class:`TracerOps`: each is either a Python float (known at compile time) or a node standing for a row of N
states. Products with exact zeros and ones are folded away (a right-angled DH twist has a rotation whose
entries are 0 and +-1, links have zero first-moment components, the base is at rest, gravity has one
component...), repeated sub-expressions are shared and results nobody reads are dropped. What is left is
written out as straight-line Python over NumPy rows of shape (N,), with temporaries recycled (in-place updates
where an operand dies), and compiled with :func:`exec`. Evaluation is plain NumPy: no sympy, no loop over
states. The same source over Python floats (``scalar=True``: ``math.sin``, ``math.cos``, negation by rebinding)
evaluates one state without NumPy's per-call overhead on rows of length one (the PUMA's tau: about 15 us instead
of 250 us); its sines and cosines are libm's, which may differ from NumPy's vectorised ones in the last bit.

The model's placements are snapped and its inertial rounding noise zeroed first
(:func:`robodyn.numeric.model.arm_data`), which changes the result by a relative 1e-16.
"""

from __future__ import annotations

import contextlib
import math
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from robodyn.errors import finite_constant
from robodyn.numeric.model import NumericModel, arm_data, snapped
from robodyn.recursions.composite import inertia_matrix
from robodyn.recursions.newton_euler import inverse_dynamics


class _Node:
    """A row of N states: an input, or ``op`` of its ``args`` (floats and nodes). The arithmetic operators
    go through the tracer that made it, so that a recursion computes with nodes as with numbers (an int
    literal of the recursion, 0, 1 or 2, is taken as a float)."""

    __slots__ = ("args", "key", "name", "op", "owned", "tracer", "uses")

    def __init__(self, tracer: _Tracer, op: str, args: tuple, key: tuple) -> None:
        self.tracer, self.op, self.args, self.key = tracer, op, args, key
        self.uses = 0
        self.name: str | None = None
        self.owned = False

    def __add__(self, other: Any) -> Value:
        return self.tracer.add(self, _value(other))

    def __radd__(self, other: Any) -> Value:
        return self.tracer.add(_value(other), self)

    def __sub__(self, other: Any) -> Value:
        return self.tracer.sub(self, _value(other))

    def __rsub__(self, other: Any) -> Value:
        return self.tracer.sub(_value(other), self)

    def __mul__(self, other: Any) -> Value:
        return self.tracer.mul(self, _value(other))

    def __rmul__(self, other: Any) -> Value:
        return self.tracer.mul(_value(other), self)

    def __neg__(self) -> Value:
        return self.tracer.neg(self)


Value = float | _Node


def _value(x: Any) -> Value:
    """A node, or a number as a float (the recursions' int literals, NumPy floats)."""
    return x if isinstance(x, _Node) else float(x)


class _Tracer:
    """Hash-consed expression graph over floats and row nodes, folding constants as it goes."""

    def __init__(self) -> None:
        self.table: dict[tuple, _Node] = {}
        self.inputs: list[_Node] = []

    def node(self, op: str, *args: Value) -> _Node:
        key = (op, *(a if isinstance(a, float) else id(a) for a in args))
        found = self.table.get(key)
        if found is None:
            found = self.table[key] = _Node(self, op, args, key)
        return found

    def input(self, expr: str) -> _Node:
        node = self.node("in", expr)  # type: ignore[arg-type]
        node.name = expr
        self.inputs.append(node)
        return node

    def inputs_of(self, name: str, n: int) -> list[_Node]:
        """The rows ``name[0]``, ..., ``name[n-1]`` of a kernel argument."""
        return [self.input(f"{name}[{i}]") for i in range(n)]

    def neg(self, a: Value) -> Value:
        if isinstance(a, float):
            return -a
        if a.op == "neg":
            return a.args[0]
        return self.node("neg", a)

    def add(self, a: Value, b: Value) -> Value:
        if isinstance(a, float) and isinstance(b, float):
            return a + b
        if isinstance(a, float) and a == 0.0:
            return b
        if isinstance(b, float) and b == 0.0:
            return a
        if isinstance(b, _Node) and b.op == "neg":
            return self.sub(a, b.args[0])
        if isinstance(a, _Node) and a.op == "neg":
            return self.sub(b, a.args[0])
        if isinstance(a, float):
            a, b = b, a
        return self.node("add", a, b)

    def sub(self, a: Value, b: Value) -> Value:
        if isinstance(a, float) and isinstance(b, float):
            return a - b
        if isinstance(b, float) and b == 0.0:
            return a
        if isinstance(a, float) and a == 0.0:
            return self.neg(b)
        if isinstance(b, _Node) and b.op == "neg":
            return self.add(a, b.args[0])
        if isinstance(b, float):
            return self.node("add", a, -b)
        return self.node("sub", a, b)

    def mul(self, a: Value, b: Value) -> Value:
        if isinstance(a, float) and isinstance(b, float):
            return a * b
        if isinstance(b, float):
            a, b = b, a
        assert isinstance(b, _Node)  # two floats returned above, one float is now a
        if isinstance(a, float):
            if a == 0.0:
                return 0.0
            if a == 1.0:
                return b
            if a == -1.0:
                return self.neg(b)
            if b.op == "neg":
                return self.mul(-a, b.args[0])
            return self.node("mul", a, b)
        if a.op == "neg" and b.op == "neg":
            return self.mul(a.args[0], b.args[0])
        if a.op == "neg":
            return self.neg(self.mul(a.args[0], b))
        if b.op == "neg":
            return self.neg(self.mul(a, b.args[0]))
        if id(a) > id(b):
            a, b = b, a
        return self.node("mul", a, b)


class TracerOps:
    """The scalar interface of :mod:`robodyn.recursions.scalars` over a :class:`_Tracer`: model numbers are
    floats, cos and sin of a joint angle are nodes (of a prismatic joint's constant angle, snapped floats)."""

    def __init__(self, tracer: _Tracer) -> None:
        self.tracer = tracer

    def number(self, value: Any) -> float:
        return float(value)

    def cos_sin(self, offset: Any, q: _Node | None) -> tuple[Value, Value]:
        if q is None:
            c, s = snapped([math.cos(float(offset)), math.sin(float(offset))])
            return float(c), float(s)
        return self.tracer.node("cos", q, float(offset)), self.tracer.node("sin", q, float(offset))

    def stage(self, name: str) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def sign(self, x: Value) -> Value:
        return float(np.sign(x)) if isinstance(x, float) else self.tracer.node("sign", x)


def _trace(model: NumericModel, has_qd: bool, has_qdd: bool, gravity: bool, tip: bool, joint_terms: bool):
    """tau of the customised Newton-Euler recursion, traced (module docstring)."""
    T = _Tracer()
    n = model.n
    qd = T.inputs_of("qd", n) if has_qd else None
    qdd = T.inputs_of("qdd", n) if has_qdd else None
    tau = inverse_dynamics(arm_data(model), TracerOps(T), T.inputs_of("q", n), qd, qdd, gravity=gravity,
                           tip_load=tip, friction=joint_terms, group=False)
    return T, [_value(t) for t in tau]


def _trace_crba(model: NumericModel):
    """M(q) of the composite-body algorithm, traced (module docstring), row-major n*n."""
    T = _Tracer()
    M = inertia_matrix(arm_data(model), TracerOps(T), T.inputs_of("q", model.n), group=False)
    return T, [_value(x) for row in M for x in row]


def _emit(T: _Tracer, outputs: list[Value], scalar: bool = False) -> str:
    """Straight-line source of ``kernel(q, qd, qdd, out)`` computing the outputs into the rows of ``out`` (into the
    entries of a list, from sequences of floats, with ``scalar``)."""
    order: list[_Node] = []
    seen: set[int] = set()

    def visit(root: _Node) -> None:
        stack = [(root, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            for arg in reversed(node.args):
                if isinstance(arg, _Node) and id(arg) not in seen:
                    stack.append((arg, False))

    for out in outputs:
        if isinstance(out, _Node):
            visit(out)
    last_use: dict[int, int] = {}
    for k, node in enumerate(order):
        for arg in node.args:
            if isinstance(arg, _Node):
                last_use[id(arg)] = k
    keep = {id(o) for o in outputs if isinstance(o, _Node)}
    for out_id in keep:
        last_use[out_id] = len(order)

    lines = ["def kernel(q, qd, qdd, out):"]
    free: list[str] = []
    count = 0

    def ref(a: Value) -> str:
        return repr(finite_constant(a)) if isinstance(a, float) else a.name  # type: ignore[return-value]

    symbols = {"add": "+", "sub": "-", "mul": "*"}
    for k, node in enumerate(order):
        if node.op == "in":
            continue
        args = node.args
        dying = [a for a in args if isinstance(a, _Node) and a.owned and last_use[id(a)] == k]
        if node.op in ("cos", "sin"):
            x = ref(args[0]) if args[1] == 0.0 else f"({ref(args[0])} + {finite_constant(args[1])!r})"
            expr = f"_{node.op}({x})"
        elif node.op == "sign":
            expr = f"_sign({ref(args[0])})"
        elif node.op == "neg":
            if dying:
                node.name, node.owned = dying[0].name, True
                lines.append(f"    {node.name} = -{node.name}" if scalar else f"    _neg({node.name}, out={node.name})")
                continue
            expr = f"-{ref(args[0])}"
        else:
            sym = symbols[node.op]
            target = None
            if node.op == "sub":
                if dying and dying[0] is args[0]:
                    target = args[0]
            elif dying:
                target = dying[0]
            if target is not None:
                other = args[1] if target is args[0] else args[0]
                lines.append(f"    {target.name} {sym}= {ref(other)}")
                node.name, node.owned = target.name, True
                for a in dying:
                    if a is not target and a.name not in free:
                        free.append(a.name)  # type: ignore[arg-type]
                continue
            expr = f"{ref(args[0])} {sym} {ref(args[1])}"
        if free:
            name = free.pop()
        else:
            name = f"t{count}"
            count += 1
        lines.append(f"    {name} = {expr}")
        node.name, node.owned = name, True
        for a in dying:
            if a.name != name and a.name not in free:
                free.append(a.name)  # type: ignore[arg-type]
    for i, out in enumerate(outputs):
        lines.append(f"    out[{i}] = {ref(out)}")
    return "\n".join(lines) + "\n"


def _float_sign(x: float) -> float:
    return float((x > 0.0) - (x < 0.0))


_KERNELS: weakref.WeakKeyDictionary[NumericModel, dict[tuple, Callable]] = weakref.WeakKeyDictionary()


def rnea_kernel(
    model: NumericModel, has_qd: bool, has_qdd: bool, gravity: bool, tip: bool, joint_terms: bool,
    scalar: bool = False,
) -> Callable[..., None]:
    """``kernel(q, qd, qdd, out)``: tau of shape (n, N) into ``out`` for joint-major q, qd, qdd (cached); with
    ``scalar``, one state: q, qd, qdd sequences of n floats, ``out`` a list of n."""
    key = (has_qd, has_qdd, gravity, tip, joint_terms)
    return _compiled(model, key, lambda: _trace(model, *key), scalar)


def crba_kernel(model: NumericModel, scalar: bool = False) -> Callable[..., None]:
    """``kernel(q, None, None, out)``: M(q) into ``out`` of shape (n * n, N), row-major (cached); with ``scalar``,
    one state: q a sequence of n floats, ``out`` a list of n * n."""
    return _compiled(model, "crba", lambda: _trace_crba(model), scalar)


def _compiled(model: NumericModel, key: Any, trace: Callable[[], tuple[_Tracer, list[Value]]],
              scalar: bool = False) -> Callable[..., None]:
    per_model = _KERNELS.setdefault(model, {})
    kernel = per_model.get((key, scalar))
    if kernel is None:
        T, outputs = trace()
        source = _emit(T, outputs, scalar)
        namespace: dict[str, Any] = ({"_cos": math.cos, "_sin": math.sin, "_sign": _float_sign} if scalar else
                                     {"_cos": np.cos, "_sin": np.sin, "_neg": np.negative, "_sign": np.sign})
        exec(compile(source, f"<robodyn rnea {model.name}>", "exec"), namespace)
        kernel = per_model[(key, scalar)] = namespace["kernel"]
        kernel.source = source
    return kernel

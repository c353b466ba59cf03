"""A customised Newton-Euler: the recursion of :mod:`robodyn.numeric.rnea` unrolled per model.

For one :class:`~robodyn.numeric.model.NumericModel` (and one choice of the switches of
:func:`robodyn.numeric.rnea.rnea`) the recursion is traced once, at compile time, over the scalar
components of every vector: each component is either a Python float (known at compile time) or a
row of N states. Products with exact zeros and ones are folded away (a right-angled DH twist has a
rotation whose entries are 0 and +-1, links have zero first-moment components, the base is at rest,
gravity has one component...), repeated sub-expressions are shared and results nobody reads are
dropped. What is left is written out as straight-line Python over NumPy rows of shape (N,), with
temporaries recycled (in-place updates where an operand dies), and compiled with :func:`exec`.
Evaluation is plain NumPy: no sympy, no loop over states.

Entries within 1e-15 of 0 or +-1 in the placements (cos(pi/2) = 6e-17) are snapped to them, which
changes the result by a relative 1e-16.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np

from robodyn.errors import finite_constant
from robodyn.numeric.model import NumericModel

_SNAP = 1e-15


class _Node:
    __slots__ = ("args", "key", "name", "op", "owned", "uses")

    def __init__(self, op: str, args: tuple, key: tuple) -> None:
        self.op, self.args, self.key = op, args, key
        self.uses = 0
        self.name: str | None = None
        self.owned = False


Value = float | _Node


class _Tracer:
    """Hash-consed expression graph over floats and row nodes, folding constants as it goes."""

    def __init__(self) -> None:
        self.table: dict[tuple, _Node] = {}
        self.inputs: list[_Node] = []

    def node(self, op: str, *args: Value) -> _Node:
        key = (op, *(a if isinstance(a, float) else id(a) for a in args))
        found = self.table.get(key)
        if found is None:
            found = self.table[key] = _Node(op, args, key)
        return found

    def input(self, expr: str) -> _Node:
        node = self.node("in", expr)  # type: ignore[arg-type]
        node.name = expr
        self.inputs.append(node)
        return node

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

    def lin(self, coeffs, values) -> Value:
        total: Value = 0.0
        for c, v in zip(coeffs, values, strict=True):
            total = self.add(total, self.mul(float(c), v))
        return total

    # vectors are lists of three Values
    def cross(self, a: list[Value], b: list[Value]) -> list[Value]:
        return [
            self.sub(self.mul(a[1], b[2]), self.mul(a[2], b[1])),
            self.sub(self.mul(a[2], b[0]), self.mul(a[0], b[2])),
            self.sub(self.mul(a[0], b[1]), self.mul(a[1], b[0])),
        ]

    def vadd(self, a: list[Value], b: list[Value]) -> list[Value]:
        return [self.add(x, y) for x, y in zip(a, b, strict=True)]

    def vsub(self, a: list[Value], b: list[Value]) -> list[Value]:
        return [self.sub(x, y) for x, y in zip(a, b, strict=True)]

    def scale(self, k: float, a: list[Value]) -> list[Value]:
        return [self.mul(float(k), x) for x in a]

    def matvec(self, A: np.ndarray, v: list[Value]) -> list[Value]:
        return [self.lin(A[r], v) for r in range(3)]


def _snap(A: np.ndarray) -> np.ndarray:
    A = np.array(A, dtype=float)
    for target in (0.0, 1.0, -1.0):
        A[np.abs(A - target) < _SNAP] = target
    return A


def _body(model: NumericModel, i: int) -> tuple[float, list[float], np.ndarray]:
    """(m, h, I_o) of link i with rounding noise (entries 1e-14 below the largest of theirs) zeroed."""
    m = float(model.mass[i])
    h = np.array(model.first_moment[i], dtype=float)
    I_o = np.array(model.inertia_origin[i], dtype=float)
    h[np.abs(h) < 1e-14 * np.abs(h).max(initial=0.0)] = 0.0
    I_o[np.abs(I_o) < 1e-14 * np.abs(I_o).max(initial=0.0)] = 0.0
    return m, [float(x) for x in h], I_o


def _trace(model: NumericModel, has_qd: bool, has_qdd: bool, gravity: bool, tip: bool, joint_terms: bool):
    T = _Tracer()
    n = model.n
    q = [T.input(f"q[{i}]") for i in range(n)]
    qd = [T.input(f"qd[{i}]") for i in range(n)] if has_qd else [0.0] * n
    qdd = [T.input(f"qdd[{i}]") for i in range(n)] if has_qdd else [0.0] * n
    zero = [0.0, 0.0, 0.0]
    base = (list(zero), list(zero), list(zero), [float(x) for x in (-model.gravity if gravity else np.zeros(3))])
    states = []  # per link: w, v, wd, a
    frames = []
    forces = []
    for i in range(n):
        w, v, wd, a = states[model.parent[i]] if model.parent[i] >= 0 else base
        E, c, s, p = frame = _frame(T, model, i, q[i])
        frames.append(frame)

        def to_child(x: list[Value], E=E, c=c, s=s) -> list[Value]:
            y = T.matvec(E.T, x)
            return [T.add(T.mul(c, y[0]), T.mul(s, y[1])), T.sub(T.mul(c, y[1]), T.mul(s, y[0])), y[2]]

        v = T.vadd(v, T.cross(w, p))
        a = T.vadd(a, T.cross(wd, p))
        w, v, wd, a = to_child(w), to_child(v), to_child(wd), to_child(a)
        rate = qd[i]
        if model.revolute[i]:
            w = [w[0], w[1], T.add(w[2], rate)]
            wd = T.vadd(wd, [T.mul(w[1], rate), T.neg(T.mul(w[0], rate)), 0.0])
            a = T.vadd(a, [T.mul(v[1], rate), T.neg(T.mul(v[0], rate)), 0.0])
            wd = [wd[0], wd[1], T.add(wd[2], qdd[i])]
        else:
            v = [v[0], v[1], T.add(v[2], rate)]
            a = T.vadd(a, [T.mul(w[1], rate), T.neg(T.mul(w[0], rate)), 0.0])
            a = [a[0], a[1], T.add(a[2], qdd[i])]
        states.append((w, v, wd, a))
        m, h, I_o = _body(model, i)
        ang = T.vadd(T.matvec(I_o, w), T.cross(h, v))
        linear = T.vadd(T.scale(m, v), T.cross(w, h))
        moment = T.vadd(T.vadd(T.matvec(I_o, wd), T.cross(h, a)), T.vadd(T.cross(w, ang), T.cross(v, linear)))
        force = T.vadd(T.vadd(T.scale(m, a), T.cross(wd, h)), T.cross(w, linear))
        forces.append((moment, force))

    acc = list(forces)  # per link: (moment, force) of the links it carries, the tip load on the last
    if tip and model.has_tip_load:
        acc[-1] = (T.vadd([float(x) for x in model.tip_moment], acc[-1][0]),
                   T.vadd([float(x) for x in model.tip_force], acc[-1][1]))
    tau: list[Value] = [0.0] * n
    for i in reversed(range(n)):
        nm, f = acc[i]
        t = nm[2] if model.revolute[i] else f[2]
        if joint_terms:
            t = T.add(t, T.mul(float(model.damping[i]), qd[i]))
            t = T.add(t, T.mul(float(model.armature[i]), qdd[i]))
        tau[i] = t
        lam = model.parent[i]
        if lam < 0:
            continue
        E, c, s, p = frames[i]

        def to_parent(x: list[Value], E=E, c=c, s=s) -> list[Value]:
            y = [T.sub(T.mul(c, x[0]), T.mul(s, x[1])), T.add(T.mul(s, x[0]), T.mul(c, x[1])), x[2]]
            return T.matvec(E, y)

        nm, f = to_parent(nm), to_parent(f)
        nm = T.vadd(nm, T.cross(p, f))
        acc[lam] = (T.vadd(nm, acc[lam][0]), T.vadd(f, acc[lam][1]))
    return T, tau


def _emit(T: _Tracer, outputs: list[Value]) -> str:
    """Straight-line source of ``kernel(q, qd, qdd, out)`` computing the outputs into the rows of ``out``."""
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
        elif node.op == "neg":
            if dying:
                node.name, node.owned = dying[0].name, True
                lines.append(f"    _neg({node.name}, out={node.name})")
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


def _frame(T: _Tracer, model: NumericModel, i: int, q_i: Value):
    """(E, c, s, p) of joint i: rotation E Rz(theta) (c, s = cos, sin theta) and origin p."""
    E = _snap(model.E[i])
    pK = _snap(model.p[i])
    if model.revolute[i]:
        c: Value = T.node("cos", q_i, float(model.theta0[i]))
        s: Value = T.node("sin", q_i, float(model.theta0[i]))
        p: list[Value] = [float(x) for x in pK + E[:, 2] * model.d0[i]]
    else:
        c, s = (float(x) for x in _snap(np.array([np.cos(model.theta0[i]), np.sin(model.theta0[i])])))
        d = T.add(q_i, float(model.d0[i]))
        p = [T.add(float(pK[r]), T.mul(float(E[r, 2]), d)) for r in range(3)]
    return E, c, s, p


def _to_parent(T: _Tracer, frame, x: list[Value]) -> list[Value]:
    E, c, s, _ = frame
    y = [T.sub(T.mul(c, x[0]), T.mul(s, x[1])), T.add(T.mul(s, x[0]), T.mul(c, x[1])), x[2]]
    return T.matvec(E, y)


def _trace_crba(model: NumericModel):
    """M(q) of the composite rigid body algorithm (as :func:`robodyn.numeric.crba.crba`), row-major n*n; on a
    tree each composite is carried into its parent's, and column i walks up the ancestors of i only."""
    T = _Tracer()
    n = model.n
    q = [T.input(f"q[{i}]") for i in range(n)]
    frames = [_frame(T, model, i, q[i]) for i in range(n)]
    composites = [None] * n
    empty = (0.0, [0.0, 0.0, 0.0], [[0.0] * 3 for _ in range(3)])
    carried: list = [None] * n  # per link: the composite of its children, in its frame
    for i in reversed(range(n)):
        m, h, I_o = carried[i] or empty
        mi, hi, Ii = _body(model, i)
        m = m + mi
        h = T.vadd(h, hi)
        I_o = [[T.add(I_o[a][b], float(Ii[a, b])) for b in range(3)] for a in range(3)]
        composites[i] = (m, h, I_o)
        lam = model.parent[i]
        if lam < 0:
            continue
        frame = frames[i]
        p = frame[3]
        r = _to_parent(T, frame, h)
        B = [_to_parent(T, frame, [I_o[a][b] for a in range(3)]) for b in range(3)]  # columns of R I
        rows = [_to_parent(T, frame, [B[b][a] for b in range(3)]) for a in range(3)]  # rows of R I R^T
        pp = T.lin([1.0, 1.0, 1.0], [T.mul(x, x) for x in p])
        pr = T.lin([1.0, 1.0, 1.0], [T.mul(x, y) for x, y in zip(p, r, strict=True)])
        diag = T.add(T.mul(m, pp), T.mul(2.0, pr))
        upper = {}
        for a in range(3):
            for b in range(a, 3):
                e = T.sub(rows[a][b], T.add(T.mul(m, T.mul(p[a], p[b])), T.add(T.mul(r[a], p[b]), T.mul(p[a], r[b]))))
                upper[a, b] = upper[b, a] = T.add(e, diag) if a == b else e
        I_o = [[upper[a, b] for b in range(3)] for a in range(3)]
        h = T.vadd(r, T.scale(m, p))
        if carried[lam] is not None:  # a second child: add the composites
            m0, h0, I0 = carried[lam]
            m, h, I_o = m0 + m, T.vadd(h0, h), [[T.add(I0[a][b], I_o[a][b]) for b in range(3)] for a in range(3)]
        carried[lam] = (m, h, I_o)
    M: list[Value] = [0.0] * (n * n)
    for i in range(n):
        mc, hc, Ic = composites[i]
        if model.revolute[i]:
            nm, f = [Ic[0][2], Ic[1][2], Ic[2][2]], [T.neg(hc[1]), hc[0], 0.0]
        else:
            nm, f = [hc[1], T.neg(hc[0]), 0.0], [0.0, 0.0, float(mc)]
        M[i * n + i] = T.add(nm[2] if model.revolute[i] else f[2], float(model.armature[i]))
        j = i
        while model.parent[j] >= 0:  # up the ancestors: M_ij = 0 for the other links
            nm, f = _to_parent(T, frames[j], nm), _to_parent(T, frames[j], f)
            nm = T.vadd(nm, T.cross(frames[j][3], f))
            j = model.parent[j]
            M[i * n + j] = M[j * n + i] = nm[2] if model.revolute[j] else f[2]
    return T, M


_KERNELS: weakref.WeakKeyDictionary[NumericModel, dict[tuple, Callable]] = weakref.WeakKeyDictionary()


def rnea_kernel(
    model: NumericModel, has_qd: bool, has_qdd: bool, gravity: bool, tip: bool, joint_terms: bool
) -> Callable[[np.ndarray, np.ndarray | None, np.ndarray | None, np.ndarray], None]:
    """``kernel(q, qd, qdd, out)``: tau of shape (n, N) into ``out`` for joint-major q, qd, qdd (cached)."""
    key = (has_qd, has_qdd, gravity, tip, joint_terms)
    return _compiled(model, key, lambda: _trace(model, *key))


def crba_kernel(model: NumericModel) -> Callable[[np.ndarray, None, None, np.ndarray], None]:
    """``kernel(q, None, None, out)``: M(q) into ``out`` of shape (n * n, N), row-major (cached)."""
    return _compiled(model, "crba", lambda: _trace_crba(model))


def _compiled(model: NumericModel, key, trace):
    per_model = _KERNELS.setdefault(model, {})
    kernel = per_model.get(key)
    if kernel is None:
        T, outputs = trace()
        source = _emit(T, outputs)
        namespace = {"_cos": np.cos, "_sin": np.sin, "_neg": np.negative}
        exec(compile(source, f"<robodyn rnea {model.name}>", "exec"), namespace)
        kernel = per_model[key] = namespace["kernel"]
        kernel.source = source  # type: ignore[attr-defined]
    return kernel

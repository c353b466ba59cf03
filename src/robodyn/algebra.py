"""The symbolic engine under the formulations, and the trigonometric canonical form.

Formulations build their expressions with symengine (a C++ library with sympy's
semantics): the PUMA's Newton-Euler recursion takes milliseconds there against tenths
of a second in sympy, and expanding tau_1 (11,500 terms) a quarter of a second
against minutes. The public API speaks sympy; :func:`to_sympy` converts at the door.

Canonical form. Joint angles only ever enter as sin(q_i) and cos(q_i) of single
coordinates (link transforms write cos(theta0 + q) as cos(theta0) cos(q) - sin(theta0) sin(q)),
and symbolic twists or offsets as sin and cos of single parameters. Expanding and then
reducing every sin(x)^k, k >= 2, with sin^2 = 1 - cos^2 leaves a polynomial in which each
sine has degree at most one. For independent arguments these monomials are linearly
independent functions, so two expressions are equal exactly when their canonical forms are
identical: this is the exact zero test used to show that formulations agree.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

import symengine as se
import sympy
from sympy.core.cache import clear_cache

SeExpr = Any  # symengine.Basic; symengine ships no type stubs
T = TypeVar("T")


def to_se(value: Any) -> SeExpr:
    """A sympy expression (or number) as a symengine expression."""
    return se.sympify(value)


def to_sympy(value: Any) -> sympy.Expr:
    """A symengine expression as a sympy expression."""
    return sympy.sympify(value)


def matrix_to_sympy(matrix: Any, *, nested: bool | NestedConverter = False) -> sympy.ImmutableMatrix:
    """A symengine matrix as a sympy matrix; ``nested``: by :class:`NestedConverter` (one conversion per distinct
    subexpression, shared between entries), for expressions built without expansion; a converter: by that one
    (shared with the matrices it converted before, too)."""
    convert = nested if isinstance(nested, NestedConverter) else NestedConverter() if nested else to_sympy
    rows = [[convert(matrix[i, j]) for j in range(matrix.cols)] for i in range(matrix.rows)]
    return sympy.ImmutableMatrix(rows) if rows else sympy.ImmutableMatrix.zeros(matrix.rows, matrix.cols)


class NestedConverter:
    """symengine -> sympy for expressions as a recursion builds them (nested, their subexpressions shared): each
    distinct node is converted once and the sympy result shares it too, so the cost follows the number of
    distinct subexpressions, not the size of the expanded tree (sympy's own conversion walks every path).
    Nodes are told apart by identity (:class:`NodeMemo`), never by comparing expressions."""

    _ARGUMENT = se.Symbol("_robodyn_argument")

    #: Shared by every converter of the process: (sympy class, ids of the arguments) -> the one such expression,
    #: and the id of each expression met -> (it, kept alive; its shared equal). Conversions made apart give the
    #: same objects: sympy's cache (of its constructors, cse, printing) holds expressions of earlier conversions,
    #: and meeting an equal one built apart there compares the two whole, exponentially (a second derivation of
    #: a 12-joint chain took seconds per part instead of tenths). Emptied, with sympy's cache, past
    #: :attr:`LIMIT` expressions.
    shared: ClassVar[dict[Any, sympy.Expr]] = {}
    seen: ClassVar[dict[int, tuple[sympy.Expr, sympy.Expr]]] = {}
    LIMIT = 2_000_000

    def __init__(self) -> None:
        self.done: NodeMemo[sympy.Expr] = NodeMemo()
        self.built: dict[Any, sympy.Expr] = {}  # (operation, ids of the converted arguments) -> its conversion
        if len(self.seen) > self.LIMIT:
            self.shared.clear()
            self.seen.clear()
            clear_cache()

    def __call__(self, expr: Any) -> sympy.Expr:
        result = bottom_up(to_se(expr), self.done, self._node)
        assert result is not None  # _node always gives a result
        return result

    def _node(self, node: Any, args: list[sympy.Expr]) -> sympy.Expr:
        """The conversion of ``node``, one sympy object for equal nodes as far as their arguments' conversions are
        one object each: the key is computed once, from the arguments' ids, and no expression is compared (sympy
        too compares expressions whole, and equal ones built apart share nothing)."""
        if not args:
            key: Any = node  # an atom: compared cheaply
        else:
            operation = self._operation(node, len(args))
            ids = tuple(id(a) for a in args)
            key = (operation, tuple(sorted(ids)) if operation in (sympy.Add, sympy.Mul) else ids)
        if key not in self.built:
            self.built[key] = self._share(to_sympy(node) if not args else operation(*args))
        return self.built[key]

    def _share(self, expr: sympy.Expr) -> sympy.Expr:
        """``expr`` with each of its subexpressions replaced by the equal one met before, if any: sympy's
        evaluation builds new ones (2.0*(x + y) as 2.0*x + 2.0*y, -(x - y) as y - x) equal to others, and cse and
        printing compare those whole. Keyed by the arguments' ids, bottom-up, each object once."""
        seen = self.seen
        if id(expr) in seen:
            return seen[id(expr)][1]
        if expr.args:
            args = [self._share(a) for a in expr.args]  # only the new part of a result is walked: shallow
            key: Any = (expr.func, tuple(id(a) for a in args))
            if key not in self.shared:
                self.shared[key] = self._rebuilt(expr, args)
        else:
            key = (type(expr), expr)  # an atom: compared cheaply
            self.shared.setdefault(key, expr)
        one = self.shared[key]
        seen[id(expr)] = (expr, one)
        seen.setdefault(id(one), (one, one))
        return one

    @staticmethod
    def _rebuilt(expr: sympy.Expr, args: list[sympy.Expr]) -> sympy.Expr:
        """``expr`` on ``args`` (equal to its own, one by one) as they are: not evaluated again, which would build
        new terms (a sum's coefficients are split off and put back); ``expr`` itself where that cannot be done."""
        if all(a is b for a, b in zip(args, expr.args, strict=True)):
            return expr
        if isinstance(expr, (sympy.Add, sympy.Mul)):
            return expr.func._from_args(args, expr.is_commutative)
        again = expr.func(*args)
        kept = len(again.args) == len(args) and all(a is b for a, b in zip(args, again.args, strict=True))
        return again if kept else expr

    def _operation(self, node: Any, arity: int) -> Any:
        if isinstance(node, se.Add):
            return sympy.Add
        if isinstance(node, se.Mul):
            return sympy.Mul
        if isinstance(node, se.Pow):
            return sympy.Pow
        # sin, cos, ...: sympy's class; distinct arguments for atan2 (atan2(x, x) is pi/4)
        arguments = [self._ARGUMENT] if arity == 1 else [se.Symbol(f"_robodyn_argument{k}") for k in range(arity)]
        return node.func(*arguments)._sympy_().func


def _address(node: SeExpr) -> int:
    """The address of the C++ node that a symengine wrapper holds: its first field after the object header, the
    reference-counted pointer ``thisptr`` of symengine's ``cdef class Basic`` (every expression class derives
    from it). Each access to ``.args`` makes new wrappers of the same C++ nodes, so ``id()`` cannot tell them."""
    return _POINTER_AT(id(node) + _HEADER).value or 0


_POINTER_AT, _HEADER = ctypes.c_void_p.from_address, object.__basicsize__


def _addresses_work() -> bool:
    """Whether :func:`_address` reads symengine's layout as assumed: ``Basic`` adds exactly one pointer to the
    object header, the wrappers of one node agree, and distinct nodes differ."""
    if se.Basic.__basicsize__ != object.__basicsize__ + ctypes.sizeof(ctypes.c_void_p):
        return False
    x, y = se.symbols("_robodyn_x _robodyn_y")
    shared = se.sin(x) + y
    expr = se.cos(shared) + se.sin(shared)
    inner = {_address(f.args[0]) for f in expr.args}
    return inner == {_address(shared)} and len({_address(f) for f in expr.args}) == 2 and 0 not in inner


#: False where symengine's object layout is not the one :func:`_address` reads: :class:`NodeMemo` then keys by
#: the expressions themselves (correct, but with symengine's hash collisions slow on heavily shared expressions).
BY_ADDRESS = _addresses_work()


class NodeMemo(Generic[T]):
    """A memo of symengine nodes keyed by identity (the C++ node's address, :func:`_address`), each node kept
    alive in it so that its address is not reused. Keying by the expressions (a dict) compares colliding keys
    for equality, and symengine's hash collides often on the shared subexpressions of a recursion (1,446
    distinct hashes for 1,790 nodes of a 10-joint inertia matrix) while its equality test walks both operands
    whole: exponential on expressions that share their parts. Equal nodes built apart are two entries (each
    done once): a walk with this memo visits each C++ node once."""

    key: Callable[[SeExpr], Any] = staticmethod(_address if BY_ADDRESS else lambda node: node)

    def __init__(self) -> None:
        self.entries: dict[Any, tuple[SeExpr, T]] = {}  # key -> (node, value)

    def __contains__(self, node: SeExpr) -> bool:
        return self.key(node) in self.entries

    def __getitem__(self, node: SeExpr) -> T:
        return self.entries[self.key(node)][1]

    def __setitem__(self, node: SeExpr, value: T) -> None:
        self.entries[self.key(node)] = (node, value)

    def __len__(self) -> int:
        return len(self.entries)


def bottom_up(root: SeExpr, memo: NodeMemo[T], visit: Callable[[SeExpr, list[T]], T | None]) -> T | None:
    """``visit(node, results of its arguments)`` for each node of ``root`` not yet in ``memo``, arguments first,
    each node once (results kept in ``memo``, shared between calls); the result for ``root``, or None as soon as
    a visit gives None. Post-order without recursion: the nesting may be deeper than Python's stack. A node's
    ``.args`` is read once: symengine builds some arguments anew on each access (a term 2*x*y of a sum, a power
    of a product), and those are kept with their parent until it is visited."""
    key, entries = memo.key, memo.entries
    root_key = key(root)
    stack: list[tuple[SeExpr, Any, list[tuple[SeExpr, Any]] | None]] = [(root, root_key, None)]
    while stack:
        node, node_key, args = stack.pop()
        if node_key in entries:
            continue
        if args is None:
            args = [(a, key(a)) for a in node.args]
            stack.append((node, node_key, args))
            stack.extend((a, a_key, None) for a, a_key in args if a_key not in entries)
            continue
        result = visit(node, [entries[a_key][1] for _, a_key in args])
        if result is None:
            return None
        entries[node_key] = (node, result)
    return entries[root_key][1]


class ShapeMemo(Generic[T]):
    """A memo keyed by expressions as a dict would be (equal expressions share an entry, wherever they were
    built), without comparing expressions: each node's shape, a number, is computed once, bottom-up, from the
    shapes of its arguments (in any order for a sum or a product), its nodes told apart by identity
    (:class:`NodeMemo`). Only atoms are compared, and undefined functions (their name is no argument)."""

    def __init__(self) -> None:
        self._nodes: NodeMemo[int] = NodeMemo()
        self._shapes: dict[Any, int] = {}
        self._values: dict[int, T] = {}

    def shape(self, node: SeExpr) -> int:
        known = self._nodes.entries.get(self._nodes.key(node))
        if known is not None:
            return known[1]
        result = bottom_up(node, self._nodes, self._shape)
        assert result is not None  # _shape always gives a result
        return result

    def _shape(self, node: SeExpr, args: list[int]) -> int:
        if not args or isinstance(node, se.FunctionSymbol):
            key: Any = ("node", node)
        elif isinstance(node, (se.Add, se.Mul)):
            key = (type(node), tuple(sorted(args)))
        else:
            key = (type(node), tuple(args))
        return self._shapes.setdefault(key, len(self._shapes))

    def __contains__(self, node: SeExpr) -> bool:
        return self.shape(node) in self._values

    def __getitem__(self, node: SeExpr) -> T:
        return self._values[self.shape(node)]

    def __setitem__(self, node: SeExpr, value: T) -> None:
        self._values[self.shape(node)] = value

def vector(values: Iterable[Any]) -> se.DenseMatrix:
    """A symengine column vector."""
    return se.DenseMatrix([[to_se(v)] for v in values])


def zeros(rows: int, cols: int = 1) -> se.DenseMatrix:
    return se.zeros(rows, cols)


def cross(a: se.DenseMatrix, b: se.DenseMatrix) -> se.DenseMatrix:
    """a x b for symengine 3-vectors, skipping products with exact zeros."""
    return se.DenseMatrix(
        [
            [_mul(a[1], b[2]) - _mul(a[2], b[1])],
            [_mul(a[2], b[0]) - _mul(a[0], b[2])],
            [_mul(a[0], b[1]) - _mul(a[1], b[0])],
        ]
    )


def dot(a: se.DenseMatrix, b: se.DenseMatrix) -> SeExpr:
    return sum((_mul(a[k], b[k]) for k in range(a.rows)), se.Integer(0))


def _mul(x: SeExpr, y: SeExpr) -> SeExpr:
    return se.Integer(0) if x == 0 or y == 0 else x * y


def trig_reduction(expr: SeExpr) -> dict[SeExpr, SeExpr]:
    """The replacements sin(x)^k -> sin(x)^(k mod 2) (1 - cos(x)^2)^(k div 2) present in expr,
    for every argument x: joint angles, and symbolic twists or offsets alike."""
    replacements = {}
    for power in expr.atoms(se.Pow):
        base, exponent = power.args
        if isinstance(base, se.sin) and exponent.is_integer and int(exponent) >= 2:
            k = int(exponent)
            replacements[power] = base ** (k % 2) * (1 - se.cos(base.args[0]) ** 2) ** (k // 2)
    return replacements


def canonical(expr: Any, angles: Sequence[Any] = ()) -> SeExpr:
    """Expanded, with every sine of degree at most one (see the module docstring).

    ``angles`` is kept for callers that name the joint angles; every sin(x)^2 is reduced, whatever
    x is (a symbolic twist alpha_i enters as cos(alpha_i), sin(alpha_i) too)."""
    result = se.expand(to_se(expr))
    for _ in range(4):  # one pass suffices; the loop is a guard
        replacements = trig_reduction(result)
        if not replacements:
            return result
        result = se.expand(result.xreplace(replacements))
    return result


def is_zero(expr: Any, angles: Sequence[Any]) -> bool:
    """Exact test that ``expr`` vanishes for all joint angles and parameters (see module doc)."""
    return canonical(expr, angles) == 0


def count_terms(expr: Any) -> int:
    """Number of terms of an expanded expression (1 for a non-sum)."""
    e = to_se(expr)
    return len(e.args) if isinstance(e, se.Add) else (0 if e == 0 else 1)

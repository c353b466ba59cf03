"""A whitelist parser for the expressions found in model files.

Model files come from other people, so reading one must never run code. Strings
such as ``"pi/2"`` or ``"m2*l2**2/12"`` are parsed with :mod:`ast` and every node
is checked against a short whitelist (numbers, parameter names, ``+ - * / **``,
parentheses, ``pi``, ``sqrt``, ``sin``, ``cos``) before a sympy expression is built
from it by hand. Neither ``eval`` nor a bare ``sympify`` ever sees the text.

The printer at the bottom writes expressions back in the same language, with
floats printed by ``repr`` so that a model file round-trips exactly.

Names. Robot names and parameter names follow one grammar, :data:`IDENTIFIER`: an ASCII letter,
then ASCII letters, digits and underscores, at most :data:`MAX_NAME_LENGTH` characters
(``puma560``, ``L1``, ``m_2``). Parameter names must also not be a joint variable (``q1``, ``qd1``,
``qdd1``: :data:`RESERVED`) nor a word of the expression language (``pi``, ``sqrt``, ``sin``,
``cos``, ``nan``, ``inf``). Every name that reaches generated code, a file name or a message
therefore holds no quote, comment marker, markup or path separator; names from elsewhere (a URDF
``<robot name>``) are mapped to this grammar by :func:`to_identifier`.
"""

from __future__ import annotations

import ast
import math
import numbers
import re
import reprlib
from collections.abc import Mapping

import sympy
from sympy.printing.str import StrPrinter

from robodyn.errors import ModelError

MAX_LENGTH = 2000  # characters in one expression
MAX_EXPONENT = 64  # |n| in x**n for a numeric exponent
MAX_DEPTH = 60  # nesting depth of the syntax tree
MAX_DIGITS = 300  # decimal digits of an exact number (numerator or denominator)
#: The largest magnitude of a number in a model or bound to a parameter: far beyond any unit system a robot
#: is described in, and low enough that the products of the dynamics (a handful of factors) stay finite doubles.
MAX_MAGNITUDE = 1e20
#: The most terms one model expression may have once expanded, as estimated by :func:`expansion_cost` without
#: expanding (``(a1+...+a8)**64`` is 29 characters and 1.3e9 terms; the product of 30 binomials 1.1e9 terms). The
#: built-in robots, the test models and the fuzz corpus's valid models have at most a handful of terms per field.
MAX_TERMS = 100
#: The highest polynomial degree of one model expression (same estimate; a parameter and ``sin(x)`` have degree 1,
#: a number degree 0). Built-in and test models reach degree 3 (``m*l**2/12``).
MAX_DEGREE = 32

FUNCTIONS = {"sqrt": sympy.sqrt, "sin": sympy.sin, "cos": sympy.cos}
CONSTANTS = {"pi": sympy.pi}

#: Names reserved for the fixed symbols of the dynamics (joint coordinates and derivatives).
RESERVED = re.compile(r"^(q|qd|qdd)\d+$")
#: The most characters in a robot or parameter name.
MAX_NAME_LENGTH = 64
#: The one grammar of robot and parameter names (see the module docstring); use ``fullmatch``.
IDENTIFIER = re.compile(rf"[A-Za-z][A-Za-z0-9_]{{0,{MAX_NAME_LENGTH - 1}}}")
IDENTIFIER_TEXT = f"an ASCII letter, then letters, digits and _, at most {MAX_NAME_LENGTH} characters"
#: Words of the expression language, which no parameter may be named (the last three in any case).
WORDS = {"pi", "sqrt", "sin", "cos"}
NOT_FINITE = {"nan", "inf", "infinity"}


def check_name(value: object, field: str = "name") -> str:
    """``value`` if it is a name of the :data:`IDENTIFIER` grammar, else a :class:`ModelError` naming ``field``."""
    if not isinstance(value, str):
        raise ModelError(f"expected a name, got {type(value).__name__} {shown(value)}", field=field)
    if not IDENTIFIER.fullmatch(value):
        raise ModelError(f"{shown(value)} is not a valid name ({IDENTIFIER_TEXT})", field=field)
    return value


def check_text(value: object, field: str) -> str:
    """``value`` if it is text made of Unicode scalar values (no lone surrogate such as ``"\\ud800"``, which a YAML
    or JSON escape can write and no file or terminal can encode); else one :class:`ModelError` naming ``field``
    (and the character's position)."""
    if not isinstance(value, str):
        raise ModelError(f"expected text, got {type(value).__name__}", field=field)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ModelError(f"not valid Unicode text: a lone surrogate {value[exc.start]!a} at character "
                         f"{exc.start + 1}", field=field) from None
    return value


def check_parameter_name(value: object, field: str = "value") -> str:
    """A parameter name: :func:`check_name`, and neither a joint variable nor a word of the expression language."""
    name = check_name(value, field)
    if RESERVED.fullmatch(name):
        raise ModelError(f"'{name}' is reserved for the joint variables and cannot be a parameter", field=field)
    if name in WORDS or name.lower() in NOT_FINITE:
        raise ModelError(f"'{name}' is a word of the expression language and cannot be a parameter", field=field)
    return name


def to_identifier(text: str, *, prefix: str = "robot", limit: int = MAX_NAME_LENGTH) -> str:
    """A name of the :data:`IDENTIFIER` grammar made from any text (a URDF name): runs of other characters
    become ``_``, ``prefix_`` goes before a name that does not start with a letter, at most ``limit``
    characters."""
    cleaned = re.sub(r"[^0-9A-Za-z_]+", "_", text).strip("_")
    if not cleaned or not cleaned[0].isalpha():
        cleaned = f"{prefix}_{cleaned}"
    return cleaned[:limit].rstrip("_")


def parameter_symbol(name: str) -> sympy.Symbol:
    """The sympy symbol of a model parameter.

    Plain symbols (no assumptions), so that a round trip through symengine gives
    back the very same symbol.
    """
    return sympy.Symbol(name)


_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 60
_SHORT.maxlist = _SHORT.maxdict = 4
_SHORT.maxlevel = 2


def shown(value: object) -> str:
    """A short repr of a user's value for an error message (never the whole of a huge value)."""
    if isinstance(value, sympy.Basic):
        text = str(value)
        return text if len(text) <= 60 else text[:28] + "..." + text[-28:]
    return _SHORT.repr(value)


def _too_big(expr: sympy.Basic) -> bool:
    if expr.is_Rational:
        return max(abs(int(expr.p)), int(expr.q)).bit_length() > MAX_DIGITS * 3.33
    return False


def to_expr(value: object, field: str = "value") -> sympy.Expr:
    """Turn a number, a string or a sympy expression into a checked sympy expression.

    Raises :class:`ModelError` naming ``field`` for anything else, for NaN or
    infinity, and for strings outside the whitelist.
    """
    if isinstance(value, bool):
        raise ModelError(f"expected a number or an expression, got {value!r}", field=field)
    if isinstance(value, sympy.Basic):  # before numbers.Real: a sympy Rational is a Real but must stay exact
        return _check_sympy(value, field)
    if isinstance(value, numbers.Integral):
        if int(value).bit_length() > MAX_DIGITS * 3.33:
            raise ModelError(f"integer with more than {MAX_DIGITS} digits", field=field)
        return _check_sympy(sympy.Integer(int(value)), field)
    if isinstance(value, numbers.Real):
        try:
            x = float(value)
        except OverflowError:
            raise ModelError("number too large", field=field) from None
        if not math.isfinite(x):
            raise ModelError(f"{x} is not a finite number", field=field)
        return _check_sympy(sympy.Float(x), field)
    if isinstance(value, str):
        return parse_expression(value, field=field)
    if isinstance(value, sympy.Basic):
        return _check_sympy(value, field)
    raise ModelError(
        f"expected a number or an expression, got {type(value).__name__} {shown(value)}", field=field
    )


def _check_sympy(expr: sympy.Basic, field: str) -> sympy.Expr:
    if expr.is_Number and expr.is_finite and expr.is_real:  # a plain number (most fields): its two bounds only
        if _too_big(expr):
            raise ModelError(f"a number with more than {MAX_DIGITS} digits", field=field)
        if abs(expr) > MAX_MAGNITUDE:
            raise ModelError(f"{shown(expr)} holds a number of magnitude above {MAX_MAGNITUDE:g}", field=field)
        return expr
    if not isinstance(expr, sympy.Expr):
        raise ModelError(f"expected a scalar expression, got {shown(expr)}", field=field)
    if any(_too_big(atom) for atom in expr.atoms(sympy.Rational)):
        raise ModelError(f"a number with more than {MAX_DIGITS} digits", field=field)
    if any(abs(atom) > MAX_MAGNITUDE for atom in expr.atoms(sympy.Number) if atom.is_finite):
        raise ModelError(f"{shown(expr)} holds a number of magnitude above {MAX_MAGNITUDE:g}", field=field)
    if expr.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
        raise ModelError(f"{shown(expr)} is not finite", field=field)
    if expr.has(sympy.I):
        raise ModelError(f"{shown(expr)} is not real", field=field)
    for s in expr.free_symbols:
        check_parameter_name(s.name if isinstance(s, sympy.Symbol) else s, field)
    check_cost(expr, field)
    if expr.is_number:
        value = complex(expr.evalf())
        if value.imag != 0 or not math.isfinite(value.real):
            raise ModelError(f"{expr} is not a finite real number", field=field)
        if abs(value.real) > MAX_MAGNITUDE:
            raise ModelError(f"{shown(expr)} is larger than {MAX_MAGNITUDE:g} in magnitude", field=field)
    return expr


def _multiset_count(m: int, k: int, cap: int) -> int:
    """C(m + k - 1, k), the number of monomials of degree k in m variables (the terms of a sum of m terms to the
    power k), or ``cap + 1`` where it is larger: a logarithmic estimate first, so that the exact count is only
    computed when it is small (C(n, r) with r = min(k, m - 1) under 100 steps)."""
    if m <= 1 or k <= 0:
        return 1
    log_count = math.lgamma(m + k) - math.lgamma(k + 1) - math.lgamma(m)
    if log_count > math.log(cap) + 1:
        return cap + 1
    return min(math.comb(m + k - 1, min(k, m - 1)), cap + 1)


#: Estimates saturate here (far above every limit): the cost of a crafted expression stays a few small integers.
_SATURATED = 10**30


class _Cost:
    """The recursive estimate of :func:`expansion_cost`, memoized over the (shared) subexpressions."""

    def __init__(self) -> None:
        self.memo: dict[sympy.Basic, tuple[int, int]] = {}
        self.peak = (0, 0)

    def visit(self, expr: sympy.Basic) -> tuple[int, int]:
        if expr in self.memo:
            return self.memo[expr]
        terms, degree = self.estimate(expr)
        terms, degree = min(terms, _SATURATED), min(degree, _SATURATED)
        self.memo[expr] = terms, degree
        self.peak = max(self.peak[0], terms), max(self.peak[1], degree)
        return terms, degree

    def estimate(self, expr: sympy.Basic) -> tuple[int, int]:
        if expr.is_Number or expr.is_NumberSymbol:
            return 1, 0
        if expr.is_Symbol:
            return 1, 1
        if expr.is_Add:
            parts = [self.visit(a) for a in expr.args]
            return sum(t for t, _ in parts), max(d for _, d in parts)
        if expr.is_Mul:
            terms, degree = 1, 0
            for a in expr.args:
                t, d = self.visit(a)
                terms, degree = min(terms * t, _SATURATED), degree + d
            return terms, degree
        if expr.is_Pow:
            base_terms, base_degree = self.visit(expr.base)
            exponent = expr.exp
            self.visit(exponent)
            if not exponent.is_Number:  # x**y: an opaque factor (its base and exponent are counted on their own)
                return 1, 1
            value = abs(float(exponent))
            if not math.isfinite(value):
                return _SATURATED, _SATURATED
            whole = int(value)  # (a+b)**(5/2) expands to (a+b)**2 * sqrt(a+b); 1/(a+b)**k costs as (a+b)**k
            fraction = 1 if value != whole else 0
            return _multiset_count(base_terms, whole, _SATURATED), whole * base_degree + fraction
        for a in expr.args:  # a function (sqrt, sin, cos): one opaque factor, its argument counted on its own
            self.visit(a)
        return 1, 1 if expr.free_symbols else 0


def expansion_cost(expr: sympy.Basic) -> tuple[int, int]:
    """Upper bounds on (number of terms, polynomial degree) of ``expr`` once expanded, computed without expanding.

    The recursive estimate over the expression tree: a number or a symbol is one term (degree 0 or 1); terms(a+b)
    = terms(a) + terms(b), terms(a*b) = terms(a) * terms(b); a sum of m terms to an integer power k has at most
    C(m+k-1, k) terms (a negative or fractional power counts as its whole part); a function (``sin(x)``) or a
    symbolic power is one term of degree 1. The result is the largest estimate of any subexpression, so that the
    argument of a function is bounded as well. Saturates at 10**30.
    """
    cost = _Cost()
    cost.visit(expr)
    return cost.peak


def check_cost(expr: sympy.Basic, field: str = "value") -> None:
    """A :class:`ModelError` naming ``field`` if :func:`expansion_cost` of ``expr`` is above :data:`MAX_TERMS`
    terms or :data:`MAX_DEGREE` (the derivation expands products of the model's expressions)."""
    terms, degree = expansion_cost(expr)
    if terms > MAX_TERMS:
        raise ModelError(f"{shown(expr)} would expand to an estimated {_count(terms)} terms (at most {MAX_TERMS})",
                         field=field)
    if degree > MAX_DEGREE:
        raise ModelError(f"{shown(expr)} has an estimated polynomial degree of {_count(degree)} (at most "
                         f"{MAX_DEGREE})", field=field)


def _count(value: int) -> str:
    return f"more than {_SATURATED:.0e}" if value >= _SATURATED else f"{value:,}" if value < 10**9 else f"{value:.2g}"


def parse_expression(text: str, field: str = "value") -> sympy.Expr:
    """Parse one expression string with the whitelist; see the module docstring."""
    source = text.strip()
    if not source:
        raise ModelError("empty expression", field=field)
    if len(source) > MAX_LENGTH:
        raise ModelError(f"expression longer than {MAX_LENGTH} characters", field=field)
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ModelError(f"cannot parse expression {shown(source)} ({exc.__class__.__name__})", field=field) from None
    try:
        expr = _Builder(source, field).build(tree.body, 0)
    except RecursionError:
        raise ModelError(f"expression {shown(source)} is nested too deeply", field=field) from None
    return _check_sympy(expr, field)


class _Builder:
    """Walks a parsed expression, refusing every node outside the whitelist."""

    def __init__(self, source: str, field: str) -> None:
        self.source = source
        self.field = field

    def fail(self, why: str) -> ModelError:
        return ModelError(f"{why} in expression {shown(self.source)}", field=self.field)

    def build(self, node: ast.AST, depth: int) -> sympy.Expr:
        if depth > MAX_DEPTH:
            raise self.fail("nesting too deep")
        if isinstance(node, ast.Constant):
            return self.constant(node.value)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.build(node.operand, depth + 1)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp):
            return self.binop(node, depth)
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        raise self.fail(f"'{type(node).__name__}' is not allowed")

    def constant(self, value: object) -> sympy.Expr:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(f"literal {value!r} is not a number")
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail("non-finite number")
        return sympy.Integer(value) if isinstance(value, int) else sympy.Float(value)

    def name(self, ident: str) -> sympy.Expr:
        if ident in CONSTANTS:
            return CONSTANTS[ident]
        if ident in FUNCTIONS:
            raise self.fail(f"function '{ident}' used without arguments")
        if ident.lower() in NOT_FINITE:
            raise self.fail(f"'{ident}' is not a finite number")
        if not IDENTIFIER.fullmatch(ident):
            raise self.fail(f"name {shown(ident)} is not allowed ({IDENTIFIER_TEXT})")
        if RESERVED.fullmatch(ident):
            raise self.fail(f"'{ident}' is reserved for the joint variables")
        return parameter_symbol(ident)

    def binop(self, node: ast.BinOp, depth: int) -> sympy.Expr:
        left = self.build(node.left, depth + 1)
        right = self.build(node.right, depth + 1)
        if _too_big(left) or _too_big(right):
            raise self.fail(f"a number with more than {MAX_DIGITS} digits")
        op = node.op
        if isinstance(op, ast.Add):
            return left + right
        if isinstance(op, ast.Sub):
            return left - right
        if isinstance(op, ast.Mult):
            return left * right
        if isinstance(op, ast.Div):
            if right.is_zero:  # Float(0.0) == 0 is False in sympy; is_zero sees both
                raise self.fail("division by zero")
            return left / right
        if isinstance(op, ast.Pow):
            if right.is_number:
                exponent = float(right)
                if abs(exponent) > MAX_EXPONENT:
                    raise self.fail(f"exponent {shown(right)} is larger than {MAX_EXPONENT}")
                if left.is_zero and exponent < 0:
                    raise self.fail("division by zero")
                magnitude = abs(math.log10(abs(complex(left)))) if left.is_number and not left.is_zero else 0.0
                digits = abs(exponent) * magnitude
                if digits > MAX_DIGITS:
                    raise self.fail(f"a number with more than {MAX_DIGITS} digits")
            return left**right
        raise self.fail(f"operator '{type(op).__name__}' is not allowed")

    def call(self, node: ast.Call, depth: int) -> sympy.Expr:
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            shown = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
            raise self.fail(f"call of '{shown}' is not allowed (only {', '.join(sorted(FUNCTIONS))})")
        if node.keywords or len(node.args) != 1:
            raise self.fail(f"'{node.func.id}' takes exactly one argument")
        return FUNCTIONS[node.func.id](self.build(node.args[0], depth + 1))


class _ExplicitBuilder(_Builder):
    """The whitelist builder for text that robodyn wrote (JSON equations): every name is looked up in an
    explicit table of symbols, joint variables included, and sums and products are built flat (a long sum is
    a long chain of ``+`` in the syntax tree, not deep nesting)."""

    def __init__(self, source: str, field: str, symbols: Mapping[str, sympy.Symbol]) -> None:
        super().__init__(source, field)
        self.symbols = symbols

    def name(self, ident: str) -> sympy.Expr:
        if ident in CONSTANTS:
            return CONSTANTS[ident]
        if ident not in self.symbols:
            raise self.fail(f"unknown name {shown(ident)}")
        return self.symbols[ident]

    def binop(self, node: ast.BinOp, depth: int) -> sympy.Expr:
        for ops, combine in (((ast.Add, ast.Sub), sympy.Add), ((ast.Mult, ast.Div), sympy.Mul)):
            if isinstance(node.op, ops):
                return combine(*self.chain(node, ops, depth))
        return super().binop(node, depth)

    def chain(self, node: ast.AST, ops: tuple[type, ...], depth: int) -> list[sympy.Expr]:
        """The operands of ``a op b op c ...`` (``-b`` for ``- b``, ``1/b`` for ``/ b``), left to right."""
        operands = []
        while isinstance(node, ast.BinOp) and isinstance(node.op, ops):
            right = self.build(node.right, depth + 1)
            if isinstance(node.op, ast.Div) and right.is_zero:  # Float(0.0) == 0 is False in sympy
                raise self.fail("division by zero")
            operands.append(-right if isinstance(node.op, ast.Sub) else 1 / right if isinstance(node.op, ast.Div)
                            else right)
            node = node.left
        operands.append(self.build(node, depth + 1))
        return operands[::-1]


def read_expression(text: str, symbols: Mapping[str, sympy.Symbol], field: str = "value") -> sympy.Expr:
    """Parse an expression written by :func:`expression_text` (the JSON equations) with the whitelist, each
    name one of ``symbols``: a parameter named ``I``, ``E``, ``S``, ``N``, ``O`` or ``Q`` stays that
    parameter (``sympify`` would read sympy's constants), and no text is ever evaluated."""
    if not isinstance(text, str) or not text.strip():
        raise ModelError(f"expected an expression, got {shown(text)}", field=field)
    try:
        tree = ast.parse(text.strip(), mode="eval")
        return _ExplicitBuilder(text, field, symbols).build(tree.body, 0)
    except ModelError:
        raise
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ModelError(f"cannot parse expression {shown(text)} ({exc.__class__.__name__})", field=field) from None


class _ModelPrinter(StrPrinter):
    """sympy's str printer, but floats are written with ``repr`` (exact round trip)."""

    def _print_Float(self, expr: sympy.Float) -> str:
        return repr(float(expr))


_PRINTER = _ModelPrinter()


def expression_text(expr: sympy.Expr) -> str:
    """``expr`` in the expression language, floats exact (read back by :func:`read_expression`)."""
    return _PRINTER.doprint(expr)


def format_expression(expr: sympy.Expr) -> int | float | str:
    """The value to write in a model file: a plain number where possible, else a string."""
    if expr.is_Integer:
        return int(expr)
    if expr.is_Float:
        return float(expr)
    return _PRINTER.doprint(expr)

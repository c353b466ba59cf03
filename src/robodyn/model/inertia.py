"""Inertia tensors: input shapes, the physical checks, and the pseudo-inertia matrix.

Convention (said wherever a user types one): a link's inertia is the tensor about
its centre of mass, axes parallel to the link frame, so the off-diagonal entries are
*minus* the products of inertia (I_xy = -integral(x y dm)).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import sympy

from robodyn.errors import ModelError, ModelWarning
from robodyn.model.expr import shown, to_expr

#: Relative tolerance of the numeric checks (symmetry, semidefiniteness, triangle inequality).
TOLERANCE = 1e-9


def as_vector3(value: object, field: str) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
    """A 3-vector of checked expressions."""
    if isinstance(value, sympy.MatrixBase):
        value = list(value)
    if isinstance(value, (str, bytes)) or (not isinstance(value, Sequence) and not hasattr(value, "__len__")):
        raise ModelError(f"expected a list of 3 numbers or expressions, got {shown(value)}", field=field)
    items = list(value)  # type: ignore[call-overload]
    if len(items) != 3:
        raise ModelError(f"expected 3 components, got {len(items)}", field=field)
    x, y, z = (to_expr(v, f"{field}[{k}]") for k, v in enumerate(items))
    return (x, y, z)


def as_inertia(value: object, field: str = "inertia") -> sympy.ImmutableMatrix:
    """A 3x3 tensor from a 3x3 nested list, a 3-list (diagonal) or a sympy matrix."""
    if isinstance(value, sympy.MatrixBase):
        if value.shape != (3, 3):
            raise ModelError(f"expected a 3x3 matrix, got shape {value.shape}", field=field)
        value = value.tolist()
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise ModelError(
            f"expected a 3x3 matrix or a list of 3 principal moments, got {shown(value)}", field=field
        )
    rows = list(value)
    if len(rows) == 3 and not any(isinstance(r, (list, tuple)) for r in rows):
        diag = [to_expr(v, f"{field}[{k}]") for k, v in enumerate(rows)]
        return sympy.ImmutableMatrix(sympy.diag(*diag))
    if len(rows) != 3 or any(not isinstance(r, (list, tuple)) or len(r) != 3 for r in rows):
        raise ModelError("expected a 3x3 matrix (3 rows of 3) or a list of 3 principal moments", field=field)
    entries = [[to_expr(v, f"{field}[{i}][{j}]") for j, v in enumerate(r)] for i, r in enumerate(rows)]
    tensor = sympy.ImmutableMatrix(entries)
    for i in range(3):
        for j in range(i + 1, 3):
            if not _same(tensor[i, j], tensor[j, i]):
                raise ModelError(
                    f"not symmetric: entry [{i}][{j}] = {shown(tensor[i, j])} but [{j}][{i}] = {shown(tensor[j, i])}",
                    field=field,
                )
    return tensor


def _same(a: sympy.Expr, b: sympy.Expr) -> bool:
    """a == b as functions: identical, or equal at random points of their symbols (never expanded,
    so that a hostile file cannot make the reader expand (a + ... + k)**64)."""
    if a == b:
        return True
    symbols = sorted(a.free_symbols | b.free_symbols, key=lambda s: s.name)
    rng = np.random.default_rng(0)
    for _ in range(3):
        point = {s: float(v) for s, v in zip(symbols, rng.uniform(0.5, 1.5, len(symbols)), strict=True)}
        x, y = complex(a.evalf(subs=point)), complex(b.evalf(subs=point))
        if abs(x - y) > 1e-9 * max(abs(x), abs(y), 1e-300):
            return False
    return True


def check_inertia(tensor: sympy.ImmutableMatrix, *, field: str, where: str, strict: bool) -> None:
    """Positive semidefinite (error) and triangle inequality (warning, error if strict).

    Only numeric tensors are checked as a whole; symbolic diagonal entries that are
    numbers must still be non-negative.
    """
    for k in range(3):
        entry = tensor[k, k]
        if entry.is_number and float(entry) < 0:
            raise ModelError(f"principal moment [{k}][{k}] = {entry} is negative", field=field)
    if not all(e.is_number for e in tensor):
        return
    values = np.array(tensor.evalf(), dtype=float)
    moments = np.linalg.eigvalsh(values)
    scale = max(float(np.max(np.abs(moments))), 1e-300)
    if moments[0] < -TOLERANCE * scale:
        raise ModelError(
            f"not positive semidefinite (principal moments {_fmt(moments)})", field=field
        )
    small, middle, large = moments
    if small + middle < large - TOLERANCE * scale:
        message = (
            f"{where}: field '{field}': principal moments {_fmt(moments)} break the triangle "
            f"inequality ({small:.6g} + {middle:.6g} < {large:.6g}); no rigid body has this tensor"
        )
        if strict:
            raise ModelError(
                f"principal moments {_fmt(moments)} break the triangle inequality (strict mode)",
                field=field,
            )
        warnings.warn(message, ModelWarning, stacklevel=4)


def _fmt(values: np.ndarray) -> str:
    return "[" + ", ".join(f"{v:.6g}" for v in values) + "]"


def second_moment(inertia: sympy.MatrixBase) -> sympy.Matrix:
    """integral(r r^T dm) about the centre of mass from the inertia tensor there.

    Sigma = tr(I)/2 * E - I: diagonal (-Ixx + Iyy + Izz)/2 ..., off-diagonal the
    products of inertia (Fu eq. 3.2-18; ROBMAT's J_c, whose printed diagonal is an OCR slip).
    """
    return sympy.eye(3) * (inertia.trace() / 2) - inertia

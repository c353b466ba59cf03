"""Inertia tensors: input shapes, the physical checks, and the pseudo-inertia matrix.

Convention (said wherever a user types one): a link's inertia is the tensor about
its centre of mass, axes parallel to the link frame, so the off-diagonal entries are
*minus* the products of inertia (I_xy = -integral(x y dm)).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Sequence

import numpy as np
import sympy

from robodyn.errors import ModelError, ModelWarning
from robodyn.model.expr import shown, to_expr

#: The one relative tolerance of the numeric checks (symmetry, semidefiniteness, triangle inequality).
#: A principal moment may be negative, and the triangle inequality broken, by at most
#: ``TOLERANCE * max(largest |principal moment|, mass * 1 length unit^2)`` (see :func:`check_inertia`).
TOLERANCE = 1e-9


def as_vector3(value: object, field: str) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
    """A 3-vector of checked expressions."""
    if isinstance(value, sympy.MatrixBase | np.ndarray):
        value = list(np.asarray(value, dtype=object).reshape(-1))
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):  # a set or a mapping has no order
        raise ModelError(f"expected a list of 3 numbers or expressions, got {shown(value)}", field=field)
    items = list(value)
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
    scale = max((abs(float(e)) for row in entries for e in row if e.is_number), default=0.0)
    for i in range(3):
        for j in range(i + 1, 3):
            a, b = entries[i][j], entries[j][i]
            if _same(a, b):
                continue
            if a.is_number and b.is_number and abs(float(a - b)) <= TOLERANCE * scale:
                entries[i][j] = entries[j][i] = (a + b) / 2  # rounding noise: the symmetric part, as numpy would
                warnings.warn(f"field '{field}': entries [{i}][{j}] = {shown(a)} and [{j}][{i}] = {shown(b)} differ "
                              f"by rounding noise only (within {TOLERANCE:g} of the largest entry); their mean is "
                              "used", ModelWarning, stacklevel=4)
                continue
            raise ModelError(f"not symmetric: entry [{i}][{j}] = {shown(a)} but [{j}][{i}] = {shown(b)}", field=field)
    return sympy.ImmutableMatrix(entries)


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


def check_inertia(
    tensor: object,
    *,
    mass: object = 0,
    field: str = "inertia",
    where: str = "",
    strict: bool = False,
    warn: bool = True,
    triangle: bool = True,
) -> None:
    """The physical checks of one body's inertia tensor (about its centre of mass), used by every path that
    gives robodyn an inertia: a model file or ``Link(...)``, a URDF ``<inertial>``, parameter values bound with
    ``params=`` (:func:`robodyn.numeric.model.check_bound_bodies`) and the identification's parameter vectors.

    ``tensor`` is a sympy matrix or numbers (3x3); ``mass`` the body's mass (a number, or an expression:
    then it gives no scale). With scale = max(largest |principal moment|, mass * 1 length unit^2) and
    tol = :data:`TOLERANCE` * scale:

    - a principal moment below -tol is a :class:`ModelError` (not positive semidefinite);
    - a negative one within tol is rounding noise, kept as given with a :class:`ModelWarning` (iCub's URDF has
      ``ixx = -5.4e-20`` beside moments of zero on a 0.5 kg link; Pinocchio loads it too). The mass term lets a
      body whose moments are all zero up to noise (a point mass) pass; 1e-9 * m * 1 m^2 is the moment of the
      body's mass at 32 um from its centre, and 1e-9 of the largest moment is seven orders of magnitude
      above double rounding and beyond the nine significant digits of most files;
    - principal moments breaking the triangle inequality (A + B >= C) by more than tol give a warning, or an
      error if ``strict``: no rigid body has such a tensor.

    A symbolic tensor is checked where it can be: its numeric diagonal entries (the same tolerance, with
    the numeric entries as scale). ``warn=False`` skips the warnings (values bound at use time);
    ``triangle=False`` skips the triangle inequality (a URDF link checked on its own before the bodies rigidly
    fixed to it are merged with it and checked as one).
    """
    values = _numbers(tensor)
    mass_value = _numbers(mass)
    mass_scale = float(mass_value) if mass_value is not None and float(mass_value) > 0 else 0.0
    if values is None:
        _check_diagonal(sympy.ImmutableMatrix(tensor), mass_scale, field)
        return
    if not np.all(np.isfinite(values)):
        raise ModelError(f"entries are not all finite ({_fmt(values.ravel())})", field=field)
    try:
        moments = np.linalg.eigvalsh(values / 2 + values.T / 2)  # halves first: no overflow near 1e308
    except np.linalg.LinAlgError:
        raise ModelError(f"principal moments cannot be computed ({_fmt(values.ravel())})", field=field) from None
    tol = TOLERANCE * max(float(np.max(np.abs(moments))), mass_scale)
    if moments[0] < -tol:
        raise ModelError(
            f"not positive semidefinite: principal moment {moments[0]:.6g} is negative (principal moments "
            f"{_fmt(moments)}; rounding noise up to {tol:.3g} is accepted)",
            field=field,
        )
    if moments[0] < 0 and warn:
        warnings.warn(
            f"{where}: field '{field}': principal moment {moments[0]:.3g} is negative by rounding noise only "
            f"(within {tol:.3g}); kept as given",
            ModelWarning,
            stacklevel=4,
        )
    small, middle, large = moments
    if triangle and small / 2 + middle / 2 < large / 2 - tol / 2:  # (halves: no overflow near 1e308)
        if strict:
            raise ModelError(
                f"principal moments {_fmt(moments)} break the triangle inequality (strict mode)",
                field=field,
            )
        if warn:
            warnings.warn(
                f"{where}: field '{field}': principal moments {_fmt(moments)} break the triangle "
                f"inequality ({small:.6g} + {middle:.6g} < {large:.6g}); no rigid body has this tensor",
                ModelWarning,
                stacklevel=4,
            )


def _numbers(value: object) -> np.ndarray | None:
    """``value`` (a sympy matrix or expression, numbers, nested lists) as floats, or None if symbolic."""
    if isinstance(value, sympy.MatrixBase):
        value = value.tolist()
    try:
        items = np.asarray(value, dtype=object)
        if not all(isinstance(v, numbers.Real) or (isinstance(v, sympy.Basic) and v.is_number)
                   for v in items.ravel()):  # never sympify: a string would be evaluated
            return None
        return np.asarray([float(v) for v in items.ravel()], dtype=float).reshape(items.shape)
    except (TypeError, ValueError, sympy.SympifyError):
        return None


def _check_diagonal(tensor: sympy.ImmutableMatrix, mass_scale: float, field: str) -> None:
    """The numeric diagonal entries of a symbolic tensor must be non-negative (up to the tolerance)."""
    numeric = [float(e) for e in tensor if e.is_number]
    tol = TOLERANCE * max([abs(v) for v in numeric] + [mass_scale])
    for k in range(3):
        entry = tensor[k, k]
        if entry.is_number and float(entry) < -tol:
            raise ModelError(f"principal moment [{k}][{k}] = {entry} is negative", field=field)


def _fmt(values: np.ndarray) -> str:
    return "[" + ", ".join(f"{v:.6g}" for v in values) + "]"


def second_moment(inertia: sympy.MatrixBase) -> sympy.Matrix:
    """integral(r r^T dm) about the centre of mass from the inertia tensor there.

    Sigma = tr(I)/2 * E - I: diagonal (-Ixx + Iyy + Izz)/2 ..., off-diagonal the
    products of inertia (Fu eq. 3.2-18; ROBMAT's J_c, whose printed diagonal is an OCR slip).
    """
    return sympy.eye(3) * (inertia.trace() / 2) - inertia

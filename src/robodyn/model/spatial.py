"""The spatial kit, written once: rotations about x and z, homogeneous transforms, the DH link transform and the
parallel-axis move of a body's inertia.

- Entry layouts (any scalar type: sympy, symengine, Python floats): :func:`rot_x_rows`, :func:`rot_z_rows`,
  :func:`homogeneous_rows`. The symengine link transform of :mod:`robodyn.model.dh` and the sympy one below
  build their matrices from them.
- Symbolic (sympy, exact): :func:`x_screw`, the constant part C = Trans(x, a) Rot(x, alpha) of a link (standard DH
  C_i; modified DH B_i = Rot(x, alpha) Trans(x, a), the same matrix: the two factors commute), and
  :func:`dh_transform`, the modified-DH row Rot(x, alpha) Trans(x, a) Rot(z, theta) Trans(z, d) as (R, t).
- Float (NumPy): :func:`rot_x`, :func:`rot_z`, :func:`homogeneous`; :func:`link_transforms` and
  :func:`joint_screw`, the split A = B S(q) C of :func:`robodyn.model.dh.joint_frames` in floats; the parallel-axis
  theorem on (m, h = m c, J about the frame origin): :func:`origin_inertia` (from the centre-of-mass form),
  :func:`com_inertia` (back to it) and :func:`moved_inertia` (into another frame).

This module imports nothing of robodyn at run time, so every layer (the model's conversions, the recursions, the
numeric engine, the readers and writers of :mod:`robodyn.formats`) can use it without importing the numeric
engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy

if TYPE_CHECKING:
    from robodyn.model.floats import Floats


# -- entry layouts (any scalar type) -----------------------------------------------------------------


def rot_x_rows(c: Any, s: Any) -> list[list[Any]]:
    """Rot(x, alpha) as 3x3 rows, from c = cos(alpha), s = sin(alpha)."""
    return [[1, 0, 0], [0, c, -s], [0, s, c]]


def rot_z_rows(c: Any, s: Any) -> list[list[Any]]:
    """Rot(z, theta) as 3x3 rows, from c = cos(theta), s = sin(theta)."""
    return [[c, -s, 0], [s, c, 0], [0, 0, 1]]


def homogeneous_rows(R: Sequence[Sequence[Any]], p: Sequence[Any]) -> list[list[Any]]:
    """The 4x4 rows of the transform with rotation rows ``R`` and translation ``p``."""
    return [[*R[i], p[i]] for i in range(3)] + [[0, 0, 0, 1]]


# -- symbolic (sympy) --------------------------------------------------------------------------------


def x_screw(a: Any, alpha: Any) -> tuple[sympy.Matrix, sympy.Matrix]:
    """(R, t) of Trans(x, a) Rot(x, alpha) (= Rot(x, alpha) Trans(x, a)), as sympy matrices."""
    return sympy.Matrix(rot_x_rows(sympy.cos(alpha), sympy.sin(alpha))), sympy.Matrix([a, 0, 0])


def dh_transform(alpha: Any, a: Any, theta: Any, d: Any) -> tuple[sympy.Matrix, sympy.Matrix]:
    """(R, t) of the modified-DH row Rot(x, alpha) Trans(x, a) Rot(z, theta) Trans(z, d), as sympy matrices (not
    expanded)."""
    Rx, _ = x_screw(a, alpha)
    R = Rx * sympy.Matrix(rot_z_rows(sympy.cos(theta), sympy.sin(theta)))
    return R, Rx * sympy.Matrix([a, 0, 0]) + R * sympy.Matrix([0, 0, d])


def sympy_homogeneous(R: sympy.MatrixBase, p: sympy.MatrixBase) -> sympy.Matrix:
    """The 4x4 sympy transform with rotation ``R`` and translation ``p``."""
    T = sympy.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


# -- floats (NumPy) ----------------------------------------------------------------------------------


def rot_x(alpha: float) -> np.ndarray:
    """Rot(x, alpha) as a 3x3 float array."""
    return np.array(rot_x_rows(np.cos(alpha), np.sin(alpha)), dtype=float)


def rot_z(theta: float) -> np.ndarray:
    """Rot(z, theta) as a 3x3 float array."""
    return np.array(rot_z_rows(np.cos(theta), np.sin(theta)), dtype=float)


def homogeneous(R: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The 4x4 transform with rotation ``R`` and translation ``p``."""
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def link_transforms(floats: Floats, convention: str, link: Any) -> tuple[np.ndarray, np.ndarray]:
    """(B, C) of one link, A = B S(q) C, as 4x4 float arrays with the link's fixed placement folded into B
    (see :func:`robodyn.model.dh.joint_frames`): standard DH B = I, C = Trans(x, a) Rot(x, alpha);
    modified DH B = Rot(x, alpha) Trans(x, a), C = I."""
    a, alpha = floats.scalar(link.a), floats.scalar(link.alpha)
    X = homogeneous(rot_x(alpha), np.zeros(3))
    T = homogeneous(np.eye(3), np.array([a, 0.0, 0.0]))
    B, C = (np.eye(4), T @ X) if convention == "standard" else (X @ T, np.eye(4))
    if link.has_placement:  # A_i = P_i B_i S_i C_i
        B = floats.array(link.placement, (4, 4)) @ B
    return B, C


def joint_screw(floats: Floats, link: Any) -> np.ndarray:
    """S at q = 0, Rot(z, theta) Trans(z, d) with the link's offsets, as a 4x4 float array."""
    return homogeneous(rot_z(floats.scalar(link.theta)), np.array([0.0, 0.0, floats.scalar(link.d)]))


def origin_inertia(m: float, c: np.ndarray, inertia: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(m, h = m c, J) of a body of mass ``m``, centre of mass ``c`` and ``inertia`` about it: J about the frame
    origin, J = I_c + m (|c|^2 E - c c^T) (the parallel-axis theorem)."""
    return m, m * c, inertia + m * (float(c @ c) * np.eye(3) - np.outer(c, c))


def com_inertia(m: float, h: np.ndarray, J: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """The inverse of :func:`origin_inertia`: (mass, centre of mass, inertia about the centre of mass, symmetrised)
    of (m, h, J about the frame origin); a body without mass has its centre at the origin."""
    if m <= 0:
        return 0.0, np.zeros(3), (J + J.T) / 2
    c = h / m
    inertia = J - m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    return m, c, (inertia + inertia.T) / 2


def moved_inertia(m: float, h: np.ndarray, J: np.ndarray, T: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(m, h, J) about the origin of one frame re-expressed about the origin of a frame where the first sits at the
    4x4 transform ``T`` = (R, t): h' = R h + m t, J' = R J R^T + m (|t|^2 E - t t^T) + 2 (t.Rh) E - t (Rh)^T
    - (Rh) t^T (Khalil eq. 9.56 expanded; the exact, any-scalar form is
    :func:`robodyn.recursions.parameters.move`)."""
    R, t = T[:3, :3], T[:3, 3]
    Rh = R @ h
    J2 = R @ J @ R.T + m * (float(t @ t) * np.eye(3) - np.outer(t, t))
    J2 += 2 * float(t @ Rh) * np.eye(3) - np.outer(t, Rh) - np.outer(Rh, t)
    return m, Rh + m * t, J2


__all__ = ["com_inertia", "dh_transform", "homogeneous", "homogeneous_rows", "joint_screw", "link_transforms",
           "moved_inertia", "origin_inertia", "rot_x", "rot_x_rows", "rot_z", "rot_z_rows", "sympy_homogeneous",
           "x_screw"]

"""Small vectorised kernels shared by the recursions.

Layout: a batch of 3-vectors is an array of shape (3, N) (components first, so each component is a
contiguous row), or (3, k, N) for k vectors per state handled together; a batch of 3x3 matrices has
shape (3, 3, N). Constants broadcast as (3, 1).
The joint transform from joint frame i to its parent is X = K S(q): rotation R = E Rz(theta),
translation p = p_K + E z d (see :mod:`robodyn.numeric.model`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robodyn.numeric.model import NumericModel

_NEXT = np.array([1, 2, 0])
_PREV = np.array([2, 0, 1])


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b for batches of shape (3, ...) that broadcast after the first axis (7 NumPy calls, no Python loop)."""
    return a[_NEXT] * b[_PREV] - a[_PREV] * b[_NEXT]


def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a . b for batches of shape (3, ...): shape (...)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@dataclass(frozen=True)
class JointTransform:
    """Joint frame i relative to joint frame i-1 for a batch: R = E Rz(theta) (c, s of shape (N,)
    or scalars), origin p of shape (3, N) or (3, 1)."""

    E: np.ndarray
    c: np.ndarray | float
    s: np.ndarray | float
    p: np.ndarray

    def to_child(self, v: np.ndarray) -> np.ndarray:
        """R^T v: parent-frame vectors (3, ...) in the child frame."""
        w = (self.E.T @ v.reshape(3, -1)).reshape(v.shape)
        c, s = self.c, self.s
        x = c * w[0] + s * w[1]
        return np.stack((x, c * w[1] - s * w[0], np.broadcast_to(w[2], x.shape)), axis=0)

    def to_parent(self, v: np.ndarray) -> np.ndarray:
        """R v: child-frame vectors (3, ...) in the parent frame."""
        c, s = self.c, self.s
        x = c * v[0] - s * v[1]
        w = np.stack((x, s * v[0] + c * v[1], np.broadcast_to(v[2], x.shape)), axis=0)
        return (self.E @ w.reshape(3, -1)).reshape(w.shape)

    def rotate_tensor(self, A: np.ndarray) -> np.ndarray:
        """R A R^T for a batch of 3x3 tensors of shape (3, 3, N)."""
        c, s = self.c, self.s
        rows = np.stack((c * A[0] - s * A[1], s * A[0] + c * A[1], A[2]), axis=0)  # Rz A
        cols = np.stack((c * rows[:, 0] - s * rows[:, 1], s * rows[:, 0] + c * rows[:, 1], rows[:, 2]), axis=1)
        left = (self.E @ cols.reshape(3, -1)).reshape(cols.shape)  # E (Rz A Rz^T)
        return np.matmul(self.E, left)  # each row of left times E^T, as a stack of (3, N) blocks


def joint_transform(model: NumericModel, i: int, q_i: np.ndarray) -> JointTransform:
    """The transform of joint i at the joint values ``q_i`` (shape (N,))."""
    E, p_K = model.E[i], model.p[i][:, None]
    if model.revolute[i]:
        theta = model.theta0[i] + q_i
        return JointTransform(E, np.cos(theta), np.sin(theta), p_K + E[:, 2:3] * model.d0[i])
    theta0 = model.theta0[i]
    d = model.d0[i] + q_i
    return JointTransform(E, float(np.cos(theta0)), float(np.sin(theta0)), p_K + E[:, 2:3] * d[None, :])


def cross_z(v: np.ndarray, values: np.ndarray) -> np.ndarray:
    """v x (z * values) = (v_y, -v_x, 0) * values, for v of shape (3, ...) broadcasting with values."""
    x = v[1] * values
    return np.stack((x, -v[0] * values, np.zeros_like(x)), axis=0)

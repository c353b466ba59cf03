"""The joint-space inertia matrix by the composite rigid body algorithm, vectorised over a batch.

Walker and Orin (1982) method 3 as Featherstone writes it (Rigid Body Dynamics Algorithms, 2008,
table 6.2), for a serial chain in joint frames (see :mod:`robodyn.numeric.model`):

    I^c_i = I_i + X_{i+1}^T I^c_{i+1} X_{i+1}          (composite inertia of links i..n-1)
    F = I^c_i s_i,  M_ii = s_i . F,  then for j = i, i-1, ..., 1: F = X_j^* F, M_{i,j-1} = s_{j-1} . F

A composite inertia is kept as its three parameters (m, h = m c, I_o about the origin); moving it to
the parent frame (rotation R, origin p) gives h' = R h + m p and

    I_o' = R I_o R^T - m [p]x[p]x - [p]x[R h]x - [R h]x[p]x.

The armature of each joint is added to M_ii.
"""

from __future__ import annotations

import numpy as np

from robodyn.numeric._codegen import crba_kernel
from robodyn.numeric._kernels import JointTransform, cross, dot
from robodyn.numeric.model import NumericModel
from robodyn.numeric.rnea import transforms


def _sym_outer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a b^T + b a^T for batches (3, N): shape (3, 3, N)."""
    outer = a[:, None, :] * b[None, :, :]
    return outer + outer.transpose(1, 0, 2)


def _to_parent(
    X: JointTransform, m: float, h: np.ndarray, I_o: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(h', I_o') of a composite inertia (m, h, I_o) expressed in the parent joint frame."""
    p = np.broadcast_to(X.p, h.shape)
    r = X.to_parent(h)
    eye = np.eye(3)[:, :, None]
    # -m [p]x^2 - ([p]x[r]x + [r]x[p]x) with [a]x[b]x = b a^T - (a.b) I
    shift = -(m * 0.5) * _sym_outer(p, p) + m * dot(p, p) * eye - _sym_outer(p, r) + 2.0 * dot(p, r) * eye
    return r + m * p, X.rotate_tensor(I_o) + shift


def _composites(
    model: NumericModel, X: list[JointTransform], N: int
) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """Composite inertias (m, h (3, N), I_o (3, 3, N)) of links i..n-1 in joint frame i."""
    n = model.n
    out: list[tuple[float, np.ndarray, np.ndarray]] = [None] * n  # type: ignore[list-item]
    m, h, I_o = 0.0, np.zeros((3, N)), np.zeros((3, 3, N))
    for i in reversed(range(n)):
        m = m + float(model.mass[i])
        h = h + model.first_moment[i][:, None]
        I_o = I_o + model.inertia_origin[i][:, :, None]
        out[i] = (m, h, I_o)
        if i > 0:
            h, I_o = _to_parent(X[i], m, h, I_o)
    return out


def _column_force(revolute: bool, m: float, h: np.ndarray, I_o: np.ndarray) -> np.ndarray:
    """F = I^c s as (moment, force) of shape (3, 2, N), for s = (z, 0) (revolute) or (0, z) (prismatic)."""
    F = np.zeros((3, 2, h.shape[1]))
    if revolute:
        F[:, 0] = I_o[:, 2]
        F[0, 1], F[1, 1] = -h[1], h[0]
    else:
        F[0, 0], F[1, 0] = h[1], -h[0]
        F[2, 1] = m
    return F


def crba(model: NumericModel, q: np.ndarray) -> np.ndarray:
    """M(q) for joint-major q of shape (n, N): shape (N, n, n), armature on the diagonal.

    Runs the algorithm below unrolled for this model, its exact zeros and ones folded away
    (:mod:`robodyn.numeric._codegen`); :func:`crba_reference` is the same algorithm written generally.
    """
    n, N = q.shape
    out = np.empty((n * n, N))
    crba_kernel(model)(q, None, None, out)
    return np.ascontiguousarray(out.reshape(n, n, N).transpose(2, 0, 1))


def crba_reference(model: NumericModel, q: np.ndarray) -> np.ndarray:
    """M(q) for joint-major q of shape (n, N): shape (N, n, n), armature on the diagonal."""
    n, N = q.shape
    X = transforms(model, q)
    composites = _composites(model, X, N)
    M = np.empty((N, n, n))
    for i in range(n):
        F = _column_force(bool(model.revolute[i]), *composites[i])
        M[:, i, i] = F[2, 0 if model.revolute[i] else 1] + model.armature[i]
        for j in range(i, 0, -1):
            F = X[j].to_parent(F)
            F[:, 0] += cross(X[j].p, F[:, 1])
            M[:, i, j - 1] = M[:, j - 1, i] = F[2, 0 if model.revolute[j - 1] else 1]
    return M

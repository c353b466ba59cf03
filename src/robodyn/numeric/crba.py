"""The joint-space inertia matrix by the composite rigid body algorithm, vectorised over a batch.

Walker and Orin (1982) method 3 as Featherstone writes it (Rigid Body Dynamics Algorithms, 2008,
table 6.2), over the parent array lambda (``model.parent``; i - 1 on a chain) in joint frames (see
:mod:`robodyn.numeric.model`):

    I^c_i = I_i + sum over the children j of i of X_j^T I^c_j X_j      (composite inertia of the subtree of i)
    F = I^c_i s_i,  M_ii = s_i . F,  then for j = i, lambda(i), ... while lambda(j) >= 0:
        F = X_j^* F,  M_{i,lambda(j)} = s_{lambda(j)} . F

and M_ik = 0 when neither of i, k is an ancestor of the other (branch-induced sparsity).

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
    """Composite inertias (m, h (3, N), I_o (3, 3, N)) of the subtree of each link i in joint frame i."""
    n = model.n
    out: list[tuple[float, np.ndarray, np.ndarray]] = [
        (float(model.mass[i]), np.repeat(model.first_moment[i][:, None], N, axis=1),
         np.repeat(model.inertia_origin[i][:, :, None], N, axis=2)) for i in range(n)]
    for i in reversed(range(n)):  # every child j > i is complete when i is reached
        lam = model.parent[i]
        if lam >= 0:
            m, h, I_o = out[i]
            h, I_o = _to_parent(X[i], m, h, I_o)
            m0, h0, I0 = out[lam]
            out[lam] = (m0 + m, h0 + h, I0 + I_o)
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
    M = np.zeros((N, n, n))
    for i in range(n):
        F = _column_force(bool(model.revolute[i]), *composites[i])
        M[:, i, i] = F[2, 0 if model.revolute[i] else 1] + model.armature[i]
        j = i
        while model.parent[j] >= 0:
            F = X[j].to_parent(F)
            F[:, 0] += cross(X[j].p, F[:, 1])
            j = model.parent[j]
            M[:, i, j] = M[:, j, i] = F[2, 0 if model.revolute[j] else 1]
    return M

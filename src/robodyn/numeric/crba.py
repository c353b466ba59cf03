"""The joint-space inertia matrix by the composite-body algorithm, vectorised over a batch: the algorithm of
:mod:`robodyn.recursions.composite` (Walker and Orin's method 3 in Khalil's parameters, over the parent array
lambda, ``model.parent``; i - 1 on a chain) in joint frames (see :mod:`robodyn.numeric.model`): the composite
parameters of each subtree are carried into the parent's frame, column j of M is the wrench a unit qdd_j
produces, carried down the ancestors of j, and M_ik = 0 when neither of i, k is an ancestor of the other
(branch-induced sparsity). The armature of each joint is added to M_ii.

:func:`crba` runs the algorithm traced and unrolled for the model, its exact zeros and ones folded away
(:mod:`robodyn.numeric._codegen`); :func:`crba_reference` runs the same algorithm on NumPy rows.
"""

from __future__ import annotations

import numpy as np

from robodyn.numeric._codegen import crba_kernel
from robodyn.numeric.kane import NumpyOps
from robodyn.numeric.model import NumericModel, arm_data
from robodyn.numeric.rnea import batch_rows
from robodyn.recursions.composite import inertia_matrix


def crba(model: NumericModel, q: np.ndarray) -> np.ndarray:
    """M(q) for joint-major q of shape (n, N): shape (N, n, n), armature on the diagonal."""
    n, N = q.shape
    out = np.empty((n * n, N))
    crba_kernel(model)(q, None, None, out)
    return np.ascontiguousarray(out.reshape(n, n, N).transpose(2, 0, 1))


def crba_one(model: NumericModel, q: list[float]) -> np.ndarray:
    """:func:`crba` for one state (a list of n floats), over Python floats: M of shape (n, n)."""
    n = model.n
    out = [0.0] * (n * n)
    crba_kernel(model, scalar=True)(q, None, None, out)
    return np.array(out).reshape(n, n)


def crba_reference(model: NumericModel, q: np.ndarray) -> np.ndarray:
    """:func:`crba` by the algorithm run on NumPy rows (:class:`~robodyn.numeric.kane.NumpyOps`), not traced."""
    M = inertia_matrix(arm_data(model), NumpyOps(), list(q), group=False)
    return np.ascontiguousarray(batch_rows(M, q.shape[1]).transpose(2, 0, 1))

"""Coupled coordinates in the numeric engine: the one place where the couplings map q to the tree and back.

A robot with :attr:`~robodyn.model.manipulator.Manipulator.couplings` (mimic joints, gears:
:mod:`robodyn.model.couplings`) takes its independent coordinates at every public function of
:mod:`robodyn.numeric` (arrays of shape (nv,) or (N, nv)). The tree's recursions run on

    q_tree = G q + c,   qd_tree = G qd,   qdd_tree = G qdd,

and their generalised forces come back projected: tau = G^T tau_tree, M = G^T M_tree G (h, G(q), damping, load
and the bias likewise; the Jacobian J G). Forward dynamics then solves G^T M_tree G qdd = tau - G^T bias_tree.
Pinocchio's mimic model (``buildModelFromUrdf(path, mimic=True)``) gives the same numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from robodyn.numeric.model import NumericModel


def _checked(model: NumericModel, x: Any) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim not in (1, 2) or a.shape[-1] != model.nv:
        raise ValueError(f"joint arrays of {model.name!r} (coupled: {model.nv} independent coordinates of its "
                         f"{model.n} joints) must have shape ({model.nv},) or (N, {model.nv}), got {a.shape}")
    return a


def position(model: NumericModel, q: Any) -> np.ndarray:
    """q_tree = G q + c: (nv,) -> (n,), (N, nv) -> (N, n); q as given where the model has no couplings."""
    if model.coupling is None:
        return np.asarray(q, dtype=float)
    assert model.coupling_offset is not None
    return _checked(model, q) @ model.coupling.T + model.coupling_offset


def rate(model: NumericModel, x: Any) -> np.ndarray:
    """qd_tree = G qd (or qdd_tree = G qdd): (nv,) -> (n,), (N, nv) -> (N, n)."""
    if model.coupling is None:
        return np.asarray(x, dtype=float)
    return _checked(model, x) @ model.coupling.T


def project(model: NumericModel, tau: np.ndarray) -> np.ndarray:
    """G^T tau_tree: (n,) -> (nv,), (N, n) -> (N, nv)."""
    return tau if model.coupling is None else tau @ model.coupling


def project_matrix(model: NumericModel, M: np.ndarray) -> np.ndarray:
    """G^T M_tree G: (n, n) -> (nv, nv), (N, n, n) -> (N, nv, nv)."""
    if model.coupling is None:
        return M
    G = model.coupling
    return G.T @ M @ G


def project_columns(model: NumericModel, J: np.ndarray) -> np.ndarray:
    """J G: a Jacobian's columns of the tree's joints to those of the independent coordinates, (..., n) ->
    (..., nv)."""
    return J if model.coupling is None else J @ model.coupling


__all__ = ["position", "project", "project_columns", "project_matrix", "rate"]

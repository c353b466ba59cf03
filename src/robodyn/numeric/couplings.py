"""Coupled coordinates in the numeric engine: the one place where the couplings map q to the tree and back.

A robot with :attr:`~robodyn.model.manipulator.Manipulator.couplings` (mimic joints, gears:
:mod:`robodyn.model.couplings`) takes its independent coordinates at every public function of
:mod:`robodyn.numeric` (arrays of shape (nv,) or (N, nv)). The tree's recursions run on

    q_tree = G q + c,   qd_tree = G qd,   qdd_tree = G qdd,

and their generalised forces come back projected: tau = G^T tau_tree, M = G^T M_tree G (h, G(q), damping, load
and the bias likewise; the Jacobian J G). Forward dynamics then solves G^T M_tree G qdd = tau - G^T bias_tree.
Pinocchio's mimic model (``buildModelFromUrdf(path, mimic=True)``) gives the same numbers.

A four-bar's passive joints (:mod:`robodyn.model.fourbars`) make the map nonlinear, q_tree = g(q) (their rows in
closed form of their actuated joint, the rest G q + c): then qd_tree = W(q) qd, qdd_tree = W(q) qdd + b(q, qd)
(b = Wdot qd) and every projection is W(q)^T (:class:`robodyn.numeric.fourbars.Bar`: the closed forms as NumPy
functions, the parameters bound). A configuration where a four-bar does not assemble is a one-line ValueError
naming its loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from robodyn.numeric.fourbars import Bar
from robodyn.numeric.model import NumericModel


def _checked(model: NumericModel, x: Any) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim not in (1, 2) or a.shape[-1] != model.nv:
        raise ValueError(f"joint arrays of {model.name!r} (coupled: {model.nv} independent coordinates of its "
                         f"{model.n} joints) must have shape ({model.nv},) or (N, {model.nv}), got {a.shape}")
    return a


def _closed(model: NumericModel, q: Any) -> list[tuple[Bar, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    if model.bars and q is None:
        raise ValueError(f"{model.name!r} has four-bars: its map to the tree needs q")
    qa = _checked(model, q) if model.bars else None
    return [(bar, bar(qa[..., bar.column])) for bar in model.bars] if qa is not None else []


def position(model: NumericModel, q: Any) -> np.ndarray:
    """q_tree = g(q) (G q + c, and the four-bars' closed forms): (nv,) -> (n,), (N, nv) -> (N, n); q as given
    where the model has no couplings."""
    if model.coupling is None:
        return np.asarray(q, dtype=float)
    assert model.coupling_offset is not None
    out = _checked(model, q) @ model.coupling.T + model.coupling_offset
    for bar, (positions, _, _) in _closed(model, q):
        out[..., bar.joints] = positions
    return out


def jacobian(model: NumericModel, q: Any) -> np.ndarray:
    """W(q) = dq_tree/dq: (n, nv) (G where the couplings are linear), (N, n, nv) for a batch with four-bars."""
    assert model.coupling is not None
    closed = _closed(model, q)
    if not closed:
        return model.coupling
    qa = _checked(model, q)
    W = np.broadcast_to(model.coupling, (*qa.shape[:-1], *model.coupling.shape)).copy()
    for bar, (_, rates, _) in closed:
        W[..., bar.joints, bar.column] = rates
    return W


def jacobian_rate(model: NumericModel, q: Any, qd: Any) -> np.ndarray:
    """Wdot = dW/dt at (q, qd): (n, nv) or (N, n, nv); zero where the couplings are linear."""
    assert model.coupling is not None
    qa, qd_ = _checked(model, q), _checked(model, qd)
    Wdot = np.zeros((*np.broadcast_shapes(qa.shape[:-1], qd_.shape[:-1]), *model.coupling.shape))
    for bar, (_, _, curvatures) in _closed(model, q):
        Wdot[..., bar.joints, bar.column] = curvatures * qd_[..., bar.column, None]
    return Wdot


def rate(model: NumericModel, x: Any, q: Any = None) -> np.ndarray:
    """qd_tree = W(q) qd (or W(q) qdd): (nv,) -> (n,), (N, nv) -> (N, n); q is needed only with four-bars."""
    if model.coupling is None:
        return np.asarray(x, dtype=float)
    if not model.bars:
        return _checked(model, x) @ model.coupling.T
    return np.einsum("...ja,...a->...j", jacobian(model, q), _checked(model, x))


def acceleration(model: NumericModel, q: Any, qd: Any, qdd: Any) -> np.ndarray:
    """qdd_tree = W(q) qdd + Wdot qd (the four-bars' curvatures times their actuated rates squared)."""
    out = rate(model, qdd, q)
    if model.coupling is None or not model.bars:
        return out
    qd_ = _checked(model, qd)
    out = np.array(np.broadcast_to(out, np.broadcast_shapes(out.shape, (*qd_.shape[:-1], model.n))))
    for bar, (_, _, curvatures) in _closed(model, q):
        out[..., bar.joints] += curvatures * qd_[..., bar.column, None] ** 2
    return out


def bias_rate(model: NumericModel, q: Any, qd: Any) -> np.ndarray:
    """Wdot qd alone: the tree's accelerations at qdd = 0 (zero without four-bars)."""
    return acceleration(model, q, qd, np.zeros(np.shape(qd)))


def project(model: NumericModel, tau: np.ndarray, q: Any = None) -> np.ndarray:
    """W(q)^T tau_tree: (n,) -> (nv,), (N, n) -> (N, nv)."""
    if model.coupling is None:
        return tau
    if not model.bars:
        return tau @ model.coupling
    return np.einsum("...ja,...j->...a", jacobian(model, q), tau)


def project_matrix(model: NumericModel, M: np.ndarray, q: Any = None) -> np.ndarray:
    """W^T M_tree W: (n, n) -> (nv, nv), (N, n, n) -> (N, nv, nv)."""
    if model.coupling is None:
        return M
    G = model.coupling if not model.bars else jacobian(model, q)
    return np.swapaxes(G, -1, -2) @ M @ G if model.bars else G.T @ M @ G


def project_columns(model: NumericModel, J: np.ndarray, q: Any = None) -> np.ndarray:
    """J W: a Jacobian's columns of the tree's joints to those of the independent coordinates, (..., n) ->
    (..., nv)."""
    if model.coupling is None:
        return J
    return J @ (model.coupling if not model.bars else jacobian(model, q))


__all__ = ["acceleration", "bias_rate", "jacobian", "jacobian_rate", "position", "project",
           "project_columns", "project_matrix", "rate"]

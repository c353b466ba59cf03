"""Least squares of the base parameters from logged runs, by normal equations: the blocks of each log, summed, and
one solve.

    from robodyn.identification import base_parameters, fit
    base = base_parameters(robot)
    result = fit.identify(base, logs)          # logs: [(q, qd, qdd, tau), ...], each (N, n)
    result.estimate, result.names

Each log gives its block of the normal equations, W^T W and W^T y with W its rows of the base regressor
(:meth:`~robodyn.identification.base.BaseParameters.numeric_regressor`, joint j's rows divided by ``sigma[j]``
where weights are given) and y its torques (:func:`log_blocks`); the blocks add up (:meth:`NormalEquations.__add__`),
so that logs can be formed anywhere, in any grouping, and summed (:mod:`robodyn.distributed.identification` forms
them on a Dask cluster); the sum is solved once (:func:`solve`). The solve scales the columns of W to unit norm
(Jacobi: W^T W -> D^-1 W^T W D^-1, D^2 = diag(W^T W)), which leaves the solution unchanged and takes the condition
number of the normal matrix from that of the raw columns' very different scales (inertias against masses) to that
of their directions, then factors it by Cholesky. It equals the direct least squares of the stacked rows
(``numpy.linalg.lstsq``, what ``examples/identify_puma.py`` uses) to about eps cond(W)^2 of the scaled W.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from robodyn.identification.base import BaseParameters

__all__ = ["Identified", "NormalEquations", "identify", "log_blocks", "result", "solve", "total"]


@dataclass(frozen=True)
class NormalEquations:
    """W^T W, W^T y, y^T y and the number of rows, of one log or of a sum of logs."""

    WtW: np.ndarray
    Wty: np.ndarray
    yty: float
    rows: int

    def __add__(self, other: NormalEquations) -> NormalEquations:
        return NormalEquations(self.WtW + other.WtW, self.Wty + other.Wty, self.yty + other.yty,
                               self.rows + other.rows)


@dataclass(frozen=True)
class Identified:
    """The estimate of the base parameters ``names`` and its residual, ``|y - W estimate|^2`` (from the normal
    equations: ``y^T y - 2 estimate^T W^T y + estimate^T W^T W estimate``), over ``rows`` rows."""

    names: tuple[str, ...]
    estimate: np.ndarray
    residual: float
    rows: int


def _arrays(log: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(q, qd, qdd, tau) of a log: a sequence of the four arrays, or a mapping (an ``.npz`` file's) with those keys."""
    if isinstance(log, Mapping) or hasattr(log, "files"):
        q, qd, qdd, tau = (log[key] for key in ("q", "qd", "qdd", "tau"))
    else:
        q, qd, qdd, tau = log
    return tuple(np.atleast_2d(np.asarray(a, dtype=float)) for a in (q, qd, qdd, tau))  # type: ignore[return-value]


def log_blocks(base: BaseParameters, log: Any, *, sigma: Sequence[float] | None = None,
               params: Mapping[Any, Any] | None = None) -> NormalEquations:
    """The block of the normal equations of one ``log`` (q, qd, qdd, tau: (N, n) each; or a mapping with those
    keys): W^T W and W^T y with W the base regressor at its states (``params`` binds geometry symbols), joint j's
    rows and torques divided by ``sigma[j]``."""
    q, qd, qdd, tau = _arrays(log)
    rows = base.robot.nv if base.robot.couplings else base.robot.n  # coupled: its independent coordinates
    scale = np.ones(rows) if sigma is None else 1.0 / np.asarray(sigma, dtype=float)
    W = (base.numeric_regressor(q, qd, qdd, params=params) * scale[None, :, None]).reshape(-1, len(base))
    y = (tau * scale[None, :]).reshape(-1)
    return NormalEquations(W.T @ W, W.T @ y, float(y @ y), W.shape[0])


def total(blocks: Iterable[NormalEquations]) -> NormalEquations:
    """The sum of ``blocks``, in their order (the same order gives the same rounding)."""
    found = list(blocks)
    if not found:
        raise ValueError("no logs to identify from")
    result = found[0]
    for block in found[1:]:
        result = result + block
    return result


def solve(normal: NormalEquations) -> np.ndarray:
    """The least-squares estimate from summed normal equations: Cholesky of the column-scaled W^T W (see the
    module). ValueError naming the rank problem where W^T W is singular (a base parameter not excited)."""
    d = np.sqrt(np.diag(normal.WtW))
    if not np.all(d > 0):
        missing = [int(i) for i in np.flatnonzero(~(d > 0))]
        raise ValueError(f"the logs do not excite base parameter(s) at column(s) {missing}: W^T W is singular")
    A = normal.WtW / np.outer(d, d)
    b = normal.Wty / d
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        raise ValueError("W^T W is not positive definite: the logs do not excite every base parameter") from None
    z = np.linalg.solve(L, b)
    return np.linalg.solve(L.T, z) / d


def identify(base: BaseParameters, logs: Iterable[Any], *, sigma: Sequence[float] | None = None,
             params: Mapping[Any, Any] | None = None) -> Identified:
    """Least squares of the base parameters ``base`` from ``logs`` in one process: :func:`log_blocks` of each
    log, summed in order (:func:`total`), solved by :func:`solve`."""
    normal = total(log_blocks(base, log, sigma=sigma, params=params) for log in logs)
    return result(base, normal)


def result(base: BaseParameters, normal: NormalEquations) -> Identified:
    """The :class:`Identified` of the summed ``normal`` equations of ``base``."""
    estimate = solve(normal)
    residual = normal.yty - 2 * float(estimate @ normal.Wty) + float(estimate @ normal.WtW @ estimate)
    return Identified(base.names, estimate, max(residual, 0.0), normal.rows)

"""Inverse dynamics, vectorised over a batch of states: the customised Newton-Euler recursion of
:mod:`robodyn.recursions.newton_euler` (Khalil and Kleinfinger 1987; Khalil and Dombre eq. 9.88-9.94), in joint
frames (see :mod:`robodyn.numeric.model`), with Fu's trick for gravity: the base accelerates by -gravity
(eq. 3.3-46). On a tree every i - 1 of the recursion is lambda(i), the parent of link i. The tip load (Fu's
f_{n+1}, n_{n+1}) acts on the last link.

:func:`rnea` runs the recursion traced and unrolled for the model, its exact zeros and ones folded away
(:mod:`robodyn.numeric._codegen`); :func:`rnea_reference` runs the same recursion on NumPy rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from robodyn.numeric._codegen import rnea_kernel
from robodyn.numeric.kane import NumpyOps
from robodyn.numeric.model import NumericModel, arm_data
from robodyn.recursions.newton_euler import inverse_dynamics


def rnea(
    model: NumericModel,
    q: np.ndarray | list[float],
    qd: np.ndarray | list[float] | None,
    qdd: np.ndarray | list[float] | None,
    *,
    gravity: bool = True,
    tip: bool = True,
    joint_terms: bool = True,
) -> np.ndarray:
    """Joint torques for joint-major arrays of shape (n, N) (``None`` for a zero qd or qdd), or for one state
    given as lists of n floats (the same traced recursion over Python floats, ``scalar=True`` of
    :mod:`robodyn.numeric._codegen`).

    ``gravity``/``tip`` switch gravity and the tip load on or off; ``joint_terms`` adds damping
    b_i qd_i and armature_i qdd_i. Returns tau of shape (n, N), or (n,) for one state.
    """
    scalar = isinstance(q, list)
    kernel = rnea_kernel(model, qd is not None, qdd is not None, gravity, tip, joint_terms, scalar=scalar)
    out: Any = [0.0] * model.n if isinstance(q, list) else np.empty(q.shape)
    kernel(q, qd, qdd, out)
    return np.array(out) if scalar else out


def rnea_reference(
    model: NumericModel,
    q: np.ndarray,
    qd: np.ndarray | None,
    qdd: np.ndarray | None,
    *,
    gravity: bool = True,
    tip: bool = True,
    joint_terms: bool = True,
) -> np.ndarray:
    """:func:`rnea` by the recursion run on NumPy rows (:class:`~robodyn.numeric.kane.NumpyOps`), not traced."""
    rows = [None if x is None else list(x) for x in (qd, qdd)]
    tau = inverse_dynamics(arm_data(model), NumpyOps(), list(q), *rows, gravity=gravity, tip_load=tip,
                           friction=joint_terms, group=False)
    return batch_rows(tau, q.shape[1])


def batch_rows(values: list, N: int) -> np.ndarray:
    """Scalars of :class:`~robodyn.numeric.kane.NumpyOps` (floats, or rows of N states) as an array (..., N)."""
    return np.array([batch_rows(v, N) if isinstance(v, list) else np.broadcast_to(v, (N,)) for v in values])

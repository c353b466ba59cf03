"""Kane's O(n) inverse dynamics (Angeles, Ma and Rojas 1989) in NumPy, batched over N states.

The very code of :mod:`robodyn.formulations.kane` (conversion to their notation, the three
stages, eq. 54-55 for the Q_i products) runs here with NumPy arrays as its scalars: each scalar of
the algorithm is an array of the N states, so a batch costs a fixed number of vectorised NumPy
operations per link and no Python loop over states.

    tau = kane_inverse_dynamics(robot, q, qd, qdd)   # q, qd, qdd: (n,) or (N, n) -> same shape
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import sympy

from robodyn.model.manipulator import Manipulator
from robodyn.model.params import bound_robot
from robodyn.recursions.kane import joint_torques

#: States per block (rows of this length stay in cache; results do not depend on it).
BLOCK = 4096


class NumpyOps:
    """Scalars are floats (parameters) and (N,) float arrays (anything that depends on the state)."""

    def number(self, value: sympy.Expr) -> float:
        return float(value)

    def cos_sin(self, offset: sympy.Expr, q: np.ndarray | None) -> tuple[Any, Any]:
        if q is None:
            constant = float(offset)
            return math.cos(constant), math.sin(constant)
        angle = q + float(offset) if offset != 0 else q
        return np.cos(angle), np.sin(angle)

    def stage(self, name: str) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def sign(self, x: Any) -> Any:
        return np.sign(x)

    def reciprocal(self, x: Any) -> Any:
        """1 / x (the one division of :mod:`robodyn.recursions.aba`)."""
        return 1.0 / x


def _batch(x: Any, n: int, name: str) -> np.ndarray:
    array = np.asarray(x, dtype=float)
    if array.ndim not in (1, 2) or array.shape[-1] != n:
        raise ValueError(f"{name} must have shape ({n},) or (N, {n}), got {array.shape}")
    return array.reshape(-1, n)


def kane_inverse_dynamics(
    robot: Manipulator,
    q: Any,
    qd: Any,
    qdd: Any,
    *,
    params: Mapping[Any, Any] | None = None,
) -> np.ndarray:
    """Joint torques/forces tau = M qdd + h + G + b qd + J^T w (armature in M, tip load from the model).

    ``q``, ``qd``, ``qdd``: (n,) for one state or (N, n) for a batch; the result has the same shape.
    ``params`` binds the model's free symbols (keys str or sympy Symbol), e.g. ``{"g": 9.81}``.
    """
    robot = bound_robot(robot, params)
    ops = NumpyOps()
    gravity = [float(x) for x in robot.gravity]
    tip_force = [float(x) for x in robot.tip_force]
    tip_moment = [float(x) for x in robot.tip_moment]
    return in_blocks(robot.n, {"q": q, "qd": qd, "qdd": qdd},
                     lambda c: joint_torques(robot, c[0], c[1], c[2], gravity, tip_force, tip_moment, ops))


def in_blocks(n: int, arrays: Mapping[str, Any], step: Callable[[list[list[np.ndarray]]], Sequence[Any]]) -> np.ndarray:
    """Run ``step`` (a recursion on NumPy scalars: one column list per array, one row per joint) over blocks of
    :data:`BLOCK` states of ``arrays`` ((n,) for one state or (N, n), all the same shape); the result has that
    shape. Joint-major copies, so that every scalar of the algorithm is a contiguous row; blocks stay in cache."""
    batches = [_batch(x, n, name) for name, x in arrays.items()]
    if len({b.shape for b in batches}) != 1:
        shapes = ", ".join(str(b.shape) for b in batches)
        raise ValueError(f"{', '.join(arrays)} must have the same shape, got {shapes}")
    single = np.ndim(next(iter(arrays.values()))) == 1
    out = np.empty((n, batches[0].shape[0]))
    for start in range(0, batches[0].shape[0], BLOCK):
        columns = [list(np.ascontiguousarray(X[start : start + BLOCK].T)) for X in batches]
        for i, row in enumerate(step(columns)):
            out[i, start : start + BLOCK] = row  # a float when a row does not depend on the state (broadcast)
    out = np.ascontiguousarray(out.T)
    return out[0] if single else out

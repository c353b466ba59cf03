"""Forward dynamics by Featherstone's articulated-body algorithm in NumPy, batched over N states.

The very code of :mod:`robodyn.recursions.aba` runs here with NumPy arrays as its scalars (as
:mod:`robodyn.numeric.kane` runs Kane's three stages): each scalar of the algorithm is an array of the N
states, so a batch costs a fixed number of vectorised NumPy operations per link.

    qdd = aba_forward_dynamics(robot, q, qd, tau)   # q, qd, tau: (n,) or (N, n) -> same shape

It solves the same M qdd = tau - bias as :func:`robodyn.numeric.forward_dynamics` (composite-body M and a
Cholesky solve), in O(n) instead of O(n^3).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from robodyn.errors import ModelError
from robodyn.model.manipulator import Manipulator
from robodyn.model.params import bound_robot
from robodyn.numeric import floating
from robodyn.numeric.kane import NumpyOps, in_blocks
from robodyn.recursions.aba import joint_accelerations
from robodyn.recursions.arm import arm_data


def aba_forward_dynamics(
    robot: Manipulator,
    q: Any,
    qd: Any,
    tau: Any,
    *,
    params: Mapping[Any, Any] | None = None,
) -> np.ndarray:
    """qdd with M(q) qdd = tau - bias(q, qd) (damping, tip load and payload from the model, armature in M).

    ``q``, ``qd``, ``tau``: (n,) for one state or (N, n) for a batch; the result has the same shape.
    ``params`` binds the model's free symbols (keys str or sympy Symbol), e.g. ``{"g": 9.81}``. A floating robot
    (q of length ``robot.nq``, qd and tau of ``robot.nv``) runs the free-joint ABA of :mod:`robodyn.numeric.floating`.
    """
    if robot.floating:
        return floating.forward_dynamics(robot, q, qd, tau, params=params, method="aba")
    if robot.couplings:
        raise ModelError(f"{robot.name}: the articulated-body algorithm runs on a tree without couplings; use "
                         "numeric.forward_dynamics (coupled coordinates: Cholesky of G^T M G)")
    arm = arm_data(bound_robot(robot, params))
    ops = NumpyOps()
    return in_blocks(arm.n, {"q": q, "qd": qd, "tau": tau}, lambda c: joint_accelerations(arm, c[0], c[1], c[2], ops))

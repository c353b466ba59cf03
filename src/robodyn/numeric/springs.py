"""The joint springs alone: the part ``spring`` of :class:`robodyn.Equations`, spring(q) = k (q - q_ref) per joint
(a link's ``stiffness`` k and ``springref`` q_ref), and the energy they store, 1/2 sum k (q - q_ref)^2.

The springs are in :func:`robodyn.numeric.inverse_dynamics` and :func:`robodyn.numeric.bias_forces` already (with
the damping, as joint terms of the recursion), not in :func:`robodyn.numeric.gravity` (G) or
:func:`robodyn.numeric.coriolis` (h); these functions give them on their own, as :func:`robodyn.numeric.friction`
gives the damping.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from robodyn.model.manipulator import Manipulator
from robodyn.numeric import couplings, floating
from robodyn.numeric.model import NumericModel, Params, compile_model


def spring(robot: Manipulator | NumericModel, q: Any, *, params: Params | None = None) -> np.ndarray:
    """spring(q) = k (q - q_ref), the joint springs of Equations.spring: (nv,) or (N, nv) as q (a coupled robot's
    tree springs projected on its independent joints, W^T k (q_tree - q_ref))."""
    model = compile_model(robot, params)
    q_tree = couplings.position(model, q)
    tree = model.tree
    return couplings.project(model, tree.stiffness * (np.asarray(q_tree, dtype=float) - tree.springref), q)


def spring_energy(robot: Manipulator | NumericModel, q: Any, *, params: Params | None = None) -> np.ndarray:
    """The springs' potential energy 1/2 sum_i k_i (q_i - q_ref,i)^2: () or (N,). A floating robot or one with
    spherical or planar joints takes its q of ``robot.nq`` entries (their joints have no spring)."""
    if isinstance(robot, Manipulator) and (robot.floating or robot.multi_dof):
        whole = floating.floating_model(robot, params, multi_dof=True)
        q = np.asarray(q, dtype=float)
        if whole.tree is None:
            return np.zeros(q.shape[:-1])
        tree, positions = whole.tree, floating.spring_positions(whole, np.atleast_2d(q))
    else:
        model = compile_model(robot, params)
        tree, positions = model.tree, np.atleast_2d(couplings.position(model, q))
    energy = 0.5 * np.sum(tree.stiffness * (positions - tree.springref) ** 2, axis=-1)
    return energy[0] if np.ndim(q) == 1 else energy

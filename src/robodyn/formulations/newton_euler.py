"""Recursive Newton-Euler, customised (Khalil and Kleinfinger 1987), as symengine expressions.

The recursion is :mod:`robodyn.recursions.newton_euler`, written once over the scalar interface: here it runs
on :class:`~robodyn.recursions.scalars.SymengineOps`, in the modified-DH frames of
:func:`~robodyn.recursions.arm.arm_data` (a standard-DH arm is converted first). It is the same physics as
Luh, Walker and Paul's recursion in Fu et al.'s table 3.3 (velocities and accelerations outward, forces and
moments inward, the base accelerating by -gravity, eq. 3.3-46), with each link's inertia taken about its own
frame origin (J_j, MS_j = m_j r_j, M_j) instead of its centre of mass.

The parameters are not regrouped (``group=False``): the expressions stay in the user's own parameters. Measured
against regrouping: on fully symbolic arms regrouping makes tau's nested expressions larger (the regrouped
parameters are sums carried through the fixed geometry) and slower to bring to sympy; on arms with numeric
inertia it makes them smaller (the PUMA 560's expanded tau several times faster), a possible later choice.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from robodyn.algebra import SeExpr
from robodyn.model.convert import tip_load_to_modified
from robodyn.model.manipulator import Manipulator
from robodyn.recursions import newton_euler as recursion
from robodyn.recursions.arm import arm_data
from robodyn.recursions.scalars import SymengineOps

#: Regroup the inertial parameters before the recursion (see the module docstring).
GROUP = False


def inverse_dynamics(
    robot: Manipulator,
    q: Sequence[SeExpr],
    qd: Sequence[SeExpr],
    qdd: Sequence[SeExpr],
    gravity: Sequence[SeExpr],
    tip_force: Sequence[SeExpr],
    tip_moment: Sequence[SeExpr],
    progress: Callable[[str], None] | None = None,
) -> list[SeExpr]:
    """tau_j = n_j . z_j (f_j . z_j for a prismatic joint) + b_j qd_j + armature_j qdd_j (the joint springs are
    :func:`robodyn.formulations.derive`'s part ``spring``), as symengine
    expressions, with the given gravity (base frame) and tip load (what the last link exerts, in the robot's
    own last frame, the moment about its origin), whatever the robot's own; ``progress`` is told after each
    link of each pass."""
    if robot.convention == "standard" and any(x != 0 for x in (*tip_force, *tip_moment)):
        # the recursion's last frame is the modified one
        tip_force, tip_moment = tip_load_to_modified(robot.links[-1], tip_force, tip_moment)
    data = dataclasses.replace(arm_data(robot), gravity=tuple(gravity), tip_force=tuple(tip_force),
                               tip_moment=tuple(tip_moment))
    return recursion.inverse_dynamics(data, SymengineOps(), list(q), list(qd), list(qdd), group=GROUP,
                                      progress=progress, spring=False)

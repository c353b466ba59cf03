"""Kane's equations (Angeles, Ma and Rojas 1989) as a formulation: the three-stage algorithm of
:mod:`robodyn.recursions.kane` run on symengine expressions (:class:`~robodyn.recursions.scalars.SymengineOps`).
The numeric engine (:mod:`robodyn.numeric.kane`) and the operation counts (:mod:`robodyn.program.opcount`) run the same
recursion on their own scalars. It runs over the parent array, so trees are derived too, except those with fixed
placements before a joint, which Angeles' HD notation cannot express (refused in one line).
"""

from __future__ import annotations

from collections.abc import Sequence

from robodyn.algebra import SeExpr, to_se
from robodyn.model.manipulator import Manipulator
from robodyn.recursions.kane import Progress, joint_torques
from robodyn.recursions.scalars import SymengineOps


# -- the symbolic entry points -----------------------------------------------------------------
def inverse_dynamics(
    robot: Manipulator,
    q: Sequence[SeExpr],
    qd: Sequence[SeExpr],
    qdd: Sequence[SeExpr],
    gravity: Sequence[SeExpr],
    tip_force: Sequence[SeExpr],
    tip_moment: Sequence[SeExpr],
    progress: Progress | None = None,
) -> list[SeExpr]:
    """Same signature and meaning as :func:`robodyn.formulations.newton_euler.inverse_dynamics`:
    symengine expressions in, the n joint torques/forces out (damping and armature included, the joint springs
    not: :func:`robodyn.formulations.derive` adds them as the part ``spring``)."""
    values = [to_se(x) for x in (*q, *qd, *qdd, *gravity, *tip_force, *tip_moment)]
    n = robot.n
    q_, qd_, qdd_ = values[:n], values[n : 2 * n], values[2 * n : 3 * n]
    g_, f_, m_ = values[3 * n : 3 * n + 3], values[3 * n + 3 : 3 * n + 6], values[3 * n + 6 :]
    tau = joint_torques(robot, q_, qd_, qdd_, g_, f_, m_, SymengineOps(), progress, spring=False)
    return [to_se(t) for t in tau]

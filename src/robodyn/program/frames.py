"""The generated kinematics of named frames: the Program outputs of :data:`~robodyn.program.outputs.FRAME_OUTPUTS`.

``program.build(robot, ("pose:panda_hand", "jacobian:panda_hand"))`` (the name alone, ``"pose"``: the tool frame)
runs :func:`robodyn.recursions.frames.frame_kinematics` on the program builder's scalars: the frame's pose
(16 entries, row-major) and its Jacobian (6 x n, row-major) in the reference of the output
(:data:`~robodyn.program.outputs.FRAME_REFERENCES`). The time derivatives (``jacobian_dot``, ...) run the same
recursion on duals whose q carry qd as their derivative (:mod:`robodyn.recursions.forward_mode`): dJ/dt =
sum_j dJ/dq_j qd_j exactly, its statements sharing every statement of J. A robot with coupled coordinates gets
the columns of its independent ones, J_tree G (and dJ_tree/dt G, with the tree's qd = G qd): ``columns``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from robodyn.model.frames import joint_frame_offset
from robodyn.program.outputs import FRAME_REFERENCES, split_frame_output
from robodyn.recursions.forward_mode import Dual, DualOps
from robodyn.recursions.frames import expressed, frame_kinematics

#: The direction of the duals whose derivative is the time derivative (q's derivative is qd).
TIME = "t"


def frame_outputs(ctx: Any, ops: Any, scalars: Any, names: Sequence[str],
                  columns: Callable[[list[list[Any]]], list[list[Any]]] | None = None) -> dict[str, list[Any]]:
    """The outputs ``names`` (each of :data:`~robodyn.program.outputs.FRAME_OUTPUTS`, with its frame) on the
    builder ``ops`` (its scalar interface ``scalars``), for the robot and tree inputs of ``ctx``
    (:class:`robodyn.program.routes.Context`); ``columns`` maps the tree's Jacobian (6 rows of n) to the
    independent coordinates' (None: the tree's own)."""
    project = columns or (lambda J: J)
    q = [ops.value(x) for x in ctx.inputs["q"]]
    out: dict[str, list[Any]] = {}
    made: dict[tuple[str | None, bool], Any] = {}

    def kinematics(frame: str | None, rates: bool) -> Any:
        if (frame, rates) not in made:
            k, T = joint_frame_offset(ctx.robot, frame)
            R_T, p_T = T[:3, :3].tolist(), [T[r, 3] for r in range(3)]
            if rates:
                qd = [ops.value(x) for x in ctx.inputs["qd"]]
                duals = [Dual(x, {TIME: v}) for x, v in zip(q, qd, strict=True)]
                made[frame, rates] = frame_kinematics(ctx.arm_data, DualOps(scalars), duals, k, R_T, p_T)
            else:
                made[frame, rates] = frame_kinematics(ctx.arm_data, scalars, q, k, R_T, p_T)
        return made[frame, rates]

    for name in names:
        output, frame = split_frame_output(name)
        if output == "pose":
            R, p, _ = kinematics(frame, False)
            out[name] = [*R[0], p[0], *R[1], p[1], *R[2], p[2], 0, 0, 0, 1]
            continue
        rates = output.endswith("_dot")
        reference = FRAME_REFERENCES[output.removesuffix("_dot")]
        R, p, J = kinematics(frame, rates)
        J = expressed(J, R, p, reference)
        if rates:
            J = [[_rate(x) for x in row] for row in J]
        out[name] = [x for row in project(J) for x in row]
    return out


def _rate(x: Any) -> Any:
    """The time derivative of a dual (the literal 0 for a constant)."""
    return x.derivative(TIME) if isinstance(x, Dual) else 0


__all__ = ["TIME", "frame_outputs"]

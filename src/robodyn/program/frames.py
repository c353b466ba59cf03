"""The generated kinematics of named frames: the Program outputs of :data:`~robodyn.program.outputs.FRAME_OUTPUTS`.

``program.build(robot, ("pose:panda_hand", "jacobian:panda_hand"))`` (the name alone, ``"pose"``: the tool frame)
runs :func:`robodyn.recursions.frames.frame_kinematics` on the program builder's scalars: the frame's pose
(16 entries, row-major) and its Jacobian (6 x n, row-major) in the reference of the output
(:data:`~robodyn.program.outputs.FRAME_REFERENCES`). The time derivatives (``jacobian_dot``, ...) run the same
recursion on duals whose q carry qd as their derivative (:mod:`robodyn.recursions.forward_mode`): dJ/dt =
sum_j dJ/dq_j qd_j exactly, its statements sharing every statement of J. A robot with coupled coordinates gets
the columns of its independent ones, J_tree G (and dJ_tree/dt G, with the tree's qd = G qd): ``columns``.

On a floating base (:class:`FloatingBase`, :mod:`robodyn.program.floating`) the same recursion gives the frame in
the base's frame, (R_f, p_f, J_f), and the base's pose (R_b, p_b) in the world carries it there: the pose
(R_b R_f, p_b + R_b p_f), and the Jacobian of nv columns, the base's six first (its body-frame twist (v_b, w_b),
as Pinocchio's ``getFrameJacobian``): in the base's axes at the frame's origin the base's columns are
[[1, -[p_f]x], [0, 1]] (the frame's origin moves by v_b + w_b x p_f), the joints' J_f; local_world_aligned
turns every column by R_b, ``world`` moves that to the world's origin, and ``local`` turns the base's axes'
columns by R_f^T (R_b cancels).
The time derivatives are the same expressions on duals whose base pose moves as dR_b/dt = R_b [w_b]x,
dp_b/dt = R_b v_b (and the joints' q by qd).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from robodyn.model.frames import joint_frame_offset
from robodyn.program.outputs import FRAME_REFERENCES, split_frame_output
from robodyn.recursions.forward_mode import Dual, DualOps
from robodyn.recursions.frames import expressed, frame_kinematics, matmul
from robodyn.recursions.pseudo_joints import Tree, coordinate_rates
from robodyn.recursions.vec3 import Mat, Vec, cross, matvec, vadd

#: The direction of the duals whose derivative is the time derivative (q's derivative is qd).
TIME = "t"


@dataclass(frozen=True)
class FloatingBase:
    """A floating base under the frames: its rotation ``R`` (3 x 3) and position ``p`` (3) in the world and its
    body-frame twist ``v`` (6: the velocity of its origin, then its angular velocity, in its axes), scalars of the
    program builder (:mod:`robodyn.program.floating`)."""

    R: Mat
    p: Vec
    v: Sequence[Any]

    def pose(self, rates: bool) -> tuple[Mat, Vec]:
        """(R_b, p_b), on duals along :data:`TIME` with ``rates``: dR_b/dt = R_b [w]x (row r: R_b[r] x w),
        dp_b/dt = R_b v."""
        if not rates:
            return self.R, self.p
        w, v = self.v[3:6], self.v[:3]
        R_dot = [cross(row, (w[0], w[1], w[2])) for row in self.R]
        p_dot = matvec(self.R, (v[0], v[1], v[2]))
        R: Any = tuple(tuple(Dual(self.R[r][c], {TIME: R_dot[r][c]}) for c in range(3)) for r in range(3))
        return R, (Dual(self.p[0], {TIME: p_dot[0]}), Dual(self.p[1], {TIME: p_dot[1]}),
                   Dual(self.p[2], {TIME: p_dot[2]}))


def base_columns(p: Vec, J: list[list[Any]]) -> list[list[Any]]:
    """J (6 rows, the joints' columns, in the base's axes at the frame's origin p) with the base's six columns
    first: [[1, -[p]x], [0, 1]], the frame's origin moving by v + w x p under the base's twist (v, w)."""
    minus_p_hat = ((0, p[2], -p[1]), (-p[2], 0, p[0]), (p[1], -p[0], 0))  # e_k x p in column k
    base = [[1 if r == c else 0 for c in range(3)] + list(minus_p_hat[r]) for r in range(3)]
    base += [[0, 0, 0] + [1 if r == c else 0 for c in range(3)] for r in range(3)]
    return [base[r] + list(J[r]) for r in range(6)]


def _rotated(R: Mat, J: list[list[Any]]) -> list[list[Any]]:
    """Each column (v; omega) of J turned by R: (R v; R omega)."""
    n = len(J[0])
    new = [(*matvec(R, (J[0][j], J[1][j], J[2][j])), *matvec(R, (J[3][j], J[4][j], J[5][j]))) for j in range(n)]
    return [[new[j][r] for j in range(n)] for r in range(6)]


def frame_outputs(ctx: Any, ops: Any, scalars: Any, names: Sequence[str],
                  columns: Callable[[list[list[Any]]], list[list[Any]]] | None = None,
                  base: FloatingBase | None = None, tree: Tree | None = None) -> dict[str, list[Any]]:
    """The outputs ``names`` (each of :data:`~robodyn.program.outputs.FRAME_OUTPUTS`, with its frame) on the
    builder ``ops`` (its scalar interface ``scalars``), for the robot and tree inputs of ``ctx``
    (:class:`robodyn.program.routes.Context`, or its ``robot``, ``arm_data`` and joints' ``inputs``); ``columns``
    maps the tree's Jacobian (6 rows of n) to the independent coordinates' (None: the tree's own); ``base``: the
    floating base that carries the tree (module docstring; None: a fixed base); ``tree``: the spherical and planar
    joints' pseudo-joints (:mod:`robodyn.recursions.pseudo_joints`; ``arm_data`` is then its arm, the inputs the
    links' coordinates and the columns' rates; their time derivatives move the four coordinates as the joint's
    velocities do)."""
    project = columns or (lambda J: J)
    q = [ops.value(x) for x in ctx.inputs["q"]]
    place = (lambda x: x) if tree is None else tree.q_columns  # the links' coordinates, as the recursion's q
    out: dict[str, list[Any]] = {}
    made: dict[tuple[str | None, bool], Any] = {}

    def kinematics(frame: str | None, rates: bool) -> Any:
        """(R, p, J) of the frame in the tree's base frame (J with a floating base's columns first)."""
        if (frame, rates) not in made:
            k, T = joint_frame_offset(ctx.robot, frame)
            k = k if tree is None else tree.column(k)
            R_T, p_T = T[:3, :3].tolist(), [T[r, 3] for r in range(3)]
            if rates:
                qd = [ops.value(x) for x in ctx.inputs["qd"]]
                q_dot = qd if tree is None else coordinate_rates(tree, q, qd)
                duals = [Dual(x, {TIME: v}) for x, v in zip(q, q_dot, strict=True)]
                R, p, J = frame_kinematics(ctx.arm_data, DualOps(scalars), place(duals), k, R_T, p_T)
            else:
                R, p, J = frame_kinematics(ctx.arm_data, scalars, place(q), k, R_T, p_T)
            made[frame, rates] = R, p, (J if base is None else base_columns(p, J))
        return made[frame, rates]

    for name in names:
        output, frame = split_frame_output(name)
        rates = output.endswith("_dot")
        R, p, J = kinematics(frame, rates)
        reference = FRAME_REFERENCES.get(output.removesuffix("_dot"), "")
        if base is not None and reference != "local":  # carried into the world (local needs the frame's axes only)
            R_b, p_b = base.pose(rates)
            R, p = matmul(R_b, R), vadd(p_b, matvec(R_b, p))
            if output != "pose":
                J = _rotated(R_b, J)
        if output == "pose":
            out[name] = [*R[0], p[0], *R[1], p[1], *R[2], p[2], 0, 0, 0, 1]
            continue
        J = expressed(J, R, p, reference)
        if rates:
            J = [[_rate(x) for x in row] for row in J]
        out[name] = [x for row in project(J) for x in row]
    return out


def _rate(x: Any) -> Any:
    """The time derivative of a dual (the literal 0 for a constant)."""
    return x.derivative(TIME) if isinstance(x, Dual) else 0


__all__ = ["TIME", "FloatingBase", "base_columns", "frame_outputs"]

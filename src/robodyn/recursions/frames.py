"""Forward kinematics and the geometric Jacobian of a frame fixed to a link, over any scalars.

The frame sits at (R_T, p_T) in the frame of link k (:class:`~robodyn.recursions.arm.ArmData`'s modified-DH link
frame, on joint k's axis; k = -1: the base). Along the links that carry it, base first,

    W_j = W_lambda(j) F_j Rot(z, theta_j),   o_j = o_lambda(j) + W_lambda(j) P_j,

(W_-1 = I, o_-1 = 0; :mod:`robodyn.recursions.arm`), and then R = W_k R_T, p = o_k + W_k p_T. Column j of the
Jacobian (rows (v; omega), in the base frame: Pinocchio's LOCAL_WORLD_ALIGNED) is (z_j x (p - o_j); z_j) for a
revolute joint and (z_j; 0) for a prismatic one, z_j = W_j e_z; the columns of the joints that do not carry link
k are the literal 0. :func:`expressed` gives it in the other references (``world``: v + p x omega; ``local``:
R^T v, R^T omega).

Written once on the scalar interface (:mod:`robodyn.recursions.scalars`): on the program builder's scalars it
writes the generated kinematics (:mod:`robodyn.program.frames`), and on duals whose q carry qd as their derivative
(:mod:`robodyn.recursions.forward_mode`) it gives dJ/dt exactly, by the chain rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from robodyn.recursions.arm import ArmData, joint_of
from robodyn.recursions.scalars import ScalarOps
from robodyn.recursions.vec3 import Mat, Scalar, Vec, cross, matvec, vadd, vsub

#: The identity, of literals (which every scalar type folds).
IDENTITY: Mat = ((1, 0, 0), (0, 1, 0), (0, 0, 1))


def _column(A: Mat, c: int) -> Vec:
    return (A[0][c], A[1][c], A[2][c])


def matmul(A: Mat, B: Mat) -> Mat:
    return tuple(tuple(A[r][0] * B[0][c] + A[r][1] * B[1][c] + A[r][2] * B[2][c] for c in range(3))
                 for r in range(3))  # type: ignore[return-value]


def _transpose(A: Mat) -> Mat:
    return tuple(tuple(A[c][r] for c in range(3)) for r in range(3))  # type: ignore[return-value]


def frame_kinematics(arm: ArmData, ops: ScalarOps, q: Sequence[Scalar], k: int, R_T: Any, p_T: Any) -> tuple[
        Mat, Vec, list[list[Scalar]]]:
    """(R, p, J): the pose of the frame at (R_T, p_T) (model numbers, 3x3 and 3) in link k's frame, and its
    Jacobian (6 rows of n entries, local_world_aligned) at q (the module docstring)."""
    chain = arm.ancestors(k)[::-1] if k >= 0 else []
    W: dict[int, Mat] = {-1: IDENTITY}
    o: dict[int, Vec] = {-1: (0, 0, 0)}
    for j in chain:
        joint = joint_of(arm.joints[j], ops, q[j])
        c, s = joint.c_theta, joint.s_theta
        parent = arm.parents[j]
        A = matmul(W[parent], joint.F)
        W[j] = tuple((c * A[r][0] + s * A[r][1], c * A[r][1] - s * A[r][0], A[r][2])  # type: ignore[assignment]
                     for r in range(3))
        o[j] = vadd(o[parent], matvec(W[parent], joint.P))
    RT: Mat = tuple(tuple(ops.number(R_T[r][c]) for c in range(3)) for r in range(3))  # type: ignore[assignment]
    pT: Vec = (ops.number(p_T[0]), ops.number(p_T[1]), ops.number(p_T[2]))
    R = matmul(W[k], RT)
    p = vadd(o[k], matvec(W[k], pT))
    J: list[list[Scalar]] = [[0] * arm.n for _ in range(6)]
    for j in chain:
        z = _column(W[j], 2)
        column = (*cross(z, vsub(p, o[j])), *z) if arm.joints[j].revolute else (*z, 0, 0, 0)
        for r in range(6):
            J[r][j] = column[r]
    return R, p, J


def expressed(J: list[list[Scalar]], R: Mat, p: Vec, reference: str) -> list[list[Scalar]]:
    """The local_world_aligned Jacobian J of the frame at (R, p) in ``reference``: ``world`` (v + p x omega;
    omega), ``local`` (R^T v; R^T omega), ``local_world_aligned`` (J itself)."""
    n = len(J[0])
    if reference == "local_world_aligned":
        return J
    columns = [((J[0][j], J[1][j], J[2][j]), (J[3][j], J[4][j], J[5][j])) for j in range(n)]
    if reference == "world":
        new = [(vadd(v, cross(p, w)), w) for v, w in columns]
    elif reference == "local":
        Rt = _transpose(R)
        new = [(matvec(Rt, v), matvec(Rt, w)) for v, w in columns]
    else:
        raise ValueError(f"unknown reference {reference!r}")
    return [[(new[j][0] + new[j][1])[r] for j in range(n)] for r in range(6)]


__all__ = ["IDENTITY", "expressed", "frame_kinematics"]

"""Symbolic kinematics: link transforms, forward kinematics of every frame and of the tool,
and the geometric Jacobian of the tool frame (EMDEG generates these too, Burdick sec. 5).

All results are sympy matrices in ``q1..qn`` and the parameters; joint angles appear as
sin(q_i), cos(q_i) of single coordinates (see :mod:`robodyn.model.dh`).

Trees: frame i is placed on frame parents[i] (:attr:`Manipulator.parents`), and the tool is on the
last link of the list; the joints that do not move it have zero Jacobian columns.
"""

from __future__ import annotations

import symengine as se
import sympy

from robodyn.algebra import canonical, cross, matrix_to_sympy
from robodyn.model.dh import JointFrames, chain_frames, rotation, translation
from robodyn.model.manipulator import Manipulator
from robodyn.symbols import joint_symbols


def _q(robot: Manipulator) -> list[se.Symbol]:
    return joint_symbols(robot.n).symengine()[0]


def _tidy(matrix: se.DenseMatrix, robot: Manipulator) -> sympy.ImmutableMatrix:
    q = joint_symbols(robot.n).q
    return matrix_to_sympy(matrix.applyfunc(lambda x: canonical(x, q)))


def _frames_se(robot: Manipulator, frames: list[JointFrames]) -> list[se.DenseMatrix]:
    """0T_0 (the base), 0T_1..0T_n: 0T_i = 0T_{parents[i]} A_i (for a chain, 0T_{i-1} A_i)."""
    T = [se.eye(4)]
    for i, f in enumerate(frames):
        T.append(T[robot.parents[i] + 1] * f.A)
    return T


def link_transforms(robot: Manipulator) -> list[sympy.ImmutableMatrix]:
    """A_1..A_n: frame i-1 (of a tree: frame parents[i]) to frame i (the convention's DH matrix)."""
    return [_tidy(f.A, robot) for f in chain_frames(robot, _q(robot))]


def frame_transforms(robot: Manipulator) -> list[sympy.ImmutableMatrix]:
    """0T_1..0T_n: every link frame in the base frame."""
    return [_tidy(T, robot) for T in _frames_se(robot, chain_frames(robot, _q(robot)))[1:]]


def forward_kinematics(robot: Manipulator) -> sympy.ImmutableMatrix:
    """0T_tool = 0T_n * tool (n: the last link)."""
    T = _frames_se(robot, chain_frames(robot, _q(robot)))[-1] * se.DenseMatrix(robot.tool.tolist())
    return _tidy(T, robot)


def jacobian(robot: Manipulator) -> sympy.ImmutableMatrix:
    """Geometric Jacobian of the tool frame origin in the base frame, 6 x n: rows (v; omega).

    Column i is (z_i x (p_tool - p_i); z_i) for a revolute joint and (z_i; 0) for a
    prismatic one, with z_i the joint axis and p_i a point on it; zero for a joint that does not
    move the last link (a tree's other branches).
    """
    frames = chain_frames(robot, _q(robot))
    T = _frames_se(robot, frames)
    moving = set(robot.ancestors(robot.n - 1))
    columns = []
    tool = T[-1] * se.DenseMatrix(robot.tool.tolist())
    p_tool = translation(tool)
    for i, f in enumerate(frames):
        if i not in moving:
            columns.append([0] * 6)
            continue
        W = T[robot.parents[i] + 1] * f.B  # the frame whose z axis is joint i's axis
        z = rotation(W) * se.DenseMatrix([[0], [0], [1]])
        p = translation(W)
        if f.revolute:
            columns.append(list(cross(z, p_tool - p)) + list(z))
        else:
            columns.append([*list(z), 0, 0, 0])
    J = se.DenseMatrix([[columns[c][r] for c in range(len(columns))] for r in range(6)])
    return _tidy(J, robot)

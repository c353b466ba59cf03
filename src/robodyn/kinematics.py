"""Symbolic kinematics: link transforms, forward kinematics of every frame and of the tool,
and the geometric Jacobian of the tool frame (EMDEG generates these too, seed 001 sec. 5).

All results are sympy matrices in ``q1..qn`` and the parameters; joint angles appear as
sin(q_i), cos(q_i) of single coordinates (see :mod:`robodyn.model.dh`).
"""

from __future__ import annotations

import symengine as se
import sympy

from robodyn.algebra import canonical, cross, matrix_to_sympy
from robodyn.model.dh import chain_frames, rotation, translation
from robodyn.model.manipulator import Manipulator, require_serial
from robodyn.symbols import joint_symbols


def _q(robot: Manipulator) -> list[se.Symbol]:
    require_serial(robot, "symbolic kinematics")
    return joint_symbols(robot.n).symengine()[0]


def _tidy(matrix: se.DenseMatrix, robot: Manipulator) -> sympy.ImmutableMatrix:
    q = joint_symbols(robot.n).q
    return matrix_to_sympy(matrix.applyfunc(lambda x: canonical(x, q)))


def _frames_se(robot: Manipulator) -> list[se.DenseMatrix]:
    T = [se.eye(4)]
    for f in chain_frames(robot, _q(robot)):
        T.append(T[-1] * f.A)
    return T


def link_transforms(robot: Manipulator) -> list[sympy.ImmutableMatrix]:
    """A_1..A_n: frame i-1 to frame i (the convention's DH matrix)."""
    return [_tidy(f.A, robot) for f in chain_frames(robot, _q(robot))]


def frame_transforms(robot: Manipulator) -> list[sympy.ImmutableMatrix]:
    """0T_1..0T_n: every link frame in the base frame."""
    return [_tidy(T, robot) for T in _frames_se(robot)[1:]]


def forward_kinematics(robot: Manipulator) -> sympy.ImmutableMatrix:
    """0T_tool = 0T_n * tool."""
    T = _frames_se(robot)[-1] * se.DenseMatrix(robot.tool.tolist())
    return _tidy(T, robot)


def jacobian(robot: Manipulator) -> sympy.ImmutableMatrix:
    """Geometric Jacobian of the tool frame origin in the base frame, 6 x n: rows (v; omega).

    Column i is (z_i x (p_tool - p_i); z_i) for a revolute joint and (z_i; 0) for a
    prismatic one, with z_i the joint axis and p_i a point on it.
    """
    frames = chain_frames(robot, _q(robot))
    T = [se.eye(4)]
    columns = []
    for f in frames:
        T.append(T[-1] * f.A)
    tool = T[-1] * se.DenseMatrix(robot.tool.tolist())
    p_tool = translation(tool)
    for i, f in enumerate(frames):
        W = T[i] * f.B  # the frame whose z axis is joint i's axis
        z = rotation(W) * se.DenseMatrix([[0], [0], [1]])
        p = translation(W)
        if f.revolute:
            columns.append(list(cross(z, p_tool - p)) + list(z))
        else:
            columns.append([*list(z), 0, 0, 0])
    J = se.DenseMatrix([[columns[c][r] for c in range(len(columns))] for r in range(6)])
    return _tidy(J, robot)

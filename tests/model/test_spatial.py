"""The spatial kit of :mod:`robodyn.model.spatial` agrees with the symbolic link transform of
:mod:`robodyn.model.dh` and with the exact parallel-axis move of :mod:`robodyn.recursions.parameters`."""

from __future__ import annotations

import numpy as np
import sympy

from robodyn.model import Link
from robodyn.model.dh import joint_frames
from robodyn.model.spatial import (
    com_inertia,
    dh_transform,
    homogeneous,
    moved_inertia,
    origin_inertia,
    rot_x,
    rot_z,
    x_screw,
)
from robodyn.recursions.parameters import TENSOR_INDEX, move


def test_dh_transform_is_the_modified_row_of_dh() -> None:
    alpha, a, theta, d = sympy.symbols("alpha a theta d")
    R, t = dh_transform(alpha, a, theta, d)
    A = sympy.Matrix(joint_frames(Link(joint="R", alpha=alpha, a=a, theta=theta, d=d), "modified", None).A.tolist())
    assert (A[:3, :3] - R).applyfunc(sympy.expand) == sympy.zeros(3, 3)
    assert (A[:3, 3] - t).applyfunc(sympy.expand) == sympy.zeros(3, 1)


def test_float_kit_matches_the_symbolic_one() -> None:
    alpha, a, theta, d = 0.3, 0.2, -1.1, 0.4
    R, t = dh_transform(alpha, a, theta, d)
    T = homogeneous(rot_x(alpha), np.zeros(3)) @ homogeneous(np.eye(3), np.array([a, 0, 0])) @ homogeneous(
        rot_z(theta), np.array([0, 0, d]))
    assert np.allclose(T[:3, :3], np.array(R, dtype=float)) and np.allclose(T[:3, 3], np.array(t, dtype=float).ravel())
    Rx, tx = x_screw(a, alpha)
    assert np.allclose(np.array(Rx, dtype=float), rot_x(alpha)) and list(tx) == [a, 0, 0]


def test_moved_inertia_is_the_parallel_axis_move() -> None:
    rng = np.random.default_rng(0)
    m, c = 2.5, rng.normal(size=3)
    L = rng.normal(size=(3, 3))
    m, h, J = origin_inertia(m, c, L @ L.T + np.eye(3))
    R = rot_z(0.7) @ rot_x(-0.4)
    t = rng.normal(size=3)
    m2, h2, J2 = moved_inertia(m, h, J, homogeneous(R, t))
    values = [J[r, s] for r, s in TENSOR_INDEX] + list(h) + [m]
    expected = move(values, R, list(t))
    assert np.allclose([J2[r, s] for r, s in TENSOR_INDEX] + list(h2) + [m2], expected)
    mass, com, inertia = com_inertia(m, h, J)
    assert mass == m and np.allclose(com, c) and np.allclose(inertia, L @ L.T + np.eye(3))

"""The inertial parameters of a link's bodies about its frame origin, the one place every recursion reads them."""

from __future__ import annotations

import sympy

from robodyn.model.manipulator import Manipulator


def body_parameters(robot: Manipulator, k: int) -> tuple[list[list[sympy.Expr]], list[sympy.Expr], sympy.Expr]:
    """J (about the frame origin), MS = m c and M of the bodies of link k (the link, and a payload on the
    last), in link k's frame, as model expressions (parallel axes: J = I_c + m (c.c 1 - c c^T))."""
    J = [[sympy.Integer(0)] * 3 for _ in range(3)]
    MS = [sympy.Integer(0)] * 3
    M = sympy.Integer(0)
    for body in robot.bodies(k):
        m = sympy.sympify(body.mass)
        c = [sympy.sympify(x) for x in body.com]
        cc = sum(x * x for x in c)
        for a in range(3):
            for b in range(3):
                J[a][b] += sympy.expand(body.inertia[a, b] + m * ((cc if a == b else 0) - c[a] * c[b]))
            MS[a] += sympy.expand(m * c[a])
        M += m
    return J, MS, M

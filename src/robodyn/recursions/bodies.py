"""The inertial parameters of a link's bodies about its frame origin, the one place every recursion reads them."""

from __future__ import annotations

import symengine as se
import sympy

from robodyn.algebra import to_se, to_sympy
from robodyn.model.manipulator import Manipulator


def body_parameters(robot: Manipulator, k: int) -> tuple[list[list[sympy.Expr]], list[sympy.Expr], sympy.Expr]:
    """J (about the frame origin), MS = m c and M of the bodies of link k (the link, and a payload on the
    last), in link k's frame, as model expressions (parallel axes: J = I_c + m (c.c 1 - c c^T)); the
    arithmetic is symengine's (sympy's costs tens of milliseconds an arm on first use)."""
    J = [[se.Integer(0)] * 3 for _ in range(3)]
    MS = [se.Integer(0)] * 3
    M = se.Integer(0)
    for body in robot.bodies(k):
        m = to_se(body.mass)
        c = [to_se(x) for x in body.com]
        cc = sum(x * x for x in c)
        for a in range(3):
            for b in range(3):
                J[a][b] += se.expand(to_se(body.inertia[a, b]) + m * ((cc if a == b else 0) - c[a] * c[b]))
            MS[a] += se.expand(m * c[a])
        M += m
    return [[to_sympy(x) for x in row] for row in J], [to_sympy(x) for x in MS], to_sympy(M)

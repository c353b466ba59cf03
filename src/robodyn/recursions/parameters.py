"""The standard inertial parameters of a link about its own frame origin, and how they move between frames.

Khalil and Dombre (*Modeling, Identification and Control of Robots*, 2002, sec. 9.3.2) write the inertial
data of link j as ten *standard parameters*, all about the origin O_j of the link's own frame and in its axes:

    XX, XY, XZ, YY, YZ, ZZ   the inertia tensor about O_j, J_j = I_c + m ([c]x^T [c]x)   (parallel axes)
    MX, MY, MZ               the first moment m c (c: centre of mass in frame j)
    M                        the mass

with the tensor's off-diagonal entries *minus* the products of inertia (XY = -integral(x y dm)), as robodyn's
``inertia`` field. The joint adds IA (armature, the reflected rotor inertia G^2 Jm: column qdd_j), FV (viscous
friction b_j: column qd_j) and, optionally, FC (Coulomb friction: column sign(qd_j), the link's symmetric
``coulomb`` = [FC, -FC]; an asymmetric pair, or Coulomb friction identified without the column, is refused).
The equations of motion are linear in these 12 (or 13) numbers per link (Khalil eq. 9.62): that is what makes
identification a linear least-squares problem.

Symbols are ``XX1 .. M1, IA1, FV1 (, FC1), XX2 ..``; link n's values include the payload (a rigid body fixed to
it, so its parameters add).

:func:`move` re-expresses the ten parameters of a body in another frame (the parallel-axis theorem for the
tensor about an origin); it is linear in the parameters, exact, and works on sympy expressions and on floats.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy

from robodyn.errors import ModelError
from robodyn.model.manipulator import Manipulator, RigidBody

#: The ten inertial parameters of a link, in Khalil's order.
INERTIAL = ("XX", "XY", "XZ", "YY", "YZ", "ZZ", "MX", "MY", "MZ", "M")
#: Tensor entries (row, column) of XX..ZZ.
TENSOR_INDEX = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))


def joint_names(coulomb: bool = False) -> tuple[str, ...]:
    """The joint parameters after the ten inertial ones: IA, FV (and FC)."""
    return ("IA", "FV", "FC") if coulomb else ("IA", "FV")


def per_link(coulomb: bool = False) -> int:
    """Parameters per link: 12, or 13 with Coulomb friction."""
    return len(INERTIAL) + len(joint_names(coulomb))


def parameter_names(n: int, coulomb: bool = False) -> tuple[str, ...]:
    """``XX1, XY1, ..., M1, IA1, FV1, (FC1,) XX2, ...`` for an n-joint arm."""
    return tuple(f"{name}{j}" for j in range(1, n + 1) for name in INERTIAL + joint_names(coulomb))


def standard_symbols(n: int, coulomb: bool = False) -> tuple[sympy.Symbol, ...]:
    """The standard parameters as sympy symbols, in :func:`parameter_names` order."""
    return tuple(sympy.Symbol(name) for name in parameter_names(n, coulomb))


def index(name: str, link: int, coulomb: bool = False) -> int:
    """Position of parameter ``name`` (e.g. ``"MZ"``) of ``link`` (0-based) in the standard vector."""
    names = INERTIAL + joint_names(coulomb)
    return link * len(names) + names.index(name)


def body_parameters(body: RigidBody) -> list[sympy.Expr]:
    """The ten parameters of one body about the origin of the frame its data are given in.

    ``J = I_c + m (|c|^2 E - c c^T)`` (parallel-axis theorem, Khalil eq. 9.55), h = m c, m."""
    m = body.mass
    c = sympy.Matrix(body.com)
    J = sympy.Matrix(body.inertia) + m * ((c.T * c)[0, 0] * sympy.eye(3) - c * c.T)
    h = m * c
    return [sympy.expand(J[r, s]) for r, s in TENSOR_INDEX] + [sympy.expand(x) for x in h] + [m]


def link_parameters(robot: Manipulator, k: int) -> list[sympy.Expr]:
    """The ten parameters of link k (0-based) about its frame origin, the payload included on the last link."""
    total = [sympy.Integer(0)] * len(INERTIAL)
    for body in robot.bodies(k):
        total = [a + b for a, b in zip(total, body_parameters(body), strict=True)]
    return total


def standard_values(robot: Manipulator, coulomb: bool = False) -> sympy.ImmutableMatrix:
    """The robot's standard parameter vector p (numbers or expressions), in :func:`parameter_names` order."""
    values: list[sympy.Expr] = []
    for k, link in enumerate(robot.links):
        values += link_parameters(robot, k)
        values += [link.armature, link.damping] + ([_coulomb_value(link, k)] if coulomb else [])
        if not coulomb and link.has_coulomb:
            raise ModelError("the link has Coulomb friction: identify it with coulomb=True (the FC column)",
                             link=k + 1, field="coulomb")
    return sympy.ImmutableMatrix(values)


def _coulomb_value(link: Any, k: int) -> sympy.Expr:
    """FC_k: the column sign(qd_k) holds symmetric Coulomb friction, Tc+ = -Tc- = FC (Khalil eq. 9.62)."""
    odd, even = link.coulomb_parts
    if even != 0:
        raise ModelError(f"Tc+ = {link.coulomb[0]} and Tc- = {link.coulomb[1]} differ in size: the FC column models "
                         "symmetric Coulomb friction only", link=k + 1, field="coulomb")
    return odd


def check_no_clash(robot: Manipulator, coulomb: bool = False) -> None:
    """The standard parameter names must not be used by the robot's own symbols (its geometry)."""
    taken = {s.name for s in robot.parameters()} & set(parameter_names(robot.n, coulomb))
    if taken:
        raise ModelError(
            f"the robot uses the name(s) {', '.join(sorted(taken))}, reserved for the standard inertial "
            "parameters of identification; rename them"
        )


# -- moving parameters between frames --------------------------------------------------------------


def tensor(values: Sequence[Any]) -> tuple[Any, Any, Any]:
    """(J, h, m) of a ten-vector: J as a 3x3 nested list, h a 3-list."""
    xx, xy, xz, yy, yz, zz, mx, my, mz, m = values
    return [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], [mx, my, mz], m


def _matmul(A: Any, B: Any) -> list[list[Any]]:
    return [[sum(A[i][k] * B[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def _skew(v: Sequence[Any]) -> list[list[Any]]:
    return [[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]]


def move(values: Sequence[Any], R: Any, t: Sequence[Any]) -> list[Any]:
    """The ten parameters of a body given about the origin of frame F, re-expressed about the origin of
    frame G, where F sits at rotation ``R`` and origin ``t`` in G:

        m' = m,   h' = R h + m t,
        J' = R J R^T - m [t]x[t]x - [t]x[R h]x - [R h]x[t]x          (Khalil eq. 9.56; Featherstone eq. 2.63)

    ``R`` is a 3x3 nested sequence (or matrix) and ``t`` a 3-sequence, of sympy expressions or floats;
    the result is exact (expanded) for sympy input."""
    Rl = [[R[i][j] if isinstance(R, (list, tuple)) else R[i, j] for j in range(3)] for i in range(3)]
    J, h, m = tensor(values)
    Rh = [sum(Rl[i][k] * h[k] for k in range(3)) for i in range(3)]
    h2 = [Rh[i] + m * t[i] for i in range(3)]
    RJRt = _matmul(_matmul(Rl, J), [[Rl[j][i] for j in range(3)] for i in range(3)])
    St, Sh = _skew(t), _skew(Rh)
    tt, th, ht = _matmul(St, St), _matmul(St, Sh), _matmul(Sh, St)
    J2 = [[RJRt[i][j] - m * tt[i][j] - th[i][j] - ht[i][j] for j in range(3)] for i in range(3)]
    out = [J2[r][s] for r, s in TENSOR_INDEX] + h2 + [m]
    if any(isinstance(x, sympy.Basic) for x in out):
        return [sympy.expand(x) for x in out]
    return out


def move_matrix(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """The 10x10 matrix of :func:`move` for numeric R, t (p_G = T p_F)."""
    eye = np.eye(len(INERTIAL))
    return np.array([move(list(eye[:, k]), R, list(t)) for k in range(len(INERTIAL))], dtype=float).T

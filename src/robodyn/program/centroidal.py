"""Centroidal outputs of a robot on a floating base (:mod:`robodyn.program.floating`): the centre of mass c(q) (3),
its Jacobian J_c (3 x nv, row-major), the centroidal momentum matrix A_G(q) (6 x nv, rows linear then angular
momentum) and the centroidal bias dA_G/dt v (6), as Pinocchio's ``centerOfMass``, ``jacobianCenterOfMass``,
``computeCentroidalMap`` and ``computeCentroidalMapTimeVariation`` (then ``dAg @ v``) with a
``JointModelFreeFlyer`` root: world-aligned axes, moments about the centre of mass, v the base's body-frame twist
then the joints' rates.

No new recursion (Orin and Goswami 2008, 2013): the base's six rows of M are the composite-body momenta of each
coordinate, in the base frame about its origin (:func:`robodyn.recursions.composite.floating_inertia_matrix`;
its base block gives the total mass m and first moment MS, so c_b = MS / m in the base frame), and
A_G = X_G^* M[0:6, :] with X_G^* the wrench transform to the centre of mass in world axes: linear rows R l,
angular rows R (k - c_b x l). The centroidal bias is the same transform of the base's rows of h (the Newton-Euler
velocity terms, no gravity): the base's wrench f = dh_b/dt + v_b x* h_b, and d/dt (X_G^* h_b) at vdot = 0 reduces
to X_G^* f (the terms of the moving centre of mass cancel by Jacobi's identity). c = p + R c_b, J_c = R M[0:3, :] / m.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from robodyn.program.outputs import CENTROIDAL_OUTPUTS
from robodyn.recursions.arm import quaternion_matrix

__all__ = ["CENTROIDAL_OUTPUTS", "centroidal_output"]


def quaternion_rotation(ops: Any, quaternion: Sequence[Any]) -> list[list[Any]]:
    """R = 1 + 2 P of the unit quaternion (x, y, z, w) (:func:`robodyn.recursions.arm.quaternion_matrix`), as the
    builder's values."""
    return [[ops.value(x) for x in row] for row in quaternion_matrix(quaternion)]


def _rotate(R: Sequence[Sequence[Any]], v: Sequence[Any]) -> list[Any]:
    return [R[r][0] * v[0] + R[r][1] * v[1] + R[r][2] * v[2] for r in range(3)]


def _cross(a: Sequence[Any], b: Sequence[Any]) -> list[Any]:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _to_centre(R: Sequence[Sequence[Any]], c_b: Sequence[Any], f: Sequence[Any]) -> list[Any]:
    """X_G^* of a wrench (force, moment about the base's origin, base axes): (R f, R (n - c_b x f))."""
    moment = [n - m for n, m in zip(f[3:6], _cross(c_b, f[:3]), strict=True)]
    return [*_rotate(R, f[:3]), *_rotate(R, moment)]


def centroidal_output(parts: Any, name: str) -> list[Any]:
    """The output ``name`` (of :data:`~robodyn.program.outputs.CENTROIDAL_OUTPUTS`) of a floating robot, flat
    (row-major), from ``parts`` (:class:`robodyn.program.floating._Parts`: its ``part("M")`` and ``part("h")``)."""
    ops = parts.ops
    nv = len(parts.v)
    M = parts.part("M")
    rows = [M[a * nv:(a + 1) * nv] for a in range(6)]
    m = M[0]
    inverse_m = ops.reciprocal(m)  # (parameters only: in the constants block)
    # the base block [[m 1, -hat(MS)], [hat(MS), J]]: MS = (M[5][1], M[3][2], M[4][0])
    c_b = [ops.value(rows[5][1] * inverse_m), ops.value(rows[3][2] * inverse_m), ops.value(rows[4][0] * inverse_m)]
    R = quaternion_rotation(ops, parts.q[3:7])
    if name == "com":
        return [ops.value(p + x) for p, x in zip(parts.q[:3], _rotate(R, c_b), strict=True)]
    if name == "com_jacobian":
        scaled = [[ops.value(x * inverse_m) for x in row] for row in R]  # R / m: 9 multiplications, not 3 nv
        linear = [_rotate(scaled, [rows[a][j] for a in range(3)]) for j in range(nv)]
        return [ops.value(linear[j][r]) for r in range(3) for j in range(nv)]
    if name == "centroidal_map":
        columns = [_to_centre(R, c_b, [rows[a][j] for a in range(6)]) for j in range(nv)]
        return [ops.value(columns[j][r]) for r in range(6) for j in range(nv)]
    if name == "centroidal_bias":
        return [ops.value(x) for x in _to_centre(R, c_b, parts.part("h")[:6])]
    raise ValueError(f"unknown centroidal output {name!r}; choose from {', '.join(CENTROIDAL_OUTPUTS)}")

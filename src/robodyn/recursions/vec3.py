"""3-vectors and 3x3 matrices as tuples over any scalars with + - * (symengine expressions,
NumPy batches, counting or program-building scalars, and the literal 0 that all of them fold)."""

from __future__ import annotations

from typing import Any

Scalar = Any  # a symengine expression, a NumPy array of a batch, a counting scalar, or the literal 0
Vec = tuple[Scalar, Scalar, Scalar]
Mat = tuple[Vec, Vec, Vec]
ZERO3: Vec = (0, 0, 0)


def vadd(*vs: Vec) -> Vec:
    return tuple(sum(components[1:], components[0]) for components in zip(*vs, strict=True))


def vsub(x: Vec, y: Vec) -> Vec:
    return (x[0] - y[0], x[1] - y[1], x[2] - y[2])


def vneg(x: Vec) -> Vec:
    return (-x[0], -x[1], -x[2])


def vscale(s: Any, x: Vec) -> Vec:
    return (s * x[0], s * x[1], s * x[2])


def cross(x: Vec, y: Vec) -> Vec:
    return (x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0])


def dot(x: Vec, y: Vec) -> Scalar:
    return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]


def matvec(A: Mat, x: Vec) -> Vec:
    return tuple(A[r][0] * x[0] + A[r][1] * x[1] + A[r][2] * x[2] for r in range(3))

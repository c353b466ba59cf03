"""What the fixed-base and the floating-base regressors share (:mod:`~robodyn.identification.regressor`,
:mod:`~robodyn.identification.floating`): a body's wrench per unit standard parameter (Khalil and Dombre eq. 9.63),
the move of a standard-DH link's parameters to its modified frame (T_j), and the binding of the geometry symbols."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import sympy

from robodyn.errors import ModelError
from robodyn.model.floats import Floats
from robodyn.model.manipulator import Manipulator
from robodyn.model.params import geometry_symbols, symbol_values
from robodyn.model.spatial import x_screw
from robodyn.numeric.model import check_bound_bodies
from robodyn.recursions import newton_euler as ne
from robodyn.recursions import parameters as params_


def unit_wrenches(motion: ne.Motion) -> list[ne.Wrench]:
    """The wrench (F, N) of link j for each of its ten parameters XX..M set to 1 and the others to 0, i.e.
    :func:`~robodyn.recursions.newton_euler.link_wrench` as a 6x10 matrix (eq. 9.63 is linear in them):
    a tensor entry gives N = E wd + w x (E w) (E the unit symmetric matrix), a first moment MS = e_a gives
    F = U e_a, N = e_a x vd, and the mass F = vd."""
    w, wd, vd = motion
    xx, yy, zz = w[0] * w[0], w[1] * w[1], w[2] * w[2]
    xy, xz, yz = w[0] * w[1], w[0] * w[2], w[1] * w[2]
    tensor = (  # XX, XY, XZ, YY, YZ, ZZ: J wd + w x (J w) with the w_a w_b of ne.w_cross_Jw
        (wd[0], xz, -xy),
        (wd[1] - xz, wd[0] + yz, xx - yy),
        (wd[2] + xy, zz - xx, wd[0] - yz),
        (-yz, wd[1], xy),
        (yy - zz, wd[2] - xy, wd[1] + xz),
        (yz, -xz, wd[2]),
    )
    moments = ((0, -vd[2], vd[1]), (vd[2], 0, -vd[0]), (-vd[1], vd[0], 0))  # e_a x vd
    zero = (0, 0, 0)
    out: list[ne.Wrench] = [(zero, N) for N in tensor]
    for a, N in enumerate(moments):
        e = tuple(1 if b == a else 0 for b in range(3))
        out.append((ne.U_times(w, wd, e), N))  # type: ignore[arg-type]
    out.append((vd, zero))
    return out


def frame_change(robot: Manipulator, k: int) -> tuple[list[list[Any]], list[Any]] | None:
    """(R, t) of link k's own frame in the modified frame k: C_k = Trans(x, a_k) Rot(x, alpha_k) in standard
    DH, None (the same frame) in modified DH."""
    if robot.convention != "standard":
        return None
    link = robot.links[k]
    R, t = x_screw(link.a, link.alpha)
    return R.tolist(), list(t)


def numeric_change(robot: Manipulator, k: int, bind: Callable[[Any], float]) -> np.ndarray | None:
    """T_k as floats (``bind`` gives the geometry's values), None in modified DH."""
    change = frame_change(robot, k)
    if change is None:
        return None
    R = np.array([[bind(x) for x in row] for row in change[0]])
    return params_.move_matrix(R, np.array([bind(x) for x in change[1]]))


def geometry_binding(robot: Manipulator, params: Mapping[Any, Any] | None) -> dict[sympy.Symbol, float]:
    """``params`` as symbols -> floats, with the robot's non-geometric symbols bound to 0 (Y needs none)."""
    bound = symbol_values(params)
    check_physical(robot, bound)  # inertial values given: physical ones only
    missing = sorted(s.name for s in geometry_symbols(robot) if s not in bound)
    if missing:
        raise ModelError(
            f"the regressor of {robot.name!r} needs numbers for its geometry symbols {', '.join(missing)}: "
            "bind them with params={...}", field="params", unbound=tuple(missing)
        )
    for s in robot.parameters():
        bound.setdefault(s, 0.0)
    return bound


def check_physical(robot: Manipulator, params: Mapping[Any, Any] | None) -> None:
    """Refuse parameter values that give a body a negative mass or an inertia that is not positive
    semidefinite (:func:`robodyn.numeric.model.check_bound_bodies`; bodies left symbolic are skipped)."""

    binding = symbol_values(params)
    check_bound_bodies(robot, Floats(binding), skip_unbound=True)

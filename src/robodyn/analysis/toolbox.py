"""Names robotics users already know: thin aliases in the style of the Robotics Toolbox for Python (RTB).

Peter Corke's toolbox calls inverse dynamics ``rne``, the inertia matrix ``inertia``, the Coriolis matrix
``coriolis``, the gravity load ``gravload``, forward dynamics ``accel`` and its integration ``fdyn``. The same
names exist here as free functions, ``robodyn.analysis.toolbox.rne(robot, q, qd, qdd)``, with the meaning RTB gives them
(the robot first, as in Pinocchio's algorithms; :class:`~robodyn.Manipulator` holds data only and has no such
methods); each is a thin wrapper over :mod:`robodyn.numeric` (and :func:`robodyn.analysis.simulation.simulate` for
``fdyn``):

================================  =====================================================================
``rne(q, qd, qdd, gravity)``      :func:`robodyn.numeric.inverse_dynamics` (tip load included)
``inertia(q)``                    :func:`robodyn.numeric.mass_matrix` (armature on the diagonal)
``coriolis(q, qd)``               the Coriolis/centripetal *matrix* C(q, qd) with C qd = h (RTB's), from
                                  Newton-Euler at unit velocities; :func:`robodyn.numeric.coriolis` is h
``gravload(q, gravity)``          :func:`robodyn.numeric.gravity` (gravity only, no tip load: for a robot with a
                                  tip load ``rne(q, 0, 0) = gravload(q) + J^T w``, unlike RTB's equality)
``itorque(q, qdd)``               M(q) qdd
``nofriction(coulomb, viscous)``  the robot without Coulomb (and viscous) friction, for simulation
``accel(q, qd, torque)``          :func:`robodyn.numeric.forward_dynamics`
``fdyn(T, q0, Q, Q_args, qd0)``   :func:`robodyn.analysis.simulation.simulate`; returns RTB's ``(t, q, qd)`` namedtuple
================================  =====================================================================

Conventions, where they differ or could be misread:

- **Gravity** is the acceleration of gravity in the base frame, (0, 0, -9.81) for a z-up base, as in RTB for
  Python (``robot.gravity``); MATLAB RTB's ``gravity`` property was the opposite vector ([0 0 9.81]). A
  ``gravity=`` argument overrides the robot's for one call.
- **Friction**: RTB's links have motor-side viscous friction B and Coulomb friction Tc = [Tc+, Tc-], scaled by the
  gear ratio G (``G^2 B qd`` and ``|G| Tc+-`` at the joint) and included in ``rne`` and ``accel``. robodyn's
  are joint-side: ``damping`` (= RTB's G^2 B) and ``coulomb`` (= ``|G| [Tc+, Tc-]``), included in ``rne`` and
  ``accel`` too (built-in ``puma560_rtb`` carries the Toolbox's values). ``coriolis`` leaves friction out, as
  RTB's does.
- **Motor inertia**: RTB's Jm with gear ratio G adds G^2 Jm to M_ii; robodyn's ``armature`` is that product,
  in ``inertia``, ``rne`` and ``accel`` alike.
- **Tip load**: ``rne(..., fext=w)`` takes an external wrench per call as RTB's (force, moment that the last link
  exerts on the environment, in its frame); robodyn's tip load is part of the robot (``tip_force``,
  ``tip_moment``) and enters ``rne`` and ``accel`` but not ``gravload``, ``inertia`` or ``coriolis``.
- Shapes: one state (n,) or a batch (N, n) -> (N, n) (RTB's trajectory form, rows are time steps).
- Symbolic robots bind their parameters with ``params={...}`` (RTB has no symbolic arms at this level).
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from robodyn import numeric
from robodyn.analysis.simulation import simulate
from robodyn.model.cache import PerRobotCache
from robodyn.model.manipulator import Manipulator

FdynResult = namedtuple("FdynResult", "t q qd")


#: The robot with another gravity, made once per robot and gravity: the numeric engine compiles a robot once,
#: so a loop of rne(..., gravity=g) calls must not hand it a new robot every time.
_REGRAVITATED: PerRobotCache[Manipulator] = PerRobotCache()


def _with_gravity(robot: Manipulator, gravity: Any) -> Manipulator:
    if gravity is None:
        return robot
    g = tuple(float(x) for x in np.ravel(gravity))
    return _REGRAVITATED.get(robot, g, lambda: robot.replace(gravity=g))


def rne(robot: Manipulator, q: Any, qd: Any = None, qdd: Any = None, *, gravity: Any = None, fext: Any = None,
        params: Mapping[Any, Any] | None = None) -> np.ndarray:
    """Inverse dynamics tau = M qdd + h + G + friction + J^T w (RTB ``rne``); qd, qdd default to zero; ``fext`` the
    wrench (force, moment) the last link exerts on the environment in its frame, for this call, as RTB's."""
    q = np.asarray(q, dtype=float)
    qd = np.zeros_like(q) if qd is None else qd
    qdd = np.zeros_like(q) if qdd is None else qdd
    return numeric.inverse_dynamics(_with_gravity(robot, gravity), q, qd, qdd, params=params, fext=fext)


def itorque(robot: Manipulator, q: Any, qdd: Any, *, params: Mapping[Any, Any] | None = None) -> np.ndarray:
    """The inertia torques M(q) qdd, armature included (RTB ``itorque``)."""
    M = numeric.mass_matrix(robot, q, params=params)
    return np.einsum("...ij,...j->...i", M, np.asarray(qdd, dtype=float))


def inertia(robot: Manipulator, q: Any, *, params: Mapping[Any, Any] | None = None) -> np.ndarray:
    """The joint-space inertia matrix M(q), armature included (RTB ``inertia``)."""
    return numeric.mass_matrix(robot, q, params=params)


def coriolis(robot: Manipulator, q: Any, qd: Any, *, params: Mapping[Any, Any] | None = None) -> np.ndarray:
    """The Coriolis/centripetal matrix C(q, qd), (n, n) or (N, n, n), with C qd = h(q, qd) (RTB ``coriolis``).

    Corke's construction: with h(q, v) the velocity torques (no gravity, friction or load), the squared terms
    come from unit velocities e_j and the products from e_j + e_k, C_ij = sum_k c_ijk qd_k with
    c_ijj = h_i(e_j) and c_ijk = c_ikj = (h_i(e_j + e_k) - h_i(e_j) - h_i(e_k)) / 2 (Christoffel form
    up to the split of the products)."""
    q = np.asarray(q, dtype=float)
    qd = np.asarray(qd, dtype=float)
    single = q.ndim == 1
    qb, qdb = np.atleast_2d(q), np.atleast_2d(qd)
    N, n = np.broadcast_shapes(qb.shape, qdb.shape)
    qb, qdb = np.broadcast_to(qb, (N, n)), np.broadcast_to(qdb, (N, n))
    model = numeric.compile_model(robot, params)
    eye = np.eye(n)
    square = np.stack([numeric.coriolis(model, qb, np.broadcast_to(eye[j], (N, n))) for j in range(n)], axis=2)
    C = square * qdb[:, None, :]  # c_ijj qd_j
    for j in range(n):
        for k in range(j + 1, n):
            both = numeric.coriolis(model, qb, np.broadcast_to(eye[j] + eye[k], (N, n)))
            cross = (both - square[:, :, j] - square[:, :, k]) / 2
            C[:, :, k] += cross * qdb[:, j : j + 1]
            C[:, :, j] += cross * qdb[:, k : k + 1]
    return C[0] if single else C


def gravload(robot: Manipulator, q: Any, *, gravity: Any = None, params: Mapping[Any, Any] | None = None) -> np.ndarray:
    """G(q), the torques that hold the arm against gravity (RTB ``gravload``)."""
    return numeric.gravity(_with_gravity(robot, gravity), q, params=params)


def accel(robot: Manipulator, q: Any, qd: Any, torque: Any, *, gravity: Any = None,
          params: Mapping[Any, Any] | None = None) -> np.ndarray:
    """Forward dynamics qdd = M^-1 (tau - h - G - damping qd - spring - J^T w) (RTB ``accel``)."""
    return numeric.forward_dynamics(_with_gravity(robot, gravity), q, qd, torque, params=params)


def nofriction(robot: Manipulator, coulomb: bool = True, viscous: bool = False) -> Manipulator:
    """The robot without its Coulomb friction (``coulomb``) and, with ``viscous``, without its viscous damping
    (RTB ``nofriction``): Coulomb friction jumps at qd = 0, which numerical integration cannot step over."""
    return robot.replace(links=tuple(
        link.replace(**({"coulomb": 0} if coulomb else {}), **({"damping": 0} if viscous else {}))
        for link in robot.links))


def fdyn(robot: Manipulator, T: float, q0: Any, Q: Callable[..., Any] | None = None,
         Q_args: Mapping[str, Any] | None = None, qd0: Any = None, solver: str = "RK45",
         solver_args: Mapping[str, Any] | None = None, dt: float | None = None, *,
         params: Mapping[Any, Any] | None = None, engine: str = "auto") -> FdynResult:
    """Integrate the motion from (q0, qd0) over [0, T] (RTB ``fdyn``): ``Q(robot, t, q, qd, **Q_args)`` gives the
    joint torques (zero if None); ``solver`` is a :func:`scipy.integrate.solve_ivp` method, ``solver_args`` its
    options (rtol, atol, max_step); ``dt`` the output step (default: 501 samples). Returns ``(t, q, qd)`` with
    q, qd of shape (M, n), via :func:`robodyn.analysis.simulation.simulate` (``engine`` as there)."""
    args = dict(Q_args or {})
    torque = None if Q is None else (lambda t, q, qd: np.asarray(Q(robot, t, q, qd, **args), dtype=float))
    options = dict(solver_args or {})
    t_eval = np.arange(0.0, T, dt) if dt is not None else None
    result = simulate(robot, float(T), q0, qd0, torque, method=solver, params=params, t_eval=t_eval,
                      engine=engine, **options)
    return FdynResult(result.t, result.q, result.qd)


__all__ = ["FdynResult", "accel", "coriolis", "fdyn", "gravload", "inertia", "itorque", "nofriction", "rne"]

"""The regressor of a floating robot: tau = Y(q, v, a) p with the base body's ten parameters in p.

A floating robot (``rd.load(path, floating=True)``, :mod:`robodyn.numeric.floating`) has q of ``robot.nq`` entries
(the base's position, its unit quaternion (x, y, z, w), the joints'), v and a of ``robot.nv`` (the base's body-frame
twist first), and nv rows of tau: the wrench on the base (force; moment about its origin, in its frame), then the
joints'. Its standard parameters are those of the fixed-base robot (:mod:`robodyn.recursions.parameters`: XXj..Mj,
IAj, FVj (, FCj) per link, about the link frames of the robot's own convention) preceded by the base body's ten,
``XX0 .. M0``, about the base frame's origin and in its axes (the ``base`` field of a model file, the root link of a
URDF with the links fixed to it): 10 + 12 n columns (13 n with Coulomb friction).

Each body b (the base, then link j) needs the wrench w_b = Phi(v_b, a_b) p_b, linear in its ten parameters: Khalil
and Dombre's eq. 9.63 (:func:`~robodyn.identification.columns.unit_wrenches`) in the body's frame, with its
angular velocity and acceleration and the classical acceleration of its frame origin (gravity as the world
accelerating by -g). The motions come from :mod:`robodyn.numeric.floating`'s forward pass (spatial velocities and
accelerations about the world origin, batched over the states); each body's six-by-ten Phi is turned into world
axes and moments about the world origin, and then projected, with no further transport, on the axes of the joints
that carry it (its ancestors and its own: S_i^T w_b) and on the base's six columns (S_base^T w_b, every body): the
recursion's backward pass, one column at a time. A standard-DH link's columns are moved to its own frame by
T_j as in the fixed-base regressor; the joint columns (qdd_j, qd_j, sign qd_j) are the fixed base's; coupled
joints are projected as :mod:`robodyn.numeric.floating` projects them. Y p equals
:func:`robodyn.numeric.inverse_dynamics` (friction and armature included) to rounding, less the joint springs (known
torques, not identified).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy

from robodyn.errors import ModelError
from robodyn.identification.columns import geometry_binding, numeric_change, unit_wrenches
from robodyn.model.cache import PerRobotCache
from robodyn.model.joints import random_configuration, skew
from robodyn.model.manipulator import Manipulator
from robodyn.numeric import floating as engine
from robodyn.recursions import parameters as params_

#: The base body's names, after Khalil's numbering (link 0; its ten parameters are all identifiable).
BASE_LINK = 0


def base_names() -> tuple[str, ...]:
    """``XX0, XY0, ..., M0``: the base body's ten parameters."""
    return tuple(f"{name}{BASE_LINK}" for name in params_.INERTIAL)


def floating_names(n: int, coulomb: bool = False) -> tuple[str, ...]:
    """The base body's ten names, then the links' (:func:`~robodyn.recursions.parameters.parameter_names`)."""
    return base_names() + params_.parameter_names(n, coulomb)


def floating_symbols(n: int, coulomb: bool = False) -> tuple[sympy.Symbol, ...]:
    return tuple(sympy.Symbol(name) for name in floating_names(n, coulomb))


def base_values(robot: Manipulator) -> list[sympy.Expr]:
    """The base body's ten parameters about the base origin (zeros for a robot without a base body)."""
    if robot.base is None:
        return [sympy.Integer(0)] * len(params_.INERTIAL)
    return params_.body_parameters(robot.base)


def standard_values(robot: Manipulator, coulomb: bool = False) -> sympy.ImmutableMatrix:
    """p of a floating robot: the base body's ten values, then the links' standard ones."""
    return sympy.ImmutableMatrix([*base_values(robot), *params_.standard_values(robot, coulomb)])


def check_states(robot: Manipulator, q: Any, v: Any, a: Any) -> None:
    """One :class:`ModelError` for a state of the wrong shape (q: nq entries, v and a: nv), or for a spherical joint
    (one coordinate per joint here)."""
    robot.check_one_dof("identification")
    for what, x, size in (("q", q, robot.nq), ("v", v, robot.nv), ("a", a, robot.nv)):
        shape = np.shape(x)
        if len(shape) not in (1, 2) or shape[-1] != size:
            raise ModelError(f"{robot.name}: {what} of a floating robot has {size} entries (nq = {robot.nq}: position, "
                             f"quaternion (x, y, z, w), joints; nv = {robot.nv}), got shape {shape}", field=what)


# -- the regressor ---------------------------------------------------------------------------------------------------

#: Per robot and geometry binding: the floating model and the links' T_j (None in modified DH).
_MODELS: PerRobotCache[tuple[engine.FloatingModel, list[np.ndarray | None], np.ndarray]] = PerRobotCache()


def _compiled(robot: Manipulator, binding: Mapping[sympy.Symbol, float]) -> tuple[engine.FloatingModel,
                                                                                 list[np.ndarray | None], np.ndarray]:
    """The floating model (placeholder inertials: Y needs none), the links' T_j and the ancestor mask
    ``carries[i, j]``: joint i carries link j (i = j or an ancestor of it)."""
    def bind(x: Any) -> float:
        return float(sympy.sympify(x).xreplace(binding))

    model = engine.floating_model(robot, dict(binding))
    carries = np.zeros((robot.n, robot.n), dtype=bool)
    for j in range(robot.n):
        carries[list(robot.ancestors(j)), j] = True
    return model, [numeric_change(robot, k, bind) for k in range(robot.n)], carries


def _body_motions(model: engine.FloatingModel, q: np.ndarray, v: np.ndarray, a: np.ndarray
                  ) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """The world kinematics, the tree joints' (qd, qdd) and per body (N, nb): its frame (R, o) stacked base first and
    its motion in its own frame, (w, wd, vd) with vd the classical acceleration of its origin (gravity as -g)."""
    world = engine._world(model, q)
    qd, qdd = engine._tree_rate(model, v), engine._tree_rate(model, a)
    V, c = engine._velocities(model, world, v, qd)
    A = engine._accelerations(model, world, a, qdd, c, engine._gravity_acceleration(model, q.shape[0]))
    V_, A_ = np.stack(V, 1), np.stack(A, 1)
    R = np.concatenate([world.Rb[:, None], world.R], 1)
    o = np.concatenate([world.pb[:, None], world.o], 1)
    omega, omega_dot = V_[..., 3:], A_[..., 3:]
    v_o = V_[..., :3] + engine._cross(omega, o)  # the velocity of the frame origin
    a_o = A_[..., :3] + engine._cross(omega_dot, o) + engine._cross(omega, v_o)  # its classical acceleration
    local = tuple(np.einsum("nbji,nbj->nbi", R, x) for x in (omega, omega_dot, a_o))
    return world, qd, qdd, R, o, local


def _world_wrenches(R: np.ndarray, o: np.ndarray, w: np.ndarray, wd: np.ndarray, vd: np.ndarray) -> np.ndarray:
    """Phi (N, nb, 6, 10): each body's wrench per unit parameter, (force; moment about the world origin) in world
    axes, from Khalil's wrench in the body frame (force; moment about its origin)."""
    motion = tuple(tuple(x[..., k] for k in range(3)) for x in (w, wd, vd))
    local = np.zeros((*w.shape[:-1], 6, len(params_.INERTIAL)))
    for c, (F, N) in enumerate(unit_wrenches(motion)):  # type: ignore[arg-type]
        for r, value in enumerate((*F, *N)):
            local[..., r, c] = value
    out = np.empty_like(local)
    out[..., :3, :] = R @ local[..., :3, :]
    out[..., 3:, :] = R @ local[..., 3:, :] + skew(o) @ out[..., :3, :]
    return out


def numeric_regressor(robot: Manipulator, q: Any, v: Any, a: Any, *, params: Mapping[Any, Any] | None = None,
                      coulomb: bool = False) -> np.ndarray:
    """Y of a floating robot at a batch of states: (N, nv, 10 + 12 n) for q (N, nq), v and a (N, nv); (nv, 10 + 12 n)
    for one state (13 n with ``coulomb``). Columns: the base body's XX0..M0, then the links' as the fixed base's
    (see the module docstring); ``params`` binds the geometry symbols."""
    check_states(robot, q, v, a)
    binding = geometry_binding(robot, params)
    key = tuple(sorted((s.name, x) for s, x in binding.items()))
    model, changes, carries = _MODELS.get(robot, key, lambda: _compiled(robot, binding))
    try:
        single, q_, (v_, a_) = engine._states(model, q, v, a)
    except ValueError as exc:  # (a quaternion not of unit length)
        raise ModelError(str(exc), field="q") from None
    world, qd, qdd, R, o, motion = _body_motions(model, q_, v_, a_)
    Phi = _world_wrenches(R, o, *motion)
    N, n, ten, per = q_.shape[0], model.n, len(params_.INERTIAL), params_.per_link(coulomb)
    Y = np.zeros((N, 6 + n, ten + per * n))
    base_rows = np.einsum("ndr,nbdc->nrbc", world.Sb, Phi)  # S_base^T w_b for every body
    Y[:, :6, :ten] = base_rows[:, :, 0]
    if n:
        joint_rows = np.einsum("nid,njdc->nijc", world.S, Phi[:, 1:]) * carries[None, :, :, None]  # S_i^T w_j
        for j in range(n):
            columns = slice(ten + per * j, ten + per * j + ten)
            block = np.concatenate([base_rows[:, :, 1 + j], joint_rows[:, :, j]], 1)
            Y[:, :, columns] = block if changes[j] is None else block @ changes[j]  # Y_own = Y_mod T_j
            for c, value in enumerate([qdd[:, j], qd[:, j]] + ([np.sign(qd[:, j])] if coulomb else [])):
                Y[:, 6 + j, ten + per * j + ten + c] = value
    tree = model.tree
    if tree is not None and tree.coupling is not None:  # the joints' rows projected as the engine projects tau
        Y = np.concatenate([Y[:, :6], np.einsum("ja,njk->nak", tree.coupling, Y[:, 6:])], 1)
    return Y[0] if single else Y


def random_states(robot: Manipulator, rng: np.random.Generator, samples: int) -> tuple[np.ndarray, np.ndarray,
                                                                                        np.ndarray]:
    """Random states of a floating robot: (q (samples, nq): position in [-1, 1]^3, a uniform unit quaternion, joints
    in [-pi, pi]; v in [-2, 2], a in [-3, 3] (samples, nv))."""
    q = np.concatenate([random_configuration(rng, samples), rng.uniform(-np.pi, np.pi, (samples, robot.nv - 6))], 1)
    return q, rng.uniform(-2, 2, (samples, robot.nv)), rng.uniform(-3, 3, (samples, robot.nv))


__all__ = ["base_names", "base_values", "check_states", "floating_names", "floating_symbols", "numeric_regressor",
           "random_states", "standard_values"]

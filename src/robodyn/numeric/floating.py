"""Floating-base dynamics in NumPy, batched over states: a robot whose root moves on a free joint
(``rd.load(path, floating=True)``; :mod:`robodyn.model.joints` for the free joint).

Coordinates (Pinocchio's, for a ``JointModelFreeFlyer`` root): q has ``robot.nq`` = 7 + n entries, the base's
position in the world, its unit quaternion (x, y, z, w), then the joints' q; the velocities v, accelerations and
generalised forces have ``robot.nv`` = 6 + n entries, the base's body-frame twist (linear, angular) first. The
base rows of the inverse dynamics are the wrench (force; torque about the base origin) on the base, in the base
frame, as ``pinocchio.rnea``. A robot with coupled joints takes its independent joints' coordinates after the
base's (:mod:`robodyn.numeric.couplings`).

The tree's geometry and bodies are the numeric engine's (:mod:`robodyn.numeric.model`: its joint frames,
:func:`robodyn.numeric.kinematics.joint_frames`, relative to the base, and each body's m, m c, I_o about its
joint frame origin); the recursions run on spatial vectors in the world frame (Featherstone's "ground frame"
form, 6-vectors (linear, angular) about the world origin), the base as joint 0 with its six columns:

- :func:`inverse_dynamics`: Newton-Euler (velocities and accelerations out, body forces back), gravity as the
  base's acceleration -g, the joints' damping and Coulomb friction and their armature as the numeric engine's;
- :func:`mass_matrix`: the composite-rigid-body algorithm (nv x nv, armature on the joints' diagonal);
- :func:`forward_dynamics`: M v' = tau - bias by a Cholesky solve;
- :func:`center_of_mass`, :func:`centroidal_map` A_G(q) (``pinocchio.computeCentroidalMap``: the momentum
  (linear; angular about the centre of mass) in world axes is h_G = A_G v) and :func:`centroidal_momentum`.

:func:`robodyn.numeric.inverse_dynamics`, :func:`~robodyn.numeric.mass_matrix` and
:func:`~robodyn.numeric.forward_dynamics` hand a floating robot to the functions here.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from robodyn.errors import ModelError, ModelWarning
from robodyn.model.cache import PerRobotCache
from robodyn.model.floats import bound_floats
from robodyn.model.joints import free_transform, is_normalized, skew
from robodyn.model.manipulator import Manipulator
from robodyn.numeric import couplings
from robodyn.numeric.kane import NumpyOps
from robodyn.numeric.kinematics import joint_frames
from robodyn.numeric.model import NumericModel, Params, _params_key, compile_model
from robodyn.recursions.arm import coulomb_scalars, joint_friction


@dataclass(frozen=True)
class FloatingModel:
    """A floating robot as floats: its tree (the fixed-base robot's :class:`NumericModel`, None without links), its
    base body (mass, first moment m c and inertia about the base origin, in the base frame) and gravity (world)."""

    name: str
    tree: NumericModel | None
    base_mass: float
    base_first_moment: np.ndarray
    base_inertia: np.ndarray
    gravity: np.ndarray

    @property
    def n(self) -> int:
        """The tree's joints."""
        return 0 if self.tree is None else self.tree.n

    @property
    def nv(self) -> int:
        return 6 + (0 if self.tree is None else self.tree.nv)

    @property
    def nq(self) -> int:
        return self.nv + 1


_CACHE: PerRobotCache[FloatingModel] = PerRobotCache(16)


def floating_model(robot: Manipulator, params: Params | None = None) -> FloatingModel:
    """The :class:`FloatingModel` of a floating ``robot`` with ``params`` bound, compiled once and cached."""
    if not isinstance(robot, Manipulator) or not robot.floating:
        raise ModelError(f"{getattr(robot, 'name', robot)}: not a floating robot (load it with floating=True)")
    return _CACHE.get(robot, _params_key(params), lambda: _build(robot, params))


def _build(robot: Manipulator, params: Params | None) -> FloatingModel:
    if np.any(bound_floats(robot, params).array((*robot.tip_force, *robot.tip_moment), (6,))):
        raise ModelError(f"{robot.name}: floating base: a tip load is not handled yet", field="tip_force")
    tree = None
    if robot.n:
        with warnings.catch_warnings():  # (the links were checked, and warned about, when the robot was built)
            warnings.simplefilter("ignore", ModelWarning)
            fixed = robot.replace(floating=False, base=None)
        tree = compile_model(fixed, params)
    floats = bound_floats(robot, params)
    m, h, J = 0.0, np.zeros(3), np.zeros((3, 3))
    if robot.base is not None:
        m = floats.scalar(robot.base.mass)
        c = floats.array(robot.base.com, (3,))
        Jc = floats.array(robot.base.inertia, (3, 3))
        h = m * c
        J = Jc + m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    return FloatingModel(robot.name, tree, float(m), h, J, floats.array(robot.gravity, (3,)))


# -- states ---------------------------------------------------------------------------------------------


def _states(model: FloatingModel, q: Any, *rates: Any) -> tuple[bool, np.ndarray, list[np.ndarray]]:
    """(single, q (N, nq), rates (N, nv)), checked and broadcast; the quaternions must be unit."""
    arrays = [np.asarray(q, dtype=float), *(np.asarray(x, dtype=float) for x in rates)]
    sizes = [model.nq] + [model.nv] * len(rates)
    for a, size, what in zip(arrays, sizes, ["q", *["v"] * len(rates)], strict=True):
        if a.ndim not in (1, 2) or a.shape[-1] != size:
            raise ValueError(f"{what} of the floating robot {model.name!r} must have shape ({size},) or (N, {size}) "
                             f"(nq = {model.nq}: position, quaternion (x, y, z, w), joints; nv = {model.nv}), "
                             f"got {a.shape}")
    single = all(a.ndim == 1 for a in arrays)
    N = max(a.shape[0] if a.ndim == 2 else 1 for a in arrays)
    out = [np.broadcast_to(np.atleast_2d(a), (N, a.shape[-1])) for a in arrays]
    if not is_normalized(out[0], 1e-6):
        raise ValueError(f"the base quaternion (q[3:7], order x, y, z, w) of {model.name!r} is not of unit length")
    return single, out[0], out[1:]


def _tree_rate(model: FloatingModel, x: np.ndarray) -> np.ndarray:
    """The tree joints' rates (N, n) of the independent ones after the base's six."""
    return couplings.rate(model.tree, x[:, 6:]) if model.tree is not None else np.zeros((x.shape[0], 0))


def _project(model: FloatingModel, tau: np.ndarray) -> np.ndarray:
    """(N, 6 + n_tree) -> (N, nv): the tree's columns projected on the independent joints."""
    if model.tree is None or model.tree.coupling is None:
        return tau
    return np.concatenate([tau[:, :6], couplings.project(model.tree, tau[:, 6:])], 1)


def _project_matrix(model: FloatingModel, M: np.ndarray) -> np.ndarray:
    if model.tree is None or model.tree.coupling is None:
        return M
    G = np.zeros((M.shape[-1], model.nv))
    G[:6, :6] = np.eye(6)
    G[6:, 6:] = model.tree.coupling
    return G.T @ M @ G


# -- kinematics in the world frame ----------------------------------------------------------------------


@dataclass(frozen=True)
class _World:
    """Per body b (0 the base, 1 + i link i): spatial inertia ``inertia`` (N, nb, 6, 6) about the world origin, joint
    columns ``S`` (N, n, 6) and the base's ``Sb`` (N, 6, 6), in the world frame, (linear, angular) rows."""

    inertia: np.ndarray
    S: np.ndarray
    Sb: np.ndarray
    parent: tuple[int, ...]  # body index of each link's parent body


def _inertia(m: np.ndarray, h: np.ndarray, J: np.ndarray) -> np.ndarray:
    """The spatial inertia [[m I, -[h]], [[h], J]] of bodies (..., ) with first moment h and inertia J about the
    world origin, in world axes."""
    out = np.zeros((*h.shape[:-1], 6, 6))
    out[..., :3, :3] = m[..., None, None] * np.eye(3)
    H = skew(h)
    out[..., :3, 3:] = -H
    out[..., 3:, :3] = H
    out[..., 3:, 3:] = J
    return out


def _world_body(m: float, h_local: np.ndarray, J_local: np.ndarray, R: np.ndarray, o: np.ndarray) -> np.ndarray:
    """The spatial inertia about the world origin of a body (m, h, J about its frame's origin, in its frame) whose
    frame is at (R, o) (N, 3, 3), (N, 3): h_O = m o + R h, J_O = R J R^T - m [o][o] - [o][Rh] - [Rh][o]."""
    h = np.einsum("nij,j->ni", R, h_local)
    J = np.einsum("nij,jk,nlk->nil", R, J_local, R)
    Ox, H = skew(o), skew(h)
    J_O = J - m * Ox @ Ox - Ox @ H - H @ Ox
    return _inertia(np.full(o.shape[0], m), m * o + h, J_O)


def _world(model: FloatingModel, q: np.ndarray) -> _World:
    Rb, pb = free_transform(q[:, :7])
    N = q.shape[0]
    Sb = np.zeros((N, 6, 6))  # base columns: (R e_k; 0) and (p x R e_k; R e_k)
    Sb[:, :3, :3] = Rb
    Sb[:, 3:, 3:] = Rb
    Sb[:, :3, 3:] = skew(pb) @ Rb
    bodies = [_world_body(model.base_mass, model.base_first_moment, model.base_inertia, Rb, pb)]
    S = np.zeros((N, model.n, 6))
    parent: tuple[int, ...] = ()
    tree = model.tree
    if tree is not None:
        q_tree = couplings.position(tree, q[:, 7:])
        frames = joint_frames(tree, q_tree)
        R = Rb[:, None] @ frames.R
        o = pb[:, None] + np.einsum("nij,nkj->nki", Rb, frames.o)
        z = R[..., :, 2]
        revolute = tree.revolute.astype(bool)
        S[:, revolute, :3] = np.cross(o[:, revolute], z[:, revolute])  # a revolute joint: (o x z; z)
        S[:, revolute, 3:] = z[:, revolute]
        S[:, ~revolute, :3] = z[:, ~revolute]  # a prismatic one: (z; 0)
        for i in range(tree.n):
            bodies.append(_world_body(float(tree.mass[i]), tree.first_moment[i], tree.inertia_origin[i], R[:, i],
                                      o[:, i]))
        parent = tuple(p + 1 for p in tree.parent)
    return _World(np.stack(bodies, 1), S, Sb, parent)


def _cross_motion(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b of motions (..., 6) = (v, w): (w x v_b + v x w_b, w x w_b)."""
    v, w = a[..., :3], a[..., 3:]
    return np.concatenate([np.cross(w, b[..., :3]) + np.cross(v, b[..., 3:]), np.cross(w, b[..., 3:])], -1)


def _cross_force(a: np.ndarray, f: np.ndarray) -> np.ndarray:
    """a x* f of a motion a = (v, w) and a force f = (f, n): (w x f, w x n + v x f)."""
    v, w = a[..., :3], a[..., 3:]
    return np.concatenate([np.cross(w, f[..., :3]), np.cross(w, f[..., 3:]) + np.cross(v, f[..., :3])], -1)


def _mv(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.einsum("...ij,...j->...i", A, x)


# -- the algorithms -------------------------------------------------------------------------------------


def _rnea(model: FloatingModel, q: np.ndarray, v: np.ndarray, a: np.ndarray, gravity: bool = True) -> np.ndarray:
    """(N, 6 + n_tree): the tree's generalised forces (before the couplings' projection)."""
    w = _world(model, q)
    qd, qdd = _tree_rate(model, v), _tree_rate(model, a)
    N = q.shape[0]
    a_g = np.zeros((N, 6))
    if gravity:
        a_g[:, :3] = -model.gravity
    V = [_mv(w.Sb, v[:, :6])]
    A = [_mv(w.Sb, a[:, :6]) + a_g]  # (the base's S-dot v is V0 x V0 = 0)
    for i in range(model.n):
        p = w.parent[i]
        vJ = w.S[:, i] * qd[:, i, None]
        V.append(V[p] + vJ)
        A.append(A[p] + w.S[:, i] * qdd[:, i, None] + _cross_motion(V[p], vJ))
    F = [_mv(w.inertia[:, b], A[b]) + _cross_force(V[b], _mv(w.inertia[:, b], V[b])) for b in range(model.n + 1)]
    tau = np.zeros((N, 6 + model.n))
    for i in reversed(range(model.n)):
        tau[:, 6 + i] = np.einsum("nk,nk->n", w.S[:, i], F[i + 1])
        F[w.parent[i]] = F[w.parent[i]] + F[i + 1]
    tau[:, :6] = np.einsum("nki,nk->ni", w.Sb, F[0])
    if model.tree is not None:
        tree = model.tree
        ops = NumpyOps()
        for j in range(model.n):
            friction = joint_friction(ops, tree.damping[j], coulomb_scalars(ops, tuple(tree.coulomb[j])), qd[:, j])
            tau[:, 6 + j] += friction + tree.armature[j] * qdd[:, j]
    return tau


def _composite(model: FloatingModel, w: _World) -> np.ndarray:
    """The composite inertias Ic (N, nb, 6, 6) of each body's subtree, about the world origin."""
    Ic = w.inertia.copy()
    for i in reversed(range(model.n)):
        Ic[:, w.parent[i]] += Ic[:, i + 1]
    return Ic


def _crba(model: FloatingModel, q: np.ndarray) -> np.ndarray:
    """(N, 6 + n_tree, 6 + n_tree): M of the tree's coordinates (before the couplings' projection)."""
    w = _world(model, q)
    Ic = _composite(model, w)
    N, nt = q.shape[0], 6 + model.n
    M = np.zeros((N, nt, nt))
    for i in range(model.n):
        F = _mv(Ic[:, i + 1], w.S[:, i])
        M[:, 6 + i, 6 + i] = np.einsum("nk,nk->n", w.S[:, i], F) + model.tree.armature[i]  # type: ignore[union-attr]
        j = w.parent[i]
        while j > 0:
            M[:, 6 + j - 1, 6 + i] = M[:, 6 + i, 6 + j - 1] = np.einsum("nk,nk->n", w.S[:, j - 1], F)
            j = w.parent[j - 1]
        M[:, :6, 6 + i] = np.einsum("nki,nk->ni", w.Sb, F)
        M[:, 6 + i, :6] = M[:, :6, 6 + i]
    M[:, :6, :6] = np.swapaxes(w.Sb, 1, 2) @ Ic[:, 0] @ w.Sb
    return M


def _shaped(single: bool, x: np.ndarray) -> np.ndarray:
    return x[0] if single else x


def inverse_dynamics(robot: Manipulator, q: Any, v: Any, a: Any, *, params: Params | None = None) -> np.ndarray:
    """tau (nv,) or (N, nv): the base wrench (force; torque about the base origin) in the base frame, then the
    joints' torques; ``pinocchio.rnea`` plus the joints' friction (damping b qd, Coulomb) and armature."""
    model = floating_model(robot, params)
    single, q_, (v_, a_) = _states(model, q, v, a)
    return _shaped(single, _project(model, _rnea(model, q_, v_, a_)))


def bias_forces(robot: Manipulator, q: Any, v: Any, *, params: Params | None = None) -> np.ndarray:
    """Everything in tau but M v': :func:`inverse_dynamics` at zero acceleration."""
    return inverse_dynamics(robot, q, v, np.zeros(floating_model(robot, params).nv), params=params)


def mass_matrix(robot: Manipulator, q: Any, *, params: Params | None = None) -> np.ndarray:
    """M(q) (nv, nv) or (N, nv, nv), by the composite-rigid-body algorithm (``pinocchio.crba``, the armature on the
    joints' diagonal)."""
    model = floating_model(robot, params)
    single, q_, _ = _states(model, q)
    return _shaped(single, _project_matrix(model, _crba(model, q_)))


def forward_dynamics(robot: Manipulator, q: Any, v: Any, tau: Any, *, params: Params | None = None) -> np.ndarray:
    """v' with M(q) v' = tau - bias(q, v) (``pinocchio.aba``), by a Cholesky solve."""
    model = floating_model(robot, params)
    single, q_, (v_, tau_) = _states(model, q, v, tau)
    rhs = tau_ - _project(model, _rnea(model, q_, v_, np.zeros_like(v_)))
    M = _project_matrix(model, _crba(model, q_))
    L = np.linalg.cholesky(M)
    y = np.linalg.solve(L, rhs[..., None])
    return _shaped(single, np.linalg.solve(np.swapaxes(L, 1, 2), y)[..., 0])


def center_of_mass(robot: Manipulator, q: Any, *, params: Params | None = None) -> np.ndarray:
    """The centre of mass of the whole robot in the world frame, (3,) or (N, 3) (``pinocchio.centerOfMass``)."""
    model = floating_model(robot, params)
    single, q_, _ = _states(model, q)
    return _shaped(single, _com(_composite(model, _world(model, q_))[:, 0]))


def _com(Ic0: np.ndarray) -> np.ndarray:
    """c = h / m from the whole robot's spatial inertia about the world origin."""
    m = Ic0[:, 0, 0]
    h = np.stack([Ic0[:, 5, 1], Ic0[:, 3, 2], Ic0[:, 4, 0]], -1)  # [h] sits in the lower-left block
    return h / m[:, None]


def centroidal_map(robot: Manipulator, q: Any, *, params: Params | None = None) -> np.ndarray:
    """A_G(q), (6, nv) or (N, 6, nv): the centroidal momentum matrix (Orin and Goswami), h_G = A_G v with h_G the
    linear momentum and the angular momentum about the centre of mass, in world axes
    (``pinocchio.computeCentroidalMap``)."""
    model = floating_model(robot, params)
    single, q_, _ = _states(model, q)
    w = _world(model, q_)
    Ic = _composite(model, w)
    cols = [Ic[:, 0] @ w.Sb] + [_mv(Ic[:, i + 1], w.S[:, i])[..., None] for i in range(model.n)]
    A_O = np.concatenate(cols, -1)  # momentum about the world origin
    c = _com(Ic[:, 0])
    A_G = A_O.copy()
    A_G[:, 3:] -= np.cross(c[:, None, :], np.swapaxes(A_O[:, :3], 1, 2)).swapaxes(1, 2)  # n_G = n_O - c x f
    if model.tree is not None and model.tree.coupling is not None:
        A_G = np.concatenate([A_G[..., :6], A_G[..., 6:] @ model.tree.coupling], -1)
    return _shaped(single, A_G)


def centroidal_momentum(robot: Manipulator, q: Any, v: Any, *, params: Params | None = None) -> np.ndarray:
    """h_G = A_G(q) v, (6,) or (N, 6): linear momentum, then the angular momentum about the centre of mass."""
    A = centroidal_map(robot, q, params=params)
    return np.einsum("...ij,...j->...i", A, np.asarray(v, dtype=float))


__all__ = ["FloatingModel", "bias_forces", "center_of_mass", "centroidal_map", "centroidal_momentum",
           "floating_model", "forward_dynamics", "inverse_dynamics", "mass_matrix"]

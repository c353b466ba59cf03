"""Recursive Newton-Euler inverse dynamics, vectorised over a batch of states.

The recursion of Luh, Walker and Paul (1980) as Featherstone writes it with spatial vectors
(Rigid Body Dynamics Algorithms, 2008, table 5.1), in joint frames (see :mod:`robodyn.numeric.model`):
the same physics as Fu et al.'s table 3.3 and :mod:`robodyn.formulations.newton_euler`, including
Fu's trick for gravity: the base accelerates by -gravity (eq. 3.3-46). Velocities are (omega, v) of
the joint frame origin; accelerations are spatial (Featherstone's), a = (omega_dot, v_dot - omega x v).

Forward pass, joint i with motion subspace s_i = (z, 0) for R and (0, z) for P:

    v_i = X_i v_{i-1} + s_i qd_i,   a_i = X_i a_{i-1} + s_i qdd_i + v_i x s_i qd_i,
    f_i = I_i a_i + v_i x* I_i v_i

On a tree every i - 1 is lambda(i), the parent of link i (Featherstone's table 5.1 is written so).
Backward pass: f_{i-1} += X_i^* f_i, tau_i = s_i . f_i (+ b_i qd_i + armature_i qdd_i). The tip load
(Fu's f_{n+1}, n_{n+1}) is added to the last link's force. Only loops over links; every operation
acts on whole batches.
"""

from __future__ import annotations

import numpy as np

from robodyn.numeric._codegen import rnea_kernel
from robodyn.numeric._kernels import JointTransform, cross, cross_z, joint_transform
from robodyn.numeric.model import NumericModel


def _body_force(model: NumericModel, i: int, state: np.ndarray) -> np.ndarray:
    """f = I a + v x* I v for link i's inertia (m, h = m c, I_o about the origin).

    ``state`` holds (omega, v, omega_dot, a) of shape (3, 4, N); returns the spatial force (n, f) as (3, 2, N).
    """
    m, h, I_o = model.mass[i], model.first_moment[i][:, None, None], model.inertia_origin[i]
    w, v, alpha, a = state[:, 0], state[:, 1], state[:, 2], state[:, 3]
    rot = (I_o @ state[:, 0::2].reshape(3, -1)).reshape(3, 2, -1)  # I_o omega, I_o omega_dot
    h_cross = cross(h, state[:, 1::2])  # h x v, h x a
    ang = rot[:, 0] + h_cross[:, 0]  # angular momentum about the origin
    lin = m * v - cross(h[:, 0], w)  # linear momentum m v + omega x h
    gyro = cross(np.stack((w, v, w), axis=1), np.stack((ang, lin, lin), axis=1))
    out = np.empty((3, 2, state.shape[2]))
    out[:, 0] = rot[:, 1] + h_cross[:, 1] + gyro[:, 0] + gyro[:, 1]
    out[:, 1] = m * a - cross(h[:, 0], alpha) + gyro[:, 2]
    return out


def _forward(
    model: NumericModel,
    X: list[JointTransform],
    qd: np.ndarray | None,
    qdd: np.ndarray | None,
    base_acceleration: np.ndarray,
    N: int,
) -> list[np.ndarray]:
    """Velocities and accelerations outwards (from each link's parent), and each link's net spatial force
    (3, 2, N)."""
    base = np.zeros((3, 4, N))  # omega, v, omega_dot, a of the base
    base[:, 3] = base_acceleration[:, None]
    states: list[np.ndarray] = []
    forces = []
    for i, Xi in enumerate(X):
        lam = model.parent[i]
        state = states[lam] if lam >= 0 else base
        shifted = state.copy()
        shifted[:, 1::2] += cross(state[:, 0::2], Xi.p[:, None])  # v + omega x p, a + omega_dot x p
        state = Xi.to_child(shifted)
        if qd is not None:
            rate = qd[i]
            if model.revolute[i]:
                state[2, 0] += rate
                state[:, 2:] += cross_z(state[:, 0:2], rate)  # omega x z qd, v x z qd
            else:
                state[2, 1] += rate
                state[:, 3] += cross_z(state[:, 0], rate)
        if qdd is not None:
            state[2, 2 if model.revolute[i] else 3] += qdd[i]
        states.append(state)
        forces.append(_body_force(model, i, state))
    return forces


def _backward(model: NumericModel, X: list[JointTransform], forces: list[np.ndarray], tip: bool) -> np.ndarray:
    """Forces inwards (each link's into its parent's) and their projections on the joint axes: tau (n, N)."""
    n_links = model.n
    N = forces[0].shape[2]
    tau = np.empty((n_links, N))
    acc = [f.copy() for f in forces]  # per link: moment about the origin, force, of the links it carries
    if tip:
        acc[-1][:, 0] += model.tip_moment[:, None]
        acc[-1][:, 1] += model.tip_force[:, None]
    for i in reversed(range(n_links)):
        tau[i] = acc[i][2, 0] if model.revolute[i] else acc[i][2, 1]
        lam = model.parent[i]
        if lam >= 0:
            f = X[i].to_parent(acc[i])
            f[:, 0] += cross(X[i].p, f[:, 1])
            acc[lam] += f
    return tau


def transforms(model: NumericModel, q: np.ndarray) -> list[JointTransform]:
    """The joint transforms of every link for joint values q of shape (n, N)."""
    return [joint_transform(model, i, q[i]) for i in range(model.n)]


def rnea(
    model: NumericModel,
    q: np.ndarray,
    qd: np.ndarray | None,
    qdd: np.ndarray | None,
    *,
    gravity: bool = True,
    tip: bool = True,
    joint_terms: bool = True,
) -> np.ndarray:
    """Joint torques for joint-major arrays of shape (n, N) (``None`` for a zero qd or qdd).

    ``gravity``/``tip`` switch gravity and the tip load on or off; ``joint_terms`` adds damping
    b_i qd_i and armature_i qdd_i. Returns tau of shape (n, N).

    Runs the recursion below unrolled for this model, with its exact zeros and ones folded away
    (:mod:`robodyn.numeric._codegen`); :func:`rnea_reference` is the same recursion written generally.
    """
    kernel = rnea_kernel(model, qd is not None, qdd is not None, gravity, tip, joint_terms)
    out = np.empty(q.shape)
    kernel(q, qd, qdd, out)
    return out


def rnea_reference(
    model: NumericModel,
    q: np.ndarray,
    qd: np.ndarray | None,
    qdd: np.ndarray | None,
    *,
    gravity: bool = True,
    tip: bool = True,
    joint_terms: bool = True,
) -> np.ndarray:
    """Joint torques for joint-major arrays of shape (n, N) (``None`` for a zero qd or qdd).

    ``gravity``/``tip`` switch gravity and the tip load on or off; ``joint_terms`` adds damping
    b_i qd_i and armature_i qdd_i. Returns tau of shape (n, N).
    """
    N = q.shape[1]
    X = transforms(model, q)
    base = -model.gravity if gravity else np.zeros(3)  # Fu eq. 3.3-46
    forces = _forward(model, X, qd, qdd, base, N)
    tau = _backward(model, X, forces, tip and model.has_tip_load)
    if joint_terms:
        if qd is not None:
            tau += model.damping[:, None] * qd
        if qdd is not None:
            tau += model.armature[:, None] * qdd
    return tau

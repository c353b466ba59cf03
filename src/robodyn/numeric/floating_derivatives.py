"""Derivatives and kinematics of a floating robot in NumPy, batched over states (:mod:`robodyn.numeric.floating`
for the coordinates: q = (position, quaternion (x, y, z, w), joints), v = (the base's body-frame twist, joints)).

Derivatives are with respect to the tangent space, as Pinocchio's: column j of d/dq is the derivative along
q (+) eps e_j (the base's columns: its pose times exp6(eps e_k), :func:`robodyn.model.joints.integrate`).

- :func:`inverse_dynamics_derivatives` (dtau/dq, dtau/dv, dtau/da = M), ``pinocchio.computeRNEADerivatives``, by
  Carpentier and Mansard's analytic recursion in the world frame (below);
  :func:`forward_dynamics_derivatives` (dv'/dq, dv'/dv, dv'/dtau = M^-1), ``pinocchio.computeABADerivatives``:
  dv'/dx = -M^-1 dtau/dx at v' = forward_dynamics(q, v, tau);
- :func:`center_of_mass_jacobian` (``pinocchio.jacobianCenterOfMass``), :func:`frame_jacobian` and
  :func:`frame_jacobian_dot` of a named frame in ``local``, ``world`` or ``local_world_aligned``
  (``pinocchio.getFrameJacobian``, ``getFrameJacobianTimeVariation``; dJ/dt v in ``local_world_aligned`` is the
  frame's classical acceleration bias, ``getFrameClassicalAcceleration`` at zero acceleration) and
  :func:`centroidal_map_dot` dA_G/dt (``pinocchio.computeCentroidalMapTimeVariation``; dA_G/dt v = dh_G/dt - A_G v').

The recursion. In the world frame ("ground frame": spatial vectors (linear, angular) about the world origin) a
tangent displacement of joint j moves its subtree rigidly by the twist S_j, so a quantity X of a body i of the
subtree varies by S_j x X (motions), S_j x* X (forces), S_j x* I - I S_j x (inertias), but for the velocities and
accelerations the displacement leaves the parent's V_l, A_l (l = lambda(j)) as they are:

    dV_i/dq_j = S_j x V_i + w_j,   w_j = V_l x S_j;
    dA_i/dq_j = S_j x A_i + u_j + w_j x V_i,   u_j = A_l x S_j + V_l x w_j;
    dV_i/dv_j = S_j,   dA_i/dv_j = S_j x V_i + c_j,   c_j = (V_l + V_j) x S_j.

The body force f_i = I_i A_i + V_i x* I_i V_i then varies by its rigid part plus I_i u + B_i w, with
B_i w = V_i x* I_i w - I_i (V_i x w) + w x* (I_i V_i), linear in (I_i, I_i V_i), so that the subtree sums F_k,
I^c_k and B^c_k carry it. With tau_i = S_i . F_i (the rigid parts of S_i and F_i cancel, S x* = -(S x)^T):

    dtau_i/dq_j = S_i . (I^c_i u_j + B^c_i w_j)                          (j an ancestor of i, or i itself)
                = S_i . (I^c_j u_j + B^c_j w_j + S_j x* F_j)             (i a strict ancestor of j),
    dtau_i/dv_j = S_i . (I^c_k c_j + B^c_k S_j),  k the deeper of i, j,

and zero across branches; the joints' damping b adds b on dtau/dv's diagonal, a spring's stiffness k adds k on
dtau/dq's (Coulomb friction: 0 away from rest).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from robodyn.errors import ModelError
from robodyn.model.cache import PerRobotCache
from robodyn.model.joints import skew
from robodyn.model.manipulator import Manipulator
from robodyn.numeric import floating as fl
from robodyn.numeric.kinematics import _carrying, _expressed, _expressed_rate, _reference, frame_offset
from robodyn.numeric.model import Params, _params_key


def _model(robot: Manipulator, params: Params | None) -> fl.FloatingModel:
    """The robot's :class:`~robodyn.numeric.floating.FloatingModel`; a nonlinear closure (four-bars) is refused."""
    model = fl.floating_model(robot, params)
    tree: Any = model.tree
    if tree is not None and getattr(tree, "bars", None):
        raise ModelError(f"{model.name}: floating base: the derivatives and Jacobians take linear couplings only, "
                         "not its four-bars yet")
    return model


def _crm(V: np.ndarray) -> np.ndarray:
    """The matrices (..., 6, 6) of V x (motions V = (v, w))."""
    out = np.zeros((*V.shape[:-1], 6, 6))
    W = skew(V[..., 3:])
    out[..., :3, :3] = W
    out[..., 3:, 3:] = W
    out[..., :3, 3:] = skew(V[..., :3])
    return out


def _crf_bar(h: np.ndarray) -> np.ndarray:
    """The matrices (..., 6, 6) of w -> w x* h (forces h = (f, n)): [[0, -[f]], [-[f], -[n]]]."""
    out = np.zeros((*h.shape[:-1], 6, 6))
    F = skew(h[..., :3])
    out[..., :3, 3:] = -F
    out[..., 3:, :3] = -F
    out[..., 3:, 3:] = -skew(h[..., 3:])
    return out


def _subtree_sums(parent: tuple[int, ...], X: np.ndarray) -> np.ndarray:
    """Per body (axis 1) the sum of X over its subtree (parents come before their children)."""
    X = X.copy()
    for i in reversed(range(len(parent))):
        X[:, parent[i]] += X[:, i + 1]
    return X


@dataclass(frozen=True)
class _Columns:
    """The tree's columns (0-5 the base's, 6 + i joint i's) in the world frame at one batch of states: ``S``
    (N, nvt, 6), ``body`` (nvt,) the body each moves, ``V_parent`` and ``A_parent`` (N, nvt, 6) the velocity and
    acceleration of that body's parent (the world's: 0 and a_g for the base), ``V_body`` (N, nvt, 6) its own."""

    S: np.ndarray
    body: np.ndarray
    V_parent: np.ndarray
    A_parent: np.ndarray
    V_body: np.ndarray


def _ancestry(parent: tuple[int, ...]) -> np.ndarray:
    """(nb, nb) booleans: [a, b] where body a is body b or one of its ancestors."""
    nb = len(parent) + 1
    anc = np.eye(nb, dtype=bool)
    for i in range(len(parent)):
        anc[:, i + 1] |= anc[:, parent[i]]
    return anc


def _world_columns(model: fl.FloatingModel, w: Any) -> tuple[np.ndarray, np.ndarray]:
    """(S (N, nvt, 6), body (nvt,)): every column of the tree in the world frame (the base's six first) and the
    body it moves."""
    return np.concatenate([np.swapaxes(w.Sb, 1, 2), w.S], 1), np.array([0] * 6 + list(range(1, model.n + 1)))


def _columns(model: fl.FloatingModel, w: Any, V: np.ndarray, A: np.ndarray, a_g: np.ndarray) -> _Columns:
    S, body = _world_columns(model, w)
    parent_body = np.array([-1] * 6 + list(w.parent), dtype=int)
    N = S.shape[0]
    V_ext = np.concatenate([V, np.zeros((N, 1, 6))], 1)  # index -1: the world
    A_ext = np.concatenate([A, a_g[:, None]], 1)
    return _Columns(S, body, V_ext[:, parent_body], A_ext[:, parent_body], V[:, body])


def _dot(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """[n, i, j] = X[n, i] . Y[n, j] for (N, nvt, 6) arrays."""
    return X @ np.swapaxes(Y, 1, 2)


def _tree_derivatives(model: fl.FloatingModel, q: np.ndarray, v: np.ndarray, a: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dtau/dq, dtau/dv, M), (N, nvt, nvt) each, in the tree's coordinates (before the couplings' projection)."""
    w = fl._world(model, q)
    qd, qdd = fl._tree_rate(model, v), fl._tree_rate(model, a)
    N = q.shape[0]
    a_g = fl._gravity_acceleration(model, N)
    V_list, c = fl._velocities(model, w, v, qd)
    V = np.stack(V_list, 1)
    A = np.stack(fl._accelerations(model, w, a, qdd, c, a_g), 1)
    inertia = w.inertia
    h = fl._mv(inertia, V)
    f = fl._mv(inertia, A) + fl._cross_force(V, h)
    crm = _crm(V)
    B = -np.swapaxes(crm, -1, -2) @ inertia - inertia @ crm + _crf_bar(h)
    F, Ic, Bc = (_subtree_sums(w.parent, X) for X in (f, inertia, B))
    cols = _columns(model, w, V, A, a_g)
    S, k = cols.S, cols.body
    Ic_k, Bc_k, F_k = Ic[:, k], Bc[:, k], F[:, k]
    wj = fl._cross_motion(cols.V_parent, S)
    uj = fl._cross_motion(cols.A_parent, S) + fl._cross_motion(cols.V_parent, wj)
    cj = fl._cross_motion(cols.V_parent + cols.V_body, S)
    X = fl._mv(Ic_k, S)  # I^c_i S_i
    Z = np.einsum("nkij,nki->nkj", Bc_k, S)  # B^c_i^T S_i
    P = fl._mv(Ic_k, uj) + fl._mv(Bc_k, wj) + fl._cross_force(S, F_k)
    Q = fl._mv(Ic_k, cj) + fl._mv(Bc_k, S)
    anc = _ancestry(w.parent)
    lower = anc[k[None, :], k[:, None]]  # [i, j]: body(j) is body(i) or an ancestor
    upper = ~lower & anc[k[:, None], k[None, :]]
    dq = np.where(lower, _dot(X, uj) + _dot(Z, wj), 0.0) + np.where(upper, _dot(S, P), 0.0)
    dv = np.where(lower, _dot(X, cj) + _dot(Z, S), 0.0) + np.where(upper, _dot(S, Q), 0.0)
    M_lower = np.where(lower, _dot(X, S), 0.0)
    M = M_lower + np.where(upper, np.swapaxes(M_lower, 1, 2), 0.0)
    joints = np.arange(6, 6 + model.n)
    if model.tree is not None:
        dv[:, joints, joints] += model.tree.damping
        dq[:, joints, joints] += model.tree.stiffness  # the springs k (q - q_ref)
        M[:, joints, joints] += fl._armature(model)
    return dq, dv, M


def inverse_dynamics_derivatives(robot: Manipulator, q: Any, v: Any, a: Any, *, params: Params | None = None
                                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dtau/dq, dtau/dv, dtau/da = M), each (nv, nv) or (N, nv, nv), [..., i, j] = d tau_i / d x_j, d/dq along the
    tangent space (``pinocchio.computeRNEADerivatives``, plus the joints' damping on dtau/dv, their springs'
    stiffness on dtau/dq and armature in M)."""
    model = _model(robot, params)
    single, q_, (v_, a_) = fl._states(model, q, v, a)
    return tuple(fl._shaped(single, fl._project_matrix(model, x))  # type: ignore[return-value]
                 for x in _tree_derivatives(model, q_, v_, a_))


def forward_dynamics_derivatives(robot: Manipulator, q: Any, v: Any, tau: Any, *, params: Params | None = None
                                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dv'/dq, dv'/dv, dv'/dtau = M^-1), each (nv, nv) or (N, nv, nv), at v' = forward_dynamics(q, v, tau)
    (``pinocchio.computeABADerivatives``): dv'/dx = -M^-1 dtau/dx, M^-1 from M's Cholesky factor."""
    model = _model(robot, params)
    single, q_, (v_, tau_) = fl._states(model, q, v, tau)
    a = fl.forward_dynamics(robot, q_, v_, tau_, params=params)
    dq, dv, M = (fl._project_matrix(model, x) for x in _tree_derivatives(model, q_, v_, a))
    L_inv = np.linalg.inv(np.linalg.cholesky(M))
    M_inv = np.swapaxes(L_inv, 1, 2) @ L_inv
    return fl._shaped(single, -M_inv @ dq), fl._shaped(single, -M_inv @ dv), fl._shaped(single, M_inv)


# -- kinematics -------------------------------------------------------------------------------------------------


def center_of_mass_jacobian(robot: Manipulator, q: Any, *, params: Params | None = None) -> np.ndarray:
    """dc/dv, (3, nv) or (N, 3, nv): the centre of mass's velocity in the world frame is J_c v
    (``pinocchio.jacobianCenterOfMass``): the linear rows of A_G over the total mass."""
    model = _model(robot, params)
    single, q_, _ = fl._states(model, q)
    A_O, Ic = _momentum_map(model, fl._world(model, q_))
    return fl._shaped(single, _project_columns(model, A_O[:, :3] / Ic[:, 0, 0, 0, None, None]))


def _momentum_map(model: fl.FloatingModel, w: Any) -> tuple[np.ndarray, np.ndarray]:
    """(A_O (N, 6, nvt): the momentum about the world origin of each column, Ic (N, nb, 6, 6))."""
    Ic = fl._composite(model, w)
    S, body = _world_columns(model, w)
    return np.swapaxes(fl._mv(Ic[:, body], S), 1, 2), Ic


def _project_columns(model: fl.FloatingModel, J: np.ndarray) -> np.ndarray:
    """(..., 6 + n_tree) columns -> (..., nv): the tree's on the independent coordinates."""
    if model.tree is None or model.tree.coupling is None:
        return J
    return np.concatenate([J[..., :6], J[..., 6:] @ model.tree.coupling], -1)


def centroidal_map_dot(robot: Manipulator, q: Any, v: Any, *, params: Params | None = None) -> np.ndarray:
    """dA_G/dt, (6, nv) or (N, 6, nv), the time derivative of :func:`robodyn.numeric.floating.centroidal_map` along
    v (``pinocchio.computeCentroidalMapTimeVariation``): dA_G/dt v = dh_G/dt - A_G v'. Column j of the momentum map
    about the world origin, I^c_j S_j, varies by (sum_i V_i x* I_i - I_i V_i x) S_j + I^c_j (V_j x S_j) over the
    bodies i of j's subtree; the shift to the centre of mass c (n_G = n_O - c x f) adds -c' x f. Pinocchio's dAg
    leaves that last term out (it vanishes on v: c' x m c' = 0): the same dA_G/dt v, its matrix differs by
    -[c'] (m J_c) in the angular rows."""
    model = _model(robot, params)
    single, q_, (v_,) = fl._states(model, q, v)
    w = fl._world(model, q_)
    V = np.stack(fl._velocities(model, w, v_, fl._tree_rate(model, v_))[0], 1)
    inertia = w.inertia
    crm = _crm(V)
    dI = _subtree_sums(w.parent, -np.swapaxes(crm, -1, -2) @ inertia - inertia @ crm)
    A_O, Ic = _momentum_map(model, w)
    S, body = _world_columns(model, w)
    dA_O = np.swapaxes(fl._mv(dI[:, body], S) + fl._mv(Ic[:, body], fl._cross_motion(V[:, body], S)), 1, 2)
    m = Ic[:, 0, 0, 0]
    c = fl._com(Ic[:, 0])
    c_dot = np.einsum("nij,nj->ni", A_O[:, :3], _tree_v(model, v_)) / m[:, None]
    dA_G = dA_O.copy()
    dA_G[:, 3:] -= np.cross(c[:, :, None], dA_O[:, :3], axis=1) + np.cross(c_dot[:, :, None], A_O[:, :3], axis=1)
    return fl._shaped(single, _project_columns(model, dA_G))


def _tree_v(model: fl.FloatingModel, v: np.ndarray) -> np.ndarray:
    return np.concatenate([v[:, :6], fl._tree_rate(model, v)], 1)


#: The named frames' (link, placement) as floats, per robot (sympy's evaluation costs more than the kinematics).
_OFFSETS: PerRobotCache[tuple[int, np.ndarray]] = PerRobotCache(64)


def _frame_world(robot: Manipulator, w: Any, frame: str, params: Params | None
                 ) -> tuple[int, np.ndarray, np.ndarray]:
    """(k, R, p): the frame's link k (-1 the base) and its pose (N, 3, 3), (N, 3) in the world."""
    k, T = _OFFSETS.get(robot, (frame, _params_key(params)), lambda: frame_offset(robot, frame, params))
    R_k, o_k = (w.Rb, w.pb) if k < 0 else (w.R[:, k], w.o[:, k])
    return k, R_k @ T[:3, :3], o_k + fl._mv(R_k, T[:3, 3])


def _carried_columns(model: fl.FloatingModel, k: int) -> np.ndarray:
    """The tree columns (base's six first) that move link k (-1: the base)."""
    if model.tree is None or k < 0:
        return np.arange(6)
    return np.concatenate([np.arange(6), 6 + np.array(_carrying(model.tree, k), dtype=int)])


def _frame_jacobians(robot: Manipulator, q: Any, v: Any | None, frame: str, reference: str,
                     params: Params | None) -> tuple[bool, np.ndarray, np.ndarray | None]:
    """(single, J, dJ/dt or None) of ``frame`` in ``reference``, (N, 6, nv)."""
    reference = _reference(reference)
    model = _model(robot, params)
    single, q_, rates = fl._states(model, q, *([] if v is None else [v]))
    w = fl._world(model, q_)
    k, R, p = _frame_world(robot, w, frame, params)
    S, body = _world_columns(model, w)
    carried = _carried_columns(model, k)
    J_world = np.zeros((q_.shape[0], 6, S.shape[1]))
    J_world[:, :, carried] = np.swapaxes(S[:, carried], 1, 2)
    J = _world_to_aligned(J_world, p)
    if v is None:
        return single, _project_columns(model, _expressed(J, R, p, reference)), None
    v_ = rates[0]
    V = np.stack(fl._velocities(model, w, v_, fl._tree_rate(model, v_))[0], 1)
    dJ_world = np.zeros_like(J_world)
    dJ_world[:, :, carried] = np.swapaxes(fl._cross_motion(V[:, body[carried]], S[:, carried]), 1, 2)
    velocity = np.einsum("nij,nj->ni", J, _tree_v(model, v_))  # (p', omega)
    p_dot, omega = velocity[:, :3], velocity[:, 3:]
    dJ = _world_to_aligned(dJ_world, p)
    dJ[:, :3] -= np.cross(p_dot[:, :, None], J_world[:, 3:], axis=1)
    dJ = _expressed_rate(J, dJ, R, p, p_dot, omega, reference)
    return single, _project_columns(model, _expressed(J, R, p, reference)), _project_columns(model, dJ)


def _world_to_aligned(J: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Spatial (world) columns (v_O; omega) to those of the point p: (v_O - p x omega; omega)."""
    out = J.copy()
    out[:, :3] -= np.cross(p[:, :, None], J[:, 3:], axis=1)
    return out


def frame_jacobian(robot: Manipulator, q: Any, frame: str, *, reference: str = "local_world_aligned",
                   params: Params | None = None) -> np.ndarray:
    """The Jacobian (6, nv) or (N, 6, nv) of the named frame ``frame`` (:meth:`~robodyn.Manipulator.frame`: a URDF
    link, ``"base"``, ...) in ``reference`` (:data:`robodyn.numeric.kinematics.REFERENCES`: ``local_world_aligned``,
    rows (v; omega) of the frame's origin in world axes; ``world``, the spatial velocity; ``local``, the frame's
    own axes), as ``pinocchio.getFrameJacobian``; the base's columns take its body-frame twist."""
    single, J, _ = _frame_jacobians(robot, q, None, frame, reference, params)
    return fl._shaped(single, J)


def frame_jacobian_dot(robot: Manipulator, q: Any, v: Any, frame: str, *, reference: str = "local_world_aligned",
                       params: Params | None = None) -> np.ndarray:
    """dJ/dt (6, nv) or (N, 6, nv) of :func:`frame_jacobian` along v (``pinocchio.getFrameJacobianTimeVariation``):
    the world columns S_j vary by V_j x S_j; ``local_world_aligned``'s dJ/dt v is the classical acceleration of the
    frame's origin and its angular acceleration at v' = 0 (``getFrameClassicalAcceleration``)."""
    single, _, dJ = _frame_jacobians(robot, q, v, frame, reference, params)
    assert dJ is not None
    return fl._shaped(single, dJ)


__all__ = ["center_of_mass_jacobian", "centroidal_map_dot", "forward_dynamics_derivatives", "frame_jacobian",
           "frame_jacobian_dot", "inverse_dynamics_derivatives"]

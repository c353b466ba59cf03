"""Implicit loops, numerically: a closed chain that no elimination solves in closed form (a planar five-bar, a loop
in space, a loop with a prismatic or spherical closing joint: :attr:`~robodyn.model.manipulator.Manipulator.implicit`).

    robot = rd.load("fivebar")                       # two actuated base joints, one implicit loop
    tau = closed_chains.inverse_dynamics(robot, q, qd, qdd)     # q, qd, qdd: the actuated joints', (nv,) or (N, nv)
    qdd = closed_chains.forward_dynamics(robot, q, qd, tau)
    q_tree = closed_chains.positions(robot, q)     # every joint of the tree, the passive ones by Newton's method

The robot's coordinates q are its actuated joints' (``robot.independent``, ``robot.nv`` of them); the passive joints
of its implicit loops (``robot.passive``) follow from the loops' constraints phi(q_tree) = 0, the closing frames
coinciding as the closing joint allows (:mod:`robodyn.model.loops`). Each loop gives the rows of its joint type:

- ``revolute`` about u: the frames' origins coincide (3 rows, p_B - p_A) and u on B is normal to e1 and e2 on A
  (2 rows, (R_A e_i) . (R_B u); e1, e2, u orthonormal);
- ``prismatic`` along u: (R_A e_i) . (p_B - p_A) = 0 (2 rows) and the frames parallel (3 rows, as a weld's);
- ``spherical``: the origins coincide (3 rows); ``weld``: the origins coincide and the frames are parallel (3 + 3).

Each row's time derivative is exact (K(q) qd, K = dphi/dq from the geometric Jacobians of the two frames) and so
is its second (K qdd + the acceleration bias Kdot qd, from the frames' accelerations at qdd = 0). A planar loop
has redundant rows (those out of its plane stay zero): K is m x n_tree of rank n_passive, and K_p^+ (the
pseudo-inverse of the passive columns, by a singular value decomposition; K_p^-1 where K_p is square) solves the
consistent rows exactly. With K = [K_a K_p]:

    qd_p = X qd_a,  X = -K_p^+ K_a,  W = [I; X]  (actuated rows, passive rows: q_tree's order)
    qdd_tree = W qdd_a + gamma,  gamma_p = -K_p^+ (Kdot qd)
    tau_a = W^T tau_tree(q_tree, qd_tree, W qdd_a + gamma),   M_a = W^T M_tree W  (symmetric positive definite)
    qdd_a = M_a^-1 (tau_a - W^T tau_tree(q_tree, qd_tree, gamma))

(the tree's recursions, :mod:`robodyn.numeric.rnea` and :mod:`robodyn.numeric.crba`, as they are; the loop forces
K^T lambda do no virtual work on W).

**Passive positions** come from a guess by a damped Gauss-Newton iteration (steps -K_p^+ phi, halved until ||phi||
decreases, at most :data:`MAX_ITERATIONS`), which converges to an assembly, as a rule the one nearest the guess. The
guess is the keyword ``guess`` of this module's functions (the passive joints' values, ``len(robot.passive)``, or
the whole tree's, ``robot.n``); by default the tree's zero configuration, which the model file's joint offsets
(``theta``, ``d``) make the robot's *reference assembly* (the built-in ``fivebar`` is assembled at q_tree = 0, so
its default branch is that one). :mod:`robodyn.numeric`'s functions and :func:`robodyn.simulate` start from the
reference: a robot meant to run on another assembly branch is described with joint offsets that put q_tree = 0 near
it. Newton's method failing to converge, K_p singular (the loop at a singular configuration) and rows that fix an
actuated joint (an over-constrained loop) are each a one-line :class:`~robodyn.errors.ModelError` naming the loop.

**Simulation** (:func:`robodyn.simulate`, :class:`robodyn.analysis.simulation.ClosedChainDynamics`) integrates the
actuated state (q_a, qd_a) only, an ordinary differential equation in the robot's own coordinates (coordinate
partitioning): at every evaluation a :class:`Follower` finds the passive positions by Newton's method from the
previous evaluation's, moved by X (q_a - q_a,before) (one or two iterations), to ||phi|| <= :data:`TOLERANCE` times the
robot's size (1 + the sum of its link offsets; :data:`FLOOR` times it where rounding stops the decrease), and the
passive velocities are X qd_a exactly. The constraints therefore cannot drift: they hold to Newton's tolerance at
every evaluation whatever the span, where integrating the tree's state (q_tree, qd_tree) would need a projection
back onto phi = 0 and K qd = 0 after each step (and a step that the projection changes no longer conserves the
energy to the integrator's order). The energy is then conserved as well as the integrator solves this ODE (the
five-bar's 10 s free swing: drift 5e-11 with DOP853 at rtol = atol = 1e-9). Each evaluation costs about a
millisecond (one state in NumPy).

The symbolic paths (derive, count, code generation, ``rd.compile``) refuse a robot with implicit loops in one line:
implicit loops are numeric only in this version. A robot with an implicit loop beside coupled joints (a loop
eliminated in closed form, a mimic joint) is not handled yet (a one-line refusal).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from robodyn.errors import ModelError
from robodyn.model.cache import PerRobotCache
from robodyn.model.floats import bound_floats
from robodyn.model.loops import Loop, loop_joints, open_tree
from robodyn.model.manipulator import Manipulator
from robodyn.model.params import symbol_values
from robodyn.numeric.crba import crba, crba_one
from robodyn.numeric.kinematics import Frames, joint_frames, link_offset, potential_energy
from robodyn.numeric.model import NumericModel, Params, compile_model
from robodyn.numeric.rnea import rnea

#: At most this many Gauss-Newton steps per solve.
MAX_ITERATIONS = 50
#: ||phi|| (m and rad) at which Newton's method stops, relative to the robot's size (1 + the sum of its link offsets).
TOLERANCE = 1e-14
#: ||phi|| relative to the robot's size that is accepted where a step no longer decreases it (rounding).
FLOOR = 1e-10
#: K_p is singular where its smallest singular value is below this times its largest.
SINGULAR = 1e-9


@dataclass(frozen=True, eq=False)
class _Closure:
    """One implicit loop bound to floats: its ends (joint frame k, -1 the base; the closing frame T in it), its
    rows' kind and its closing frame's axis basis e1, e2, u (columns of ``basis``)."""

    loop: Loop
    ends: tuple[tuple[int, np.ndarray], tuple[int, np.ndarray]]
    basis: np.ndarray
    passive: tuple[int, ...]  # this loop's passive columns (indices into the tree's coordinates)

    @property
    def rows(self) -> int:
        return 6 - {"revolute": 1, "prismatic": 1, "spherical": 3, "weld": 0}[self.loop.joint]


@dataclass(frozen=True, eq=False)
class ClosedChain:
    """A robot with implicit loops, bound to floats: its tree (:func:`robodyn.model.loops.open_tree`, compiled), the
    tree coordinates of its actuated and passive joints, its closures; built once per robot and binding
    (:func:`closed_chain`)."""

    name: str
    tree: NumericModel
    actuated: np.ndarray
    passive: np.ndarray
    closures: tuple[_Closure, ...]
    size: float

    @property
    def nv(self) -> int:
        return len(self.actuated)

    @property
    def n_tree(self) -> int:
        return self.tree.nv


_CACHE: PerRobotCache[ClosedChain] = PerRobotCache(4)


def closed_chain(robot: Manipulator, params: Params | None = None) -> ClosedChain:
    """The :class:`ClosedChain` of ``robot`` with ``params`` bound, cached per robot and binding."""
    if not isinstance(robot, Manipulator):
        raise TypeError(f"expected a Manipulator, got {type(robot).__name__}")
    key = tuple(sorted((str(k), float(v)) for k, v in symbol_values(params).items())) if params else ()
    return _CACHE.get(robot, key, lambda: _build(robot, params))


def _build(robot: Manipulator, params: Params | None) -> ClosedChain:
    if not robot.implicit:
        raise ModelError(f"{robot.name}: no implicit loop (robodyn.numeric handles this robot)")
    if robot.couplings:
        raise ModelError(f"{robot.name}: implicit loop {robot.implicit[0]!r} beside coupled joints (a loop eliminated "
                         "in closed form, a mimic joint): not handled in this version", field="loops")
    tree_robot = open_tree(robot)
    tree = compile_model(tree_robot, params)
    column = {k: j for j, k in enumerate(tree_robot.independent)}
    floats = bound_floats(robot, params)
    closures = []
    for loop in robot.loops:
        if loop.name not in robot.implicit:
            continue
        ends = []
        for k, placement in zip(loop.links, loop.placements, strict=True):
            T = floats.array(placement, (4, 4))
            ends.append((k, (link_offset(robot, k, params) @ T) if k >= 0 else T))
        up_a, _, up_b = loop_joints(loop, robot.parents)
        mine = tuple(column[j] for j in sorted(set(up_a + up_b) & set(robot.passive)))
        closures.append(_Closure(loop, (ends[0], ends[1]), _basis(floats.array(loop.axis, (3,))), mine))
    size = 1.0 + float(np.abs(tree.p).sum() + np.abs(tree.d0).sum())
    return ClosedChain(robot.name, tree, np.array([column[k] for k in robot.independent], dtype=int),
                       np.array([column[k] for k in robot.passive], dtype=int), tuple(closures), size)


def _basis(axis: np.ndarray) -> np.ndarray:
    """(e1, e2, u) as columns: u the unit axis, e1 and e2 orthonormal and normal to it (right-handed)."""
    u = axis / np.linalg.norm(axis)
    helper = np.eye(3)[int(np.argmin(np.abs(u)))]
    e1 = _cross(u, helper)
    e1 /= np.linalg.norm(e1)
    return np.column_stack([e1, _cross(u, e1), u])


# -- the constraints: phi, K and the acceleration bias ------------------------------------------------------------


@dataclass
class _End:
    """A closing frame over a batch: R (N, 3, 3), p (N, 3), its Jacobian J (N, 6, n) (rows v; omega in the base
    frame) and, with velocities, omega, v, and the accelerations at qdd = 0 alpha, a (N, 3 each)."""

    R: np.ndarray
    p: np.ndarray
    J: np.ndarray
    omega: np.ndarray | None = None
    v: np.ndarray | None = None
    alpha: np.ndarray | None = None
    a: np.ndarray | None = None


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b over the last axis (numpy.cross's axis handling costs ten times the arithmetic on a few states)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _jacobian(model: NumericModel, frames: Any, p: np.ndarray, k: int) -> np.ndarray:
    """The geometric Jacobian (N, 6, n) of the point p (N, 3) of link k (rows v; omega in the base frame), as
    :func:`robodyn.numeric.kinematics.jacobian`: column i (z_i x (p - o_i); z_i) for a revolute joint carrying
    link k, (z_i; 0) for a prismatic one."""
    J = np.zeros((p.shape[0], 6, model.n))
    carrying = []
    while k >= 0:
        carrying.append(k)
        k = model.parent[k]
    revolute = [i for i in carrying if model.revolute[i]]
    prismatic = [i for i in carrying if not model.revolute[i]]
    if revolute:
        z = frames.R[:, revolute][..., 2]
        J[:, :3, revolute] = _cross(z, p[:, None] - frames.o[:, revolute]).transpose(0, 2, 1)
        J[:, 3:, revolute] = z.transpose(0, 2, 1)
    if prismatic:
        J[:, :3, prismatic] = frames.R[:, prismatic][..., 2].transpose(0, 2, 1)
    return J


def _ancestry(parents: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(A, P), n x n: A[i, j] = 1 where joint j carries link i (j = i or an ancestor), P[i] = A[parent of i] (zero
    for a link on the base)."""
    n = len(parents)
    A = np.zeros((n, n))
    for i in range(n):
        k = i
        while k >= 0:
            A[i, k] = 1.0
            k = parents[k]
    P = np.array([A[parents[i]] if parents[i] >= 0 else np.zeros(n) for i in range(n)]).reshape(n, n)
    return A, P


def _motion(model: NumericModel, frames: Any, qd: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per joint frame (N, n, 3): omega, the velocity v of its origin, and the accelerations at qdd = 0 alpha, a;
    over every joint at once, with s_j = z_j qd_j (revolute j) and t_j = z_j qd_j (prismatic j):

        omega_i = sum_j A_ij s_j,   alpha_i = sum_j A_ij omega_parent(j) x s_j,
        v_i = sum_j A_ij (s_j x (o_i - o_j) + t_j),
        a_i = sum_j A_ij ((omega_parent(j) x s_j) x (o_i - o_j) + s_j x (v_i - v_j) + omega_parent(j) x t_j)

    (A: :func:`_ancestry`; the o_i and v_i terms taken out of each sum), the time derivatives of the geometric
    Jacobian's columns as in :func:`robodyn.numeric.kinematics.jacobian_dot`."""
    z, o = frames.axes, frames.o
    A, P = _ancestry(model.parent)
    rate = z * qd[:, :, None]
    revolute = model.revolute.astype(float)[None, :, None]
    s, t = rate * revolute, rate * (1.0 - revolute)

    def carried(x: np.ndarray, M: np.ndarray = A) -> np.ndarray:
        return np.einsum("ij,njk->nik", M, x)

    omega, omega_parent = carried(s), carried(s, P)
    turn = _cross(omega_parent, s)
    alpha = carried(turn)
    v = _cross(omega, o) - carried(_cross(s, o)) + carried(t)
    a = _cross(alpha, o) - carried(_cross(turn, o)) + _cross(omega, v) - carried(_cross(s, v)) \
        + carried(_cross(omega_parent, t))
    return omega, v, alpha, a


def _end(model: NumericModel, frames: Any, motion: tuple[np.ndarray, ...] | None, k: int, T: np.ndarray) -> _End:
    N = frames.R.shape[0]
    if k < 0:
        R, p = np.broadcast_to(T[:3, :3], (N, 3, 3)), np.broadcast_to(T[:3, 3], (N, 3))
    else:
        R, p = frames.R[:, k] @ T[:3, :3], frames.o[:, k] + frames.R[:, k] @ T[:3, 3]
    end = _End(R, p, _jacobian(model, frames, p, k))
    if motion is not None:
        if k < 0:
            end.omega = end.v = end.alpha = end.a = np.zeros((N, 3))
        else:
            omega, v, alpha, a = (m[:, k] for m in motion)
            r = p - frames.o[:, k]
            end.omega, end.alpha = omega, alpha
            end.v = v + _cross(omega, r)
            end.a = a + _cross(alpha, r) + _cross(omega, _cross(omega, r))
    return end


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("...i,...i->...", a, b)


def _position_rows(A: _End, B: _End, bias: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """p_B - p_A = 0: phi (N, 3), K = J_B^v - J_A^v, the bias a_B - a_A."""
    return B.p - A.p, B.J[:, :3] - A.J[:, :3], (B.a - A.a) if bias else None  # type: ignore[operator]


def _line_rows(A: _End, B: _End, normals: np.ndarray, bias: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(R_A e) . (p_B - p_A) = 0 for the ``normals`` e (r, 3) of a prismatic joint's axis: phi (N, r), K (N, r, n),
    the bias."""
    a = np.einsum("nij,rj->nri", A.R, normals)
    d = (B.p - A.p)[:, None]
    phi = _dot(a, d)
    K = np.einsum("nri,nij->nrj", a, B.J[:, :3] - A.J[:, :3]) + np.einsum("nri,nij->nrj", _cross(a, d), A.J[:, 3:])
    if not bias:
        return phi, K, None
    assert A.omega is not None and A.alpha is not None and A.v is not None and B.v is not None
    assert A.a is not None and B.a is not None
    w = A.omega[:, None]
    wa = _cross(w, a)
    rate = _cross(A.alpha[:, None], a) + _cross(w, wa)
    return phi, K, _dot(rate, d) + 2 * _dot(wa, (B.v - A.v)[:, None]) + _dot(a, (B.a - A.a)[:, None])


def _dot_rows(A: _End, B: _End, on_a: np.ndarray, on_b: np.ndarray,
              bias: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(R_A a) . (R_B b) = 0 for the pairs (a, b) of rows of ``on_a``, ``on_b`` (r, 3): phi (N, r), K = (b_B x
    a_A)^T (J_B^w - J_A^w), and the bias."""
    a = np.einsum("nij,rj->nri", A.R, on_a)
    b = np.einsum("nij,rj->nri", B.R, on_b)
    c = _cross(b, a)
    phi = _dot(a, b)
    K = np.einsum("nri,nij->nrj", c, B.J[:, 3:] - A.J[:, 3:])
    if not bias:
        return phi, K, None
    assert A.omega is not None and B.omega is not None and A.alpha is not None and B.alpha is not None
    wa, wb = A.omega[:, None], B.omega[:, None]
    rate = _cross(_cross(wb, b), a) + _cross(b, _cross(wa, a))
    return phi, K, _dot(c, (B.alpha - A.alpha)[:, None]) + _dot(rate, wb - wa)


def _rows(closure: _Closure, A: _End, B: _End, bias: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One loop's phi (N, m), K (N, m, n) and, with ``bias``, Kdot qd (N, m)."""
    e1, e2, u = closure.basis.T
    joint = closure.loop.joint
    parts = [_line_rows(A, B, np.array([e1, e2]), bias) if joint == "prismatic" else _position_rows(A, B, bias)]
    if joint == "revolute":
        parts.append(_dot_rows(A, B, np.array([e1, e2]), np.array([u, u]), bias))
    elif joint in ("prismatic", "weld"):
        parts.append(_dot_rows(A, B, np.array([e2, u, e1]), np.array([u, e1, e2]), bias))
    phi = np.concatenate([p[0] for p in parts], axis=1)
    K = np.concatenate([p[1] for p in parts], axis=1)
    return phi, K, (np.concatenate([p[2] for p in parts], axis=1) if bias else None)


@dataclass
class _Constraints:
    phi: np.ndarray  # (N, m)
    K: np.ndarray  # (N, m, n_tree): the columns of the tree's coordinates
    bias: np.ndarray | None  # (N, m): Kdot qd
    spans: list[tuple[int, int]]  # each closure's rows
    frames: Frames


def _constraints(chain: ClosedChain, x: np.ndarray, xd: np.ndarray | None = None,
                 frames: Frames | None = None) -> _Constraints:
    """phi, K and (with the rates xd) the bias, at the tree coordinates x (N, n_tree) (whose joint ``frames`` may
    be given)."""
    tree = chain.tree
    if frames is None:
        frames = joint_frames(tree, x)
    motion = _motion(tree, frames, xd) if xd is not None else None
    phis, Ks, biases, spans, start = [], [], [], [], 0
    for closure in chain.closures:
        (ka, Ta), (kb, Tb) = closure.ends
        A, B = _end(tree, frames, motion, ka, Ta), _end(tree, frames, motion, kb, Tb)
        phi, K, bias = _rows(closure, A, B, xd is not None)
        phis.append(phi)
        Ks.append(K)
        biases.append(bias)
        spans.append((start, start + phi.shape[1]))
        start += phi.shape[1]
    return _Constraints(np.concatenate(phis, axis=1), np.concatenate(Ks, axis=1),
                        np.concatenate(biases, axis=1) if xd is not None else None, spans,  # type: ignore[arg-type]
                        frames)


# -- Newton's method ------------------------------------------------------------------------------------------------


def _pinv(chain: ClosedChain, K: np.ndarray, spans: list[tuple[int, int]], active: np.ndarray) -> np.ndarray:
    """K_p^+ (N, p, m) by a singular value decomposition; a one-line ModelError naming the loop where K_p is
    singular (for one of the ``active`` states)."""
    Kp = K[:, :, chain.passive]
    U, s, Vt = np.linalg.svd(Kp, full_matrices=False)
    singular = active & (s[:, -1] <= SINGULAR * np.maximum(s[:, 0], 1e-300))
    if singular.any():
        k = int(np.argmax(singular))
        raise ModelError(f"loop {_culprit(chain, Kp[k], spans)!r}: K_p (the constraints' Jacobian in the passive "
                         "joints) is singular at this configuration (the loop at a singularity, or its passive joints "
                         "do not move it)", field="loops")
    inv = np.where(s > SINGULAR * s[:, :1], 1.0 / np.where(s > 0, s, 1.0), 0.0)
    return np.einsum("nji,nj,nkj->nik", Vt, inv, U)


def _culprit(chain: ClosedChain, Kp: np.ndarray, spans: list[tuple[int, int]]) -> str:
    """The loop whose own passive joints its rows do not fix (the first loop where none stands out)."""
    index = {int(c): i for i, c in enumerate(chain.passive)}
    for closure, (start, stop) in zip(chain.closures, spans, strict=True):
        block = Kp[start:stop][:, [index[c] for c in closure.passive]]
        s = np.linalg.svd(block, compute_uv=False)
        if s.size == 0 or s[-1] <= SINGULAR * max(s[0], 1e-300):
            return closure.loop.name
    return chain.closures[0].loop.name


def _newton(chain: ClosedChain, x: np.ndarray) -> tuple[np.ndarray, _Constraints]:
    """x (N, n_tree) with its passive entries moved until phi = 0 (damped Gauss-Newton, see the module docstring),
    and the constraints there."""
    x = x.copy()
    tol, floor = TOLERANCE * chain.size, FLOOR * chain.size
    c = _constraints(chain, x)
    err = np.linalg.norm(c.phi, axis=1)
    stalled = np.zeros(len(x), dtype=bool)  # at the rounding floor: no step decreases |phi| any more
    iterations = 0
    while iterations < MAX_ITERATIONS:
        iterations += 1
        active = (err > tol) & ~stalled
        if not active.any():
            return x, c
        step = -np.einsum("nik,nk->ni", _pinv(chain, c.K, c.spans, active), c.phi)
        step[~active] = 0.0
        t = np.ones(len(x))
        for _ in range(30):  # halve the step until |phi| decreases (Armijo), at most 30 times
            trial = x.copy()
            trial[:, chain.passive] += t[:, None] * step
            c_trial = _constraints(chain, trial)
            err_trial = np.linalg.norm(c_trial.phi, axis=1)
            worse = active & (err_trial > (1 - 1e-4 * t) * err)
            if not worse.any():
                break
            t[worse] /= 2
        if worse.any():  # no decrease: at the rounding floor (done), or at a minimum of |phi| > 0 (no assembly)
            stalled |= worse & (err <= floor)
            if (worse & ~stalled).any():
                break
            trial[worse], err_trial[worse] = x[worse], err[worse]
            c_trial = _merged(c_trial, c, worse)
        x, c, err = trial, c_trial, err_trial
    if (err <= floor).all():
        return x, c
    k = int(np.argmax(err))
    worst = max(zip(chain.closures, c.spans, strict=True),
                key=lambda cs: float(np.linalg.norm(c.phi[k, cs[1][0]:cs[1][1]])))[0]
    raise ModelError(f"loop {worst.loop.name!r}: Newton's method did not converge from the guess (|phi| = "
                     f"{err[k]:.3g} after {iterations} iterations): the loop cannot close there, or give a guess "
                     "nearer an assembly (guess=...)", field="loops")


def _merged(new: _Constraints, old: _Constraints, keep: np.ndarray) -> _Constraints:
    """``new`` with the states ``keep`` taken from ``old``."""
    phi, K = new.phi.copy(), new.K.copy()
    phi[keep], K[keep] = old.phi[keep], old.K[keep]
    R, o = new.frames.R.copy(), new.frames.o.copy()
    R[keep], o[keep] = old.frames.R[keep], old.frames.o[keep]
    return _Constraints(phi, K, None, new.spans, Frames(R, o))


# -- the state of the tree --------------------------------------------------------------------------------------------


@dataclass
class TreeState:
    """The tree at one batch of states: its coordinates ``q`` (N, n_tree), ``qd`` and the acceleration offset
    ``gamma`` (qdd_tree = W qdd_a + gamma; both zero where no rates were given), ``W`` (N, n_tree, nv) and the
    constraints' Jacobian ``K`` (N, m, n_tree)."""

    q: np.ndarray
    qd: np.ndarray
    gamma: np.ndarray
    W: np.ndarray
    K: np.ndarray


def _batch(chain: ClosedChain, *arrays: Any) -> tuple[bool, list[np.ndarray | None]]:
    given = [np.asarray(a, dtype=float) for a in arrays if a is not None]
    for a in given:
        if a.ndim not in (1, 2) or a.shape[-1] != chain.nv:
            raise ValueError(f"joint arrays of {chain.name!r} (implicit loops: its {chain.nv} actuated joints) must "
                             f"have shape ({chain.nv},) or (N, {chain.nv}), got {a.shape}")
    single = all(a.ndim == 1 for a in given)
    shape = np.atleast_2d(np.empty(np.broadcast_shapes(*(a.shape for a in given)))).shape
    it = iter(given)
    return single, [None if a is None else np.broadcast_to(next(it), shape).copy() for a in arrays]


def _guess(chain: ClosedChain, guess: Any, N: int) -> np.ndarray:
    x = np.zeros((N, chain.n_tree))
    if guess is None:
        return x
    g = np.asarray(guess, dtype=float)
    if g.shape[-1:] == (len(chain.passive),) and g.ndim in (1, 2):
        x[:, chain.passive] = g
    elif g.shape[-1:] == (chain.n_tree,) and g.ndim in (1, 2):
        x[:, chain.passive] = np.broadcast_to(g, (N, chain.n_tree))[:, chain.passive]
    else:
        raise ValueError(f"guess of {chain.name!r}: the passive joints' {len(chain.passive)} values or the tree's "
                         f"{chain.n_tree}, (.., {len(chain.passive)}) or (.., {chain.n_tree}); got {g.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"guess of {chain.name!r}: not finite")
    return x


def tree_state(chain: ClosedChain, q: np.ndarray, qd: np.ndarray | None = None, *, guess: Any = None) -> TreeState:
    """The tree at the actuated (q, qd), batched (N, nv): the passive positions by Newton's method from ``guess``,
    then W and (with qd) the passive rates and gamma. A state whose q is not finite has NaN throughout (no loop can
    close there: the results at it are NaN, as the tree's recursions give for a NaN or infinite q), the others
    their own values."""
    finite = np.isfinite(q).all(axis=1)
    if not finite.all():
        return _with_nan_states(chain, q, qd, _guess(chain, guess, len(q)), finite)
    x = _guess(chain, guess, len(q))
    x[:, chain.actuated] = q
    x, c = _newton(chain, x)
    xd, gamma = np.zeros_like(x), np.zeros_like(x)
    pinv = _pinv(chain, c.K, c.spans, np.ones(len(x), dtype=bool))
    Kp, Ka = c.K[:, :, chain.passive], c.K[:, :, chain.actuated]
    X = -pinv @ Ka
    residual = np.abs(Kp @ X + Ka).max(axis=(1, 2)) if Ka.size else np.zeros(len(x))
    scale = np.abs(c.K).max(axis=(1, 2))
    if (residual > 1e-8 * np.maximum(scale, 1.0)).any():
        k = int(np.argmax(residual))
        name = next((cl.loop.name for cl, (a, b) in zip(chain.closures, c.spans, strict=True)
                     if np.abs((Kp[k] @ X[k] + Ka[k])[a:b]).max() > 1e-8 * max(scale[k], 1.0)),
                    chain.closures[0].loop.name)
        raise ModelError(f"loop {name!r}: over-constrained: its constraints fix actuated joints too (more independent "
                         "constraints than passive joints)", field="loops")
    W = np.zeros((len(x), chain.n_tree, chain.nv))
    W[:, chain.actuated, np.arange(chain.nv)] = 1.0
    W[:, chain.passive] = X
    if qd is not None:
        xd[:, chain.actuated] = qd
        xd[:, chain.passive] = np.einsum("nij,nj->ni", X, qd)
        bias = _constraints(chain, x, xd, c.frames).bias
        assert bias is not None
        gamma[:, chain.passive] = -np.einsum("nik,nk->ni", pinv, bias)
    return TreeState(x, xd, gamma, W, c.K)


def _with_nan_states(chain: ClosedChain, q: np.ndarray, qd: np.ndarray | None, guess: np.ndarray,
                     finite: np.ndarray) -> TreeState:
    """:func:`tree_state` where the states ``~finite`` have a non-finite q: NaN there, the rest solved."""
    N, n, rows = len(q), chain.n_tree, sum(closure.rows for closure in chain.closures)
    out = TreeState(np.full((N, n), np.nan), np.full((N, n), np.nan), np.full((N, n), np.nan),
                    np.full((N, n, chain.nv), np.nan), np.full((N, rows, n), np.nan))
    if finite.any():
        solved = tree_state(chain, q[finite], None if qd is None else qd[finite], guess=guess[finite])
        for name in ("q", "qd", "gamma", "W", "K"):
            getattr(out, name)[finite] = getattr(solved, name)
    return out


def _state(robot: Manipulator, params: Params | None, guess: Any, q: Any, qd: Any = None,
           *more: Any) -> tuple[ClosedChain, bool, TreeState, list[np.ndarray | None]]:
    chain = closed_chain(robot, params)
    single, (q_, qd_, *rest) = _batch(chain, q, qd, *more)
    assert q_ is not None
    return chain, single, tree_state(chain, q_, qd_, guess=guess), rest


def _out(single: bool, x: np.ndarray) -> np.ndarray:
    return x[0] if single else x


def _project(state: TreeState, tau_tree: np.ndarray) -> np.ndarray:
    return np.einsum("nij,ni->nj", state.W, tau_tree)


# -- the public functions -------------------------------------------------------------------------------------------


def positions(robot: Manipulator, q: Any, *, guess: Any = None, params: Params | None = None) -> np.ndarray:
    """The tree's coordinates (n,) or (N, n) (the robot's joints, its passive ones by Newton's method from
    ``guess``) at the actuated q (nv,) or (N, nv)."""
    _, single, state, _ = _state(robot, params, guess, q)
    return _out(single, state.q)


def velocities(robot: Manipulator, q: Any, qd: Any, *, guess: Any = None, params: Params | None = None) -> np.ndarray:
    """The tree's rates W qd (n,) or (N, n) at the actuated (q, qd)."""
    _, single, state, _ = _state(robot, params, guess, q, qd)
    return _out(single, state.qd)


def constraints(robot: Manipulator, q_tree: Any, qd_tree: Any = None, *,
                params: Params | None = None) -> tuple[np.ndarray, ...]:
    """(phi (m,), K (m, n)) at the tree's coordinates q_tree (n,), or (N, m) and (N, m, n): the loops' rows in
    order (see the module docstring), at any q_tree (closed or not); with the tree's rates ``qd_tree``, the
    acceleration bias Kdot qd_tree (m,) or (N, m) as well."""
    chain = closed_chain(robot, params)
    x = np.asarray(q_tree, dtype=float)
    if x.ndim not in (1, 2) or x.shape[-1] != chain.n_tree:
        raise ValueError(f"q_tree of {chain.name!r} must have shape ({chain.n_tree},) or (N, {chain.n_tree})")
    xd = None if qd_tree is None else np.broadcast_to(np.asarray(qd_tree, dtype=float), np.atleast_2d(x).shape)
    c = _constraints(chain, np.atleast_2d(x), xd)
    out: tuple[np.ndarray, ...] = (c.phi, c.K) if c.bias is None else (c.phi, c.K, c.bias)
    return tuple(a[0] for a in out) if x.ndim == 1 else out


def projection(robot: Manipulator, q: Any, *, guess: Any = None, params: Params | None = None) -> np.ndarray:
    """W (n, nv) or (N, n, nv): qd_tree = W qd for the actuated qd (the actuated rows the identity)."""
    _, single, state, _ = _state(robot, params, guess, q)
    return _out(single, state.W)


def inverse_dynamics(robot: Manipulator, q: Any, qd: Any, qdd: Any, *, guess: Any = None,
                     params: Params | None = None) -> np.ndarray:
    """tau_a = W^T tau_tree(q_tree, qd_tree, W qdd + gamma): the actuated joints' torques (the loop forces, in the
    range of K^T, do no work on W)."""
    chain, single, state, (qdd_,) = _state(robot, params, guess, q, qd, qdd)
    assert qdd_ is not None
    a = np.einsum("nij,nj->ni", state.W, qdd_) + state.gamma
    return _out(single, _project(state, _rnea(chain, state.q, state.qd, a)))


def mass_matrix(robot: Manipulator, q: Any, *, guess: Any = None, params: Params | None = None) -> np.ndarray:
    """M_a = W^T M_tree W, (nv, nv) or (N, nv, nv): symmetric positive definite."""
    chain, single, state, _ = _state(robot, params, guess, q)
    W = state.W
    return _out(single, np.transpose(W, (0, 2, 1)) @ _crba(chain, state.q) @ W)


def bias_forces(robot: Manipulator, q: Any, qd: Any, *, guess: Any = None, params: Params | None = None) -> np.ndarray:
    """Everything in tau_a but M_a qdd: W^T tau_tree(q_tree, qd_tree, gamma) (h, G, damping and load of the tree,
    and the inertia of the passive joints' acceleration offset)."""
    chain, single, state, _ = _state(robot, params, guess, q, qd)
    return _out(single, _project(state, _rnea(chain, state.q, state.qd, state.gamma)))


def coriolis(robot: Manipulator, q: Any, qd: Any, *, guess: Any = None, params: Params | None = None) -> np.ndarray:
    """h_a = W^T (h_tree + M_tree gamma): the Coriolis and centrifugal torques (no gravity, damping or load)."""
    chain, single, state, _ = _state(robot, params, guess, q, qd)
    M = _crba(chain, state.q)
    h = _rnea(chain, state.q, state.qd, None, gravity=False, tip=False, joint_terms=False)
    h = h + np.einsum("nij,nj->ni", M, state.gamma)
    return _out(single, _project(state, h))


def gravity(robot: Manipulator, q: Any, *, guess: Any = None, params: Params | None = None) -> np.ndarray:
    """G_a = W^T G_tree(q_tree)."""
    chain, single, state, _ = _state(robot, params, guess, q)
    return _out(single, _project(state, _rnea(chain, state.q, None, None, tip=False, joint_terms=False)))


def forward_dynamics(robot: Manipulator, q: Any, qd: Any, tau: Any, *, guess: Any = None,
                     params: Params | None = None) -> np.ndarray:
    """qdd_a = M_a^-1 (tau - W^T tau_tree(q_tree, qd_tree, gamma)) by a Cholesky solve (LinAlgError where M_a is
    not positive definite)."""
    chain, single, state, (tau_,) = _state(robot, params, guess, q, qd, tau)
    assert tau_ is not None
    return _out(single, _forward(chain, state, tau_))


def _rnea(chain: ClosedChain, q: np.ndarray, qd: np.ndarray | None, qdd: np.ndarray | None,
          **flags: bool) -> np.ndarray:
    """The tree's inverse dynamics (:func:`robodyn.numeric.rnea.rnea`, flags as there) on (N, n_tree) arrays, one
    state over Python floats (the engine's one-state path)."""
    if len(q) == 1:
        rows = [None if a is None else a[0].tolist() for a in (q, qd, qdd)]
        return rnea(chain.tree, rows[0], rows[1], rows[2], **flags)[None]  # type: ignore[arg-type]
    return rnea(chain.tree, q.T.copy(), None if qd is None else qd.T.copy(), None if qdd is None else qdd.T.copy(),
                **flags).T


def _crba(chain: ClosedChain, q: np.ndarray) -> np.ndarray:
    """M_tree (N, n_tree, n_tree)."""
    return crba_one(chain.tree, q[0].tolist())[None] if len(q) == 1 else crba(chain.tree, q.T.copy())


def _forward(chain: ClosedChain, state: TreeState, tau: np.ndarray) -> np.ndarray:
    W = state.W
    M = np.transpose(W, (0, 2, 1)) @ _crba(chain, state.q) @ W
    rhs = tau - _project(state, _rnea(chain, state.q, state.qd, state.gamma))
    L = np.linalg.cholesky(M)
    return np.linalg.solve(np.transpose(L, (0, 2, 1)), np.linalg.solve(L, rhs[..., None]))[..., 0]


def kinetic_energy(robot: Manipulator, q: Any, qd: Any, *, guess: Any = None, params: Params | None = None) -> Any:
    """T = 1/2 qd_tree^T M_tree qd_tree (= 1/2 qd^T M_a qd): () or (N,)."""
    chain, single, state, _ = _state(robot, params, guess, q, qd)
    M = _crba(chain, state.q)
    T = 0.5 * np.einsum("ni,nij,nj->n", state.qd, M, state.qd)
    return T[0] if single else T


def potential(robot: Manipulator, q: Any, *, guess: Any = None, params: Params | None = None) -> Any:
    """V = -sum_k m_k g . c_k of the tree at q_tree: () or (N,)."""
    chain, single, state, _ = _state(robot, params, guess, q)
    V = np.atleast_1d(potential_energy(chain.tree, state.q))
    return V[0] if single else V


class Follower:
    """Forward dynamics along one motion (the simulation's): each call's Newton solve starts from the previous
    call's passive positions moved by X (q - q_before) to first order (the first from ``guess``), one state at a
    time."""

    def __init__(self, robot: Manipulator, params: Params | None = None, guess: Any = None) -> None:
        self.chain = closed_chain(robot, params)
        self.last = _guess(self.chain, guess, 1)[0, self.chain.passive]
        self.last_state: TreeState | None = None

    def state(self, q: np.ndarray, qd: np.ndarray | None = None) -> TreeState:
        guess = self.last
        if self.last_state is not None and np.isfinite(q).all():  # first order: the passive joints move by X dq_a
            before = self.last_state
            guess = guess + before.W[0, self.chain.passive] @ (q - before.q[0, self.chain.actuated])
        state = tree_state(self.chain, np.atleast_2d(q), None if qd is None else np.atleast_2d(qd), guess=guess)
        if np.isfinite(state.q).all():  # a NaN state (an integrator's trial step gone wild) is no guess for the next
            self.last, self.last_state = state.q[0, self.chain.passive], state
        return state

    def accelerations(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
        return _forward(self.chain, self.state(q, qd), np.atleast_2d(tau))[0]

    def holding_torque(self, q: np.ndarray) -> np.ndarray:
        """G_a(q) + load: batched (N, nv) or (nv,)."""
        single = np.ndim(q) == 1
        q2 = np.atleast_2d(q)
        out = np.array([self._holding(row) for row in q2])
        return out[0] if single else out

    def _holding(self, q: np.ndarray) -> np.ndarray:
        state = self.state(q, np.zeros_like(q))
        return _project(state, _rnea(self.chain, state.q, state.qd, state.gamma))[0]


def follower(robot: Manipulator, params: Params | None = None, guess: Any = None) -> Callable[..., np.ndarray]:
    """:meth:`Follower.accelerations` of a new :class:`Follower`."""
    return Follower(robot, params, guess).accelerations


__all__ = ["FLOOR", "MAX_ITERATIONS", "TOLERANCE", "ClosedChain", "Follower", "TreeState", "bias_forces",
           "closed_chain", "constraints", "coriolis", "forward_dynamics", "gravity", "inverse_dynamics",
           "kinetic_energy", "mass_matrix", "positions", "potential", "projection", "tree_state", "velocities"]

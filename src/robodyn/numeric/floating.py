"""Floating-base dynamics in NumPy, batched over states: a robot whose root moves on a free joint
(``rd.load(path, floating=True)``; :mod:`robodyn.model.joints` for the free joint).

Coordinates (Pinocchio's, for a ``JointModelFreeFlyer`` root): q has ``robot.nq`` = 7 + n entries, the base's
position in the world, its unit quaternion (x, y, z, w), then the joints' q; the velocities v, accelerations and
generalised forces have ``robot.nv`` = 6 + n entries, the base's body-frame twist (linear, angular) first. The
base rows of the inverse dynamics are the wrench (force; torque about the base origin) on the base, in the base
frame, as ``pinocchio.rnea``. A robot with coupled joints takes its independent joints' coordinates after the
base's (:mod:`robodyn.numeric.couplings`).

Spherical joints (a link's ``joint`` S, :mod:`robodyn.model.joints`: nq 4, the unit quaternion (x, y, z, w); nv 3,
the angular velocity in the child frame) run here too, anywhere in the tree, on a floating base or a fixed one (no
base columns then: q and v are the joints' alone): each joint carries its columns of S in the world frame (three
for a spherical joint, (o x R e_k; R e_k), R its child frame's orientation), the recursions sum a body's columns
and project on each; the joints' damping and armature act on each of a spherical joint's three velocities. Their
forward dynamics is the Cholesky solve (the articulated-body algorithm here takes 1-dof joints); Coulomb friction
on a spherical joint, couplings and loops with one are refused. A tree of revolute and prismatic joints keeps its
arrays and operations unchanged.

Planar joints (a link's ``joint`` planar, Pinocchio's ``JointModelPlanar``: nq 4, (x, y, cos theta, sin theta); nv
3, (vx, vy, omega_z) in the child frame) take the same path: the child frame is the joint frame at rest moved by
Trans(x, y, 0) Rot(z, theta) (the frames' ``turns`` with a translation), its columns (R e_x; 0), (R e_y; 0) and
(o x R e_z; R e_z); their damping and armature act on each of the three velocities, Coulomb friction on one is
refused.

The tree's geometry and bodies are the numeric engine's (:mod:`robodyn.numeric.model`: its joint frames,
:func:`robodyn.numeric.kinematics.joint_frames`, relative to the base, and each body's m, m c, I_o about its
joint frame origin); the recursions run on spatial vectors in the world frame (Featherstone's "ground frame"
form, 6-vectors (linear, angular) about the world origin), the base as joint 0 with its six columns:

- :func:`inverse_dynamics`: Newton-Euler (velocities and accelerations out, body forces back), gravity as the
  base's acceleration -g, the joints' damping, Coulomb friction, springs and armature as the numeric engine's;
- :func:`mass_matrix`: the composite-rigid-body algorithm (nv x nv, armature on the joints' diagonal);
- :func:`forward_dynamics`: M v' = tau - bias by Featherstone's articulated-body algorithm with the free joint at
  the root (the default) or by a Cholesky solve (``method="cholesky"``);
- :func:`center_of_mass`, :func:`centroidal_map` A_G(q) (``pinocchio.computeCentroidalMap``: the momentum
  (linear; angular about the centre of mass) in world axes is h_G = A_G v) and :func:`centroidal_momentum`.

The derivatives (with respect to the tangent space), the centre of mass's Jacobian, the named frames' Jacobians and
their time derivatives and dA_G/dt are in :mod:`robodyn.numeric.floating_derivatives`.

:func:`robodyn.numeric.inverse_dynamics`, :func:`~robodyn.numeric.mass_matrix` and
:func:`~robodyn.numeric.forward_dynamics` hand a floating robot to the functions here.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from robodyn.errors import ModelError, ModelWarning
from robodyn.model.cache import PerRobotCache
from robodyn.model.floats import bound_floats
from robodyn.model.joints import free_transform, is_normalized, planar_transform, quaternion_matrix, skew
from robodyn.model.manipulator import Manipulator
from robodyn.model.structure import refuse
from robodyn.numeric import couplings
from robodyn.numeric.kane import NumpyOps
from robodyn.numeric.kinematics import Frames, Turn, joint_frames
from robodyn.numeric.model import NumericModel, Params, _params_key, compile_model
from robodyn.recursions.arm import coulomb_scalars, joint_friction


@dataclass(frozen=True)
class FloatingModel:
    """A floating robot as floats: its tree (the fixed-base robot's :class:`NumericModel`, None without links), its
    base body (mass, first moment m c and inertia about the base origin, in the base frame) and gravity (world).
    ``floating`` False: a fixed base (a robot with spherical joints), no base columns; ``spherical``: the tree's
    spherical joints and ``planar`` its planar ones (the tree's arrays hold each as the revolute joint of its frame at
    rest)."""

    name: str
    tree: NumericModel | None
    base_mass: float
    base_first_moment: np.ndarray
    base_inertia: np.ndarray
    gravity: np.ndarray
    floating: bool = True
    spherical: tuple[int, ...] = ()
    planar: tuple[int, ...] = ()

    @cached_property
    def multi(self) -> tuple[int, ...]:
        """The tree joints of three velocities and four coordinates: the spherical and planar ones, in order."""
        return tuple(sorted((*self.spherical, *self.planar)))

    @property
    def n(self) -> int:
        """The tree's joints."""
        return 0 if self.tree is None else self.tree.n

    @property
    def nb(self) -> int:
        """The base's velocities: 6 floating, 0 fixed (its coordinates: 7 or 0, :attr:`nqb`)."""
        return 6 if self.floating else 0

    @property
    def nqb(self) -> int:
        return 7 if self.floating else 0

    @cached_property
    def widths(self) -> tuple[int, ...]:
        """The tree joints' velocities: 3 for a spherical or planar joint, else 1."""
        return tuple(3 if i in self.multi else 1 for i in range(self.n))

    @cached_property
    def v_start(self) -> np.ndarray:
        """Where each tree joint's velocities start among the tree's (column indices of S)."""
        return np.concatenate([[0], np.cumsum(self.widths)[:-1]]).astype(int) if self.n else np.zeros(0, int)

    @cached_property
    def q_start(self) -> np.ndarray:
        """Where each tree joint's coordinates start among the tree's (4 for a spherical or planar joint)."""
        sizes = [4 if w == 3 else 1 for w in self.widths]
        return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int) if self.n else np.zeros(0, int)

    def columns(self, i: int) -> range:
        """Tree joint i's columns (its velocities among the tree's)."""
        return range(int(self.v_start[i]), int(self.v_start[i]) + self.widths[i])

    @property
    def nv(self) -> int:
        return self.nb + (0 if self.tree is None else self.tree.nv + 2 * len(self.multi))

    @property
    def nq(self) -> int:
        return self.nv + (1 if self.floating else 0) + len(self.multi)


_CACHE: PerRobotCache[FloatingModel] = PerRobotCache(16)


def floating_model(robot: Manipulator, params: Params | None = None, *, multi_dof: bool = False) -> FloatingModel:
    """The :class:`FloatingModel` of a floating ``robot`` with ``params`` bound, compiled once and cached.
    ``multi_dof``: the caller handles spherical and planar joints (then a fixed-base robot with one is taken too);
    otherwise a robot with one is refused in one line (:meth:`~robodyn.model.manipulator.Manipulator.check_one_dof`)."""
    if not isinstance(robot, Manipulator) or not (robot.floating or (multi_dof and robot.multi_dof)):
        raise ModelError(f"{getattr(robot, 'name', robot)}: not a floating robot (load it with floating=True)")
    if not multi_dof:
        robot.check_one_dof("this function")
    return _CACHE.get(robot, _params_key(params), lambda: _build(robot, params))


def _build(robot: Manipulator, params: Params | None) -> FloatingModel:
    if np.any(bound_floats(robot, params).array((*robot.tip_force, *robot.tip_moment), (6,))):
        raise refuse(robot, "a tip load", field="tip_force")
    tree = None
    if robot.n:
        with warnings.catch_warnings():  # (the links were checked, and warned about, when the robot was built)
            warnings.simplefilter("ignore", ModelWarning)
            fixed = robot.replace(floating=False, base=None, links=_at_rest(robot))
        # (the robot's parameters were checked by bound_floats above; the base body's are not the tree's)
        names = {s.name for s in fixed.parameters()}
        tree = compile_model(fixed, {k: v for k, v in (params or {}).items() if str(k) in names})
    floats = bound_floats(robot, params)
    m, h, J = 0.0, np.zeros(3), np.zeros((3, 3))
    if robot.base is not None:
        m = floats.scalar(robot.base.mass)
        c = floats.array(robot.base.com, (3,))
        Jc = floats.array(robot.base.inertia, (3, 3))
        h = m * c
        J = Jc + m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    return FloatingModel(robot.name, tree, float(m), h, J, floats.array(robot.gravity, (3,)), robot.floating,
                         robot.spherical, robot.planar)


def _at_rest(robot: Manipulator) -> tuple[Any, ...]:
    """The links, each spherical or planar joint as the revolute joint of its frame at rest (the tree's geometry and
    bodies; :func:`_frames` moves the frame by the quaternion, or the planar motion); Coulomb friction on one
    refused."""
    for k in robot.multi_dof:
        if robot.links[k].has_coulomb:
            raise ModelError(f"{robot.name}: Coulomb friction on a {robot.links[k].kind} joint is not handled",
                             link=k + 1, field="coulomb")
    return tuple(link.replace(joint="R") if link.multi_dof else link for link in robot.links)


# -- states ---------------------------------------------------------------------------------------------


def _states(model: FloatingModel, q: Any, *rates: Any) -> tuple[bool, np.ndarray, list[np.ndarray]]:
    """(single, q (N, nq), rates (N, nv)), checked and broadcast; the quaternions must be unit."""
    arrays = [np.asarray(q, dtype=float), *(np.asarray(x, dtype=float) for x in rates)]
    sizes = [model.nq] + [model.nv] * len(rates)
    for a, size, what in zip(arrays, sizes, ["q", *["v"] * len(rates)], strict=True):
        if a.ndim not in (1, 2) or a.shape[-1] != size:
            base = "position, quaternion (x, y, z, w), " if model.floating else ""
            quaternions = ", 4 per spherical or planar joint" if model.multi else ""
            raise ValueError(f"{what} of the robot {model.name!r} must have shape ({size},) or (N, {size}) "
                             f"(nq = {model.nq}: {base}joints{quaternions}; nv = {model.nv}), got {a.shape}")
    single = all(a.ndim == 1 for a in arrays)
    N = max(a.shape[0] if a.ndim == 2 else 1 for a in arrays)
    out = [np.broadcast_to(np.atleast_2d(a), (N, a.shape[-1])) for a in arrays]
    if model.floating and not is_normalized(out[0], 1e-6):
        raise ValueError(f"the base quaternion (q[3:7], order x, y, z, w) of {model.name!r} is not of unit length")
    for i in model.spherical:
        start = model.nqb + int(model.q_start[i])
        if not is_normalized(out[0][:, start:start + 4], 1e-6, joint="S"):
            raise ValueError(f"the quaternion of spherical joint {i + 1} (q[{start}:{start + 4}], order x, y, z, w) of "
                             f"{model.name!r} is not of unit length")
    for i in model.planar:
        start = model.nqb + int(model.q_start[i]) + 2
        if not is_normalized(out[0][:, start - 2:start + 2], 1e-6, joint="planar"):
            raise ValueError(f"(cos, sin) of planar joint {i + 1} (q[{start}:{start + 2}]) of {model.name!r} is not of "
                             "unit length")
    return single, out[0], out[1:]


def _tree_rate(model: FloatingModel, x: np.ndarray) -> np.ndarray:
    """The tree joints' rates (N, n) of the independent ones after the base's six (with spherical joints: their
    columns' rates, 3 per spherical or planar joint)."""
    if model.tree is None:
        return np.zeros((x.shape[0], 0))
    return x[:, model.nb:] if model.multi else couplings.rate(model.tree, x[:, 6:])


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
    columns ``S`` (N, nc, 6) (one per tree velocity: n without multi-dof joints) and the base's ``Sb`` (N, 6, 6; 6 x 0
    for a fixed base), in the world frame, (linear, angular) rows; the base's pose ``Rb`` (N, 3, 3), ``pb`` (N, 3)
    and the joint frames' ``R`` (N, n, 3, 3), ``o`` (N, n, 3) in the world."""

    inertia: np.ndarray
    S: np.ndarray
    Sb: np.ndarray
    parent: tuple[int, ...]  # body index of each link's parent body
    Rb: np.ndarray
    pb: np.ndarray
    R: np.ndarray
    o: np.ndarray


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


def _world_body(m: np.ndarray, h_local: np.ndarray, J_local: np.ndarray, R: np.ndarray, o: np.ndarray) -> np.ndarray:
    """The spatial inertias (N, nb, 6, 6) about the world origin of bodies (m (nb,), h (nb, 3), J (nb, 3, 3) about
    their frames' origins, in their frames) whose frames are at (R, o) (N, nb, 3, 3), (N, nb, 3):
    h_O = m o + R h, J_O = R J R^T - m [o][o] - [o][Rh] - [Rh][o]."""
    h = np.einsum("nbij,bj->nbi", R, h_local)
    J = R @ J_local @ np.swapaxes(R, -1, -2)
    Ox, H = skew(o), skew(h)
    J_O = J - m[:, None, None] * (Ox @ Ox) - Ox @ H - H @ Ox
    return _inertia(np.broadcast_to(m, o.shape[:-1]), m[:, None] * o + h, J_O)


def _world(model: FloatingModel, q: np.ndarray) -> _World:
    N = q.shape[0]
    if model.floating:
        Rb, pb = free_transform(q[:, :7])
    else:
        Rb, pb = np.broadcast_to(np.eye(3), (N, 3, 3)), np.zeros((N, 3))
    Sb = np.zeros((N, 6, model.nb))  # base columns: (R e_k; 0) and (p x R e_k; R e_k)
    if model.floating:
        Sb[:, :3, :3] = Rb
        Sb[:, 3:, 3:] = Rb
        Sb[:, :3, 3:] = skew(pb) @ Rb
    inertia = _world_body(np.array([model.base_mass]), model.base_first_moment[None], model.base_inertia[None],
                          Rb[:, None], pb[:, None])
    S = np.zeros((N, model.n + 2 * len(model.multi), 6))
    R, o = np.zeros((N, model.n, 3, 3)), np.zeros((N, model.n, 3))
    parent: tuple[int, ...] = ()
    tree = model.tree
    if tree is not None:
        frames = _frames(model, q[:, model.nqb:])
        R = Rb[:, None] @ frames.R
        o = pb[:, None] + np.einsum("nij,nkj->nki", Rb, frames.o)
        z = R[..., :, 2]
        if model.multi:
            _multi_columns(model, S, R, o, z)
        else:
            revolute = tree.revolute.astype(bool)
            S[:, revolute, :3] = _cross(o[:, revolute], z[:, revolute])  # a revolute joint: (o x z; z)
            S[:, revolute, 3:] = z[:, revolute]
            S[:, ~revolute, :3] = z[:, ~revolute]  # a prismatic one: (z; 0)
        links = _world_body(np.asarray(tree.mass, dtype=float), tree.first_moment, tree.inertia_origin, R, o)
        inertia = np.concatenate([inertia, links], 1)
        parent = tuple(p + 1 for p in tree.parent)
    return _World(inertia, S, Sb, parent, Rb, pb, R, o)


def _multi_columns(model: FloatingModel, S: np.ndarray, R: np.ndarray, o: np.ndarray, z: np.ndarray) -> None:
    """S (N, nc, 6) of a tree with spherical or planar joints, filled in place: a revolute joint's (o x z; z), a
    prismatic one's (z; 0), a spherical one's three, about its child frame's axes R e_k through o: (o x R e_k;
    R e_k), a planar one's along its child frame's x and y, (R e_x; 0) and (R e_y; 0), and about its z, (o x z; z)."""
    assert model.tree is not None
    for i, at in enumerate(model.v_start):
        if i in model.spherical:
            axes = np.swapaxes(R[:, i], 1, 2)
            S[:, at:at + 3, :3] = _cross(o[:, i, None], axes)
            S[:, at:at + 3, 3:] = axes
        elif i in model.planar:
            S[:, at:at + 2, :3] = np.swapaxes(R[:, i, :, :2], 1, 2)
            S[:, at + 2, :3] = _cross(o[:, i], z[:, i])
            S[:, at + 2, 3:] = z[:, i]
        elif model.tree.revolute[i]:
            S[:, at, :3] = _cross(o[:, i], z[:, i])
            S[:, at, 3:] = z[:, i]
        else:
            S[:, at, :3] = z[:, i]


def _frames(model: FloatingModel, q_tree: np.ndarray) -> Frames:
    """The tree's joint frames relative to the base (:func:`~robodyn.numeric.kinematics.joint_frames`), a spherical
    joint's frame at rest turned by its quaternion, a planar one's moved by Trans(x, y, 0) Rot(z, theta)."""
    tree = model.tree
    assert tree is not None
    if not model.multi:
        return joint_frames(tree, couplings.position(tree, q_tree))
    angles = np.zeros((q_tree.shape[0], model.n))
    turns: dict[int, Turn] = {}
    for i, start in enumerate(model.q_start):
        if i in model.spherical:
            turns[i] = (quaternion_matrix(q_tree[:, start:start + 4]), None)
        elif i in model.planar:
            turns[i] = planar_transform(q_tree[:, start:start + 4])
        else:
            angles[:, i] = q_tree[:, start]
    return joint_frames(tree, angles, turns)


def _body_rates(model: FloatingModel, w: _World, x: np.ndarray) -> np.ndarray:
    """Per tree joint the motion S_i x_i (N, n, 6) of its columns' rates x (N, nc)."""
    Sx = w.S * x[:, :, None]
    return np.add.reduceat(Sx, model.v_start, axis=1) if model.multi else Sx


def _joint_forces(model: FloatingModel, w: _World, i: int, F: np.ndarray) -> np.ndarray:
    """S_i^T F (N, width) of tree joint i's columns and a force F (N, 6)."""
    if model.widths[i] == 1:
        return np.einsum("nk,nk->n", w.S[:, model.v_start[i]], F)[:, None]
    return np.einsum("nck,nk->nc", w.S[:, model.columns(i)], F)


_NEXT, _LAST = [1, 2, 0], [2, 0, 1]


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b of 3-vectors (..., 3) (numpy.cross's result, at a third of its overhead on small arrays)."""
    return np.take(a, _NEXT, -1) * np.take(b, _LAST, -1) - np.take(a, _LAST, -1) * np.take(b, _NEXT, -1)


def _cross_motion(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b of motions (..., 6) = (v, w): (w x v_b + v x w_b, w x w_b)."""
    v, w = a[..., :3], a[..., 3:]
    return np.concatenate([_cross(w, b[..., :3]) + _cross(v, b[..., 3:]), _cross(w, b[..., 3:])], -1)


def _cross_force(a: np.ndarray, f: np.ndarray) -> np.ndarray:
    """a x* f of a motion a = (v, w) and a force f = (f, n): (w x f, w x n + v x f)."""
    v, w = a[..., :3], a[..., 3:]
    return np.concatenate([_cross(w, f[..., :3]), _cross(w, f[..., 3:]) + _cross(v, f[..., :3])], -1)


def _mv(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.einsum("...ij,...j->...i", A, x)


# -- the algorithms -------------------------------------------------------------------------------------


def _gravity_acceleration(model: FloatingModel, N: int, gravity: bool = True) -> np.ndarray:
    """The world's fictitious acceleration (-g; 0) (N, 6) that stands for gravity (zero without it)."""
    a_g = np.zeros((N, 6))
    if gravity:
        a_g[:, :3] = -model.gravity
    return a_g


def _velocities(model: FloatingModel, w: _World, v: np.ndarray, qd: np.ndarray) -> tuple[list[np.ndarray],
                                                                                      list[np.ndarray]]:
    """(V, c) per body (N, 6) each: the spatial velocity V_b and the velocity product c_b = V_b x S_b qd_b (zero for
    the base: V_0 x V_0)."""
    V = [_mv(w.Sb, v[:, :model.nb])]
    vJ = _body_rates(model, w, qd)
    for i in range(model.n):
        V.append(V[w.parent[i]] + vJ[:, i])
    c = np.zeros((v.shape[0], model.n + 1, 6))
    if model.n:
        c[:, 1:] = _cross_motion(np.stack(V, 1)[:, list(w.parent)], vJ)
    return V, list(np.swapaxes(c, 0, 1))


def _accelerations(model: FloatingModel, w: _World, a: np.ndarray, qdd: np.ndarray, c: list[np.ndarray],
                   a_g: np.ndarray) -> list[np.ndarray]:
    """A_b per body (N, 6): the base's S_b a_b + a_g, then A_parent + S qdd + c_b."""
    A = [_mv(w.Sb, a[:, :model.nb]) + a_g]
    aJ = _body_rates(model, w, qdd)
    for i in range(model.n):
        A.append(A[w.parent[i]] + aJ[:, i] + c[i + 1])
    return A


def _joint_friction(model: FloatingModel, qd: np.ndarray) -> np.ndarray:
    """The tree joints' friction (N, nc): damping b qd and Coulomb's (the numeric engine's; a spherical joint's
    damping b on each of its velocities)."""
    out = np.zeros(qd.shape)
    if model.tree is not None:
        tree, ops = model.tree, NumpyOps()
        for j, c in enumerate(model.v_start):
            if j in model.multi:
                out[:, c:c + 3] = tree.damping[j] * qd[:, c:c + 3]
            else:
                out[:, c] = joint_friction(ops, tree.damping[j], coulomb_scalars(ops, tuple(tree.coulomb[j])),
                                           qd[:, c])
    return out


def spring_positions(model: FloatingModel, q: np.ndarray) -> np.ndarray:
    """The tree joints' coordinates (N, n) from the robot's q (N, nq) (a spherical or planar joint's first, which
    no spring reads)."""
    assert model.tree is not None
    q_tree = q[:, model.nqb:]
    return q_tree[:, model.q_start] if model.multi else couplings.position(model.tree, q_tree)


def _joint_spring(model: FloatingModel, q: np.ndarray) -> np.ndarray | float:
    """The tree joints' springs (N, nc): k (q - q_ref) on each revolute or prismatic joint's column (spherical and
    planar joints have none); 0 without springs. ``q``: the robot's (N, nq)."""
    tree = model.tree
    if tree is None or not np.any(tree.stiffness):
        return 0.0
    positions = spring_positions(model, q)
    out = np.zeros((q.shape[0], model.nv - model.nb))
    for j, c in enumerate(model.v_start):
        if tree.stiffness[j] != 0:
            out[:, c] = tree.stiffness[j] * (positions[:, j] - tree.springref[j])
    return out


def _armature(model: FloatingModel) -> np.ndarray:
    """Per tree column its armature (a spherical or planar joint's on each of its three)."""
    if model.tree is None:
        return np.zeros(0)
    return np.repeat(np.asarray(model.tree.armature, dtype=float), model.widths)


def _rnea(model: FloatingModel, q: np.ndarray, v: np.ndarray, a: np.ndarray, gravity: bool = True,
          joint_terms: bool = True) -> np.ndarray:
    """(N, 6 + n_tree): the tree's generalised forces (before the couplings' projection); ``gravity=False`` leaves
    out gravity, ``joint_terms=False`` the joints' friction, springs and armature."""
    w = _world(model, q)
    qd, qdd = _tree_rate(model, v), _tree_rate(model, a)
    N = q.shape[0]
    V, c = _velocities(model, w, v, qd)
    A = _accelerations(model, w, a, qdd, c, _gravity_acceleration(model, N, gravity))
    V_, A_ = np.stack(V, 1), np.stack(A, 1)
    F = list(np.swapaxes(_mv(w.inertia, A_) + _cross_force(V_, _mv(w.inertia, V_)), 0, 1))
    nb = model.nb
    tau = np.zeros((N, nb + qd.shape[1]))
    for i in reversed(range(model.n)):
        start = nb + int(model.v_start[i])
        tau[:, start:start + model.widths[i]] = _joint_forces(model, w, i, F[i + 1])
        F[w.parent[i]] = F[w.parent[i]] + F[i + 1]
    tau[:, :nb] = np.einsum("nki,nk->ni", w.Sb, F[0])
    if joint_terms:
        tau[:, nb:] += _joint_friction(model, qd) + _joint_spring(model, q) + _armature(model) * qdd
    return tau


def _aba(model: FloatingModel, q: np.ndarray, v: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """(N, nv): Featherstone's articulated-body algorithm with the free joint at the root, on a tree without
    couplings. Articulated inertias I^A and bias forces p^A leaves first (the joints' friction on tau, the armature
    in D), the base's six accelerations from (S_b^T I^A_0 S_b) a_b = tau_b - S_b^T (p^A_0 + I^A_0 a_g), then the
    joints' root first."""
    w = _world(model, q)
    qd = v[:, 6:]
    N, n = q.shape[0], model.n
    V, c = _velocities(model, w, v, qd)
    IA = w.inertia.copy()
    V_ = np.stack(V, 1)
    pA = _cross_force(V_, _mv(w.inertia, V_))
    u_joint = tau[:, 6:] - _joint_friction(model, qd) - _joint_spring(model, q)
    armature = _armature(model)
    U, D = np.zeros((N, n, 6)), np.zeros((N, n))
    for i in reversed(range(n)):
        b, p, S = i + 1, w.parent[i], w.S[:, i]
        U[:, i] = _mv(IA[:, b], S)
        D[:, i] = np.einsum("nk,nk->n", S, U[:, i]) + armature[i]
        if not np.all(D[:, i] > 0):  # (as the Cholesky factorisation: a massless subtree without armature)
            raise np.linalg.LinAlgError(f"{model.name}: M is not positive definite (joint {i + 1}'s articulated "
                                        "inertia is not positive)")
        u_joint[:, i] -= np.einsum("nk,nk->n", S, pA[:, b])
        Ia = IA[:, b] - U[:, i, :, None] * (U[:, i, None, :] / D[:, i, None, None])
        pA[:, p] += pA[:, b] + _mv(Ia, c[b]) + U[:, i] * (u_joint[:, i] / D[:, i])[:, None]
        IA[:, p] += Ia
    a_g = _gravity_acceleration(model, N)
    SbT = np.swapaxes(w.Sb, 1, 2)
    rhs = tau[:, :6] - _mv(SbT, pA[:, 0] + _mv(IA[:, 0], a_g))
    qdd = np.zeros((N, model.nv))
    qdd[:, :6] = np.linalg.solve(SbT @ IA[:, 0] @ w.Sb, rhs[..., None])[..., 0]
    A = [a_g + _mv(w.Sb, qdd[:, :6])]
    for i in range(n):
        a_parent = A[w.parent[i]] + c[i + 1]
        qdd[:, 6 + i] = (u_joint[:, i] - np.einsum("nk,nk->n", U[:, i], a_parent)) / D[:, i]
        A.append(a_parent + w.S[:, i] * qdd[:, 6 + i, None])
    return qdd


def _composite(model: FloatingModel, w: _World) -> np.ndarray:
    """The composite inertias Ic (N, nb, 6, 6) of each body's subtree, about the world origin."""
    Ic = w.inertia.copy()
    for i in reversed(range(model.n)):
        Ic[:, w.parent[i]] += Ic[:, i + 1]
    return Ic


def _crba(model: FloatingModel, q: np.ndarray) -> np.ndarray:
    """(N, 6 + n_tree, 6 + n_tree): M of the tree's coordinates (before the couplings' projection); per column of
    each joint its entries with the joint's own columns before it, its ancestors' and the base's."""
    w = _world(model, q)
    Ic = _composite(model, w)
    N, nb = q.shape[0], model.nb
    nt = nb + w.S.shape[1]
    armature = _armature(model)
    M = np.zeros((N, nt, nt))
    for i in range(model.n):
        for a in model.columns(i):
            F = _mv(Ic[:, i + 1], w.S[:, a])
            M[:, nb + a, nb + a] = np.einsum("nk,nk->n", w.S[:, a], F) + armature[a]
            for b in range(int(model.v_start[i]), a):  # (a multi-dof joint's own columns)
                M[:, nb + b, nb + a] = M[:, nb + a, nb + b] = np.einsum("nk,nk->n", w.S[:, b], F)
            j = w.parent[i]
            while j > 0:
                for b in model.columns(j - 1):
                    M[:, nb + b, nb + a] = M[:, nb + a, nb + b] = np.einsum("nk,nk->n", w.S[:, b], F)
                j = w.parent[j - 1]
            M[:, :nb, nb + a] = np.einsum("nki,nk->ni", w.Sb, F)
            M[:, nb + a, :nb] = M[:, :nb, nb + a]
    M[:, :nb, :nb] = np.swapaxes(w.Sb, 1, 2) @ Ic[:, 0] @ w.Sb
    return M


def _shaped(single: bool, x: np.ndarray) -> np.ndarray:
    return x[0] if single else x


def inverse_dynamics(robot: Manipulator, q: Any, v: Any, a: Any, *, params: Params | None = None) -> np.ndarray:
    """tau (nv,) or (N, nv): the base wrench (force; torque about the base origin) in the base frame, then the
    joints' torques; ``pinocchio.rnea`` plus the joints' friction (damping b qd, Coulomb) and armature."""
    model = floating_model(robot, params, multi_dof=True)
    single, q_, (v_, a_) = _states(model, q, v, a)
    return _shaped(single, _project(model, _rnea(model, q_, v_, a_)))


def bias_forces(robot: Manipulator, q: Any, v: Any, *, params: Params | None = None) -> np.ndarray:
    """Everything in tau but M v': :func:`inverse_dynamics` at zero acceleration."""
    return inverse_dynamics(robot, q, v, np.zeros(floating_model(robot, params, multi_dof=True).nv), params=params)


def coriolis(robot: Manipulator, q: Any, v: Any, *, params: Params | None = None) -> np.ndarray:
    """h(q, v): the Coriolis and centrifugal forces only, :func:`inverse_dynamics` at zero acceleration without
    gravity and the joints' friction (``pinocchio.nonLinearEffects`` less ``computeGeneralizedGravity``)."""
    model = floating_model(robot, params, multi_dof=True)
    single, q_, (v_,) = _states(model, q, v)
    return _shaped(single, _project(model, _rnea(model, q_, v_, np.zeros_like(v_), gravity=False,
                                                 joint_terms=False)))


def gravity(robot: Manipulator, q: Any, *, params: Params | None = None) -> np.ndarray:
    """G(q): the generalised forces that hold the robot at rest against gravity, the base's wrench first
    (``pinocchio.computeGeneralizedGravity``)."""
    model = floating_model(robot, params, multi_dof=True)
    single, q_, _ = _states(model, q)
    rest = np.zeros((q_.shape[0], model.nv))
    return _shaped(single, _project(model, _rnea(model, q_, rest, rest, joint_terms=False)))


def friction(robot: Manipulator, v: Any, *, params: Params | None = None, q: Any = None) -> np.ndarray:
    """damping(v): the joints' friction (damping b v, Coulomb's), (nv,) or (N, nv), zero on the base's rows (a
    spherical or planar joint's damping on each of its three velocities); ``q`` is not needed."""
    model = floating_model(robot, params, multi_dof=True)
    v_ = np.asarray(v, dtype=float)
    if v_.ndim not in (1, 2) or v_.shape[-1] != model.nv:
        raise ValueError(f"v of the robot {model.name!r} must have shape ({model.nv},) or (N, {model.nv}), got "
                         f"{v_.shape}")
    rates = np.atleast_2d(v_)
    tau = np.zeros((rates.shape[0], model.nb + int(sum(model.widths))))
    tau[:, model.nb:] = _joint_friction(model, _tree_rate(model, rates))
    return _shaped(v_.ndim == 1, _project(model, tau))


def mass_matrix(robot: Manipulator, q: Any, *, params: Params | None = None) -> np.ndarray:
    """M(q) (nv, nv) or (N, nv, nv), by the composite-rigid-body algorithm (``pinocchio.crba``, the armature on the
    joints' diagonal)."""
    model = floating_model(robot, params, multi_dof=True)
    single, q_, _ = _states(model, q)
    return _shaped(single, _project_matrix(model, _crba(model, q_)))


#: The ways :func:`forward_dynamics` solves: ``"aba"`` (the articulated-body algorithm, O(n)) and ``"cholesky"``
#: (M by the composite bodies, the bias by Newton-Euler, a Cholesky solve).
FORWARD_METHODS = ("aba", "cholesky")


def forward_dynamics(robot: Manipulator, q: Any, v: Any, tau: Any, *, params: Params | None = None,
                     method: str | None = None) -> np.ndarray:
    """v' with M(q) v' = tau - bias(q, v) (``pinocchio.aba``). ``method``: ``"aba"``, Featherstone's articulated-body
    algorithm with the free joint at the root, or ``"cholesky"``, M by the composite bodies and a Cholesky solve
    (:data:`FORWARD_METHODS`); None, the default: ABA, the cheaper on the example-robot-data robots from solo12
    (18 dof) to talos (38) in this NumPy form, one state or a batch, except with coupled joints, which only the
    Cholesky solve of G^T M G handles, and with spherical or planar joints (the Cholesky solve too)."""
    if method is not None and method not in FORWARD_METHODS:
        raise ValueError(f"method must be one of {', '.join(FORWARD_METHODS)}, got {method!r}")
    model = floating_model(robot, params, multi_dof=True)
    single, q_, (v_, tau_) = _states(model, q, v, tau)
    coupled = model.tree is not None and model.tree.coupling is not None
    if method == "aba" and coupled:
        raise ModelError(f"{model.name}: the articulated-body algorithm runs on a tree without couplings; use "
                         "method='cholesky'")
    if method == "aba" and model.multi:
        kind = "planar" if model.multi[0] in model.planar else "spherical"
        raise ModelError(f"{model.name}: the articulated-body algorithm here runs on 1-dof joints (link "
                         f"{model.multi[0] + 1} is {kind}); use method='cholesky'")
    if method == "cholesky" or coupled or model.multi:
        return _shaped(single, _cholesky_forward(model, q_, v_, tau_))
    return _shaped(single, _aba(model, q_, v_, tau_))


def _cholesky_forward(model: FloatingModel, q: np.ndarray, v: np.ndarray, tau: np.ndarray) -> np.ndarray:
    rhs = tau - _project(model, _rnea(model, q, v, np.zeros_like(v)))
    L = np.linalg.cholesky(_project_matrix(model, _crba(model, q)))
    y = np.linalg.solve(L, rhs[..., None])
    return np.linalg.solve(np.swapaxes(L, 1, 2), y)[..., 0]


def center_of_mass(robot: Manipulator, q: Any, *, params: Params | None = None) -> np.ndarray:
    """The centre of mass of the whole robot in the world frame, (3,) or (N, 3) (``pinocchio.centerOfMass``)."""
    model = floating_model(robot, params, multi_dof=True)
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
    model = floating_model(robot, params, multi_dof=True)
    single, q_, _ = _states(model, q)
    w = _world(model, q_)
    Ic = _composite(model, w)
    cols = [Ic[:, 0] @ w.Sb] + [_mv(Ic[:, i + 1], w.S[:, a])[..., None] for i in range(model.n)
                                for a in model.columns(i)]
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


__all__ = ["FORWARD_METHODS", "FloatingModel", "bias_forces", "center_of_mass", "centroidal_map", "centroidal_momentum",
           "coriolis", "floating_model", "forward_dynamics", "friction", "gravity", "inverse_dynamics", "mass_matrix"]

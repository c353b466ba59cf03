"""The linear-in-parameters form tau = Y(q, qd, qdd) p, symbolic and numeric.

Both are one recursive Newton-Euler pass written in the standard parameters of
:mod:`robodyn.recursions.parameters` instead of mass, centre of mass and inertia (Khalil and Kleinfinger
1987; Khalil and Dombre sec. 9.5). With omega, omega_dot and vdot = the acceleration of the frame origin O_j
(gravity entering as the base accelerating by -g, Fu eq. 3.3-46), the wrench that link j needs, about O_j and
in frame j, is linear in its ten parameters:
    F_j = M vdot + omega_dot x (MX, MY, MZ) + omega x (omega x (MX, MY, MZ))
    N_j = J omega_dot + omega x (J omega) + (MX, MY, MZ) x vdot                      (Khalil eq. 9.63)

and the backward pass sums these wrenches inwards (Fu eqs. 3.3-43, 3.3-44) and projects them on the joint axes.
On a kinematic tree (:attr:`Manipulator.parents <robodyn.model.manipulator.Manipulator.parents>`) both passes walk
the parent array, as Khalil and Kleinfinger write them with the antecedent a(j) in place of j - 1: link j's motion
comes from that of link parents[j], and the wrench of the subtree of link j is summed into link parents[j]. On a
chain this is the serial recursion term for term.
Y is the Jacobian of that tau with respect to the parameters (exact: tau is linear in them), plus the columns
qdd_j (IA_j), qd_j (FV_j) and sign(qd_j) (FC_j).

The tip load (a known wrench, independent of every parameter) is not part of Y p: tau = Y p + load, where load
is :attr:`Equations.load <robodyn.equations.Equations>` (zero for an arm without a tip load). It acts on the last
link, so on a tree only the joints between the last link and the base carry it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import symengine as se
import sympy

from robodyn.algebra import SeExpr, canonical, cross, dot, matrix_to_sympy, to_se, vector, zeros
from robodyn.errors import ModelError
from robodyn.formulations.newton_euler import LinkGeometry, link_geometry
from robodyn.model.dh import chain_frames
from robodyn.model.manipulator import Manipulator
from robodyn.model.params import geometry_symbols, symbol_values
from robodyn.numeric._kernels import JointTransform, joint_transform
from robodyn.numeric._kernels import cross as cross_batch
from robodyn.numeric.model import NumericModel, _Floats, build, check_bound_bodies, link_transforms
from robodyn.recursions import parameters as params_
from robodyn.symbols import joint_symbols


def _L(a: se.DenseMatrix) -> se.DenseMatrix:
    """J a = L(a) (XX, XY, XZ, YY, YZ, ZZ) for the symmetric tensor J."""
    return se.DenseMatrix([[a[0], a[1], a[2], 0, 0, 0], [0, a[0], 0, a[1], a[2], 0], [0, 0, a[0], 0, a[1], a[2]]])


def _times(J: Sequence[SeExpr], a: se.DenseMatrix) -> se.DenseMatrix:
    return _L(a) * vector(J)


class _Motion(NamedTuple):
    """omega, omega_dot and vdot (the acceleration of the frame origin, gravity included) of one link, in its frame."""

    omega: se.DenseMatrix
    omega_dot: se.DenseMatrix
    v_dot: se.DenseMatrix


def _forward(robot: Manipulator, geometry: Sequence[LinkGeometry], qd: Sequence[SeExpr],
             qdd: Sequence[SeExpr]) -> list[_Motion]:
    """The motion of every link from that of its parent (Fu eqs. 3.3-28, 3.3-29, 3.3-35; the base accelerating by
    -g, eq. 3.3-46): parents[i] in place of i - 1 on a tree."""
    base = _Motion(zeros(3), zeros(3), -vector(robot.gravity))
    out: list[_Motion] = []
    for i, geo in enumerate(geometry):
        parent = robot.parents[i]
        omega, omega_dot, v_dot = out[parent] if parent >= 0 else base
        a_joint = geo.Rt * (v_dot + cross(omega_dot, geo.p_joint) + cross(omega, cross(omega, geo.p_joint)))
        w_prev = geo.Rt * omega
        if geo.revolute:
            omega = w_prev + geo.e * qd[i]
            omega_dot = geo.Rt * omega_dot + cross(w_prev, geo.e * qd[i]) + geo.e * qdd[i]
            v_dot = a_joint + cross(omega_dot, geo.r) + cross(omega, cross(omega, geo.r))
        else:
            omega = w_prev
            omega_dot = geo.Rt * omega_dot
            v_dot = (a_joint + cross(omega_dot, geo.r) + cross(omega, cross(omega, geo.r))
                     + 2 * cross(omega, geo.e * qd[i]) + geo.e * qdd[i])
        out.append(_Motion(omega, omega_dot, v_dot))
    return out


def _backward(robot: Manipulator, geometry: Sequence[LinkGeometry],
              wrenches: Sequence[tuple[se.DenseMatrix, se.DenseMatrix]]) -> list[SeExpr]:
    """tau from the wrench (F_i, N_i about O_i, frame i) each link needs: the wrench of the subtree of link i is
    summed into its parent (Fu eqs. 3.3-43, 3.3-44, parents[i] in place of i - 1) and projected on joint i
    (eq. 3.3-45). On a chain this is the serial recursion term for term."""
    f = [F for F, _ in wrenches]
    nn = [N for _, N in wrenches]
    tau: list[SeExpr] = [se.Integer(0)] * robot.n
    for i in reversed(range(robot.n)):
        geo = geometry[i]
        tau[i] = dot(geo.e, nn[i] + cross(geo.r, f[i])) if geo.revolute else dot(geo.e, f[i])
        parent = robot.parents[i]
        if parent >= 0:
            f_out = geo.R * f[i]
            nn[parent] = geo.R * nn[i] + cross(geo.p, f_out) + nn[parent]
            f[parent] = f_out + f[parent]
    return tau


def inverse_dynamics_in_parameters(
    robot: Manipulator,
    links: Sequence[Sequence[Any]],
    q: Sequence[SeExpr] | None = None,
    qd: Sequence[SeExpr] | None = None,
    qdd: Sequence[SeExpr] | None = None,
) -> list[SeExpr]:
    """tau of the rigid bodies (no joint terms, no tip load) by Newton-Euler in inertia-about-origin parameters.

    ``links[j]`` holds the ten parameters (XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M) of link j about the origin of
    *its frame in* ``robot`` (expressions or symbols); the geometry and gravity are the robot's, a chain or a
    tree (velocities from ``robot.parents``, wrenches summed into them). Joint values default to the symbols
    q1.., qd1.., qdd1... Returns symengine expressions (see the module docstring)."""
    n = robot.n
    js = joint_symbols(n).symengine()
    q = list(q) if q is not None else js[0]
    qd = list(qd) if qd is not None else js[1]
    qdd = list(qdd) if qdd is not None else js[2]
    geometry = [link_geometry(f) for f in chain_frames(robot, list(q))]
    wrenches: list[tuple[se.DenseMatrix, se.DenseMatrix]] = []
    for i, motion in enumerate(_forward(robot, geometry, qd, qdd)):
        omega, omega_dot, v_dot = motion
        values = [to_se(x) for x in links[i]]
        J, h, m = values[:6], vector(values[6:9]), values[9]
        F = v_dot * m + cross(omega_dot, h) + cross(omega, cross(omega, h))
        N = _times(J, omega_dot) + cross(omega, _times(J, omega)) + cross(h, v_dot)  # Khalil eq. 9.63
        wrenches.append((F, N))
    return _backward(robot, geometry, wrenches)


@dataclass(frozen=True, eq=False)
class Regressor:
    """tau = Y p + load: the regressor ``Y`` (n x 12n sympy matrix, 13n with Coulomb friction) in q1.., qd1..,
    qdd1.. and the geometry, the robot's parameter values ``p`` (column), their ``symbols``/``names``, and
    ``load``, the tip-load torques (not linear in any parameter). Unpacks as ``Y, p = regressor(robot)``."""

    robot: Manipulator
    Y: sympy.ImmutableMatrix
    p: sympy.ImmutableMatrix
    symbols: tuple[sympy.Symbol, ...]
    load: sympy.ImmutableMatrix
    coulomb: bool = False
    names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(s.name for s in self.symbols))

    def __iter__(self) -> Iterator[sympy.ImmutableMatrix]:
        return iter((self.Y, self.p))


def _joint_columns(n: int, coulomb: bool) -> list[list[SeExpr]]:
    """Columns IA_j, FV_j (, FC_j) of Y for every joint j, as symengine rows of length n."""
    _, qd, qdd = joint_symbols(n).symengine()
    out = []
    for j in range(n):
        cols = [qdd[j], qd[j]] + ([se.sign(qd[j])] if coulomb else [])
        for c in cols:
            out.append([c if i == j else se.Integer(0) for i in range(n)])
    return out


def symbolic_regressor(robot: Manipulator, coulomb: bool = False, *, tidy: bool = True) -> se.DenseMatrix:
    """Y as a symengine matrix (see :func:`regressor`); ``tidy`` brings each entry to the canonical form
    (expanded, sin^2 -> 1 - cos^2) of :mod:`robodyn.algebra`."""
    n = robot.n
    symbols = params_.standard_symbols(n, coulomb)
    per = params_.per_link(coulomb)
    links = [[se.Symbol(s.name) for s in symbols[k * per : k * per + len(params_.INERTIAL)]] for k in range(n)]
    tau = se.DenseMatrix([[t] for t in inverse_dynamics_in_parameters(robot, links)])
    joint = _joint_columns(n, coulomb)
    extra = len(params_.joint_names(coulomb))
    Y = se.zeros(n, per * n)
    q = joint_symbols(n).symengine()[0]
    for k in range(n):
        block = tau.jacobian(se.DenseMatrix(links[k]))
        for i in range(n):
            for c in range(len(params_.INERTIAL)):
                value = block[i, c]
                Y[i, k * per + c] = canonical(value, q) if tidy else value
            for c in range(extra):
                Y[i, k * per + len(params_.INERTIAL) + c] = joint[k * extra + c][i]
    return Y


def regressor(robot: Manipulator, *, coulomb: bool = False, tidy: bool = True) -> Regressor:
    """The linear-in-parameters form of ``robot``'s dynamics: ``Y, p = regressor(robot)`` with

        tau = Y(q, qd, qdd) p + load            (exact; load = the tip-load torques, zero without a tip load)

    p holds, per link j, XXj..Mj (inertia about the frame origin, first moments, mass: see
    :mod:`robodyn.recursions.parameters`), IAj (armature), FVj (damping) and, with ``coulomb=True``,
    FCj (Coulomb friction, value 0: robodyn models have none). The geometry may be numeric or symbolic. Y comes
    from a Newton-Euler pass in the standard parameters (see the module docstring); ``tidy`` expands its entries
    to the canonical form."""
    if not isinstance(robot, Manipulator):
        raise TypeError(f"regressor() expects a Manipulator, got {type(robot).__name__}")
    params_.check_no_clash(robot, coulomb)
    Y = symbolic_regressor(robot, coulomb, tidy=tidy)
    load = _tip_load(robot)
    return Regressor(robot, matrix_to_sympy(Y), params_.standard_values(robot, coulomb),
                     params_.standard_symbols(robot.n, coulomb), load, coulomb)


def _tip_load(robot: Manipulator) -> sympy.ImmutableMatrix:
    """The torques of the tip load: the wrench (tip force, tip moment about O_n, frame n) that the last link
    exerts, carried inwards by the same backward pass; only the joints between the last link and the base move."""
    n = robot.n
    if all(x == 0 for x in robot.tip_force + robot.tip_moment):
        return sympy.ImmutableMatrix.zeros(n, 1)
    geometry = [link_geometry(f) for f in chain_frames(robot, joint_symbols(n).symengine()[0])]
    wrenches = [(zeros(3), zeros(3)) for _ in range(n - 1)]
    wrenches.append((vector([to_se(x) for x in robot.tip_force]), vector([to_se(x) for x in robot.tip_moment])))
    tau = _backward(robot, geometry, wrenches)
    return matrix_to_sympy(se.DenseMatrix([[t] for t in tau]))


# -- numeric --------------------------------------------------------------------------------------------


def _geometry_binding(robot: Manipulator, params: Mapping[Any, Any] | None) -> dict[sympy.Symbol, float]:
    """``params`` as symbols -> floats, with the robot's non-geometric symbols bound to 0 (Y needs none)."""
    bound = symbol_values(params)
    check_physical(robot, bound)  # inertial values given: physical ones only
    missing = sorted(s.name for s in geometry_symbols(robot) if s not in bound)
    if missing:
        raise ModelError(
            f"the regressor of {robot.name!r} needs numbers for its geometry symbols {', '.join(missing)}: "
            "bind them with params={...}", field="params"
        )
    for s in robot.parameters():
        bound.setdefault(s, 0.0)
    return bound


def _skew_batch(v: np.ndarray) -> np.ndarray:
    """[v]x for a batch (3, N): (3, 3, N)."""
    z = np.zeros_like(v[0])
    return np.array([[z, -v[2], v[1]], [v[2], z, -v[0]], [-v[1], v[0], z]])


def _L_batch(a: np.ndarray) -> np.ndarray:
    z = np.zeros_like(a[0])
    return np.array([[a[0], a[1], a[2], z, z, z], [z, a[0], z, a[1], a[2], z], [z, z, a[0], z, a[1], a[2]]])


def _numeric_motion(model: NumericModel, X: Sequence[JointTransform], qdT: np.ndarray, qddT: np.ndarray,
                    N: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """omega, omega_dot, vdot (3, N) of every joint frame, each from its parent's (parent[i]; the base
    accelerating by -g): the forward pass of :func:`inverse_dynamics_in_parameters` in joint frames."""
    base = (np.zeros((3, N)), np.zeros((3, N)), np.broadcast_to(-model.gravity[:, None], (3, N)).copy())
    z = np.array([0.0, 0.0, 1.0])[:, None]
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for i in range(model.n):
        w, wd, vd = out[model.parent[i]] if model.parent[i] >= 0 else base
        p = np.broadcast_to(X[i].p, (3, N))
        vd_parent = vd + cross_batch(wd, p) + cross_batch(w, cross_batch(w, p))
        w_c, wd_c, vd_c = (X[i].to_child(v) for v in (w, wd, vd_parent))
        if model.revolute[i]:
            w = w_c + z * qdT[i]
            wd = wd_c + cross_batch(w_c, z * qdT[i]) + z * qddT[i]
            vd = vd_c
        else:
            w, wd = w_c, wd_c
            vd = vd_c + 2 * cross_batch(w, z * qdT[i]) + z * qddT[i]
        out.append((w, wd, vd))
    return out


def _link_wrench_columns(w: np.ndarray, wd: np.ndarray, vd: np.ndarray) -> np.ndarray:
    """(6, 10, N): the wrench (N; F) a link needs, about its origin, as columns of its ten parameters
    (Khalil eq. 9.63)."""
    Sw, Swd, Svd = _skew_batch(w), _skew_batch(wd), _skew_batch(vd)
    Ki = np.zeros((6, 10, w.shape[1]))
    Ki[:3, :6] = _L_batch(wd) + np.einsum("ijN,jkN->ikN", Sw, _L_batch(w))
    Ki[:3, 6:9] = -Svd
    Ki[3:, 6:9] = Swd + np.einsum("ijN,jkN->ikN", Sw, Sw)
    Ki[3:, 9] = vd
    return Ki


def _numeric_backward(model: NumericModel, X: Sequence[JointTransform], K: Sequence[np.ndarray],
                      N: int) -> np.ndarray:
    """(n, 10n, N): the rigid-body columns of Y in joint frames. The wrench columns of the subtree of joint i
    are summed into its parent (parent[i]) and projected on joint i (z: the moment for R, the force for P)."""
    n = model.n
    Yj = np.zeros((n, 10 * n, N))
    acc: list[np.ndarray | None] = [None] * n  # what the children of each link passed in
    for i in reversed(range(n)):
        own = acc[i] if acc[i] is not None else np.zeros((6, 10 * n, N))
        own[:, 10 * i : 10 * i + 10] += K[i]
        Yj[i] = own[2] if model.revolute[i] else own[5]
        parent = model.parent[i]
        if parent >= 0:
            nn, f = X[i].to_parent(own[:3]), X[i].to_parent(own[3:])
            p = np.broadcast_to(X[i].p, (3, N))[:, None, :]
            moved = np.concatenate((nn + cross_batch(p, f), f), axis=0)
            acc[parent] = moved if acc[parent] is None else acc[parent] + moved
    return Yj


def numeric_regressor(
    robot: Manipulator,
    q: np.ndarray,
    qd: np.ndarray,
    qdd: np.ndarray,
    *,
    params: Mapping[Any, Any] | None = None,
    coulomb: bool = False,
) -> np.ndarray:
    """Y at a batch of states, in NumPy: shape (N, n, 12n) for (N, n) inputs ((n, 12n) for (n,) inputs).

    The same Newton-Euler in the standard parameters as :func:`regressor`, vectorised over the batch in the
    numeric engine's joint frames (:mod:`robodyn.numeric.model`); the columns of link j are moved to its own
    frame by the constant 10x10 matrix of :func:`~robodyn.recursions.parameters.move`. ``params`` binds the
    geometry symbols (inertial symbols are not needed). Y @ p + load equals
    :func:`robodyn.numeric.inverse_dynamics` to rounding."""

    binding = _geometry_binding(robot, params)
    model = build(robot, binding, check_bodies=False)  # inertial symbols are placeholders (0) here
    n = robot.n
    arrays = [np.atleast_2d(np.asarray(a, dtype=float)) for a in (q, qd, qdd)]
    single = np.ndim(q) == 1
    N = max(a.shape[0] for a in arrays)
    qT, qdT, qddT = (np.broadcast_to(a, (N, n)).T for a in arrays)
    X = [joint_transform(model, i, qT[i]) for i in range(n)]
    K = [_link_wrench_columns(w, wd, vd) for w, wd, vd in _numeric_motion(model, X, qdT, qddT, N)]
    Yj = _numeric_backward(model, X, K, N)
    per = params_.per_link(coulomb)
    Y = np.zeros((N, n, per * n))
    frames = _link_in_joint_frames(robot, binding)
    for k in range(n):
        block = np.einsum("ipN,pq->Niq", Yj[:, 10 * k : 10 * k + 10], frames[k])
        Y[:, :, per * k : per * k + 10] = block
        Y[:, k, per * k + 10] = qddT[k]
        Y[:, k, per * k + 11] = qdT[k]
        if coulomb:
            Y[:, k, per * k + 12] = np.sign(qdT[k])
    return Y[0] if single else Y


def _link_in_joint_frames(robot: Manipulator, binding: Mapping[sympy.Symbol, float]) -> list[np.ndarray]:
    """Per link, the 10x10 matrix taking parameters about the link frame to parameters about the joint frame
    (link frame i = joint frame i * C_i; C_i = Trans(x, a_i) Rot(x, alpha_i) in standard DH, I in modified)."""

    floats = _Floats(binding)
    out = []
    for link in robot.links:
        _, C = link_transforms(floats, robot.convention, link)
        out.append(params_.move_matrix(C[:3, :3], C[:3, 3]))
    return out


def numeric_values(robot: Manipulator, params: Mapping[Any, Any] | None = None, coulomb: bool = False) -> np.ndarray:
    """The standard parameter vector p of ``robot`` as floats (``params`` binds its symbols)."""
    p = params_.standard_values(robot, coulomb)
    binding = symbol_values(params)
    try:
        values = np.array([float(x.xreplace(binding)) for x in p], dtype=float)
    except TypeError:
        missing = sorted({s.name for x in p for s in x.xreplace(binding).free_symbols})
        raise ModelError(f"bind the symbols {', '.join(missing)} with params={{...}}", field="params") from None
    check_physical(robot, binding)
    return values


def check_physical(robot: Manipulator, params: Mapping[Any, Any] | None) -> None:
    """Refuse parameter values that give a body a negative mass or an inertia that is not positive
    semidefinite (:func:`robodyn.numeric.model.check_bound_bodies`; bodies left symbolic are skipped)."""

    binding = symbol_values(params)
    check_bound_bodies(robot, _Floats(binding), skip_unbound=True)

"""Programs of a robot on a floating base (``rd.load(path, floating=True)``; :mod:`robodyn.model.joints`): nq != nv.

Coordinates (Pinocchio's, a ``JointModelFreeFlyer`` root): the input ``q`` has nq = n + 7 entries, the base's
position in the world, its **unit** quaternion (x, y, z, w) and the joints' q; ``qd`` and ``qdd`` (and ``tau``
for ``forward``) have nv = n + 6, the base's body-frame twist (the velocity of its origin, then its angular
velocity, both in its frame) and its time derivative (Pinocchio's ``a``), then the joints'. The rotation of the
base is the quaternion's polynomials (R = 1 + 2 P, P quadratic in x, y, z, w), with no normalisation inside the
program: **the caller passes a unit quaternion** (a quaternion of norm s gives the rotation scaled by s^2 in the
gravity terms). The outputs have nv rows: the base's six (the wrench on the base, force then moment about its
origin, in its frame, as ``pinocchio.rnea`` returns it), then the joints'.

The recursions are the fixed-base tree's (:mod:`robodyn.recursions`), run from the base's motion: its angular
velocity and acceleration are the twist's, the classical acceleration of its origin a_lin + w x v_lin - R^T g
(gravity as the base accelerating upwards, in its frame);
:func:`~robodyn.recursions.newton_euler.floating_inverse_dynamics` gives tau (the base's rows: the composite wrench
at the root), :func:`~robodyn.recursions.composite.floating_inertia_matrix` M (the joints' block by the cheapest
fixed-base recursion, :attr:`robodyn.program.routes.Context.mass_matrix`; the base's block the composite inertia of
the whole robot), and ``forward`` is the cheaper of the L D L^T solve of M qdd = tau - bias over the tree whose root
is the base's six coordinates (no fill-in: the joints first, leaves first, then the base's dense 6 x 6 block) and
Featherstone's articulated-body algorithm with the base at the root
(:func:`robodyn.recursions.aba.floating_accelerations`; Talos 5,997 multiplications against 6,665, Solo12 2,045
against 1,733), both counts in ``program.candidates`` (route ``"recursive"``: L D L^T; ``"aba"``: the
articulated-body algorithm). Parts: ``tau``, ``M``, ``h`` (velocity terms, no gravity or friction), ``G``, ``bias``
(tau at qdd = 0), ``forward``; the derivatives ``dtau_dq``, ``dtau_dqd``, ``dqdd_dq``, ``dqdd_dqd``, ``dqdd_dtau``
(nv x nv, with respect to the tangent space as ``pinocchio.computeRNEADerivatives`` and ``computeABADerivatives``:
the base's columns of d/dq along its body-frame exp6 directions) by forward mode over the same recursion
(:func:`id_jacobians`) or by Carpentier and Mansard's analytic form with the base a six-column root
(:func:`analytic_id_jacobians`), the cheapest by count (:func:`derivative_outputs`: Talos' dtau 26,296 -> 15,198
multiplications); the named frames' kinematics (``pose:F``, ``jacobian:F``, ... and their ``_dot``:
:data:`~robodyn.program.outputs.FRAME_OUTPUTS`) by the fixed-base tree's recursion carried by the base's pose
(:class:`robodyn.program.frames.FloatingBase`): the pose in the world, the Jacobians 6 x nv (the base's columns
along its body-frame twist, as ``pinocchio.getFrameJacobian``) and their time derivatives
(``getFrameJacobianTimeVariation``). Burdick's elements refuse a floating robot in one line, as do coupled joints,
implicit loops, a tip load and routes other than the recursive one (and ``"aba"``).

Spherical and planar joints (a link's ``joint`` S or planar), on a floating base or a fixed one (no base inputs or
rows then), come here too: q holds each one's four coordinates in its place (a spherical joint's unit quaternion,
inputs ``q{j}_x`` .. ``q{j}_w``; a planar one's x, y, cos theta, sin theta, ``q{j}_x`` .. ``q{j}_sin``), qd, qdd
and tau its three rates in the child frame (``qd{j}_x`` ..; :data:`SUFFIXES`). The recursions run each as three
pseudo-joints (:mod:`robodyn.recursions.pseudo_joints`: the velocity columns of the tree are the pseudo-joints, so
M, its L D L^T and the forward-mode derivatives need nothing else; their coordinates' directions are the
tangent's, the pose times exp(eps e_c), as Pinocchio's; the frames' recursion runs over them too); the analytic
derivative form is taken along qd only with one (:func:`analytic_id_jacobians`), and forward is L D L^T.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any

import symengine as se

from robodyn.errors import ModelError
from robodyn.model.manipulator import Manipulator
from robodyn.program import routes
from robodyn.program.builder import Builder
from robodyn.program.centroidal import centroidal_output, quaternion_rotation
from robodyn.program.core import Program
from robodyn.program.frames import FloatingBase, frame_outputs
from robodyn.program.outputs import ABA, AUTO, CENTROIDAL_OUTPUTS, DERIVATIVES, FRAME_OUTPUTS, LDLT, is_frame_output
from robodyn.program.progress import stage
from robodyn.recursions import aba, composite, newton_euler, pseudo_joints, rnea_derivatives
from robodyn.recursions.arm import arm_data, fixed_tree, floating_arm_data, literal_zero
from robodyn.recursions.forward_mode import Dual, DualOps, constant, jacobian
from robodyn.recursions.vec3 import Vec, cross, vadd, vsub

#: The outputs a floating robot's program gives so far (a frame's, of the frame F: ``"pose:F"``).
FLOATING_OUTPUTS = ("tau", "M", "h", "G", "bias", "forward", *DERIVATIVES, *CENTROIDAL_OUTPUTS, *FRAME_OUTPUTS)
#: The names of the base's inputs (the joints' are q1.., qd1.., qdd1.., tau1..): position and quaternion (x, y, z,
#: w); twist (linear, angular); its derivative; the wrench (force, moment).
BASE_Q = ("base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw")
BASE_V = ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")
BASE_A = ("base_ax", "base_ay", "base_az", "base_dwx", "base_dwy", "base_dwz")
BASE_TAU = ("base_fx", "base_fy", "base_fz", "base_nx", "base_ny", "base_nz")
#: The suffixes of a spherical and a planar joint's inputs: (rates, coordinates).
SUFFIXES = {"S": (("x", "y", "z"), ("x", "y", "z", "w")), "planar": (("x", "y", "theta"), ("x", "y", "cos", "sin"))}
#: The route name of a floating robot's program, and of a fixed one's with spherical or planar joints.
ROUTE = "recursive (floating base)"
MULTI_DOF_ROUTE = "recursive (spherical or planar joints)"


def refusal(robot: Manipulator, what: str) -> ModelError:
    """The one-line refusal of what the programs of a floating robot (or one with spherical or planar joints) do
    not give yet."""
    kinds = ["floating base"] if robot.floating else []
    if robot.multi_dof:
        k = robot.multi_dof[0]
        kinds.append(f"{robot.links[k].kind} joint at link {robot.label(k)!r}")
    return ModelError(f"{robot.name}: {', '.join(kinds)}: {what}; its programs give {', '.join(FLOATING_OUTPUTS)} "
                      "so far (robodyn.numeric handles the rest)")


def check(robot: Manipulator, outputs: Sequence[str], route: str, base: Any) -> None:
    """One line for what :func:`build` does not handle (before any work)."""
    others = [name for name in outputs if name not in FLOATING_OUTPUTS and not is_frame_output(name)]
    if others:
        raise refusal(robot, f"no program of {others[0]!r}")
    if not robot.floating and set(outputs) & set(CENTROIDAL_OUTPUTS):
        raise ModelError(f"{robot.name}: the centroidal outputs ({', '.join(CENTROIDAL_OUTPUTS)}) are built for a "
                         "floating base (floating=True) so far")
    if route not in (AUTO, "recursive", "aba"):
        raise refusal(robot, f"no route {route!r} (the recursive route builds it; 'aba': forward by the "
                             "articulated-body algorithm)")
    if route == "aba" and robot.multi_dof:
        raise refusal(robot, "no articulated-body algorithm with a spherical or planar joint (forward is L D L^T)")
    if base is not None and base is not False:
        raise refusal(robot, "no base-parameter model")
    if robot.couplings or robot.implicit:
        raise refusal(robot, "no coupled joints or loops")
    for k in robot.multi_dof:
        if robot.links[k].has_coulomb:
            raise ModelError(f"{robot.name}: link {robot.label(k)!r}: Coulomb friction on a {robot.links[k].kind} "
                             "joint is not handled (its damping and armature are)")
    if any(x != 0 for x in (*robot.tip_force, *robot.tip_moment)):
        raise refusal(robot, "no tip load")


def inputs(robot: Manipulator, params: list[se.Symbol]) -> dict[str, list[se.Symbol]]:
    """The program's inputs: q (nq), qd and qdd (nv), tau (nv), parameters. A joint's are q{j}, qd{j}, qdd{j},
    tau{j} (j counts the links from 1); a spherical one's q{j}_x, q{j}_y, q{j}_z, q{j}_w (its quaternion) and
    qd{j}_x, qd{j}_y, qd{j}_z (its angular velocity in the child frame), a planar one's q{j}_x, q{j}_y, q{j}_cos,
    q{j}_sin and qd{j}_x, qd{j}_y, qd{j}_theta (vx, vy, w_z in the child frame)."""
    groups: dict[str, list[str]] = {"q": [], "qd": [], "qdd": [], "tau": []}
    for k in range(robot.n):
        kind = robot.links[k].joint
        for name in groups:
            axes = SUFFIXES[kind][name == "q"] if kind in SUFFIXES else ()
            groups[name] += [f"{name}{k + 1}_{a}" for a in axes] if axes else [f"{name}{k + 1}"]
    base = [*BASE_Q, *BASE_V, *BASE_A, *BASE_TAU] if robot.floating else []
    names = {str(p) for p in params}
    taken = names & {*base, *(x for group in groups.values() for x in group)}
    if taken:
        raise ModelError(f"{robot.name}: a parameter is named {sorted(taken)[0]!r}, as an input of the programs: "
                         "rename it")
    first = dict(zip(groups, (BASE_Q, BASE_V, BASE_A, BASE_TAU), strict=True)) if robot.floating else {}
    return {**{name: [se.Symbol(x) for x in (*first.get(name, ()), *group)] for name, group in groups.items()},
            "parameters": params}


def gravity_in_base(ops: Builder, quaternion: Sequence[Any], g: Sequence[Any]) -> Vec:
    """R^T g: the world's gravity in the base frame, R = 1 + 2 P the rotation of the unit quaternion (x, y, z, w)
    (:func:`robodyn.model.joints.quaternion_matrix`), P's entries quadratic (no normalisation)."""
    x, y, z, w = quaternion
    P = ((-(y * y + z * z), x * y - z * w, x * z + y * w),
         (x * y + z * w, -(x * x + z * z), y * z - x * w),
         (x * z - y * w, y * z + x * w, -(x * x + y * y)))
    g2 = [ops.value(2 * ops.value(gr)) for gr in g]  # (2 g_r: a number or a constant)
    return tuple(ops.value(g[c]) + sum((g2[r] * P[r][c] for r in range(3)), ops.value(0))  # type: ignore[return-value]
                 for c in range(3))


class _Parts:
    """The parts of one robot with nq != nv (a floating base, spherical or planar joints) in one builder (each built
    once). ``nb``: the base's velocities (6 on a floating base, else 0), ``nqb`` its coordinates (7 or 0); ``tree``
    the joints with each spherical or planar one as its pseudo-joints (:mod:`robodyn.recursions.pseudo_joints`),
    ``arm`` its recursions' data, over the velocity columns."""

    def __init__(self, robot: Manipulator, ctx: routes.Context | None, ops: Builder,
                 symbols: dict[str, list[se.Symbol]]):
        self.robot, self.ctx, self.ops = robot, ctx, ops
        self.floating = robot.floating
        self.nb, self.nqb = (6, 7) if robot.floating else (0, 0)
        rest, base = floating_arm_data(robot) if robot.floating else (arm_data(fixed_tree(robot)), None)
        self.base: Any = base  # (a floating base's body)
        self.tree = pseudo_joints.tree_of(rest, tuple(link.joint if link.multi_dof else "" for link in robot.links))
        self.arm = self.tree.arm
        self.q, self.v, self.a = ([ops.value(x) for x in symbols[k]] for k in ("q", "qd", "qdd"))
        self.g_base = (gravity_in_base(ops, self.q[3:7], self.arm.gravity) if robot.floating else
                       tuple(ops.value(g) for g in self.arm.gravity))
        self.scalars = routes.BuilderOps(ops)
        multi_q = {str(x) for k in robot.multi_dof for x in symbols["q"][robot.idx_q(k):robot.idx_q(k) + 4]}
        #: The joints' angles and lengths (the sines and cosines the builder shares): q less the spherical and
        #: planar joints' coordinates.
        self.angles = [x for x in symbols["q"][self.nqb:] if str(x) not in multi_q]

    def root(self, velocity: bool, acceleration: bool, gravity: bool) -> newton_euler.Motion:
        """The base's w, wd and vd (module docstring), each term kept or left out."""
        return root_motion(self.v if velocity else None, self.a if acceleration else None,
                           self.g_base if gravity else None)

    def inverse_dynamics(self, ops: Any, root: newton_euler.Motion | None, q: Sequence[Any],
                         qd: Sequence[Any] | None, qdd: Sequence[Any] | None, *, gravity: bool = True,
                         friction: bool = True) -> list[Any]:
        """ID (nv rows) on ``ops`` (the builder's scalars or duals over them) at the joints' q, qd, qdd (after the
        base's; None: zero) and the base's motion ``root`` (a floating base's; a fixed one: ``gravity``)."""
        q_arm = self.tree.q_columns(q)
        qd_arm, qdd_arm = pseudo_joints.rates(self.tree, qd, qdd)
        if self.floating:
            assert root is not None
            tau = newton_euler.floating_inverse_dynamics(self.arm, ops, self.base, root, q_arm, qd_arm, qdd_arm,
                                                         friction=friction)
        else:
            tau = newton_euler.inverse_dynamics(self.arm, ops, q_arm, qd_arm, qdd_arm, gravity=gravity,
                                                tip_load=False, friction=friction)
        if friction and self.tree.multi:
            tau[self.nb:] = pseudo_joints.joint_terms(self.tree, ops, tau[self.nb:], qd, qdd)
        return tau

    def part(self, name: str) -> list[Any]:
        if name in CENTROIDAL_OUTPUTS:  # from M's and h's base rows (robodyn.program.centroidal)
            return centroidal_output(self, name)
        joint_q = self.tree.q_columns(self.q[self.nqb:])
        if name == "M":
            if self.floating:
                M = composite.floating_inertia_matrix(self.arm, self.scalars, joint_q, self.base,
                                                      joint_block=self.ctx.mass_matrix if self.ctx else None)
            else:
                M = composite.inertia_matrix(self.arm, self.scalars, joint_q)
            M = pseudo_joints.armature(self.tree, self.scalars, M, self.nb)
            return [x for row in M for x in row]
        velocity, acceleration, gravity, friction = {
            "tau": (True, True, True, True), "bias": (True, False, True, True),
            "h": (True, False, False, False), "G": (False, False, True, False)}[name]
        qd = self.v[self.nb:] if velocity else None
        qdd = self.a[self.nb:] if acceleration else None
        root = self.root(velocity, acceleration, gravity) if self.floating else None
        return self.inverse_dynamics(self.scalars, root, self.q[self.nqb:], qd, qdd, gravity=gravity,
                                     friction=friction)

    def articulated(self, tau: Sequence[Any]) -> list[Any]:
        """``forward`` by the articulated-body algorithm with the floating base at the root
        (:func:`robodyn.recursions.aba.floating_accelerations`; ``tau`` the nv generalised forces, the base's
        wrench first: force, moment)."""
        number = self.scalars.number
        J = tuple(_three([number(x) for x in row]) for row in self.base.J)
        root = aba.FloatingRoot(J=(J[0], J[1], J[2]), MS=_three([number(x) for x in self.base.MS]),
                                M=number(self.base.M), velocity=(_three(self.v[3:6]), _three(self.v[:3])),
                                force=(_three(tau[3:6]), _three(tau[:3])), gravity=_three(self.g_base))
        return aba.floating_accelerations(self.arm, self.q[7:], self.v[6:], tau[6:], self.scalars, root)

    def frames(self, names: Sequence[str]) -> dict[str, list[Any]]:
        """The frames' outputs ``names`` (:mod:`robodyn.program.frames`): the tree's joints (and pseudo-joints) under
        the base's pose."""
        tree = _FrameTree(self.robot, self.arm, {"q": self.q[self.nqb:], "qd": self.v[self.nb:]})
        base = None
        if self.floating:
            R = quaternion_rotation(self.ops, self.q[3:7])
            base = FloatingBase((tuple(R[0]), tuple(R[1]), tuple(R[2])), (self.q[0], self.q[1], self.q[2]),
                                self.v[:6])
        return frame_outputs(tree, self.ops, self.scalars, names, base=base,
                             tree=self.tree if self.tree.multi else None)

    def parents(self) -> list[int]:
        """The tree of the nv coordinates: a floating base's six a chain, each joint (or pseudo-joint) on the base's
        last or its parent's."""
        if not self.floating:
            return list(self.arm.parents)
        return [*range(-1, 5), *(5 if p < 0 else 6 + p for p in self.arm.parents)]


def _three(x: Sequence[Any]) -> Vec:
    return x[0], x[1], x[2]


@dataclasses.dataclass(frozen=True)
class _FrameTree:
    """What :func:`robodyn.program.frames.frame_outputs` reads of a tree: the robot (its frames), its data and the
    joints' inputs."""

    robot: Manipulator
    arm_data: Any
    inputs: dict[str, list[Any]]


def root_motion(v: Sequence[Any] | None, a: Sequence[Any] | None, g_base: Sequence[Any] | None
                ) -> newton_euler.Motion:
    """The base's w, wd and vd from its twist v and its derivative a (None: zero) and R^T g (None: no gravity)."""
    zero = (0, 0, 0)
    v_lin, w = (tuple(v[:3]), tuple(v[3:6])) if v is not None else (zero, zero)
    a_lin, wd = (tuple(a[:3]), tuple(a[3:6])) if a is not None else (zero, zero)
    vd = vadd(a_lin, cross(w, v_lin))
    return w, wd, vsub(vd, tuple(g_base)) if g_base is not None else vd


def id_jacobians(parts: _Parts, a: Sequence[Any], directions: Sequence[str]) -> dict[str, list[list[Any]]]:
    """{d: dID/dd} (nv x nv) for d in ``directions`` (of "q", "qd") at the acceleration ``a`` (nv), with respect
    to the tangent space as ``pinocchio.computeRNEADerivatives``: the recursion of :func:`_Parts.part` ("tau") on
    duals (:mod:`robodyn.recursions.forward_mode`). Along qd every entry of v is a direction. Along q, the
    joints' angles, and the base's tangent: its pose times exp6(eps e_k) leaves the twist, its derivative and the
    joints as they are (all in the base frame) and turns R^T g into (1 - eps [e_k]) R^T g for k an angular
    direction (3, 4, 5): d(R^T g)/d theta_k = (R^T g) x e_k; the translations (0, 1, 2) change nothing.

    R^T g and the base's linear velocity v_l enter only the root's vd = a_l + w x v_l - R^T g: with both
    directions, the three directions of vd are seeded instead of those six, D = dID/dvd (nv x 3), and
    dID/dtheta_k = D (e_k x R^T g), dID/dv_l,k = D (w x e_k)."""
    nv, ops = len(parts.v), DualOps(parts.scalars)
    q = joint_q_duals(parts, "q" in directions)
    acc = constant(a)
    if not parts.floating:  # (a fixed base with spherical or planar joints: the joints' directions alone)
        v = [Dual(x, {("qd", k): 1}) for k, x in enumerate(parts.v)] if "qd" in directions else constant(parts.v)
        tau = parts.inverse_dynamics(ops, None, q, v, acc)
        return {d: jacobian(tau, d, nv) for d in directions}
    g = parts.g_base
    both = "q" in directions and "qd" in directions
    g_duals = constant(g)
    if "q" in directions and not both:
        rates = {3: (0, g[2], -g[1]), 4: (-g[2], 0, g[0]), 5: (g[1], -g[0], 0)}  # (R^T g) x e_k
        g_duals = [Dual(g[c], {("q", k): rates[k][c] for k in rates if not isinstance(rates[k][c], int)})
                   for c in range(3)]
    v = ([Dual(x, {("qd", k): 1} if k >= 3 or not both else None) for k, x in enumerate(parts.v)]
         if "qd" in directions else constant(parts.v))
    w, wd, vd = root_motion(v, acc, g_duals)
    if both:
        vd = tuple(Dual(x.value, {**x.d, ("vd", m): 1}) for m, x in enumerate(vd))  # type: ignore[assignment]
    tau = parts.inverse_dynamics(ops, (w, wd, vd), q, v[6:], acc[6:])
    out = {d: jacobian(tau, d, nv) for d in directions}
    if both:
        D = jacobian(tau, "vd", 3)
        wv = parts.v[3:6]
        for k in range(3):
            angular, linear = _cross_unit(k, g, left=True), _cross_unit(k, wv, left=False)
            for i in range(nv):
                out["q"][i][3 + k] = _combine(D[i], angular)
                out["qd"][i][k] = _combine(D[i], linear)
    return out


def joint_q_duals(parts: _Parts, seeded: bool) -> list[Any]:
    """The joints' q (after the base's) as duals, along ("q", column) if ``seeded``: an angle or a length
    moves its column by 1; a spherical joint's quaternion moves along its three columns as the pose R exp(eps e_c)
    moves it, and a planar joint's four coordinates as its SE(2) pose does
    (:func:`robodyn.recursions.pseudo_joints.coordinate_directions`)."""
    q = parts.q[parts.nqb:]
    if not seeded:
        return constant(q)
    moves = pseudo_joints.coordinate_directions(parts.tree, q)
    return [Dual(x, {("q", parts.nb + col): rate for col, rate in along}) for x, along in zip(q, moves, strict=True)]


def _cross_unit(k: int, x: Sequence[Any], *, left: bool) -> tuple[Any, Any, Any]:
    """e_k x x (``left``) or x x e_k, with literal zeros."""
    i, j = (k + 1) % 3, (k + 2) % 3
    e_x = [0, 0, 0]
    e_x[i], e_x[j] = -x[j], x[i]  # e_k x x: component i = -x_j, component j = x_i
    return tuple(e_x) if left else tuple(0 if isinstance(c, int) else -c for c in e_x)  # type: ignore[return-value]


def _combine(row: Sequence[Any], coefficients: Sequence[Any]) -> Any:
    """sum_m row[m] coefficients[m], skipping literal zeros."""
    terms = [r * c for r, c in zip(row, coefficients, strict=True)
             if not (isinstance(r, int) and r == 0) and not (isinstance(c, int) and c == 0)]
    return sum(terms[1:], terms[0]) if terms else 0


def analytic_id_jacobians(parts: _Parts, a: Sequence[Any], directions: Sequence[str]) -> dict[str, list[list[Any]]]:
    """:func:`id_jacobians` by Carpentier and Mansard's analytic form (:mod:`robodyn.recursions.rnea_derivatives`)
    in the base frame at this instant: the base a six-column root whose twist is v[:6] and whose spatial
    acceleration is a[:6] (Pinocchio's a: the derivative of the body-frame twist) plus a0 = (0, -R^T g); a fixed
    base at rest, a0 = (0, -g).

    Spherical and planar joints run as their pseudo-joints (:mod:`robodyn.recursions.pseudo_joints`), along qd
    only: the form holds at the pseudo-joints' given accelerations, which depend on the rates
    (:func:`~robodyn.recursions.pseudo_joints.rates`), so the chain rule adds M_rec dqdd'/dqd (M_rec: M without those
    joints' armature, which acts outside the recursion), and their damping is added on the diagonal
    (:func:`_pseudo_qd_terms`). Along q it does not hold for them: turning the second or third pseudo-joint leaves
    the first one's frame where it was, where the joint's tangent turns the child frame, which is all three
    pseudo-joints' frames (:func:`derivative_outputs` takes forward mode there)."""
    nb = parts.nb
    root = None
    if parts.floating:
        zero = (0, 0, 0)
        a0 = (zero, vsub(zero, tuple(parts.g_base)))
        v_lin, w, a_lin, wd = (tuple(x[r:r + 3]) for x in (parts.v, a) for r in (0, 3))
        root = rnea_derivatives.Root(velocity=(w, v_lin), acceleration=(wd, vadd(a_lin, a0[1])), a0=a0,
                                     body=parts.base)
    qd, qdd = pseudo_joints.rates(parts.tree, parts.v[nb:], a[nb:])
    assert qd is not None and qdd is not None
    out = rnea_derivatives.id_jacobians(parts.arm, parts.scalars, parts.tree.q_columns(parts.q[parts.nqb:]), qd,
                                        qdd, directions, root=root)
    if "qd" in directions and parts.tree.multi:
        _pseudo_qd_terms(parts, out["qd"])
    return out


def _pseudo_qd_terms(parts: _Parts, jacobian: list[list[Any]]) -> None:
    """dtau/dqd of the spherical and planar joints' columns, in place (:func:`analytic_id_jacobians`): plus
    M_rec[:, r] d qdd'_r / d qd_c over the joint's columns r and c
    (:func:`~robodyn.recursions.pseudo_joints.rate_slopes`), and the joint's damping on its diagonal."""
    nb, nv, tree = parts.nb, len(parts.v), parts.tree
    M = parts.part("M")
    for k, (damping, armature) in zip(tree.multi, tree.friction, strict=True):
        columns = [nb + col for col in tree.links[k]]
        rates = pseudo_joints.rate_slopes(tree.kinds[k], [parts.v[c] for c in columns])  # d qdd'_r / d qd_c
        for i in range(nv):
            for c_index, c in enumerate(columns):
                terms = []
                for r_index, r in enumerate(columns):
                    factor = rates[r_index][c_index]
                    if literal_zero(factor):
                        continue
                    entry = M[i * nv + r] - (parts.scalars.number(armature) if i == r and armature != 0 else 0)
                    terms.append(entry * factor)
                if terms:
                    jacobian[i][c] = sum(terms[1:], terms[0]) + jacobian[i][c]
            if damping != 0 and i in columns:
                jacobian[i][i] = jacobian[i][i] + parts.scalars.number(damping)


def variant_id_jacobians(parts: _Parts, a: Sequence[Any], directions: Sequence[str], analytic: Sequence[str]
                         ) -> dict[str, list[list[Any]]]:
    """dID along ``directions`` at ``a``, those in ``analytic`` by :func:`analytic_id_jacobians`, the others by
    forward mode (:func:`id_jacobians`)."""
    chosen = [d for d in directions if d in analytic]
    forward = [d for d in directions if d not in chosen]
    return {**(id_jacobians(parts, a, forward) if forward else {}),
            **(analytic_id_jacobians(parts, a, chosen) if chosen else {})}


def derivative_outputs(parts: _Parts, ops: Builder, names: Sequence[str], ldlt: Any,
                       symbols: dict[str, list[se.Symbol]]) -> dict[str, list[Any]]:
    """The derivatives ``names`` (of :data:`~robodyn.program.outputs.DERIVATIVES`), nv x nv row-major, as
    :func:`robodyn.program.routes.derivative_outputs` makes them for a fixed base: dtau/dq and dtau/dqd at qdd, and
    dqdd/dx = -M^-1 dtau/dx at qdd = FD(q, qd, tau) (each column solved with the L D L^T factors of ``forward``,
    ``ldlt()``), dqdd/dtau = M^-1. dID (at qdd, and at FD for dqdd) is built by forward mode or the analytic form,
    direction by direction, for all the outputs at once as the fixed base's candidates say
    (:data:`~robodyn.program.routes.ANALYTIC_VARIANTS`: all forward, dqd analytic, both analytic), each in the same
    builder, and the cheapest set of jacobians kept (:func:`robodyn.program.routes.cheapest`) before the solves,
    which are the same whichever form."""
    nv, wanted = len(parts.v), set(names)
    at = {"dtau": [d for d in ("q", "qd") if f"dtau_d{d}" in wanted],
          "dqdd": [d for d in ("q", "qd") if f"dqdd_d{d}" in wanted]}
    solve: Any
    qdd: Any
    solve, qdd = ldlt() if wanted & {"dqdd_dq", "dqdd_dqd", "dqdd_dtau"} else (None, None)
    rates = [d for d in ("q", "qd") if d in at["dtau"] or d in at["dqdd"]]
    variants: list[dict[str, list[Any]]] = []
    # (a spherical or planar joint: not along q: the form turns one pseudo-joint's frame and those below it, where
    # the joint's tangent turns the child frame, which all three pseudo-joints' frames are)
    candidates = [variant for variant in routes.ANALYTIC_VARIANTS
                  if not (parts.tree.multi and "q" in variant)] or [()]
    for analytic in dict.fromkeys(tuple(d for d in rates if d in analytic) for analytic in candidates):
        stage(f"building dID (floating base; analytic: {', '.join(analytic) or 'none'})")
        variants.append({f"{group}_d{d}": [x for row in jac for x in row]
                         for group, acc in (("dtau", parts.a), ("dqdd", qdd)) if at[group]
                         for d, jac in variant_id_jacobians(parts, acc, at[group], analytic).items()})
    jac = routes.cheapest(ops, symbols, variants, lambda out: ops.program(symbols, out, angles=parts.angles))
    out: dict[str, list[Any]] = {f"dtau_d{d}": jac[f"dtau_d{d}"] for d in at["dtau"]}
    if solve is not None:
        rows = {d: [jac[f"dqdd_d{d}"][i * nv:(i + 1) * nv] for i in range(nv)] for d in at["dqdd"]}
        out.update(routes.solved_derivatives(solve, nv, rows, "dqdd_dtau" in wanted))
    return {name: out[name] for name in names}


def build(robot: Manipulator, outputs: Sequence[str], route: str = AUTO, base: Any = None) -> Program:
    """The program of ``outputs`` (of :data:`FLOATING_OUTPUTS`) of the floating ``robot`` (module docstring)."""
    outputs = tuple(outputs)
    check(robot, outputs, route, base)
    # the joints' block of M by the fixed base's cheapest route (a body alone: none; spherical or planar joints:
    # the composite-body recursion over the pseudo-joints)
    ctx = routes.Context(fixed_tree(robot)) if robot.n and not robot.multi_dof else None
    params = [se.Symbol(s.name) for s in robot.parameters()]
    symbols = inputs(robot, params)
    ops = Builder(params)
    parts = _Parts(robot, ctx, ops, symbols)
    built: dict[str, list[Any]] = {}

    def part(name: str) -> list[Any]:
        if name not in built:
            stage(f"building {name} (floating base)")
            built[name] = parts.part(name)
        return built[name]

    nv = robot.nv
    tau = [ops.value(t) for t in symbols["tau"]]

    @functools.cache
    def ldlt() -> tuple[Any, list[Any]]:  # M's factors, made once, and qdd = M^-1 (tau - bias)
        flat = part("M")
        rhs = [t - b for t, b in zip(tau, part("bias"), strict=True)]
        stage("forward by L D L^T (floating base)")
        solve = routes.ldlt_factor(ops, [flat[i * nv:(i + 1) * nv] for i in range(nv)], parts.parents())
        return solve, solve(rhs)

    out: dict[str, list[Any]] = {}
    for name in outputs:
        if name == "forward" and route == "aba":  # (forced: no L D L^T candidate, as on a fixed base)
            out[name] = parts.articulated(tau)
        elif name == "forward":
            out[name] = ldlt()[1]
        elif name not in DERIVATIVES and not is_frame_output(name):
            out[name] = part(name)
    if any(map(is_frame_output, outputs)):
        stage("building the frames' kinematics (floating base)")
        out.update(parts.frames([name for name in outputs if is_frame_output(name)]))
    if any(name in DERIVATIVES for name in outputs):
        out.update(derivative_outputs(parts, ops, [n for n in outputs if n in DERIVATIVES], ldlt, symbols))
    out = {name: out[name] for name in outputs}
    used = {k: v for k, v in symbols.items()
            if k != "tau" or any(n == "forward" or n.startswith("dqdd") for n in outputs)}
    stage("tidying the program")
    program = ops.program(used, out, angles=parts.angles)
    program.route = ROUTE if robot.floating else MULTI_DOF_ROUTE
    if route == "aba" and "forward" in outputs:
        program.route = f"{ROUTE}, forward: aba"
    if "forward" not in outputs or not robot.floating or robot.multi_dof or route != AUTO:
        return program
    # forward by the articulated-body algorithm too, in the same builder (the other outputs shared): the cheaper
    # whole program is kept (a tie keeps L D L^T), both counts in ``candidates``, as on a fixed base
    stage("forward by the articulated-body algorithm (floating base)")
    articulated = ops.program(used, {**out, "forward": parts.articulated(tau)}, angles=parts.angles)
    articulated.route = f"{ROUTE}, forward: aba"
    candidates = {LDLT: (program.route, program.count()["evaluation"]),
                  ABA: (articulated.route, articulated.count()["evaluation"])}
    best = articulated if routes.program_cost(articulated) < routes.program_cost(program) else program
    best.candidates = candidates
    return best

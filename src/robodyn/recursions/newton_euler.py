"""Newton-Euler inverse dynamics, customised (Khalil and Kleinfinger), written once.

The recursion runs in modified-DH frames (:mod:`robodyn.recursions.arm`: a standard-DH arm is converted
first) on the scalars of any ``ops`` (:mod:`robodyn.recursions.scalars`): symengine expressions (the symbolic
formulation), the program builder's scalars (every 0, 1 and -1 of the geometry and the parameters folds away as
it runs, and what depends on parameters only goes to the constants block), NumPy batches. Each link carries its
standard inertial parameters about its own frame origin (Khalil's J_j, MS_j = m_j r_j, M_j), which keeps the
mass-centre offsets out of the run-time recursion:

    forward, j = 1..n (frame j, R = R_j = F_j Rot(z, theta_j), P = P_j; see :class:`~robodyn.recursions.arm.Joint`):
      w_j   = R^T w_{j-1} + qd_j z                                         (revolute)
      wd_j  = R^T wd_{j-1} + qdd_j z + (R^T w_{j-1}) x qd_j z             (revolute)
      vd_j  = R^T (vd_{j-1} + U_{j-1} P_j) [+ 2 w_j x qd_j z + qdd_j z]     (prismatic)
      U_j   = hat(wd_j) + hat(w_j) hat(w_j)
      F_j   = M_j vd_j + U_j MS_j
      N_j   = J_j wd_j + w_j x (J_j w_j) + MS_j x vd_j   (w x J w from the products w_a w_b)
    backward, j = n..1:
      f_j = F_j + R_{j+1} f_{j+1}
      n_j = N_j + R_{j+1} n_{j+1} + P_{j+1} x (R_{j+1} f_{j+1})
      tau_j = n_j . z (revolute) or f_j . z (prismatic) + damping qd_j + armature qdd_j + k_j (q_j - q_ref,j)

(Khalil and Kleinfinger 1987; Khalil and Dombre, Modeling, Identification and Control of Robots, eq. 9.88-9.94),
with vd_0 = -gravity (the base accelerating upwards) and the tip load as f_{n+1}, n_{n+1}. On a kinematic tree
j-1 stands for the parent lambda(j) in the forward pass, and the backward pass sums f, n of every child k of j
(R_k, P_k theirs); the tip load acts on the last link. Products with R and R^T are done component by component
(never forming the matrix), and U_j is formed from the six products w_a w_b, as Khalil and Kleinfinger do.

The passes are separate functions (:func:`forward`, :func:`link_wrench`, :func:`backward`) so that the
regressor runs the same forward pass and carries each parameter's wrench through the same backward pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from robodyn.recursions.arm import ArmData, Inertial, Joint, joint_friction, joint_spring, joints
from robodyn.recursions.composite import carry_wrench, floating_parameters, link_parameters
from robodyn.recursions.scalars import ScalarOps
from robodyn.recursions.vec3 import ZERO3, Mat, Scalar, Vec, cross, matvec, vadd, vscale

Motion = tuple[Vec, Vec, Vec]  # w_j, wd_j, vd_j of link j, in frame j
Wrench = tuple[Vec, Vec]  # a force and a moment about the frame origin, in the frame
Progress = Callable[[str], None] | None  # told after each link of each pass (the symbolic formulation's messages)


def U_times(w: Vec, wd: Vec, v: Vec) -> Vec:
    """U v = wd x v + w x (w x v), with U from the six products w_a w_b (Khalil)."""
    wx2, wy2, wz2 = w[0] * w[0], w[1] * w[1], w[2] * w[2]
    wxy, wxz, wyz = w[0] * w[1], w[0] * w[2], w[1] * w[2]
    U = (
        (-(wy2 + wz2), wxy - wd[2], wxz + wd[1]),
        (wxy + wd[2], -(wx2 + wz2), wyz - wd[0]),
        (wxz - wd[1], wyz + wd[0], -(wx2 + wy2)),
    )
    return matvec(U, v)


def w_cross_Jw(J: Mat, w: Vec) -> Vec:
    """w x (J w) as quadratic forms in the six products w_a w_b that U_j already needs:
    (w x Jw)_x = (J_zz - J_yy) w_y w_z + J_xz w_x w_y - J_xy w_x w_z + J_yz (w_y^2 - w_z^2), and
    cyclically; the differences of moments are constants (3 multiplications fewer than J w, then
    the cross product, for a full tensor)."""
    xx, yy, zz = w[0] * w[0], w[1] * w[1], w[2] * w[2]
    xy, xz, yz = w[0] * w[1], w[0] * w[2], w[1] * w[2]
    return (
        (J[2][2] - J[1][1]) * yz + J[0][2] * xy - J[0][1] * xz + J[1][2] * (yy - zz),
        (J[0][0] - J[2][2]) * xz + J[0][1] * yz - J[1][2] * xy + J[0][2] * (zz - xx),
        (J[1][1] - J[0][0]) * xy + J[1][2] * xz - J[0][2] * yz + J[0][1] * (xx - yy),
    )


def link_motion(jt: Joint, parent: Motion) -> Motion:
    """w_j, wd_j, vd_j from the parent's (the forward equations of the module docstring)."""
    w, wd, vd = parent
    vd = jt.to_link(vadd(vd, U_times(w, wd, jt.P)))
    w_in = jt.to_link(w)
    wd = jt.to_link(wd)
    if jt.revolute:
        w = (w_in[0], w_in[1], w_in[2] + jt.qd)
        wd = (wd[0] + w_in[1] * jt.qd, wd[1] - w_in[0] * jt.qd, wd[2] + jt.qdd)
    else:
        w = w_in
        vd = (vd[0] + 2 * w[1] * jt.qd, vd[1] - 2 * w[0] * jt.qd, vd[2] + jt.qdd)
    return w, wd, vd


def forward(geo: Sequence[Joint], parents: Sequence[int], base_vd: Vec, progress: Progress = None, *,
            root: Motion | None = None) -> list[Motion]:
    """The motion of every link, from its parent's (the base: at rest, accelerating by ``base_vd``; or, for a
    floating base, moving as ``root`` says: its w, wd, vd in its own frame, gravity in vd)."""
    motion: list[Motion] = []
    base = (ZERO3, ZERO3, base_vd) if root is None else root
    for j, jt in enumerate(geo):
        motion.append(link_motion(jt, motion[parents[j]] if parents[j] >= 0 else base))
        if progress:
            progress(f"forward recursion, link {j + 1}")
    return motion


def link_wrench(p: Inertial, motion: Motion) -> Wrench:
    """F_j, N_j: the force and moment (about O_j) that move link j's bodies as ``motion`` says."""
    w, wd, vd = motion
    return (vadd(vscale(p.M, vd), U_times(w, wd, p.MS)),
            vadd(matvec(p.J, wd), w_cross_Jw(p.J, w), cross(p.MS, vd)))


def backward(geo: Sequence[Joint], parents: Sequence[int], wrenches: Sequence[Wrench],
             tip: Wrench | None = None, progress: Progress = None) -> list[Wrench]:
    """f_j, n_j: what link j's subtree needs from its joint, the links' wrenches summed from the leaves into
    their parents (and the tip load on the last link)."""
    n = len(geo)
    inward: list[Wrench | None] = [None] * n  # what the children (and the tip load) exert, in each frame
    if tip is not None:
        inward[n - 1] = tip
    out: list[Wrench] = [(ZERO3, ZERO3)] * n
    for j in reversed(range(n)):
        F, N = wrenches[j]
        out[j] = (F, N) if inward[j] is None else (vadd(F, inward[j][0]), vadd(N, inward[j][1]))  # type: ignore[index]
        lam = parents[j]
        if lam >= 0:  # into the parent's frame, added to what its other children exert
            carried = carry_wrench(geo[j], *out[j])
            previous = inward[lam]
            inward[lam] = carried if previous is None else (vadd(previous[0], carried[0]),
                                                            vadd(previous[1], carried[1]))
        if progress:
            progress(f"backward recursion, link {j + 1}")
    return out


def joint_force(jt: Joint, wrench: Wrench) -> Scalar:
    """The component of the wrench the joint transmits: n . z (revolute) or f . z (prismatic)."""
    return wrench[1][2] if jt.revolute else wrench[0][2]


def inverse_dynamics(
    arm: ArmData,
    ops: ScalarOps,
    q: Sequence[Scalar],
    qd: Sequence[Scalar] | None,
    qdd: Sequence[Scalar] | None,
    *,
    gravity: bool = True,
    tip_load: bool = True,
    friction: bool = True,
    group: bool = True,
    parameters: Sequence[Inertial] | None = None,
    progress: Progress = None,
    spring: bool = True,
) -> list[Scalar]:
    """tau by the customised recursion (module docstring) at the state q, qd, qdd (scalars of ``ops``; None
    stands for zero). ``friction`` adds the joint friction (damping qd, Coulomb), armature qdd and, with
    ``spring``, the joint spring k (q - q_ref) (:func:`joint_terms`); ``group``
    regroups the parameters first (:func:`~robodyn.recursions.composite.grouped`); ``parameters`` (scalars), if
    given, are the links' parameters to use instead of the arm's (e.g. the base parameters as symbols);
    ``progress`` is told after each link of each pass."""
    geo = joints(arm, ops, q, qd, qdd)
    par = link_parameters(arm, ops, group, parameters)
    base_vd: Vec = tuple(-ops.number(g) for g in arm.gravity) if gravity else ZERO3
    motion = forward(geo, arm.parents, base_vd, progress)
    wrenches = [link_wrench(p, m) for p, m in zip(par, motion, strict=True)]
    tip = (tuple(ops.number(x) for x in arm.tip_force), tuple(ops.number(x) for x in arm.tip_moment))
    total = backward(geo, arm.parents, wrenches, tip if tip_load else None, progress)
    tau = [joint_force(jt, w) for jt, w in zip(geo, total, strict=True)]
    if friction:
        tau = joint_terms(ops, tau, par, geo, q, spring)
    return tau


def joint_terms(ops: ScalarOps, tau: Sequence[Scalar], par: Sequence[Inertial], geo: Sequence[Joint],
                q: Sequence[Scalar], spring: bool = True) -> list[Scalar]:
    """tau plus each joint's friction (damping qd, Coulomb), armature qdd and, with ``spring``, its spring
    k (q - q_ref) (:func:`~robodyn.recursions.arm.joint_spring`; the literal 0 where k is)."""
    return [t + joint_friction(ops, p.damping, p.coulomb, jt.qd) + p.armature * jt.qdd
            + (joint_spring(p.stiffness, p.springref, q_j) if spring else 0)
            for t, p, jt, q_j in zip(tau, par, geo, q, strict=True)]


def floating_inverse_dynamics(
    arm: ArmData,
    ops: ScalarOps,
    base: Inertial,
    root: Motion,
    q: Sequence[Scalar],
    qd: Sequence[Scalar] | None,
    qdd: Sequence[Scalar] | None,
    *,
    friction: bool = True,
    group: bool = True,
) -> list[Scalar]:
    """tau of a tree on a floating base (6 + n entries): the wrench on the base, force then moment about its
    origin, in its frame (Pinocchio's ``rnea`` rows of a ``JointModelFreeFlyer`` root, whose motion subspace is the
    identity in the base frame), then the joints' (:func:`inverse_dynamics`' recursion unchanged).

    ``base``: the base body's parameters (:func:`robodyn.recursions.arm.floating_arm_data`); ``root``: its motion
    (w, wd, vd: the angular velocity and acceleration and the classical acceleration of its origin, in its frame),
    gravity in vd as the base's upward acceleration -R^T g (:mod:`robodyn.program.floating` makes it from the
    twist). The base's wrench is its own Newton-Euler wrench plus those of the links on it, carried into its frame:
    the composite wrench at the root. ``friction``, ``group`` as :func:`inverse_dynamics` (the links on the base
    regroup into the base body, :func:`~robodyn.recursions.composite.floating_parameters`)."""
    geo = joints(arm, ops, q, qd, qdd)
    par, base_par = floating_parameters(arm, ops, base, group)
    motion = forward(geo, arm.parents, ZERO3, root=root)
    total = backward(geo, arm.parents, [link_wrench(p, m) for p, m in zip(par, motion, strict=True)])
    f, n = link_wrench(base_par, root)
    for j in range(arm.n):
        if arm.parents[j] < 0:
            carried = carry_wrench(geo[j], *total[j])
            f, n = vadd(f, carried[0]), vadd(n, carried[1])
    tau = [joint_force(jt, w) for jt, w in zip(geo, total, strict=True)]
    if friction:
        tau = joint_terms(ops, tau, par, geo, q)
    return [*f, *n, *tau]

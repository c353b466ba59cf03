"""Recursive Newton-Euler in link frames (Luh, Walker and Paul; Fu et al. table 3.3).

Every vector of link i is expressed in link frame i. The joint axis e_i and the point
J_i on it are read from the split link transform A_i = B_i S_i(q_i) C_i of
:mod:`robodyn.model.dh`, so the same recursion serves both DH conventions:

- standard DH: J_i = O_{i-1}, e_i = iR_{i-1} z_0 and r_i = iR_0 p_i* = (a_i, d_i s(alpha_i), d_i c(alpha_i))
  (Fu eq. 3.3-59): the recursion below *is* Fu's table 3.3;
- modified DH: J_i = O_i on the joint axis, e_i = z and r_i = 0 for a revolute joint (Craig).

Gravity enters as Fu's trick, the base accelerating by -gravity (eq. 3.3-46); it lives
here only. Moments are accumulated about the frame origin O_i and moved to the joint
point J_i when the joint torque is projected (eq. 3.3-45).

Trees: link i's motion propagates from link parents[i] (i - 1 in Fu) and its force and moment
are added into parents[i]'s; the tip load acts on the last link.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import symengine as se

from robodyn.algebra import SeExpr, cross, dot, to_se, vector, zeros
from robodyn.model.dh import JointFrames, chain_frames, rotation, translation
from robodyn.model.manipulator import Manipulator

Z = vector([0, 0, 1])


@dataclass(frozen=True)
class LinkGeometry:
    """What the recursion needs of link i, all in frame i-1 or i as named."""

    R: se.DenseMatrix  # i-1 R_i
    Rt: se.DenseMatrix  # i R_{i-1}
    p: se.DenseMatrix  # O_i in frame i-1 (Fu's p_i* in frame i-1)
    p_joint: se.DenseMatrix  # J_i, a point of the joint axis, in frame i-1
    r: se.DenseMatrix  # O_i - J_i in frame i
    e: se.DenseMatrix  # joint axis in frame i
    revolute: bool


def link_geometry(frames: JointFrames) -> LinkGeometry:
    A = frames.A
    R = rotation(A)
    Rt = R.T
    p = translation(A)
    p_joint = translation(frames.B)
    return LinkGeometry(
        R=R,
        Rt=Rt,
        p=p,
        p_joint=p_joint,
        r=Rt * (p - p_joint),
        e=Rt * (rotation(frames.B) * Z),
        revolute=frames.revolute,
    )


@dataclass(frozen=True)
class Motion:
    """omega_i, omegadot_i and vdot_i (the acceleration of O_i), in frame i."""

    omega: se.DenseMatrix
    omega_dot: se.DenseMatrix
    v_dot: se.DenseMatrix


def link_motion(geo: LinkGeometry, parent: Motion, qd: SeExpr, qdd: SeExpr) -> Motion:
    """Link i's motion from its parent's (Fu eq. 3.3-28, 3.3-29, 3.3-35; link i-1 of a chain)."""
    omega, omega_dot, v_dot = parent.omega, parent.omega_dot, parent.v_dot
    # acceleration of J_i, a point fixed in the parent (vanishes to Rt vdot for standard DH)
    a_joint = geo.Rt * (v_dot + cross(omega_dot, geo.p_joint) + cross(omega, cross(omega, geo.p_joint)))
    w_prev = geo.Rt * omega
    if geo.revolute:
        omega = w_prev + geo.e * qd  # eq. 3.3-28
        omega_dot = geo.Rt * omega_dot + cross(w_prev, geo.e * qd) + geo.e * qdd  # eq. 3.3-29
        v_dot = a_joint + cross(omega_dot, geo.r) + cross(omega, cross(omega, geo.r))  # eq. 3.3-35
    else:
        omega = w_prev
        omega_dot = geo.Rt * omega_dot
        v_dot = (
            a_joint
            + cross(omega_dot, geo.r)
            + cross(omega, cross(omega, geo.r))
            + 2 * cross(omega, geo.e * qd)
            + geo.e * qdd
        )
    return Motion(omega, omega_dot, v_dot)


def link_wrench(robot: Manipulator, i: int, motion: Motion) -> tuple[se.DenseMatrix, se.DenseMatrix]:
    """F_i and N_i of the bodies of link i, the moment about O_i (Fu eq. 3.3-36, 3.3-37, 3.3-39)."""
    omega, omega_dot = motion.omega, motion.omega_dot
    F_i, N_i = zeros(3), zeros(3)
    for body in robot.bodies(i):
        m, c, inertia = to_se(body.mass), vector(body.com), se.DenseMatrix(body.inertia.tolist())
        a_com = cross(omega_dot, c) + cross(omega, cross(omega, c)) + motion.v_dot  # eq. 3.3-39
        F_b = a_com * m  # eq. 3.3-36
        N_b = inertia * omega_dot + cross(omega, inertia * omega)  # eq. 3.3-37
        F_i += F_b
        N_i += N_b + cross(c, F_b)  # moment about O_i
    return F_i, N_i


def inverse_dynamics(
    robot: Manipulator,
    q: Sequence[SeExpr],
    qd: Sequence[SeExpr],
    qdd: Sequence[SeExpr],
    gravity: Sequence[SeExpr],
    tip_force: Sequence[SeExpr],
    tip_moment: Sequence[SeExpr],
    progress: Callable[[str], None] | None = None,
) -> list[SeExpr]:
    """tau_i = e_i . n_i + b_i qd_i (+ armature qdd_i), Fu table 3.3, as symengine expressions."""
    n = robot.n
    parents = robot.parents
    geometry = [link_geometry(f) for f in chain_frames(robot, list(q))]
    base = Motion(zeros(3), zeros(3), -vector(gravity))  # Fu eq. 3.3-46: vdot_0 = -gravity (accelerating upwards)
    motions: list[Motion] = []
    forces: list[se.DenseMatrix] = []
    moments: list[se.DenseMatrix] = []
    for i, geo in enumerate(geometry):
        motion = link_motion(geo, motions[parents[i]] if parents[i] >= 0 else base, qd[i], qdd[i])
        motions.append(motion)
        F_i, N_i = link_wrench(robot, i, motion)
        forces.append(F_i)
        moments.append(N_i)
        if progress:
            progress(f"forward recursion, link {i + 1}")

    # Fu's f_{n+1}, n_{n+1} (in frame n, about O_n): the tip load acts on the last link
    f: list[se.DenseMatrix] = [zeros(3) for _ in range(n - 1)] + [vector(tip_force)]
    nn: list[se.DenseMatrix] = [zeros(3) for _ in range(n - 1)] + [vector(tip_moment)]
    tau: list[SeExpr] = [se.Integer(0)] * n
    for i in reversed(range(n)):
        geo, link = geometry[i], robot.links[i]
        nn[i] = nn[i] + moments[i]  # eq. 3.3-44, about O_i (the children's share added below)
        f[i] = f[i] + forces[i]  # eq. 3.3-43
        torque = dot(geo.e, nn[i] + cross(geo.r, f[i])) if geo.revolute else dot(geo.e, f[i])
        tau[i] = torque + to_se(link.damping) * qd[i] + to_se(link.armature) * qdd[i]  # eq. 3.3-45
        if parents[i] >= 0:  # link i pushes on its parent: f_i, n_i moved into frame parents[i], about its origin
            f_out = geo.R * f[i]
            f[parents[i]] = f[parents[i]] + f_out
            nn[parents[i]] = nn[parents[i]] + geo.R * nn[i] + cross(geo.p, f_out)
        if progress:
            progress(f"backward recursion, link {i + 1}")
    return tau

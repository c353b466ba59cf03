"""Compile a :class:`~robodyn.model.manipulator.Manipulator` into NumPy arrays, once.

The numeric engine works in *joint frames*: joint i moves about/along its z axis and its origin lies on
the axis (Featherstone's convention, and Pinocchio's). They are the frames of :mod:`robodyn.recursions.arm`,
read from its :func:`~robodyn.recursions.arm.arm_data` exactly and only then turned into floats, so the
engine and every recursion share one description of the arm. In the split A_i = B_i S_i(q_i) C_i of
:mod:`robodyn.model.dh` (joint screw S_i = Rot(z, theta_i) Trans(z, d_i), a fixed ``placement`` P_i in B_i),
joint frame i is the frame after B_i S_i; seen from the joint frame of its parent lambda(i) (``parent[i]``:
i - 1 on a chain, any earlier link on a tree) it is

    K_i S_i(q_i),   K_i = C_lambda(i) B_i   (C_{-1} = I: joint frame -1 is the base frame),

which is the modified-DH row (a standard-DH arm has B_i = I, and C_lambda(i) = Trans(x, a) Rot(x, alpha) of
the parent's row is the modified row's own). Link frame i is joint frame i times C_i: the inertial data and
the tip load come already moved into joint frames.

A body is stored as the three inertial parameters of its spatial inertia about the joint frame origin:
mass m, first moment h = m c and rotational inertia I_o about the origin (Khalil's M, MS and J, as
:func:`arm_data` hands them to :mod:`robodyn.recursions`).

Compiling may use sympy (to turn parameters into floats); evaluating never does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
import sympy

from robodyn.errors import ModelError
from robodyn.model.cache import PerRobotCache
from robodyn.model.floats import Floats, Params, bound_floats
from robodyn.model.inertia import check_inertia
from robodyn.model.manipulator import Manipulator, RigidBody
from robodyn.model.params import symbol_values
from robodyn.model.structure import PROJECTED, TREE
from robodyn.numeric.fourbars import bars
from robodyn.numeric.hotpath import HotPath
from robodyn.recursions.arm import ArmData, Inertial, JointData
from robodyn.recursions.arm import arm_data as recursions_arm


@dataclass(frozen=True, eq=False)
class NumericModel:
    """A manipulator as flat float arrays (see the module docstring for the frames).

    Per joint i (0-based): ``revolute[i]``, the joint offsets ``theta0[i]``, ``d0[i]`` (the variable adds
    to theta for R, to d for P), the placement K_i as rotation ``E[i]`` (3x3) and translation ``p[i]``,
    ``parent[i]`` the link it hangs on (-1 the base; i - 1 on a chain),
    the inertia of every body moving with link i in joint frame i as ``mass[i]``, ``first_moment[i]``
    (m c) and ``inertia_origin[i]`` (about the joint frame origin), ``damping[i]``, ``armature[i]``, the Coulomb
    friction's (odd, even) parts ``coulomb[i]`` (:attr:`~robodyn.model.manipulator.Link.coulomb_parts`) and the
    joint spring's ``stiffness[i]`` and ``springref[i]`` (tau_i gets stiffness (q_i - springref)).
    ``gravity`` is the acceleration of gravity in the base frame; ``tip_force``/``tip_moment`` the load
    the last link exerts on the environment, moved to joint frame n-1 (moment about its origin).
    """

    name: str
    revolute: np.ndarray
    theta0: np.ndarray
    d0: np.ndarray
    E: np.ndarray
    p: np.ndarray
    mass: np.ndarray
    first_moment: np.ndarray
    inertia_origin: np.ndarray
    damping: np.ndarray
    armature: np.ndarray
    coulomb: np.ndarray
    stiffness: np.ndarray
    springref: np.ndarray
    gravity: np.ndarray
    tip_force: np.ndarray
    tip_moment: np.ndarray
    parent: tuple[int, ...]
    #: The linear couplings q_tree = coupling q + coupling_offset (n x nv and n; None: no couplings), applied by
    #: :mod:`robodyn.numeric.couplings`; the arrays above are the tree's.
    coupling: np.ndarray | None = None
    coupling_offset: np.ndarray | None = None
    #: The four-bars' closed forms (:class:`robodyn.numeric.couplings.Bar`; their joints' rows of ``coupling`` are
    #: zero): the map is then nonlinear, q_tree = g(q).
    bars: tuple[Any, ...] = ()
    #: Its one-state calls, counted until compiled routines take them over (:mod:`robodyn.numeric.hotpath`).
    hot: HotPath = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hot", HotPath())

    @property
    def n(self) -> int:
        """Number of joints."""
        return len(self.revolute)

    @property
    def nv(self) -> int:
        """Number of independent coordinates (``n`` without couplings)."""
        return self.n if self.coupling is None else self.coupling.shape[1]

    @property
    def kind(self) -> str:
        """The structure it describes (:mod:`robodyn.model.structure`): a tree, or a tree projected through its
        couplings."""
        return TREE if self.coupling is None else PROJECTED

    @cached_property
    def tree(self) -> NumericModel:
        """The model without its couplings: the tree's joints, each independent (itself when it has none)."""
        return self if self.coupling is None else replace(self, coupling=None, coupling_offset=None, bars=())

    @property
    def has_tip_load(self) -> bool:
        return bool(np.any(self.tip_force) or np.any(self.tip_moment))


# -- as the recursions read it -------------------------------------------------------------------

#: Entries of the placements within this of 0 or +-1 are taken as exact (cos(pi/2) = 6e-17).
SNAP = 1e-15
#: Entries of a body's m c or I_o this far below the largest of theirs are rounding noise, taken as 0.
NOISE = 1e-14


def snapped(A: Any) -> np.ndarray:
    """``A`` (floats) with entries within :data:`SNAP` of 0, 1 or -1 set to them exactly."""
    A = np.array(A, dtype=float)
    for target in (0.0, 1.0, -1.0):
        A[np.abs(A - target) < SNAP] = target
    return A


def _denoised(A: np.ndarray) -> np.ndarray:
    A = np.array(A, dtype=float)
    A[np.abs(A) < NOISE * np.abs(A).max(initial=0.0)] = 0.0
    return A


def _floats(A: np.ndarray) -> tuple:
    """A NumPy vector or matrix as nested tuples of Python floats."""
    return tuple(_floats(row) for row in A) if A.ndim > 1 else tuple(float(x) for x in A)


def arm_data(model: NumericModel) -> ArmData:
    """The model as :mod:`robodyn.recursions` read it (:class:`~robodyn.recursions.arm.ArmData`, in floats).

    Joint frame i is the recursions' frame i: its placement K_i = (E_i, p_i) followed by Rot(z, theta_i)
    Trans(z, d_i) is R_i = F_i Rot(z, theta_i), P_i = p_i + F_i z d_i with F_i = E_i (module docstring);
    m, m c and I_o (about the joint frame origin) are Khalil's M_j, MS_j and J_j; gravity is in the base
    frame, the tip load in joint frame n-1 about its origin, as the recursions take them. The entries of
    E_i, p_i within :data:`SNAP` of 0 or +-1 are snapped to them and the rounding noise of m c and I_o
    (:data:`NOISE`) is zeroed, so that the exact zeros and ones fold away where the recursions are traced
    (:mod:`robodyn.numeric._codegen`): relative changes of 1e-16 and 1e-14 at most.
    """
    joints = tuple(
        JointData(revolute=bool(model.revolute[i]), F=_floats(snapped(model.E[i])), p=_floats(snapped(model.p[i])),
                  theta=float(model.theta0[i]), d=float(model.d0[i]))
        for i in range(model.n)
    )
    inertials = tuple(
        Inertial(J=_floats(_denoised(model.inertia_origin[i])), MS=_floats(_denoised(model.first_moment[i])),
                 M=float(model.mass[i]), damping=float(model.damping[i]), armature=float(model.armature[i]),
                 coulomb=(float(model.coulomb[i][0]), float(model.coulomb[i][1])),
                 stiffness=float(model.stiffness[i]), springref=float(model.springref[i]))
        for i in range(model.n)
    )
    return ArmData(joints=joints, inertials=inertials, parents=tuple(model.parent),
                   gravity=_floats(model.gravity), tip_force=_floats(model.tip_force),
                   tip_moment=_floats(model.tip_moment))


# -- checking bound bodies (floats under a binding: :mod:`robodyn.model.floats`) ---------------------------


def check_bound_bodies(robot: Manipulator, floats: Floats, *, skip_unbound: bool = False) -> None:
    """Mass and inertia of every body whose mass or inertia has parameters, with their bound values: the
    checks of :func:`robodyn.model.inertia.check_inertia` (errors only; a body given in numbers was checked,
    and warned about, when the robot was built). One :class:`ModelError` naming the link and the field.
    ``skip_unbound``: leave out the bodies with a symbol that ``floats`` does not bind."""
    for k, link in enumerate(robot.links, start=1):
        bodies: list[tuple[int | str, RigidBody]] = [(k, link)]
        if k == robot.n and robot.payload is not None:
            bodies.append(("payload", robot.payload))
        for where, body in bodies:
            symbols = sympy.sympify(body.mass).free_symbols | sympy.ImmutableMatrix(body.inertia).free_symbols
            if not symbols or (skip_unbound and not symbols <= floats.mapping.keys()):
                continue
            try:
                mass = floats.scalar(body.mass)
                if mass < 0:
                    raise ModelError(f"mass {mass:.6g} is negative", field="mass")
                check_inertia(floats.array(body.inertia, (3, 3)), mass=mass, warn=False)
            except ModelError as exc:
                raise ModelError(f"{exc.problem} with the parameter values given", link=where,
                                 field=exc.field) from None


class FloatingBaseError(ModelError):
    """A floating robot, or one with a spherical or planar joint, which no :class:`NumericModel` describes (the public
    functions of :mod:`robodyn.numeric.api` hand it to :mod:`robodyn.numeric.floating`, by their table of engines)."""


class ImplicitLoopError(ModelError):
    """A robot with implicit loops, which no :class:`NumericModel` describes (the public functions of
    :mod:`robodyn.numeric.api` hand it to :mod:`robodyn.numeric.closed_chains`, by their table of engines)."""


def build(robot: Manipulator, params: Params | None = None, *, check_bodies: bool = True) -> NumericModel:
    """Compile ``robot`` (with ``params`` bound) into a :class:`NumericModel`; no caching, see :func:`compile_model`.
    ``check_bodies=False`` skips :func:`check_bound_bodies` (for placeholder values, as the regressor's)."""
    if not isinstance(robot, Manipulator):
        raise TypeError(f"expected a Manipulator, got {type(robot).__name__}")
    if robot.floating:
        raise FloatingBaseError(f"{robot.name}: floating base: robodyn.numeric handles it in inverse_dynamics, "
                                "mass_matrix, bias_forces, coriolis, gravity, forward_dynamics and "
                                "robodyn.numeric.floating so far")
    if robot.multi_dof:
        kind = robot.links[robot.multi_dof[0]].kind
        raise FloatingBaseError(f"{robot.name}: link {robot.label(robot.multi_dof[0])!r} has a {kind} joint: "
                                "robodyn.numeric handles it in inverse_dynamics, mass_matrix, bias_forces, coriolis, "
                                "gravity and forward_dynamics, "
                                "and rd.compile's programs (not in base parameters) so far")
    if robot.implicit:
        raise ImplicitLoopError(f"{robot.name}: implicit loop {robot.implicit[0]!r}: robodyn.numeric.closed_chains "
                                "handles it")
    floats = bound_floats(robot, params)
    if check_bodies:
        check_bound_bodies(robot, floats)
    arm = recursions_arm(robot)  # the one description of the arm (recursions.arm), exact; then floats
    joints, bodies = arm.joints, arm.inertials

    def array(values: Iterable[Any], shape: tuple[int, ...]) -> np.ndarray:
        return floats.array(values, (len(joints), *shape))

    return NumericModel(
        name=robot.name,
        revolute=np.array([j.revolute for j in joints]),
        theta0=array((j.theta for j in joints), ()),
        d0=array((j.d for j in joints), ()),
        E=array((x for j in joints for row in j.F for x in row), (3, 3)),
        p=array((x for j in joints for x in j.p), (3,)),
        mass=array((b.M for b in bodies), ()),
        first_moment=array((x for b in bodies for x in b.MS), (3,)),
        inertia_origin=array((x for b in bodies for row in b.J for x in row), (3, 3)),
        damping=array((b.damping for b in bodies), ()),
        armature=array((b.armature for b in bodies), ()),
        coulomb=array((x for b in bodies for x in b.coulomb), (2,)),
        stiffness=array((b.stiffness for b in bodies), ()),
        springref=array((b.springref for b in bodies), ()),
        gravity=floats.array(arm.gravity, (3,)),
        tip_force=floats.array(arm.tip_force, (3,)),
        tip_moment=floats.array(arm.tip_moment, (3,)),
        parent=arm.parents,
        **_coupling_arrays(robot, floats),
    )


def _coupling_arrays(robot: Manipulator, floats: Floats) -> dict[str, Any]:
    """``coupling`` (G) and ``coupling_offset`` (c) of a robot with couplings, bound to floats."""
    if not robot.couplings:
        return {}
    closure = robot.closure_map()
    G, c = closure.G, closure.c
    out = {"coupling": floats.array(G, (robot.n, robot.nv)), "coupling_offset": floats.array(c, (robot.n,))}
    return {**out, "bars": bars(robot, floats.mapping)} if closure.bars else out


# -- the cache ------------------------------------------------------------------------------------

#: Parameter bindings remembered per robot (oldest dropped first).
CACHE_PER_ROBOT = 16
_CACHE: PerRobotCache[NumericModel] = PerRobotCache(CACHE_PER_ROBOT)


def _params_key(params: Params | None) -> tuple[tuple[str, float], ...]:
    if not params:  # (the common call, kept quick: half a microsecond of a one-state call otherwise)
        return ()
    return tuple(sorted((str(k), float(v)) for k, v in symbol_values(params).items()))


def compile_model(robot: Manipulator | NumericModel, params: Params | None = None) -> NumericModel:
    """The :class:`NumericModel` of ``robot`` with ``params`` bound, compiled once and cached.

    The cache is keyed by the robot's identity (robots are immutable) and the parameter values, holds
    at most :data:`CACHE_PER_ROBOT` bindings per robot and forgets a robot when it is garbage collected.
    A :class:`NumericModel` passes through unchanged (``params`` must then be None).
    Raises :class:`~robodyn.errors.ModelError` naming any free symbol that ``params`` leaves unbound.
    """
    if isinstance(robot, NumericModel):
        if params:
            raise ValueError("params cannot be applied to an already compiled NumericModel")
        return robot
    return _CACHE.get(robot, _params_key(params), lambda: build(robot, params))

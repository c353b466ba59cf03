"""Interoperability: a robodyn manipulator as a `Pinocchio <https://github.com/stack-of-tasks/pinocchio>`_ model,
and back; its straight-line program as a `CasADi <https://web.casadi.org>`_ function.

    from robodyn.interop import to_casadi
    f = to_casadi(rd.load("double_pendulum"), ("forward",))   # casadi.Function: (q, qd, tau, params) -> qdd

    from robodyn.interop import from_pinocchio, to_pinocchio
    model = to_pinocchio(rd.load("puma560"))          # pinocchio.Model; symbolic arms need params={...}
    data = model.createData()
    pinocchio.rnea(model, data, q, qd, qdd)           # = robodyn.numeric.inverse_dynamics(...) - damping qd
    robot = from_pinocchio(pinocchio.buildModelFromUrdf("panda.urdf"))   # rd.from_pinocchio(model) too
    robot = from_toolbox(roboticstoolbox.models.DH.Puma560())           # rd.from_toolbox(dhrobot) too

:func:`from_pinocchio` reads a fixed-base model whose joints are revolute or prismatic about any axis (RX, RY, RZ,
the unaligned ones, and the continuous RUBX/RUBY/RUBZ as a revolute joint of angle q): each joint's placement in
its parent's frame, its axis, the inertia of its body, its armature and damping (``model.armature``,
``model.damping``), and the gravity; a free-flyer, spherical, planar or composite joint, and a mimic joint, are
refused in one line. Joint i of the Manipulator is Pinocchio's joint i + 1 (the universe, joint 0, is the base),
so q is the same vector for a model without continuous joints (a continuous joint: Pinocchio's (cos q, sin q)).

:func:`from_toolbox` reads a Robotics Toolbox for Python ``DHRobot`` (by its attributes; the Toolbox itself is not
imported): standard or modified DH (``mdh``), each link's ``a``, ``alpha``, ``d``, ``theta``, ``offset`` (added to
q: theta for a revolute joint, d for a prismatic one), ``m``, ``r`` and ``I`` (the centre of mass and the inertia
about it, in the link's frame, as robodyn's), the motor data as joint-side terms (armature G^2 Jm, viscous damping
G^2 B, Coulomb friction ``|G| [Tc+, Tc-]``, a scalar Tc meaning [Tc, -Tc]), and the gravity, turned into the base frame
when ``base`` rotates it; ``flip`` (a joint moving the other way) is refused in one line, and so is a non-DH robot
(an ``ERobot``).

:func:`to_casadi` writes the program of :func:`robodyn.program.build` (the cheapest one robodyn finds, common
subexpressions shared) statement by statement as CasADi SX expressions: the function has the program's
operations, not those of the expanded equations (for the PUMA's tau, some 300 against tens of thousands by a
lambdify of the expanded torques). CasADi is imported only when it is called (``pip install 'robodyn[casadi]'``).

The model is built from the DH table alone (not from robodyn's compiled arrays, so that comparing the two is a
real check): link i's transform A_i = P_i B_i Rot(z, theta_i) Trans(z, d_i) C_i (:mod:`robodyn.model.dh`:
standard DH B = I, C = Trans(x, a) Rot(x, alpha); modified DH B = Rot(x, alpha) Trans(x, a), C = I; P_i the
optional fixed placement) becomes a joint placement C_p P_i B_i Rot(z, theta0_i) Trans(z, d0_i) (p the link's
parent, :attr:`~robodyn.Manipulator.parents`: trees too) followed by a revolute (RZ) or prismatic (PZ) joint;
Pinocchio needs each subtree's joints consecutive, so the joints are added in
:meth:`~robodyn.Manipulator.depth_first` order: Pinocchio's q[k] is the robot's q[robot.depth_first()[k]] (the same
order for a chain and for a tree listed depth first, as URDF imports and tests/data/torso_two_arms.yaml are);
link i's inertia, given in link frame i, is moved onto the joint frame by C_i, and a payload is appended to the
last joint's body.

Conventions: Pinocchio's ``model.gravity`` is the acceleration of gravity, like robodyn's. The armature goes
into ``model.armature`` (Pinocchio adds it to the diagonal of M in crba and aba, and armature * qdd to rnea);
the viscous ``damping`` goes into ``model.damping``, which Pinocchio's rnea/aba do *not* apply: add
``damping * qd`` yourself. The tip load has no place in a Pinocchio model (pass it as an external force).
Pinocchio is imported only when called; without it, :class:`ImportError` says how to install it.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import symengine as se

from robodyn.codegen.spec import product_power
from robodyn.errors import ModelError
from robodyn.model.expr import to_identifier
from robodyn.model.link import Link
from robodyn.model.manipulator import Manipulator, RigidBody
from robodyn.numeric.model import bound_floats, joint_screw, link_transforms
from robodyn.program import build
from robodyn.urdf import Body, JointFrame, manipulator_from_frames


def _casadi() -> Any:
    try:
        import casadi
    except ImportError:  # pragma: no cover - exercised only without casadi
        raise ImportError("robodyn.interop.to_casadi needs CasADi: pip install 'robodyn[casadi]'") from None
    return casadi


def _pinocchio() -> Any:
    try:
        import pinocchio
    except ImportError:  # pragma: no cover - exercised only without pinocchio
        raise ImportError("robodyn.interop.to_pinocchio needs Pinocchio: pip install pin") from None
    return pinocchio


def to_pinocchio(robot: Manipulator, params: Mapping[Any, Any] | None = None) -> Any:
    """A ``pinocchio.Model`` of ``robot`` (numeric, or with its symbols bound by ``params``); see the module
    docstring for the frames and for what Pinocchio leaves out (damping, tip load)."""
    pin = _pinocchio()
    if not isinstance(robot, Manipulator):
        raise TypeError(f"to_pinocchio() expects a Manipulator, got {type(robot).__name__}")
    floats = bound_floats(robot, params)

    def se3(T: np.ndarray) -> Any:
        return pin.SE3(np.ascontiguousarray(T[:3, :3]), np.ascontiguousarray(T[:3, 3]))

    def inertia(body: RigidBody) -> Any:
        out = pin.Inertia.Zero()  # not pin.Inertia(m, c, I): it refuses the rounding noise robodyn accepts (iCub)
        out.mass, out.lever, out.inertia = (floats.scalar(body.mass), floats.array(body.com, (3,)),
                                            floats.array(body.inertia, (3, 3)))
        return out

    model = pin.Model()
    model.name = robot.name
    model.gravity = pin.Motion(floats.array(robot.gravity, (3,)), np.zeros(3))
    C_of: dict[int, Any] = {}  # per link: its frame (a pin.SE3)
    armature, damping, joint_of = [], [], {-1: 0}  # joint_of: link -> Pinocchio's joint id
    for i in robot.depth_first():
        link = robot.links[i]
        B, C = map(se3, link_transforms(floats, robot.convention, link))
        joint = pin.JointModelRZ() if link.revolute else pin.JointModelPZ()
        p = robot.parents[i]
        C_parent = C_of[p] if p >= 0 else pin.SE3.Identity()
        joint_of[i] = model.addJoint(joint_of[p], joint, C_parent * B * se3(joint_screw(floats, link)),
                                     link.name or f"joint{i + 1}")
        for body in robot.bodies(i):
            model.appendBodyToJoint(joint_of[i], C.act(inertia(body)), pin.SE3.Identity())
        armature.append(floats.scalar(link.armature))
        damping.append(floats.scalar(link.damping))
        C_of[i] = C
    model.armature = np.array(armature)
    model.damping = np.array(damping)
    return model


#: Pinocchio's joint kinds that robodyn reads: (prismatic, axis) of each, None for an axis the joint carries.
_JOINT_KINDS: dict[str, tuple[bool, tuple[float, float, float] | None]] = {
    "JointModelRX": (False, (1.0, 0.0, 0.0)), "JointModelRY": (False, (0.0, 1.0, 0.0)),
    "JointModelRZ": (False, (0.0, 0.0, 1.0)), "JointModelRevoluteUnaligned": (False, None),
    "JointModelRUBX": (False, (1.0, 0.0, 0.0)), "JointModelRUBY": (False, (0.0, 1.0, 0.0)),
    "JointModelRUBZ": (False, (0.0, 0.0, 1.0)), "JointModelRevoluteUnboundedUnaligned": (False, None),
    "JointModelPX": (True, (1.0, 0.0, 0.0)), "JointModelPY": (True, (0.0, 1.0, 0.0)),
    "JointModelPZ": (True, (0.0, 0.0, 1.0)), "JointModelPrismaticUnaligned": (True, None),
}


def from_pinocchio(model: Any, *, name: str | None = None, snap: bool = True, strict: bool = False) -> Manipulator:
    """The Manipulator of a fixed-base ``pinocchio.Model`` (see the module docstring): a chain or a tree, in
    modified DH with placements where a joint frame has no DH form (as :func:`robodyn.load` reads a URDF: angles
    within 1e-9 of a multiple of pi/2 and lengths below 1e-12 snapped, unless ``snap=False``)."""
    pin = _pinocchio()
    if not isinstance(model, pin.Model):
        raise TypeError(f"from_pinocchio() expects a pinocchio.Model, got {type(model).__name__}")
    shown = f"<pinocchio model {model.name!r}>"
    frames = []
    for j in range(1, model.njoints):
        joint = model.joints[j]
        where = f"joint '{model.names[j]}'"
        kind = _JOINT_KINDS.get(joint.shortname())
        if kind is None or joint.nv != 1:
            raise ModelError(f"a {joint.shortname()} joint: robodyn reads fixed-base arms whose joints are revolute or "
                             "prismatic (one degree of freedom each)", file=shown, link=where, field="joint")
        if j in set(getattr(model, "mimicking_joints", ())):
            raise ModelError("a mimic joint: read the model without the mimic relation", file=shown, link=where,
                             field="mimic")
        prismatic, axis = kind
        inertia = model.inertias[j]
        v = joint.idx_v
        frames.append(JointFrame(
            name=model.names[j], prismatic=prismatic, where=where, parent=model.parents[j] - 1,
            axis=np.array(axis if axis is not None else joint.extract().axis, dtype=float),
            origin=np.array(model.jointPlacements[j].homogeneous, dtype=float),
            body=Body.from_com(float(inertia.mass), np.array(inertia.lever), np.array(inertia.inertia)),
            damping=float(model.damping[v]), armature=float(model.armature[v])))
    if not frames:
        raise ModelError("no moving joint", file=shown)
    return manipulator_from_frames(frames, name=name or model.name or "pinocchio_model",
                                   gravity=[float(x) for x in model.gravity.linear], snap=snap, strict=strict,
                                   shown=shown, description=f"imported from the Pinocchio model {model.name!r} "
                                                            f"({len(frames)} joints)")


#: The order of a CasADi function's inputs (those the outputs use).
CASADI_INPUTS = ("q", "qd", "qdd", "tau", "parameters")


def to_casadi(robot: Manipulator, outputs: Sequence[str] = ("tau",), *, name: str | None = None) -> Any:
    """A ``casadi.Function`` computing ``outputs`` (names of :data:`robodyn.program.OUTPUTS` but ``elements``:
    ``tau``, ``M``, ``h``, ``G``, ``bias``, ``forward``, ``dtau_dq``, ...) of ``robot``, built from its program
    (see the module docstring). Inputs, in :data:`CASADI_INPUTS` order, those the outputs need: ``q``, ``qd``,
    ``qdd``, ``tau`` (n x 1 each) and ``parameters`` (the robot's symbols in
    :meth:`~robodyn.Manipulator.parameters` order; absent for a numeric robot). Outputs: n x 1, or n x n for ``M``
    and the derivatives ([i, j] = d out_i / d in_j), named as asked (``tau_out`` where ``tau`` is also an input)."""
    ca = _casadi()
    if "elements" in outputs:
        raise ValueError("to_casadi gives the dynamics and their derivatives; 'elements' is EMDEG's listing")
    program = build(robot, tuple(outputs))
    n = robot.n
    symbols = {key: ca.SX.sym(key, len(program.inputs[key])) for key in CASADI_INPUTS
               if program.inputs.get(key)}
    env: dict[Any, Any] = {}
    for key, column in symbols.items():
        env.update({s: column[i] for i, s in enumerate(program.inputs[key])})
    for a in [*program.constants, *program.body]:
        env[se.Symbol(a.name)] = _to_sx(ca, a.expr, env)
    results = []
    for output in outputs:
        entries = [_to_sx(ca, x, env) for x in program.outputs[output]]
        rows = [entries[i * n : (i + 1) * n] for i in range(n)] if len(entries) == n * n else [[e] for e in entries]
        results.append(ca.vertcat(*[ca.horzcat(*row) for row in rows]))
    used = [key for key in CASADI_INPUTS if key in symbols and any(
        ca.depends_on(r, symbols[key]) for r in results)]
    names = [f"{o}_out" if o in used else o for o in outputs]  # CasADi names inputs and outputs apart
    return ca.Function(name or f"{robot.name}_{'_'.join(outputs)}", [symbols[key] for key in used], results,
                       used, names)


def _to_sx(ca: Any, expr: Any, env: dict[Any, Any]) -> Any:
    """A symengine expression of the program as a CasADi SX expression, over ``env`` (symbol -> SX)."""
    if expr.is_Symbol:
        return env[expr]
    if expr.is_Number:
        return float(expr)
    args = [_to_sx(ca, a, env) for a in expr.args]
    if isinstance(expr, se.Add):
        return functools.reduce(operator.add, args)
    if isinstance(expr, se.Mul):
        return functools.reduce(operator.mul, args)
    if isinstance(expr, se.Pow):
        base, exponent = args
        k = product_power(*expr.args)  # x*x*x, as the generated code writes it
        if k:
            product = functools.reduce(operator.mul, [base] * abs(k))
            return product if k > 0 else 1 / product
        return base**exponent
    function = {"sin": ca.sin, "cos": ca.cos, "sqrt": ca.sqrt, "sign": ca.sign}.get(type(expr).__name__)
    if function is None:
        raise ValueError(f"cannot write {type(expr).__name__}() as CasADi")
    return function(*args)


def from_toolbox(dhrobot: Any, *, name: str | None = None, strict: bool = False) -> Manipulator:
    """The Manipulator of a Robotics Toolbox ``DHRobot`` (see the module docstring for what is read)."""
    links = getattr(dhrobot, "links", None)
    if links is None or not hasattr(dhrobot, "mdh"):
        raise TypeError(f"from_toolbox() expects a Robotics Toolbox DHRobot, got {type(dhrobot).__name__}")
    shown = f"<toolbox robot {getattr(dhrobot, 'name', '')!r}>"
    rows = []
    for j, link in enumerate(links):
        where = f"link {j + 1}"
        if not all(hasattr(link, field) for field in ("a", "alpha", "d", "theta", "offset", "m", "r", "I")):
            raise ModelError("not a DH link (a, alpha, d, theta, offset, m, r, I)", file=shown, link=where)
        if getattr(link, "flip", False):
            raise ModelError("flip=True (the joint moves the other way) is not supported: negate its q",
                             file=shown, link=where, field="flip")
        prismatic = bool(getattr(link, "isprismatic", getattr(link, "sigma", 0) == 1))
        G = abs(float(getattr(link, "G", 1.0) or 0.0))
        Tc = np.zeros(2) if getattr(link, "Tc", None) is None else np.asarray(link.Tc, dtype=float).ravel()
        Tc = np.array([Tc[0], -Tc[0]]) if Tc.size == 1 else Tc  # RTB: a scalar Tc is [Tc, -Tc]
        offset = float(link.offset)
        try:
            rows.append(Link(
                joint="P" if prismatic else "R", a=float(link.a), alpha=float(link.alpha),
                d=offset if prismatic else float(link.d), theta=float(link.theta) if prismatic else offset,
                mass=float(link.m), com=np.asarray(link.r, dtype=float).ravel().tolist(),
                inertia=np.asarray(link.I, dtype=float).reshape(3, 3).tolist(),
                armature=G**2 * float(getattr(link, "Jm", None) or 0.0),
                damping=G**2 * float(getattr(link, "B", None) or 0.0),
                coulomb=(G * Tc).tolist(),
                name=to_identifier(str(link.name)) if getattr(link, "name", "") else ""))
        except ModelError as exc:
            raise ModelError(exc.problem, file=shown, link=where, field=exc.field) from None
    base = getattr(dhrobot, "base", None)
    R = np.asarray(getattr(base, "A", np.eye(4)), dtype=float)[:3, :3] if base is not None else np.eye(3)
    gravity = R.T @ np.asarray(getattr(dhrobot, "gravity", (0.0, 0.0, -9.81)), dtype=float)  # in the base frame
    try:
        return Manipulator(links=tuple(rows), convention="modified" if dhrobot.mdh else "standard",
                           gravity=[float(x) for x in gravity], name=to_identifier(name or dhrobot.name or "toolbox"),
                           description=f"imported from the Robotics Toolbox robot {getattr(dhrobot, 'name', '')!r}",
                           source=shown, strict=strict)
    except ModelError as exc:
        raise exc.located(file=shown) from None

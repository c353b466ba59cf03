"""Pinocchio models: a robodyn manipulator as a `Pinocchio <https://github.com/stack-of-tasks/pinocchio>`_ model, and
back.

    from robodyn.formats.pinocchio import from_pinocchio, to_pinocchio
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
``damping * qd`` yourself. The tip load has no place in a Pinocchio model (pass it as an external force), nor have
the joint springs (``stiffness``, ``springref``): they are left out with a warning (add ``stiffness * (q -
springref)`` to its tau yourself).
Pinocchio is imported only when called; without it, :class:`ImportError` says how to install it.

"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from robodyn.errors import ModelError, ModelWarning
from robodyn.formats.frames import Body, JointFrame, manipulator_from_frames
from robodyn.model.floats import bound_floats
from robodyn.model.loops import open_tree
from robodyn.model.manipulator import Manipulator, RigidBody
from robodyn.model.spatial import joint_screw, link_transforms


def _pinocchio() -> Any:
    try:
        import pinocchio
    except ImportError:  # pragma: no cover - exercised only without pinocchio
        raise ImportError("robodyn.formats.pinocchio.to_pinocchio needs Pinocchio: pip install pin") from None
    return pinocchio


def to_pinocchio(robot: Manipulator, params: Mapping[Any, Any] | None = None) -> Any:
    """A ``pinocchio.Model`` of ``robot`` (numeric, or with its symbols bound by ``params``); see the module
    docstring for the frames and for what Pinocchio leaves out (damping, tip load, springs)."""
    pin = _pinocchio()
    if not isinstance(robot, Manipulator):
        raise TypeError(f"to_pinocchio() expects a Manipulator, got {type(robot).__name__}")
    robot.check_one_dof("to_pinocchio")
    if robot.couplings:
        raise ModelError(f"{robot.name}: to_pinocchio writes no couplings; build Pinocchio's mimic model from the URDF "
                         "(buildModelFromUrdf(path, mimic=True))")
    floats = bound_floats(robot, params)
    if any(floats.scalar(link.stiffness) != 0 for link in robot.links):
        warnings.warn(f"{robot.name}: a Pinocchio model has no joint springs (stiffness); not written", ModelWarning,
                      stacklevel=2)

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


def to_pinocchio_closed(robot: Manipulator, params: Mapping[Any, Any] | None = None) -> tuple[Any, Any]:
    """A closed chain (:attr:`~robodyn.Manipulator.loops`) in Pinocchio: (the model of its tree, without the
    loops' couplings, as :func:`to_pinocchio` builds it; a ``StdVec_RigidConstraintModel`` with one constraint per
    loop between the two closing frames, each given in its joint's frame as C_k P_k). A revolute or spherical
    closing joint is a ``CONTACT_3D`` (the frames' origins coincide; a planar loop then has one redundant
    constraint, which Pinocchio's proximal solver handles), a weld a ``CONTACT_6D``; a prismatic one is refused.
    ``pinocchio.initConstraintDynamics`` and ``constraintDynamics`` take them, with the tree's q in Pinocchio's
    order (:meth:`~robodyn.Manipulator.depth_first`: its q[k] is the tree's q[robot.depth_first()[k]])."""
    pin = _pinocchio()
    tree = open_tree(robot)
    model = to_pinocchio(tree, params)
    floats = bound_floats(tree, params)
    joint = {k: i + 1 for i, k in enumerate(tree.depth_first())}
    joint[-1] = 0
    constraints = pin.StdVec_RigidConstraintModel()
    kinds = {"revolute": pin.ContactType.CONTACT_3D, "spherical": pin.ContactType.CONTACT_3D,
             "weld": pin.ContactType.CONTACT_6D}
    for loop in robot.loops:
        if loop.joint not in kinds:
            raise ModelError(f"loop {loop.name!r}: a {loop.joint} closing joint has no Pinocchio constraint",
                             field="loops")
        ends = []
        for k, placement in zip(loop.links, loop.placements, strict=True):
            C = link_transforms(floats, tree.convention, tree.links[k])[1] if k >= 0 else np.eye(4)
            T = C @ floats.array(placement, (4, 4))
            ends.extend([joint[k], pin.SE3(np.ascontiguousarray(T[:3, :3]), np.ascontiguousarray(T[:3, 3]))])
        constraints.append(pin.RigidConstraintModel(kinds[loop.joint], model, *ends, pin.ReferenceFrame.LOCAL))
    return model, constraints


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

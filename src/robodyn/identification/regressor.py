"""The linear-in-parameters form tau = Y(q, qd, qdd) p, symbolic and numeric.

Both run the one Newton-Euler recursion of :mod:`robodyn.recursions.newton_euler` (Khalil and Kleinfinger
1987; Khalil and Dombre 2002, sec. 9.5), which works in modified-DH frames. With w, wd and vd = the acceleration
of the frame origin O_j (gravity entering as the base accelerating by -g), the wrench that link j needs, about
O_j and in frame j, is linear in its ten standard parameters (:mod:`robodyn.recursions.parameters`):

    F_j = M_j vd_j + U_j MS_j,   U_j = hat(wd_j) + hat(w_j) hat(w_j)
    N_j = J_j wd_j + w_j x (J_j w_j) + MS_j x vd_j                              (Khalil and Dombre eq. 9.63)

so the column of Y for parameter k of link j holds the joint forces of the wrench of a unit parameter k
(``unit_wrenches``), carried to the base through the ancestors of link j (the backward pass,
:func:`~robodyn.recursions.composite.carry_wrench`) and projected on each joint axis
(:func:`~robodyn.recursions.newton_euler.joint_force`). Link j's columns touch only the joints of its ancestors:
on a kinematic tree (:attr:`Manipulator.parents <robodyn.model.manipulator.Manipulator.parents>`) the other
entries are exact zeros. Y is exact: tau is linear in the parameters.

The columns belong to the parameters about the link frames of the *robot's own* convention. In modified DH those
are the recursion's frames. In standard DH, link frame j is the modified frame j moved by
C_j = Trans(x, a_j) Rot(x, alpha_j), so the parameters about the modified frame are p_mod = T_j p_own with
T_j the (linear, exact) 10x10 map of :func:`~robodyn.recursions.parameters.move` (Khalil eq. 9.56), and the
columns are Y_own = Y_mod T_j. Then come the joint columns qdd_j (IA_j), qd_j (FV_j) and sign(qd_j) (FC_j).

The tip load (a known wrench, independent of every parameter) is not part of Y p: tau = Y p + load + spring, where
load is :attr:`Equations.load <robodyn.equations.Equations>` (zero for an arm without a tip load). It acts on the
last link, so on a tree only the joints between the last link and the base carry it. The joint springs k (q - q_ref)
(:attr:`Equations.spring <robodyn.equations.Equations>`, :func:`robodyn.numeric.spring`) are known torques too,
not identified: a symbolic stiffness is refused in one line.

**Coupled coordinates** (:mod:`robodyn.model.couplings`: mimic joints, gears, parallelograms, four-bars in closed
form). The reduced dynamics tau = W^T tau_tree(q_tree, qd_tree, qdd_tree) is linear in the *tree's* parameters, so

    Y = W(q)^T Y_tree(q_tree, qd_tree, qdd_tree),   q_tree = g(q), qd_tree = W qd, qdd_tree = W qdd + Wdot qd

(W = G, Wdot = 0 for linear couplings): n_v rows (the independent coordinates), still 12 columns per link of the
tree, the joint columns IA_j, FV_j of a coupled joint j included (its armature and damping act through W too).
Symbolic: the tree's Y with the tree's joint symbols replaced as :func:`robodyn.derive` replaces them; numeric:
:mod:`robodyn.numeric.couplings` maps the states and projects. Implicit loops (numeric only) are refused.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import symengine as se
import sympy

from robodyn.algebra import SeExpr, canonical, matrix_to_sympy, to_se
from robodyn.errors import ModelError
from robodyn.formulations import _coupled, _spring
from robodyn.identification import floating
from robodyn.identification.columns import check_physical, frame_change, geometry_binding, numeric_change, unit_wrenches
from robodyn.model.cache import PerRobotCache
from robodyn.model.couplings import refuse_coupled
from robodyn.model.manipulator import Manipulator
from robodyn.model.params import symbol_values
from robodyn.numeric import couplings as coupled_
from robodyn.numeric.kane import BLOCK, NumpyOps
from robodyn.numeric.model import NumericModel, build
from robodyn.recursions import newton_euler as ne
from robodyn.recursions import parameters as params_
from robodyn.recursions.arm import ArmData, Inertial, Joint, JointData, arm_data, joints
from robodyn.recursions.composite import carry_wrench
from robodyn.recursions.scalars import ScalarOps, SymengineOps
from robodyn.recursions.vec3 import Mat, Scalar, Vec
from robodyn.symbols import joint_symbols

# -- the columns, over any scalars -----------------------------------------------------------------------


def _motion(arm: ArmData, ops: ScalarOps, q: Sequence[Scalar], qd: Sequence[Scalar],
            qdd: Sequence[Scalar]) -> tuple[list[Joint], list[ne.Motion]]:
    """The joints at the state and every link's motion (the forward pass; the base accelerating by -g)."""
    geo = joints(arm, ops, q, qd, qdd)
    base_vd = tuple(-ops.number(g) for g in arm.gravity)
    return geo, ne.forward(geo, arm.parents, base_vd)


def _to_base(arm: ArmData, geo: Sequence[Joint], j: int, wrench: ne.Wrench) -> Iterator[tuple[int, Scalar]]:
    """(i, the force of joint i) for link j's wrench carried through its ancestors i = j, lambda(j), ... (the
    backward pass of :mod:`~robodyn.recursions.newton_euler` for one wrench: only the ancestors see it)."""
    for i in arm.ancestors(j):
        yield i, ne.joint_force(geo[i], wrench)
        if arm.parents[i] >= 0:
            wrench = carry_wrench(geo[i], *wrench)


def _symbolic_change(robot: Manipulator, k: int) -> se.DenseMatrix | None:
    """T_k = d p_mod / d p_own (10x10, symengine) of link k, None in modified DH."""
    change = frame_change(robot, k)
    if change is None:
        return None
    R = [[to_se(x) for x in row] for row in change[0]]
    t = [to_se(x) for x in change[1]]
    eye = np.eye(len(params_.INERTIAL), dtype=int)
    columns = [params_.move([int(x) for x in eye[:, c]], R, t) for c in range(len(params_.INERTIAL))]
    return se.DenseMatrix([[se.expand(col[r]) for col in columns] for r in range(len(params_.INERTIAL))])


# -- symbolic -------------------------------------------------------------------------------------------


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
    tree. They are moved to the modified frames of the recursion (T_j p, module docstring) and run through
    :func:`robodyn.recursions.newton_euler.inverse_dynamics`. Joint values default to the symbols q1.., qd1..,
    qdd1... Returns symengine expressions."""
    refuse_coupled(robot, "the inverse dynamics in standard parameters (identification)")
    js = joint_symbols(robot.n).symengine()
    q = list(q) if q is not None else js[0]
    qd = list(qd) if qd is not None else js[1]
    qdd = list(qdd) if qdd is not None else js[2]
    inertials = []
    for k, values in enumerate(links):
        p = se.DenseMatrix([to_se(x) for x in values])
        T = _symbolic_change(robot, k)
        J, h, m = params_.tensor(list(p if T is None else T * p))
        inertials.append(Inertial(J=tuple(map(tuple, J)), MS=tuple(h), M=m))  # type: ignore[arg-type]
    return ne.inverse_dynamics(arm_data(robot), SymengineOps(), q, qd, qdd, tip_load=False, friction=False,
                               group=False, parameters=inertials)


@dataclass(frozen=True, eq=False)
class Regressor:
    """tau = Y p + load: the regressor ``Y`` (n x 12n sympy matrix, 13n with Coulomb friction) in q1.., qd1..,
    qdd1.. and the geometry, the robot's parameter values ``p`` (column), their ``symbols``/``names``, and
    ``load``, the tip-load torques (not linear in any parameter), and ``spring``, the joint springs' k (q - q_ref)
    (known, not identified). Unpacks as ``Y, p = regressor(robot)``."""

    robot: Manipulator
    Y: sympy.ImmutableMatrix
    p: sympy.ImmutableMatrix
    symbols: tuple[sympy.Symbol, ...]
    load: sympy.ImmutableMatrix
    coulomb: bool = False
    spring: sympy.ImmutableMatrix | None = None
    names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(s.name for s in self.symbols))

    def __iter__(self) -> Iterator[sympy.ImmutableMatrix]:
        return iter((self.Y, self.p))


def _joint_columns(qd: SeExpr, qdd: SeExpr, coulomb: bool) -> list[SeExpr]:
    """The entries of columns IA_j, FV_j (, FC_j) of Y in row j."""
    return [qdd, qd] + ([se.sign(qd)] if coulomb else [])


def symbolic_regressor(robot: Manipulator, coulomb: bool = False, *, tidy: bool = True) -> se.DenseMatrix:
    """Y as a symengine matrix (see :func:`regressor`); ``tidy`` brings each entry to the canonical form
    (expanded, sin^2 -> 1 - cos^2) of :mod:`robodyn.algebra`."""
    n, per, ten = robot.n, params_.per_link(coulomb), len(params_.INERTIAL)
    arm = arm_data(robot)
    q, qd, qdd = joint_symbols(n).symengine()
    geo, motion = _motion(arm, SymengineOps(), q, qd, qdd)
    if tidy:  # once per link, not again in each of its columns
        motion = [tuple(tuple(canonical(x) for x in v) for v in m) for m in motion]  # type: ignore[misc]
    Y = se.zeros(n, per * n)
    for j in range(n):
        block = se.zeros(n, ten)  # link j's columns, for its parameters about the modified frame j
        for c, wrench in enumerate(unit_wrenches(motion[j])):
            for i, value in _to_base(arm, geo, j, wrench):
                block[i, c] = value
        T = _symbolic_change(robot, j)
        if T is not None:
            block = block * T  # Y_own = Y_mod T_j
        for i in range(n):
            for c in range(ten):
                Y[i, j * per + c] = canonical(block[i, c], q) if tidy else block[i, c]
        for c, value in enumerate(_joint_columns(qd[j], qdd[j], coulomb)):
            Y[j, j * per + ten + c] = value
    return Y


def regressor(robot: Manipulator, *, coulomb: bool = False, tidy: bool = True) -> Regressor:
    """The linear-in-parameters form of ``robot``'s dynamics: ``Y, p = regressor(robot)`` with

        tau = Y(q, qd, qdd) p + load + spring    (exact; load = the tip-load torques, zero without a tip load;
                                                  spring = the joint springs k (q - q_ref), zero without)

    p holds, per link j, XXj..Mj (inertia about the frame origin, first moments, mass: see
    :mod:`robodyn.recursions.parameters`), IAj (armature), FVj (damping) and, with ``coulomb=True``,
    FCj (Coulomb friction, value 0: robodyn models have none). The geometry may be numeric or symbolic. Y comes
    from the Newton-Euler recursion, one column per parameter (see the module docstring); ``tidy`` expands its
    entries to the canonical form."""
    if not isinstance(robot, Manipulator):
        raise TypeError(f"regressor() expects a Manipulator, got {type(robot).__name__}")
    refuse_floating(robot, "the symbolic regressor")
    refuse_implicit(robot, "the regressor (identification)")
    params_.check_no_clash(robot, coulomb)
    refuse_symbolic_stiffness(robot, "the regressor")
    Y = symbolic_regressor(robot, coulomb, tidy=tidy)
    load = _tip_load(robot)
    spring = _spring(robot, list(joint_symbols(robot.n).symengine()[0]))
    if robot.couplings:  # Y = W^T Y_tree(q_tree, qd_tree, qdd_tree) (module docstring)
        parts = _coupled(robot, {"Y": Y, "load": se.DenseMatrix([[to_se(x)] for x in load]), "spring": spring})
        Y, load, spring = parts["Y"], matrix_to_sympy(parts["load"]), parts["spring"]
    return Regressor(robot, matrix_to_sympy(Y), params_.standard_values(robot, coulomb),
                     params_.standard_symbols(robot.n, coulomb), load, coulomb, matrix_to_sympy(spring))


def refuse_symbolic_stiffness(robot: Manipulator, feature: str) -> None:
    """One ModelError where a joint's stiffness is a symbol: the springs are known torques of identification
    (tau = Y p + load + spring), their stiffness no parameter that it identifies."""
    for k, link in enumerate(robot.links):
        if link.stiffness.free_symbols:
            raise ModelError(f"{feature}: a symbolic joint stiffness ({link.stiffness}) is not identified (the springs "
                             "are known torques, tau = Y p + load + spring): give it a number", link=k + 1,
                             field="stiffness")


def refuse_floating(robot: Manipulator, feature: str) -> None:
    """One ModelError for a floating robot on a symbolic path: its regressor is numeric
    (:func:`numeric_regressor`, :mod:`robodyn.identification.floating`)."""
    if robot.floating:
        raise ModelError(f"{robot.name}: floating base: {feature} is not available; "
                         "robodyn.identification.numeric_regressor(robot, q, v, a) gives Y numerically")


def refuse_implicit(robot: Manipulator, feature: str) -> None:
    """One ModelError where ``robot`` has an implicit loop (numeric only): linear couplings and four-bars in closed
    form are handled (the module docstring)."""
    if robot.implicit:
        raise ModelError(f"{feature} is not available with implicit loops ({robot.name}: loop {robot.implicit[0]!r}; "
                         "linear couplings and four-bars in closed form are)", field="loops")


def _tip_load(robot: Manipulator) -> sympy.ImmutableMatrix:
    """The torques of the tip load alone: the recursion with massless links, no gravity and no joint terms."""
    n = robot.n
    if all(x == 0 for x in robot.tip_force + robot.tip_moment):
        return sympy.ImmutableMatrix.zeros(n, 1)
    massless = [Inertial(J=((0, 0, 0),) * 3, MS=(0, 0, 0), M=0)] * n
    tau = ne.inverse_dynamics(arm_data(robot), SymengineOps(), joint_symbols(n).symengine()[0], None, None,
                              gravity=False, friction=False, group=False, parameters=massless)
    return matrix_to_sympy(se.DenseMatrix([[to_se(t)] for t in tau]))


# -- numeric --------------------------------------------------------------------------------------------


#: Per robot and geometry binding: the float ArmData and the T_k of :func:`numeric_regressor`.
_NUMERIC: PerRobotCache[tuple[ArmData, list[np.ndarray | None]]] = PerRobotCache()


def _numeric_arm(robot: Manipulator, binding: Mapping[sympy.Symbol, float]) -> tuple[ArmData,
                                                                                    list[np.ndarray | None]]:
    """``robot``'s :class:`ArmData` with its geometry bound to floats (no inertials: Y needs none), and the
    T_k as floats."""
    def bind(x: Any) -> float:
        return float(sympy.sympify(x).xreplace(binding))

    arm = arm_data(robot)
    floats = ArmData(
        # cast: tuple(map(...)) keeps the 3 entries of F's rows and of p, but its type does not say so
        joints=tuple(JointData(d.revolute, cast(Mat, tuple(tuple(map(bind, row)) for row in d.F)),
                               cast(Vec, tuple(map(bind, d.p))), bind(d.theta), bind(d.d)) for d in arm.joints),
        inertials=(),
        parents=arm.parents,
        gravity=tuple(map(bind, arm.gravity)),  # type: ignore[arg-type]
        tip_force=tuple(map(bind, arm.tip_force)),  # type: ignore[arg-type]
        tip_moment=tuple(map(bind, arm.tip_moment)),  # type: ignore[arg-type]
    )
    return floats, [numeric_change(robot, k, bind) for k in range(robot.n)]


def _rigid_block(arm: ArmData, changes: Sequence[np.ndarray | None], q: np.ndarray, qd: np.ndarray,
                 qdd: np.ndarray, out: np.ndarray, per: int) -> None:
    """The rigid-body columns of Y for a block of states (q, qd, qdd: (n, B) joint-major), into ``out``
    (B, n, per n): link j's ten unit wrenches stacked as (10, B) arrays, carried to the base together."""
    B = q.shape[1]
    geo, motion = _motion(arm, NumpyOps(), list(q), list(qd), list(qdd))
    for j in range(arm.n):
        wrench = tuple(tuple(_stack([w[side][r] for w in unit_wrenches(motion[j])], B) for r in range(3))
                       for side in range(2))
        columns = slice(per * j, per * j + len(params_.INERTIAL))
        for i, value in _to_base(arm, geo, j, wrench):  # type: ignore[arg-type]
            out[:, i, columns] = value.T
        if changes[j] is not None:
            out[:, :, columns] = out[:, :, columns] @ changes[j]  # Y_own = Y_mod T_j


def _stack(values: Sequence[Scalar], B: int) -> np.ndarray:
    """(len(values), B): scalars (0, floats) and (B,) arrays as rows."""
    out = np.empty((len(values), B))
    for r, v in enumerate(values):
        out[r] = v
    return out


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

    The same columns as :func:`regressor`, the recursion run on NumPy arrays of blocks of states
    (:class:`robodyn.numeric.kane.NumpyOps`). ``params`` binds the geometry symbols (inertial symbols are not
    needed). Y @ p + load + :func:`robodyn.numeric.spring` equals :func:`robodyn.numeric.inverse_dynamics` to
    rounding. With coupled
    coordinates the inputs are the robot's n_v independent ones and Y = W^T Y_tree, of shape (N, n_v, 12n) (module
    docstring). A floating robot (``robot.floating``) takes q (N, nq), qd and qdd (N, nv: the base's body-frame twist
    first) and gives (N, nv, 10 + 12n), the base body's ten parameters first
    (:func:`robodyn.identification.floating.numeric_regressor`)."""
    refuse_implicit(robot, "the regressor (identification)")
    if robot.floating:
        return floating.numeric_regressor(robot, q, qd, qdd, params=params, coulomb=coulomb)
    binding = geometry_binding(robot, params)
    key = tuple(sorted((s.name, v) for s, v in binding.items()))
    arm, changes = _NUMERIC.get(robot, key, lambda: _numeric_arm(robot, binding))
    single = np.ndim(q) == 1
    if robot.couplings:
        model = _COUPLINGS.get(robot, key, lambda: build(robot, binding, check_bodies=False))
        qa, qda, qdda = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (q, qd, qdd))
        Y_tree = _tree_regressor(arm, changes, coupled_.position(model, qa), coupled_.rate(model, qda, qa),
                                 coupled_.acceleration(model, qa, qda, qdda), robot.n, coulomb)
        Y = np.einsum("...ja,...jk->...ak", coupled_.jacobian(model, qa), Y_tree)  # W^T Y_tree
    else:
        Y = _tree_regressor(arm, changes, q, qd, qdd, robot.n, coulomb)
    return Y[0] if single else Y


#: Per robot and geometry binding: the numeric model whose couplings map the states (placeholder inertials).
_COUPLINGS: PerRobotCache[NumericModel] = PerRobotCache()


def _tree_regressor(arm: ArmData, changes: Sequence[np.ndarray | None], q: Any, qd: Any, qdd: Any, n: int,
                    coulomb: bool) -> np.ndarray:
    """The tree's Y at the tree's states (q, qd, qdd: (N, n) or (n,)): (N, n, per n)."""
    per = params_.per_link(coulomb)
    arrays = [np.atleast_2d(np.asarray(a, dtype=float)) for a in (q, qd, qdd)]
    N = max(a.shape[0] for a in arrays)
    qT, qdT, qddT = (np.ascontiguousarray(np.broadcast_to(a, (N, n)).T) for a in arrays)
    Y = np.zeros((N, n, per * n))
    for start in range(0, N, BLOCK):
        block = slice(start, start + BLOCK)
        _rigid_block(arm, changes, qT[:, block], qdT[:, block], qddT[:, block], Y[block], per)
    ten = len(params_.INERTIAL)
    for k in range(n):
        for c, value in enumerate([qddT[k], qdT[k]] + ([np.sign(qdT[k])] if coulomb else [])):
            Y[:, k, per * k + ten + c] = value
    return Y


def numeric_values(robot: Manipulator, params: Mapping[Any, Any] | None = None, coulomb: bool = False) -> np.ndarray:
    """The standard parameter vector p of ``robot`` as floats (``params`` binds its symbols); a floating robot's
    starts with its base body's ten (:func:`robodyn.identification.floating.standard_values`)."""
    p = floating.standard_values(robot, coulomb) if robot.floating else params_.standard_values(robot, coulomb)
    binding = symbol_values(params)
    try:
        values = np.array([float(x.xreplace(binding)) for x in p], dtype=float)
    except TypeError:
        missing = sorted({s.name for x in p for s in x.xreplace(binding).free_symbols})
        raise ModelError(f"bind the symbols {', '.join(missing)} with params={{...}}", field="params",
                         unbound=tuple(missing)) from None
    check_physical(robot, binding)
    return values

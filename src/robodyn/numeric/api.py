"""The public functions of :mod:`robodyn.numeric`: shapes, parameters and the split of tau.

Every function takes a :class:`~robodyn.model.manipulator.Manipulator` (compiled once per parameter
binding and cached, see :func:`robodyn.numeric.model.compile_model`) or an already compiled
:class:`~robodyn.numeric.model.NumericModel`, and joint arrays of shape (n,) for one state or (N, n)
for a batch of N states (arrays of the two shapes broadcast together). Results have the same leading
shape: (n,) / (N, n) for torques and accelerations, (n, n) / (N, n, n) for M.

The split is that of :class:`robodyn.Equations`:

    tau = M(q) qdd + h(q, qd) + G(q) + damping(qd) + load(q)

with the armature inside M, damping = b qd and load = J(q)^T (tip force, tip moment).

One state (every joint array of shape (n,)) runs the same traced recursion over Python floats
(:mod:`robodyn.numeric._codegen`, ``scalar=True``): NumPy's overhead per operation on rows of length one would
cost some 250 us for the PUMA's tau, the floats about 8 us. Its sines and cosines are libm's, so one state may
differ from the same state in a batch in the last bit. After many one-state calls on one robot, the robot's
compiled routines take them over where a C compiler is found (:mod:`robodyn.numeric.hotpath`: about 1 us).

Each public function finds its engine in one table, :data:`ENGINES`, keyed by the robot's structure
(:func:`robodyn.model.structure.structure`: its kind, and whether q lies on a manifold), once per robot and
parameter binding: the fixed tree's traced recursions (:data:`FIXED_TREE`), the same on the tree of a coupled robot,
projected (:data:`COUPLED_TREE`, :mod:`robodyn.numeric.couplings`), the floating base's and multi-dof joints'
(:data:`FLOATING_TREE`, :mod:`robodyn.numeric.floating`) and the implicit loops' (:data:`CLOSED_CHAIN`,
:mod:`robodyn.numeric.closed_chains`). A routine an engine lacks refuses in one line
(:func:`robodyn.model.structure.refuse`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from robodyn.model.cache import PerRobotCache
from robodyn.model.manipulator import Manipulator
from robodyn.model.structure import IMPLICIT, PROJECTED, TREE, refuse, structure
from robodyn.numeric import closed_chains, couplings, floating
from robodyn.numeric.crba import crba, crba_one
from robodyn.numeric.hotpath import HotPath
from robodyn.numeric.kane import NumpyOps
from robodyn.numeric.kinematics import external_torques
from robodyn.numeric.model import CACHE_PER_ROBOT, NumericModel, Params, _params_key, compile_model
from robodyn.numeric.rnea import rnea
from robodyn.recursions.arm import coulomb_scalars, joint_friction

Robot = Manipulator | NumericModel

#: Batches are processed in blocks of this many states so that the working arrays stay in cache
#: (a loop over blocks, each block vectorised; results are identical for any block size).
BLOCK = 4096


def _blocked(kernel: Callable[..., np.ndarray], arrays: list[np.ndarray | None], axis: int) -> np.ndarray:
    """Apply ``kernel`` to joint-major arrays (n, N) block by block and join the results along ``axis``."""
    N = next(a for a in arrays if a is not None).shape[1]
    if N <= BLOCK:
        return kernel(*arrays)
    parts = [
        kernel(*(None if a is None else a[:, start : start + BLOCK] for a in arrays)) for start in range(0, N, BLOCK)
    ]
    return np.concatenate(parts, axis=axis)


def _joint_major(model: NumericModel, *arrays: np.ndarray | None) -> tuple[bool, list[np.ndarray | None]]:
    """Validate shapes, broadcast the batch, and return (single, arrays of shape (n, N))."""
    given = [np.asarray(a, dtype=float) for a in arrays if a is not None]
    for a in given:
        if a.ndim not in (1, 2) or a.shape[-1] != model.n:
            raise ValueError(
                f"joint arrays of {model.name!r} must have shape ({model.n},) or (N, {model.n}), got {a.shape}"
            )
    single = all(a.ndim == 1 for a in given)
    try:
        shape = np.broadcast_shapes(*(a.shape for a in given))
    except ValueError:
        raise ValueError(f"batch shapes do not match: {[a.shape for a in given]}") from None
    batch = np.atleast_2d(np.empty(shape)).shape
    out: list[np.ndarray | None] = []
    it = iter(given)
    for array in arrays:
        out.append(None if array is None else np.ascontiguousarray(np.broadcast_to(next(it), batch).T))
    return single, out


def _one_state(model: NumericModel, *arrays: np.ndarray) -> list[list[float]] | None:
    """The joint arrays as lists of floats when every one is one state, of shape (n,) (then :func:`rnea` and
    :func:`crba_one` run over Python floats); None for a batch."""
    rows = []
    for array in arrays:
        x = array if isinstance(array, np.ndarray) and array.dtype == np.float64 else np.asarray(array, dtype=float)
        if x.shape != (model.n,):
            return None
        rows.append(x.tolist())
    return rows


def _shaped(single: bool, tau: np.ndarray) -> np.ndarray:
    """Joint-major (n, N) back to (n,) or (N, n)."""
    out = tau.T
    return out[0] if single else np.ascontiguousarray(out)


# -- the engines: one routine per public function, each taking (robot, its NumericModel or None, params, arrays) --


Routine = Callable[..., np.ndarray]


@dataclass(frozen=True)
class Engine:
    """What the public functions run for one kind of robot (a row of :data:`ENGINES`): per function its routine;
    one left out refuses in one line (:func:`robodyn.model.structure.refuse`). A routine takes the robot, its
    compiled :class:`NumericModel` (None where ``compiled`` is False: the engine compiles its own), the parameters
    and the function's joint arrays (``friction``: qd, then q or None; ``inverse_dynamics``: and ``hot``, whether
    the one-state hot path may answer)."""

    name: str
    inverse_dynamics: Routine = NotImplemented
    bias_forces: Routine = NotImplemented
    coriolis: Routine = NotImplemented
    gravity: Routine = NotImplemented
    mass_matrix: Routine = NotImplemented
    forward_dynamics: Routine = NotImplemented
    friction: Routine = NotImplemented
    tip_load: Routine = NotImplemented
    #: Takes an external wrench ``fext`` (J^T fext, by the fixed tree's link frames).
    fext: bool = False
    #: Its routines take the :class:`NumericModel` (:func:`compile_model`).
    compiled: bool = True

    def __post_init__(self) -> None:
        for name in ROUTINES:
            if getattr(self, name) is NotImplemented:
                object.__setattr__(self, name, _refusal(name))

    def check_fext(self, robot: Robot, fext: np.ndarray) -> None:
        """Nothing where the engine takes an external wrench ``fext``; else one line."""
        if not self.fext:
            raise refuse(robot, "fext")


#: The public functions that dispatch through :data:`ENGINES` (the routines of :class:`Engine`).
ROUTINES = ("inverse_dynamics", "bias_forces", "coriolis", "gravity", "mass_matrix", "forward_dynamics", "friction",
            "tip_load")
#: The joint arrays each routine of an engine that compiles its own model takes (friction: qd alone; inverse
#: dynamics: not ``hot``).
ARITY = {"inverse_dynamics": 3, "bias_forces": 2, "coriolis": 2, "gravity": 1, "mass_matrix": 1,
         "forward_dynamics": 3, "friction": 1, "tip_load": 1}


def _refusal(name: str) -> Routine:
    """The routine of an engine that lacks ``name``: one line from :func:`~robodyn.model.structure.refuse`."""

    def routine(robot: Robot, *args: object, **kwargs: object) -> np.ndarray:
        raise refuse(robot, f"robodyn.numeric.{name}")

    return routine


def _tree_inverse_dynamics(robot: Robot, model: NumericModel, params: Params | None, q: np.ndarray, qd: np.ndarray,
                           qdd: np.ndarray, hot: bool = True) -> np.ndarray:
    if hot and (tau := model.hot.call("inverse_dynamics", robot, params, q, qd, qdd)) is not NotImplemented:
        return tau
    one = _one_state(model, q, qd, qdd)
    if one is not None:
        return rnea(model, one[0], one[1], one[2])
    single, (q_, qd_, qdd_) = _joint_major(model, q, qd, qdd)
    return _shaped(single, _blocked(partial(rnea, model), [q_, qd_, qdd_], 1))


def _tree_rnea(routine: str, *, gravity: bool = True, tip: bool = True, joint_terms: bool = True) -> Routine:
    """The tree's routine ``routine`` at qdd = 0 (bias_forces, coriolis: with qd; gravity: without), by one
    Newton-Euler pass with the terms of :func:`robodyn.numeric.rnea.rnea` asked for."""

    def run(robot: Robot, model: NumericModel, params: Params | None, q: np.ndarray,
            qd: np.ndarray | None = None) -> np.ndarray:
        out = model.hot.call(routine, robot, params, q) if qd is None else model.hot.call(routine, robot, params, q, qd)
        if out is not NotImplemented:
            return out
        arrays = (q,) if qd is None else (q, qd)
        one = _one_state(model, *arrays)
        if one is not None:
            return rnea(model, one[0], None if qd is None else one[1], None, gravity=gravity, tip=tip,
                        joint_terms=joint_terms)
        single, (q_, *rest) = _joint_major(model, *arrays)
        kernel = partial(rnea, model, gravity=gravity, tip=tip, joint_terms=joint_terms)
        return _shaped(single, _blocked(kernel, [q_, rest[0] if rest else None, None], 1))

    return run


def _tree_mass_matrix(robot: Robot, model: NumericModel, params: Params | None, q: np.ndarray) -> np.ndarray:
    if (M := model.hot.call("mass_matrix", robot, params, q)) is not NotImplemented:
        return M
    one = _one_state(model, q)
    if one is not None:
        return crba_one(model, one[0])
    single, (q_,) = _joint_major(model, q)
    M = _blocked(partial(crba, model), [q_], 0)
    return M[0] if single else M


def _tree_forward_dynamics(robot: Robot, model: NumericModel, params: Params | None, q: np.ndarray, qd: np.ndarray,
                           tau: np.ndarray) -> np.ndarray:
    if (qdd := model.hot.forward(robot, params, q, qd, tau)) is not NotImplemented:
        return qdd
    one = _one_state(model, q, qd, tau)
    if one is not None:  # M and the bias over floats, then the same Cholesky factor and substitutions
        rhs = np.array(one[2]) - rnea(model, one[0], one[1], None)
        return _cholesky_solve_one(crba_one(model, one[0]), rhs)
    single, (q_, qd_, tau_) = _joint_major(model, q, qd, tau)
    return _shaped(single, _blocked(partial(_forward_block, model), [q_, qd_, tau_], 1))


def _tree_friction(robot: Robot, model: NumericModel, params: Params | None, qd: np.ndarray,
                   q: np.ndarray | None) -> np.ndarray:
    qd = np.asarray(qd, dtype=float)
    ops = NumpyOps()
    columns = [joint_friction(ops, model.damping[j], coulomb_scalars(ops, tuple(model.coulomb[j])), qd[..., j])
               for j in range(model.n)]
    return np.stack(np.broadcast_arrays(*columns), axis=-1)


def _tree_tip_load(robot: Robot, model: NumericModel, params: Params | None, q: np.ndarray) -> np.ndarray:
    single, (q_,) = _joint_major(model, q)
    if not model.has_tip_load:
        return _shaped(single, np.zeros_like(q_))
    kernel = partial(rnea, _massless(model), gravity=False, joint_terms=False)
    return _shaped(single, _blocked(kernel, [q_, None, None], 1))


def _massless(model: NumericModel) -> NumericModel:
    return replace(
        model,
        mass=np.zeros_like(model.mass),
        first_moment=np.zeros_like(model.first_moment),
        inertia_origin=np.zeros_like(model.inertia_origin),
    )


#: A fixed tree of one-coordinate joints: the traced recursions over the NumericModel, the hot path for one state.
FIXED_TREE = Engine(
    "tree", inverse_dynamics=_tree_inverse_dynamics,
    bias_forces=_tree_rnea("bias_forces"),
    coriolis=_tree_rnea("coriolis", gravity=False, tip=False, joint_terms=False),
    gravity=_tree_rnea("gravity", tip=False, joint_terms=False),
    mass_matrix=_tree_mass_matrix, forward_dynamics=_tree_forward_dynamics, friction=_tree_friction,
    tip_load=_tree_tip_load, fext=True,
)


# A tree with couplings (robodyn.numeric.couplings): the tree's routines (the public functions on model.tree, a
# fixed tree) at q_tree = g(q), qd_tree = W qd, qdd_tree = W qdd + Wdot qd, projected with W^T.


def _coupled_inverse_dynamics(robot: Robot, model: NumericModel, params: Params | None, q: np.ndarray,
                              qd: np.ndarray, qdd: np.ndarray, hot: bool = True) -> np.ndarray:
    tree = inverse_dynamics(model.tree, couplings.position(model, q), couplings.rate(model, qd, q),
                            couplings.acceleration(model, q, qd, qdd))
    return couplings.project(model, tree, q)


def _coupled_bias_forces(robot: Robot, model: NumericModel, params: Params | None, q: np.ndarray,
                         qd: np.ndarray) -> np.ndarray:
    if model.bars:  # the tree's at qdd_tree = Wdot qd
        tree = inverse_dynamics(model.tree, couplings.position(model, q), couplings.rate(model, qd, q),
                                couplings.bias_rate(model, q, qd))
    else:
        tree = bias_forces(model.tree, couplings.position(model, q), couplings.rate(model, qd))
    return couplings.project(model, tree, q)


def _coupled_coriolis(robot: Robot, model: NumericModel, params: Params | None, q: np.ndarray,
                      qd: np.ndarray) -> np.ndarray:
    q_tree = couplings.position(model, q)
    tree = coriolis(model.tree, q_tree, couplings.rate(model, qd, q))
    if model.bars:  # and M_tree Wdot qd
        tree = tree + np.einsum("...jk,...k->...j", mass_matrix(model.tree, q_tree), couplings.bias_rate(model, q, qd))
    return couplings.project(model, tree, q)


def _coupled_gravity(robot: Robot, model: NumericModel, params: Params | None, q: np.ndarray) -> np.ndarray:
    return couplings.project(model, gravity(model.tree, couplings.position(model, q)), q)


def _coupled_mass_matrix(robot: Robot, model: NumericModel, params: Params | None, q: np.ndarray) -> np.ndarray:
    return couplings.project_matrix(model, mass_matrix(model.tree, couplings.position(model, q)), q)


def _coupled_forward_dynamics(robot: Robot, model: NumericModel, params: Params | None, q: np.ndarray,
                              qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """G^T M G qdd = tau - G^T bias, by the same Cholesky solves."""
    M = mass_matrix(model, q)
    rhs = np.asarray(tau, dtype=float) - bias_forces(model, q, qd)
    if M.ndim == 2 and rhs.ndim == 1:
        return _cholesky_solve_one(M, rhs)
    batch = np.broadcast_shapes(M.shape[:-2], rhs.shape[:-1])
    M, rhs = np.broadcast_to(M, (*batch, *M.shape[-2:])), np.broadcast_to(rhs, (*batch, rhs.shape[-1]))
    return cholesky_solve(np.ascontiguousarray(M), np.ascontiguousarray(rhs))


def _coupled_friction(robot: Robot, model: NumericModel, params: Params | None, qd: np.ndarray,
                      q: np.ndarray | None) -> np.ndarray:
    return couplings.project(model, friction(model.tree, couplings.rate(model, qd, q)), q)


def _coupled_tip_load(robot: Robot, model: NumericModel, params: Params | None, q: np.ndarray) -> np.ndarray:
    return couplings.project(model, tip_load(model.tree, couplings.position(model, q)), q)


COUPLED_TREE = Engine(
    "projected tree", inverse_dynamics=_coupled_inverse_dynamics, bias_forces=_coupled_bias_forces,
    coriolis=_coupled_coriolis, gravity=_coupled_gravity, mass_matrix=_coupled_mass_matrix,
    forward_dynamics=_coupled_forward_dynamics, friction=_coupled_friction, tip_load=_coupled_tip_load, fext=True,
)


def _on_robot(function: Callable[..., np.ndarray], arity: int) -> Routine:
    """The routine of an engine that compiles its own model: ``function(robot, *arrays, params=params)`` (its first
    ``arity`` arrays: inverse dynamics' ``hot`` dropped)."""

    def routine(robot: Robot, model: None, params: Params | None, *arrays: np.ndarray) -> np.ndarray:
        return function(robot, *arrays[:arity], params=params)

    return routine


def _engine_of(module: object, name: str) -> Engine:
    """The engine whose routines are ``module``'s functions of the public functions' names (where it has them)."""
    routines: dict[str, Any] = {routine: _on_robot(getattr(module, routine), ARITY[routine])
                                for routine in ROUTINES if hasattr(module, routine)}
    return Engine(name, compiled=False, **routines)


#: A floating base, or spherical and planar joints (nq != nv; linear couplings too): robodyn.numeric.floating.
FLOATING_TREE = _engine_of(floating, "floating tree")
#: Implicit loops, the passive joints by Newton's method: robodyn.numeric.closed_chains.
CLOSED_CHAIN = _engine_of(closed_chains, "closed chain")

#: The engine of each structure, by (:attr:`~robodyn.model.structure.Structure.kind`,
#: :attr:`~robodyn.model.structure.Structure.manifold`): the one dispatch of the public functions. A structure not
#: listed (implicit loops on a floating base) is refused in one line.
ENGINES: dict[tuple[str, bool], Engine] = {
    (TREE, False): FIXED_TREE,
    (PROJECTED, False): COUPLED_TREE,
    (IMPLICIT, False): CLOSED_CHAIN,
    (TREE, True): FLOATING_TREE,
    (PROJECTED, True): FLOATING_TREE,
}

_RESOLVED: PerRobotCache[tuple[Engine, NumericModel | None]] = PerRobotCache(CACHE_PER_ROBOT)


def _resolve(robot: Manipulator, params: Params | None) -> tuple[Engine, NumericModel | None]:
    shape = structure(robot)
    engine = ENGINES.get((shape.kind, shape.manifold))
    if engine is None:
        raise refuse(robot, "robodyn.numeric", what=f"{shape.variety} and {shape.kind} loops")
    return engine, compile_model(robot, params) if engine.compiled else None


def _engine(robot: Robot, params: Params | None) -> tuple[Engine, NumericModel | None]:
    """The engine of ``robot`` and its compiled model (None for an engine that compiles its own), resolved once per
    robot and parameter binding (a NumericModel is a tree, or a projected one)."""
    if isinstance(robot, NumericModel):
        return ENGINES[(robot.kind, False)], compile_model(robot, params)
    return _RESOLVED.get(robot, _params_key(params), lambda: _resolve(robot, params))


# -- the public functions ------------------------------------------------------------------------------------


def inverse_dynamics(
    robot: Robot, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, *, params: Params | None = None,
    fext: np.ndarray | None = None, fext_link: int | str | None = None,
) -> np.ndarray:
    """Joint torques/forces tau = M qdd + h + G + damping + load, by recursive Newton-Euler.

    Luh, Walker and Paul's recursion in Khalil and Kleinfinger's customised form, O(n) per state,
    traced once per model and vectorised over the batch: see :mod:`robodyn.numeric.rnea`. Includes gravity, the
    joint friction (viscous b qd and Coulomb), the armature (in M), the payload and the tip load. ``fext`` (6,) or
    (N, 6), for this call, adds J^T fext: the wrench (force, moment) that link ``fext_link`` (the last by default,
    or an index or a link's name) exerts on the environment, in that link's frame
    (:func:`robodyn.numeric.kinematics.external_torques`; ``robot`` must then be a Manipulator).

    A floating robot (``rd.load(path, floating=True)``) takes q of length ``robot.nq`` and qd, qdd of length
    ``robot.nv`` and gives the base wrench then the joint torques (:mod:`robodyn.numeric.floating`); so does a robot
    with spherical joints (its base fixed or floating: each spherical joint's 4 coordinates in q, 3 in qd, qdd, tau).
    """
    engine, model = _engine(robot, params)
    if fext is None:
        return engine.inverse_dynamics(robot, model, params, q, qd, qdd, True)
    engine.check_fext(robot, fext)
    return engine.inverse_dynamics(robot, model, params, q, qd, qdd, False) + _external(robot, q, fext, fext_link,
                                                                                         params)


def hot_path(robot: Robot, *, params: Params | None = None) -> HotPath:
    """The :class:`~robodyn.numeric.hotpath.HotPath` of ``robot`` with ``params`` bound: how many one-state calls
    it has counted, whether compiled routines have taken them over (``routines``), why not (``failure``), and
    ``wait()`` for a build under way. See :mod:`robodyn.numeric.hotpath`."""
    return compile_model(robot, params).hot


def _external(robot: Robot, q: np.ndarray, fext: np.ndarray, link: int | str | None,
              params: Params | None) -> np.ndarray:
    if not isinstance(robot, Manipulator):
        raise TypeError("fext needs the Manipulator (its link frames), not a compiled NumericModel")
    return external_torques(robot, q, fext, link, params)  # (projected there for a coupled robot)


def bias_forces(robot: Robot, q: np.ndarray, qd: np.ndarray, *, params: Params | None = None) -> np.ndarray:
    """Everything in tau but M qdd: h(q, qd) + G(q) + damping b qd + the tip-load torques J^T w.

    This is inverse dynamics at qdd = 0 (one Newton-Euler pass), so that forward dynamics solves
    M qdd = tau - bias_forces. A floating robot's (q of length ``robot.nq``, qd of ``robot.nv``) begins with the
    base's wrench, as :func:`inverse_dynamics`.
    """
    engine, model = _engine(robot, params)
    return engine.bias_forces(robot, model, params, q, qd)


def coriolis(robot: Robot, q: np.ndarray, qd: np.ndarray, *, params: Params | None = None) -> np.ndarray:
    """h(q, qd): Coriolis and centrifugal torques only (no gravity, damping or tip load), by Newton-Euler. A
    floating robot's: ``pinocchio.nonLinearEffects`` less ``computeGeneralizedGravity``."""
    engine, model = _engine(robot, params)
    return engine.coriolis(robot, model, params, q, qd)


def gravity(robot: Robot, q: np.ndarray, *, params: Params | None = None) -> np.ndarray:
    """G(q): the torques that hold the arm against gravity (no tip load), by Newton-Euler at rest. A floating
    robot's begins with the base's wrench (``pinocchio.computeGeneralizedGravity``)."""
    engine, model = _engine(robot, params)
    return engine.gravity(robot, model, params, q)


def friction(robot: Robot, qd: np.ndarray, *, params: Params | None = None, q: np.ndarray | None = None
             ) -> np.ndarray:
    """damping(qd), the joint friction of Equations.damping: b qd plus the Coulomb friction, Tc+ where qd > 0, Tc-
    where qd < 0 and 0 at rest (the odd and even parts of :attr:`~robodyn.model.manipulator.Link.coulomb_parts`).
    ``q``: needed only for a robot with four-bars (its map to the tree's rates depends on it)."""
    engine, model = _engine(robot, params)
    return engine.friction(robot, model, params, qd, q)


def tip_load(robot: Robot, q: np.ndarray, *, params: Params | None = None) -> np.ndarray:
    """load(q) = J(q)^T (tip force, tip moment): the torques the tip load demands (Equations.load)."""
    engine, model = _engine(robot, params)
    return engine.tip_load(robot, model, params, q)


def mass_matrix(robot: Robot, q: np.ndarray, *, params: Params | None = None) -> np.ndarray:
    """M(q), the joint-space inertia matrix with the armature on its diagonal, by the composite rigid
    body algorithm (Walker and Orin's method 3 in Khalil's parameters): see :mod:`robodyn.numeric.crba`. A
    floating robot's (q of length ``robot.nq``) is nv x nv (:mod:`robodyn.numeric.floating`)."""
    engine, model = _engine(robot, params)
    return engine.mass_matrix(robot, model, params, q)


def forward_dynamics(
    robot: Robot, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, *, params: Params | None = None,
    fext: np.ndarray | None = None, fext_link: int | str | None = None,
) -> np.ndarray:
    """Joint accelerations qdd solving M(q) qdd = tau - bias_forces(q, qd) (- J^T fext, as in
    :func:`inverse_dynamics`).

    M by the composite rigid body algorithm, the bias by one Newton-Euler pass (so damping and the tip
    load act as in :func:`inverse_dynamics`), then a batched Cholesky factorisation M = L L^T and two
    triangular solves. Raises :class:`numpy.linalg.LinAlgError` if M is not positive definite
    (a massless distal link without armature). A floating robot takes q of length ``robot.nq``, qd and tau of
    length ``robot.nv`` (:mod:`robodyn.numeric.floating`).
    """
    engine, model = _engine(robot, params)
    if fext is not None:
        engine.check_fext(robot, fext)
        tau = np.asarray(tau, dtype=float) - _external(robot, q, fext, fext_link, params)
    return engine.forward_dynamics(robot, model, params, q, qd, tau)


def _forward_block(model: NumericModel, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """qdd of shape (n, N) for joint-major q, qd, tau."""
    rhs = tau - rnea(model, q, qd, None)
    return cholesky_solve(crba(model, q), rhs.T).T


def _cholesky_solve_one(M: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with M x = b for one state: LAPACK's Cholesky factor (LinAlgError as :func:`cholesky_solve`), then LAPACK's
    solves with L and L^T (the batch version's 2n einsum calls on rows of one state cost some 40 us for the PUMA)."""
    L = np.linalg.cholesky(M)
    return np.linalg.solve(L.T, np.linalg.solve(L, b))


def cholesky_solve(M: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with M x = b for batches M (N, n, n) symmetric positive definite and b (N, n).

    One batched LAPACK Cholesky factorisation (numpy.linalg.cholesky), then forward and back
    substitution vectorised over N (a loop over the n joints only).
    """
    L = np.linalg.cholesky(M)
    n = M.shape[-1]
    y = np.empty_like(b)
    for i in range(n):
        y[:, i] = (b[:, i] - np.einsum("nk,nk->n", L[:, i, :i], y[:, :i])) / L[:, i, i]
    x = np.empty_like(b)
    for i in reversed(range(n)):
        x[:, i] = (y[:, i] - np.einsum("nk,nk->n", L[:, i + 1 :, i], x[:, i + 1 :])) / L[:, i, i]
    return x

"""Forward dynamics and simulation: the equations of motion put to work (ROBMAT, Horn and Linge
sec. 4.4; the Macsyma thesis appendix's forward dynamics and its checks).

    import robodyn as rd
    fd = rd.simulation.forward_dynamics_symbolic(rd.load("double_pendulum"))   # closed form, n <= 3
    res = rd.simulate(rd.load("puma560"), 10.0, q0, torque="gravity")           # scipy solve_ivp
    res.t, res.q, res.qd, res.qdd, res.tau, res.kinetic, res.potential, res.energy
    res.plot("swing.png")

Forward dynamics solves ROBMAT's configuration-space equation for the accelerations (Horn and Linge sec. 4.4),

    qdd = M(q)^-1 [tau - h(q, qd) - G(q) - damping(qd) - load(q)],

in closed form for arms of up to three joints (:func:`forward_dynamics_symbolic`: adj(M) (tau - bias) / det M,
as the Macsyma appendix did with ``solve``) and numerically for any arm. :func:`simulate` integrates
x = (q, qd), xdot = (qd, qdd) with :func:`scipy.integrate.solve_ivp`; the accelerations come from one of the
engines of :func:`dynamics`:

- ``"lambdify"`` (default): the Newton-Euler M and bias of :func:`robodyn.derive`, parameters bound, compiled
  once per arm with symengine's ``Lambdify`` (common subexpressions shared), then a 6x6 solve: about 30 us
  per state for the PUMA 560;
- ``"numpy"``: :func:`robodyn.numeric.forward_dynamics` (composite rigid body + Newton-Euler + Cholesky),
  no symbolic step, about 0.5 ms per single state (it is built for batches);
- ``"compiled"``: :func:`robodyn.runtime.compile`, the generated C code, where the code-generation feature exists.

The Macsyma appendix's validation is built in: the energy E = T + V with T = 1/2 qd^T M qd and V = -sum_k m_k g . c_k
(every body, payload included, centres of mass in the base frame) plus the joint springs' 1/2 sum k (q - q_ref)^2 is
returned along the motion and conserved in a free undamped simulation; :func:`small_oscillations` gives the periods
of the linearised motion about an equilibrium (2 pi / sqrt(lambda), K v = lambda M v, the springs' stiffness in K);
:func:`gravity_torque` holds the arm still.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import symengine as se
import sympy
from scipy.integrate import BDF, DOP853, LSODA, RK23, RK45, OdeSolver, Radau, solve_ivp

from robodyn import numeric
from robodyn.algebra import canonical, count_terms, matrix_to_sympy, to_se, to_sympy
from robodyn.analysis.plots import save, simulation_figure
from robodyn.analysis.trajectories import MAX_SAMPLES, check_samples
from robodyn.equations import BIAS_PARTS, sum_parts
from robodyn.errors import DerivationError, ModelError
from robodyn.formulations import MAX_DERIVE_LINKS, derive
from robodyn.model import joints
from robodyn.model.cache import PerRobotCache
from robodyn.model.files import atomic_write
from robodyn.model.manipulator import Manipulator
from robodyn.model.params import bind_parameters as checked_parameters
from robodyn.model.params import bound_robot, check_bound, symbol_values
from robodyn.model.structure import IMPLICIT, PROJECTED, TREE, refuse, structure
from robodyn.numeric import closed_chains
from robodyn.numeric.floating import floating_model
from robodyn.numeric.kinematics import potential_energy
from robodyn.numeric.model import Params, compile_model
from robodyn.numeric.springs import spring_energy
from robodyn.runtime import CompiledDynamics as CompiledModule
from robodyn.runtime import compile as compile_robot
from robodyn.runtime.toolchain import find_compiler

#: Closed-form forward dynamics up to this many joints (the inverse of M by adjugate and determinant).
SYMBOLIC_MAX_JOINTS = 3
#: Values used for parameters the caller leaves free, as :mod:`robodyn.analysis.torques` does.
DEFAULT_PARAMETERS: dict[str, float] = {"g": 9.81}
ENGINES = ("lambdify", "numpy", "compiled")
#: The integrators of :func:`scipy.integrate.solve_ivp`.
METHODS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")

Torque = None | str | Sequence[float] | np.ndarray | Callable[[float, np.ndarray, np.ndarray], Any]
#: The largest ``|value|`` accepted in a start state, an operating point or a constant torque (rad, m, rad/s, m/s,
#: N m, N): beyond it the sine of an angle has no correct digit left (the spacing of doubles near 1e9 is
#: 1e-7) and the quadratic velocity terms are a few squarings away from overflowing.
MAX_MAGNITUDE = 1e9
#: The default bound on the evaluations of the dynamics in one :func:`simulate`: about 12 times what a 10 s
#: swing of the PUMA 560 takes with Radau at the default tolerances (40 000; RK45: 7 300), so that a motion
#: too fast or too stiff for the method stops with an error (within a minute or so on the default engine)
#: instead of running for hours.
MAX_EVALUATIONS = 500_000

#: Coulomb friction is integrated as tanh(qd / COULOMB_VELOCITY) (rad/s or m/s), not sign(qd) (:func:`simulate`):
#: Talos' 20 joints with URDF friction stalled RK45 at t = 2e-7 s with the sign; with 0.01 they run.
COULOMB_VELOCITY = 0.01


class SimulationError(ModelError):
    """A simulation that cannot run or did not finish (one line, like every ModelError). One that stopped part of the
    way (a state that is no longer finite, a singular mass matrix, the evaluation bound, a torque function's bad
    value) keeps what it integrated: ``result``, the :class:`SimulationResult` up to the last step the integrator
    took (at the output times up to there, and that step's time); None where it stopped before its first step."""

    result: SimulationResult | None = None


class NonFiniteStateError(SimulationError):
    """The integration met a state or an acceleration that is not a finite number (NaN or infinite): a mass
    matrix singular there, or a motion that diverged. Raised instead of letting the integrator loop on NaN."""


def tau_symbols(n: int, taken: Iterable[str] = ()) -> tuple[sympy.Symbol, ...]:
    """The joint torque/force symbols ``tau1..taun``; where one of these is in ``taken`` (the names of the robot's
    parameters, which may be ``tau1``), ``tau_1..tau_n`` (``tau__1..``, and so on: the first that is free)."""
    names = set(taken)
    prefix = "tau"
    while any(f"{prefix}{i}" in names for i in range(1, n + 1)):
        prefix += "_"
    return tuple(sympy.Symbol(f"{prefix}{i}") for i in range(1, n + 1))


def bind_parameters(robot: Manipulator, params: Params | None) -> dict[str, float] | None:
    """``params`` as {name: float}, with ``g`` = 9.81 where the robot uses g and the caller gives none;
    unknown names and values that are not finite numbers are refused (:mod:`robodyn.model.params`)."""
    return checked_parameters(robot, params, DEFAULT_PARAMETERS) or None


# -- closed-form forward dynamics (Horn and Linge sec. 4.4; the Macsyma solve) -----------------


@dataclass(frozen=True)
class SymbolicForwardDynamics:
    """qdd = numerator / denominator, numerator = adj(M) (tau - bias), denominator = det M (factored).

    ``qdd`` is the n x 1 sympy matrix in q, qd, the torques ``tau`` (tau1..taun, unless a parameter has such a
    name: :func:`tau_symbols`) and the parameters; the numerators are in the
    canonical form of :mod:`robodyn.algebra` (expanded, each sin of degree <= 1).
    """

    robot: Manipulator
    numerator: sympy.ImmutableMatrix
    denominator: sympy.Expr
    tau: tuple[sympy.Symbol, ...]

    @property
    def qdd(self) -> sympy.ImmutableMatrix:
        return sympy.ImmutableMatrix([x / self.denominator for x in self.numerator])

    def terms(self) -> list[int]:
        """Number of terms of each numerator (a size measure for reports)."""
        return [count_terms(to_se(x)) for x in self.numerator]


def _bias(eqs: Any) -> se.DenseMatrix:
    """h + G + damping + spring + load: everything in tau but M qdd."""
    return sum_parts(eqs.canonical, BIAS_PARTS)


def _factored(expr: se.Basic, limit: int = 400) -> sympy.Expr:
    """sympy's factor of a small expression (a determinant of M), the expression itself if large."""
    value = to_sympy(expr)
    return sympy.factor(value) if count_terms(expr) <= limit else value


def forward_dynamics_symbolic(robot: Manipulator, method: str = "newton-euler") -> SymbolicForwardDynamics:
    """The closed-form accelerations of an arm of at most three joints (Horn and Linge sec. 4.4).

    qdd = M^-1 (tau - h - G - damping - load) with M^-1 = adj(M) / det(M) (Berkowitz's division-free
    determinant and adjugate), numerators brought to canonical form and det M factored. Larger arms raise
    :class:`~robodyn.errors.DerivationError`: their M^-1 is too large to be useful in closed form, and
    :func:`robodyn.numeric.forward_dynamics` or :func:`simulate` solve M qdd = tau - bias numerically.
    """
    n = robot.nv  # the independent coordinates (robot.n without couplings)
    if n > SYMBOLIC_MAX_JOINTS:
        raise DerivationError(
            f"closed-form forward dynamics is offered for arms of up to {SYMBOLIC_MAX_JOINTS} joints; "
            f"{robot.name} has {n}: use robodyn.numeric.forward_dynamics (or simulate), which solve "
            "M qdd = tau - bias numerically"
        )
    if any(c.closure is not None for c in robot.couplings):
        raise DerivationError(f"{robot.name} has a four-bar in closed form (atan2, sqrt): its M and bias have no "
                              "canonical form to invert in closed form; robodyn.numeric.forward_dynamics (or "
                              "simulate) solves M qdd = tau - bias numerically")
    eqs = derive(robot, method)
    q = eqs.symbols.q
    M = sympy.Matrix(matrix_to_sympy(eqs.canonical("M")))
    tau = tau_symbols(n, taken=(s.name for s in robot.parameters()))  # (never a parameter's symbol)
    rhs = se.DenseMatrix([[se.Symbol(t.name)] for t in tau]) - _bias(eqs)
    adj = M.adjugate(method="berkowitz")
    numerator = [
        canonical(sum((to_se(adj[i, j]) * rhs[j, 0] for j in range(n)), se.Integer(0)), q) for i in range(n)
    ]
    det = canonical(to_se(M.det(method="berkowitz")), q)
    return SymbolicForwardDynamics(
        robot, sympy.ImmutableMatrix([to_sympy(x) for x in numerator]), _factored(det), tau
    )


# -- numeric engines ---------------------------------------------------------------------------------


class Dynamics:
    """qdd(q, qd, tau) of one arm with its parameters bound, by one engine (see :func:`dynamics`)."""

    engine = "base"

    def __init__(self, robot: Manipulator, params: Mapping[str, float] | None) -> None:
        self.robot = robot
        self.params = dict(params or {})
        self.n = robot.nv
        self.model = compile_model(robot, self.params)  # also checks that every parameter is bound

    def accelerations(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """qdd for one state, (n,)."""
        raise NotImplementedError

    def accelerator(self) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
        """:meth:`accelerations` for the use of one thread (one integration): an engine whose calls share
        buffers gives each integration its own, so that its calls need no lock."""
        return self.accelerations

    def holding_torque(self, q: np.ndarray) -> np.ndarray:
        """G(q) + load(q): the torques that hold the arm at rest (batched, numeric engine)."""
        return numeric.bias_forces(self.model, q, np.zeros_like(q))

    @property
    def nq(self) -> int:
        """The length of q (n, but a floating robot's, :class:`FloatingDynamics`)."""
        return self.n

    def configuration_rate(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """dq/dt at (q, qd): qd itself (a floating base's, :class:`FloatingDynamics`)."""
        return qd


class NumpyDynamics(Dynamics):
    """:func:`robodyn.numeric.forward_dynamics` (CRBA, RNEA, Cholesky), one state at a time."""

    engine = "numpy"

    def accelerations(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
        return numeric.forward_dynamics(self.model, q, qd, tau)


class LambdifiedDynamics(Dynamics):
    """M(q) and bias(q, qd) of the Newton-Euler equations, parameters substituted, compiled by symengine's
    Lambdify with common subexpressions; qdd by a dense solve (LAPACK)."""

    engine = "lambdify"

    def __init__(self, robot: Manipulator, params: Mapping[str, float] | None) -> None:
        super().__init__(robot, params)
        eqs = derive(bound_robot(robot, self.params), "newton-euler")
        q, qd, _ = eqs.symbols.symengine()
        M, bias = eqs.raw("M"), sum_parts(eqs.raw, BIAS_PARTS)
        outputs = [M[i, j] for i in range(self.n) for j in range(self.n)] + [bias[i, 0] for i in range(self.n)]
        self._function = se.Lambdify([*q, *qd], outputs, cse=True)

    def accelerations(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
        n = self.n
        values = self._function(np.concatenate([q, qd]))
        return np.linalg.solve(values[: n * n].reshape(n, n), tau - values[n * n :])


class CompiledDynamics(Dynamics):
    """The generated C forward dynamics (M by the generated code, an LDL^T solve) of :func:`robodyn.runtime.compile`."""

    engine = "compiled"

    def __init__(self, robot: Manipulator, params: Mapping[str, float] | None) -> None:
        super().__init__(robot, params)
        try:
            compiled = compile_robot(robot, outputs=("forward",))
        except RuntimeError as exc:  # robodyn.runtime.CompileError: no compiler, or it failed
            raise SimulationError(" ".join(str(exc).split()), field="engine") from None
        names = tuple(compiled.parameters)
        self._compiled = compiled
        self._values = tuple(self.params[name] for name in names) if names else None
        self._forward = self.accelerator()
        self._lock = threading.Lock()  # one_state's buffers may be shared between calls (without robodyn._fastcall)

    def accelerations(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
        with self._lock:
            return self._forward(q, qd, tau)

    def accelerator(self) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
        """The compiled forward dynamics on one state, with buffers of its own: no lock around its calls."""
        return self._compiled.one_state("forward_dynamics", params=self._values)


class ClosedChainDynamics(Dynamics):
    """A robot with implicit loops (:mod:`robodyn.numeric.closed_chains`): the actuated state only, the passive
    positions by Newton's method at every evaluation from the previous one's (each integration its own
    :class:`~robodyn.numeric.closed_chains.Follower`), so that the loops hold to Newton's tolerance without drift."""

    engine = "numpy"

    def __init__(self, robot: Manipulator, params: Mapping[str, float] | None) -> None:
        self.robot = robot
        self.params = dict(params or {})
        self.n = robot.nv
        self.model = robot  # type: ignore[assignment]  # robodyn.numeric hands it to closed_chains
        self._follower = closed_chains.Follower(robot, self.params)  # also checks the loops and the parameters

    def accelerations(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
        return self._follower.accelerations(q, qd, tau)

    def accelerator(self) -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
        return closed_chains.Follower(self.robot, self.params).accelerations

    def holding_torque(self, q: np.ndarray) -> np.ndarray:
        return self._follower.holding_torque(q)

    def outputs(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(qdd, kinetic, potential) along the motion, the passive positions followed from sample to sample."""
        follower = closed_chains.Follower(self.robot, self.params)
        qdd, kinetic, potential = np.zeros_like(q), np.zeros(len(q)), np.zeros(len(q))
        for k in range(len(q)):
            qdd[k] = follower.accelerations(q[k], qd[k], tau[k])
            x = follower.last_state
            assert x is not None
            kinetic[k] = 0.5 * qd[k] @ (x.W[0].T @ numeric.mass_matrix(follower.chain.tree, x.q[0]) @ x.W[0]) @ qd[k]
            potential[k] = potential_energy(follower.chain.tree, x.q[0]) + spring_energy(follower.chain.tree, x.q[0])
        return qdd, kinetic, potential


class FloatingDynamics(Dynamics):
    """A floating robot (:mod:`robodyn.numeric.floating`): the state is q (nq: the base's position and unit
    quaternion x, y, z, w, then the joints) and v (nv: the base's body-frame twist, then the joints); v' by the
    articulated-body algorithm, and q' on the manifold: the position by R v_lin, the quaternion by
    1/2 quat (x) (omega, 0), the joints by their rates. The quaternion the integrator carries leaves the unit sphere
    by its local error only: it is normalised wherever it is read (the dynamics, the results). A robot with
    spherical joints, on a floating or a fixed base, too: each ball's quaternion moves by 1/2 quat (x) (omega, 0),
    omega its angular velocity in the child frame (v' by the Cholesky solve); and one with planar joints: each one's
    (x, y) by Rot(z, theta) (vx, vy), its (cos theta, sin theta) by omega_z (-sin theta, cos theta)."""

    engine = "numpy"

    def __init__(self, robot: Manipulator, params: Mapping[str, float] | None) -> None:
        self.robot = robot
        self.params = dict(params or {})
        self.n = robot.nv
        self.model = robot  # type: ignore[assignment]  # robodyn.numeric hands it to robodyn.numeric.floating
        #: per link (where its q starts, where its v starts, its joint: R, P, S or planar) with spherical or planar
        #: joints; () without
        self.layout = tuple((robot.idx_q(k), robot.idx_v(k), robot.links[k].joint)
                            for k in range(robot.n)) if robot.multi_dof else ()
        numeric.center_of_mass(robot, _rest(robot), params=self.params)  # checks params

    @property
    def nq(self) -> int:
        return self.robot.nq

    def accelerations(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
        return numeric.forward_dynamics(self.robot, unit_quaternions(self.robot, q), qd, tau, params=self.params)

    def configuration_rate(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        if self.layout:
            base = self._base_rate(q, qd) if self.robot.floating else np.zeros(0)
            return _ball_rates(self.layout, q, qd, base)
        return np.concatenate([self._base_rate(q, qd), qd[6:]])

    @staticmethod
    def _base_rate(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """The base's 7 rates: its position's R v_lin, its quaternion's 1/2 quat (x) (omega, 0)."""
        quaternion = q[3:7] / np.linalg.norm(q[3:7])
        return np.concatenate([joints.quaternion_matrix(quaternion) @ qd[:3], _quaternion_rate(quaternion, qd[3:6])])

    def holding_torque(self, q: np.ndarray) -> np.ndarray:
        if not self.robot.floating:  # a fixed base with spherical joints: ID at rest
            rest = np.zeros((*np.shape(q)[:-1], self.robot.nv))
            return numeric.inverse_dynamics(self.robot, unit_quaternions(self.robot, q), rest, rest,
                                            params=self.params)
        raise SimulationError(f"{self.robot.name}: floating base: no joint torques hold it at rest (torque='gravity' "
                              "is for a fixed base)", field="torque")

    def outputs(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(v', kinetic, potential) along the motion: T = 1/2 v^T M v, V = -m g . c (the centre of mass) plus the
        springs' energy."""
        qdd = numeric.forward_dynamics(self.robot, q, qd, tau, params=self.params)
        M = numeric.mass_matrix(self.robot, q, params=self.params)
        kinetic = 0.5 * np.einsum("ni,nij,nj->n", qd, M, qd)
        mass = float(M[0, 0, 0]) if self.robot.floating else _total_mass(self.robot, self.params)  # (M's base block)
        g = np.array([float(sympy.sympify(x).subs(self.params)) for x in self.robot.gravity])
        potential = -mass * numeric.center_of_mass(self.robot, q, params=self.params) @ g
        return qdd, kinetic, potential + spring_energy(self.robot, q, params=self.params)


def unit_quaternions(robot: Manipulator, q: np.ndarray) -> np.ndarray:
    """q with every quaternion (a floating base's, each spherical joint's) and each planar joint's (cos, sin) scaled
    to unit length (:func:`robodyn.model.joints.normalize`; one state or a batch)."""
    out = joints.normalize(q) if robot.floating else np.array(q, dtype=float)
    for k in robot.multi_dof:
        at = robot.idx_q(k)
        out[..., at:at + 4] = joints.normalize(out[..., at:at + 4], robot.links[k].joint)
    return out


def _quaternion_rate(quaternion: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """d quat / dt = 1/2 quat (x) (omega, 0) of a unit quaternion (x, y, z, w) turning at omega, in its own frame."""
    x, y, z, w = quaternion
    vector = np.array([x, y, z])
    return 0.5 * np.concatenate([w * omega + np.cross(vector, omega), [-vector @ omega]])


def _planar_rate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """d/dt (x, y, cos theta, sin theta) of a planar joint moving at v = (vx, vy, omega_z) in its child frame."""
    c, s = q[2:4] / np.linalg.norm(q[2:4])
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1], -s * v[2], c * v[2]])


def _ball_rates(layout: tuple[tuple[int, int, str], ...], q: np.ndarray, qd: np.ndarray,
                base: np.ndarray) -> np.ndarray:
    """dq/dt of a robot with spherical or planar joints: the base's rates ``base`` (7 or none), then per link
    (``layout``: where its q and v start, its joint) its rate, a ball's quaternion rate (:func:`_quaternion_rate`), a
    planar joint's :func:`_planar_rate`."""
    out = np.empty(q.shape[-1])
    out[:base.size] = base
    for at, rate, joint in layout:
        if joint == "S":
            quaternion = q[at:at + 4] / np.linalg.norm(q[at:at + 4])
            out[at:at + 4] = _quaternion_rate(quaternion, qd[rate:rate + 3])
        elif joint == "planar":
            out[at:at + 4] = _planar_rate(q[at:at + 4], qd[rate:rate + 3])
        else:
            out[at] = qd[rate]
    return out


def _total_mass(robot: Manipulator, params: Mapping[str, float]) -> float:
    """The whole robot's mass, bound (a fixed base's with spherical joints: the numeric engine's model)."""
    model = floating_model(robot, params, multi_dof=True)
    return model.base_mass + (0.0 if model.tree is None else float(np.sum(model.tree.mass)))


_ENGINE_CLASSES: dict[str, type[Dynamics]] = {
    "lambdify": LambdifiedDynamics,
    "numpy": NumpyDynamics,
    "compiled": CompiledDynamics,
}
#: The engine classes of each structure, by (:attr:`~robodyn.model.structure.Structure.kind`,
#: :attr:`~robodyn.model.structure.Structure.manifold`): the one dispatch of :func:`dynamics`. nq != nv (a floating
#: base, spherical or planar joints) takes the numeric engine's, whatever the engine asked for (the programs do not
#: integrate q); implicit loops are numeric only: the default (lambdify) and numpy engines are the closed-chain one.
SIMULATORS: dict[tuple[str, bool], dict[str, type[Dynamics]]] = {
    (TREE, False): _ENGINE_CLASSES,
    (PROJECTED, False): _ENGINE_CLASSES,
    (IMPLICIT, False): dict.fromkeys(("lambdify", "numpy"), ClosedChainDynamics),
    (TREE, True): dict.fromkeys(ENGINES, FloatingDynamics),
    (PROJECTED, True): dict.fromkeys(ENGINES, FloatingDynamics),
}
#: (engine, parameter binding) -> Dynamics, per robot; entries vanish with their robot.
_CACHE: PerRobotCache[Dynamics] = PerRobotCache()


def automatic_engine(robot: Manipulator) -> str:
    """The engine ``engine="auto"`` (the default) takes for ``robot``: the one engine of a robot whose q is not a
    vector (a floating base, ball or planar joints: the numeric engine's integration on the manifold) or with
    implicit loops (the numeric closed chains), else by size: ``"lambdify"`` up to :data:`MAX_DERIVE_LINKS` joints
    (no compiler needed, about 15 us a state on the PUMA), the compiled C beyond where a C compiler is found (a
    humanoid's 30-100 joints, whose symbolic equations the lambdify engine cannot derive), else ``"numpy"``."""
    shape = structure(robot)
    if shape.manifold or shape.kind == IMPLICIT:
        return "numpy"
    if robot.n <= MAX_DERIVE_LINKS:
        return "lambdify"
    return "compiled" if find_compiler() else "numpy"


def dynamics(robot: Manipulator, params: Params | None = None, engine: str = "auto") -> Dynamics:
    """The forward-dynamics engine of ``robot`` with ``params`` bound (g defaults to 9.81), built once and
    cached per robot and binding. ``engine``: ``"auto"`` (:func:`automatic_engine`: by the robot's kind and size),
    ``"lambdify"``, ``"numpy"`` or ``"compiled"``."""
    if engine != "auto" and engine not in _ENGINE_CLASSES:
        raise SimulationError(f"unknown engine {engine!r}; choose from auto, {', '.join(ENGINES)}", field="engine")
    shape = structure(robot)
    engine = automatic_engine(robot) if engine == "auto" else engine
    bound = bind_parameters(robot, params)
    classes = SIMULATORS.get((shape.kind, shape.manifold), {})
    if engine not in classes:
        robot.check_fixed_base()  # the one-line refusal of the symbolic paths (implicit loops are numeric only)
        raise refuse(robot, f"rd.simulate's engine {engine!r}", field="engine")
    cls = classes[engine]
    if cls is LambdifiedDynamics and robot.n > MAX_DERIVE_LINKS:
        raise SimulationError(f"{robot.n} links: the lambdify engine derives the equations symbolically, which is "
                              f"limited to {MAX_DERIVE_LINKS} links; use engine='compiled' (the generated C), "
                              "engine='numpy' or the default, engine='auto'", field="links")
    key = (cls.engine, tuple(sorted((bound or {}).items())))
    return _CACHE.get(robot, key, lambda: cls(robot, bound))


# -- energies and holding torques ----------------------------------------------------------------------


def kinetic_energy(robot: Manipulator, q: np.ndarray, qd: np.ndarray, params: Params | None = None) -> np.ndarray:
    """T = 1/2 qd^T M(q) qd (armature included, as in M): () or (N,)."""
    M = numeric.mass_matrix(robot, q, params=bind_parameters(robot, params))
    return 0.5 * np.einsum("...i,...ij,...j->...", qd, M, qd)


def gravity_energy(robot: Manipulator, q: np.ndarray, params: Params | None = None) -> np.ndarray:
    """V = -sum_k m_k g . c_k over every body, payload included (see :mod:`robodyn.numeric.kinematics`)."""
    return potential_energy(robot, q, bind_parameters(robot, params))


def total_potential(robot: Manipulator, q: np.ndarray, params: Params | None = None) -> np.ndarray:
    """The potential energy: gravity's (:func:`gravity_energy`) plus the joint springs' 1/2 sum k (q - q_ref)^2
    (:func:`robodyn.numeric.spring_energy`)."""
    bound = bind_parameters(robot, params)
    return potential_energy(robot, q, bound) + spring_energy(robot, q, params=bound)


def gravity_torque(robot: Manipulator, q: np.ndarray, params: Params | None = None) -> np.ndarray:
    """The torques that hold the arm at rest at q: tau = G(q) (+ load(q) where the arm has a tip load, + spring(q)
    where its joints have springs).

    Applied as a torque law ``torque="gravity"`` it is gravity compensation: the arm stays where it starts.
    """
    q = np.asarray(q, dtype=float)
    return numeric.bias_forces(robot, q, np.zeros_like(q), params=bind_parameters(robot, params))


# -- simulation ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SimulationResult:
    """The motion at the output times: t (N,), q, qd, qdd, tau (N, n), kinetic, potential, energy (N,).

    ``potential`` is V(q) = -sum m_k g . c_k (zero with every centre of mass at the base origin) plus the joint
    springs' 1/2 sum k (q - q_ref)^2; ``energy``
    = kinetic + potential, conserved when tau = 0 and the arm is undamped. ``t_events`` holds the times of
    the ``events`` passed to :func:`simulate`; ``nfev`` the number of evaluations of the dynamics.
    """

    robot: Manipulator
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    method: str
    engine: str
    nfev: int
    t_events: list[np.ndarray]

    @property
    def energy(self) -> np.ndarray:
        return self.kinetic + self.potential

    def energy_drift(self) -> float:
        """``max |E(t) - E(0)|`` relative to the energy in play, ``max(|E(0)|, max T, max |V - V(0)|)``."""
        E = self.energy
        scale = max(abs(E[0]), float(np.max(self.kinetic)), float(np.max(np.abs(self.potential - self.potential[0]))))
        return float(np.max(np.abs(E - E[0])) / scale) if scale > 0 else 0.0

    def __repr__(self) -> str:
        return (f"<SimulationResult {self.robot.name}: t = {self.t[0]:g}..{self.t[-1]:g} s, {len(self.t)} samples, "
                f"{self.method} ({self.engine} engine), {self.nfev} evaluations, energy drift "
                f"{self.energy_drift():.3g}; .plot() for a figure>")

    def summary(self) -> str:
        """A few lines: span, evaluations, energy drift, final state."""
        q_end = ", ".join(f"{x:.6g}" for x in self.q[-1])
        return (
            f"{self.robot.name}: t = {self.t[0]:g}..{self.t[-1]:g} s, {len(self.t)} samples, {self.method} "
            f"({self.engine} engine), {self.nfev} evaluations\n"
            f"energy: E(0) = {self.energy[0]:.10g} J, E(end) = {self.energy[-1]:.10g} J, "
            f"relative drift {self.energy_drift():.3g}\n"
            f"q(end) = ({q_end})\n"
        )

    def to_csv_text(self) -> str:
        """Header ``t,q1..,qd1..,qdd1..,tau1..,kinetic,potential,energy``; one row per sample."""
        n, nq = self.robot.nv, self.robot.nq
        names = ["t", *(f"q{i}" for i in range(1, nq + 1)),
                 *(f"{p}{i}" for p in ("qd", "qdd", "tau") for i in range(1, n + 1))]
        names += ["kinetic", "potential", "energy"]
        data = np.hstack([self.t[:, None], self.q, self.qd, self.qdd, self.tau,
                          self.kinetic[:, None], self.potential[:, None], self.energy[:, None]])
        rows = [",".join(f"{x:.17g}" for x in row) for row in data]
        return "\n".join([",".join(names), *rows]) + "\n"

    def write_csv(self, path: str | Path) -> Path:
        """:meth:`to_csv_text`, written atomically."""

        return atomic_write(Path(path), self.to_csv_text())

    def plot(self, path: str | Path | None = None) -> Any:
        """Joint motion and energies against t (a matplotlib Figure); written atomically to ``path`` if given."""

        joints = self.q[:, 7:] if self.robot.floating else self.q  # (a floating base's pose is not drawn)
        fig = simulation_figure(self.t, joints, self.kinetic, self.potential, self.robot,
                                f"{self.robot.name}: simulation ({self.method})")
        if path is not None:
            save(fig, path)
        return fig


def _rest(robot: Manipulator) -> np.ndarray:
    """The default q0: zeros; a floating robot's base at the origin with the identity quaternion, each spherical
    joint at its identity quaternion, each planar one at (0, 0, 1, 0)."""
    q = np.zeros(robot.nq)
    if robot.floating:
        q[6] = 1.0
    for k in robot.multi_dof:
        q[robot.idx_q(k) + (2 if robot.links[k].planar else 3)] = 1.0
    return q


def _vector(value: Any, n: int, what: str, limit: float = MAX_MAGNITUDE,
            default: np.ndarray | None = None) -> np.ndarray:
    """``value`` as n finite floats of magnitude at most ``limit`` (``default``, else zeros, for None); else one
    SimulationError."""
    try:
        out = np.array(value, dtype=float).reshape(-1) if value is not None else (
            np.zeros(n) if default is None else default)
    except (TypeError, ValueError, OverflowError):
        raise SimulationError(f"{what} must be {n} numbers, got {_shown(value)}", field=what) from None
    if out.shape != (n,) or not np.all(np.isfinite(out)):
        raise SimulationError(f"{what} must be {n} finite numbers, got {_shown(out.tolist())}", field=what)
    if np.max(np.abs(out), initial=0.0) > limit:
        raise SimulationError(f"{what} must be {n} numbers of magnitude at most {limit:g}, got "
                              f"{_shown(out.tolist())}", field=what)
    return out


def _shown(value: Any, width: int = 120) -> str:
    """repr(value), cut to ``width`` characters (a message stays one short line)."""
    return _cut(" ".join(repr(value).split()), width)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


TorqueLaw = Callable[[float, np.ndarray, np.ndarray], np.ndarray]


def torque_law(robot: Manipulator, torque: Torque, engine: Dynamics) -> TorqueLaw:
    """tau(t, q, qd) from what :func:`simulate` accepts: None or "zero", "gravity", n numbers, or a callable."""
    n = robot.nv
    if torque is None or (isinstance(torque, str) and torque == "zero"):
        zero = np.zeros(n)
        return lambda t, q, qd: zero
    if isinstance(torque, str):
        if torque != "gravity":
            raise SimulationError(f"unknown torque {torque!r}: zero, gravity, n numbers or a function", field="torque")
        return lambda t, q, qd: engine.holding_torque(q)
    if callable(torque):
        def law(t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
            return _returned_torque(torque(t, q, qd), n, t)

        return law
    constant = _vector(torque, n, "torque")
    return lambda t, q, qd: constant


def _returned_torque(value: Any, n: int, t: float) -> np.ndarray:
    """What a torque function returned, as n finite floats of magnitude at most :data:`MAX_MAGNITUDE`; else one
    SimulationError saying so (a torque of 1e300 would not overflow the state, only shrink the step to 1e-150 s)."""
    if value is not None:
        try:
            return _vector(value, n, "torque")
        except SimulationError:
            pass
    raise SimulationError(f"the torque function returned {_shown(value)} at t = {t:.6g} s; it must return "
                          f"{n} finite numbers of magnitude at most {MAX_MAGNITUDE:g}", field="torque")


def simulate(
    robot: Manipulator,
    t_span: float | tuple[float, float],
    q0: Sequence[float] | np.ndarray | None = None,
    qd0: Sequence[float] | np.ndarray | None = None,
    torque: Torque = None,
    *,
    method: str = "RK45",
    rtol: float = 1e-8,
    atol: float = 1e-10,
    params: Params | None = None,
    t_eval: Sequence[float] | np.ndarray | None = None,
    samples: int = 501,
    max_step: float = math.inf,
    events: Any = None,
    engine: str = "auto",
    max_evaluations: int | None = MAX_EVALUATIONS,
    coulomb_velocity: float | None = COULOMB_VELOCITY,
) -> SimulationResult:
    """Integrate the equations of motion from (q0, qd0) (zeros by default) over ``t_span`` ((t0, t1), or t1).

    ``torque``: None or ``"zero"`` (free motion), ``"gravity"`` (tau = G(q) + load(q), gravity compensation),
    n numbers (constant), or a function ``tau(t, q, qd)`` (a PD or computed-torque controller).
    A floating robot (``robot.floating``) starts from q0 of length ``robot.nq`` (default: the base at the origin,
    level, the joints at 0) and qd0 of ``robot.nv`` (the base's body-frame twist first); its configuration moves on
    the manifold (:class:`FloatingDynamics`) and its torques are nv numbers, the base's wrench first.
    ``method``, ``rtol``, ``atol``, ``max_step``, ``events``: passed to :func:`scipy.integrate.solve_ivp`
    (``"DOP853"`` with rtol = atol = 1e-12 conserves energy to ~1e-10). ``t_eval``: output times (default:
    ``samples`` equally spaced). ``params`` binds symbolic parameters (g defaults to 9.81). ``engine``: see
    :func:`dynamics`; a robot with implicit loops (``robot.implicit``) is integrated in its actuated state by the
    numeric engine whatever ``engine`` names but ``"compiled"`` (refused), the passive joints found by Newton's
    method at every evaluation (:mod:`robodyn.numeric.closed_chains`).

    Every option is checked before any work (a finite span, rtol in (0, 1) and atol > 0 finite, samples >= 2,
    q0 and qd0 finite and at most :data:`MAX_MAGNITUDE`, ...). The integration can neither hang nor run away:
    a state or acceleration that is not finite (a mass matrix singular there, a diverging motion) raises
    :class:`NonFiniteStateError`, more than ``max_evaluations`` evaluations of the dynamics (None: no bound)
    and a step size that collapses raise :class:`SimulationError`, each one line saying at which t.

    Coulomb friction, which jumps where a joint stops, is integrated as ``tanh(qd / coulomb_velocity)`` in place of
    sign(qd) (:data:`COULOMB_VELOCITY`, in rad/s or m/s; None: the sign itself, which no integrator steps over when
    a joint stops): the results' ``tau`` are the torques applied, their ``qdd`` those of the regularised friction.
    """
    t0, t1 = _time_span(t_span)
    n, nq = robot.nv, robot.nq
    options = _solver_options(method, rtol, atol, max_step, nq + n)
    times = _output_times(t0, t1, t_eval, samples)
    limit = _evaluation_limit(max_evaluations)
    q_start, qd_start = _vector(q0, nq, "q0", default=_rest(robot)), _vector(qd0, n, "qd0")
    if robot.floating and not np.linalg.norm(q_start[3:7]) > 0:
        raise SimulationError("q0's base quaternion (entries 4 to 7: x, y, z, w) is zero", field="q0")
    for k in robot.spherical:
        at = robot.idx_q(k)
        if not np.linalg.norm(q_start[at:at + 4]) > 0:
            raise SimulationError(f"q0's quaternion of spherical link {robot.label(k)} (entries {at + 1} to {at + 4}: "
                                  "x, y, z, w) is zero", field="q0")
    for k in robot.planar:
        at = robot.idx_q(k) + 2
        if not np.linalg.norm(q_start[at:at + 2]) > 0:
            raise SimulationError(f"q0's (cos, sin) of planar link {robot.label(k)} (entries {at + 1} and {at + 2}) is "
                                  "zero", field="q0")
    bound = bind_parameters(robot, params)
    engine_ = dynamics(robot, bound, engine)
    applied = torque_law(robot, torque, engine_)
    law = _smooth_coulomb(robot, bound, applied, coulomb_velocity)
    name = str(method if isinstance(method, str) else method.__name__)
    coulomb = any(link.has_coulomb for link in robot.links)
    x0 = np.concatenate([q_start, qd_start])

    def integrate(t_end: float, outputs: np.ndarray, reached: list[float] | None = None) -> Any:
        solver = options["method"] if reached is None else _noting_steps(options["method"], reached)
        with np.errstate(all="ignore"):  # the right-hand side's guards report a diverging state once
            return solve_ivp(_RightHandSide(engine_, law, limit, name, coulomb=coulomb), (t0, t_end), x0,
                             t_eval=outputs, events=events, **{**options, "method": solver})

    reached = [t0]
    try:
        sol = integrate(t1, times, reached)
        if sol.status < 0:
            error = SimulationError(f"integration failed at t = {sol.t[-1]:g} s: {sol.message}")
            error.result = _result(robot, engine_, law, sol, method, bound, applied) if len(sol.t) else None
            raise error
        return _result(robot, engine_, law, sol, method, bound, applied)
    except SimulationError as exc:  # stopped part of the way: the trajectory up to its last step kept
        if exc.result is not None or reached[-1] <= t0:
            raise
        raise _keeping(exc, reached[-1], lambda t_end: _result(robot, engine_, law, integrate(
            t_end, np.append(times[times < t_end], t_end)), method, bound, applied)) from None
    except ModelError:  # ours, with its own message (SimulationError is a ValueError too)
        raise
    except np.linalg.LinAlgError as exc:
        raise SimulationError(f"the mass matrix became singular ({exc})") from None
    except ValueError as exc:  # solve_ivp refusing what is left of its options (t_eval order, events)
        raise SimulationError("solve_ivp: " + " ".join(str(exc).split())) from None


def _smooth_coulomb(robot: Manipulator, bound: Mapping[str, float] | None, law: TorqueLaw,
                   velocity: float | None) -> TorqueLaw:
    """``law`` plus c(sign(qd)) - c(tanh(qd / velocity)) for each joint's Coulomb friction c(s) = odd s + even s^2:
    the engines subtract c(sign(qd)), so the integration sees the friction regularised below ``velocity`` (a joint
    that stops then slows smoothly instead of chattering, as MuJoCo's soft frictionloss does below a few hundredths
    of a rad/s). ``law`` itself where velocity is None, the robot has no Coulomb friction, or couplings (whose
    friction acts on the tree's joints)."""
    links = [k for k, link in enumerate(robot.links) if link.has_coulomb]
    if velocity is None or not links or robot.couplings:
        return law
    scale = _positive(velocity, "coulomb_velocity")
    values = symbol_values(bound or {})
    rows = np.array([robot.idx_v(k) for k in links])
    odd, even = (np.array([float(sympy.sympify(robot.links[k].coulomb_parts[i]).subs(values)) for k in links])
                 for i in (0, 1))

    def smoothed(t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        tau = np.array(law(t, q, qd), dtype=float)
        v = qd[rows]
        sign, smooth = np.sign(v), np.tanh(v / scale)
        tau[rows] += odd * (sign - smooth) + even * (sign * sign - smooth * smooth)
        return tau

    return smoothed


#: The integrators by name (solve_ivp's), to note the steps they take (:func:`_noting_steps`).
_SOLVERS: dict[str, type[OdeSolver]] = {"RK45": RK45, "RK23": RK23, "DOP853": DOP853, "Radau": Radau, "BDF": BDF,
                                         "LSODA": LSODA}


def _noting_steps(method: str | type[OdeSolver], reached: list[float]) -> type[OdeSolver]:
    """``method``'s solver class, noting the time each step it takes reaches (``reached[-1]``: how far an integration
    that stopped with an error got)."""
    base = _SOLVERS[method] if isinstance(method, str) else method

    def step(self: OdeSolver) -> str | None:
        message = base.step(self)
        if self.status != "failed":
            reached.append(float(self.t))
        return message

    return type(base.__name__, (base,), {"step": step})


def _keeping(error: SimulationError, t_last: float, integrate: Callable[[float], SimulationResult]) -> SimulationError:
    """``error`` with the trajectory up to ``t_last``, the last step taken (integrated again to there: the same steps,
    the same numbers), as its ``result``; the error as it was where that integration fails too."""
    try:
        result = integrate(t_last)
    except ModelError:
        return error
    kept = type(error)(f"{error.problem}; the trajectory up to t = {t_last:.6g} s is kept (the error's result)",
                       field=error.field)
    kept.result = result
    return kept


def _time_span(t_span: Any) -> tuple[float, float]:
    """(t0, t1) from t1 or (t0, t1): finite, t1 > t0."""
    try:
        if np.ndim(t_span) == 0:
            t0, t1 = 0.0, float(t_span)
        else:
            t0, t1 = (float(x) for x in t_span)
    except (TypeError, ValueError, OverflowError):
        raise SimulationError(f"the time span must be t1 or (t0, t1), got {_shown(t_span)}", field="t_span") from None
    if not (math.isfinite(t0) and math.isfinite(t1) and t1 > t0):
        raise SimulationError(f"the time span must be finite and end after it starts, got ({t0}, {t1})",
                              field="t_span")
    return t0, t1


def _solver_options(method: Any, rtol: Any, atol: Any, max_step: Any, size: int) -> dict[str, Any]:
    """method, rtol, atol and max_step for solve_ivp, checked (a NaN tolerance would make it loop forever)."""
    if isinstance(method, str):
        if method not in METHODS:
            raise SimulationError(f"unknown method {method!r}; choose from {', '.join(METHODS)}", field="method")
    elif not (isinstance(method, type) and issubclass(method, OdeSolver)):
        raise SimulationError(f"method must be one of {', '.join(METHODS)} or an OdeSolver class, got "
                              f"{_shown(method)}", field="method")
    step = _positive(max_step, "max_step", allow_inf=True)
    return {"method": method, "rtol": _tolerance(rtol, "rtol", size, below_one=True),
            "atol": _tolerance(atol, "atol", size), "max_step": step}


def _tolerance(value: Any, name: str, size: int, below_one: bool = False) -> float | np.ndarray:
    """A positive finite tolerance: one number or one per state component (``size``); rtol also below 1."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        array = np.full(2, np.nan)  # refused below
    upper = 1.0 if below_one else math.inf
    if (array.shape not in ((), (size,)) or not np.all(np.isfinite(array)) or np.any(array <= 0)
            or np.any(array >= upper)):
        what = "in (0, 1)" if below_one else "positive and finite"
        raise SimulationError(f"{name} must be {what} (one number, or one per state component: {size}), got "
                              f"{_shown(value)}", field=name)
    return float(array) if array.ndim == 0 else array


def _positive(value: Any, name: str, allow_inf: bool = False) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if not (number > 0 and (allow_inf or math.isfinite(number))):
        raise SimulationError(f"{name} must be a positive number{'' if allow_inf else ', finite'}, got "
                              f"{_shown(value)}", field=name)
    return number


def _output_times(t0: float, t1: float, t_eval: Any, samples: Any) -> np.ndarray:
    """The output times: ``samples`` (an integer >= 2) equally spaced, or ``t_eval`` (finite, 1-d, in the span)."""
    if t_eval is None:
        try:
            return np.linspace(t0, t1, check_samples(samples, 2))
        except ModelError as exc:
            raise SimulationError(exc.problem, field="samples") from None
    try:
        times = np.asarray(t_eval, dtype=float)
    except (TypeError, ValueError, OverflowError):
        times = np.full((1, 1), np.nan)  # refused below
    if times.ndim != 1 or not 0 < times.size <= MAX_SAMPLES or not np.all(np.isfinite(times)):
        raise SimulationError(f"t_eval must be 1 to {MAX_SAMPLES} finite times, got {_shown(t_eval)}", field="t_eval")
    if times.min() < t0 or times.max() > t1:
        raise SimulationError(f"t_eval must lie within the time span ({t0:g}, {t1:g}), got {times.min():g}.."
                              f"{times.max():g}", field="t_eval")
    return times


def _evaluation_limit(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise SimulationError(f"max_evaluations must be a positive integer or None, got {_shown(value)}",
                              field="max_evaluations")
    return int(value)


class _RightHandSide:
    """x' = (qd, M(q)^-1 (tau - bias)) (Horn and Linge sec. 4.4) for solve_ivp, guarded: a state or an acceleration
    that is not finite raises :class:`NonFiniteStateError` (solve_ivp itself would loop forever on NaN), and
    evaluation ``limit`` + 1 raises :class:`SimulationError`. NumPy's overflow warnings are silenced for the
    whole integration (:func:`simulate`, once rather than per call: the guards must cost less than the compiled
    dynamics they guard): the check reports the problem once, with the time and the state."""

    def __init__(self, engine: Dynamics, law: TorqueLaw, limit: int | None, method: str, coulomb: bool = False) -> None:
        self.engine, self.law, self.limit, self.method = engine, law, limit, method
        #: Coulomb friction jumps at qd = 0, where an adaptive integrator chatters: the message says so
        self.hint = ("; Coulomb friction jumps where a joint stops, which no integrator steps over: simulate "
                     "toolbox.nofriction(robot)" if coulomb else "")
        self.n, self.nq = engine.n, engine.nq
        self.calls = 0
        self._zeros_x, self._zeros_q = np.zeros(self.nq + self.n), np.zeros(self.n)
        self._accelerations = engine.accelerator()  # this integration's own: its calls take no lock
        self._rate = engine.configuration_rate

    def __call__(self, t: float, x: np.ndarray) -> np.ndarray:
        self.calls += 1
        if self.limit is not None and self.calls > self.limit:
            raise SimulationError(
                f"gave up at t = {t:.6g} s after {self.limit} evaluations: too fast or too stiff for "
                f"{self.method} (try method='Radau', or raise max_evaluations){self.hint}",
                field="max_evaluations")
        q, qd = x[:self.nq], x[self.nq:]
        # finiteness by one dot product with zeros: 0 * x is 0 for every finite x (the largest doubles included)
        # and NaN for an inf or a NaN, so the sum is NaN exactly when an entry is not finite (np.isfinite and
        # np.all on a dozen numbers cost five times as much, more than the compiled dynamics themselves)
        if math.isnan(x.dot(self._zeros_x)):
            raise NonFiniteStateError(f"the state is no longer finite at t = {t:.6g} s: the motion diverged "
                                      f"(q = {_numbers(q)}, qd = {_numbers(qd)})")
        try:
            qdd = self._accelerations(q, qd, self.law(t, q, qd))
        except np.linalg.LinAlgError:
            raise SimulationError(f"the mass matrix is singular at t = {t:.6g} s (q = {_numbers(q)})") from None
        if math.isnan(qdd.dot(self._zeros_q)):
            raise NonFiniteStateError(
                f"the accelerations are not finite at t = {t:.6g} s (q = {_numbers(q)}, qd = {_numbers(qd)}): "
                "the mass matrix is singular or nearly so there, or the state or the torques are too large")
        return np.concatenate((self._rate(q, qd), qdd))


def _numbers(values: np.ndarray) -> str:
    return _cut("(" + ", ".join(f"{v:.4g}" for v in values) + ")", 80)


def _result(robot: Manipulator, engine: Dynamics, law: Callable, sol: Any, method: str,
            params: Mapping[str, float] | None, applied: Callable | None = None) -> SimulationResult:
    """The result of ``sol``: qdd by the law integrated (``law``), tau the torques applied (``applied``, else
    ``law``'s)."""
    n, nq = robot.nv, robot.nq
    t, q, qd = sol.t, sol.y[:nq].T.copy(), sol.y[nq:].T.copy()
    if robot.floating or robot.multi_dof:
        q = unit_quaternions(robot, q)

    def torques(f: Callable) -> np.ndarray:
        return np.array([f(ti, qi, qdi) for ti, qi, qdi in zip(t, q, qd, strict=True)]).reshape(len(t), n)

    tau = torques(law)
    if isinstance(engine, ClosedChainDynamics | FloatingDynamics):
        qdd, kinetic, potential = engine.outputs(q, qd, tau)
    else:
        qdd = numeric.forward_dynamics(engine.model, q, qd, tau) if len(t) else np.zeros((0, n))
        kinetic = kinetic_energy(robot, q, qd, params) if len(t) else np.zeros(0)
        potential = total_potential(robot, q, params) if len(t) else np.zeros(0)
    return SimulationResult(
        robot=robot,
        t=t,
        q=q,
        qd=qd,
        qdd=qdd,
        tau=tau if applied is None or applied is law else torques(applied),
        kinetic=kinetic,
        potential=potential,
        method=method,
        engine=engine.engine,
        nfev=int(sol.nfev),
        t_events=list(sol.t_events or []),
    )


# -- equilibria and small oscillations (the Macsyma appendix's free-swing check) ---------------------------------


def stable_equilibrium(
    robot: Manipulator, q_guess: Sequence[float] | np.ndarray, params: Params | None = None, tol: float = 1e-12
) -> np.ndarray:
    """A local minimum of the potential V(q) near ``q_guess`` (gradient G(q) + spring(q), the joint springs' energy
    included): where the arm hangs at rest without torques. Joints that neither gravity nor a spring moves (a
    vertical axis) stay where they are."""
    from scipy.optimize import minimize

    bound = bind_parameters(robot, params)
    model = compile_model(robot, bound)
    start = _vector(q_guess, robot.nv, "q_guess")
    result = minimize(
        lambda q: float(potential_energy(model, q) + spring_energy(model, q)),
        start,
        jac=lambda q: numeric.gravity(model, q) + numeric.spring(model, q),
        method="BFGS",
        options={"gtol": tol},
    )
    return np.asarray(result.x, dtype=float)


@dataclass(frozen=True)
class Oscillations:
    """The linearised free motion about (q0, qd = 0) under the constant torque tau0 = G(q0) + load(q0).

    M dq'' + K dq = 0 with K = d(G + load)/dq at q0: ``eigenvalues`` lambda of K v = lambda M v (ascending),
    ``modes`` the M-orthonormal eigenvectors as columns, ``periods`` 2 pi / sqrt(lambda) for the oscillating
    modes (lambda > 0) and inf for the neutral ones (a joint that gravity does not move).
    """

    q0: np.ndarray
    tau0: np.ndarray
    M: np.ndarray
    K: np.ndarray
    eigenvalues: np.ndarray
    modes: np.ndarray

    def __repr__(self) -> str:
        periods = ", ".join(f"{p:.4g}" for p in self.periods)
        return f"Oscillations(q0={np.array2string(self.q0, precision=4)}, periods [s] = ({periods}))"

    @property
    def periods(self) -> np.ndarray:
        scale = max(float(np.max(np.abs(self.eigenvalues))), 1e-300)
        out = np.full(self.eigenvalues.shape, np.inf)
        moving = self.eigenvalues > 1e-9 * scale
        out[moving] = 2 * np.pi / np.sqrt(self.eigenvalues[moving])
        return out


# -- exact derivatives of the inverse dynamics (for small_oscillations, and robodyn.analysis.linear) ---------------


class Derivatives:
    """dID/dq and dID/dqd of one arm (parameters bound): the program's derivative outputs
    (:func:`robodyn.program.build` ``("dtau_dq", "dtau_dqd")``, forward-mode over the Newton-Euler recursion),
    run by the generated NumPy module; see :mod:`robodyn.analysis.linear`."""

    def __init__(self, compiled: CompiledModule, params: Mapping[str, float]) -> None:
        self.n = compiled.n
        self._compiled = compiled
        names = compiled.parameters
        self._params = tuple(float(params[name]) for name in names) if names else None

    def inverse_dynamics(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(dtau/dq, dtau/dqd), each (n, n), row i = joint i, at one state."""
        d_q, d_qd = self._compiled.inverse_dynamics_derivatives(q, qd, qdd, params=self._params)
        return np.asarray(d_q), np.asarray(d_qd)


class SymbolicDerivatives:
    """:class:`Derivatives` of a robot with a four-bar in closed form (:mod:`robodyn.model.fourbars`), whose
    derivative programs are not built: the Newton-Euler tau of :func:`robodyn.derive` (parameters bound),
    differentiated exactly by symengine and compiled by its Lambdify (common subexpressions shared)."""

    def __init__(self, robot: Manipulator, params: Mapping[str, float]) -> None:
        eqs = derive(bound_robot(robot, params), "newton-euler")
        q, qd, qdd = eqs.symbols.symengine()
        tau = eqs.raw("tau")
        self.n = n = len(q)
        outputs = [tau[i, 0].diff(x) for x in (*q, *qd) for i in range(n)]
        self._function = se.Lambdify([*q, *qd, *qdd], outputs, cse=True)

    def inverse_dynamics(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(dtau/dq, dtau/dqd), each (n, n), row i = joint i, at one state."""
        n = self.n
        values = np.asarray(self._function(np.concatenate([q, qd, qdd]))).reshape(2, n, n)
        return values[0].T.copy(), values[1].T.copy()


#: The generated derivative module, per robot (its parameters are inputs: one module serves every binding);
#: entries vanish with their robot.
_DERIVATIVES: PerRobotCache[CompiledModule] = PerRobotCache()


def derivatives(robot: Manipulator, params: Params | None = None) -> Derivatives:
    """The compiled derivatives of ``robot``'s inverse dynamics with ``params`` bound (the module cached per
    robot); a parameter left unbound is one :class:`~robodyn.errors.ModelError`."""
    bound = bind_parameters(robot, params) or {}
    check_bound(robot, symbol_values(bound))  # every parameter bound, every field finite under them
    if structure(robot).four_bars:  # no derivative programs
        return SymbolicDerivatives(robot, bound)  # type: ignore[return-value]
    compiled = _DERIVATIVES.get(robot, "dtau", lambda: compile_robot(robot, outputs=("dtau",), backend="numpy"))
    return Derivatives(compiled, bound)


def small_oscillations(
    robot: Manipulator, q0: Sequence[float] | np.ndarray, params: Params | None = None
) -> Oscillations:
    """Small oscillations about q0 held by its own constant gravity torque (the Macsyma appendix's free-swing check).

    At a natural equilibrium (G(q0) = 0, e.g. from :func:`stable_equilibrium`) tau0 = 0: the free arm.
    Raises :class:`SimulationError` when K has a negative eigenvalue (q0 is not stable).
    """
    from scipy.linalg import eigh

    bound = bind_parameters(robot, params)
    q = _vector(q0, robot.nv, "q0")
    zero = np.zeros(robot.nv)
    d_q, _ = derivatives(robot, bound).inverse_dynamics(q, zero, zero)  # d tau / d q at rest = d(G + load)/dq
    K = 0.5 * (d_q + d_q.T)
    M = numeric.mass_matrix(robot, q, params=bound)
    eigenvalues, modes = eigh(K, M)
    if eigenvalues[0] < -1e-9 * max(float(np.max(np.abs(eigenvalues))), 1e-300):
        raise SimulationError(
            f"q0 is not a stable equilibrium: the stiffness d(G + load)/dq has a negative eigenvalue "
            f"({eigenvalues[0]:.4g}); try stable_equilibrium() first",
            field="q0",
        )
    return Oscillations(q, gravity_torque(robot, q, bound), M, K, eigenvalues, modes)


def measured_period(result: SimulationResult, index: int = 0) -> float:
    """The period of an oscillation from the crossings of event ``index`` recorded by :func:`simulate`:
    twice the mean spacing of successive crossings (a full period spans two of them)."""
    times = result.t_events[index]
    if len(times) < 3:
        raise SimulationError("fewer than three crossings: simulate longer to measure a period")
    return float(2 * np.mean(np.diff(times)))


def free_swing_period(
    robot: Manipulator,
    oscillations: Oscillations,
    mode: int,
    *,
    amplitude: float = 1e-4,
    cycles: float = 3.0,
    params: Params | None = None,
    **options: Any,
) -> float:
    """The period of mode ``mode`` measured in a simulation, to compare with ``oscillations.periods[mode]``.

    Starts at rest from q0 + amplitude v (v the mode, scaled to unit largest entry) under the constant
    torque tau0, and times the zero crossings of the modal coordinate y = v^T M(q0) (q - q0) (solve_ivp
    events, located to the integrator's accuracy) over about ``cycles`` periods. ``options`` go to
    :func:`simulate` (default DOP853, rtol = atol = 1e-12). The nonlinear correction is of relative order
    amplitude^2.
    """
    expected = oscillations.periods[mode]
    if not np.isfinite(expected):
        raise SimulationError(f"mode {mode} does not oscillate (zero stiffness)", field="mode")
    v = oscillations.modes[:, mode] / np.max(np.abs(oscillations.modes[:, mode]))
    weight = oscillations.M @ v
    q0 = oscillations.q0
    n = robot.nv

    def crossing(t: float, x: np.ndarray) -> float:
        return float(weight @ (x[:n] - q0))

    settings = {"method": "DOP853", "rtol": 1e-12, "atol": 1e-12, "samples": 2, **options}
    result = simulate(robot, cycles * expected, q0 + amplitude * v, None, oscillations.tau0, params=params,
                      events=crossing, **settings)
    return measured_period(result)

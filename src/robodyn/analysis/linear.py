"""Linearised and discrete-time models: the extensions ROBMAT's authors wished for (Horn and Linge sec. 7).

    import robodyn as rd
    lin = rd.linearize(robot, q0, qd0, tau0)              # A, B (C, D) of x = (q, qd), u = tau
    sym = rd.linearize(rd.load("double_pendulum"), symbolic=True)   # sympy, in q, qd, tau, parameters
    disc = rd.linear.discretize(lin, dt=0.01, method="zoh")  # disc.Ad, disc.Bd
    x_next = rd.linear.rk4_step(robot, x, tau, dt)        # the discrete-time nonlinear model

The state-space form of tau = M(q) qdd + bias(q, qd) (bias = h + G + damping + load) is
x = (q, qd), xdot = f(x, u) = (qd, M^-1 (u - bias)). About (q0, qd0, tau0), with qdd0 = f(q0, qd0, tau0):

    A = [[0, I], [-M^-1 dID/dq, -M^-1 dID/dqd]],   B = [[0], [M^-1]],

where ID(q, qd, qdd) = M qdd + bias is the inverse dynamics, differentiated at qdd = qdd0. This follows
from differentiating ID(q, qd, f(q, qd, tau)) = tau: dID/dq + M df/dq = 0. The derivatives of ID are
exact: the program's derivative outputs (:func:`robodyn.program.build` with ``dtau_dq``, ``dtau_dqd``: the
Newton-Euler recursion differentiated in forward mode, as a straight-line program), run by the generated NumPy
module built once per arm (:func:`derivatives`); no finite differences. (:func:`robodyn.runtime.compile` with outputs
``dtau`` and ``dqdd`` gives the same derivatives compiled, for batches.) The symbolic form (arms of up to
three joints) applies the same formula to the sympy equations with M^-1 = adj(M) / det(M).

Discrete time: :func:`discretize` (zero-order hold or forward Euler, by :func:`scipy.signal.cont2discrete`)
and :func:`rk4_step` (classical Runge-Kutta over one step with tau held).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import sympy

from robodyn import numeric
from robodyn.algebra import canonical, matrix_to_sympy, to_se, to_sympy
from robodyn.analysis.simulation import (
    SYMBOLIC_MAX_JOINTS,
    _vector,
    bind_parameters,
    derivatives,
    dynamics,
    gravity_torque,
    tau_symbols,
)
from robodyn.analysis.simulation import (
    Derivatives as Derivatives,  # defined beside small_oscillations, which needs it too
)
from robodyn.equations import BIAS_PARTS, sum_parts
from robodyn.errors import DerivationError, ModelError
from robodyn.formulations import derive
from robodyn.model.expr import to_expr
from robodyn.model.manipulator import Manipulator
from robodyn.numeric.kinematics import jacobian
from robodyn.numeric.model import Params

OUTPUTS = ("state", "q", "qd", "tool")
DISCRETE_METHODS = ("zoh", "euler")


# -- the linear model -------------------------------------------------------------------------------


@dataclass(frozen=True)
class LinearModel:
    """dx/dt = A dx + B du, dy = C dx + D du about the operating point (x0 = (q0, qd0), u0 = tau0).

    Numeric (arrays) or symbolic (sympy matrices); ``qdd0`` is the acceleration at the operating point
    (zero at an equilibrium). ``output`` names what y is.
    """

    A: Any
    B: Any
    C: Any
    D: Any
    q0: Any
    qd0: Any
    tau0: Any
    qdd0: Any
    output: str

    @property
    def symbolic(self) -> bool:
        return isinstance(self.A, sympy.MatrixBase)

    def __repr__(self) -> str:
        shapes = ", ".join(f"{name} {m.shape[0]}x{m.shape[1]}" for name, m in
                           (("A", self.A), ("B", self.B), ("C", self.C), ("D", self.D)))
        kind = "symbolic" if self.symbolic else "numeric"
        return f"LinearModel({kind}, {shapes}, output {self.output!r})"

    def eigenvalues(self) -> np.ndarray:
        """The eigenvalues of A (numeric models)."""
        return np.linalg.eigvals(np.asarray(self.A, dtype=float))


def _output_matrices(
    robot: Manipulator, output: str | np.ndarray | None, q0: np.ndarray, params: Mapping[str, float] | None
) -> tuple[np.ndarray, np.ndarray, str]:
    n = robot.nv
    if output is None or (isinstance(output, str) and output == "state"):
        return np.eye(2 * n), np.zeros((2 * n, n)), "state"
    if isinstance(output, str):
        zero = np.zeros((n, n))
        if output == "q":
            return np.hstack([np.eye(n), zero]), zero.copy(), "q"
        if output == "qd":
            return np.hstack([zero, np.eye(n)]), zero.copy(), "qd"
        if output == "tool":  # (dp; dtheta) = J(q0) dq: the tool pose to first order
            return np.hstack([jacobian(robot, q0, params), np.zeros((6, n))]), np.zeros((6, n)), "tool"
        raise ModelError(f"unknown output {output!r}: {', '.join(OUTPUTS)} or a matrix C", field="output")
    C = np.asarray(output, dtype=float)
    if C.ndim != 2 or C.shape[1] != 2 * n:
        raise ModelError(f"an output matrix C must have {2 * n} columns, got shape {C.shape}", field="output")
    return C, np.zeros((C.shape[0], n)), "custom"


def linearize(
    robot: Manipulator,
    q0: Sequence[float] | np.ndarray | None = None,
    qd0: Sequence[float] | np.ndarray | None = None,
    tau0: Sequence[float] | np.ndarray | None = None,
    *,
    output: str | np.ndarray | None = None,
    symbolic: bool = False,
    params: Params | None = None,
) -> LinearModel:
    """A, B, C, D of x = (q, qd), u = tau about (q0, qd0, tau0) (see the module docstring).

    Defaults: qd0 = 0 and tau0 = G(q0) + load(q0), so (q0, 0) is an equilibrium. ``output``: ``"state"``
    (C = I, the default), ``"q"``, ``"qd"``, ``"tool"`` (C = [J(q0) 0]: tool displacement and rotation)
    or a matrix C with 2n columns; D = 0 in every case.

    ``symbolic=True`` returns sympy matrices (arms of up to three joints): the operating point may hold
    symbols; where q0, qd0 or tau0 is None the result is in the symbols q1.., qd1.., tau1.. themselves;
    ``params`` (optional there) substitutes parameter values.
    """
    if symbolic:
        # cast: a symbolic model offers no matrix C; linearize_symbolic checks output itself
        return linearize_symbolic(robot, q0, qd0, tau0, output=cast("str | None", output), params=params)
    if robot.floating or robot.multi_dof:  # q of nq coordinates, qd of nv: refused before q0 is read as nv numbers
        what = "a floating base" if robot.floating else f"a {robot.links[robot.multi_dof[0]].kind} joint"
        raise ModelError(f"{robot.name}: {what}: a linearisation is offered in the coordinates of a fixed base's "
                         "revolute and prismatic joints so far")
    n = robot.nv  # the independent coordinates (robot.n without couplings)
    bound = bind_parameters(robot, params)
    q = _vector(q0, n, "q0")
    qd = _vector(qd0, n, "qd0")
    tau = gravity_torque(robot, q, bound) if tau0 is None else _vector(tau0, n, "tau0")
    model = dynamics(robot, bound, "numpy").model
    qdd = numeric.forward_dynamics(model, q, qd, tau)
    d_q, d_qd = derivatives(robot, bound).inverse_dynamics(q, qd, qdd)
    M = numeric.mass_matrix(model, q)
    Minv_d = np.linalg.solve(M, np.hstack([d_q, d_qd, np.eye(n)]))  # one factorisation for the three blocks
    A = np.zeros((2 * n, 2 * n))
    A[:n, n:] = np.eye(n)
    A[n:, :n] = -Minv_d[:, :n]  # df/dq = -M^-1 dID/dq
    A[n:, n:] = -Minv_d[:, n : 2 * n]  # df/dqd = -M^-1 dID/dqd
    B = np.vstack([np.zeros((n, n)), Minv_d[:, 2 * n :]])  # df/dtau = M^-1
    C, D, name = _output_matrices(robot, output, q, bound)
    return LinearModel(A, B, C, D, q, qd, tau, qdd, name)


def _entry(value: Any, what: str) -> sympy.Expr:
    """A sympy expression as given; a number or a string through the model-expression whitelist
    (:func:`robodyn.model.expr.to_expr`: text is parsed, never evaluated)."""
    return value if isinstance(value, sympy.Expr) else to_expr(value, field=what)


def _point(values: Any, symbols: Sequence[sympy.Symbol], what: str) -> list[sympy.Expr]:
    if values is None:
        return list(symbols)
    items = [_entry(v, what) for v in (values.tolist() if hasattr(values, "tolist") else values)]
    if len(items) != len(symbols):
        raise ModelError(f"{what} must have {len(symbols)} entries, got {len(items)}", field=what)
    return items


def linearize_symbolic(
    robot: Manipulator,
    q0: Any = None,
    qd0: Any = None,
    tau0: Any = None,
    *,
    output: str | None = None,
    params: Params | None = None,
) -> LinearModel:
    """The symbolic A, B, C, D (sympy) for an arm of up to three joints: see :func:`linearize`.

    A21 = -adj(M) dID/dq / det M at qdd0 = adj(M) (tau0 - bias) / det M, A22 = -adj(M) dID/dqd / det M,
    B2 = adj(M) / det M; M, bias and their derivatives from the canonical Newton-Euler equations.
    """
    n = robot.nv
    if n > SYMBOLIC_MAX_JOINTS:
        raise DerivationError(
            f"a symbolic linearisation is offered for arms of up to {SYMBOLIC_MAX_JOINTS} joints; {robot.name} "
            f"has {n}: use linearize(..., symbolic=False) at a numeric operating point"
        )
    if not (output is None or (isinstance(output, str) and output in ("state", "q", "qd"))):
        raise ModelError("a symbolic linearisation offers the outputs state, q and qd", field="output")
    eqs = derive(robot, "newton-euler")
    s = eqs.symbols
    bias_se = sum_parts(eqs.canonical, BIAS_PARTS)
    M = sympy.Matrix(matrix_to_sympy(eqs.canonical("M")))
    bias = sympy.Matrix(matrix_to_sympy(bias_se))
    qdd = sympy.Matrix(s.qdd)
    d_qd = bias.jacobian(s.qd)
    point = dict(zip(s.q, _point(q0, s.q, "q0"), strict=True))
    point.update(zip(s.qd, _point(qd0, s.qd, "qd0"), strict=True))
    values = {sympy.Symbol(str(k)): _entry(v, f"params[{k!r}]") for k, v in (params or {}).items()}
    point.update(values)

    def at(matrix: sympy.Matrix) -> sympy.Matrix:
        return matrix.xreplace(point) if point else matrix

    M0, bias0 = at(M), at(bias)
    tau = sympy.Matrix(_point(tau0, tau_symbols(n), "tau0")).xreplace(values)
    adj = M0.adjugate(method="berkowitz")
    det = _tidy(M0.det(method="berkowitz"), s.q)
    N = (adj * (tau - bias0)).applyfunc(lambda x: _tidy(x, s.q))  # qdd0 = N / det
    # dID/dq at qdd0 = d(M qdd)/dq|_{qdd = N/det} + dbias/dq, so A21 = -adj (d(M qdd)/dq|_N + det dbias/dq) / det^2
    d_inertia = at((M * qdd).jacobian(s.q)).xreplace(dict(zip(s.qdd, N, strict=True)))
    d_q0 = d_inertia + det * at(bias.jacobian(s.q))
    shown = sympy.factor(det) if det.count_ops() < 2000 else det
    A = sympy.zeros(2 * n, 2 * n)
    A[:n, n:] = sympy.eye(n)
    A[n:, :n] = (-(adj * d_q0)).applyfunc(lambda x: _reduced(_tidy(x, s.q) / shown**2))
    A[n:, n:] = (-(adj * at(d_qd))).applyfunc(lambda x: _reduced(_tidy(x, s.q) / shown))
    qdd0 = N.applyfunc(lambda x: _reduced(x / shown))
    B = sympy.zeros(2 * n, n)
    B[n:, :] = adj.applyfunc(lambda x: _reduced(_tidy(x, s.q) / shown))
    C, D = _symbolic_output(n, output)
    return LinearModel(sympy.ImmutableMatrix(A), sympy.ImmutableMatrix(B), C, D,
                       list(point.get(x, x) for x in s.q), list(point.get(x, x) for x in s.qd),
                       list(tau), sympy.ImmutableMatrix(qdd0), output or "state")


def _reduced(expr: sympy.Expr, limit: int = 400) -> sympy.Expr:
    """A quotient with common factors cancelled, when it is small enough for sympy's cancel to be quick."""
    return sympy.cancel(expr) if expr.count_ops() <= limit else expr


def _tidy(expr: sympy.Expr, q: Sequence[sympy.Symbol]) -> sympy.Expr:
    """The canonical form of :mod:`robodyn.algebra` (expanded, sin of degree <= 1), back in sympy."""
    return to_sympy(canonical(to_se(expr), q))


def _symbolic_output(n: int, output: str | None) -> tuple[sympy.ImmutableMatrix, sympy.ImmutableMatrix]:
    eye, zero = sympy.eye(n), sympy.zeros(n, n)
    if output == "q":
        return sympy.ImmutableMatrix(sympy.Matrix.hstack(eye, zero)), sympy.ImmutableMatrix(zero)
    if output == "qd":
        return sympy.ImmutableMatrix(sympy.Matrix.hstack(zero, eye)), sympy.ImmutableMatrix(zero)
    return sympy.ImmutableMatrix(sympy.eye(2 * n)), sympy.ImmutableMatrix(sympy.zeros(2 * n, n))


def evaluate(model: LinearModel, values: Mapping[Any, float]) -> LinearModel:
    """A symbolic model with numbers substituted (``values``: names or symbols to numbers), as arrays."""
    mapping = {sympy.Symbol(k) if isinstance(k, str) else k: sympy.Float(v) for k, v in values.items()}

    def num(x: Any) -> np.ndarray:
        return np.array(sympy.Matrix(x).xreplace(mapping).evalf(), dtype=float)

    return LinearModel(num(model.A), num(model.B), num(model.C), num(model.D), num(model.q0).ravel(),
                       num(model.qd0).ravel(), num(model.tau0).ravel(), num(model.qdd0).ravel(), model.output)


# -- discrete time ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DiscreteModel:
    """x[k+1] = Ad x[k] + Bd u[k], y[k] = Cd x[k] + Dd u[k] with sample time ``dt``."""

    Ad: np.ndarray
    Bd: np.ndarray
    Cd: np.ndarray
    Dd: np.ndarray
    dt: float
    method: str


def discretize(
    A: np.ndarray | LinearModel,
    B: np.ndarray | None = None,
    dt: float = 0.01,
    method: str = "zoh",
    C: np.ndarray | None = None,
    D: np.ndarray | None = None,
) -> DiscreteModel:
    """The discrete-time model of dx/dt = A x + B u sampled every ``dt`` s (pass a :class:`LinearModel`
    or A and B). ``method``: ``"zoh"`` (input held over the step: Ad = e^{A dt}, Bd = int_0^dt e^{As} ds B,
    exact for a piecewise-constant input) or ``"euler"`` (Ad = I + A dt, Bd = B dt), by
    :func:`scipy.signal.cont2discrete`."""
    from scipy.signal import cont2discrete

    if isinstance(A, LinearModel):
        if A.symbolic:
            raise ModelError("discretize a numeric model (see linear.evaluate for a symbolic one)", field="A")
        model = A
        A, B, C, D = model.A, model.B, model.C, model.D
    if method not in DISCRETE_METHODS:
        raise ModelError(f"unknown method {method!r}; choose from {', '.join(DISCRETE_METHODS)}", field="method")
    _check_step(dt)
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    C = np.eye(A.shape[0]) if C is None else np.asarray(C, dtype=float)
    D = np.zeros((C.shape[0], B.shape[1])) if D is None else np.asarray(D, dtype=float)
    with np.errstate(all="ignore"):
        Ad, Bd, Cd, Dd, _ = cont2discrete((A, B, C, D), dt, method=method)
    if not (np.all(np.isfinite(Ad)) and np.all(np.isfinite(Bd))):
        raise ModelError(f"dt = {dt:g} s is too long for this model: Ad, Bd overflow (not finite); "
                         "use a shorter step", field="dt")
    return DiscreteModel(Ad, Bd, Cd, Dd, float(dt), method)


def _check_step(dt: float) -> None:
    if not 0 < dt < math.inf:
        raise ModelError(f"dt must be a positive, finite number of seconds, got {dt}", field="dt")


def rk4_step(
    robot: Manipulator,
    x: Sequence[float] | np.ndarray,
    tau: Sequence[float] | np.ndarray,
    dt: float,
    *,
    params: Params | None = None,
    engine: str = "auto",
) -> np.ndarray:
    """The discrete-time nonlinear model: x[k+1] from x[k] = (q, qd) by one classical Runge-Kutta step of
    length ``dt`` with tau held (local error O(dt^5))."""
    _check_step(dt)
    n = robot.nv
    state = _vector(x, 2 * n, "x")
    u = _vector(tau, n, "tau")
    dyn = dynamics(robot, bind_parameters(robot, params), engine)

    def f(z: np.ndarray) -> np.ndarray:
        return np.concatenate([z[n:], dyn.accelerations(z[:n], z[n:], u)])

    k1 = f(state)
    k2 = f(state + 0.5 * dt * k1)
    k3 = f(state + 0.5 * dt * k2)
    k4 = f(state + dt * k3)
    return state + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)

"""Base parameters: the minimal set of inertial parameters, by closed-form regrouping rules.

Not every standard parameter can be identified: some have no effect on tau, and some act only in fixed
combinations. The *base parameters* are those combinations (Khalil and Kleinfinger 1987, "Minimum operations
and minimum parameters of the dynamic models of tree structure robots", IEEE J. Robotics and Automation 3(6);
Gautier and Khalil 1990, "Direct calculation of minimum set of inertial parameters of serial robots", IEEE
Trans. Robotics and Automation 6(3); Khalil and Dombre, *Modeling, Identification and Control of Robots*, 2002,
ch. 9). They are found here by rules, as exact symbolic expressions of the standard parameters and the
geometry, and then cross-checked by the numerical rank of the regressor stacked over random states.

**Frames.** The rules need the frame of link j on its joint axis (z_j), i.e. Khalil's modified DH. A
standard-DH robot is described in modified DH first (:meth:`Manipulator.to_convention`); its standard
parameters are moved to those frames exactly (:func:`~robodyn.recursions.parameters.move`), so the base
parameters are still expressions of the parameters of :func:`~robodyn.identification.regressor.regressor` of the
robot as given. A fixed ``placement`` before a joint (URDF imports) is handled too: every rule below uses
only the fixed transform T_j of frame j at q_j = 0 in frame j-1 (P_j Rot(x, alpha_j) Trans(x, a_j)
Rot(z, theta_j) Trans(z, d_j)).

**Trees.** Khalil and Kleinfinger's rules are written for tree structures: link j's antecedent a(j)
(``robot.parents[j]``) takes the place of j - 1 everywhere below, T_j is frame j in frame a(j), and j runs from n
down to 1 (children are listed after their parents, so every link is done before its antecedent). On a chain
a(j) = j - 1 and everything below reads as written.

**General rules** (Khalil and Kleinfinger), for j = n, ..., 1 (Khalil's d_j, alpha_j, r_j are robodyn's
modified-DH ``a``, ``alpha``, ``d`` of row j; C, S = cos, sin alpha_j):

- *revolute joint j*: the part of link j that is symmetric about z_j, K_j = (XX = YY = YY_j, MZ_j, M_j), moves
  as if fixed to link j-1, so YY_j, MZ_j and M_j are grouped into link j-1 (moved by T_j) and
  XXR_j = XX_j - YY_j. Written out this is Khalil's table:
  XX_{j-1} += YY_j + 2 r_j MZ_j + r_j^2 M_j;  XY_{j-1} += d_j S (MZ_j + r_j M_j);
  XZ_{j-1} -= d_j C (MZ_j + r_j M_j);  YY_{j-1} += C^2 YY_j + 2 r_j C^2 MZ_j + (r_j^2 C^2 + d_j^2) M_j;
  YZ_{j-1} += C S (YY_j + 2 r_j MZ_j + r_j^2 M_j);  ZZ_{j-1} += S^2 YY_j + 2 r_j S^2 MZ_j + (r_j^2 S^2 + d_j^2) M_j;
  MX_{j-1} += d_j M_j;  MY_{j-1} -= S (MZ_j + r_j M_j);  MZ_{j-1} += C (MZ_j + r_j M_j);  M_{j-1} += M_j
  (checked symbolically against :func:`~robodyn.recursions.parameters.move` in
  tests/identification/test_identification.py).
- *prismatic joint j*: link j does not rotate relative to link j-1, so its whole inertia tensor is grouped into
  link j-1: J_{j-1} += R J_j R^T (R the rotation of T_j).
- Whatever is grouped into link 0 (the fixed base) has no effect.

**Links near the base** (Gautier and Khalil's particular cases; r1 = the first revolute joint, u its axis,
r2 = the first later revolute joint not parallel to u). On a tree, r1 and r2 are taken along the path from the
base to each link (its ancestors, ``robot.ancestors(j)``): every branch has its own r2 (a torso's two shoulders
are both r2 of the torso's r1), and branches that leave the base separately have their own r1; "joints before j"
below means the joints on that path. Each case only involves the wrench a link passes to its ancestors, so the
serial argument holds path by path:

- links j < r1 only translate: their tensor and first moments have no effect; M_j remains;
- links r1 <= j < r2 rotate about u only (omega_j = w_j u): of the tensor only u^T J u acts, so for a revolute
  link j only ZZ_j remains (XX_j, XY_j, XZ_j, YZ_j have no effect); the component of the first moment along u
  has no effect (for a prismatic link j in that range: MX, MY, MZ reduce to two combinations); if prismatic
  joint j slides along u, its first moment acts as if fixed to link j-1 (omega . (h x qd_j u) = 0 and the
  potential does not see the slide), so it is grouped into link j-1 (moved by T_j);
- the first moments perpendicular to u of a link r1 <= j < r2 have no effect when gravity is parallel to u, all
  prismatic joints up to j slide along u and O_j stays on the axis of r1 (for j = r1: MX_r1, MY_r1 vanish when
  gravity and every prismatic joint before r1 are along z_r1, e.g. the PUMA's vertical first axis);
- IA_r1 acts exactly as ZZ_r1 (both only multiply qdd_r1 in tau_r1): ZZR_r1 = ZZ_r1 + IA_r1; so do IA_r2 and
  ZZ_r2 when axis r2 is perpendicular to u (omega_dot_r2 . z_r2 = qdd_r2, and omega_r2 x ZZ qd_r2 z_r2 is
  perpendicular to both axes): ZZR_r2 = ZZ_r2 + IA_r2;
- a prismatic joint k < r1 perpendicular to gravity and to every earlier prismatic joint: the column of M_k is
  that of M_{k-1} plus that of IA_k, so M_{k-1} += M_k and IAR_k = IA_k + M_k.

The structural facts (which axes are parallel, where gravity points, whether an origin stays on an axis) are
decided on the geometry evaluated at random states, with random values for any geometry symbols (generic),
to a relative tolerance of 1e-9; the regrouping coefficients themselves are exact expressions.

Geometries beyond these rules (zero gravity, prismatic joints along a first axis with gravity across it,
coaxial or intersecting axes...) leave relations among the remaining parameters; these are found by the numerical
rank and made exact by linear algebra on the symbolic regressor (the residual step, the same on chains and trees).
Tree-specific particular cases beyond the path-wise ones above (if any) are left to that step too.

**Coupled coordinates** (mimic joints, gears, parallelograms, four-bars in closed form:
:mod:`robodyn.model.couplings`). The regressor is Y = W^T Y_tree (:mod:`~robodyn.identification.regressor`), with
n_v rows per state; the same two steps apply. The rules run on the kinematic *tree* (the links without their
couplings): its base parameters give tau_tree, so they give W^T tau_tree too. The couplings then add relations
among the tree's base parameters, found by the residual step on Y = W^T Y_tree: the columns are taken in the order
of the independent joints' links, then the coupled (passive) joints' links, and the first column that depends on
those before it is regrouped into them, so that a passive link's parameters fold into the actuated links' ones
wherever they can. The relations are numeric (the SVD's, coefficients within 1e-10 of a fraction of denominator
at most 1000 taken as that fraction: the ratios of the couplings, +-1); a coupled robot with symbolic geometry is
refused in one line, and so are implicit loops. What this gives on a parallelogram (q_crank2 = q_crank1,
q_coupler = -q_crank1, relative to the crank: ``fourbar_parallelogram``, 4 base parameters):

- the second crank turns with the first about a parallel axis: its ZZ, MX, MY, IA and FV add to the first
  crank's (ZZR1 = ZZ1 + ZZ3 + ..., MXR1 = MX1 + MX3 + ..., MYR1 = MY1 + MY3, FVR1 = FV1 + FV2 + FV3);
- the coupler does not rotate (its absolute angle is constant): its ZZ, MX, MY have no effect, its mass moves with
  the crank's tip, so it folds into the crank's first moment and inertia (MXR1 += a_1 M_coupler, ZZR1 +=
  a_1^2 M_coupler), and the coupler joint's armature and damping into the crank's (IA, FV through W);

on the KR 700 PA kind (``palletizer_kr700pa``, 32 base parameters for 8 links, 4 actuated joints) the same twice:
the parallel cranks' tensors add to the upper and lower arm's (XXR2 = XX2 + XX6 - YY2 - YY6 + ..., ZZR3 = ZZ3 + ZZ8
+ ...), the couplers' and the level-keeping wrist body's rotation about the horizontal axes has no effect (their
tensor acts through joint 1 only, in ZZR1) and their masses and first moments fold into the cranks' MX, ZZ and
into ZZR1. First moments of a passive link that no actuated link's parameter can take (MXR6, MY6 there) remain.

**Floating base** (``rd.load(path, floating=True)``: :mod:`~robodyn.identification.floating`). The base body is
link 0, its ten parameters XX0..M0 about the base origin first in Y (which has nv rows per state, the wrench on the
base first). It moves freely, so what the general rules group into "link 0" keeps its effect: for a link on the base,
YY_j, MZ_j, M_j (revolute joint) or its tensor (prismatic) are added to the base body's parameters, moved by T_j, and
all ten remain; and there are no particular cases near the base (no r1, r2: every joint sees the base's six
accelerations; Ayusawa, Venture and Nakamura 2014, "Identifiability and identification of inertial parameters using
the underactuated base-link dynamics for legged multibody systems"). So, on a generic geometry, 10 + 9 per revolute
joint + 6 per prismatic one (7 + 2 and 4 + 2): the numerical rank on Solo (82) and Solo12 (118). Relations beyond
the rules would come from the rank step with floating-point coefficients (no symbolic regressor of a floating robot
is built); with geometry symbols such a relation is refused in one line.

**Cross-check.** :meth:`BaseParameters.numerical_rank` stacks the numeric regressor over random states (random
values for symbolic geometry), scales its columns and counts singular values above 1e-9 of the largest
(Gautier 1991's numerical method); it must equal the number of base parameters, and the base columns alone
must have that rank.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np
import symengine as se
import sympy

from robodyn.algebra import matrix_to_sympy
from robodyn.errors import ModelError
from robodyn.identification import floating
from robodyn.identification.columns import check_physical, geometry_binding
from robodyn.identification.regressor import (
    inverse_dynamics_in_parameters,
    numeric_regressor,
    refuse_floating,
    refuse_implicit,
    refuse_symbolic_stiffness,
    regressor,
    symbolic_regressor,
)
from robodyn.model.dh import modified
from robodyn.model.manipulator import Manipulator
from robodyn.model.params import geometry_symbols, symbol_values
from robodyn.model.spatial import dh_transform, x_screw
from robodyn.numeric.kinematics import joint_frames
from robodyn.numeric.model import build
from robodyn.recursions import parameters as params_
from robodyn.symbols import joint_symbols

#: Relative tolerance of the structural tests (parallel axes, gravity direction, points on an axis).
TOLERANCE = 1e-9
#: Relative threshold on singular values for the numerical rank.
RANK_TOLERANCE = 1e-9

XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M = range(10)


def fixed_transform(robot: Manipulator, j: int) -> tuple[sympy.Matrix, sympy.Matrix]:
    """(R, t): frame j (0-based) at q_j = 0 in the frame of its parent link (j-1 on a chain) of a modified-DH robot,
    T_j = P_j Rot(x, alpha_j) Trans(x, a_j) Rot(z, theta_j) Trans(z, d_j)."""
    link = robot.links[j]
    R, t = dh_transform(link.alpha, link.a, link.theta, link.d)
    if link.has_placement:
        P = sympy.Matrix(link.placement)
        R, t = P[:3, :3] * R, P[:3, :3] * t + P[:3, 3]
    return R.applyfunc(sympy.expand), t.applyfunc(sympy.expand)


def _clean(expr: sympy.Expr) -> sympy.Expr:
    """Drop floating-point coefficients below 1e-12 (rounding of cos(pi/2) and the like)."""
    expr = sympy.expand(expr)
    if not expr.has(sympy.Float):
        return expr
    return expr.xreplace({f: 0 for f in expr.atoms(sympy.Float) if abs(f) < 1e-12})


@dataclass(frozen=True)
class _Structure:
    """The structural facts the particular rules need, from a numeric instance of the geometry. On a tree they
    are taken along the path from the base to each link: ``first[j]`` is the first revolute joint on that path
    (Khalil's r1 seen from link j; None if link j only translates) and ``second[j]`` the first later revolute joint
    on it whose axis is not parallel to that of first[j] (r2; None if there is none up to j). On a chain every
    link from r1 on has first[j] = r1, and every link from r2 on has second[j] = r2."""

    first: tuple[int | None, ...]
    second: tuple[int | None, ...]
    axes: np.ndarray  # (K, n, 3) joint axes in the base frame at K random states
    origins: np.ndarray  # (K, n, 3)
    gravity: np.ndarray  # (3,)

    @property
    def roots(self) -> tuple[int, ...]:
        """The links that are some path's r1 (one on a chain), in order."""
        return tuple(sorted({j for j in self.first if j is not None}))

    def block(self, r1: int) -> list[int]:
        """The links that rotate about the axis of r1 only (r1 <= j < r2 on a chain), in order."""
        return [j for j, (a, b) in enumerate(zip(self.first, self.second, strict=True)) if a == r1 and b is None]

    def seconds(self, r1: int) -> list[int]:
        """The r2 joints of the paths through r1 (at most one on a chain), in order."""
        return [j for j, (a, b) in enumerate(zip(self.first, self.second, strict=True)) if a == r1 and b == j]


def _tree(robot: Manipulator) -> Manipulator:
    """``robot``'s kinematic tree: its links without couplings or loops (the rules work on the tree)."""
    return robot.replace(couplings=(), loops=(), actuated=()) if robot.couplings else robot


def _rows(robot: Manipulator) -> int:
    """The rows of the regressor per state: the independent coordinates (n_v) of a coupled or floating robot (the
    base's six first), else n."""
    return robot.nv if robot.couplings or robot.floating else robot.n


def _structure(robot: Manipulator, seed: int = 7) -> _Structure:
    rng = np.random.default_rng(seed)
    binding = {s: float(rng.uniform(0.5, 1.5)) for s in geometry_symbols(robot)}
    model = build(robot, geometry_binding(robot, binding), check_bodies=False)  # inertial placeholders: 0
    Q = rng.uniform(-np.pi, np.pi, (6, robot.n))
    frames = joint_frames(model, Q)
    axes = frames.R[..., 2]
    first: list[int | None] = []
    second: list[int | None] = []
    for j, link in enumerate(robot.links):
        a = robot.parents[j]
        r1 = first[a] if a >= 0 else None
        r2 = second[a] if a >= 0 else None
        if r1 is None and link.revolute:
            r1 = j
        elif r1 is not None and r2 is None and link.revolute and not _parallel(axes[:, j], axes[:, r1]):
            r2 = j
        first.append(r1)
        second.append(r2)
    return _Structure(tuple(first), tuple(second), axes, frames.o, model.gravity)


def _parallel(a: np.ndarray, b: np.ndarray) -> bool:
    """a and b parallel at every sample (arrays (K, 3) or (3,))."""
    cross = np.cross(a, b)
    scale = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    return bool(np.all(np.linalg.norm(cross, axis=-1) <= TOLERANCE * np.maximum(scale, 1e-300)))


def _perpendicular(a: np.ndarray, b: np.ndarray) -> bool:
    scale = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    return bool(np.all(np.abs(np.sum(a * b, axis=-1)) <= TOLERANCE * np.maximum(scale, 1e-300)))


@dataclass(frozen=True, eq=False)
class GroupedLinks:
    """The per-link parameters after regrouping, for the cheapest inverse dynamics.

    ``links[j]`` = (XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M) of link j about the origin of link frame j of
    ``robot`` (the modified-DH description the rules work in: the robot itself if it is modified DH), as exact
    expressions of the standard parameters ``symbols`` of the robot as given; entries absorbed into other links
    or without effect are exactly 0. ``armature[j]``, ``damping[j]`` (and ``coulomb[j]``) are the joint terms
    IA, FV (FC) after regrouping. ``values`` holds the same with the robot's own parameter values substituted.

    A Newton-Euler pass in inertia-about-origin parameters
    (:func:`~robodyn.identification.regressor.inverse_dynamics_in_parameters`) over ``robot``'s geometry with
    these ten-vectors, plus IA_j qdd_j + FV_j qd_j, gives exactly the same tau as the original parameters
    (minus the tip load and the joint springs, which are no inertial parameters): :meth:`tau` does that.
    "Exactly" holds for exact or symbolic geometry (tests/identification/test_identification.py checks the canonical
    forms on puma560_symbolic and on random arms); with floating-point geometry, decisions such as "these axes are
    parallel" are taken to 1e-9 and the regrouped values are then exact to rounding.

    For a lean program: entries that are 0 here are structurally zero (skip them), and links whose ten
    entries are all 0 (e.g. link 1 of the PUMA except ZZ) need no wrench computation beyond those entries.
    """

    robot: Manipulator
    symbols: tuple[sympy.Symbol, ...]
    links: tuple[tuple[sympy.Expr, ...], ...]
    armature: tuple[sympy.Expr, ...]
    damping: tuple[sympy.Expr, ...]
    coulomb: tuple[sympy.Expr, ...] | None
    substitution: Mapping[sympy.Symbol, sympy.Expr] = field(repr=False)
    #: A floating robot's base body after regrouping (XX0 .. M0 with what its children's parameters brought), None
    #: for a fixed base.
    base: tuple[sympy.Expr, ...] | None = None

    @cached_property
    def values(self) -> tuple[tuple[sympy.Expr, ...], ...]:
        """``links`` with the robot's parameter values substituted (numbers or its own symbols)."""
        return tuple(tuple(sympy.expand(x.xreplace(self.substitution)) for x in link) for link in self.links)

    def tau(self, *, use_values: bool = True) -> sympy.ImmutableMatrix:
        """tau(q, qd, qdd) (without the tip load and the joint springs) from the grouped parameters, by Newton-Euler
        in inertia-about-origin parameters; ``use_values=False`` keeps the standard-parameter symbols."""
        refuse_floating(self.robot, "the symbolic tau of the grouped parameters")
        sub = self.substitution if use_values else {}
        links = [[x.xreplace(sub) for x in link] for link in self.links]
        rigid = inverse_dynamics_in_parameters(self.robot, links)
        _, qd, qdd = joint_symbols(self.robot.n).symengine()
        out = []
        for j, t in enumerate(rigid):
            extra = (se.sympify(self.armature[j].xreplace(sub)) * qdd[j]
                     + se.sympify(self.damping[j].xreplace(sub)) * qd[j])
            if self.coulomb is not None:
                extra += se.sympify(self.coulomb[j].xreplace(sub)) * se.sign(qd[j])
            out.append([t + extra])
        return matrix_to_sympy(se.DenseMatrix(out))


@dataclass(frozen=True)
class RankCheck:
    """The numerical cross-check: ``rank`` of the full regressor stacked over random states, the number of base
    parameters ``expected``, ``base_rank`` (rank of the base columns alone), all ``columns``, the scaled singular
    values, ``residual = |Y p - Y_b b(p)| / |Y p|`` for random standard parameters p (the expressions b(p) are
    right, not only their number), and ``ok`` when rank == base_rank == expected and the residual is below 1e-8."""

    rank: int
    expected: int
    base_rank: int
    columns: int
    singular_values: np.ndarray = field(repr=False)
    residual: float = 0.0

    @property
    def ok(self) -> bool:
        return self.rank == self.expected == self.base_rank and self.residual < 1e-8


def _rank(A: np.ndarray) -> tuple[int, np.ndarray]:
    norms = np.linalg.norm(A, axis=0)
    keep = norms > 1e-12 * max(float(norms.max(initial=0.0)), 1e-300)
    if not np.any(keep):
        return 0, np.zeros(0)
    s = np.linalg.svd(A[:, keep] / norms[keep], compute_uv=False)
    return int(np.sum(s > RANK_TOLERANCE * s[0])), s


@dataclass(frozen=True, eq=False)
class BaseParameters:
    """The base parameters of a robot (see the module docstring for the rules).

    - ``names``: e.g. ``("ZZR1", "XXR2", ...)``: a trailing ``R`` marks a regrouped parameter;
    - ``parameters``: column of exact expressions of the standard parameters ``symbols`` (those of
      :func:`~robodyn.identification.regressor.regressor` of ``robot``);
    - ``values``: the same for the robot's own values; ``regressor``: Y_b(q, qd, qdd) with
      tau = Y_b * parameters (+ the tip load and the joint springs);
    - ``frames``: the modified-DH description whose standard parameters Y_b's columns belong to;
      ``indices`` are those columns' positions; ``grouped``: :class:`GroupedLinks`; ``rules``: what was applied.
    """

    robot: Manipulator
    frames: Manipulator
    names: tuple[str, ...]
    parameters: sympy.ImmutableMatrix
    symbols: tuple[sympy.Symbol, ...]
    indices: tuple[int, ...]
    grouped: GroupedLinks
    rules: tuple[str, ...]
    coulomb: bool = False

    def __len__(self) -> int:
        return len(self.names)

    @cached_property
    def values(self) -> sympy.ImmutableMatrix:
        """The base parameters of the robot itself (numbers, or expressions of its symbols)."""
        return self.parameters.xreplace(self.grouped.substitution).applyfunc(sympy.expand)

    @cached_property
    def regressor(self) -> sympy.ImmutableMatrix:
        """Y_b(q, qd, qdd): the columns of the standard regressor of ``frames`` that carry the base parameters
        (symbolic: a floating robot's is refused in one line, :meth:`numeric_regressor` gives it)."""
        refuse_floating(self.robot, "the symbolic base regressor")
        Y = regressor(self.frames, coulomb=self.coulomb).Y
        return sympy.ImmutableMatrix.hstack(*[Y[:, k] for k in self.indices])

    def numeric_values(self, params: Mapping[Any, Any] | None = None) -> np.ndarray:
        """The base parameters of the robot as floats (``params`` binds its symbols)."""
        binding = symbol_values(params)
        check_physical(self.robot, binding)
        return np.array([float(x.xreplace(binding)) for x in self.values], dtype=float)

    def numeric_regressor(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, *,
                          params: Mapping[Any, Any] | None = None) -> np.ndarray:
        """Y_b at a batch of states: shape (N, n, len(self)) ((n, len(self)) for one state); a floating robot's:
        q (N, nq), qd and qdd (N, nv), shape (N, nv, len(self))."""
        Y = numeric_regressor(self.frames, q, qd, qdd, params=params, coulomb=self.coulomb)
        return Y[..., list(self.indices)]

    def numerical_rank(self, samples: int = 60, seed: int = 0, params: Mapping[Any, Any] | None = None) -> RankCheck:
        """Rank of the full standard regressor stacked over ``samples`` random states (geometry symbols at
        random values unless ``params`` binds them), against the number of base parameters."""
        rng = np.random.default_rng(seed)
        binding = dict(params or {})
        for s in sorted(geometry_symbols(self.frames) | geometry_symbols(self.robot), key=str):
            if s not in binding and s.name not in binding:
                binding[s] = float(rng.uniform(0.5, 1.5))
        n = _rows(self.robot)
        if self.robot.floating:
            q, qd, qdd = floating.random_states(self.robot, rng, samples)
        else:
            q = rng.uniform(-np.pi, np.pi, (samples, n))
            qd, qdd = rng.uniform(-2, 2, (samples, n)), rng.uniform(-3, 3, (samples, n))
        Y = numeric_regressor(self.frames, q, qd, qdd, params=binding, coulomb=self.coulomb).reshape(samples * n, -1)
        rank, s = _rank(Y)
        Y_b = Y[:, list(self.indices)]
        base_rank, _ = _rank(Y_b)
        # tau = Y p with the robot's own regressor and random standard parameters p, against Y_b b(p)
        p = rng.uniform(-1.0, 1.0, len(self.symbols))
        values = {**{sympy.Symbol(str(k)): v for k, v in binding.items()}, **dict(zip(self.symbols, p, strict=True))}
        b = np.array([float(x.xreplace(values)) for x in self.parameters], dtype=float)
        same = self.frames is self.robot  # a modified-DH robot is its own frames: Y is already its regressor
        Y_robot = Y if same else numeric_regressor(self.robot, q, qd, qdd, params=binding, coulomb=self.coulomb)
        tau = Y_robot.reshape(samples * n, -1) @ p
        residual = float(np.linalg.norm(tau - Y_b @ b) / max(float(np.linalg.norm(tau)), 1e-300))
        return RankCheck(rank, len(self.names), base_rank, Y.shape[1], s, residual)


def _initial(robot: Manipulator, frames: Manipulator, symbols: Sequence[sympy.Symbol], per: int) -> list[list[Any]]:
    """Standard-parameter symbols of ``robot`` re-expressed about the link frames of ``frames`` (its modified
    description): identity for a modified robot; for a standard one, link frame i = frame i of ``frames``
    moved by C_i = Trans(x, a_i) Rot(x, alpha_i) of the standard row."""
    out = []
    for k, link in enumerate(robot.links):
        values = list(symbols[k * per : k * per + 10])
        if robot.convention == "standard":
            R, t = x_screw(link.a, link.alpha)
            values = params_.move(values, R, list(t))
        out.append([sympy.expand(v) for v in values])
    return out


def _group(robot: Manipulator, coulomb: bool) -> tuple[Manipulator, list[list[Any]], list[list[Any]], list[str]]:
    """(frames, acc, joint, rules): the modified-DH frames, the ten inertial and the joint parameters per link after
    the rules, and the rules applied. A floating robot's base body comes first (link 0, no joint terms)."""
    frames = modified(robot) if robot.n else robot  # (a floating body alone: no link to convert)
    n, per = robot.n, params_.per_link(coulomb)
    symbols = params_.standard_symbols(n, coulomb)
    acc = _initial(robot, frames, symbols, per)
    joint = [list(symbols[k * per + 10 : k * per + per]) for k in range(n)]  # IA, FV (, FC)
    rules: list[str] = []
    zero = sympy.Integer(0)
    transforms = [fixed_transform(frames, j) for j in range(n)]
    shift = 1 if robot.floating else 0  # a floating robot's base body is acc[0]: it moves, and keeps what it takes
    if robot.floating:
        acc.insert(0, list(floating.floating_symbols(0)))  # the base body's XX0 .. M0
        joint.insert(0, [zero] * (per - 10))

    # -- general rules (Khalil and Kleinfinger), j = n .. 1 ------------------------------------------------
    for j in reversed(range(n)):
        link = frames.links[j]
        v = acc[j + shift]
        if link.revolute:
            K = [v[YY], zero, zero, v[YY], zero, zero, zero, zero, v[MZ], v[M]]
            what = f"YY{j + 1}, MZ{j + 1}, M{j + 1}"
        else:
            K = [v[XX], v[XY], v[XZ], v[YY], v[YZ], v[ZZ], zero, zero, zero, zero]
            what = f"the inertia tensor of link {j + 1}"
        acc[j + shift] = [_clean(a - b) for a, b in zip(v, K, strict=True)]
        if all(k == 0 for k in K):
            continue
        a = frames.parents[j]
        if a >= 0 or shift:
            _add_moved(acc, a + shift, K, transforms[j])
            rules.append(f"{what} grouped into link {a + 1}" + (" (the base body)" if a < 0 else ""))
        else:
            rules.append(f"{what} grouped into the base (no effect)")
    if robot.floating:  # no particular cases: the base moves freely (Ayusawa, Venture and Nakamura 2014)
        return frames, acc, joint, rules

    # -- links near the base (Gautier and Khalil's particular cases), along the path from the base to each link
    st = _structure(_tree(frames))
    for k in range(n):
        if st.first[k] is None:
            if any(acc[k][c] != 0 for c in range(9)):
                rules.append(f"link {k + 1} only translates: its first moments and tensor have no effect")
            acc[k][:9] = [zero] * 9
    for r1 in st.roots:
        _rotating_about_r1(frames, st, r1, transforms, acc, joint, rules)
    for k in reversed(range(n)):
        if st.first[k] is not None:
            continue
        uk = st.axes[0, k]
        a = frames.parents[k]
        if _perpendicular(uk, st.gravity) and all(_perpendicular(uk, st.axes[0, m]) for m in frames.ancestors(k)[1:]):
            mass = acc[k][M]
            if a >= 0:
                acc[a][M] = _clean(acc[a][M] + mass)
            joint[k][0] = _clean(joint[k][0] + mass)
            acc[k][M] = zero
            rules.append(f"M{k + 1} grouped into {'M' + str(a + 1) + ' and ' if a >= 0 else ''}IA{k + 1} "
                         f"(prismatic joint {k + 1} perpendicular to gravity and to the joints before it)")
    return frames, acc, joint, rules


def _add_moved(acc: list[list[Any]], a: int, K: list[Any], transform: tuple[sympy.Matrix, sympy.Matrix]) -> None:
    """acc[a] += K moved from frame j into frame a = a(j) by T_j = (R, t) (:func:`params_.move`)."""
    R, t = transform
    moved = params_.move(K, R, list(t))
    acc[a] = [_clean(x + y) for x, y in zip(acc[a], moved, strict=True)]


def _rotating_about_r1(frames: Manipulator, st: _Structure, r1: int,
                       transforms: Sequence[tuple[sympy.Matrix, sympy.Matrix]], acc: list[list[Any]],
                       joint: list[list[Any]], rules: list[str]) -> None:
    """Gautier and Khalil's particular cases for the links that rotate about the axis u of joint r1 only (r1 <= j
    < r2 on every path through r1) and for the r2 joints after them (see the module docstring)."""
    zero = sympy.Integer(0)
    g = st.gravity
    u = st.axes[:, r1]
    g_along = float(np.linalg.norm(g)) == 0.0 or _parallel(g[None, :], u)
    block = st.block(r1)
    u_locals = {r1: sympy.Matrix([0, 0, 1])}  # u in frame j: R_j^T u in frame a(j)
    for j in block[1:]:
        u_locals[j] = (transforms[j][0].T * u_locals[frames.parents[j]]).applyfunc(_clean)
    for j in reversed(block[1:]):
        if not frames.links[j].revolute and _parallel(st.axes[:, j], u):
            _drop_along(acc[j], u_locals[j], rules, j)
            K = [zero] * 6 + [acc[j][MX], acc[j][MY], acc[j][MZ], zero]
            if any(k != 0 for k in K):
                a = frames.parents[j]
                _add_moved(acc, a, K, transforms[j])
                acc[j][MX] = acc[j][MY] = acc[j][MZ] = zero
                rules.append(f"MX{j + 1}, MY{j + 1} grouped into link {a + 1} (prismatic joint {j + 1} slides "
                             f"along the axis of joint {r1 + 1})")
                k = a
                while not frames.links[k].revolute:  # the moved moment brought a tensor: group it down
                    K = acc[k][:6] + [zero] * 4
                    acc[k][:6] = [zero] * 6
                    _add_moved(acc, frames.parents[k], K, transforms[k])
                    k = frames.parents[k]
    for j in block:
        link = frames.links[j]
        if link.revolute:
            removed = [c for c in (XX, XY, XZ, YY, YZ) if acc[j][c] != 0]
            if removed:
                rules.append(f"link {j + 1} rotates about the axis of joint {r1 + 1} only: "
                             f"{', '.join(params_.INERTIAL[c] + str(j + 1) for c in removed)} have no effect")
            for c in (XX, XY, XZ, YY, YZ):
                acc[j][c] = zero
        elif j > r1:
            _drop_along(acc[j], u_locals[j], rules, j)
        prismatic_along = all(
            _parallel(st.axes[:, k], u) for k in frames.ancestors(j) if not frames.links[k].revolute
        )
        offset = np.cross(st.origins[:, j] - st.origins[:, r1], u)
        on_axis = bool(np.all(np.linalg.norm(offset, axis=-1) <= TOLERANCE * max(1.0, np.abs(st.origins).max())))
        if g_along and prismatic_along and on_axis and any(acc[j][c] != 0 for c in (MX, MY, MZ)):
            rules.append(f"MX{j + 1}, MY{j + 1} have no effect (gravity and translations along the axis of "
                         f"joint {r1 + 1}, origin {j + 1} on it)")
            acc[j][MX] = acc[j][MY] = acc[j][MZ] = zero
    acc[r1][ZZ] = _clean(acc[r1][ZZ] + joint[r1][0])
    joint[r1][0] = zero
    rules.append(f"IA{r1 + 1} grouped into ZZ{r1 + 1} (both only multiply qdd{r1 + 1} in tau{r1 + 1})")
    for r2 in st.seconds(r1):
        if _perpendicular(st.axes[:, r2], u):
            acc[r2][ZZ] = _clean(acc[r2][ZZ] + joint[r2][0])
            joint[r2][0] = zero
            rules.append(f"IA{r2 + 1} grouped into ZZ{r2 + 1} (axis {r2 + 1} perpendicular to axis {r1 + 1}: "
                         f"both only multiply qdd{r2 + 1} in tau{r2 + 1})")


def _drop_along(v: list[Any], u: sympy.Matrix, rules: list[str], j: int) -> None:
    """Remove the component of the first moment (v[MX:MZ]) along u, which has no effect: h -> h - (h_k/u_k) u
    with k the largest component of u."""
    numeric = [abs(complex(sympy.N(x.subs({s: 1 for s in x.free_symbols}))) ) for x in u]
    k = int(np.argmax(numeric))
    h = [v[MX], v[MY], v[MZ]]
    if h[k] == 0:
        return
    ratio = [u[i] / u[k] for i in range(3)]  # kept as quotients of sines and cosines (canonical form)
    new = [_clean(h[i] - ratio[i] * h[k]) if i != k else sympy.Integer(0) for i in range(3)]
    v[MX], v[MY], v[MZ] = new
    rules.append(f"{('MX', 'MY', 'MZ')[k]}{j + 1} has no effect along the rotation axis: regrouped into "
                 f"the other first moments of link {j + 1}")


def _entry(acc: list[list[Any]], joint: list[list[Any]], e: int, per: int) -> Any:
    k, c = divmod(e, per)
    return acc[k][c] if c < 10 else joint[k][c - 10]


def _set_entry(acc: list[list[Any]], joint: list[list[Any]], e: int, per: int, value: Any) -> None:
    k, c = divmod(e, per)
    if c < 10:
        acc[k][c] = value
    else:
        joint[k][c - 10] = value


def _exact_relation(Y: se.DenseMatrix, columns: list[int], d: int, n: int) -> dict[int, sympy.Expr] | None:
    """Exact coefficients c (c_d = 1) with sum c_i Y[:, i] = 0 over ``columns``, from the coefficients of the
    canonical monomials in sin q, cos q, qd, qdd (linearly independent functions), or None."""
    js = joint_symbols(n)
    gens = [f(x) for x in js.q for f in (sympy.sin, sympy.cos)] + list(js.qd) + list(js.qdd)
    gens += [sympy.sign(x) for x in js.qd]
    rows: dict[tuple[int, tuple[int, ...]], dict[int, sympy.Expr]] = {}
    for col, e in enumerate(columns):
        for i in range(n):
            expr = _clean(sympy.sympify(Y[i, e]))
            expr = expr.xreplace({f: sympy.Rational(f) for f in expr.atoms(sympy.Float)})  # exactly the same number
            if expr == 0:
                continue
            for monom, coeff in sympy.Poly(expr, *gens).terms():
                rows.setdefault((i, monom), {})[col] = coeff
    A = sympy.Matrix([[row.get(c, 0) for c in range(len(columns))] for row in rows.values()])
    d_col = columns.index(d)
    for v in A.nullspace(simplify=True):
        if v[d_col] != 0:
            v = v / v[d_col]
            return {e: _float_back(sympy.simplify(v[c])) for c, e in enumerate(columns) if e != d and v[c] != 0}
    return None


def _snapped(c: float) -> sympy.Expr:
    """A coupled robot's relation coefficient: the nearest fraction of denominator at most 1000 where it is within
    1e-10 (relative) of ``c`` (the ratios of its couplings, 1 and -1, and the like), else ``c`` as a Float."""
    r = Fraction(c).limit_denominator(1000)
    return sympy.Rational(r.numerator, r.denominator) if abs(r - Fraction(c)) <= 1e-10 * max(1.0, abs(c)) \
        else sympy.Float(c)


def _float_back(expr: sympy.Expr) -> sympy.Expr:
    """Rationals that came from floating-point data (huge denominators) shown as Floats again."""
    return expr.xreplace({r: sympy.Float(r, 17) for r in expr.atoms(sympy.Rational) if r.q > 10**9})


def _residual(frames: Manipulator, acc: list[list[Any]], joint: list[list[Any]], rules: list[str],
              coulomb: bool) -> None:
    """Relations the rules miss (special geometries: zero gravity, coaxial or intersecting axes with prismatic
    joints...): found by the numerical rank, then made exact by linear algebra on the canonical monomial
    coefficients of the symbolic regressor when the geometry is exact or symbolic, or taken from the SVD (to
    rounding) when it is floating point. Each relation sum c_i col_i = 0 (c_d = 1) regroups p_i -= c_i p_d.
    A floating robot (its base body acc[0]) takes them from the SVD (:func:`_floating_residual`)."""
    n, per = frames.n, params_.per_link(coulomb)
    rng = np.random.default_rng(11)
    binding = {s: float(rng.uniform(0.5, 1.5)) for s in geometry_symbols(frames)}
    if frames.floating:
        _floating_residual(frames, acc, joint, rules, coulomb, rng, binding)
        return
    N, rows = 60, _rows(frames)
    q = rng.uniform(-np.pi, np.pi, (N, rows))
    Y = numeric_regressor(frames, q, rng.uniform(-2, 2, (N, rows)), rng.uniform(-3, 3, (N, rows)), params=binding,
                          coulomb=coulomb).reshape(N * rows, -1)
    geometry = [x for link in frames.links for x in (link.a, link.alpha, link.d, link.theta, *link.placement)]
    data = [sympy.sympify(x) for x in [*geometry, *frames.gravity]]
    # exact linear algebra whenever the geometry has symbols (floats in it are taken as the exact binary numbers
    # they are), or has no floats; the SVD's floating-point relation only for all-numeric floating-point geometry,
    # where it is exact to rounding (a symbol at a random value would be baked into the relation)
    exact = any(x.free_symbols for x in data) or not any(x.has(sympy.Float) for x in data)
    exact = exact and not frames.couplings  # coupled: the SVD's relation (numeric geometry, base_parameters)
    symbolic: list[se.DenseMatrix] = []
    labels = params_.INERTIAL + params_.joint_names(coulomb)

    def relation_of(A: np.ndarray, live: list[int], independent: list[int], d: int) -> tuple[int, dict[int, Any],
                                                                                           str]:
        if frames.couplings:  # fold the coupled (passive) links' parameters into the independent links' ones
            independent, d = _passive_first(A, live, frames, per, (independent, d))
        coef, involved = _dependence(Y, independent, d)
        relation: dict[int, Any] | None
        if exact:
            if not symbolic:
                symbolic.append(symbolic_regressor(frames, coulomb))
            relation = _exact_relation(symbolic[0], [*involved, d], d, n)
            if relation is None:
                raise RuntimeError(f"no exact relation found for {labels[d % per]}{d // per + 1}")
        else:
            relation = {e: -float(c) for e, c in zip(independent, coef, strict=True) if e in involved}
            if frames.couplings:
                relation = {e: _snapped(c) for e, c in relation.items()}
        return d, relation, "exact" if exact else "floating point"

    _regroup_by_rank(Y, acc, joint, rules, per, 1, relation_of)


def _dependence(Y: np.ndarray, independent: list[int], d: int) -> tuple[np.ndarray, list[int]]:
    """Column d of Y in terms of the ``independent`` ones: the least-squares coefficients and the columns whose
    part is not negligible (1e-9 of column d)."""
    coef, *_ = np.linalg.lstsq(Y[:, independent], Y[:, d], rcond=None)
    involved = [e for e, c in zip(independent, coef, strict=True)
                if abs(c) * np.linalg.norm(Y[:, e]) > 1e-9 * np.linalg.norm(Y[:, d])]
    return coef, involved


def _regroup_by_rank(Y: np.ndarray, acc: list[list[Any]], joint: list[list[Any]], rules: list[str], per: int,
                     first: int, relation_of: Any) -> None:
    """The residual step on Y (stacked states; column e = per k + c belongs to entry c of acc[k] or joint[k]):
    zero columns have no effect; while the live columns are rank deficient, the first dependent one d (pivoted QR)
    is regrouped, p_i -= c_i p_d, by ``relation_of(A, live, independent, d)`` -> (d, {i: c_i}, how). Entry k is
    named with the number k + ``first``."""
    import scipy.linalg

    labels = params_.INERTIAL + params_.joint_names(per == params_.per_link(True))
    for _ in range(per * len(acc)):
        live = [e for e in range(per * len(acc)) if _entry(acc, joint, e, per) != 0]
        A = Y[:, live]
        norms = np.linalg.norm(A, axis=0)
        dead = [e for e, x in zip(live, norms, strict=True) if x <= 1e-12 * max(float(norms.max()), 1e-300)]
        if dead:  # no effect at all (a zero column)
            for e in dead:
                _set_entry(acc, joint, e, per, sympy.Integer(0))
            rules.append("no effect (special geometry): "
                         + ", ".join(f"{labels[e % per]}{e // per + first}" for e in dead))
            continue
        A = A / norms
        _, R, piv = scipy.linalg.qr(A, mode="economic", pivoting=True)
        diag = np.abs(np.diag(R))
        rank = int(np.sum(diag > RANK_TOLERANCE * diag[0]))
        if rank == len(live):
            return
        d, relation, how = relation_of(A, live, [live[k] for k in piv[:rank]], live[piv[rank]])
        value = _entry(acc, joint, d, per)
        for e, c in relation.items():
            _set_entry(acc, joint, e, per, _clean(_entry(acc, joint, e, per) - c * value))
        _set_entry(acc, joint, d, per, sympy.Integer(0))
        name = f"{labels[d % per]}{d // per + first}"
        others = ", ".join(f"{labels[e % per]}{e // per + first}" for e in relation)
        rules.append(f"{name} grouped into {others} (special geometry: relation found by rank, {how})")


def _floating_columns(n: int, per: int) -> list[int]:
    """The position in a floating robot's Y (base body's ten columns, then per columns per link) of each entry
    e = per k + c of acc/joint (k = 0 the base body, whose joint entries have no column: -1)."""
    return [c if c < 10 else -1 for c in range(per)] + [10 + e for e in range(per * n)]


def _floating_residual(frames: Manipulator, acc: list[list[Any]], joint: list[list[Any]], rules: list[str],
                       coulomb: bool, rng: np.random.Generator, binding: Mapping[sympy.Symbol, float]) -> None:
    """The residual step of a floating robot (the base body as entry 0): Y of random states (random geometry
    values), the base body's empty joint entries as zero columns, relations from the SVD (floating point). Where
    the geometry has symbols a relation would hold one value of them: refused in one line."""
    n, per, N = frames.n, params_.per_link(coulomb), 60
    q, v, a = floating.random_states(frames, rng, N)
    Y_f = numeric_regressor(frames, q, v, a, params=binding, coulomb=coulomb).reshape(N * frames.nv, -1)
    Y = np.zeros((Y_f.shape[0], per * (n + 1)))
    for e, column in enumerate(_floating_columns(n, per)):
        if column >= 0:
            Y[:, e] = Y_f[:, column]
    labels = params_.INERTIAL + params_.joint_names(coulomb)

    def relation_of(A: np.ndarray, live: list[int], independent: list[int], d: int) -> tuple[int, dict[int, Any],
                                                                                           str]:
        if frames.couplings:  # fold the coupled (passive) links' parameters into the others
            independent, d = _passive_first(A, live, frames, per, (independent, d), shift=1)
        if binding:
            raise ModelError(f"{frames.name}: floating base with symbolic geometry: "
                             f"{labels[d % per]}{d // per} depends on other parameters beyond the rules; "
                             "bind the geometry symbols first", field="params")
        coef, involved = _dependence(Y, independent, d)
        relation = {e: -float(c) for e, c in zip(independent, coef, strict=True) if e in involved}
        return d, {e: _snapped(c) for e, c in relation.items()} if frames.couplings else relation, \
            "floating point"

    _regroup_by_rank(Y, acc, joint, rules, per, 0, relation_of)


def _passive_first(A: np.ndarray, live: list[int], frames: Manipulator, per: int,
                   pivoted: tuple[list[int], int], shift: int = 0) -> tuple[list[int], int]:
    """For a coupled robot: the first column that depends on those before it, the columns taken in the order of the
    independent joints' links, then the coupled joints' links (link order, then parameter order), and the columns
    before it; so a relation regroups a coupled link's parameter into the others where one is involved. ``A`` is
    ``live``'s columns, unit norm; the pivoted QR's choice where no column is dependent to 1e-8 in that order.
    ``shift``: entries of link k are at k + shift (1: a floating robot's base body is entry 0)."""
    import scipy.linalg

    coupled = {int(c.joint) + shift for c in frames.couplings}
    order = sorted(range(len(live)), key=lambda k: (live[k] // per in coupled, live[k]))
    R = scipy.linalg.qr(A[:, order], mode="r")[0]
    small = np.flatnonzero(np.abs(np.diag(R)) <= 1e-8)
    if not small.size:
        return pivoted
    k = int(small[0])
    return [live[i] for i in order[:k]], live[order[k]]


def grouped_links(robot: Manipulator, *, coulomb: bool = False) -> GroupedLinks:
    """The per-link ten-vectors after Khalil and Kleinfinger's regrouping (see :class:`GroupedLinks` and the
    module docstring): the input of the cheapest inverse-dynamics program."""
    return base_parameters(robot, coulomb=coulomb).grouped


def base_parameters(robot: Manipulator, *, coulomb: bool = False) -> BaseParameters:
    """The base parameters of ``robot`` by closed-form rules (see the module docstring)."""
    if not isinstance(robot, Manipulator):
        raise TypeError(f"base_parameters() expects a Manipulator, got {type(robot).__name__}")
    refuse_implicit(robot, "base parameters (identification)")
    if robot.couplings and geometry_symbols(robot):
        raise ModelError(f"base parameters of a robot with coupled joints need numeric geometry ({robot.name}: "
                         f"bind {', '.join(sorted(s.name for s in geometry_symbols(robot)))} first)",
                         field="couplings")
    params_.check_no_clash(robot, coulomb)
    refuse_symbolic_stiffness(robot, "base parameters (identification)")
    if robot.floating:
        robot.check_one_dof("identification")
    frames, acc, joint, rules = _group(robot, coulomb)
    _residual(frames, acc, joint, rules, coulomb)
    n, per = robot.n, params_.per_link(coulomb)
    if robot.floating:  # the base body is entry 0, link k entry k (numbered 0, 1, ...); Y's columns: base body first
        symbols = floating.floating_symbols(n, coulomb)
        columns, first = _floating_columns(n, per), 0
        values = floating.standard_values(robot, coulomb)
    else:
        symbols = params_.standard_symbols(n, coulomb)
        columns, first = list(range(per * n)), 1
        values = params_.standard_values(robot, coulomb)
    names, exprs, indices = [], [], []
    labels = params_.INERTIAL + params_.joint_names(coulomb)
    for k in range(len(acc)):
        entries = list(acc[k]) + list(joint[k])
        for c, expr in enumerate(entries):
            if expr == 0:
                continue
            column = columns[k * per + c]
            plain = expr == symbols[column]
            names.append(f"{labels[c]}{'' if plain else 'R'}{k + first}")
            exprs.append(expr)
            indices.append(column)
    substitution = dict(zip(symbols, values, strict=True))
    links = acc[1:] if robot.floating else acc
    joints = joint[1:] if robot.floating else joint
    grouped = GroupedLinks(
        robot=frames,
        symbols=symbols,
        links=tuple(tuple(v) for v in links),
        armature=tuple(j[0] for j in joints),
        damping=tuple(j[1] for j in joints),
        coulomb=tuple(j[2] for j in joints) if coulomb else None,
        substitution=substitution,
        base=tuple(acc[0]) if robot.floating else None,
    )
    return BaseParameters(robot, frames, tuple(names), sympy.ImmutableMatrix(exprs), symbols, tuple(indices),
                          grouped, tuple(rules), coulomb)

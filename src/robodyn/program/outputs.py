"""The one vocabulary of robodyn's names: what a Program outputs, its routes, the code generator's routines and
languages, the derivation methods and the forms of the equations.

Every list that the command line offers as a choice is built from here (:mod:`robodyn.cli`), as are the program's
(:mod:`robodyn.program`, :mod:`robodyn.program.routes`) and the code generator's (:mod:`robodyn.codegen.spec`,
:mod:`robodyn.codegen`), so that no command offers a name the API lacks.

This module imports nothing but the standard library (no sympy, symengine or NumPy): the command line builds its
choices from it at start-up, and ``robodyn --help`` stays quick (:mod:`robodyn.program` loads its routes only when
a program is built).

Where each name is defined: the program's outputs and routes and the code generator's kinds and languages are
*defined* here (their consumers, program and codegen, sit at this layer or above and import them). The
derivation methods (:data:`robodyn.formulations.METHODS`) and the forms of the equations
(:data:`robodyn.equations.FORMS`) belong to lower layers, which cannot import the program package, and whose
modules load symengine and sympy: they keep their own definition, and :data:`METHODS`, :data:`METHOD_ALIASES`,
:data:`METHOD_SPELLINGS` and :data:`FORMS` restate them here for the command line; a test
(``tests/program/test_outputs.py``) asserts that the two agree, name for name and in order.
"""

from __future__ import annotations

from dataclasses import dataclass

# --- the Program (robodyn.program.build) ---------------------------------------------------------------------

#: The parts the shared-builder routes produce (:mod:`robodyn.program.routes`); ``forward`` is made of M and bias.
PARTS = ("tau", "M", "h", "G", "bias")

#: The derivatives of the dynamics (n*n row-major each, entry [i*n + j] = d out_i / d in_j): of the inverse
#: dynamics tau(q, qd, qdd) with respect to q and qd (with respect to qdd it is M), and of the forward dynamics
#: qdd(q, qd, tau) with respect to q, qd and tau (M^-1). Always by the recursions
#: (:func:`robodyn.program.routes.derivative_outputs`).
DERIVATIVES = ("dtau_dq", "dtau_dqd", "dqdd_dq", "dqdd_dqd", "dqdd_dtau")
#: The derivatives built (and generated, and counted) together: those of the inverse and of the forward dynamics.
DERIVATIVE_GROUPS: dict[str, tuple[str, ...]] = {"dtau": DERIVATIVES[:2], "dqdd": DERIVATIVES[2:]}

#: What :func:`robodyn.program.build` can produce: the parts of tau = M qdd + h + G + damping + spring + load,
#: ``bias`` = tau at qdd = 0 (h + G + damping + spring + load; the joint springs in tau and bias, not in h or G),
#: ``forward`` = qdd = M^-1 (tau - bias),
#: ``elements``: Burdick's distinct M_ij, c_ijj, b_ijk, g_i (one output each, named M12, c211, ...), and the
#: derivatives :data:`DERIVATIVES` (dtau_dq, dtau_dqd, dqdd_dq, dqdd_dqd, dqdd_dtau), and for a floating base the
#: centroidal outputs :data:`CENTROIDAL_OUTPUTS`.
#: The centroidal outputs of a floating-base robot (:mod:`robodyn.program.centroidal`): the centre of mass (3), its
#: Jacobian (3 x nv), the centroidal momentum matrix A_G (6 x nv) and the centroidal bias dA_G/dt v (6), Pinocchio's.
CENTROIDAL_OUTPUTS = ("com", "com_jacobian", "centroidal_map", "centroidal_bias")
OUTPUTS = ("tau", "M", "h", "G", "bias", "forward", "elements", *DERIVATIVES, *CENTROIDAL_OUTPUTS)

#: The kinematics of a named frame (:mod:`robodyn.model.frames`; the tool frame by default): its pose (4x4, row-major),
#: its Jacobian (6 x n row-major, rows (v; omega), columns the independent coordinates) in the three references of
#: Pinocchio (``jacobian``: local_world_aligned, v the velocity of the frame's origin and omega, in the base frame;
#: ``jacobian_world``: world, the spatial velocity; ``jacobian_local``: local, in the frame's own axes), and the
#: time derivative of each (``jacobian_dot``, ...: dJ/dt at (q, qd)). A Program output of one of these for the frame
#: ``F`` is named ``"pose:F"`` (:func:`frame_output`); the name alone is the tool frame's. On a floating base the pose
#: and the axes are the world's and the Jacobians have nv columns, the base's six along its body-frame twist
#: (Pinocchio's ``getFrameJacobian``: :mod:`robodyn.program.frames`).
FRAME_OUTPUTS = ("pose", "jacobian", "jacobian_world", "jacobian_local", "jacobian_dot", "jacobian_world_dot",
                 "jacobian_local_dot")
#: The reference frame of each Jacobian output (:data:`robodyn.numeric.kinematics.REFERENCES`).
FRAME_REFERENCES = {"jacobian": "local_world_aligned", "jacobian_world": "world", "jacobian_local": "local"}
#: Between an output of :data:`FRAME_OUTPUTS` and the frame's name in a Program output's name.
FRAME_SEPARATOR = ":"


def frame_output(output: str, frame: str | None) -> str:
    """The Program output ``output`` (of :data:`FRAME_OUTPUTS`) of the named frame ``frame`` (None or "": the
    tool frame): ``"jacobian:panda_hand"``, or ``"jacobian"``."""
    return f"{output}{FRAME_SEPARATOR}{frame}" if frame else output


def split_frame_output(name: str) -> tuple[str, str | None]:
    """(output, frame) of a Program output's name: ``("jacobian", "panda_hand")`` for ``"jacobian:panda_hand"``,
    ``("pose", None)`` for ``"pose"``; the frame None for any other name."""
    output, separator, frame = name.partition(FRAME_SEPARATOR)
    return (output, frame or None) if separator else (name, None)


def is_frame_output(name: str) -> bool:
    """Whether ``name`` is a frame's output (:data:`FRAME_OUTPUTS`, with or without a frame)."""
    return split_frame_output(name)[0] in FRAME_OUTPUTS


#: What :func:`robodyn.program.targets.count_summary` counts: every output of :data:`OUTPUTS` and the derivative
#: groups of :data:`DERIVATIVE_GROUPS` (each built as one program).
COUNTABLE = (*OUTPUTS, *DERIVATIVE_GROUPS)

#: The routes :func:`robodyn.program.build` knows (see :mod:`robodyn.program.routes`); ``aba``: forward dynamics
#: by Featherstone's articulated-body algorithm, any other part by the customised recursions.
ROUTES = ("recursive", "factored", "expanded", "emdeg", "aba")
#: The route that lets :func:`robodyn.program.build` pick the cheapest, part by part.
AUTO = "auto"

#: How ``forward`` can be made: from M and bias by L D L^T, or by the articulated-body algorithm.
FORWARD_ROUTES = ("ldlt", "aba")
#: The names of the two ways to ``forward`` in :attr:`robodyn.program.Program.candidates` and ``robodyn count``.
LDLT, ABA = "LDL^T", "ABA"


# --- the code generator (robodyn.codegen) ---------------------------------------------------------------------

#: The languages of :func:`robodyn.codegen.generate`.
LANGUAGES = ("c", "fortran", "numpy", "jax")


@dataclass(frozen=True)
class Kind:
    """One routine: its name, its ``--outputs`` key, the Program outputs it needs, its arguments."""

    name: str
    key: str
    parts: tuple[str, ...]
    inputs: tuple[str, ...]
    output: str
    summary: str


#: The routines of a generated module (:mod:`robodyn.codegen.spec`), in the order they are generated.
KINDS: tuple[Kind, ...] = (
    Kind("inverse_dynamics", "tau", ("tau",), ("q", "qd", "qdd"), "tau",
         "tau = M(q) qdd + h(q, qd) + G(q) + damping + load"),
    Kind("mass_matrix", "M", ("M",), ("q",), "M", "M(q), the joint-space inertia matrix (armature on its diagonal)"),
    Kind("mass_matrix_packed", "M_packed", ("M",), ("q",), "Mp",
         "M(q)'s upper triangle row by row, n(n+1)/2 entries: M[np.triu_indices(n)] (LAPACK's lower packed storage "
         "of the symmetric M, as dpptrf takes it with uplo 'L')"),
    Kind("coriolis", "h", ("h",), ("q", "qd"), "h", "h(q, qd): Coriolis and centrifugal torques"),
    Kind("bias_forces", "bias", ("bias",), ("q", "qd"), "bias", "h + G + damping + load: tau at qdd = 0"),
    Kind("gravity", "G", ("G",), ("q",), "G", "G(q): the torques that hold the arm against gravity"),
    Kind("forward_dynamics", "forward", ("forward",), ("q", "qd", "tau"), "qdd",
         "qdd solving M(q) qdd = tau - bias(q, qd), by a generated LDL^T (Cholesky) solve"),
    Kind("inverse_dynamics_derivatives", "dtau", DERIVATIVE_GROUPS["dtau"], ("q", "qd", "qdd"), "dtau",
         "dtau[0] = dtau/dq, dtau[1] = dtau/dqd (row i: joint i's torque), by forward-mode differentiation of "
         "the Newton-Euler recursion or Carpentier and Mansard's analytic recursion, the cheaper (dtau/dqdd = M)"),
    Kind("forward_dynamics_derivatives", "dqdd", DERIVATIVE_GROUPS["dqdd"], ("q", "qd", "tau"), "dqdd",
         "dqdd[0] = dqdd/dq, dqdd[1] = dqdd/dqd, dqdd[2] = dqdd/dtau = M^-1, from the inverse dynamics' "
         "derivatives at qdd: dqdd/dx = -M^-1 dtau/dx"),
    # the named frames' kinematics (FRAME_OUTPUTS): one routine per output, every compiled frame in it
    Kind("frame_pose", "pose", ("pose",), ("q",), "pose",
         "pose[f] (4 x 4): the homogeneous transform of frame f in the base frame"),
    Kind("frame_jacobian", "jacobian", ("jacobian",), ("q",), "jac",
         "jac[f] (6 x n): frame f's Jacobian, rows (v; omega), v the velocity of its origin and omega, in the base "
         "frame (local_world_aligned)"),
    Kind("frame_jacobian_world", "jacobian_world", ("jacobian_world",), ("q",), "jac_world",
         "jac_world[f] (6 x n): frame f's spatial Jacobian, rows (v; omega) of its body at the base origin, in the "
         "base frame (world)"),
    Kind("frame_jacobian_local", "jacobian_local", ("jacobian_local",), ("q",), "jac_local",
         "jac_local[f] (6 x n): frame f's Jacobian in its own axes (local)"),
    Kind("frame_jacobian_dot", "jacobian_dot", ("jacobian_dot",), ("q", "qd"), "jacdot",
         "jacdot[f] (6 x n): d/dt of frame f's local_world_aligned Jacobian at (q, qd)"),
    Kind("frame_jacobian_world_dot", "jacobian_world_dot", ("jacobian_world_dot",), ("q", "qd"), "jacdot_world",
         "jacdot_world[f] (6 x n): d/dt of frame f's world Jacobian at (q, qd)"),
    Kind("frame_jacobian_local_dot", "jacobian_local_dot", ("jacobian_local_dot",), ("q", "qd"), "jacdot_local",
         "jacdot_local[f] (6 x n): d/dt of frame f's local Jacobian at (q, qd)"),
    # a floating base's centroidal outputs (CENTROIDAL_OUTPUTS, robodyn.program.centroidal)
    Kind("center_of_mass", "com", ("com",), ("q",), "com", "com (3): the centre of mass in the world"),
    Kind("center_of_mass_jacobian", "com_jacobian", ("com_jacobian",), ("q",), "jcom",
         "jcom (3 x n): the centre of mass's Jacobian, d com/dt = jcom v (world axes)"),
    Kind("centroidal_map", "centroidal_map", ("centroidal_map",), ("q",), "ag",
         "ag (6 x n): the centroidal momentum matrix A_G, rows (linear; angular momentum about the centre of "
         "mass), world axes"),
    Kind("centroidal_bias", "centroidal_bias", ("centroidal_bias",), ("q", "qd"), "dag_v",
         "dag_v (6): dA_G/dt v, the centroidal momentum's rate at zero acceleration"),
)
#: ``--outputs`` key -> routine kind.
KEYS: dict[str, Kind] = {kind.key: kind for kind in KINDS}
#: The outputs that store another output's entries in another layout: key -> (the output, what it keeps).
PACKED = {"M_packed": ("M", "upper triangle")}
#: The kinds generated when no ``outputs`` are named: all but the derivatives (ask for ``dtau``, ``dqdd``), the
#: frames' kinematics (ask for ``pose``, ``jacobian``, ...) and the packed layouts (``M_packed``).
DEFAULT_KEYS = tuple(kind.key for kind in KINDS
                     if kind.key not in (*DERIVATIVE_GROUPS, *FRAME_OUTPUTS, *CENTROIDAL_OUTPUTS, *PACKED))


# --- restated from the lower layers (asserted equal by tests/program/test_outputs.py) ----------------------------

#: The derivation methods of :func:`robodyn.derive`, in the order ``robodyn check`` runs them
#: (:data:`robodyn.formulations.AVAILABLE`).
METHODS = ("newton-euler", "lagrange-euler", "dalembert", "kane", "emdeg")
#: Their documented short names.
METHOD_ALIASES = {"ne": "newton-euler", "le": "lagrange-euler", "gd": "dalembert"}
#: Further spellings :func:`robodyn.derive` accepts; :data:`robodyn.formulations.METHODS` is
#: ``METHODS`` (each its own name), ``METHOD_ALIASES`` and these.
METHOD_SPELLINGS = {"newton_euler": "newton-euler", "lagrange_euler": "lagrange-euler", "burdick": "emdeg"}

#: The forms in which :class:`robodyn.equations.Equations` prints (:data:`robodyn.equations.FORMS`).
FORMS = ("tau", "config-space", "fu", "christoffel", "emdeg")

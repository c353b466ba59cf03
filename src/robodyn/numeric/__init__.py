"""Batched numeric rigid-body dynamics in NumPy: no sympy or symengine at call time.

    from robodyn import numeric
    robot = rd.load("puma560")
    tau = numeric.inverse_dynamics(robot, q, qd, qdd)   # q, qd, qdd: (n,) or (N, n)
    M = numeric.mass_matrix(robot, q)                   # (n, n) or (N, n, n)
    qdd = numeric.forward_dynamics(robot, q, qd, tau)

- :func:`inverse_dynamics`: recursive Newton-Euler (Luh, Walker and Paul; Khalil and Kleinfinger's customised
  form, :mod:`robodyn.recursions.newton_euler`).
- :func:`mass_matrix`: composite rigid body algorithm (Walker and Orin's method 3 in Khalil's parameters,
  :mod:`robodyn.recursions.composite`).
- :func:`bias_forces` = h + G + damping + spring + tip-load torques; :func:`gravity` = G; :func:`coriolis` = h;
  :func:`tip_load` = J^T w; :func:`friction` = damping (b qd and the Coulomb friction); :func:`spring` = the joint
  springs k (q - q_ref) and :func:`spring_energy` the energy they store (:mod:`robodyn.numeric.springs`).
- :func:`forward_dynamics`: M qdd = tau - bias_forces by a batched Cholesky solve;
  :func:`aba_forward_dynamics`: the same by Featherstone's articulated-body algorithm (O(n)).
- A floating robot (``rd.load(path, floating=True)``): :func:`inverse_dynamics`, :func:`mass_matrix`,
  :func:`bias_forces`, :func:`coriolis`, :func:`gravity` and :func:`forward_dynamics` take q of length ``robot.nq``
  (base position, unit quaternion (x, y, z, w), joints) and velocities, accelerations and forces of length
  ``robot.nv`` (the base's body-frame twist first), as Pinocchio's free flyer; :func:`center_of_mass`,
  :func:`centroidal_map` (A_G) and :func:`centroidal_momentum` (h_G = A_G v)
  are for floating robots: :mod:`robodyn.numeric.floating`; so are, with respect to the tangent space,
  :func:`inverse_dynamics_derivatives` (dtau/dq, dtau/dv, M), :func:`forward_dynamics_derivatives` (dv'/dq, dv'/dv,
  M^-1), :func:`center_of_mass_jacobian`, :func:`frame_jacobian`, :func:`frame_jacobian_dot` and
  :func:`centroidal_map_dot` (dA_G/dt): :mod:`robodyn.numeric.floating_derivatives`. :func:`aba_forward_dynamics`
  takes a floating robot too, and so does :func:`friction` (zero on the base's rows); :func:`tip_load` refuses it, in
  one line.
- A robot with implicit loops (``robot.implicit``: ``rd.load("fivebar")``): :func:`inverse_dynamics`,
  :func:`mass_matrix`, :func:`bias_forces`, :func:`coriolis`, :func:`gravity` and :func:`forward_dynamics` take its
  actuated joints' q and hand it to :mod:`robodyn.numeric.closed_chains` (the passive joints by Newton's method).
- Which engine runs is looked up once per robot in one table, ``robodyn.numeric.api.ENGINES``, keyed by the robot's
  structure (:func:`robodyn.model.structure.structure`: a tree, a tree projected through couplings and closed-form
  loops, or implicit loops; whether q lies on a manifold); a function an engine lacks refuses in one line
  (:func:`robodyn.model.structure.refuse`: ``"solo: floating base: robodyn.numeric.tip_load is not handled yet"``).

The split follows :class:`robodyn.Equations`: tau = M qdd + h + G + damping + spring + load, armature in M.
A robot with free symbols needs ``params={"m1": 1.0, ...}`` (keys str or sympy Symbol); otherwise a
:class:`~robodyn.errors.ModelError` names the missing symbols. The compiled arrays are cached per
(robot, params); :func:`compile_model` returns them for reuse in hot loops.

One state at a time runs over Python floats until a model has had many such calls; then compiled routines take
them over, where a C compiler is found (:mod:`robodyn.numeric.hotpath`, :func:`hot_path`).
"""

from robodyn.numeric.aba import aba_forward_dynamics
from robodyn.numeric.api import (
    bias_forces,
    cholesky_solve,
    coriolis,
    forward_dynamics,
    friction,
    gravity,
    hot_path,
    inverse_dynamics,
    mass_matrix,
    tip_load,
)
from robodyn.numeric.floating import center_of_mass, centroidal_map, centroidal_momentum
from robodyn.numeric.floating_derivatives import (
    center_of_mass_jacobian,
    centroidal_map_dot,
    forward_dynamics_derivatives,
    frame_jacobian,
    frame_jacobian_dot,
    inverse_dynamics_derivatives,
)
from robodyn.numeric.model import NumericModel, compile_model
from robodyn.numeric.springs import spring, spring_energy

__all__ = [
    "NumericModel",
    "aba_forward_dynamics",
    "bias_forces",
    "center_of_mass",
    "center_of_mass_jacobian",
    "centroidal_map",
    "centroidal_map_dot",
    "centroidal_momentum",
    "cholesky_solve",
    "compile_model",
    "coriolis",
    "forward_dynamics",
    "forward_dynamics_derivatives",
    "frame_jacobian",
    "frame_jacobian_dot",
    "friction",
    "gravity",
    "hot_path",
    "inverse_dynamics",
    "inverse_dynamics_derivatives",
    "mass_matrix",
    "spring",
    "spring_energy",
    "tip_load",
]

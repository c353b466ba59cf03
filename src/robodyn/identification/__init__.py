"""Identification: the linear-in-parameters form tau = Y p and the base parameters.

    from robodyn import identification as ident
    Y, p = ident.regressor(robot)            # tau = Y p (+ the tip load), p: 12 standard parameters per link
    b = ident.base_parameters(robot)         # Khalil and Kleinfinger's regrouping rules
    b.names, b.parameters, b.regressor       # tau = b.regressor * b.parameters
    b.numerical_rank()                       # the cross-check: rank of Y stacked over random states

Robots with coupled coordinates (mimic joints, gears, parallelograms, four-bars in closed form) have n_v rows per
state, Y = W^T Y_tree at the tree's state, and base parameters in which the passive links' parameters fold into the
actuated ones (:mod:`~robodyn.identification.base`, "Coupled coordinates"); implicit loops are refused.

Floating robots (``rd.load(path, floating=True)``): ``numeric_regressor(robot, q, v, a)`` takes q (nq: position,
quaternion x, y, z, w, joints), v and a (nv: the base's body-frame twist first), gives nv rows per state (the wrench
on the base first) and 10 + 12 n columns, the base body's XX0..M0 first (:mod:`~robodyn.identification.floating`);
``base_parameters`` keeps the base body's ten and applies the general rules only (no particular case near a base
that moves freely), its count checked by the same numerical rank. The symbolic ``regressor`` is refused in one line.

See :mod:`robodyn.recursions.parameters` (the standard parameters), :mod:`~robodyn.identification.regressor`
(Y, symbolic and numeric) and :mod:`~robodyn.identification.base` (the rules).
"""

from robodyn.identification.base import BaseParameters, GroupedLinks, RankCheck, base_parameters, grouped_links
from robodyn.identification.regressor import (
    Regressor,
    inverse_dynamics_in_parameters,
    numeric_regressor,
    numeric_values,
    regressor,
)
from robodyn.recursions.parameters import INERTIAL, parameter_names, standard_symbols, standard_values

__all__ = [
    "INERTIAL",
    "BaseParameters",
    "GroupedLinks",
    "RankCheck",
    "Regressor",
    "base_parameters",
    "grouped_links",
    "inverse_dynamics_in_parameters",
    "numeric_regressor",
    "numeric_values",
    "parameter_names",
    "regressor",
    "standard_symbols",
    "standard_values",
]

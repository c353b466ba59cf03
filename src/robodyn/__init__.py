"""robodyn: symbolic equations of motion of robot manipulators (serial chains and kinematic trees).

    import robodyn as rd
    robot = rd.load("puma560")                       # built-in name or model-file path
    eqs = rd.derive(robot, method="newton-euler")    # or "lagrange-euler"
    eqs.tau, eqs.M, eqs.h, eqs.G                     # sympy matrices
"""

from robodyn import library
from robodyn._version import __version__
from robodyn.compile import compile  # the function; the module stays importable as robodyn.compile
from robodyn.equations import ConfigSpace, EmdegForm, Equations, FuForm
from robodyn.errors import DerivationError, ModelError, ModelWarning
from robodyn.formulations import derive
from robodyn.loading import load
from robodyn.model import Link, Manipulator, Payload

#: Loaded on first use, so that ``import robodyn`` stays quick (they import scipy.integrate, scipy.signal).
_LAZY_FUNCTIONS = {"simulate": "robodyn.simulation", "linearize": "robodyn.linear"}
_LAZY_MODULES = ("simulation", "linear", "ik", "report", "plots", "identification", "toolbox", "urdf", "interop")


def __getattr__(name: str) -> object:
    import importlib

    if name in _LAZY_FUNCTIONS:
        return getattr(importlib.import_module(_LAZY_FUNCTIONS[name]), name)
    if name in _LAZY_MODULES:
        return importlib.import_module(f"robodyn.{name}")
    raise AttributeError(f"module 'robodyn' has no attribute {name!r}")

__all__ = [
    "ConfigSpace",
    "DerivationError",
    "EmdegForm",
    "Equations",
    "FuForm",
    "Link",
    "Manipulator",
    "ModelError",
    "ModelWarning",
    "Payload",
    "__version__",
    "compile",
    "derive",
    "identification",
    "library",
    "linearize",
    "load",
    "simulate",
    "toolbox",
]

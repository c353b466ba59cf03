"""robodyn: symbolic equations of motion of serial robot manipulators.

    import robodyn as rd
    robot = rd.load("puma560")                       # built-in name or model-file path
    eqs = rd.derive(robot, method="newton-euler")    # or "lagrange-euler"
    eqs.tau, eqs.M, eqs.h, eqs.G                     # sympy matrices
"""

from robodyn import library
from robodyn.equations import ConfigSpace, EmdegForm, Equations, FuForm
from robodyn.errors import DerivationError, ModelError, ModelWarning
from robodyn.formulations import derive
from robodyn.loading import load
from robodyn.model import Link, Manipulator, Payload

__version__ = "0.1.0"

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
    "derive",
    "library",
    "load",
]

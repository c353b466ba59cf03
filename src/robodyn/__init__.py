"""robodyn: symbolic equations of motion of robot manipulators (serial chains and kinematic trees).

    import robodyn as rd
    robot = rd.load("puma560")                       # built-in name or model-file path
    eqs = rd.derive(robot, method="newton-euler")    # or "lagrange-euler"
    eqs.tau, eqs.M, eqs.h, eqs.G                     # sympy matrices

Every name of this package face is loaded on first use, so that ``import robodyn`` (and ``robodyn --help``)
does not import sympy, NumPy or the code generators until they are needed.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from robodyn import _moved
from robodyn._version import __version__

if TYPE_CHECKING:  # what the names below are, for type checkers and editors
    from robodyn import identification, library
    from robodyn.analysis import toolbox
    from robodyn.analysis.linear import linearize
    from robodyn.analysis.simulation import simulate
    from robodyn.codegen.casadi import to_casadi
    from robodyn.equations import ConfigSpace, EmdegForm, Equations, FuForm
    from robodyn.errors import BuildNote, DerivationError, ModelError, ModelWarning
    from robodyn.formats.load import load
    from robodyn.formats.pinocchio import from_pinocchio
    from robodyn.formats.toolbox import from_toolbox
    from robodyn.formulations import derive
    from robodyn.model import Link, Manipulator, Payload
    from robodyn.runtime import compile

#: name -> the module that defines it (a function or class), loaded on first use.
_NAMES = {
    "compile": "robodyn.runtime",
    "ConfigSpace": "robodyn.equations", "EmdegForm": "robodyn.equations", "Equations": "robodyn.equations",
    "FuForm": "robodyn.equations",
    "BuildNote": "robodyn.errors", "DerivationError": "robodyn.errors", "ModelError": "robodyn.errors",
    "ModelWarning": "robodyn.errors",
    "derive": "robodyn.formulations",
    "load": "robodyn.formats.load",
    "Link": "robodyn.model", "Manipulator": "robodyn.model", "Payload": "robodyn.model",
    "simulate": "robodyn.analysis.simulation",
    "linearize": "robodyn.analysis.linear",
    "from_pinocchio": "robodyn.formats.pinocchio", "from_toolbox": "robodyn.formats.toolbox",
    "to_casadi": "robodyn.codegen.casadi",
}
#: Modules reachable as attributes (``rd.toolbox.rne``), loaded on first use: the rooms, and the modules users
#: reach through the face by their short names.
_MODULES = {
    **{room: f"robodyn.{room}" for room in ("analysis", "codegen", "formats", "formulations", "identification",
                                             "library", "model", "numeric", "program", "recursions", "report",
                                             "runtime")},
    **{name: f"robodyn.analysis.{name}" for name in ("simulation", "linear", "ik", "plots", "toolbox")},
    "urdf": "robodyn.formats.urdf",
    "interop": "robodyn.interop",  # moved in 0.2 (robodyn._moved): a DeprecationWarning names the new modules
}


class _Face(types.ModuleType):
    """The package face's module type: ``rd.compile`` is both the function and ``robodyn.compile``, the old name of
    the module robodyn.runtime (:class:`robodyn._moved.CallableModule`): ``rd.compile(robot)`` compiles, and
    ``import robodyn.compile as C``, which binds this attribute, gives a module (``C.compile(robot)``,
    ``C.CompiledDynamics``). Importing the old name sets the package's attribute of that name; the data descriptor
    below takes precedence and ignores it."""

    @property
    def compile(self) -> Any:
        return _moved.callable_module("robodyn.compile")

    @compile.setter
    def compile(self, value: Any) -> None:  # the import system binding the submodule: kept out of the face
        pass


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        value = getattr(importlib.import_module(_NAMES[name]), name)
        globals()[name] = value  # once
        return value
    if name in _MODULES:
        return importlib.import_module(_MODULES[name])
    raise AttributeError(f"module 'robodyn' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_NAMES, *_MODULES})


sys.modules[__name__].__class__ = _Face
_moved.install()  # the modules that moved into rooms, by their old names for one release

__all__ = [
    "BuildNote",
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
    "from_pinocchio",
    "from_toolbox",
    "identification",
    "library",
    "linearize",
    "load",
    "simulate",
    "to_casadi",
    "toolbox",
]

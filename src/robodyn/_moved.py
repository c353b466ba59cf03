"""The modules that moved into rooms in 0.2, importable by their old names for one release.

``import robodyn.simulation`` (or ``from robodyn.simulation import simulate``) still works and gives the module
that now lives at ``robodyn.analysis.simulation`` itself (the same module object: patching one patches the other),
with a :class:`DeprecationWarning` naming the new place. The old names go in the release after 0.2.

One finder on :data:`sys.meta_path` answers for every old name, so the top level holds no shim file per module.
The package face installs it (:mod:`robodyn`).
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from collections.abc import Sequence
from typing import Any

#: old module -> its new home (one module), or the modules whose public names it gathered.
MOVED: dict[str, str | tuple[str, ...]] = {
    "robodyn.compile": "robodyn.runtime",
    "robodyn.urdf": "robodyn.formats.urdf",
    "robodyn.loading": "robodyn.formats.load",
    "robodyn.model.io": "robodyn.formats.model_file",
    "robodyn.interop": ("robodyn.formats.pinocchio", "robodyn.formats.toolbox", "robodyn.codegen.casadi"),
    "robodyn.simulation": "robodyn.analysis.simulation",
    "robodyn.linear": "robodyn.analysis.linear",
    "robodyn.torques": "robodyn.analysis.torques",
    "robodyn.simplified": "robodyn.analysis.simplified",
    "robodyn.check": "robodyn.analysis.check",
    "robodyn.ik": "robodyn.analysis.ik",
    "robodyn.trajectories": "robodyn.analysis.trajectories",
    "robodyn.toolbox": "robodyn.analysis.toolbox",
    "robodyn.plots": "robodyn.analysis.plots",
    "robodyn.samples": "robodyn.analysis.samples",
    "robodyn.demo": "robodyn.report.demo",
    "robodyn.tables": "robodyn.model.tables",
    "robodyn.opcount": "robodyn.program.opcount",
    "robodyn.kinematics": "robodyn.formulations.kinematics",
}


#: Old module names that are also a function of the package face, old name -> (its module, the function): the
#: face's attribute of that name is a :class:`CallableModule`.
CALLABLE = {"robodyn.compile": ("robodyn.runtime", "compile")}


class CallableModule(types.ModuleType):
    """An old module name that is also a function of the face: ``rd.compile(robot)`` calls
    :func:`robodyn.runtime.compile`, and ``import robodyn.compile as C`` (which binds the package's attribute
    ``compile``, this object) gives a module whose attributes are :mod:`robodyn.runtime`'s, read and written
    through (``C.compile(robot)``, ``C.CompiledDynamics``). ``__wrapped__`` is the function (its signature and
    help)."""

    def __init__(self, old: str, module: str, function: str) -> None:
        target = importlib.import_module(module)
        entry = getattr(target, function)
        super().__init__(old, entry.__doc__)
        self.__dict__.update(_target=target, _function=function, __wrapped__=entry)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._target, self._function)(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["_target"], name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._target, name, value)

    def __dir__(self) -> list[str]:
        return dir(self._target)

    def __repr__(self) -> str:
        target = self._target.__name__
        return f"<module {self.__name__!r}: {target}, called as {target}.{self._function}>"


@functools.cache
def callable_module(old: str) -> CallableModule:
    """The one :class:`CallableModule` of an old name of :data:`CALLABLE`."""
    return CallableModule(old, *CALLABLE[old])


def _message(old: str, new: str | tuple[str, ...]) -> str:
    where = new if isinstance(new, str) else ", ".join(new)
    return f"{old} moved to {where} in robodyn 0.2; the old name goes in the next release"


class _Alias(importlib.abc.Loader):
    """Loads an old name as its new module: ``exec_module`` puts the new module in :data:`sys.modules` under the
    old name (the import system reads it back from there, so the old name is the very same module)."""

    def __init__(self, new: str | tuple[str, ...]) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        warnings.warn(_message(module.__name__, self.new), DeprecationWarning, stacklevel=2)
        if isinstance(self.new, str):
            sys.modules[module.__name__] = importlib.import_module(self.new)
            return
        module.__doc__ = _message(module.__name__, self.new)
        names: list[str] = []
        for source in self.new:
            gathered = importlib.import_module(source)
            public = [n for n in vars(gathered) if not n.startswith("_") and not isinstance(
                getattr(gathered, n), types.ModuleType)]
            module.__dict__.update({n: getattr(gathered, n) for n in public})
            names += public
        module.__all__ = sorted(set(names))  # type: ignore[attr-defined]


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old names of :data:`MOVED` (and nothing else)."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        return None if new is None else importlib.machinery.ModuleSpec(fullname, _Alias(new))


def install() -> None:
    """Put the finder on :data:`sys.meta_path` (once)."""
    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedFinder())

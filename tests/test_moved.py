"""The modules that moved into rooms in 0.2 still import by their old names for one release (robodyn._moved): as
the very same module object, with a DeprecationWarning naming the new place, in a fresh process as a user's old
script meets them."""

from __future__ import annotations

import subprocess
import sys

from robodyn._moved import MOVED


def test_old_module_names_import_with_a_deprecation_warning() -> None:
    code = f"""
import importlib, warnings
for old, new in {dict(MOVED)!r}.items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(messages) == 1 and old + " moved to " in messages[0], (old, messages)
    if isinstance(new, str):
        assert module is importlib.import_module(new), (module, new)
    else:
        for source in new:
            gathered = importlib.import_module(source)
            public = [n for n in getattr(gathered, "__all__", ()) if not n.startswith("_")]
            assert all(getattr(module, n) is getattr(gathered, n) for n in public), source
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
    assert len(MOVED) >= 19


def test_old_names_in_from_imports_and_the_face() -> None:
    code = """
import warnings
warnings.simplefilter("error", DeprecationWarning)
import robodyn as rd
from robodyn import numeric, toolbox, urdf  # the face's short names: no warning
import robodyn.analysis.simulation as new
assert rd.simulation is new and callable(rd.compile)
warnings.simplefilter("ignore", DeprecationWarning)
from robodyn.simulation import simulate
from robodyn.interop import from_pinocchio, to_casadi
from robodyn.compile import CompiledDynamics
import robodyn.runtime
assert simulate is new.simulate and callable(rd.compile) and rd.compile.__wrapped__ is robodyn.runtime.compile
assert CompiledDynamics is rd.compile.CompiledDynamics  # rd.compile is also the old module (tests/test_cli_options.py)
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]

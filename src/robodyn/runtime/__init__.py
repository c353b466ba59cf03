"""Compiled dynamics: ``rd.compile(robot)`` and the :class:`CompiledDynamics` it returns.

The room of everything that turns a generated program into something callable: the entry (:func:`compile`,
:mod:`robodyn.runtime.entry`), the compiled object (:mod:`robodyn.runtime.compiled`), the C toolchain
(:mod:`robodyn.runtime.toolchain`), the checked cache (:mod:`robodyn.runtime.cache`: what it trusts and why) and
the backends, one record each (C, NumPy, JAX: :mod:`robodyn.runtime.backends`).
"""

from robodyn.runtime.entry import (
    CompiledDynamics,
    CompileError,
    cache_dir,
    compile,
    find_compiler,
    host_fingerprint,
    load_library,
    native_flags,
)

__all__ = ["CompileError", "CompiledDynamics", "cache_dir", "compile", "find_compiler", "host_fingerprint",
           "load_library", "native_flags"]

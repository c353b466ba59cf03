"""Compiled dynamics: ``rd.compile(robot)`` and the :class:`CompiledDynamics` it returns.

The room of everything that turns a generated program into something callable: the entry (:func:`compile`), the
compiled object, the C toolchain, the checked cache and the backends (C, NumPy, JAX). See
:mod:`robodyn.runtime.entry` for what the cache trusts and why.
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

"""Code generation: C99, Fortran, NumPy and JAX from the straight-line Program.

    from robodyn import codegen
    files = codegen.generate(robot, "c")                 # {"puma560.h": ..., "puma560.c": ...}
    files = codegen.generate(robot, "fortran", outputs=["tau", "forward"])
    dyn = codegen.load_python(robot, "numpy")            # the NumPy module, imported in-process

Every language prints the same :class:`~robodyn.codegen.spec.ModuleSpec` (a constants routine and
one routine per output: ``tau`` inverse_dynamics, ``M`` mass_matrix, ``h`` coriolis, ``bias``
bias_forces, ``G`` gravity, ``forward`` forward_dynamics) with one of sympy's maintained code
printers; generated files are deterministic (the same model gives byte-identical files).
See :mod:`robodyn.codegen.c`, :mod:`~robodyn.codegen.fortran`, :mod:`~robodyn.codegen.numpy_`,
:mod:`~robodyn.codegen.jax_`.
"""

from __future__ import annotations

import types
from collections.abc import Iterable
from typing import Any

from robodyn.codegen.base import Emitter
from robodyn.codegen.c import CEmitter
from robodyn.codegen.cuda import CudaEmitter
from robodyn.codegen.fortran import FortranEmitter
from robodyn.codegen.jax_ import JaxEmitter
from robodyn.codegen.numpy_ import NumPyEmitter
from robodyn.codegen.spec import GENERATOR_VERSION, KEYS, KINDS, ModuleSpec, module_spec, sanitize
from robodyn.program.outputs import LANGUAGES

__all__ = ["GENERATOR_VERSION", "KEYS", "KINDS", "LANGUAGES", "ModuleSpec", "emitter", "exec_python", "generate",
           "load_python", "module_spec", "python_file", "sanitize"]


#: The languages whose routines size each array on its own (a floating base's q of nq entries, the rest nv): every
#: one of :data:`LANGUAGES`, and the CUDA kernels (each kernel steps through an array by its own length).
SIZED_LANGUAGES = ("c", "fortran", "numpy", "jax", "cuda")


def emitter(language: str) -> Emitter:
    """The emitter of ``language`` (one of :data:`LANGUAGES`)."""
    if language == "c":
        return CEmitter()
    if language == "fortran":
        return FortranEmitter()
    if language == "numpy":
        return NumPyEmitter()
    if language == "jax":
        return JaxEmitter()
    if language == "cuda":  # (not in LANGUAGES: its kernels need NVRTC or nvcc to build; see codegen.cuda)
        return CudaEmitter()
    raise ValueError(f"unknown language {language!r}; choose from {', '.join(LANGUAGES)}")


def generate(
    robot: Any, language: str, outputs: Iterable[str] | None = None, *, spec: ModuleSpec | None = None,
    base: bool = False,
) -> dict[str, str]:
    """File name -> text of the generated code for ``robot`` (a :class:`~robodyn.Manipulator`).

    ``outputs``: keys of :data:`KEYS` (default all); ``base``: the model in base parameters
    (:func:`~robodyn.codegen.spec.module_spec`); ``spec``: an already built spec to print (then
    ``robot``, ``outputs`` and ``base`` are not used)."""
    printer = emitter(language)
    spec = spec if spec is not None else module_spec(robot, outputs, base=base)
    if spec.nq is not None and language not in SIZED_LANGUAGES:
        raise ValueError(f"floating base (q of {spec.nq} entries, the rest {spec.n}): generated "
                         f"{', '.join(SIZED_LANGUAGES)} only so far, not {language}")
    return printer.files(spec)


def load_python(robot: Any, language: str = "numpy", outputs: Iterable[str] | None = None, *,
                spec: ModuleSpec | None = None, base: bool = False) -> types.ModuleType:
    """The generated NumPy (or JAX) module of ``robot``, executed in-process as a fresh module."""
    if language not in ("numpy", "jax"):
        raise ValueError(f"load_python makes NumPy or JAX modules, not {language!r}")
    spec = spec if spec is not None else module_spec(robot, outputs, base=base)
    (filename, text), = generate(robot, language, spec=spec).items()
    return exec_python(text, filename)


def python_file(name: str, language: str) -> str:
    """The file name of the generated ``language`` (numpy, jax) module of the module ``name``."""
    return f"{name}.py" if language == "numpy" else f"{name}_{language}.py"


def exec_python(text: str, filename: str) -> types.ModuleType:
    """The generated module ``text`` (of file ``filename``), executed in-process as a fresh module."""
    module = types.ModuleType(filename.removesuffix(".py"))
    module.__file__ = f"<robodyn generated {filename}>"
    exec(compile(text, module.__file__, "exec"), module.__dict__)
    return module

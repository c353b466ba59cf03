"""``robodyn.runtime.entry(robot)``: the generated C, compiled by the system compiler, cached, loaded.

    import robodyn as rd
    dyn = rd.compile(rd.load("puma560"))
    tau = dyn.inverse_dynamics(q, qd, qdd)          # q: (n,) for one state or (N, n) for a batch
    qdd = dyn.forward_dynamics(q, qd, tau)
    dyn = rd.compile(rd.load("double_pendulum"))
    dyn.parameters                                  # ('L1', 'L2', 'g', 'm1', 'm2'): the order of params
    dyn.gravity(q, params={"L1": 1, "L2": 0.5, "m1": 2, "m2": 1, "g": 9.81})

The C of :mod:`robodyn.codegen.c` is compiled with ``cc -O3 -fPIC -shared -std=c99 -fno-math-errno
-ffp-contract=off`` (``$CC`` if set, with the options it carries, else ``cc``, else ``gcc``), plus
``-march=native`` on Linux on x86-64 and AArch64 (with ``-mprefer-vector-width=512`` on x86-64: AVX-512 where
the host has it; both dropped again if the compiler refuses them), into a
shared library in the cache directory (``$ROBODYN_CACHE``, else ``$XDG_CACHE_HOME/robodyn``, else
``~/.cache/robodyn``), one entry per hash of the model, the requested outputs, the generator
version, robodyn's own source, the compiler command and, with ``-march=native``, the host's processor
(its model and feature flags: a cache shared by different machines never hands one a library built for
another's instructions); a second call, in this process or any later one, loads the library without
generating or compiling anything. ``-O3`` vectorises the batch loops of the generated C across states;
``-fno-math-errno`` and ``-ffp-contract=off`` change no result (no fused multiply-adds: the same numbers
with or without ``-march=native``), and nothing like ``-ffast-math`` is used.
Each compile works in a private temporary directory and renames the finished entry into place
(``os.rename`` of the directory), so processes and threads compiling the same model at once never leave
a torn entry.

What the cache trusts, and why. A cache entry's ``spec.json`` records the SHA-256 of the entry's library,
sources and of its own routine description; before ``dlopen`` the files are read back and checked
against it, and the description is checked against the robot (the module name, the number of joints,
the routines asked for and their array shapes, the parameters of a robot not in base parameters). The
file names in ``spec.json`` are checked before anything is read: exactly the entry's ``NAME.c``,
``NAME.h`` and ``NAME.so``, so a manifest naming ``/etc/passwd`` or ``../x`` opens nothing outside the
entry; and reads are capped (1 MiB for ``spec.json``, 256 MiB for each other file). Each file is opened
once, relative to the opened entry directory, not following a link and without blocking (a FIFO is
refused, not waited on); its type, owner and mode are checked on that descriptor and its bytes hashed
from it; and the library is loaded from the same descriptor, by ``dlopen`` of ``/proc/self/fd/N``, which
opens the file that was hashed even if the entry's files have been renamed or replaced meanwhile: what is
loaded is what was checked. Where there is no ``/proc/self/fd`` (macOS, the BSDs) the library is loaded
by its path after the check, and a replacement in between (by this user: see below) is not excluded there.
An entry that fails any check, or cannot be read (missing, truncated, edited, not a plain file, too large),
is built again and replaced atomically (or, where the cache is not writable, the compile fails with one
line): so corruption, a truncated library, an edited spec (``n`` smaller than the robot's, which would let
the library write past the wrapper's arrays) or a library from another entry is never loaded. An entry
that passes every check but does not load (``dlopen`` fails, say a library built against another C
library in a cache shared between hosts, or it lacks the routines) is built again once, replacing it;
only a library just built that does not load either is an error. The hashes sit in the same entry as the
library, so they cannot stop someone who may write the entry from planting a library and its matching
hashes: that is prevented by permissions instead. The cache directory is created ``0700``, and the cache
directory, an entry and its files must belong to the current user and be writable by no other (no group
or world write bit), else the compile is refused with one line naming the path. Who can run code as this
user (or as root) can change the cache, as they can change robodyn itself; this is out of scope. The
directories above the cache directory are not checked (one that others may write is an ordinary setup:
``/tmp``, a group's shared project directory): whoever may rename one can point the cache path at another
directory, but that directory, its entries and their files must still belong to this user, be writable
by no other and match their hashes, so at most this user's own entries are found (or written) there.
The NumPy and JAX backends (``backend="numpy"`` or ``"jax"``) are cached the same way: an entry holds the
generated module ``NAME.py`` (``NAME_jax.py``) and its ``spec.json`` (the command part of the key is the
backend's name); the module's bytes are read once through the checked descriptor, hashed, and the bytes
that matched are executed, so a later process skips generating them (the PUMA: 2 s -> 0.1 s).
The library is loaded with :mod:`ctypes` (standard library: no build-time dependency, and the calls
release the GIL); batches loop in C (the ``_batch`` routines). One state is handed to the same routines by
``robodyn._fastcall`` where it was built (a C extension of robodyn's own, installed with it: no ctypes
conversions and no copies per call, see :meth:`CompiledDynamics.one_state`); it also serves the numeric
engine's hot path (:mod:`robodyn.numeric.hotpath`), which this module registers its builder with.

Without a C compiler (or with ``$CC`` naming one that is not found: ``$CC``, when set, is the only
compiler tried), or when the compiler fails, :class:`CompileError` says so and names the fallback:
the generated NumPy module, ``rd.compile(robot, backend="numpy")``, which gives the same object
without compiling.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import itertools
import json
import math
import os
import platform
import shlex
import shutil
import stat
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from robodyn.codegen import exec_python, generate, python_file
from robodyn.codegen.spec import (
    DEFAULT_KEYS,
    GENERATOR_VERSION,
    KEYS,
    KINDS,
    Array,
    ModuleSpec,
    Routine,
    module_spec,
    output_shape,
    sanitize,
)
from robodyn.model.files import manipulator_to_dict
from robodyn.model.params import parameter_value
from robodyn.numeric import hotpath
from robodyn.program import OperationCount

try:  # the one-state caller built with the package (an optional extension: without it, ctypes)
    from robodyn._fastcall import Caller as _Caller

    Caller: type[_Caller] | None = _Caller
except ImportError:  # pragma: no cover - where the extension could not be built (no Python.h)
    Caller = None

__all__ = ["CompileError", "CompiledDynamics", "cache_dir", "compile", "find_compiler", "host_fingerprint",
           "load_library", "native_flags"]

CACHE_ENV = "ROBODYN_CACHE"
C_FLAGS = ("-O3", "-fPIC", "-shared", "-std=c99", "-fno-math-errno", "-ffp-contract=off")
NATIVE = "-march=native"
#: On x86-64, vectorise with the widest registers (AVX-512 where the host has them, where GCC and Clang
#: stop at 256 bits by default): the long straight-line batch loops are bound by the instructions they
#: issue, and 8 states per instruction instead of 4 take 15-30% off every routine (measured on the PUMA's and
#: the Panda's; hosts without AVX-512 are unaffected).
WIDE = "-mprefer-vector-width=512"
FALLBACK = ("use the generated NumPy module instead: robodyn.runtime.entry(robot, backend='numpy'), "
            "or `robodyn codegen MODEL --lang numpy`")
ParamValues = Mapping[Any, Any] | Sequence[float] | np.ndarray


class CompileError(RuntimeError):
    """No C compiler, or the compiler failed."""


def cache_dir() -> Path:
    """Where compiled libraries are kept (see the module docstring)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "robodyn"


def find_compiler() -> list[str] | None:
    """The C compiler command: ``$CC`` if set (split like a shell command line: it may carry options),
    else ``cc``, else ``gcc``; None if neither is found. A ``$CC`` that names a program not found is a
    :class:`CompileError` (naming ``$CC`` and the NumPy fallback), never a silent switch to another
    compiler without the options it carries."""
    given = os.environ.get("CC", "")
    if given.strip():
        try:
            command = shlex.split(given)
        except ValueError as exc:
            raise CompileError(f"$CC={given!r} is not a command line ({exc}); {FALLBACK}") from None
        path = shutil.which(command[0])
        if path is None:
            raise CompileError(f"$CC={given!r}: {command[0]!r} is not found; set $CC to an installed C "
                               f"compiler, or unset it to use cc or gcc; or {FALLBACK}")
        return [path, *command[1:]]
    for name in ("cc", "gcc"):
        path = shutil.which(name)
        if path:
            return [path]
    return None


def native_flags() -> list[str]:
    """``-march=native`` where it is worth it and understood (Linux, x86-64 or AArch64), with :data:`WIDE` on
    x86-64; else []."""
    if platform.system() != "Linux":
        return []
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64"):
        return [NATIVE, WIDE]
    return [NATIVE] if machine in ("aarch64", "arm64") else []


def host_fingerprint() -> str:
    """The processor this process runs on: machine, model and feature flags (from /proc/cpuinfo where
    there is one), hashed: what ``-march=native`` code depends on."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    fields = ("model name", "flags", "Features", "CPU implementer", "CPU architecture", "CPU variant", "CPU part")
    lines = sorted({line.strip() for line in text.splitlines() if line.split(":", 1)[0].strip() in fields})
    data = "\n".join([platform.system(), platform.machine(), platform.processor(), *lines])
    return hashlib.sha256(data.encode()).hexdigest()[:16]


def _source_fingerprint() -> str:
    """A hash of robodyn's own Python source (read at every call, a millisecond): a changed generator
    or Program builder never reuses a stale library, even in a long-lived process."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _cache_key(robot: Any, outputs: tuple[str, ...], command: list[str], base: bool = False) -> str:
    data = {
        "model": manipulator_to_dict(robot),
        "outputs": outputs,
        "base": base,
        "generator": GENERATOR_VERSION,
        "source": _source_fingerprint(),
        "command": command,
        "host": host_fingerprint() if NATIVE in command else None,
    }
    text = json.dumps(data, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


# -- the object ------------------------------------------------------------------------------------


class CompiledDynamics:
    """Inverse dynamics, M, h, the bias, G and forward dynamics of one robot, on one state (n,) or a
    batch (N, n); ``params`` (a mapping name -> value, or values in :attr:`parameters` order) for a
    robot with symbolic parameters; ``out``, an array of the result's shape (float64, C-contiguous) that
    the result is written into and returned, as NumPy's ``out=`` (a loop over batches then allocates
    nothing: a fresh result of many states costs its page faults, 20% of the Panda's derivatives). Backed by a
    compiled library or by the generated NumPy or JAX module (JAX
    computes in its own precision: float32 unless ``jax_enable_x64`` is set)."""

    def __init__(self, spec: ModuleSpec, call: Callable[..., np.ndarray], *, backend: str, path: Path | None = None,
                 one_state: Callable[[str, np.ndarray, tuple[int, ...]], Callable[..., np.ndarray]] | None = None,
                 fast: Callable[[str, np.ndarray, tuple[int, ...]], Callable[..., Any]] | None = None):
        self.name = spec.robot
        self._one_state = one_state
        # fast(routine, k, tail): a thread-safe call on one state that answers NotImplemented to anything else
        # (robodyn._fastcall's); the methods' calls without parameters go through it first
        self._fast_call = fast
        self._fast: dict[str, Callable[..., Any]] = {}
        self.n = spec.n
        self.parameters: tuple[str, ...] = spec.parameters
        self.routines: tuple[str, ...] = spec.kinds
        self.backend = backend
        self.path = path
        self._spec = spec
        self._call = call
        self._lock = threading.Lock()
        self._local = threading.local()  # per thread: the one-state calls of the methods (their buffers)
        self._last: tuple[tuple[float, ...], np.ndarray] | None = None

    def __repr__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return f"<CompiledDynamics {self.name!r} ({self.n} joints, {self.backend}){where}>"

    def constants(self, params: ParamValues | None = None) -> np.ndarray:
        """k, the parameter-only constants (computed once per parameter values and remembered)."""
        values = self._values(params)
        with self._lock:
            if self._last is not None and self._last[0] == values:
                return self._last[1]
        k = self._call("constants", np.zeros(0), [np.asarray(values, dtype=float)],
                       (self._spec.n_constants,))
        with self._lock:
            self._last = (values, k)
        return k

    def _values(self, params: ParamValues | None) -> tuple[float, ...]:
        names = self.parameters
        if params is None or (not isinstance(params, Mapping) and len(params) == 0):
            if names:
                raise ValueError(f"{self.name!r} has symbolic parameters; pass params for {', '.join(names)}")
            return ()
        if isinstance(params, Mapping):
            given = {str(key): value for key, value in params.items()}
            missing = [name for name in names if name not in given]
            if missing:
                raise ValueError(f"params for {self.name!r} leave {', '.join(missing)} unbound")
            unknown = sorted(set(given) - set(names))
            if unknown:
                listed = ", ".join(names) or "none"
                raise ValueError(f"{self.name!r} has no parameter {unknown[0]!r} (it has: {listed})")
            return tuple(parameter_value(name, given[name]) for name in names)
        values = tuple(float(v) for v in np.asarray(params, dtype=float).ravel())
        if len(values) != len(names):
            raise ValueError(f"{self.name!r} takes {len(names)} parameters ({', '.join(names)}), got {len(values)}")
        return tuple(parameter_value(name, value) for name, value in zip(names, values, strict=True))

    def _run(self, routine: str, arrays: Sequence[Any], params: ParamValues | None,
             out: np.ndarray | None = None) -> np.ndarray:
        if out is None and params is None and self._fast_call is not None:  # one state, nothing to bind
            fast = self._fast.get(routine)
            if fast is None and routine in self.routines and not self.parameters:
                fast = self._fast[routine] = self._fast_call(routine, self.constants(), self._tail(routine))
            if fast is not None and (result := fast(*arrays)) is not NotImplemented:
                return result  # (anything but one state of float64 arrays: the checks and batches below)
        if routine not in self.routines:
            raise ValueError(f"{routine} was not generated for {self.name!r} (generated: {', '.join(self.routines)})")
        k = self.constants(params)
        given = [np.asarray(a, dtype=float) for a in arrays]
        for a in given:
            if a.ndim not in (1, 2) or a.shape[-1] != self.n:
                raise ValueError(f"joint arrays of {self.name!r} must have shape ({self.n},) or (N, {self.n}), "
                                 f"got {a.shape}")
        if out is None and self._one_state is not None and all(a.ndim == 1 for a in given):  # one state
            return self._single(routine, k)(*given)
        try:
            shape = np.broadcast_shapes(*(a.shape for a in given))
        except ValueError:
            raise ValueError(f"batch shapes do not match: {[a.shape for a in given]}") from None
        batch = (1, self.n) if len(shape) == 1 else shape
        flat = [a if a.shape == batch and a.flags.c_contiguous else np.ascontiguousarray(np.broadcast_to(a, batch))
                for a in given]  # (an array of the batch's shape already in rows is passed as it is)
        tail = self._tail(routine)
        target = None if out is None else _out_array(out, (batch[0], *tail), shape[:-1] + tail, flat)
        result = self._call(routine, k, flat, tail, target)
        if out is not None:
            return out
        return result[0] if len(shape) == 1 else result

    def _single(self, routine: str, k: np.ndarray) -> Callable[..., np.ndarray]:
        """This thread's one-state call of ``routine`` with the constants ``k`` (made again when k changes)."""
        calls = getattr(self._local, "calls", None)
        if calls is None:
            calls = self._local.calls = {}
        made = calls.get(routine)
        if made is None or made[0] is not k:
            assert self._one_state is not None
            made = calls[routine] = (k, self._one_state(routine, k, self._tail(routine)))
        return made[1]

    def one_state(self, routine: str, *, params: ParamValues | None = None) -> Callable[..., np.ndarray]:
        """``routine`` (e.g. ``"forward_dynamics"``) as a function of one state, with ``params`` bound: its
        arguments are the routine's arrays of shape (n,), its result a new array. For loops of single calls,
        such as an ODE right-hand side. The C backend calls the routine through the ``robodyn._fastcall``
        extension where it was built: the arrays are read in place (others, such as lists, converted to
        float64 first; a wrong length is a ValueError), nothing is shared between calls, and a call costs
        0.37 us on the PUMA's inverse dynamics (a bare ctypes call of the same routine: 0.6 us; the methods on
        one state: 0.6 us). Without the extension (Python installed without its headers) it copies the
        arrays into work buffers for a ctypes call, 1.3 us, and is not thread-safe: call ``one_state`` again
        per thread."""
        if routine not in self.routines:
            raise ValueError(f"{routine} was not generated for {self.name!r} (generated: {', '.join(self.routines)})")
        k = self.constants(params)
        if self._one_state is not None:
            return self._one_state(routine, k, self._tail(routine))
        return lambda *arrays: self._run(routine, arrays, params)

    def _tail(self, routine: str) -> tuple[int, ...]:
        """The shape of one state's result of ``routine``."""
        return self._spec.routine(routine).output.shape

    def inverse_dynamics(self, q: Any, qd: Any, qdd: Any, *, params: ParamValues | None = None,
                         out: np.ndarray | None = None) -> np.ndarray:
        """tau = M(q) qdd + h(q, qd) + G(q) + damping + load."""
        return self._run("inverse_dynamics", (q, qd, qdd), params, out)

    def mass_matrix(self, q: Any, *, params: ParamValues | None = None,
                    out: np.ndarray | None = None) -> np.ndarray:
        """M(q): (n, n), or (N, n, n) for a batch."""
        return self._run("mass_matrix", (q,), params, out)

    def coriolis(self, q: Any, qd: Any, *, params: ParamValues | None = None,
                 out: np.ndarray | None = None) -> np.ndarray:
        """h(q, qd): Coriolis and centrifugal torques only."""
        return self._run("coriolis", (q, qd), params, out)

    def bias_forces(self, q: Any, qd: Any, *, params: ParamValues | None = None,
                    out: np.ndarray | None = None) -> np.ndarray:
        """h + G + damping + load: inverse dynamics at qdd = 0."""
        return self._run("bias_forces", (q, qd), params, out)

    def gravity(self, q: Any, *, params: ParamValues | None = None,
                out: np.ndarray | None = None) -> np.ndarray:
        """G(q)."""
        return self._run("gravity", (q,), params, out)

    def forward_dynamics(self, q: Any, qd: Any, tau: Any, *, params: ParamValues | None = None,
                         out: np.ndarray | None = None) -> np.ndarray:
        """qdd solving M(q) qdd = tau - bias(q, qd) (a generated LDL^T solve; no check that M is
        positive definite)."""
        return self._run("forward_dynamics", (q, qd, tau), params, out)

    def inverse_dynamics_derivatives(self, q: Any, qd: Any, qdd: Any, *, params: ParamValues | None = None,
                                     out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(dtau/dq, dtau/dqd), each (n, n) or (N, n, n), [..., i, j] = d tau_i / d x_j (dtau/dqdd is M);
        compile with ``outputs`` holding ``"dtau"``. ``out``: both, packed as ([N,] 2, n, n) (the results are
        views of it)."""
        both = self._run("inverse_dynamics_derivatives", (q, qd, qdd), params, out)
        return both[..., 0, :, :], both[..., 1, :, :]

    def forward_dynamics_derivatives(self, q: Any, qd: Any, tau: Any, *, params: ParamValues | None = None,
                                     out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(dqdd/dq, dqdd/dqd, dqdd/dtau = M^-1) at qdd = forward_dynamics(q, qd, tau), each (n, n) or
        (N, n, n); compile with ``outputs`` holding ``"dqdd"``. ``out``: the three, packed as ([N,] 3, n, n)
        (the results are views of it)."""
        three = self._run("forward_dynamics_derivatives", (q, qd, tau), params, out)
        return three[..., 0, :, :], three[..., 1, :, :], three[..., 2, :, :]


def _out_array(out: Any, packed: tuple[int, ...], shape: tuple[int, ...], inputs: Sequence[np.ndarray]) -> np.ndarray:
    """``out`` (of the result's ``shape``) as the backend's (N, ...) array, or ValueError saying what it must be
    (the batch routines' pointers are ``restrict``: it must not overlap an input)."""
    if not isinstance(out, np.ndarray) or out.dtype != np.float64 or not out.flags.c_contiguous \
            or not out.flags.writeable or out.shape != shape:
        got = f"{out.shape} {out.dtype}" if isinstance(out, np.ndarray) else type(out).__name__
        raise ValueError(f"out must be a writeable C-contiguous float64 array of shape {shape}, got {got}")
    if any(np.may_share_memory(out, a) for a in inputs):
        raise ValueError("out must not overlap the input arrays")
    return out.reshape(packed)


# -- backends --------------------------------------------------------------------------------------


def load_library(path: str | Path, spec: ModuleSpec, *, fd: int | None = None) -> CompiledDynamics:
    """A :class:`CompiledDynamics` over a shared library with the C interface of ``spec`` (the
    compiled C, or the Fortran with its C binding labels).

    ``fd``: an open descriptor of the library (the compile cache passes the one it hashed the file
    through; it stays the caller's to close, after this returns): the library is then loaded from it,
    by ``dlopen`` of ``/proc/self/fd/N``, so the file loaded is the file that was read, whatever has been
    renamed to ``path`` since. Where there is no ``/proc/self/fd`` (macOS, the BSDs) it is loaded by
    ``path``, like without ``fd``."""
    target = _fd_name(fd) if fd is not None else None
    functions: dict[str, Any] = {}
    try:
        lib = ctypes.CDLL(target or str(path))
        for routine in spec.routines:
            name = f"{spec.name}_{routine.name}" + ("_batch" if routine.batched else "")
            f = getattr(lib, name)
            f.argtypes = [ctypes.c_void_p] * len(routine.arrays) + ([ctypes.c_size_t] if routine.batched else [])
            f.restype = None
            functions[routine.name] = f
    except (OSError, AttributeError) as exc:
        if target is None:
            raise
        raise type(exc)(str(exc).replace(target, str(path))) from None  # (name the library, not the descriptor)

    def call(routine: str, k: np.ndarray, arrays: list[np.ndarray], tail: tuple[int, ...],
             out: np.ndarray | None = None) -> np.ndarray:
        if routine == "constants":
            out = np.empty(max(tail[0], 1))
            functions[routine](arrays[0].ctypes.data if arrays[0].size else None, out.ctypes.data)
            return out[: tail[0]]
        N = arrays[0].shape[0]
        out = np.empty((N, *tail)) if out is None else out
        kk = k if k.size else np.zeros(1)
        functions[routine](kk.ctypes.data, *(a.ctypes.data for a in arrays), out.ctypes.data, N)
        return out

    def caller(routine: str, k: np.ndarray, tail: tuple[int, ...], strict: bool = True) -> Callable[..., np.ndarray]:
        """The extension's call of ``routine`` on one state (the arrays read in place; thread-safe)."""
        assert Caller is not None
        address = ctypes.cast(functions[routine], ctypes.c_void_p).value or 0  # (0: refused)
        return Caller(address=address, k=k if k.size else np.zeros(1), inputs=len(spec.routine(routine).inputs) - 1,
                      n=spec.n, size=math.prod(tail), empty=np.empty, shape=tail, convert=_float_array,
                      strict=strict, keep=lib, name=spec.robot)

    def one_state(routine: str, k: np.ndarray, tail: tuple[int, ...]) -> Callable[..., np.ndarray]:
        if Caller is not None:
            return caller(routine, k, tail)
        count = len(spec.routine(routine).inputs) - 1  # the joint arrays after k
        kk = k if k.size else np.zeros(1)
        buffers = [np.empty(spec.n) for _ in range(count)]
        out = np.empty(tail)
        # the call with its pointers bound once: a ctypes call converts each argument, so fewer is faster
        f = functools.partial(functions[routine], kk.ctypes.data, *(b.ctypes.data for b in buffers),
                              out.ctypes.data, 1)

        run = _one_state_call(f, buffers, out)
        run.keep = (lib, kk, buffers, out)  # type: ignore[attr-defined]  # the pointers stay valid
        return run

    call.library = lib  # type: ignore[attr-defined]  # keep it alive with the closure
    fast = None if Caller is None else functools.partial(caller, strict=False)
    return CompiledDynamics(spec, call, backend="c", path=Path(path), one_state=one_state, fast=fast)


def _hot_routines(robot: Any, params: Any) -> dict[str, Callable[..., Any]]:
    """The numeric engine's hot path (:mod:`robodyn.numeric.hotpath`): ``robot``'s default routines, compiled
    (or from the cache), each on one state with ``params`` bound, answering NotImplemented to anything else."""
    if Caller is None:
        raise CompileError("the robodyn._fastcall extension was not built (no Python.h when robodyn was installed)")
    dyn = compile(robot)
    assert dyn._fast_call is not None
    values = {str(key): value for key, value in (params or {}).items()} if dyn.parameters else None
    k = dyn.constants(values)
    return {routine: dyn._fast_call(routine, k, dyn._tail(routine)) for routine in dyn.routines}


hotpath.register(_hot_routines)

#: How the extension's caller converts an argument that is not a float64 array in one row.
_float_array = functools.partial(np.ascontiguousarray, dtype=np.float64)


def _one_state_call(f: Callable[[], None], buffers: list[np.ndarray], out: np.ndarray) -> Callable[..., np.ndarray]:
    """``run(q, ...)``: the arrays copied into ``buffers``, ``f()``, a copy of ``out``; written out per number of
    arrays (a loop over them costs a third of the call)."""
    if len(buffers) == 1:
        (b0,) = buffers

        def run1(a0: np.ndarray) -> np.ndarray:
            b0[:] = a0
            f()
            return out.copy()

        return run1
    if len(buffers) == 2:
        b0, b1 = buffers

        def run2(a0: np.ndarray, a1: np.ndarray) -> np.ndarray:
            b0[:] = a0
            b1[:] = a1
            f()
            return out.copy()

        return run2
    b0, b1, b2 = buffers

    def run3(a0: np.ndarray, a1: np.ndarray, a2: np.ndarray) -> np.ndarray:
        b0[:] = a0
        b1[:] = a1
        b2[:] = a2
        f()
        return out.copy()

    return run3


def _python_backend(spec: ModuleSpec, language: str, text: str) -> CompiledDynamics:
    """A :class:`CompiledDynamics` over the generated NumPy or JAX module ``text`` (of ``spec``)."""
    module = exec_python(text, python_file(spec.name, language))

    def call(routine: str, k: np.ndarray, arrays: list[np.ndarray], tail: tuple[int, ...],
             out: np.ndarray | None = None) -> np.ndarray:
        if routine == "constants":
            return np.asarray(module.constants(arrays[0]), dtype=float).reshape(tail)
        result = np.asarray(getattr(module, routine)(k, *arrays), dtype=float)
        if out is None:
            return result
        out[...] = result
        return out

    return CompiledDynamics(spec, call, backend=language)


# -- compiling -------------------------------------------------------------------------------------


def compile(
    robot: Any,
    *,
    outputs: Iterable[str] | None = None,
    backend: str = "c",
    cache: str | Path | None = None,
    compiler: Sequence[str] | None = None,
    spec: ModuleSpec | None = None,
    base: bool = False,
) -> CompiledDynamics:
    """Generate, compile (or find in the cache) and load the dynamics routines of ``robot``.

    ``outputs``: ``--outputs`` keys (``tau``, ``M``, ``h``, ``bias``, ``G``, ``forward``, and the derivatives
    ``dtau`` and ``dqdd``; default all but the derivatives);
    ``base``: the model in the robot's base parameters, whose ``parameters`` are then the base
    parameters (:func:`robodyn.identification.base_parameters`: pass identified values) and any
    geometry symbols;
    ``backend``: ``"c"`` (compiled), ``"numpy"`` or ``"jax"`` (the generated NumPy or JAX module, nothing
    compiled; cached like the library, see the module docstring);
    ``cache``: the cache directory (default :func:`cache_dir`); ``compiler``: the command (default
    :func:`find_compiler`); ``spec``: the routines of ``robot`` if already generated
    (:func:`robodyn.codegen.module_spec` of the same outputs), to skip generating them again.
    Raises :class:`CompileError` without a compiler or if compiling fails."""
    wanted = set(DEFAULT_KEYS if outputs is None else outputs)
    keys = tuple(kind.key for kind in KINDS if kind.key in wanted)
    if outputs is not None:
        unknown = sorted(set(outputs) - set(KEYS))
        if unknown:
            raise ValueError(f"unknown output {unknown[0]!r}; choose from {', '.join(KEYS)}")
    if spec is not None and spec.kinds != tuple(kind.name for kind in KINDS if kind.key in keys):
        raise ValueError(f"spec has routines {spec.kinds}, not those of outputs {keys}")
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose {', '.join(repr(b) for b in BACKENDS)}")
    if backend == "c":
        command = list(compiler) if compiler is not None else find_compiler()
        if not command:
            raise CompileError(f"no C compiler found (tried $CC, cc and gcc); {FALLBACK}")
        command = [*command, *C_FLAGS, *native_flags()]
    else:
        command = [f"robodyn-{backend}-module"]  # nothing is compiled: the key names the backend
    name = sanitize(f"{robot.name}_base" if base else robot.name)
    key = _cache_key(robot, keys, command, base)
    expected = Expected(name, robot.n, tuple(kind.name for kind in KINDS if kind.key in keys),
                        None if base else tuple(s.name for s in robot.parameters()), backend)
    entry = _cache_root(cache) / f"{name}-{key}"
    replace = False
    try:
        found = _load_entry(entry, expected)
    except _UnloadableError:  # it passes every check but does not load here: build it again, replacing it
        found, replace = None, True
    if found is not None:
        return found
    spec = spec or module_spec(robot, keys, base=base)
    if spec.name != name:
        raise ValueError(f"spec is named {spec.name!r}, but the routines of this robot{' (base=True)' if base else ''} "
                         f"are named {name!r}: build it with module_spec(robot, outputs, base={base})")
    problem = expected.problem(spec)
    if problem:
        raise ValueError(f"spec does not describe {robot.name!r}: {problem}")
    while True:
        try:
            _build(spec, entry, command, expected, replace=replace)
        except OSError as exc:  # the cache directory cannot be written
            raise CompileError(f"cannot write the compile cache {entry.parent} ({exc.strerror or exc}); set "
                               f"${CACHE_ENV} to a writable directory, or {FALLBACK}") from None
        try:
            found = _load_entry(entry, expected)
        except _UnloadableError as exc:
            if not replace:  # the entry kept was another process's, and does not load here: replace it, once
                replace = True
                continue
            raise CompileError(f"the library just built in {entry} does not load ({exc}); {FALLBACK}") from None
        if found is None:
            raise CompileError(f"the library just built in {entry} does not load; {FALLBACK}")
        return found


def _build(spec: ModuleSpec, entry: Path, command: list[str], expected: Expected, *, replace: bool = False) -> None:
    """Write the sources, compile and write the manifest in a private directory, then rename the
    directory to ``entry``: an entry is complete or absent. An entry already there that fails its
    checks (see the module docstring) is replaced, and so is any entry with ``replace``; one that passes
    them (another process just built it) is otherwise kept."""

    work = Path(tempfile.mkdtemp(prefix=f".{spec.name}-", dir=entry.parent))
    try:
        files = generate(None, expected.backend, spec=spec)
        for filename, text in files.items():
            (work / filename).write_text(text, encoding="utf-8")
        if expected.backend != "c":  # a Python module: nothing to compile
            _seal(work, spec, files, expected)
            _install(work, entry, expected, replace=replace)
            return
        library = work / f"{spec.name}.so"
        run = [*command, "-o", str(library), str(work / f"{spec.name}.c"), "-lm"]
        result = _run(run)
        if result.returncode != 0 and NATIVE in run:  # a compiler that does not know -march=native (or WIDE)
            plain = [*(a for a in run if a not in (NATIVE, WIDE))]
            if _run(plain).returncode == 0:
                result, run = subprocess.CompletedProcess(plain, 0), plain
        if result.returncode != 0:
            tail = " ".join(result.stderr.split())[-800:]
            raise CompileError(f"{shlex.join(run)} failed (exit {result.returncode}): {tail}; {FALLBACK}")
        _seal(work, spec, [*files, library.name], expected)
        _install(work, entry, expected, replace=replace)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _seal(work: Path, spec: ModuleSpec, files: Iterable[str], expected: Expected) -> None:
    """Make ``files`` private and write the manifest with the hashes of the entry's files."""
    for filename in files:
        os.chmod(work / filename, 0o600)
    names = _entry_files(spec.name, expected.backend)  # (what is checked)
    (work / SPEC_FILE).write_text(_spec_to_json(spec, {f: _sha256((work / f).read_bytes()) for f in names}),
                                  encoding="utf-8")
    os.chmod(work / SPEC_FILE, 0o600)


def _install(work: Path, entry: Path, expected: Expected, *, replace: bool = False) -> None:
    """Rename the finished ``work`` directory to ``entry``, moving a failing entry (any entry, with
    ``replace``) out of the way first."""
    try:
        os.rename(work, entry)
        return
    except OSError:
        if not entry.exists() and not entry.is_symlink():
            raise
    if not replace and _checked_spec(entry, expected) is not None:  # built meanwhile by another process: keep it
        return
    trash = Path(tempfile.mkdtemp(prefix=".stale-", dir=entry.parent))
    try:
        os.rename(entry, trash / "entry")
        os.rename(work, entry)
    finally:
        shutil.rmtree(trash, ignore_errors=True)


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise CompileError(f"cannot run {command[0]} ({exc.strerror}); {FALLBACK}") from None


# -- the cache: where entries live, and what an entry must pass before it is loaded ----------------

#: The manifest of an entry: its routine description and the hashes of its files.
SPEC_FILE = "spec.json"
#: The manifest layout; an entry with another one is built again.
MANIFEST_FORMAT = 2
#: The most bytes read of a manifest, and of each other file of an entry (a larger one: built again).
MAX_MANIFEST_BYTES = 1 << 20
MAX_FILE_BYTES = 1 << 28
#: A descriptor's file, opened again by name (see :func:`_fd_name`); Linux has it, macOS and the BSDs not.
PROC_FD = "/proc/self/fd"
#: How a file of an entry is opened: read-only, not following a link, not blocking on a FIFO, not inherited.
_OPEN_FILE = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
              | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0))
#: How an entry directory is opened, where its files can be opened relative to it (else by path).
_OPEN_DIR = (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
             if hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd else None)
_dlopen_serial = itertools.count()


class _UnloadableError(Exception):
    """An entry passes every check, but its library does not load (``dlopen`` fails, or routines are missing)."""


#: What :func:`compile` can build: the compiled C, or the generated NumPy or JAX module.
BACKENDS = ("c", "numpy", "jax")


def _entry_files(name: str, backend: str = "c") -> list[str]:
    """The files of an entry besides its manifest, as :func:`_build` writes them: source, header, library (C);
    the module (NumPy, JAX). The last one is what is loaded."""
    if backend == "c":
        return [f"{name}.c", f"{name}.h", f"{name}.so"]
    return [python_file(name, backend)]


@dataclass(frozen=True)
class Expected:
    """What an entry for the robot being compiled must describe: the module name, the number of joints,
    the routines asked for and the parameter names (None: not checked, for a model in base parameters,
    whose names come from the identification)."""

    name: str
    n: int
    kinds: tuple[str, ...]
    parameters: tuple[str, ...] | None
    backend: str = "c"

    def problem(self, spec: ModuleSpec) -> str | None:
        """What ``spec`` gets wrong, or None: every array shape the wrapper allocates by must be the robot's."""
        routines = tuple(r.name for r in spec.routines)
        if (spec.name, spec.n, routines) != (self.name, self.n, ("constants", *self.kinds)):
            return (f"module {spec.name!r} with {spec.n} joints and routines {', '.join(routines)}, not "
                    f"{self.name!r} with {self.n} joints and constants, {', '.join(self.kinds)}")
        if self.parameters is not None and spec.parameters != self.parameters:
            return f"parameters {', '.join(spec.parameters) or 'none'}, not {', '.join(self.parameters) or 'none'}"
        for routine in spec.routines:
            arrays = [(a.name, a.shape) for a in routine.arrays]
            if arrays != self.arrays(routine.name, spec) or routine.batched != (routine.name != "constants"):
                return f"routine {routine.name} with arrays {arrays}"
        return None

    def arrays(self, routine: str, spec: ModuleSpec) -> list[tuple[str, tuple[int, ...]]]:
        """The arguments of ``routine`` for this robot, with their shapes."""
        k = ("k", (spec.n_constants,))
        if routine == "constants":
            return [("params", (len(spec.parameters),)), k]
        kind = next(kind for kind in KINDS if kind.name == routine)
        return [k, *((name, (self.n,)) for name in kind.inputs), (kind.output, output_shape(kind.output, self.n))]


def _cache_root(cache: str | Path | None) -> Path:
    """The cache directory, created 0700 if missing; it must be this user's and writable by no other."""
    root = Path(cache if cache is not None else cache_dir())
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise CompileError(f"cannot create the compile cache {root} ({exc.strerror or exc}); set ${CACHE_ENV} "
                           f"to a writable directory, or {FALLBACK}") from None
    _check_private(root, os.stat(root), "the compile cache")
    return root


def _check_private(path: Path, info: os.stat_result, what: str) -> None:
    """Refuse ``path`` (one line) unless it belongs to this user and no other user may write it."""
    if not hasattr(os, "getuid"):  # (no POSIX ownership to check)
        return
    if info.st_uid != os.getuid():
        raise CompileError(f"refusing {what} {path}: it is owned by uid {info.st_uid}, not by this user "
                           f"(uid {os.getuid()}); remove it, or set ${CACHE_ENV} to a directory of your own")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CompileError(f"refusing {what} {path}: other users may write it (mode {stat.filemode(info.st_mode)}); "
                           f"remove it, or `chmod go-w` it")


def _open_private(name: str, where: Path, dir_fd: int | None) -> int:
    """A read-only descriptor of the plain file ``name`` (in the directory open as ``dir_fd``; ``where``
    is its path, for messages and where there is no ``dir_fd``), of this user's, that no other user may
    write: the checks are made on the descriptor. OSError if it cannot be opened (a link, say) or is not a
    plain file; CompileError if it is another user's or writable by others. The caller closes it."""
    fd = os.open(name if dir_fd is not None else where, _OPEN_FILE, dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{where} is not a plain file")
        _check_private(where, info, "the compile cache file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _chunks(fd: int, where: Path, limit: int) -> Iterable[bytes]:
    """The bytes of ``fd`` from its offset, in pieces; OSError past ``limit`` bytes (no more is read)."""
    if os.fstat(fd).st_size > limit:
        raise OSError(f"{where} is larger than {limit} bytes")
    total = 0
    while chunk := os.read(fd, min(1 << 20, limit + 1 - total)):
        total += len(chunk)
        if total > limit:
            raise OSError(f"{where} is larger than {limit} bytes")
        yield chunk


def _fd_name(fd: int) -> str | None:
    """A name under which ``dlopen`` opens the file of ``fd``: ``/proc/self/fd/N``, spelled differently
    at each call (None where there is no ``/proc/self/fd``). glibc hands back an object already loaded
    whose name is the one asked for, and descriptor numbers are reused (and ctypes never unloads), so the
    same name twice could give an earlier library: the kernel ignores the ``/`` and ``/.`` steps that spell
    a serial number here (``/proc/self/fd//N``, ``/proc/self/fd/./N``, ``/proc/self/fd/.//N``, ...)."""
    if not os.path.isdir(PROC_FD):
        return None
    steps = "".join("/." if bit == "1" else "/" for bit in f"{next(_dlopen_serial):b}")
    return f"{PROC_FD}{steps}/{fd}"


def _open_verified(entry: Path, expected: Expected) -> tuple[ModuleSpec, int | None, bytes | None] | None:
    """The spec of a cache entry that passes every check (see the module docstring), with the descriptor
    its library was hashed through (C: open, the caller loads from it, and closes it) or the bytes of its
    module that were hashed (NumPy, JAX); None where the entry is missing, unreadable or fails one (to be built
    again). A CompileError where the entry or one of its files belongs to another user or may be written by
    others."""
    try:
        info = os.lstat(entry)
    except FileNotFoundError:
        return None
    if not stat.S_ISDIR(info.st_mode):
        return None
    _check_private(entry, info, "the compile cache entry")
    dir_fd = library = None
    module: bytes | None = None
    try:
        if _OPEN_DIR is not None:
            dir_fd = os.open(entry, _OPEN_DIR)
            info = os.fstat(dir_fd)
            if not stat.S_ISDIR(info.st_mode):
                return None
            _check_private(entry, info, "the compile cache entry")
        fd = _open_private(SPEC_FILE, entry / SPEC_FILE, dir_fd)
        try:
            manifest = json.loads(b"".join(_chunks(fd, entry / SPEC_FILE, MAX_MANIFEST_BYTES)))
        finally:
            os.close(fd)
        files, names = manifest["files"], _entry_files(expected.name, expected.backend)
        # The names first: nothing is opened that is not one of the entry's own files.
        if (manifest["format"] != MANIFEST_FORMAT or not isinstance(files, dict) or sorted(files) != sorted(names)
                or manifest["spec_sha256"] != _sha256(_canonical(manifest["spec"]))):
            return None
        python = expected.backend != "c"
        for name in names:
            fd = _open_private(name, entry / name, dir_fd)
            loaded = name == names[-1]  # the library, or the module
            if loaded and not python:
                library = fd
            digest, kept = hashlib.sha256(), []
            try:
                for chunk in _chunks(fd, entry / name, MAX_FILE_BYTES):
                    digest.update(chunk)
                    if loaded and python:
                        kept.append(chunk)
            finally:
                if fd != library:
                    os.close(fd)
            if digest.hexdigest() != files[name]:
                return None
            if loaded and python:
                module = b"".join(kept)  # the bytes that were hashed are the ones executed
        spec = _spec_from_json(manifest["spec"])
        if expected.problem(spec) is not None or (library is None and module is None):
            return None
        opened, library = (spec, library, module), None
        return opened
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # unreadable, or not what was written
        return None
    finally:
        for still_open in (dir_fd, library):
            if still_open is not None:
                os.close(still_open)


def _checked_spec(entry: Path, expected: Expected) -> ModuleSpec | None:
    """The spec of a cache entry that passes every check (see the module docstring), or None where the
    entry is missing, unreadable or fails one (to be built again). A CompileError where the entry or
    one of its files belongs to another user or may be written by others."""
    opened = _open_verified(entry, expected)
    if opened is None:
        return None
    if opened[1] is not None:
        os.close(opened[1])
    return opened[0]


def _load_entry(entry: Path, expected: Expected) -> CompiledDynamics | None:
    """The entry's library, loaded from the descriptor it was hashed through, if the entry passes its
    checks; None if it does not (to be built), :class:`_UnloadableError` if it does but the library does not load."""
    opened = _open_verified(entry, expected)
    if opened is None:
        return None
    spec, fd, module = opened
    if fd is None:  # a NumPy or JAX module
        try:
            return _python_backend(spec, expected.backend, (module or b"").decode("utf-8"))
        except (SyntaxError, UnicodeDecodeError) as exc:  # (hashed, so only a module another version wrote)
            raise _UnloadableError(" ".join(str(exc).split())) from None
    try:
        return load_library(entry / f"{expected.name}.so", spec, fd=fd)
    except (OSError, AttributeError) as exc:  # not a library for this host, or without the routines
        raise _UnloadableError(" ".join(str(exc).split())) from None
    finally:
        os.close(fd)


# -- the spec beside the library (what the wrapper needs, without regenerating) --------------------


def _spec_to_json(spec: ModuleSpec, hashes: Mapping[str, str]) -> str:
    """The entry's manifest: the routine description, its own hash and the hashes of the entry's files."""
    routines = [
        {"name": r.name, "arrays": [[a.name, list(a.shape)] for a in r.arrays], "batched": r.batched}
        for r in spec.routines
    ]
    data = {"name": spec.name, "robot": spec.robot, "n": spec.n, "parameters": list(spec.parameters),
            "n_constants": spec.n_constants, "version": spec.version, "routines": routines}
    manifest = {"format": MANIFEST_FORMAT, "spec": data, "spec_sha256": _sha256(_canonical(data)),
                "files": dict(sorted(hashes.items()))}
    return json.dumps(manifest, indent=1, sort_keys=True) + "\n"


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _spec_from_json(data: Mapping[str, Any]) -> ModuleSpec:
    routines = []
    for r in data["routines"]:
        arrays = [Array(name, tuple(shape)) for name, shape in r["arrays"]]
        routines.append(Routine(name=r["name"], summary="", inputs=tuple(arrays[:-1]), output=arrays[-1], loads=(),
                                assignments=(), stores=(), count=OperationCount(), batched=r["batched"]))
    return ModuleSpec(name=data["name"], robot=data["robot"], n=data["n"], parameters=tuple(data["parameters"]),
                      n_constants=data["n_constants"], routines=tuple(routines), version=data["version"])

"""The compiled object: :class:`CompiledDynamics`, over a shared library (:func:`load_library`) or a generated
Python module (:mod:`robodyn.runtime.backends`).

The library is loaded with :mod:`ctypes` (standard library: no build-time dependency, and the calls
release the GIL); batches loop in C (the ``_batch`` routines). One state is handed to the same routines by
``robodyn._fastcall`` where it was built (a C extension of robodyn's own, installed with it: no ctypes
conversions and no copies per call, see :meth:`CompiledDynamics.one_state`); it also serves the numeric
engine's hot path (:mod:`robodyn.numeric.hotpath`, through :func:`robodyn.runtime.entry.hot_routines`).

The per-output methods of :class:`CompiledDynamics` (``inverse_dynamics``, ``mass_matrix``, ...) are those of
the one vocabulary of routines, :data:`robodyn.codegen.spec.KINDS`: each takes the kind's joint arrays, in its
order; a method added or missing on either side fails at import (:func:`_check_methods`).
"""

from __future__ import annotations

import ctypes
import functools
import inspect
import itertools
import math
import os
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from robodyn.codegen.spec import KINDS, ModuleSpec
from robodyn.errors import BuildNote
from robodyn.model.params import parameter_value

try:  # the one-state caller built with the package (an optional extension: without it, ctypes)
    from robodyn._fastcall import Caller as _Caller

    Caller: type[_Caller] | None = _Caller
except ImportError:  # pragma: no cover - where the extension could not be built (no Python.h)
    Caller = None

__all__ = ["CompiledDynamics", "load_library"]

ParamValues = Mapping[Any, Any] | Sequence[float] | np.ndarray
#: A routine's ``--outputs`` key (``center_of_mass`` -> ``com``): what rd.compile builds for it.
ROUTINE_KEYS = {kind.name: kind.key for kind in KINDS}
_Method = TypeVar("_Method", bound=Callable[..., Any])


def _routine(method: _Method) -> _Method:
    """Mark a method of :class:`CompiledDynamics` as the call of the routine of its name (:func:`_check_methods`)."""
    method.routine = method.__name__  # type: ignore[attr-defined]
    return method


#: The methods that return their routine's array as it is (one state: (n,), (n, n), ...): on an instance whose
#: routines bind no parameters, the extension's one-state call stands in for them (:meth:`CompiledDynamics._stand_in`).
_STAND_INS = frozenset({
    "inverse_dynamics", "mass_matrix", "mass_matrix_packed", "coriolis", "bias_forces", "gravity", "forward_dynamics",
    "center_of_mass", "center_of_mass_jacobian", "centroidal_map", "centroidal_bias",
})

#: A descriptor's file, opened again by name (see :func:`_fd_name`); Linux has it, macOS and the BSDs not.
PROC_FD = "/proc/self/fd"
_dlopen_serial = itertools.count()


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
                 fast: Callable[..., Callable[..., Any]] | None = None):
        self.name = spec.robot
        self._one_state = one_state
        # fast(routine, k, tail): a thread-safe call on one state that answers NotImplemented to anything else
        # (robodyn._fastcall's); the methods' calls without parameters go through it first
        self._fast_call = fast
        self._fast: dict[str, Callable[..., Any]] = {}
        self.n = spec.n
        #: The length of q: ``n``, or for a floating base n + 1 (its position and unit quaternion (x, y, z, w), then
        #: the joints'; qd, qdd, tau and the results have n = nv entries: :mod:`robodyn.program.floating`).
        self.nq = spec.nq if spec.nq is not None else spec.n
        self._sized: dict[str, tuple[tuple[str, int], ...]] = {}  # routine -> its joint arrays' names and lengths
        self.parameters: tuple[str, ...] = spec.parameters
        self.routines: tuple[str, ...] = spec.kinds
        #: The named frames of the frames' routines (``frame_pose``, ...), "" the tool frame; () without them.
        self.frames: tuple[str, ...] = spec.frames
        self.backend = backend
        self.path = path
        self._spec = spec
        self._call = call
        self._lock = threading.Lock()
        self._local = threading.local()  # per thread: the one-state calls of the methods (their buffers)
        self._last: tuple[tuple[float, ...], np.ndarray] | None = None
        #: rd.compile's build of other outputs (and frames) of the same robot, with the same options: a routine or
        #: frame left out is built on its first call (:meth:`_later`); None: a ValueError names what was built.
        self._more: Callable[[tuple[str, ...], tuple[str, ...] | None], CompiledDynamics] | None = None
        self._built_later: dict[tuple[str, str | None], CompiledDynamics] = {}

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
                self._stand_in(routine)
            if fast is not None and (result := fast(*arrays)) is not NotImplemented:
                return result  # (anything but one state of float64 arrays: the checks and batches below)
        if routine not in self.routines:
            return self._later(routine)._run(routine, arrays, params, out)
        k = self.constants(params)
        given = [np.asarray(a, dtype=float) for a in arrays]
        if self.nq != self.n:
            self._check_sized_arrays(routine, given)
        else:
            self._check_joint_arrays(given)
        if out is None and self._one_state is not None and all(a.ndim == 1 for a in given):  # one state
            return self._single(routine, k)(*given)
        shape, batch, flat = self._batched(given, np) if self.nq == self.n else self._batched_sized(routine, given)
        tail = self._tail(routine)
        target = None if out is None else _out_array(out, (batch[0], *tail), shape[:-1] + tail, flat)
        result = self._call(routine, k, flat, tail, target)
        if out is not None:
            return out
        return result[0] if len(shape) == 1 else result

    def _stand_in(self, routine: str) -> None:
        """The method of ``routine``, where it returns the routine's array as it is, replaced on this instance by
        the extension's call of one state with the method as its fallback (every other call: a batch, ``out=``,
        ``params=``, a wrong shape): a call on one state then skips the method's Python layers (Solo12's inverse
        dynamics 0.79 us where it was 1.0 us, Pinocchio's ``rnea`` 2.2 us). ``inspect.signature`` and ``help``
        see the method (the Caller's ``__wrapped__`` and ``__doc__``)."""
        if routine in _STAND_INS and getattr(type(self), routine) is getattr(CompiledDynamics, routine):
            # (a subclass's own method is left to run; the instance is freed at the next garbage collection, not
            # when its last name goes: the Caller holds the bound method, which holds the instance)
            method = getattr(type(self), routine).__get__(self)
            assert self._fast_call is not None
            setattr(self, routine, self._fast_call(routine, self.constants(), self._tail(routine), fallback=method))

    def _check_joint_arrays(self, given: Sequence[Any]) -> None:
        for a in given:
            if a.ndim not in (1, 2) or a.shape[-1] != self.n:
                raise ValueError(f"joint arrays of {self.name!r} must have shape ({self.n},) or (N, {self.n}), "
                                 f"got {a.shape}")

    def _sizes(self, routine: str) -> tuple[tuple[str, int], ...]:
        """The name and length of one state of each joint array of ``routine`` (q: :attr:`nq`; the others: n)."""
        sizes = self._sized.get(routine)
        if sizes is None:
            sizes = self._sized[routine] = tuple((a.name, a.size) for a in self._spec.routine(routine).inputs[1:])
        return sizes

    def _check_sized_arrays(self, routine: str, given: Sequence[Any]) -> None:
        """A floating base's arrays: q of nq, the others of nv, one state or a batch."""
        for (name, size), a in zip(self._sizes(routine), given, strict=True):
            if a.ndim not in (1, 2) or a.shape[-1] != size:
                what = ("nq: base position, unit quaternion (x, y, z, w), joints" if name == "q" else
                        "nv: base twist (linear, angular) or wrench, joints")
                raise ValueError(f"{name} of {self.name!r} must have shape ({size},) or (N, {size}) ({what}), "
                                 f"got {a.shape}")

    def _batched_sized(self, routine: str, given: Sequence[Any]) -> tuple[tuple[int, ...], tuple[int, ...],
                                                                          list[Any]]:
        """:meth:`_batched` for arrays of different lengths (a floating base): the states broadcast, each array
        its own length; ``shape`` and ``batch`` as :meth:`_batched` gives them, with n."""
        try:
            lead = np.broadcast_shapes(*(a.shape[:-1] for a in given))
        except ValueError:
            raise ValueError(f"batch shapes do not match: {[a.shape for a in given]}") from None
        N = lead[0] if lead else 1
        flat = [a if a.shape == (N, a.shape[-1]) and a.flags.c_contiguous else
                np.ascontiguousarray(np.broadcast_to(a, (N, a.shape[-1]))) for a in given]
        return (*lead, self.n), (N, self.n), flat

    def _batched(self, given: Sequence[Any], xp: Any) -> tuple[tuple[int, ...], tuple[int, ...], list[Any]]:
        """(shape, batch, flat): the broadcast shape of the joint arrays, the batch's (N, n) shape (one state: (1, n))
        and the arrays as C-ordered (N, n) rows of ``xp`` (NumPy or CuPy); an array of the batch's shape already in
        rows is passed as it is."""
        try:
            shape = np.broadcast_shapes(*(a.shape for a in given))
        except ValueError:
            raise ValueError(f"batch shapes do not match: {[a.shape for a in given]}") from None
        batch = (1, self.n) if len(shape) == 1 else shape
        flat = [a if a.shape == batch and a.flags.c_contiguous else xp.ascontiguousarray(xp.broadcast_to(a, batch))
                for a in given]
        return shape, batch, flat

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
        0.43 us on the PUMA's inverse dynamics (a bare ctypes call of the same routine: 0.6 us; the methods on
        one state, where the extension stands in for them: 0.47 us). Without the extension (Python installed
        without its headers) it copies the arrays into work buffers for a ctypes call, 1.3 us, and is not
        thread-safe: call ``one_state`` again per thread."""
        if routine not in self.routines:
            return self._later(routine).one_state(routine, params=params)
        k = self.constants(params)
        if self._one_state is not None:
            return self._one_state(routine, k, self._tail(routine))
        return lambda *arrays: self._run(routine, arrays, params)

    def _later(self, routine: str, frame: str | None = None) -> CompiledDynamics:
        """The compiled routines that hold ``routine`` (for ``frame``), left out by rd.compile: built on the first
        call (the :class:`~robodyn.errors.BuildNote` says so once, and which ``outputs`` or ``frames`` build it up
        front), then kept; a ValueError naming what was built where this object cannot build more (one made by
        :func:`load_library` or another backend's loader alone)."""
        found = self._built_later.get((routine, frame))
        if found is not None:
            return found
        if self._more is None or routine not in ROUTINE_KEYS:
            raise ValueError(f"{routine} was not generated for {self.name!r} (generated: {', '.join(self.routines)})")
        key = ROUTINE_KEYS[routine]
        asked = f"frames=[{frame!r}]" if routine in self.routines else f"outputs=[..., {key!r}]"
        warnings.warn(f"{self.name}: {routine}{f' of frame {frame!r}' if frame is not None else ''} was not compiled "
                      f"with the rest: building it now (rd.compile(robot, {asked}) builds it up front)", BuildNote,
                      stacklevel=4)
        built = self._more((key,), (frame,) if frame is not None else self.frames or None)
        self._built_later[(routine, frame)] = built
        return built

    def _tail(self, routine: str) -> tuple[int, ...]:
        """The shape of one state's result of ``routine``."""
        return self._spec.routine(routine).output.shape

    @_routine
    def inverse_dynamics(self, q: Any, qd: Any, qdd: Any, *, params: ParamValues | None = None,
                         out: np.ndarray | None = None) -> np.ndarray:
        """tau = M(q) qdd + h(q, qd) + G(q) + damping + load."""
        return self._run("inverse_dynamics", (q, qd, qdd), params, out)

    @_routine
    def mass_matrix(self, q: Any, *, params: ParamValues | None = None,
                    out: np.ndarray | None = None) -> np.ndarray:
        """M(q): (n, n), or (N, n, n) for a batch."""
        return self._run("mass_matrix", (q,), params, out)

    @_routine
    def mass_matrix_packed(self, q: Any, *, params: ParamValues | None = None,
                           out: np.ndarray | None = None) -> np.ndarray:
        """M(q)'s upper triangle row by row: (n(n+1)/2,), or (N, n(n+1)/2) for a batch; ``M[np.triu_indices(n)]``
        (LAPACK's lower packed storage of M). Half the stores of :meth:`mass_matrix`; compile with ``outputs``
        holding ``"M_packed"``."""
        return self._run("mass_matrix_packed", (q,), params, out)

    @_routine
    def coriolis(self, q: Any, qd: Any, *, params: ParamValues | None = None,
                 out: np.ndarray | None = None) -> np.ndarray:
        """h(q, qd): Coriolis and centrifugal torques only."""
        return self._run("coriolis", (q, qd), params, out)

    @_routine
    def bias_forces(self, q: Any, qd: Any, *, params: ParamValues | None = None,
                    out: np.ndarray | None = None) -> np.ndarray:
        """h + G + damping + load: inverse dynamics at qdd = 0."""
        return self._run("bias_forces", (q, qd), params, out)

    @_routine
    def gravity(self, q: Any, *, params: ParamValues | None = None,
                out: np.ndarray | None = None) -> np.ndarray:
        """G(q)."""
        return self._run("gravity", (q,), params, out)

    @_routine
    def forward_dynamics(self, q: Any, qd: Any, tau: Any, *, params: ParamValues | None = None,
                         out: np.ndarray | None = None) -> np.ndarray:
        """qdd solving M(q) qdd = tau - bias(q, qd) (a generated LDL^T solve; no check that M is
        positive definite)."""
        return self._run("forward_dynamics", (q, qd, tau), params, out)

    @_routine
    def inverse_dynamics_derivatives(self, q: Any, qd: Any, qdd: Any, *, params: ParamValues | None = None,
                                     out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(dtau/dq, dtau/dqd), each (n, n) or (N, n, n), [..., i, j] = d tau_i / d x_j (dtau/dqdd is M);
        compile with ``outputs`` holding ``"dtau"``. ``out``: both, packed as ([N,] 2, n, n) (the results are
        views of it)."""
        both = self._run("inverse_dynamics_derivatives", (q, qd, qdd), params, out)
        return both[..., 0, :, :], both[..., 1, :, :]

    @_routine
    def forward_dynamics_derivatives(self, q: Any, qd: Any, tau: Any, *, params: ParamValues | None = None,
                                     out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(dqdd/dq, dqdd/dqd, dqdd/dtau = M^-1) at qdd = forward_dynamics(q, qd, tau), each (n, n) or
        (N, n, n); compile with ``outputs`` holding ``"dqdd"``. ``out``: the three, packed as ([N,] 3, n, n)
        (the results are views of it)."""
        three = self._run("forward_dynamics_derivatives", (q, qd, tau), params, out)
        return three[..., 0, :, :], three[..., 1, :, :], three[..., 2, :, :]

    # -- the named frames' kinematics: every compiled frame in one call, one of them answered --------------------
    def _frame(self, routine: str, arrays: Sequence[Any], frame: str | None, params: ParamValues | None,
               out: np.ndarray | None) -> np.ndarray:
        """The result of the frames' routine ``routine`` for ``frame`` (None: the first compiled, "" the tool
        frame): a view of the routine's array, (..., F, rows, columns), at the frame's index."""
        if self._more is not None and (routine not in self.routines or frame not in (None, *self.frames)):
            return self._later(routine, frame)._frame(routine, arrays, frame, params, out)
        if frame is None:
            index = 0
        elif frame in self.frames:
            index = self.frames.index(frame)
        else:
            listed = ", ".join(repr(f) if f else "'' (the tool frame)" for f in self.frames) or "none"
            raise ValueError(f"frame {frame!r} was not compiled for {self.name!r} (frames: {listed}; "
                             "rd.compile(..., frames=[...]))")
        return self._run(routine, arrays, params, out)[..., index, :, :]

    @_routine
    def frame_pose(self, q: Any, *, frame: str | None = None, params: ParamValues | None = None,
                   out: np.ndarray | None = None) -> np.ndarray:
        """The homogeneous transform (4, 4) (or (N, 4, 4)) of the named frame ``frame`` in the base frame (a floating
        robot's: in the world) (one of
        :attr:`frames`, compiled with ``outputs`` holding ``"pose"`` and ``frames=[...]``; None: the first).
        ``out``: every compiled frame's, ([N,] F, 4, 4) (the result is a view of it)."""
        return self._frame("frame_pose", (q,), frame, params, out)

    @_routine
    def frame_jacobian(self, q: Any, *, frame: str | None = None, params: ParamValues | None = None,
                       out: np.ndarray | None = None) -> np.ndarray:
        """The frame's Jacobian (6, n) (or (N, 6, n)): rows (v; omega), v the velocity of its origin and omega, in
        the base frame (Pinocchio's LOCAL_WORLD_ALIGNED); ``frame`` and ``out`` as :meth:`frame_pose`."""
        return self._frame("frame_jacobian", (q,), frame, params, out)

    @_routine
    def frame_jacobian_world(self, q: Any, *, frame: str | None = None, params: ParamValues | None = None,
                             out: np.ndarray | None = None) -> np.ndarray:
        """The frame's spatial Jacobian (6, n) in the base frame (Pinocchio's WORLD); as :meth:`frame_jacobian`."""
        return self._frame("frame_jacobian_world", (q,), frame, params, out)

    @_routine
    def frame_jacobian_local(self, q: Any, *, frame: str | None = None, params: ParamValues | None = None,
                             out: np.ndarray | None = None) -> np.ndarray:
        """The frame's Jacobian (6, n) in its own axes (Pinocchio's LOCAL); as :meth:`frame_jacobian`."""
        return self._frame("frame_jacobian_local", (q,), frame, params, out)

    @_routine
    def frame_jacobian_dot(self, q: Any, qd: Any, *, frame: str | None = None, params: ParamValues | None = None,
                           out: np.ndarray | None = None) -> np.ndarray:
        """d/dt of :meth:`frame_jacobian` at (q, qd) (Pinocchio's ``getFrameJacobianTimeVariation``)."""
        return self._frame("frame_jacobian_dot", (q, qd), frame, params, out)

    @_routine
    def frame_jacobian_world_dot(self, q: Any, qd: Any, *, frame: str | None = None,
                                 params: ParamValues | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """d/dt of :meth:`frame_jacobian_world` at (q, qd)."""
        return self._frame("frame_jacobian_world_dot", (q, qd), frame, params, out)

    @_routine
    def frame_jacobian_local_dot(self, q: Any, qd: Any, *, frame: str | None = None,
                                 params: ParamValues | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """d/dt of :meth:`frame_jacobian_local` at (q, qd)."""
        return self._frame("frame_jacobian_local_dot", (q, qd), frame, params, out)

    @_routine
    def center_of_mass(self, q: Any, *, params: ParamValues | None = None,
                       out: np.ndarray | None = None) -> np.ndarray:
        """A floating base's centre of mass in the world: (3,), or (N, 3)."""
        return self._run("center_of_mass", (q,), params, out)

    @_routine
    def center_of_mass_jacobian(self, q: Any, *, params: ParamValues | None = None,
                                out: np.ndarray | None = None) -> np.ndarray:
        """Its Jacobian (3, n), d com/dt = J v (world axes)."""
        return self._run("center_of_mass_jacobian", (q,), params, out)

    @_routine
    def centroidal_map(self, q: Any, *, params: ParamValues | None = None,
                       out: np.ndarray | None = None) -> np.ndarray:
        """The centroidal momentum matrix A_G (6, n): rows linear, angular momentum about the centre of mass."""
        return self._run("centroidal_map", (q,), params, out)

    @_routine
    def centroidal_bias(self, q: Any, qd: Any, *, params: ParamValues | None = None,
                        out: np.ndarray | None = None) -> np.ndarray:
        """dA_G/dt v (6,): the centroidal momentum's rate at zero acceleration."""
        return self._run("centroidal_bias", (q, qd), params, out)


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




def _check_methods(cls: type) -> None:
    """The routine methods of ``cls`` (marked with :func:`_routine`) are exactly the kinds of
    :data:`~robodyn.codegen.spec.KINDS`, each taking that kind's joint arrays in order (then keywords only):
    a kind added to the vocabulary without its method, or a method without its kind, fails at import."""
    methods = {name: value for name, value in vars(cls).items() if getattr(value, "routine", None) == name}
    kinds = {kind.name: kind for kind in KINDS}
    if set(methods) != set(kinds):
        raise TypeError(f"{cls.__name__}'s routine methods ({', '.join(sorted(methods))}) are not the kinds of "
                        f"robodyn.codegen.spec.KINDS ({', '.join(sorted(kinds))})")
    for name, method in methods.items():
        positional = [p.name for p in inspect.signature(method).parameters.values()
                      if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD][1:]  # (after self)
        if tuple(positional) != kinds[name].inputs:
            raise TypeError(f"{cls.__name__}.{name} takes {tuple(positional)}, not the kind's {kinds[name].inputs}")


_check_methods(CompiledDynamics)


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

    def caller(routine: str, k: np.ndarray, tail: tuple[int, ...], strict: bool = True,
               fallback: Callable[..., Any] | None = None) -> Callable[..., np.ndarray]:
        """The extension's call of ``routine`` on one state (the arrays read in place; thread-safe); any other
        call goes to ``fallback`` where one is given."""
        assert Caller is not None
        address = ctypes.cast(functions[routine], ctypes.c_void_p).value or 0  # (0: refused)
        lengths = tuple(a.size for a in spec.routine(routine).inputs[1:])  # (a floating base's q: nq; the others: n)
        return Caller(address=address, k=k if k.size else np.zeros(1), inputs=len(lengths), n=spec.n,
                      size=math.prod(tail), empty=np.empty, shape=tail, convert=_float_array, strict=strict,
                      keep=lib, name=spec.robot, lengths=lengths, fallback=fallback)

    def one_state(routine: str, k: np.ndarray, tail: tuple[int, ...]) -> Callable[..., np.ndarray]:
        if Caller is not None:
            return caller(routine, k, tail)
        kk = k if k.size else np.zeros(1)
        buffers = [np.empty(a.size) for a in spec.routine(routine).inputs[1:]]  # the joint arrays after k
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


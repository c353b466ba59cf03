"""The hot path: one-state calls of the numeric engine handed to compiled routines once they are many.

The engine runs one state over Python floats (:mod:`robodyn.numeric.api`): some 8.5 us for the PUMA's tau and
15 us for the Panda's, where ``pinocchio.rnea`` takes 1.0 and 1.35 us. That is fine for a call and slow for a
loop of them (a controller, an optimiser's cost, a user's own integrator). So each compiled model (a robot and
its parameter binding) counts its one-state calls; at the :data:`HOT_CALLS`-th, a background thread gets the
robot's compiled routines (``rd.compile``'s default outputs: from its cache, or built into it the first
time), and from then on the one-state calls of :func:`~robodyn.numeric.inverse_dynamics`,
:func:`~robodyn.numeric.mass_matrix`, :func:`~robodyn.numeric.coriolis`, :func:`~robodyn.numeric.gravity`,
:func:`~robodyn.numeric.bias_forces` and :func:`~robodyn.numeric.forward_dynamics` (and the toolbox aliases
over them) run the compiled C through ``robodyn._fastcall``: about 1 us a call. The calls never wait for
the build: they go on over floats until it is done (slower meanwhile: generating the code is Python, which
shares the interpreter with them; the C compiler runs in its own process). Batches are not affected (the
engine is vectorised over them already), nor calls with ``fext``.

The compiled routines compute the same equations in another order, so the numbers agree to rounding (a few
units of 1e-16 relative), not bit for bit, across the switch. Forward dynamics there solves M qdd = tau - bias
by a generated LDL^T without checking that M is positive definite; a result that is not finite (a singular M)
is computed again over floats, which raises numpy.linalg.LinAlgError as before.

The switch needs a robot (a :class:`~robodyn.model.manipulator.Manipulator`: calls given a compiled
:class:`~robodyn.numeric.model.NumericModel` have nothing to compile, and are not counted), a C compiler and the
``robodyn._fastcall`` extension (built when robodyn is installed where Python's headers are). The routines come
from :func:`robodyn.runtime.entry.hot_routines`, a layer above this engine: the background build imports it
when it starts (the one import of a higher layer in robodyn, made on use: a plain ``import robodyn`` and its
numeric engine engage the hot path without anything else imported first; tests/test_layers.py lists it).
:func:`register` sets another builder instead (a test's hook). Where anything is missing, or the build fails,
the calls stay on floats, and :attr:`HotPath.failure` says why.

``$ROBODYN_HOT_CALLS``: the number of one-state calls before the switch (default 1000, some 10 ms over
floats); ``0`` turns the hot path off. :func:`hot_path` gives a model's state, and can wait for the build.
A process that exits while the background build runs leaves the compiler's temporary directory in the cache.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from robodyn.model.manipulator import Manipulator

#: The environment variable that sets :data:`HOT_CALLS` (read when a model is compiled).
HOT_CALLS_ENV = "ROBODYN_HOT_CALLS"
#: One-state calls of a model before its compiled routines are fetched.
HOT_CALLS = 1000

#: builder(robot, params) -> {routine: call on one state, NotImplemented for anything else}; see :func:`register`.
Builder = Callable[[Manipulator, Any], Mapping[str, Callable[..., Any]]]
_builder: Builder | None = None


def register(builder: Builder | None) -> None:
    """Build the hot path's routines with ``builder`` instead of :func:`robodyn.runtime.entry.hot_routines` (a hook
    for tests; None: that default again). Nothing registers one: the default is imported when a build starts."""
    global _builder
    _builder = builder


def _compiled_routines(robot: Manipulator, params: Any) -> Mapping[str, Callable[..., Any]]:
    """The default builder: robodyn.runtime's, imported here, on use (runtime is a layer above this engine, and
    imports it; tests/test_layers.py lists this one upward import with its reason)."""
    from robodyn.runtime.entry import hot_routines

    return hot_routines(robot, params)


def _limit() -> int:
    text = os.environ.get(HOT_CALLS_ENV, "").strip()
    if not text:
        return HOT_CALLS
    try:
        return max(0, int(text))
    except ValueError:
        raise ValueError(f"${HOT_CALLS_ENV}={text!r} is not a number of calls (0 turns the hot path off)") from None


class HotPath:
    """One compiled model's one-state calls: counted over floats, then compiled routines (see the module)."""

    def __init__(self) -> None:
        self.limit = _limit()
        self.calls = 0
        self.routines: Mapping[str, Callable[..., Any]] | None = None
        self.failure: str | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[type[HotPath], tuple[()]]:
        """A copy or a pickle (of its NumericModel) starts afresh: the routines and the lock stay here."""
        return HotPath, ()

    def __repr__(self) -> str:
        if self.routines is not None:
            state = "compiled"
        elif self.failure is not None:
            state = f"on floats ({self.failure})"
        else:
            state = "building" if self._thread is not None else f"on floats, {self.calls} of {self.limit} calls"
        return f"<HotPath {state}>"

    def call(self, routine: str, robot: object, params: Any, *arrays: Any) -> Any:
        """``routine`` on ``arrays`` by the compiled routines once there are; else NotImplemented (the caller
        computes over floats), counting one-state calls toward the switch."""
        routines = self.routines
        if routines is not None:
            return routines[routine](*arrays)
        if self.limit and isinstance(robot, Manipulator) and np.ndim(arrays[0]) == 1:
            self.calls += 1
            if self.calls >= self.limit and self._thread is None:
                self._start(robot, params)
        return NotImplemented

    def forward(self, robot: object, params: Any, *arrays: Any) -> Any:
        """forward_dynamics as :meth:`call`, NotImplemented where the compiled qdd is not finite (M singular)."""
        qdd = self.call("forward_dynamics", robot, params, *arrays)
        # (one sum of n floats is the quick test; a sum that overflows only sends the call to the floats too)
        if qdd is NotImplemented or math.isfinite(sum(qdd.ravel().tolist())):
            return qdd
        return NotImplemented

    def _start(self, robot: Manipulator, params: Any) -> None:
        with self._lock:
            if self._thread is not None:
                return
            builder = _builder or _compiled_routines
            self._thread = threading.Thread(target=self._build, args=(builder, robot, params), daemon=True,
                                            name=f"robodyn hot path: {robot.name}")
            self._thread.start()

    def _build(self, builder: Builder, robot: Manipulator, params: Any) -> None:
        try:
            self.routines = builder(robot, params)
        except Exception as exc:  # no compiler, a failed build, no extension, no runtime: the calls stay on floats
            self.failure = " ".join(f"{type(exc).__name__}: {exc}".split())
            self.limit = 0

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a background build started (up to ``timeout`` seconds); True once the routines are compiled."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self.routines is not None

"""The stages of a long build, told to whoever listens: the command line's progress bar shows them
(``robodyn count``, ``generate``, ...: "choosing the route of M", "building M (recursive)", "forward by L D L^T").

    with progress.reporting(print):
        program.build(robot, ("forward",))

Telling is also where the build is back in Python between steps of symbolic work, so that Ctrl-C acts there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Listener = Callable[[str], None]

_listener: ContextVar[Listener | None] = ContextVar("robodyn_build_listener", default=None)


@contextmanager
def reporting(listener: Listener) -> Iterator[None]:
    """``listener(step)`` is called with each stage of the builds made inside the block."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def stage(step: str) -> None:
    """Tell the listener, if any, that the build is at ``step``."""
    listener = _listener.get()
    if listener is not None:
        listener(step)

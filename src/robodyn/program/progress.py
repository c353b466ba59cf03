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
from typing import Any

from robodyn.errors import printable

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


#: Seconds of work before :func:`on_terminal`'s progress bar appears: a quick build shows none.
DELAY = 1.0


@contextmanager
def on_terminal(label: str, console: Any = None) -> Iterator[Callable[[str], None]]:
    """A progress bar on stderr (``console``: a ``rich.console.Console``, by default one on stderr) that appears once
    the block has run :data:`DELAY` seconds: a spinner, ``label: stage`` (the stages told inside the block, by
    :func:`stage` or the update function it yields) and the time elapsed; gone when the block ends. Where the console
    is not a terminal (a log, a pipe, a notebook's captured stream), nothing is drawn."""
    import threading

    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    def shown(text: str) -> str:  # names and paths from a model: one line, markup escaped
        return escape(printable(text))

    console = console if console is not None else Console(stderr=True)
    if not console.is_terminal:  # (rich would still end a line there)
        yield lambda step: None
        return
    progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                        console=console, transient=True)
    task = progress.add_task(shown(label), total=None)
    started = threading.Event()

    def start() -> None:
        started.set()
        progress.start()

    timer = threading.Timer(DELAY, start)
    timer.daemon = True
    timer.start()

    def update(step: str) -> None:
        progress.update(task, description=shown(f"{label}: {step}"))

    try:
        with reporting(update):
            yield update
    finally:
        timer.cancel()
        if started.is_set():
            progress.stop()

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

from robodyn.errors import bounded, printable

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
#: ``$ROBODYN_PROGRESS=lines``: :func:`on_terminal` prints the label and each stage as a line of its own on stderr,
#: terminal or not, instead of a bar (a log; a test that waits for a build to start reads the first stage line).
PROGRESS_ENV = "ROBODYN_PROGRESS"


@contextmanager
def on_terminal(label: str, console: Any = None,
                every: Callable[[], None] | None = None) -> Iterator[Callable[[str], None]]:
    """A progress bar on stderr (``console``: a ``rich.console.Console``, by default one on stderr) that appears once
    the block has run :data:`DELAY` seconds: a spinner, ``label: stage`` (the stages told inside the block, by
    :func:`stage` or the update function it yields) and the time elapsed; gone when the block ends. Where the console
    is not a terminal (a log, a pipe, a notebook's captured stream), nothing is drawn; with :data:`PROGRESS_ENV` set
    to ``lines``, the label and each stage are printed as lines instead. ``every()`` runs at each stage (the command
    line's check for a Ctrl-C a library swallowed)."""
    import os
    import threading

    from rich.console import Console
    from rich.markup import escape
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    def shown(text: str) -> str:  # names and paths from a model: one line, markup escaped
        return escape(printable(text))

    console = console if console is not None else Console(stderr=True)
    lines = os.environ.get(PROGRESS_ENV) == "lines"
    drawn = console.is_terminal and not lines  # (elsewhere rich would still end a line)
    progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                        console=console, transient=True)
    task = progress.add_task(shown(label), total=None)
    started = threading.Event()

    def start() -> None:
        started.set()
        progress.start()

    timer = threading.Timer(DELAY, start)
    timer.daemon = True
    if lines:
        console.print(bounded(label), markup=False)
    elif drawn:
        timer.start()

    outer = _listener.get()  # (a listener around the block hears the stages too)

    def update(step: str) -> None:
        if every is not None:
            every()
        if outer is not None:
            outer(step)
        if lines:
            console.print(bounded(f"{label}: {step}"), markup=False)
        progress.update(task, description=shown(f"{label}: {step}"))

    try:
        with reporting(update):
            yield update
    finally:
        timer.cancel()
        if started.is_set():
            progress.stop()

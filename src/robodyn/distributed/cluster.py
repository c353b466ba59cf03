"""Where the work runs: an existing Dask client, a scheduler's address, or an embedded ``LocalCluster``.

    with connect() as client: ...                             # a LocalCluster sized to this machine, closed after
    with connect(scheduler="tcp://10.0.0.5:8786") as client: ...  # a running cluster (left running)
    with connect(client=my_client) as client: ...               # the caller's client (left open)

The embedded cluster has one single-threaded worker process per core this process may run on (the compiled C
releases nothing to gain from threads inside a worker, and processes keep one crash to one worker), serves its
status pages on a free port (``client.dashboard_link``; the dashboard itself needs bokeh), and is closed when the
block ends. Its processes log only critical messages: a task's failure reaches the caller through its future (and
robodyn names the robot or chunk), while the workers' own messages, such as a heartbeat that finds the scheduler
already gone while the cluster shuts down, would only print tracebacks the user can do nothing about.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

from distributed import Client, LocalCluster, WorkerPlugin

__all__ = ["check_address", "connect", "default_workers"]

#: The address schemes of a scheduler given by address (``distributed.comm``'s, less ``inproc``: one process's
#: own, and ``ucx``: a separate package).
SCHEMES = ("tcp", "tls", "ws", "wss")
#: How long connecting to a scheduler given by address may take (seconds), retries included.
CONNECT_SECONDS = 30


def default_workers() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


class _QuietWorker(WorkerPlugin):
    """Sets the worker process's ``distributed`` logger to critical messages only, on every worker the embedded
    cluster starts (a restarted one too)."""

    def setup(self, worker: object) -> None:
        logging.getLogger("distributed").setLevel(logging.CRITICAL)


def check_address(scheduler: str) -> None:
    """ValueError, in one line, unless ``scheduler`` is SCHEME://HOST:PORT (or HOST:PORT: tcp) with a scheme
    robodyn's workers can be reached by."""
    from distributed.comm.addressing import parse_address, parse_host_port

    if not isinstance(scheduler, str) or not scheduler.strip():
        raise ValueError(f"scheduler address {scheduler!r:.80}: expected tcp://HOST:PORT")
    scheme, location = parse_address(scheduler)
    if scheme not in SCHEMES:
        raise ValueError(f"scheduler address {scheduler!r:.80}: unknown scheme {scheme!r:.20} (known: "
                         f"{', '.join(SCHEMES)})")
    try:
        host, port = parse_host_port(location)
    except (ValueError, TypeError) as exc:
        port_text = location.rpartition(":")[2]
        problem = f"the port {port_text!r:.20} is not a number" if "invalid literal" in str(exc) else str(exc)
        raise ValueError(f"scheduler address {scheduler!r:.80}: {problem} (expected {scheme}://HOST:PORT)") from None
    if not host or not 0 < port < 65536:
        raise ValueError(f"scheduler address {scheduler!r:.80}: expected {scheme}://HOST:PORT, a port from 1 "
                         "to 65535")


@contextmanager
def _remote(scheduler: str) -> Iterator[Client]:
    """A client of the scheduler at ``scheduler``: the address checked first; no answer within
    :data:`CONNECT_SECONDS` (or a refusal of the connection) is one ``ConnectionError`` line."""
    check_address(scheduler)
    try:
        remote = Client(scheduler, timeout=CONNECT_SECONDS)
    except (OSError, TypeError, ValueError) as exc:  # TypeError: tls:// without a TLS configuration
        message = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise ConnectionError(f"no Dask scheduler reached at {scheduler:.80}: {message}") from None
    with remote:
        yield remote


@contextmanager
def connect(client: Client | None = None, scheduler: str | None = None, *,
            workers: int | None = None) -> Iterator[Client]:
    """A Dask client for the block: ``client`` as it is; else one connected to ``scheduler`` (an address such as
    ``tcp://host:8786``; closed after, the cluster left running; a malformed address or unknown scheme is a
    ValueError, no answer within :data:`CONNECT_SECONDS` a ConnectionError, each one line); else an embedded
    ``LocalCluster`` of ``workers`` processes (default: :func:`default_workers`), one thread each, closed after."""
    if client is not None and scheduler is not None:
        raise ValueError("give client= or scheduler=, not both")
    if client is not None:
        yield client
        return
    if scheduler is not None:
        with _remote(scheduler) as remote:
            yield remote
        return
    count = default_workers() if workers is None else workers
    if count < 1:
        raise ValueError(f"workers must be at least 1, got {count}")
    with LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster, Client(cluster) as local:
        local.register_plugin(_QuietWorker(), name="robodyn-quiet")
        yield local

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

__all__ = ["connect", "default_workers"]


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


@contextmanager
def connect(client: Client | None = None, scheduler: str | None = None, *,
            workers: int | None = None) -> Iterator[Client]:
    """A Dask client for the block: ``client`` as it is; else one connected to ``scheduler`` (an address such as
    ``tcp://host:8786``; closed after, the cluster left running); else an embedded ``LocalCluster`` of ``workers``
    processes (default: :func:`default_workers`), one thread each, closed after."""
    if client is not None and scheduler is not None:
        raise ValueError("give client= or scheduler=, not both")
    if client is not None:
        yield client
        return
    if scheduler is not None:
        with Client(scheduler) as remote:
            yield remote
        return
    count = default_workers() if workers is None else workers
    if count < 1:
        raise ValueError(f"workers must be at least 1, got {count}")
    with LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster, Client(cluster) as local:
        local.register_plugin(_QuietWorker(), name="robodyn-quiet")
        yield local

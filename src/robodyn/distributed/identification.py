"""Identification from many logs on Dask: each task forms its logs' blocks of the normal equations, one task sums
them, the solve happens once, here.

    fit = robodyn.distributed.identify(robot, logs)            # logs: [(q, qd, qdd, tau), ...] or .npz paths
    fit.names, fit.estimate

The blocks are :func:`robodyn.identification.fit.log_blocks` (W^T W, W^T y of the base regressor); they are summed
in the logs' order (:func:`robodyn.identification.fit.total`) and solved by
:func:`robodyn.identification.fit.solve`, the one-process fit's own steps, so the result is the one-process fit's
(:func:`robodyn.identification.fit.identify`) whatever the workers and however the logs are grouped into tasks. A
log given as a path (``.npz`` with arrays ``q``, ``qd``, ``qdd``, ``tau``) is read by the worker that forms its
block: only the small blocks travel. A path that is not a regular file (a FIFO, a device: reading would block) is
refused here first, in one line naming it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import dask
import numpy as np
from distributed import Client

from robodyn.distributed.cluster import connect
from robodyn.identification import BaseParameters, base_parameters
from robodyn.identification.fit import Identified, NormalEquations, log_blocks, result, total
from robodyn.model import Manipulator
from robodyn.model.files import check_file_size

__all__ = ["identify"]

#: The largest log read from a file (bytes): beyond a worker's memory.
MAX_LOG_BYTES = 1 << 36


def _blocks(base: BaseParameters, logs: Sequence[Any], sigma: Sequence[float] | None,
            params: Mapping[Any, Any] | None) -> list[NormalEquations]:
    """One task: the blocks of ``logs`` (paths read here)."""
    found = []
    for log in logs:
        if isinstance(log, (str, Path)):
            with np.load(log) as data:
                found.append(log_blocks(base, data, sigma=sigma, params=params))
        else:
            found.append(log_blocks(base, log, sigma=sigma, params=params))
    return found


def _sum(groups: Sequence[Sequence[NormalEquations]]) -> NormalEquations:
    return total(block for group in groups for block in group)


def identify(robot: Manipulator | BaseParameters, logs: Sequence[Any], *, sigma: Sequence[float] | None = None,
             params: Mapping[Any, Any] | None = None, logs_per_task: int = 1, client: Client | None = None,
             scheduler: str | None = None, workers: int | None = None) -> Identified:
    """The base parameters of ``robot`` (or its :func:`~robodyn.identification.base_parameters`, computed once
    here) identified from ``logs`` (see the module), ``logs_per_task`` logs a task; ``sigma``: per-joint noise
    levels (weights 1/sigma); ``params``: values of geometry symbols; where it runs: ``client``, ``scheduler``,
    ``workers`` (:func:`robodyn.distributed.connect`)."""
    base = robot if isinstance(robot, BaseParameters) else base_parameters(robot)
    if not logs:
        raise ValueError("no logs to identify from")
    if logs_per_task < 1:
        raise ValueError(f"logs_per_task must be at least 1, got {logs_per_task}")
    for log in logs:
        if isinstance(log, (str, Path)):
            check_file_size(Path(log), MAX_LOG_BYTES, str(log))  # a FIFO would block the worker reading it
    shipped = dask.delayed(base, pure=True)
    groups = [dask.delayed(_blocks, pure=True)(shipped, list(logs[i:i + logs_per_task]), sigma, params)
              for i in range(0, len(logs), logs_per_task)]
    summed = dask.delayed(_sum, pure=True)(groups)
    with connect(client, scheduler, workers=workers) as used:
        normal = used.compute(summed).result()
    return result(base, normal)

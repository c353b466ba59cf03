"""Past one machine: sweeps, catalogues and identification from many logs, on Dask (the ``dask`` extra).

    from robodyn import distributed as rdd
    result = rdd.sweep(robot, parameters=samples, states={"q": q, "qd": qd, "qdd": qdd}, outputs=("tau",))
    report = rdd.catalogue(["puma560", "stanford_arm"], outputs=["tau", "M"], out_dir="catalogue")
    fit = rdd.identify(robot, logs)

The unit of work is a chunk of states times a parameter sample (:mod:`~robodyn.distributed.sweep`), one robot of a
catalogue (:mod:`~robodyn.distributed.catalogue`) or a group of logs of an identification
(:mod:`~robodyn.distributed.identification`); Dask's scheduler does the rest. Every function runs on an embedded
``LocalCluster`` sized to this machine unless given ``client=`` (a ``distributed.Client``) or ``scheduler=`` (an
address): :func:`~robodyn.distributed.cluster.connect`. The command line's ``robodyn batch`` is the catalogue.
"""

from __future__ import annotations

try:
    import dask  # noqa: F401
    import distributed  # noqa: F401
except ImportError as exc:  # pragma: no cover - without the extra
    raise ImportError(f"robodyn.distributed needs Dask: pip install 'robodyn[dask]' ({exc})") from None

from robodyn.distributed.catalogue import CatalogueReport, Entry, catalogue
from robodyn.distributed.cluster import connect, default_workers
from robodyn.distributed.identification import identify
from robodyn.distributed.sweep import SweepResult, UniformStates, grid, one_at_a_time, sweep, uniform_states

__all__ = ["CatalogueReport", "Entry", "SweepResult", "UniformStates", "catalogue", "connect", "default_workers",
           "grid", "identify", "one_at_a_time", "sweep", "uniform_states"]

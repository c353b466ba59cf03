"""Sweeps: every parameter sample of a robot (or every robot of a family) over a set of states, on Dask.

    from robodyn import distributed as rdd
    samples = rdd.one_at_a_time({"a2": 0.4318, "a3": 0.0203}, {"a2": np.linspace(0.3, 0.5, 8)})
    result = rdd.sweep(robot, parameters=samples, states={"q": q, "qd": qd, "qdd": qdd}, outputs=("tau",))
    result.arrays["tau"]          # dask array (samples, N, n)
    result.peak["tau"]            # NumPy (samples, n): max |tau_j| over the states, per sample

The unit of work is one sample on one chunk of states (``chunk`` states, 10^6 by default): a task runs the
compiled C (:func:`robodyn.compile`) on it. Each worker process builds a robot's library once: the first task
compiles it into the checked compile cache (:mod:`robodyn.runtime.cache`; the workers of one machine share it, so
one compiles and the others load), and every later task of that worker finds the loaded library in
:data:`_LOADED`, keyed by a hash of the model and the outputs. Dask's scheduler does the rest: a worker lost mid-run
(killed, out of memory) has its tasks and the results it held computed again elsewhere, so the result is complete
and, the compiled routines being deterministic (each state's numbers do not depend on the chunk or the worker),
identical to a single-process loop.

States given as NumPy arrays travel in the task graph (the scheduler keeps them, so the chunks a lost worker held
can be cut again); for inputs too large for that, give Dask arrays that the workers make or read themselves, or
random states drawn on the workers, ``states=uniform_states(N, seed=0)`` (:class:`UniformStates`: seeded per
chunk, so the same numbers on any cluster; ``.draw()`` makes them here). Each task also returns the largest
magnitude of its outputs over its chunk, so the peaks are a reduction of small arrays (no temporary of the outputs'
size).

Results: with the embedded cluster (no ``client=`` or ``scheduler=``) they are computed and kept in this process,
as Dask arrays over NumPy; with a caller's cluster they are persisted there (Dask arrays over the workers'
memory); with ``out_dir`` each output is written there by the workers, as NPY files (one per sample,
``dask.array.to_npy_stack``) or Zarr (``store="zarr"``, where zarr is installed), and read back lazily.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dask
import dask.array as da
import numpy as np
from distributed import Client

from robodyn.codegen.spec import KEYS, output_shape
from robodyn.distributed.cluster import connect
from robodyn.model import Manipulator
from robodyn.runtime import CompiledDynamics
from robodyn.runtime import compile as compile_robot

__all__ = ["DEFAULT_CHUNK", "SweepResult", "UniformStates", "grid", "one_at_a_time", "sweep", "uniform_states"]

#: States per task.
DEFAULT_CHUNK = 10**6
#: The stores of ``out_dir``.
STORES = ("npy", "zarr")

#: This process's loaded libraries (a worker's), by :func:`_model_key`.
_LOADED: dict[str, CompiledDynamics] = {}


@dataclass
class SweepResult:
    """The outputs of a sweep: ``arrays[key]`` of shape ``(samples, N, *shape)`` (``key`` an ``--outputs`` key:
    ``tau``, ``M``, ``forward``, ``dtau``...; ``shape`` its output's), ``peak[key]`` ``(samples, *shape)``: the
    largest magnitude of each
    entry over the states, per sample; ``samples``: the parameter values of each sample (mappings, or None for a
    numeric robot), or the robots of a family; ``parameters``: the compiled parameter order."""

    arrays: dict[str, da.Array]
    peak: dict[str, np.ndarray]
    samples: list[Any]
    parameters: tuple[str, ...]

    def to_npy(self, directory: str | Path) -> list[Path]:
        """Write each output as ``directory/KEY.npy`` (computed here; written to a temporary file, then renamed)."""
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for key, array in self.arrays.items():
            target = folder / f"{key}.npy"
            partial = target.with_name(f".{target.name}.partial")
            with partial.open("wb") as stream:
                np.save(stream, np.asarray(array.compute()))
            partial.replace(target)
            written.append(target)
        return written

    def to_zarr(self, path: str | Path) -> None:
        """Write each output into the Zarr group at ``path`` (``path/KEY``); needs zarr."""
        for key, array in self.arrays.items():
            array.to_zarr(str(Path(path) / key), overwrite=True)


def grid(values: Mapping[str, Sequence[float]], fixed: Mapping[str, float] | None = None) -> list[dict[str, float]]:
    """Every combination of ``values`` (name -> values), each with ``fixed`` added: the full factorial design."""
    names = list(values)
    return [{**(fixed or {}), **dict(zip(names, combination, strict=True))}
            for combination in itertools.product(*(list(values[name]) for name in names))]


def one_at_a_time(nominal: Mapping[str, float], values: Mapping[str, Sequence[float]]) -> list[dict[str, float]]:
    """For each name of ``values`` in turn, each of its values with every other parameter at ``nominal``:
    sum(len(v)) samples (6 link lengths x 8 values: 48)."""
    return [{**nominal, name: float(value)} for name, sequence in values.items() for value in sequence]


def _model_key(robot: Manipulator, keys: tuple[str, ...]) -> str:
    text = json.dumps({"model": robot.to_dict(), "outputs": keys}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _dynamics(key: str, robot: Manipulator, keys: tuple[str, ...]) -> CompiledDynamics:
    """The compiled routines of ``robot``, built once per process (see the module)."""
    found = _LOADED.get(key)
    if found is None:
        found = _LOADED[key] = compile_robot(robot, outputs=keys)
    return found


def _evaluate(key: str, robot: Manipulator, keys: tuple[str, ...], values: Mapping[str, float] | None,
              names: tuple[str, ...], *chunks: np.ndarray) -> tuple[np.ndarray, ...]:
    """One task: every output of ``keys`` on one chunk of states (the arrays of ``names``) with ``values``, then the
    largest magnitude of each output's entries over the chunk (computed here: no temporary of the chunk's size)."""
    dyn = _dynamics(key, robot, keys)
    states = dict(zip(names, chunks, strict=True))
    results = []
    for output in keys:
        kind = KEYS[output]
        out = np.empty((states[kind.inputs[0]].shape[0], *output_shape(kind.output, dyn.n)))
        getattr(dyn, kind.name)(*(states[name] for name in kind.inputs), params=values, out=out)
        results.append(out)
    return (*results, *(np.maximum(out.max(axis=0), -out.min(axis=0)) for out in results))


@dataclass(frozen=True)
class UniformStates:
    """States drawn on the workers (nothing shipped): ``count`` states, each input (``q``, ``qd``...) uniform in
    [``low``, ``high``). The chunk ``c`` of input ``name`` comes from ``np.random.default_rng([seed, crc32(name),
    c])``: the same numbers whatever the worker, the samples or a worker lost (for the same ``chunk``);
    :meth:`draw` makes them here, to compare with."""

    count: int
    low: float = -np.pi
    high: float = np.pi
    seed: int = 0

    def chunk(self, name: str, index: int, length: int, n: int) -> np.ndarray:
        """Chunk ``index`` (``length`` states of ``n`` joints) of input ``name``."""
        rng = np.random.default_rng([self.seed, zlib.crc32(name.encode()), index])
        return rng.uniform(self.low, self.high, (length, n))

    def draw(self, names: Sequence[str], n: int, chunk: int = DEFAULT_CHUNK) -> dict[str, np.ndarray]:
        """The whole arrays of ``names``, as a sweep of ``chunk`` states per task draws them."""
        lengths = _lengths(self.count, chunk)
        return {name: np.concatenate([self.chunk(name, c, length, n) for c, length in enumerate(lengths)])
                for name in names}


def uniform_states(count: int, low: float = -np.pi, high: float = np.pi, seed: int = 0) -> UniformStates:
    """``states=`` for :func:`sweep`: ``count`` states drawn on the workers (see :class:`UniformStates`)."""
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    return UniformStates(int(count), float(low), float(high), int(seed))


def _lengths(count: int, chunk: int) -> tuple[int, ...]:
    return tuple(min(chunk, count - start) for start in range(0, count, chunk))


def _samples(robot: Manipulator | Sequence[Manipulator], parameters: Any) -> tuple[list[Manipulator], list[Any]]:
    """(the robot of each sample, its parameter values or None)."""
    if isinstance(robot, Manipulator):
        if parameters is None:
            return [robot], [None]
        if isinstance(parameters, np.ndarray) and parameters.ndim == 2:
            names = tuple(symbol.name for symbol in robot.parameters())
            if parameters.shape[1] != len(names):
                raise ValueError(f"parameters has {parameters.shape[1]} columns; {robot.name!r} has {len(names)} "
                                 f"parameters ({', '.join(names)})")
            values: list[Any] = [dict(zip(names, map(float, row), strict=True)) for row in parameters]
        else:
            values = [dict(sample) for sample in parameters]
        if not values:
            raise ValueError("parameters holds no sample")
        return [robot] * len(values), values
    robots = list(robot)
    if parameters is not None:
        raise ValueError("a family of robots takes no parameters: give each robot its own values (robot.subs)")
    if not robots or not all(isinstance(r, Manipulator) for r in robots):
        raise ValueError("robot must be a Manipulator or a non-empty sequence of them")
    return robots, [None] * len(robots)


def _state_blocks(states: Mapping[str, Any] | UniformStates, needed: Sequence[str], n: int,
                  chunk: int) -> tuple[list[list[Any]], tuple[int, ...]]:
    """(per input of ``needed``, its chunks: delayed NumPy arrays; the chunks' lengths)."""
    if isinstance(states, UniformStates):
        lengths = _lengths(states.count, chunk)
        return [[dask.delayed(states.chunk, pure=True)(name, c, length, n) for c, length in enumerate(lengths)]
                for name in needed], lengths
    arrays = _state_arrays(states, needed, n, chunk)
    return [array.to_delayed().ravel().tolist() for array in arrays.values()], arrays[needed[0]].chunks[0]


def _state_arrays(states: Mapping[str, Any], needed: Sequence[str], n: int, chunk: int) -> dict[str, da.Array]:
    missing = [name for name in needed if name not in states]
    if missing:
        raise ValueError(f"states lacks {', '.join(missing)} (the outputs read {', '.join(needed)})")
    arrays = {}
    for name in needed:
        given = states[name]
        shape = given.shape if isinstance(given, da.Array) else np.shape(given)
        if len(shape) != 2 or shape[1] != n:
            raise ValueError(f"states[{name!r}] must have shape (N, {n}), got {shape}")
        if isinstance(given, da.Array):
            arrays[name] = given.astype(float).rechunk((chunk, n))
        else:  # (in the graph, kept by the scheduler: the chunks of a lost worker can be cut again)
            arrays[name] = da.from_array(np.ascontiguousarray(given, dtype=float), chunks=(chunk, n))
    sizes = {array.shape[0] for array in arrays.values()}
    if len(sizes) != 1:
        raise ValueError(f"the state arrays have different lengths: {sorted(sizes)}")
    return arrays


def sweep(
    robot: Manipulator | Sequence[Manipulator],
    parameters: Any = None,
    states: Mapping[str, Any] | UniformStates | None = None,
    outputs: Sequence[str] = ("tau",),
    chunk: int = DEFAULT_CHUNK,
    client: Client | None = None,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    out_dir: str | Path | None = None,
    store: str = "npy",
    progress: Callable[[Any], Any] | None = None,
) -> SweepResult:
    """Every sample of ``robot`` over ``states`` (see the module).

    ``robot``: a :class:`~robodyn.Manipulator` (with ``parameters``: a sequence of mappings name -> value binding
    every symbolic parameter, or an (S, P) array in ``robot.parameters()`` order; see :func:`grid` and
    :func:`one_at_a_time`), or a sequence of numeric robots of the same number of joints (a family of geometries);
    ``states``: name -> (N, n) array (NumPy or Dask) for the inputs the outputs read (``q``, ``qd``, ``qdd`` for
    ``tau``; ``q``, ``qd``, ``tau`` for ``forward``...); ``outputs``: ``--outputs`` keys; ``chunk``: states per task;
    ``client``, ``scheduler``, ``workers``: where it runs (:func:`robodyn.distributed.connect`); ``out_dir``,
    ``store``: write the outputs there (see the module); ``progress``: called with the futures once submitted
    (``distributed.progress``, say)."""
    keys = tuple(kind.key for kind in KEYS.values() if kind.key in outputs)
    unknown = sorted(set(outputs) - set(KEYS))
    if unknown or not keys:
        raise ValueError(f"unknown output {unknown[0] if unknown else None!r}; choose from {', '.join(KEYS)}")
    if chunk < 1:
        raise ValueError(f"chunk must be at least 1, got {chunk}")
    if store not in STORES:
        raise ValueError(f"unknown store {store!r}; choose from {', '.join(STORES)}")
    robots, values = _samples(robot, parameters)
    n = robots[0].nv
    if any(r.nv != n for r in robots):
        raise ValueError("the robots of a family must have the same number of joints")
    needed = tuple(dict.fromkeys(name for key in keys for name in KEYS[key].inputs))
    blocks, lengths = _state_blocks(states or {}, needed, n, chunk)
    if len({id(r) for r in robots}) == 1:
        dyn = compile_robot(robots[0], outputs=keys)  # here first: errors early, and the workers here find it cached
        order = dyn.parameters
    else:
        order = ()
    model_keys = {id(r): _model_key(r, keys) for r in robots}
    shipped = {id(r): dask.delayed(r, pure=True) for r in robots}
    per_sample: dict[str, list[da.Array]] = {key: [] for key in keys}
    peak_per_sample: dict[str, list[da.Array]] = {key: [] for key in keys}
    for r, value in zip(robots, values, strict=True):
        pieces: dict[str, list[da.Array]] = {key: [] for key in keys}
        peaks_of: dict[str, list[da.Array]] = {key: [] for key in keys}
        for c, length in enumerate(lengths):
            task = dask.delayed(_evaluate, pure=True, nout=2 * len(keys))(
                model_keys[id(r)], shipped[id(r)], keys, value, needed, *(b[c] for b in blocks))
            for i, key in enumerate(keys):
                tail = output_shape(KEYS[key].output, n)
                pieces[key].append(da.from_delayed(task[i], shape=(length, *tail), dtype=float))
                peaks_of[key].append(da.from_delayed(task[len(keys) + i], shape=tail, dtype=float))
        for key in keys:
            per_sample[key].append(da.concatenate(pieces[key], axis=0))
            peak_per_sample[key].append(da.stack(peaks_of[key], axis=0).max(axis=0))
    lazy = {key: da.stack(per_sample[key], axis=0) for key in keys}
    peaks = {key: da.stack(peak_per_sample[key], axis=0) for key in keys}
    with connect(client, scheduler, workers=workers) as used:
        embedded = client is None and scheduler is None
        if out_dir is not None:
            stored, peak = _store(used, per_sample, peaks, Path(out_dir), store, progress)
            return SweepResult(stored, peak, values if parameters is not None else list(robots), order)
        if embedded:
            futures = used.compute([*lazy.values(), *peaks.values()])
            if progress is not None:
                progress(futures)
            done = used.gather(futures)
            computed = {key: da.from_array(done[i], chunks=(1, chunk, *done[i].shape[2:]))
                        for i, key in enumerate(keys)}
        else:
            persisted = used.persist([*lazy.values(), *peaks.values()])
            computed = dict(zip(keys, persisted[: len(keys)], strict=True))
            futures = used.compute(persisted[len(keys):])
            if progress is not None:
                progress(futures)
            done = [None] * len(keys) + used.gather(futures)
        peak = {key: np.asarray(done[len(keys) + i]) for i, key in enumerate(keys)}
    return SweepResult(computed, peak, values if parameters is not None else list(robots), order)


def _save(path: str, array: np.ndarray) -> str:
    """Write ``array`` as the NPY file ``path`` (a temporary file, then renamed): on a worker."""
    target = Path(path)
    partial = target.with_name(f".{target.name}.partial")
    with partial.open("wb") as stream:
        np.save(stream, array)
    partial.replace(target)
    return path


def _store(client: Client, per_sample: dict[str, list[da.Array]], peaks: dict[str, da.Array], folder: Path,
           store: str, progress: Callable[[Any], Any] | None) -> tuple[dict[str, da.Array], dict[str, np.ndarray]]:
    """Write the outputs into ``folder`` on the workers (NPY: ``folder/KEY/sample_00000.npy``, one per sample;
    Zarr: ``folder/KEY``), and compute ``peaks``; the written arrays, read back lazily."""
    writes: list[Any] = []
    paths: dict[str, list[str]] = {}
    for key, arrays in per_sample.items():
        (folder / key).mkdir(parents=True, exist_ok=True)
        if store == "zarr":
            writes.append(da.stack(arrays, axis=0).to_zarr(str(folder / key), overwrite=True, compute=False))
            continue
        paths[key] = [str(folder / key / f"sample_{s:05d}.npy") for s in range(len(arrays))]
        writes += [dask.delayed(_save, pure=False)(path, array) for path, array in zip(paths[key], arrays, strict=True)]
    futures = client.compute([*writes, *peaks.values()])
    if progress is not None:
        progress(futures)
    done = client.gather(futures)
    peak = {key: np.asarray(done[len(writes) + i]) for i, key in enumerate(peaks)}
    if store == "zarr":
        return {key: da.from_zarr(str(folder / key)) for key in per_sample}, peak
    loaded = {}
    for key, arrays in per_sample.items():
        loaded[key] = da.stack([da.from_delayed(dask.delayed(np.load)(path, mmap_mode="r"), shape=array.shape,
                                                dtype=float) for path, array in zip(paths[key], arrays, strict=True)])
    return loaded, peak

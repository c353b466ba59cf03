"""Catalogues: the generated code of many robots, one robot per Dask task, resumable.

    report = robodyn.distributed.catalogue(["puma560", "panda.urdf"], outputs=["tau", "M"], out_dir="catalogue")
    report.built, report.skipped, report.failed
    report.rows()              # robot, outputs, operation counts, languages, status

Each model (a built-in name, a model file or URDF, or a :class:`~robodyn.Manipulator`) gets its directory
``out_dir/NAME/``: one folder per language with that language's files (:func:`robodyn.codegen.generate`), and
``manifest.json`` (what was asked, the request's hash, the SHA-256 of every file, the operation counts, the model's
warnings). An entry is written in a private directory and renamed into place, its manifest last: a directory with
a manifest is complete. A later run with the same request skips every entry whose manifest has the same request
hash and whose files still match their hashes (nothing is submitted for it); the request hash covers the model's
bytes (a file's, or the built-in's text), the outputs, the languages, the code generator's version and robodyn's
own source (a changed generator builds the entry again). A model that fails (unreadable, refused, a worker lost)
is reported by name with its one-line error, and the rest go on; a model path that is not a regular file (a FIFO,
a device: reading would block or never end) or is larger than any reader takes fails before anything opens it, and
a FIFO or device in ``out_dir`` in place of an entry's file makes that entry be built again. ``out_dir/catalogue.json``
sums the run up.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from distributed import Client, as_completed

from robodyn import library
from robodyn._version import __version__
from robodyn.codegen import GENERATOR_VERSION, generate, module_spec, sanitize
from robodyn.distributed.cluster import check_address, connect
from robodyn.errors import ModelError, printable
from robodyn.formats.load import load
from robodyn.model import Manipulator
from robodyn.model.files import path_exists, read_limited
from robodyn.program.outputs import DEFAULT_KEYS, KEYS, LANGUAGES
from robodyn.runtime.cache import _source_fingerprint

__all__ = ["MANIFEST", "CatalogueReport", "Entry", "catalogue"]

#: The manifest of an entry, written last.
MANIFEST = "manifest.json"
#: The summary of a run.
SUMMARY = "catalogue.json"
#: The languages a catalogue may hold: the code generator's, and the CUDA kernels.
CATALOGUE_LANGUAGES = (*LANGUAGES, "cuda")
#: The most characters of a failure's line.
MESSAGE_CHARS = 400
#: The largest model file or entry file read here: above every reader's own limit (the readers refuse what they
#: cannot take, on the worker), below what a FIFO or a device would feed without end.
MAX_READ_BYTES = 1 << 26


@dataclass(frozen=True)
class Entry:
    """One robot of a catalogue: ``model`` as given, its directory ``name``, ``status`` (``built``, ``skipped``:
    already there, ``failed``), ``message`` (a failure's one line), the operation counts of its routines
    (``--outputs`` key -> ``"multiplications/additions/sines and cosines"``), its files (relative to the
    catalogue), seconds spent."""

    model: str
    name: str
    status: str
    outputs: tuple[str, ...]
    languages: tuple[str, ...]
    message: str = ""
    counts: dict[str, str] = field(default_factory=dict)
    files: tuple[str, ...] = ()
    seconds: float = 0.0


@dataclass
class CatalogueReport:
    """The entries of a run, in the order of the models given."""

    directory: Path
    entries: list[Entry]

    def _count(self, status: str) -> int:
        return sum(entry.status == status for entry in self.entries)

    @property
    def built(self) -> int:
        return self._count("built")

    @property
    def skipped(self) -> int:
        return self._count("skipped")

    @property
    def failed(self) -> int:
        return self._count("failed")

    def rows(self) -> list[tuple[str, str, str, str, str]]:
        """(robot, outputs, counts, languages, status) per entry: the summary table."""
        rows = []
        for entry in self.entries:
            counts = "; ".join(f"{key} {text}" for key, text in entry.counts.items())
            status = entry.status + (f": {entry.message}" if entry.message else "")
            rows.append((entry.model, ",".join(entry.outputs), counts, ",".join(entry.languages), status))
        return rows


def _one_line(exc: BaseException) -> str:
    text = " ".join(printable(str(exc)).split()) or type(exc).__name__
    return text[:MESSAGE_CHARS]


def _source(model: str | Manipulator) -> tuple[str, bytes]:
    """(what the worker loads: a built-in name or an absolute path; the bytes that describe the model). A path
    that is there but is not a regular file or is too large: :class:`ModelError` naming it, before it is opened."""
    if isinstance(model, Manipulator):
        return model.name, json.dumps(model.to_dict(), sort_keys=True, default=str).encode()
    if model in library.names():
        return model, library.text(model)[1].encode()
    path = Path(model).resolve()
    if not path_exists(path, model):
        return str(path), b""  # (loading it fails on the worker, and says why: a suggestion of a name, ...)
    return str(path), read_limited(path, MAX_READ_BYTES, model)


def _read(path: Path) -> bytes:
    """An entry's file (OSError if it is not a regular file within :data:`MAX_READ_BYTES`)."""
    try:
        return read_limited(path, MAX_READ_BYTES, str(path))
    except ModelError as exc:
        raise OSError(str(exc)) from None


def _names(models: Sequence[str | Manipulator]) -> list[str]:
    """The directory of each model: its sanitised name (file stem); names given twice get a hash of the model."""
    plain = [sanitize(model.name if isinstance(model, Manipulator) else Path(str(model)).name.split(".")[0] or "robot")
             for model in models]
    twice = {name for name in plain if plain.count(name) > 1}
    out = []
    for model, name in zip(models, plain, strict=True):
        if name in twice:
            source = model.name if isinstance(model, Manipulator) else str(Path(str(model)).resolve())
            name = f"{name}_{hashlib.sha256(source.encode()).hexdigest()[:8]}"
        out.append(name)
    return out


def _request(data: bytes, outputs: tuple[str, ...], languages: tuple[str, ...]) -> str:
    text = json.dumps({"model": hashlib.sha256(data).hexdigest(), "outputs": outputs, "languages": languages,
                       "generator": GENERATOR_VERSION, "robodyn": __version__, "source": _source_fingerprint()},
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _finished(folder: Path, request: str) -> dict[str, Any] | None:
    """The manifest of a complete entry of the same request (every file there with its hash), else None."""
    try:
        manifest = json.loads(_read(folder / MANIFEST).decode("utf-8"))
        if manifest.get("request") != request:
            return None
        for name, digest in manifest["files"].items():
            if hashlib.sha256(_read(folder / name)).hexdigest() != digest:
                return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return manifest


def _write_entry(folder: Path, files: dict[str, str], manifest: dict[str, Any]) -> None:
    """The entry's files in a private directory beside ``folder``, its manifest last, then renamed into place (an
    older entry there is moved aside first, then removed)."""
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        for name, text in files.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(text, encoding="utf-8")
        (work / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        old = None
        if folder.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{folder.name}-old-", dir=folder.parent))
            os.replace(folder, old / "entry")
        os.replace(work, folder)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _build(model: str | Manipulator, shown: str, name: str, request: str, outputs: tuple[str, ...],
           languages: tuple[str, ...], directory: str) -> Entry:
    """One task: load ``model`` (``shown`` as the user gave it), generate every language, write the entry. A
    failure is returned as a failed entry."""
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            robot = model if isinstance(model, Manipulator) else load(model)
            spec = module_spec(robot, outputs)
            files = {f"{language}/{filename}": text for language in languages
                     for filename, text in generate(None, language, spec=spec).items()}
        key_of = {kind.name: kind.key for kind in KEYS.values()}
        counts = {key_of[r.name]: f"{r.count.multiplications}/{r.count.additions}/{r.count.trig}"
                  for r in spec.routines if r.batched}
        manifest = {"model": shown, "robot": robot.name, "request": request, "outputs": list(outputs),
                    "languages": list(languages), "counts": counts, "robodyn": __version__,
                    "warnings": sorted({_one_line(w.message) for w in caught}),  # type: ignore[arg-type]
                    "files": {n: hashlib.sha256(t.encode()).hexdigest() for n, t in sorted(files.items())}}
        _write_entry(Path(directory) / name, files, manifest)
    except Exception as exc:
        return Entry(shown, name, "failed", outputs, languages, message=_one_line(exc),
                     seconds=time.perf_counter() - start)
    return Entry(shown, name, "built", outputs, languages, counts=counts, files=tuple(f"{name}/{n}" for n in files),
                 seconds=time.perf_counter() - start)


def catalogue(
    models: Sequence[str | Manipulator],
    outputs: Sequence[str] | None = None,
    languages: Sequence[str] = LANGUAGES,
    out_dir: str | Path = "catalogue",
    *,
    client: Client | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: Callable[[Entry, int, int], Any] | None = None,
) -> CatalogueReport:
    """The generated code of every model of ``models`` in ``out_dir`` (see the module): ``outputs``
    (``--outputs`` keys; default all but the derivatives), ``languages`` (default the code generator's:
    c, fortran, numpy, jax; ``cuda`` too on request), where it runs: ``client``, ``scheduler``, ``workers``
    (:func:`robodyn.distributed.connect`; nothing starts when every entry is already there); ``progress(entry,
    done, total)`` after each entry."""
    keys = tuple(key for key in KEYS if key in (DEFAULT_KEYS if outputs is None else outputs))
    unknown = sorted(set(outputs or ()) - set(KEYS))
    if unknown or not keys:
        raise ValueError(f"unknown output {unknown[0] if unknown else None!r}; choose from {', '.join(KEYS)}")
    chosen = tuple(dict.fromkeys(languages))
    strange = [language for language in chosen if language not in CATALOGUE_LANGUAGES]
    if strange or not chosen:
        raise ValueError(f"unknown language {strange[0] if strange else None!r}; choose from "
                         f"{', '.join(CATALOGUE_LANGUAGES)}")
    if scheduler is not None:
        check_address(scheduler)  # also where nothing is left to build
    directory = Path(out_dir).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    names = _names(models)
    entries: list[Entry | None] = [None] * len(models)
    pending = []
    for index, (model, name) in enumerate(zip(models, names, strict=True)):
        shown = model.name if isinstance(model, Manipulator) else str(model)
        try:
            given, data = _source(model)
        except ModelError as exc:  # a FIFO, a device, a file too large: never opened
            entries[index] = Entry(shown, name, "failed", keys, chosen, message=_one_line(exc))
            if progress is not None:
                progress(entries[index], sum(e is not None for e in entries), len(models))  # type: ignore[arg-type]
            continue
        request = _request(data, keys, chosen)
        manifest = _finished(directory / name, request)
        if manifest is not None:
            entries[index] = Entry(shown, name, "skipped", keys, chosen, counts=dict(manifest.get("counts", {})),
                                   files=tuple(f"{name}/{n}" for n in manifest["files"]))
            if progress is not None:
                progress(entries[index], sum(e is not None for e in entries), len(models))  # type: ignore[arg-type]
        else:
            pending.append((index, model if isinstance(model, Manipulator) else given, shown, name, request))
    if pending:
        with connect(client, scheduler, workers=workers) as used:
            futures = {used.submit(_build, model, shown, name, request, keys, chosen, str(directory), pure=False):
                       index for index, model, shown, name, request in pending}
            for future in as_completed(futures):
                index = futures[future]
                try:
                    entry = future.result()
                except Exception as exc:
                    model = models[index]
                    shown = model.name if isinstance(model, Manipulator) else str(model)
                    entry = Entry(shown, names[index], "failed", keys, chosen, message=_one_line(exc))
                entries[index] = entry
                if progress is not None:
                    progress(entry, sum(e is not None for e in entries), len(models))
    report = CatalogueReport(directory, [entry for entry in entries if entry is not None])
    _write_summary(report)
    return report


def _write_summary(report: CatalogueReport) -> None:
    summary = {"robodyn": __version__, "entries": [asdict(entry) for entry in report.entries],
               "built": report.built, "skipped": report.skipped, "failed": report.failed}
    target = report.directory / SUMMARY
    partial = target.with_name(f".{target.name}.partial")
    partial.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    partial.replace(target)

"""Run fuzz entries through the real ``robodyn`` entry point inside one process.

Started by :mod:`tests.fuzz.harness` as ``python -m tests.fuzz.driver JOBS RESULTS LOG``: it imports robodyn
once, then for each job (a JSON object, see :func:`run_job`) makes a fresh temporary working directory, sets up
the job's files there (copies of corpus files, a FIFO, a symlink loop...), runs ``robodyn.cli.main`` with the
job's arguments under a time bound, and appends one JSON line to RESULTS: exit code, stdout, stderr (a
traceback, if any, is printed to stderr as Python would print it), seconds, and the files the run created in
its working directory. Before each job a ``start`` line is written, so that the harness knows which job was
running if this process dies (memory limit, a hang in C code caught by faulthandler's backstop).
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import json
import os
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

MEMORY_LIMIT = 2 * 2**30  # bytes of address space: reading /dev/zero must fail, not fill the machine


TEXT_SUFFIXES = (".py", ".c", ".h", ".f90", ".txt", ".json", ".html", ".csv", ".tex")


#: The wall-clock backstop of a job, in multiples of its CPU-time bound (see :func:`main`).
WALL_FACTOR = 5


class TimeBound(BaseException):
    """Raised by the alarm when a job runs past its time bound (BaseException: no ``except Exception`` eats it)."""


def _alarm(signum: int, frame: Any) -> None:
    raise TimeBound()


def snapshot(root: Path) -> dict[str, str]:
    """Relative path -> kind ('file', 'dir', 'link', 'fifo', 'other') of everything under ``root``."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                kind = "link"
            elif path.is_dir():
                kind = "dir"
            elif path.is_fifo():
                kind = "fifo"
            elif path.is_file():
                kind = "file"
            else:
                kind = "other"
            found[rel] = kind
    return found


def setup(cwd: Path, spec: dict[str, Any]) -> None:
    """Create a job's inputs in its working directory: each action names a path relative to ``cwd``; ``run``
    lists argument lists of earlier ``robodyn`` runs there (their output is dropped)."""
    for src, dst in spec.get("copy", []):
        (cwd / dst).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, cwd / dst)
    for name, text in spec.get("write", []):
        (cwd / name).parent.mkdir(parents=True, exist_ok=True)
        (cwd / name).write_text(text, encoding="utf-8")
    for name, text, count in spec.get("repeat", []):
        (cwd / name).write_text(text * count, encoding="utf-8")
    for name, size in spec.get("sparse", []):
        with open(cwd / name, "wb") as handle:
            handle.truncate(size)
    for name in spec.get("mkdir", []):
        (cwd / name).mkdir(parents=True, exist_ok=True)
    for name in spec.get("fifo", []):
        os.mkfifo(cwd / name)
    for target, name in spec.get("symlink", []):
        os.symlink(target, cwd / name)
    for name, mode in spec.get("chmod", []):
        os.chmod(cwd / name, mode)
    if spec.get("run"):  # earlier robodyn runs in the same directory (their files count as already there)
        home = os.getcwd()
        os.chdir(cwd)
        try:
            for args in spec["run"]:
                invoke([str(a) for a in args])
        finally:
            os.chdir(home)


def _selftest(kind: str) -> Callable[[], None]:
    """Stand-ins for the entry point, for the harness's own test: a hang the alarm interrupts, a hang it cannot
    (SIGALRM blocked, as in C code that never returns to the interpreter), a process that dies, a crash."""

    def run() -> None:
        if kind == "sleep":
            time.sleep(1000)
        elif kind == "blocked":
            signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
            time.sleep(1000)
        elif kind == "die":
            os._exit(3)
        elif kind == "crash":
            raise RuntimeError("self-test crash")

    return run


def invoke(args: list[str], selftest: str | None = None) -> tuple[int, str, str]:
    """``robodyn ARGS`` in this process: (exit code, stdout, stderr); an escaping exception becomes a traceback
    on stderr and exit code 1, as the interpreter would print it."""
    from robodyn.cli import main as robodyn_main

    main = _selftest(selftest) if selftest else robodyn_main

    stdout, stderr = io.StringIO(), io.StringIO()
    code = 0
    saved_argv = sys.argv
    sys.argv = ["robodyn", *args]
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if exc.code is not None and not isinstance(exc.code, int):
                    print(exc.code, file=sys.stderr)
            except TimeBound:
                raise
            except BaseException:
                traceback.print_exc(file=sys.stderr)
                code = 1
    finally:
        sys.argv = saved_argv
    return code, stdout.getvalue(), stderr.getvalue()


def run_job(job: dict[str, Any], scratch: Path, filters: list[Any]) -> dict[str, Any]:
    """One job: ``{"id", "args", "setup", "timeout"}`` -> the result line."""
    cwd = Path(tempfile.mkdtemp(prefix="job-", dir=scratch))
    setup(cwd, job.get("setup", {}))
    before = snapshot(cwd)
    home = os.getcwd()
    warnings.filters[:] = filters  # each job sees warnings as a fresh process would (not once per process)
    mutated = getattr(warnings, "_filters_mutated", None)
    if mutated is not None:
        mutated()
    os.chdir(cwd)
    timeout = float(job.get("timeout", 20))
    timed_out = False
    start = time.perf_counter()
    # the bound is on this process's CPU time, not the wall clock: a correct run on a busy machine is not a hang
    signal.signal(signal.SIGPROF, _alarm)
    signal.setitimer(signal.ITIMER_PROF, timeout)
    try:
        code, stdout, stderr = invoke([str(a) for a in job["args"]], job.get("selftest"))
    except TimeBound:
        code, stdout, stderr = -1, "", "".join(traceback.format_exc())
        timed_out = True
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        os.chdir(home)
    seconds = time.perf_counter() - start
    after = snapshot(cwd)
    created = {rel: kind for rel, kind in after.items() if rel not in before}
    texts = {}
    if job.get("checks"):  # generated sources, for the harness's syntax checks
        for rel, kind in created.items():
            path = cwd / rel
            if kind == "file" and path.suffix in TEXT_SUFFIXES and path.stat().st_size < 2_000_000:
                texts[rel] = path.read_text(encoding="utf-8", errors="replace")
    result = {
        "texts": texts,
        "id": job["id"], "event": "done", "exit": code, "stdout": stdout[-20000:], "stderr": stderr[-20000:],
        "seconds": round(seconds, 3), "timed_out": timed_out, "created": created, "cwd": str(cwd),
    }
    for rel, kind in after.items():  # make the directory removable (unreadable files, read-only dirs)
        if kind == "dir":
            with contextlib.suppress(OSError):
                os.chmod(cwd / rel, 0o755)
    shutil.rmtree(cwd, ignore_errors=True)
    return result


def main() -> None:
    jobs_path, results_path, log_path = sys.argv[1:4]
    jobs = json.loads(Path(jobs_path).read_text(encoding="utf-8"))
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = MEMORY_LIMIT if hard == resource.RLIM_INFINITY else min(MEMORY_LIMIT, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 (faulthandler needs the file open to the end)
    warnings.simplefilter("default")
    filters = list(warnings.filters)
    import robodyn.cli  # noqa: F401 (imported once, before the first time bound)

    # inside the harness's scratch directory (removed by the harness even when this process dies)
    scratch = Path(tempfile.mkdtemp(prefix="driver-", dir=os.environ.get("ROBODYN_FUZZ_SCRATCH")))
    with open(results_path, "a", encoding="utf-8") as results:
        for job in jobs:
            results.write(json.dumps({"id": job["id"], "event": "start"}) + "\n")
            results.flush()
            # backstop: a hang the CPU-time alarm cannot interrupt (C code, a wait on a child) ends this process with
            # its stacks in the log, after WALL_FACTOR times the entry's bound on the wall clock (a busy machine
            # stretches a correct run; only a real hang runs that long)
            grace = float(job.get("grace", 10))
            faulthandler.dump_traceback_later(WALL_FACTOR * float(job.get("timeout", 20)) + grace, exit=True,
                                              file=log)
            result = run_job(job, scratch, filters)
            faulthandler.cancel_dump_traceback_later()
            results.write(json.dumps(result) + "\n")
            results.flush()
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

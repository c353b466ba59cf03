"""Run fuzz entries (see ``corpus/manifest.json``) through driver processes and judge each result.

An entry is a JSON object::

    {"id": "models/bomb_alias_chain", "args": ["show", "bomb_alias_chain.yaml"],
     "setup": {"copy": [["models/bomb_alias_chain.yaml", "bomb_alias_chain.yaml"]]},
     "expect": "refuse", "mentions": ["bomb_alias_chain.yaml"], "timeout": 20}

``args`` are the arguments after ``robodyn``; the run happens in a fresh empty working directory where
``setup`` first copies corpus files (paths relative to ``corpus/``), writes small files, makes directories,
FIFOs, symlinks and changes modes. ``expect``:

- ``refuse``: exit code 2; stderr is one ``error: ...`` line, optionally after ``warning: ...`` lines (the CLI
  prints a model's doubtful-inertia warnings before it refuses something else); stdout is empty; no
  ``Traceback``; every string of ``mentions`` (the file, the link, the field or the option) is in the error
  line (at most ``max_line`` characters long where the entry sets it); no file is left in the working
  directory. An entry may name another ``exit`` code (``robodyn batch``: 1 when a model fails while the rest go
  on), let stdout be ``"any"`` and name in ``kept`` the files it may write beside the one error line (batch's
  summary).
- ``ok``: exit code 0 and no ``Traceback``; stderr holds only ``warning:`` and ``wrote`` lines; every file
  created is under one of ``outputs`` (default: none may be created), and ``checks`` name sanity checks of
  them (``python``: every generated .py file parses; ``c``: every generated .c file compiles with
  ``cc -fsyntax-only`` where a C compiler is found).
- ``either``: a policy question (a hostile but printable robot name, say): ``ok`` or ``refuse``, each judged
  as above.

Every entry must finish within its ``timeout`` (seconds of CPU time of the driver process, so that a busy machine
does not turn a slow run into a hang; a wall-clock backstop of five times that catches a hang in C code): a run
past it is a hang. :func:`judge` returns the
problems of one result (empty when it passed); :func:`run_entries` runs everything.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tests.fuzz.driver import WALL_FACTOR

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
MANIFEST = CORPUS / "manifest.json"
REPO = HERE.parent.parent
DEFAULT_TIMEOUT = 20.0
#: Bound on the whole fuzz run's driver processes (seconds): every entry's bound plus the restarts.
SLACK = 60.0
#: The counts of the last run in this process (printed at the end of the pytest report by tests/fuzz/conftest.py).
LAST_COUNTS: dict[str, int] = {}


def load_manifest(path: Path = MANIFEST) -> list[dict[str, Any]]:
    entries = json.loads(path.read_text(encoding="utf-8"))
    for entry in entries:
        setup = entry.setdefault("setup", {})
        setup["copy"] = [[str(CORPUS / src), dst] for src, dst in setup.get("copy", [])]
    return entries


def _driver_env(scratch: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("ROBODYN_CACHE", str(scratch / "cache"))
    env["MPLCONFIGDIR"] = str(scratch / "mpl")
    env["ROBODYN_FUZZ_SCRATCH"] = str(scratch)
    env["MPLBACKEND"] = "Agg"
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    env["COLUMNS"] = "200"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env.pop("FORCE_COLOR", None)
    return env


def _run_worker(jobs: list[dict[str, Any]], scratch: Path, results: dict[str, dict[str, Any]]) -> None:
    """Run ``jobs`` in driver processes, restarting after a job that killed its driver (recorded as hung or
    died)."""
    pending = list(jobs)
    env = _driver_env(scratch)
    attempt = 0
    while pending:
        attempt += 1
        jobs_file = scratch / f"jobs-{pending[0]['id'].replace('/', '_')}-{attempt}.json"
        results_file = jobs_file.with_suffix(".results")
        log_file = jobs_file.with_suffix(".log")
        jobs_file.write_text(json.dumps(pending), encoding="utf-8")
        bound = sum(WALL_FACTOR * float(j.get("timeout", DEFAULT_TIMEOUT)) + float(j.get("grace", 10)) + 2
                    for j in pending) + SLACK
        started = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, "-m", "tests.fuzz.driver", str(jobs_file), str(results_file),
                                   str(log_file)], cwd=REPO, env=env, capture_output=True, text=True, timeout=bound,
                                  check=False)
            died = f"driver exited {proc.returncode}: {proc.stderr[-2000:]}"
        except subprocess.TimeoutExpired:
            died = f"driver killed after {bound:.0f} s"
        running = None
        lines = results_file.read_text(encoding="utf-8").splitlines() if results_file.exists() else []
        for line in lines:
            record = json.loads(line)
            if record["event"] == "start":
                running = record["id"]
            else:
                results[record["id"]] = record
                running = None
        done = {j["id"] for j in pending if j["id"] in results}
        if running is not None:
            log = log_file.read_text(encoding="utf-8", errors="replace") if log_file.exists() else ""
            hung = "Timeout (" in log or "killed after" in died
            results[running] = {"id": running, "event": "died", "exit": None, "stdout": "",
                                "stderr": f"{died}\n{log[-6000:]}", "seconds": round(time.perf_counter() - started,
                                                                                      3),
                                "timed_out": hung, "created": {}}
            done.add(running)
        elif len(done) < len(pending):  # died before its first job, or lost lines: give up on the rest
            for job in pending:
                if job["id"] not in done:
                    results[job["id"]] = {"id": job["id"], "event": "died", "exit": None, "stdout": "",
                                          "stderr": died, "seconds": 0.0, "timed_out": False, "created": {}}
            return
        pending = [j for j in pending if j["id"] not in done]


def run_entries(entries: Iterable[dict[str, Any]], workers: int | None = None) -> dict[str, dict[str, Any]]:
    """Run every entry (in ``workers`` driver processes at once, default ``$ROBODYN_FUZZ_WORKERS`` or 2): id ->
    result."""
    entries = list(entries)
    workers = workers or int(os.environ.get("ROBODYN_FUZZ_WORKERS", "2"))
    ordered = sorted(entries, key=lambda e: -float(e.get("cost", 1.0)))  # the slow ones first, spread out
    shares: list[list[dict[str, Any]]] = [[] for _ in range(max(1, workers))]
    loads = [0.0] * len(shares)
    for entry in ordered:
        k = loads.index(min(loads))
        shares[k].append(entry)
        loads[k] += float(entry.get("cost", 1.0))
    results: dict[str, dict[str, Any]] = {}
    scratch = Path(tempfile.mkdtemp(prefix="robodyn-fuzz-"))
    try:
        threads = [threading.Thread(target=_run_worker, args=(share, scratch, results)) for share in shares if share]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return results


# -- judging ------------------------------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _refusal_problems(entry: dict[str, Any], result: dict[str, Any]) -> list[str]:
    problems = []
    if result["exit"] != entry.get("exit", 2):
        problems.append(f"exit code {result['exit']}, expected {entry.get('exit', 2)}")
    lines = _lines(result["stderr"])
    errors = [line for line in lines if not line.startswith("warning: ")]
    if len(errors) != 1 or not errors[0].startswith("error: ") or lines[-1] is not errors[-1]:
        problems.append(f"stderr is not one 'error:' line (after warnings): {result['stderr'][-400:]!r}")
    elif any(ord(c) < 32 for c in errors[0]):
        problems.append(f"the error line holds control characters: {errors[0][:200]!r}")
    else:
        missing = [m for m in entry.get("mentions", []) if m not in errors[0]]
        if missing:
            problems.append(f"the error line does not name {missing}: {errors[0][:300]!r}")
        if len(errors[0]) > entry.get("max_line", len(errors[0])):
            problems.append(f"the error line is {len(errors[0])} characters long (at most {entry['max_line']})")
    if result["stdout"].strip() and entry.get("stdout") != "any":
        problems.append(f"stdout is not empty: {result['stdout'][:200]!r}")
    kept = entry.get("kept", [])
    left = sorted(rel for rel in result["created"] if not any(rel == k or rel.startswith(k + "/") for k in kept))
    if left:
        problems.append(f"files left behind: {left}")
    return problems


def _check_outputs(entry: dict[str, Any], result: dict[str, Any], cwd_files: dict[str, str]) -> list[str]:
    allowed = entry.get("outputs", [])
    stray = [rel for rel in cwd_files if not any(rel == a or rel.startswith(a.rstrip("/") + "/") for a in allowed)]
    return [f"files written outside {allowed}: {sorted(stray)}"] if stray else []


def _ok_problems(entry: dict[str, Any], result: dict[str, Any]) -> list[str]:
    problems = []
    if result["exit"] != 0:
        problems.append(f"exit code {result['exit']}, expected 0: {result['stderr'][-400:]!r}")
    odd = [line for line in _lines(result["stderr"]) if not line.startswith(("warning: ", "wrote "))]
    if odd:
        problems.append(f"unexpected stderr: {odd[:3]!r}")
    problems += _check_outputs(entry, result, result["created"])
    return problems


def judge(entry: dict[str, Any], result: dict[str, Any] | None) -> list[str]:
    """The problems of one entry's result (empty: it passed)."""
    if result is None:
        return ["no result (the driver never ran it)"]
    if result["timed_out"]:
        return [f"hang: still running after {entry.get('timeout', DEFAULT_TIMEOUT)} s: {result['stderr'][-600:]}"]
    if result["event"] == "died":
        return [f"the driver process died running it: {result['stderr'][-600:]}"]
    problems = []
    if "Traceback" in result["stderr"] or "Traceback" in result["stdout"]:
        problems.append("traceback: " + result["stderr"][-800:])
    expect = entry["expect"]
    if expect == "either":
        expect = "refuse" if result["exit"] == entry.get("exit", 2) else "ok"
    if expect == "refuse":
        problems += _refusal_problems(entry, result)
    else:
        problems += _ok_problems(entry, result)
        checks = syntax_checks(entry, result)
        problems += [f"{check}: {why}" for check, why in checks.items() if why]
    return problems


def classify(entry: dict[str, Any], result: dict[str, Any] | None) -> str:
    """'clean' (passed), 'hung', 'crashed' (a traceback or a dead driver) or 'wrong' (any other failure)."""
    if not judge(entry, result):
        return "clean"
    assert result is not None
    if result["timed_out"]:
        return "hung"
    if result["event"] == "died" or "Traceback" in result["stderr"] + result["stdout"]:
        return "crashed"
    return "wrong"


COMPILERS = {"c": ["cc", "-std=c99", "-fsyntax-only"], "fortran": ["gfortran", "-fsyntax-only"]}
SUFFIXES = {"c": (".c",), "fortran": (".f90", ".f95", ".f")}


def syntax_checks(entry: dict[str, Any], result: dict[str, Any]) -> dict[str, str]:
    """The sanity checks named in ``entry['checks']`` on a run's output: check name -> problem ('' when fine).

    ``python``: every generated .py file parses; ``c`` / ``fortran``: every generated source compiles with
    ``cc -fsyntax-only`` / ``gfortran -fsyntax-only`` (skipped where there is no such compiler); ``absent:TEXT``:
    TEXT is nowhere in stdout, stderr or the generated files (e.g. the contents of /etc/passwd);
    ``created:SUFFIX:N``: the run created exactly N files whose names end in SUFFIX (files made by the setup's
    earlier runs do not count: a later run that overwrote one of them made none)."""
    outputs: dict[str, str] = result.get("texts", {})
    found: dict[str, str] = {}
    for check in entry.get("checks", []):
        problem = ""
        if check == "python":
            for rel, text in outputs.items():
                if rel.endswith(".py"):
                    try:
                        ast.parse(text)
                    except SyntaxError as exc:
                        problem = f"{rel} does not parse: {exc}"
        elif check in COMPILERS and shutil.which(COMPILERS[check][0]):
            with tempfile.TemporaryDirectory() as tmp:
                for rel, text in outputs.items():
                    (Path(tmp) / Path(rel).name).write_text(text, encoding="utf-8")
                for rel in outputs:
                    if rel.endswith(SUFFIXES[check]):
                        proc = subprocess.run([*COMPILERS[check], Path(rel).name], cwd=tmp, capture_output=True,
                                              text=True, check=False)
                        if proc.returncode:
                            problem = f"{rel} does not compile: {proc.stderr[:300]}"
        elif check.startswith("created:"):
            suffix, _, count = check.removeprefix("created:").rpartition(":")
            made = [rel for rel, kind in result["created"].items() if kind == "file" and rel.endswith(suffix)]
            problem = f"{len(made)} new files ending in {suffix!r}, expected {count}" if len(made) != int(count) else ""
        elif check.startswith("absent:"):
            text = check.removeprefix("absent:")
            where = [name for name, body in (("stdout", result["stdout"]), ("stderr", result["stderr"]),
                                             *outputs.items()) if text in body]
            problem = f"{text!r} appears in {where}" if where else ""
        found[check] = problem
    return found


def summary(entries: list[dict[str, Any]], results: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Counts for the closing note: tried, refused cleanly, ok, crashed, hung, wrong (other failures)."""
    counts = {"tried": len(entries), "refused cleanly": 0, "ran ok": 0, "crashed": 0, "hung": 0, "wrong": 0}
    for entry in entries:
        result = results.get(entry["id"])
        kind = classify(entry, result)
        if kind == "clean":
            counts["refused cleanly" if result is not None and result["exit"] == 2 else "ran ok"] += 1
        else:
            counts[kind] += 1
    return counts


def short(text: str, limit: int = 400) -> str:
    """One line, runs of one character collapsed (``x*5000``), at most ``limit`` characters."""
    text = re.sub(r"(.)\1{19,}", lambda m: f"{m.group(1)}*{len(m.group(0))}", " ".join(text.split()))
    return text if len(text) <= limit else text[:limit] + "..."


def command_line(args: list[str]) -> str:
    return "robodyn " + " ".join(shlex.quote(short(a, 80)) for a in args)


def main(argv: list[str]) -> int:
    """``python -m tests.fuzz.harness [SUBSTRING...]``: run the entries whose id contains any SUBSTRING (all by
    default), print each failure and the counts; ``--json FILE`` also writes every result."""
    out_json = None
    if "--json" in argv:
        k = argv.index("--json")
        out_json = argv[k + 1]
        argv = argv[:k] + argv[k + 2:]
    entries = [e for e in load_manifest() if not argv or any(s in e["id"] for s in argv)]
    started = time.perf_counter()
    results = run_entries(entries)
    seconds = time.perf_counter() - started
    for entry in entries:
        problems = judge(entry, results.get(entry["id"]))
        if problems:
            result = results.get(entry["id"]) or {}
            print(f"FAIL {entry['id']} [{classify(entry, result or None)}] ({result.get('seconds')} s) "
                  f"{command_line(entry['args'])}")
            for problem in problems:
                print("    " + short(problem))
    counts = summary(entries, results)
    print(", ".join(f"{k}: {v}" for k, v in counts.items()) + f" ({seconds:.1f} s)")
    if out_json:
        Path(out_json).write_text(json.dumps({"entries": entries, "results": results}, indent=1), encoding="utf-8")
    return 0 if counts["tried"] == counts["refused cleanly"] + counts["ran ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

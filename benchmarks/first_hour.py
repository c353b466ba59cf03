"""What a user meets first: ``robodyn derive`` and ``robodyn report`` with their defaults, run as a user runs them
(a fresh process each), on the Panda of example-robot-data and right-angled numeric chains (prints a table; never
asserts).

    python benchmarks/first_hour.py [--panda PATH] [--chains 6,8,10,14,20] [--timeout 600] [--no-report]

Columns: wall time and peak memory (RSS of the child process) of each command, the size of what it wrote, the
time in the header of ``robodyn derive`` (``derived in X s``, the derivation and everything computed for the
output since), and the form it took (the line ``note: nested form ...`` on stderr). The chains are those of
``right_angled_chain`` below: twists of -pi/2 and pi/2 in turn, float lengths and inertias, whose expanded form
doubles with every joint (the default rule of :mod:`robodyn.equations` estimates that before expanding).
The Panda is looked up in the example-robot-data package unless ``--panda`` names a URDF.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import platform
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

ROBODYN = [sys.executable, "-m", "robodyn"]


def right_angled_chain(n: int) -> dict:
    links = [{"joint": "R", "a": 0.1 + 0.01 * i, "alpha": "pi/2" if i % 2 else "-pi/2", "d": 0.05 * (i % 3),
              "theta": 0.0, "mass": 1.0 + 0.1 * i, "com": [0.01, 0.02 * (i % 2), 0.03],
              "inertia": [[0.01, 0.001, 0.0], [0.001, 0.02, 0.0], [0.0, 0.0, 0.015]]} for i in range(n)]
    return {"name": f"chain{n}", "convention": "modified", "gravity": [0, 0, -9.81], "links": links}


def panda_urdf() -> Path | None:
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in dist.files or []:
        if str(f).endswith("panda_description/urdf/panda.urdf"):
            return Path(str(dist.locate_file(f)))
    return None


def run(args: list[str], output: Path, timeout: float) -> dict:
    """One command in a fresh process: wall time, its peak RSS (``wait4``), stderr, the size written."""
    with tempfile.TemporaryFile(mode="w+") as stderr:
        start = time.perf_counter()
        child = subprocess.Popen([*ROBODYN, *args, "-o", str(output)], stdout=subprocess.DEVNULL, stderr=stderr)
        timer = threading.Timer(timeout, child.kill)
        timer.start()
        _, code, usage = os.wait4(child.pid, 0)
        timer.cancel()
        child.returncode = os.waitstatus_to_exitcode(code)
        seconds = time.perf_counter() - start
        stderr.seek(0)
        text = stderr.read()
    status = "ok" if child.returncode == 0 else f"timeout {timeout:g} s" if seconds >= timeout else \
        f"exit {child.returncode}"
    return {"status": status, "seconds": seconds, "rss_mb": usage.ru_maxrss / 1024,
            "bytes": output.stat().st_size if output.exists() else 0, "stderr": text}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panda", type=Path, default=None)
    parser.add_argument("--chains", default="6,8,10,14,20")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--no-report", action="store_true")
    options = parser.parse_args()
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"{'model':10s} {'command':8s} {'status':14s} {'wall s':>8s} {'RSS MB':>8s} {'size':>10s} {'header s':>9s}"
          "  form")
    with tempfile.TemporaryDirectory() as tmp:
        models: list[tuple[str, Path]] = []
        panda = options.panda or panda_urdf()
        if panda is not None:
            models.append(("panda", panda))
        for n in (int(x) for x in options.chains.split(",") if x):
            path = Path(tmp) / f"chain{n}.yaml"
            path.write_text(yaml.safe_dump(right_angled_chain(n), sort_keys=False), encoding="utf-8")
            models.append((f"chain{n}", path))
        for label, path in models:
            commands = [("derive", Path(tmp) / f"{label}.txt")]
            if not options.no_report and label == "panda":
                commands.append(("report", Path(tmp) / f"{label}.html"))
            for command, output in commands:
                r = run([command, str(path)], output, options.timeout)
                header = form = ""
                if command == "derive" and output.exists():
                    with output.open(encoding="utf-8") as f:
                        match = re.search(r"derived in ([0-9.]+) s", f.readline())
                    header = match.group(1) if match else "?"
                    form = "nested" if "note: nested form" in r["stderr"] else "expanded"
                print(f"{label:10s} {command:8s} {r['status']:14s} {r['seconds']:8.1f} {r['rss_mb']:8.0f} "
                      f"{r['bytes']:10,d} {header:>9s}  {form}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

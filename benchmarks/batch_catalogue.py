"""Acceptance of ``robodyn batch`` (issue 32): the built-in robots and 10 fixed-base example-robot-data URDFs, every
language's code and a summary table; run twice, the second run does nothing.

    python benchmarks/batch_catalogue.py [--output DIR] [--workers 2] [--lang c,fortran,numpy,jax,cuda] [--keep]

Runs the command line twice in fresh processes (``robodyn batch MODELS... -l LANGUAGES -o DIR``, the default
outputs), prints the wall time of each run and its counts (built, already there, failed, from ``DIR/catalogue.json``)
and every failure's line. Asserts what is not a duration: the first run built every model (none failed), each entry
holds every language's files and its manifest, the summary table was printed; the second run built nothing and
skipped every model. The two runs' request hashes cover robodyn's own source: an edit of robodyn between the runs
(another process editing the working tree) builds the entries again, and the script says so.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from robodyn import library
from robodyn.runtime.cache import _source_fingerprint

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # (benchmarks.urdf_survey: run as a script, the repository root is not on the path)

#: Ten fixed-base URDFs of example-robot-data (relative to its robots directory), chains of 2 to 8 coordinates.
URDFS = (
    "panda_description/urdf/panda.urdf",
    "ur_description/urdf/ur3_robot.urdf",
    "ur_description/urdf/ur5_robot.urdf",
    "ur_description/urdf/ur10_robot.urdf",
    "z1_description/urdf/z1.urdf",
    "so_arm_description/urdf/so100.urdf",
    "so_arm_description/urdf/so101.urdf",
    "xarm_description/urdf/xarm7.urdf",
    "double_pendulum_description/urdf/double_pendulum.urdf",
    "asr_twodof_description/urdf/TwoDofs.urdf",
)
#: Every language of a catalogue.
LANGUAGES = "c,fortran,numpy,jax,cuda"
#: A language's folder holds at least the file of this suffix.
SUFFIXES = {"c": ".c", "fortran": ".f90", "numpy": ".py", "jax": ".py", "cuda": ".cu"}


def models() -> list[str]:
    from benchmarks.urdf_survey import robots_directory

    directory = robots_directory()
    if directory is None:
        raise SystemExit("example-robot-data is not installed")
    return [*library.names(), *(str(directory / path) for path in URDFS)]


def run(command: list[str]) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, check=False, timeout=3600)
    return time.perf_counter() - start, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=None, help="the catalogue's directory (default: a temporary "
                        "one, removed after unless --keep)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: one per core)")
    parser.add_argument("--lang", default=LANGUAGES)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)
    given = models()
    folder = args.output or Path(tempfile.mkdtemp(prefix="robodyn-batch-")) / "catalogue"
    executable = Path(sys.executable).with_name("robodyn")
    command = [str(executable) if executable.exists() else "robodyn", "batch", *given, "-l", args.lang,
               "-o", str(folder)]
    if args.workers:
        command += ["--workers", str(args.workers)]
    languages = args.lang.split(",")
    print(f"{len(given)} models ({len(library.names())} built-in, {len(URDFS)} URDFs), languages {args.lang}, "
          f"default outputs -> {folder}")
    try:
        first: dict[str, Any] | None = None
        second: dict[str, Any] | None = None
        edited = ""
        tries = 0
        while second is None:
            tries += 1
            label = "first" if first is None else "second"
            before = _source_fingerprint()
            seconds, result = run(command)
            summary = json.loads((folder / "catalogue.json").read_text(encoding="utf-8"))
            print(f"{label} run: {seconds:.1f} s wall, exit {result.returncode}: {summary['built']} built, "
                  f"{summary['skipped']} already there, {summary['failed']} failed", flush=True)
            for entry in summary["entries"]:
                if entry["status"] == "failed":
                    print(f"  failed: {entry['model']}: {entry['message']}")
            assert "Catalogue" in result.stdout and "robot" in result.stdout, result.stdout[-2000:]
            if first is None:
                slowest = sorted(summary["entries"], key=lambda e: -e["seconds"])[:5]
                print("  slowest: " + ", ".join(f"{e['name']} {e['seconds']:.1f} s" for e in slowest))
                first, edited = summary, before
            elif summary["built"] and _source_fingerprint() != edited and tries < 4:
                print("  robodyn's source was edited since the previous run (the request hash covers it): that run "
                      "counts as the first; once more")
                first, edited = summary, before
            else:
                second = summary
        assert first is not None
        assert first["failed"] == 0 and first["built"] + first["skipped"] == len(given), "a model was not built"
        for entry in first["entries"]:
            files = list(entry["files"])
            for language in languages:
                assert any(f.startswith(f"{entry['name']}/{language}/") and f.endswith(SUFFIXES[language])
                           for f in files), (entry["name"], language)
            assert (folder / entry["name"] / "manifest.json").is_file()
        assert second["built"] == 0 and second["failed"] == 0 and second["skipped"] == len(given), \
            "the second run did something"
        print("acceptance: every model built with every language, and the second run did nothing")
    finally:
        if args.output is None and not args.keep:
            shutil.rmtree(folder.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

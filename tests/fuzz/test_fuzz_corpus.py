"""Every entry of the fuzz corpus (tests/fuzz/corpus/manifest.json) through the real ``robodyn`` entry point.

Hostile model files, URDFs, special files (FIFOs, devices, symlink loops, made at run time) and argument lists:
a refusal is exit code 2 and one ``error:`` line naming the file (link, field, option), with no traceback and no
file left behind; a valid-but-odd input runs and its output is sane; nothing runs past its time bound. The
corpus runs once per session in driver processes (:mod:`tests.fuzz.harness`); each entry is then its own test.
Regenerate the corpus with ``python -m tests.fuzz.make_corpus``; run it alone, with a report, with
``python -m tests.fuzz.harness [ID-SUBSTRING...]``.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fuzz import harness, make_corpus

ENTRIES = harness.load_manifest()


@pytest.fixture(scope="module")
def fuzz_results() -> dict[str, dict[str, Any]]:
    results = harness.run_entries(ENTRIES)
    harness.LAST_COUNTS.update(harness.summary(ENTRIES, results))
    return results


def test_counts_are_reported(fuzz_results: dict[str, dict[str, Any]], record_property: Any) -> None:
    """The run's counts, for the end of the report (tests/fuzz/conftest.py): every entry judged, none crashed."""
    counts = harness.summary(ENTRIES, fuzz_results)
    record_property("fuzz_counts", counts)
    assert counts["tried"] == len(ENTRIES) and counts["crashed"] == 0, counts


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_entry(entry: dict[str, Any], fuzz_results: dict[str, dict[str, Any]]) -> None:
    problems = harness.judge(entry, fuzz_results.get(entry["id"]))
    if problems:
        pytest.fail(f"{entry['expect']}: {harness.command_line(entry['args'])}\n"
                    + "\n".join("  " + harness.short(p) for p in problems), pytrace=False)


def test_corpus_is_what_make_corpus_writes() -> None:
    """The committed files are exactly the generator's (reviewable, reproducible)."""
    expected = make_corpus.files()
    found = {str(p.relative_to(harness.CORPUS)): p.read_bytes() for p in harness.CORPUS.rglob("*") if p.is_file()}
    assert sorted(found) == sorted(expected)
    assert [rel for rel in expected if found[rel] != expected[rel]] == []


def test_corpus_size_and_expectations() -> None:
    hostile_files = [e for e in ENTRIES if e["id"].startswith(("models/", "urdf/")) and e["expect"] != "ok"]
    assert len(hostile_files) >= 150
    assert {e["expect"] for e in ENTRIES} == {"refuse", "ok", "either"}
    assert len({e["id"] for e in ENTRIES}) == len(ENTRIES)
    for entry in ENTRIES:
        for src, _ in entry["setup"].get("copy", []):
            assert (harness.CORPUS / src).is_file(), src


def test_harness_reports_hangs_deaths_and_crashes() -> None:
    """The harness itself: a hang (interruptible or not) or a dying driver fails its entry and the run goes on."""
    entries = [
        {"id": "self/ok", "args": ["list"], "expect": "ok", "timeout": 20},
        # a sleep uses no CPU time: both hangs end at the wall-clock backstop, 5 x timeout + grace seconds
        {"id": "self/sleep", "args": [], "selftest": "sleep", "expect": "ok", "timeout": 0.4, "grace": 1},
        {"id": "self/blocked", "args": [], "selftest": "blocked", "expect": "ok", "timeout": 0.4, "grace": 1},
        {"id": "self/die", "args": [], "selftest": "die", "expect": "ok", "timeout": 5},
        {"id": "self/crash", "args": [], "selftest": "crash", "expect": "refuse", "timeout": 5},
        {"id": "self/after", "args": ["show", "double_pendulum"], "expect": "ok", "timeout": 20},
    ]
    results = harness.run_entries(entries, workers=1)
    kinds = {e["id"]: harness.classify(e, results.get(e["id"])) for e in entries}
    assert kinds == {"self/ok": "clean", "self/sleep": "hung", "self/blocked": "hung", "self/die": "crashed",
                     "self/crash": "crashed", "self/after": "clean"}

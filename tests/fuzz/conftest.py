"""The fuzz run's counts at the end of the pytest report (inputs tried, refused cleanly, crashed, hung)."""

from __future__ import annotations

from typing import Any

from tests.fuzz import harness


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if harness.LAST_COUNTS:
        counts = ", ".join(f"{k}: {v}" for k, v in harness.LAST_COUNTS.items())
        terminalreporter.write_sep("-", "fuzz corpus")
        terminalreporter.write_line(counts)

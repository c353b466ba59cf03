"""The fuzz run's counts at the end of the pytest report (inputs tried, refused cleanly, crashed, hung).

The run happens in a worker when the suite runs on several cores (pytest-xdist): its counts travel to the report
as a user property of one test (``test_counts_are_reported``), read back here from every test report.
"""

from __future__ import annotations

from typing import Any

from tests.fuzz import harness

#: The name of the user property that carries the counts.
COUNTS = "fuzz_counts"


def pytest_runtest_logreport(report: Any) -> None:
    for name, value in getattr(report, "user_properties", ()):
        if name == COUNTS and isinstance(value, dict):
            harness.LAST_COUNTS.update(value)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if harness.LAST_COUNTS:
        counts = ", ".join(f"{k}: {v}" for k, v in harness.LAST_COUNTS.items())
        terminalreporter.write_sep("-", "fuzz corpus")
        terminalreporter.write_line(counts)

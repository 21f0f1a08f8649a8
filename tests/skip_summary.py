"""A pytest plugin: the run ends with why tests were skipped, one line per reason.

``python3 dev.py test`` skips what this machine cannot run (no Postgres URL, no
bubblewrap, no chromium, no Tavily key...); each reason names the variable or package
that enables those tests. pytest's ``-rs`` lists them by test location, hundreds of
lines for one reason; this groups them by reason with a count, largest first.
"""

from __future__ import annotations

from collections import Counter

import pytest
from _pytest.terminal import TerminalReporter


def skip_reason(report: pytest.TestReport) -> str:
    """The reason a skipped test gave (``Skipped: `` dropped)."""
    longrepr = report.longrepr
    text = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return text.removeprefix("Skipped: ").strip() or "no reason given"


def pytest_terminal_summary(terminalreporter: TerminalReporter) -> None:
    reports = terminalreporter.stats.get("skipped", [])
    reasons = Counter(skip_reason(r) for r in reports if isinstance(r, pytest.TestReport))
    if not reasons:
        return
    terminalreporter.write_sep("-", f"why {sum(reasons.values())} tests were skipped")
    for reason, count in reasons.most_common():
        terminalreporter.write_line(f"{count:>5}  {reason}")

"""follow_log outlasts a store that fails its reads for a while (a Postgres restarting):
the log's read and the status read that says the team has ended are both tried again,
and raised only once they have failed for READ_RETRY_FOR."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any
from uuid import uuid4

import pytest

from akgentic.team import runtime


class FlakyLog:
    """A log holding ``records`` whose first ``failures`` reads fail."""

    def __init__(self, records: list[Any], failures: int) -> None:
        self.records = records
        self.failures = failures
        self.reads = 0

    def read(self, team_id: Any, from_seq: int, limit: int) -> list[Any]:
        self.reads += 1
        if self.failures:
            self.failures -= 1
            raise ConnectionError("the server closed the connection unexpectedly")
        return [r for r in self.records if r.seq >= from_seq][:limit]


def record(seq: int) -> SimpleNamespace:
    return SimpleNamespace(seq=seq, last=seq)


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "READ_RETRY_EVERY", 0.01)


def follow(log: FlakyLog, ended: Any, stop: threading.Event | None = None) -> list[int]:
    storage = SimpleNamespace(events=log)
    followed = runtime.follow_log(
        storage,  # type: ignore[arg-type]
        uuid4(),
        1,
        wait_past=lambda seq, timeout: False,
        ended=ended,
        stop=stop,
    )
    return [r.seq for r in followed]


def test_a_failing_status_read_at_the_end_is_tried_again_not_raised() -> None:
    tries = {"n": 0}

    def ended(next_seq: int) -> bool:
        tries["n"] += 1
        if tries["n"] <= 2:  # the team's status, read while Postgres restarts
            raise ConnectionError("the server closed the connection unexpectedly")
        return next_seq > 2

    assert follow(FlakyLog([record(1), record(2)], failures=1), ended) == [1, 2]
    assert tries["n"] == 3


def test_a_store_still_failing_after_the_retry_window_is_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runtime, "READ_RETRY_FOR", 0.05)
    log = FlakyLog([record(1)], failures=10**9)
    with pytest.raises(ConnectionError, match="closed the connection"):
        follow(log, lambda next_seq: True)
    assert log.reads >= 2  # tried again before giving up

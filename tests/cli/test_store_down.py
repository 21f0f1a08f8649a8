"""A session whose store refuses writes (a disk full, a read-only file) for longer than a
line waits to be saved goes on: the person is told the message was delivered but is not
saved yet, and its answer shows once the store takes the kept records."""

from __future__ import annotations

import io
from typing import Any

import pytest

from akgentic.cli import chat
from akgentic.core import SentMessage, UserMessage
from akgentic.storage import open_storage
from akgentic.storage._sql import _Events
from akgentic.team import recorder as recorder_module

from .conftest import RESEARCH, Invoke
from .test_run import FINDINGS, QUESTION


def test_a_line_the_store_does_not_save_in_time_is_said_and_the_session_goes_on(
    cli: Invoke, storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store refuses every write while the line is sent, for longer than the session
    waits for it to be saved: the session says so and waits for the answer, which shows
    once the store takes the kept records — nothing is lost, and the session ends as
    usual (not on 'delivered but not committed')."""
    _store_down_while_sending(monkeypatch, back_after=True)
    monkeypatch.setattr(chat, "SAVE_WAIT", 0.3)

    result = cli("run", str(RESEARCH), "--timeout", "60", input=f"{QUESTION}\n/quit\n")

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert chat.NOT_SAVED_YET in lines
    at = lines.index(chat.NOT_SAVED_YET)
    assert f"@Manager → @Human (response): Here is what @Worker found: {FINDINGS}" in lines[at:]
    assert "not committed" not in result.output
    storage = open_storage(storage_url)
    try:
        [team] = storage.teams.list()
        stored = [r.require() for r in storage.events.read(team.team_id)]
    finally:
        storage.close()
    asked = [
        m.message
        for m in stored
        if isinstance(m, SentMessage) and isinstance(m.message, UserMessage)
    ]
    assert [m.content for m in asked] == [QUESTION]


def test_a_session_that_ends_with_records_the_store_still_refuses_says_what_was_lost(
    cli: Invoke, storage_url: str, monkeypatch: pytest.MonkeyPatch, stderr: io.StringIO
) -> None:
    """The store refuses every write from the first line on; the person leaves (/quit):
    the stop says it waits for the records not yet saved, then what was lost and what to
    do, and the session exits 1 — not 0 as if everything were kept."""
    _store_down_while_sending(monkeypatch, back_after=False)
    monkeypatch.setattr(chat, "SAVE_WAIT", 0.3)
    monkeypatch.setattr(recorder_module, "CLOSING_TRIES_FOR", 0.3)

    result = cli("run", str(RESEARCH), "--timeout", "1", input=f"{QUESTION}\n/quit\n")

    assert result.exit_code == 1, result.output
    assert chat.NOT_SAVED_YET in result.stdout.splitlines()
    lines = stderr.getvalue().splitlines()
    assert any(" records not yet saved (the store refuses them): trying for" in x for x in lines)
    [lost] = [line for line in lines if " not saved: the store still refused them" in line]
    assert lost.startswith("error: team ")
    assert lost.endswith(
        "free the store (disk space, permissions, a process holding it) before resuming"
    )


def _store_down_while_sending(monkeypatch: pytest.MonkeyPatch, *, back_after: bool) -> None:
    """The store refuses every event-log write from the first line sent on: until that
    send gave up waiting for it to be saved (``back_after``), or for good."""
    down = {"on": False}
    for name in ("append_packs", "append_encoded"):
        real = getattr(_Events, name)

        def refusing(self: _Events, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            if down["on"]:
                raise OSError("database or disk is full (simulated)")
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(_Events, name, refusing)
    sent = chat.send_line

    def send_while_down(runtime: Any, line: str) -> Any:
        down["on"] = True
        try:
            return sent(runtime, line)
        finally:
            down["on"] = not back_after

    monkeypatch.setattr(chat, "send_line", send_while_down)

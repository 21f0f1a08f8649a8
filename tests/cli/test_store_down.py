"""A session whose store refuses writes (a disk full, a read-only file) for longer than a
line waits to be saved goes on: the person is told the message was delivered but is not
saved yet, and its answer shows once the store takes the kept records."""

from __future__ import annotations

import io
import re
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest
from typer.testing import Result

from akgentic.cli import chat
from akgentic.core import SentMessage, UserMessage
from akgentic.storage import LeaseHolder, TeamStatus, open_storage, team_resource
from akgentic.team import recorder as recorder_module
from akgentic.team import runtime as runtime_module

from .conftest import RESEARCH, Child, Invoke, child_env
from .store_down import refuse_writes
from .test_run import FINDINGS, QUESTION

Spawn = Callable[[list[str], dict[str, str]], Child]


def test_a_line_the_store_does_not_save_in_time_is_said_and_the_session_goes_on(
    cli: Invoke, storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store refuses every write while the line is sent, for longer than the session
    waits for it to be saved: the session says so and waits for the answer, which shows
    once the store takes the kept records — nothing is lost, and the session ends as
    usual (not on 'delivered but not committed')."""
    refuse_writes(monkeypatch.setattr, back_after=True)
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


def test_a_session_outlasts_a_store_whose_reads_fail_too_while_it_is_down(
    cli: Invoke, storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Postgres stopped for a while fails reads as well as writes: the session's
    follower, which reads the log, tries again rather than end the session (it did: one
    two-line ``error: OperationalError`` once the store was back, the answer never
    shown). The answer shows once the store is back, and nothing is lost."""
    refuse_writes(monkeypatch.setattr, back_after=True, reads=True)
    monkeypatch.setattr(chat, "SAVE_WAIT", 0.3)

    result = cli("run", str(RESEARCH), "--timeout", "60", input=f"{QUESTION}\n/quit\n")

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    at = lines.index(chat.NOT_SAVED_YET)
    assert f"@Manager → @Human (response): Here is what @Worker found: {FINDINGS}" in lines[at:]
    assert "error:" not in result.output


def test_a_session_that_ends_with_records_the_store_still_refuses_says_what_was_lost(
    cli: Invoke, storage_url: str, monkeypatch: pytest.MonkeyPatch, stderr: io.StringIO
) -> None:
    """The store refuses every write from the first line on; the person leaves (/quit):
    the stop says it waits for the records not yet saved, then what was lost and what to
    do, and the session exits 1 — not 0 as if everything were kept."""
    refuse_writes(monkeypatch.setattr, back_after=False)
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


def test_a_team_whose_stop_lost_records_is_left_as_after_a_crash_and_its_resume_says_so(
    cli: Invoke, storage_url: str, monkeypatch: pytest.MonkeyPatch, stderr: io.StringIO
) -> None:
    """The store refuses the log's writes, not the team's status: the stop that lost
    records does not mark the team STOPPED (its log lacks its end), so its resume says it
    did not stop cleanly and restores it from its log — not as a clean stop."""
    refuse_writes(monkeypatch.setattr, back_after=False)
    monkeypatch.setattr(chat, "SAVE_WAIT", 0.3)
    monkeypatch.setattr(recorder_module, "CLOSING_TRIES_FOR", 0.3)

    ended = cli("run", str(RESEARCH), "--timeout", "1", input=f"{QUESTION}\n/quit\n")
    assert ended.exit_code == 1, ended.output
    monkeypatch.undo()  # the store takes writes again

    storage = open_storage(storage_url)
    try:
        [team] = storage.teams.list()
    finally:
        storage.close()
    assert team.status == TeamStatus.RUNNING
    resumed = cli("teams", "resume", str(team.team_id), "-m", "go on", "--idle", "0.3")
    assert resumed.exit_code == 0, resumed.output
    assert f"team research ({str(team.team_id)[:8]}) did not stop cleanly: restored from " in (
        resumed.stderr
    )


def test_a_line_not_saved_when_another_process_took_the_team_over_is_said_not_saved(
    cli: Invoke, storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store refused the log's writes long enough for the lease to run out, and
    another process took the team over (as a resume elsewhere does): what the session had
    delivered but not saved is lost with the lease. It says so, line by line, with what to
    do — not only that the team was taken over."""
    real_send = chat._send

    def send_then_taken_over(*args: Any, **kwargs: Any) -> Any:
        sent = real_send(*args, **kwargs)  # said not saved yet: the store still refuses
        storage = open_storage(storage_url)
        try:
            resource = team_resource(args[0].team_id)
            lease = storage.leases.inspect(resource)
            assert lease is not None
            thief = LeaseHolder(owner="thief", host="elsewhere", pid=4242)
            storage.leases.acquire(resource, thief, 60, take_over=lease.holder.owner)
        finally:
            storage.close()
        return sent

    monkeypatch.setattr(chat, "_send", send_then_taken_over)
    refuse_writes(monkeypatch.setattr, back_after=True)  # around the send above
    monkeypatch.setattr(chat, "SAVE_WAIT", 0.3)

    result = cli("run", str(RESEARCH), "--timeout", "60", input=f"{QUESTION}\n/quit\n")

    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert chat.NOT_SAVED_YET in lines
    assert (
        f"the message was not saved: {QUESTION} (the team was taken over before the store "
        f"took it: send it again where the team runs now)"
    ) in lines
    assert result.stderr.splitlines()[-1].endswith(
        "was taken over by another process (pid 4242 on host elsewhere); this session stopped"
    )


def _spawn_store_down(spawn: Spawn, storage_url: str, *args: str, **env: str) -> Child:
    """``akgentic ARGS...`` in a process of its own whose store refuses the log's writes
    from the first line sent on (:mod:`tests.cli.store_down`; its stderr on its stdout)."""
    return spawn(
        [sys.executable, "-m", "tests.cli.store_down", *args],
        child_env(storage_url, **env),
    )


def test_ctrl_c_while_a_line_waits_to_be_saved_stops_the_team_and_says_what_was_lost(
    storage_url: str, spawn: Spawn
) -> None:
    """Ctrl-C while the one exchange's line waits to be saved (a store refusing writes) is
    taken then, as anywhere in the session — not once the wait is over: the team stops,
    the records the store still refuses are said lost with what to do, and the line is
    not said unsent (it was delivered). Exit code 130."""
    child = _spawn_store_down(
        spawn,
        storage_url,
        *("run", str(RESEARCH), "-m", QUESTION),
        AKGENTIC_CLI_TEST_SAVE_WAIT="600",  # the wait outlasts the test: only Ctrl-C ends it
        AKGENTIC_CLI_TEST_CLOSING_TRIES="0.5",
    )
    child.wait_for("the event log refused a batch; it is kept")

    child.proc.send_signal(signal.SIGINT)
    child.wait_for("interrupted: cancelling the turns in progress", timeout=30)
    output = child.output()
    code, _ = child.finish()

    assert code == 130, output
    [lost] = [x for x in output.splitlines() if " not saved: the store still refused them" in x]
    assert lost.startswith("error: team ") and lost.endswith(" before resuming"), lost
    assert "the message was not sent" not in output
    assert "Traceback" not in output


def test_a_second_ctrl_c_while_the_stop_retries_the_store_still_says_what_was_lost(
    storage_url: str, spawn: Spawn
) -> None:
    """The stop waits for the store to take the records it refuses. The first Ctrl-C then
    says so — the turns have ended, how many records the stop is saving, how much
    longer it tries, that Ctrl-C again loses them — not that it cancels the turns; a
    second Ctrl-C cuts that wait short, says that is what it cut (not turns: they had
    ended), and still says in one line how many records are lost and what to do (exit
    code 130, not a silent exit)."""
    child = _spawn_store_down(
        spawn,
        storage_url,
        *("run", str(RESEARCH), "--timeout", "1"),
        AKGENTIC_CLI_TEST_SAVE_WAIT="0.3",
        AKGENTIC_CLI_TEST_CLOSING_TRIES="600",  # the stop's tries outlast the test
    )
    child.write(QUESTION)
    child.wait_for(chat.NOT_SAVED_YET)
    child.wait_for("no answer within 1s; the team goes on")
    child.write("/quit")
    child.wait_for("records not yet saved (the store refuses them): trying for up to 600s")

    child.proc.send_signal(signal.SIGINT)
    child.wait_for("interrupted: the turns have ended; the team's stop is saving its last ")
    child.proc.send_signal(signal.SIGINT)
    output = child.output()
    code, _ = child.finish()

    assert code == 130, output
    lines = output.splitlines()
    [first] = [x for x in lines if x.startswith("interrupted: ")]
    assert re.fullmatch(
        r"interrupted: the turns have ended; the team's stop is saving its last \d+ records?, "
        r"which the store refuses: it tries for up to \d+s more \(Ctrl-C again to stop at "
        r"once and lose them\)",
        first,
    ), first
    at = next(i for i, x in enumerate(lines) if x.startswith("interrupted again: stopped at once"))
    assert lines[at].startswith(  # no turn was running: none was cut
        "interrupted again: stopped at once (the turns had ended; the team's stop was saving "
        "its last records); resume it with: "
    ), lines[at]
    [lost] = lines[at + 1 : at + 2] or ["(no line)"]  # the line after it
    assert lost.startswith("error: team ") and lost.endswith(" before resuming"), output
    assert " records not saved: the store refused them, and they are lost as the process " in (lost)


def _run_past_the_stop_wait(cli: Invoke, monkeypatch: pytest.MonkeyPatch) -> Result:
    """``akgentic run`` whose store refuses every write; the person leaves (/quit); the
    stop's wait runs out with the recorder still at the records (held there until the
    session has ended)."""
    refuse_writes(monkeypatch.setattr, back_after=False)
    monkeypatch.setattr(chat, "SAVE_WAIT", 0.3)
    monkeypatch.setattr(chat, "GRACE", 0.0)
    monkeypatch.setattr(runtime_module, "STOP_SLACK", 0.1)
    monkeypatch.setattr(recorder_module, "CLOSING_TRIES_FOR", 0.0)  # gives up once let go
    stopped = threading.Event()  # the session has ended: the recorder may go on
    retry = recorder_module.EventRecorder._retry

    def held(recorder: recorder_module.EventRecorder, *args: object) -> bool:
        if recorder.closing:
            assert stopped.wait(60)
        return retry(recorder, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(recorder_module.EventRecorder, "_retry", held)
    try:
        return cli("run", str(RESEARCH), "--timeout", "1", input=f"{QUESTION}\n/quit\n")
    finally:
        stopped.set()


def test_a_session_whose_stop_does_not_end_in_its_wait_says_what_is_lost_and_exits_1(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch, stderr: io.StringIO
) -> None:
    """The store refuses every write; the person leaves (/quit); the stop's wait runs out
    with the recorder still at the records (held there until the session's stop has
    returned): no line said they were not saved, and the session exited 0. One
    ``error:`` line says how many are not saved yet and what to do; exit code 1."""
    result = _run_past_the_stop_wait(cli, monkeypatch)

    assert result.exit_code == 1, result.output
    lines = stderr.getvalue().splitlines()
    [line] = [x for x in lines if ": its stop did not end in time: " in x]
    assert re.fullmatch(
        r"error: team [0-9a-f-]+: its stop did not end in time: \d+ records? not saved yet "
        r"\(the store refuses them\), lost if the process ends before they are; .* before "
        r"resuming",
        line,
    ), line


def test_a_session_whose_stop_does_not_end_does_not_say_the_team_stopped_nor_blame_a_member(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch, stderr: io.StringIO
) -> None:
    """The same session: its last lines said the team stopped (it had not: its last
    records were still being written), and, as the process left its orchestrator behind
    (waiting for them), that @Orchestrator was stuck in a call. They say the stop did not
    finish, that its last records may not be saved, how to resume it and what that resume
    may find; no member is said stuck."""
    result = _run_past_the_stop_wait(cli, monkeypatch)

    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    [last] = [x for x in lines if x.startswith("team research (")][-1:]
    assert re.fullmatch(
        rf"team research \([0-9a-f]{{8}}\) {re.escape(chat.NOT_ENDED)}; resume it with: "
        r"akgentic teams resume [0-9a-f]{8} --storage \S+",
        last,
    ), result.output
    assert lines[lines.index(last) + 1] == chat.NOT_ENDED_RESUME, result.output
    assert " stopped; resume it with" not in result.output
    assert "stuck in a call" not in result.output

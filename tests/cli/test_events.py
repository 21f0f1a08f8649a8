"""``akgentic events``: a team's log line by line, corrupt rows included, and ``--follow``."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import threading
from collections.abc import Callable
from uuid import UUID

import pytest

from akgentic.agent import TurnInterrupted
from akgentic.agent.turn import TurnEndedEvent, TurnInterruptedEvent, TurnStartedEvent
from akgentic.cli.describe import Describer
from akgentic.cli.events import TeamGoneError, read_events
from akgentic.core import EventMessage
from akgentic.storage import open_storage, sqlite_path
from tests.event_rows import unpack_events

from .conftest import AKGENTIC, RESEARCH, Child, Invoke, child_env

ROW = re.compile(r"^ *(\d+)  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}  (\S+) +(.*)$")


def run_once(cli: Invoke, storage_url: str) -> tuple[UUID, int]:
    """Run the research team for one exchange; its id and last seq."""
    result = cli("run", str(RESEARCH), "-m", "why?")
    assert result.exit_code == 0, result.output
    storage = open_storage(storage_url)
    [team] = storage.teams.list()
    last = storage.events.last_seq(team.team_id)
    storage.close()
    return team.team_id, last


def rows(stdout: str) -> list[tuple[int, str, str]]:
    parsed = []
    for line in stdout.splitlines():
        match = ROW.match(line)
        assert match, f"not an event line: {line!r}"
        parsed.append((int(match[1]), match[2], match[3]))
    return parsed


def test_events_from_a_sequence_number(cli: Invoke, storage_url: str) -> None:
    team_id, last = run_once(cli, storage_url)

    everything = rows(cli("events", "research").stdout)
    # Where the question lands depends on how fast the members started (their start-up
    # events interleave with it): find it, never assume its number.
    [asked] = [s for s, kind, text in everything if text == "@Human → @Manager: why?"]
    tail = cli("events", str(team_id)[:8], "--from", str(asked))

    assert tail.exit_code == 0, tail.output
    assert [seq for seq, _, _ in everything] == list(range(1, last + 1))
    assert rows(tail.stdout) == everything[asked - 1 :]
    kinds = {kind for _, kind, _ in everything}
    assert {"StartMessage", "SentMessage", "ToolCallEvent", "LlmTextDeltaEvent"} <= kinds
    assert (1, "StartMessage", "@Human started (HumanProxy)") in everything
    assert everything[asked - 1][1] == "SentMessage"
    received = [s for s, _, text in everything if text == "@Manager received @Human's message"]
    assert len(received) == 1 and received[0] > asked
    assert any(
        row[1:] == ("ToolCallEvent", "@Worker → use_skill(name=three-points)") for row in everything
    )
    assert cli("events", "research", "--from", str(last + 1)).stdout == ""
    assert not [text for _, _, text in everything if "UUID(" in text or "=None" in text]


def test_the_turn_protocol_reads_as_sentences() -> None:
    turn = UUID("7c2f5fcc-98ed-4770-bf2d-d3cef182d9c4")
    describe = Describer().summary
    lines = [
        describe(EventMessage(event=event))
        for event in (
            TurnStartedEvent(turn_id=turn, agent="@W"),
            TurnInterruptedEvent(turn_id=turn, agent="@W", by="@Human"),
            TurnInterrupted(message_id=turn, reason="the team is stopping"),
            TurnEndedEvent(turn_id=turn, agent="@W", outcome="failed", error="Boom:\n  bad"),
        )
    ]
    assert lines == [
        "?: turn 7c2f5fcc started",
        "?: turn 7c2f5fcc cancelled by @Human",
        "?: message 7c2f5fcc left for a resume to offer again (the team is stopping)",
        "?: turn 7c2f5fcc failed: Boom: bad",
    ]


def test_a_corrupt_row_is_printed_as_an_error_and_the_rest_goes_on(
    cli: Invoke, storage_url: str
) -> None:
    team_id, last = run_once(cli, storage_url)
    unpack_events(sqlite_path(storage_url), team_id)
    with sqlite3.connect(sqlite_path(storage_url)) as db:
        changed = db.execute(
            "UPDATE akgentic_events SET payload = ? WHERE team_id = ? AND seq = 3",
            ('{"__model__": "nowhere.Thing"}', str(team_id)),
        ).rowcount
    assert changed == 1

    result = cli("events", "research", "--from", "2")
    shown = cli("teams", "show", "research")

    assert result.exit_code == 0, result.output
    listed = rows(result.stdout)
    assert [seq for seq, _, _ in listed] == list(range(2, last + 1))
    seq, kind, summary = listed[1]
    assert (seq, kind) == (3, "CORRUPT")
    assert "event seq 3" in summary
    assert "nowhere.Thing" in summary
    assert "corrupt: event seq 3: " in shown.stdout


def test_from_past_the_last_event_says_which_is_the_last(cli: Invoke, storage_url: str) -> None:
    team_id, last = run_once(cli, storage_url)
    past = cli("events", str(team_id)[:8], "--from", "99999")
    assert past.exit_code == 0
    assert past.stdout == ""
    assert past.stderr == (
        f"no events from seq 99999 on: the last event of team research ({str(team_id)[:8]}) "
        f"is seq {last}\n"
    )
    [(seq, _, _)] = rows(cli("events", str(team_id)[:8], "--from", str(last)).stdout)
    assert seq == last


def test_follow_prints_events_as_another_process_records_them(
    cli: Invoke, storage_url: str, spawn: Callable[[list[str], dict[str, str]], Child]
) -> None:
    team_id, last = run_once(cli, storage_url)
    argv = [str(AKGENTIC), "events", str(team_id), "--follow", "--from", str(last - 1)]
    follower = spawn([*argv, "--interval", "0.05"], child_env(storage_url))
    follower.wait_for(f"{last:>5}  ")  # the backfill

    resumed = cli("teams", "resume", str(team_id), "-m", "and then?")
    assert resumed.exit_code == 0, resumed.output

    follower.wait_for("SentMessage            @Human → @Manager: and then?")
    follower.wait_for("ToolCallEvent          @Worker → use_skill(name=three-points)")
    follower.wait_for("StopMessage            @Orchestrator stopped")
    follower.proc.send_signal(signal.SIGINT)
    code, errors = follower.finish()
    assert code == 130  # as every command's Ctrl-C
    assert "Traceback" not in errors


def test_a_garbled_time_and_a_payload_that_is_not_utf8_are_shown_and_the_rest_goes_on(
    cli: Invoke, storage_url: str
) -> None:
    team_id, last = run_once(cli, storage_url)
    unpack_events(sqlite_path(storage_url), team_id)
    with sqlite3.connect(sqlite_path(storage_url)) as db:
        db.execute(
            "UPDATE akgentic_events SET ts = 'garbage' WHERE team_id = ? AND seq = 2",
            (str(team_id),),
        )
        db.execute(
            "UPDATE akgentic_events SET payload = CAST(? AS TEXT) WHERE team_id = ? AND seq = 3",
            (b"\xff\xfe not text", str(team_id)),
        )

    result = cli("events", "research")
    shown = cli("teams", "show", "research")

    assert result.exit_code == 0 and shown.exit_code == 0, result.output + shown.output
    lines = result.stdout.splitlines()
    assert len(lines) == last
    assert re.match(r"^ +2  \?  CORRUPT +.*event seq 2: the stored time 'garbage'", lines[1])
    assert re.match(
        r"^ +3  \S+ \S+  CORRUPT +.*event seq 3: the stored payload is not UTF-8", lines[2]
    )
    assert [seq for seq, _, _ in rows("\n".join(lines[3:]))] == list(range(4, last + 1))
    assert "corrupt: event seq 2: " in shown.stdout and "corrupt: event seq 3: " in shown.stdout


def test_json_lines_carry_whole_messages_and_say_which_rows_are_corrupt(
    cli: Invoke, storage_url: str
) -> None:
    """``--json``: one JSON object per event, the message whole (a long text is not clipped
    as the summary is), ASCII only (an escape sequence stays text), a corrupt row as null
    with its reason."""
    asked = "why? " * 80 + "\x1b[31mred"
    result = cli("run", str(RESEARCH), "-m", asked)
    assert result.exit_code == 0, result.output
    storage = open_storage(storage_url)
    [team] = storage.teams.list()
    last = storage.events.last_seq(team.team_id)
    storage.close()
    unpack_events(sqlite_path(storage_url), team.team_id)
    with sqlite3.connect(sqlite_path(storage_url)) as db:
        db.execute(
            "UPDATE akgentic_events SET payload = ? WHERE team_id = ? AND seq = 3",
            ('{"__model__": "nowhere.Thing"}', str(team.team_id)),
        )

    listed = cli("events", "research", "--json")

    assert listed.exit_code == 0, listed.output
    assert listed.stdout.isascii() and "\x1b" not in listed.stdout
    lines = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [line["seq"] for line in lines] == list(range(1, last + 1))
    corrupt = lines[2]
    assert corrupt["message"] is None and "nowhere.Thing" in corrupt["error"]
    contents = [
        line["message"].get("message", {}).get("content")
        for line in lines
        if line["message"] is not None
    ]
    assert asked in contents  # the person's message, whole
    assert all(line["timestamp"] for line in lines if line["message"] is not None)


@pytest.mark.parametrize(("how", "said"), [("delete", "deleted"), ("purge", "purged")])
def test_follow_ends_when_the_team_is_deleted_under_it(how: str, said: str) -> None:
    storage = open_storage("memory://")
    team = storage.teams.create("t")
    stop = threading.Event()
    backstop = threading.Timer(10, stop.set)  # without the check, follow waits for ever
    backstop.start()
    try:
        follow = read_events(storage, team.team_id, follow=True, interval=0.01, stop=stop)
        getattr(storage.teams, how)(team.team_id)
        with pytest.raises(TeamGoneError, match=said):
            list(follow)
    finally:
        backstop.cancel()
        storage.close()


def test_events_follow_of_a_deleted_team_is_one_error_line(cli: Invoke, storage_url: str) -> None:
    team_id, last = run_once(cli, storage_url)
    assert cli("teams", "delete", str(team_id)).exit_code == 0
    result = cli("events", str(team_id), "--follow", "--from", str(last), "--interval", "0.01")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"error: team research ({str(team_id)[:8]}) was deleted"
    ]


def test_a_stored_lone_surrogate_is_shown_as_a_replacement_character(
    cli: Invoke, storage_url: str
) -> None:
    """A log written before text was made sound where it enters: the person's message
    holds a lone surrogate, stored as its JSON escape. The listing and ``teams show`` read
    it back and show U+FFFD in its place, and so do the JSON lines (ASCII, so valid UTF-8:
    ``\\ufffd``, never the ``\\ud800`` escape a strict JSON reader refuses)."""
    team_id, last = run_once(cli, storage_url)
    unpack_events(sqlite_path(storage_url), team_id)
    with sqlite3.connect(sqlite_path(storage_url)) as db:
        changed = db.execute(
            "UPDATE akgentic_events SET payload = replace(payload, '\"why?\"', ?) "
            "WHERE team_id = ? AND payload LIKE '%\"why?\"%'",
            ('"why\\ud800?"', str(team_id)),
        ).rowcount
    assert changed >= 1

    result = cli("events", "research")
    listed = cli("events", "research", "--json")
    shown = cli("teams", "show", "research")

    assert result.exit_code == 0 and listed.exit_code == 0, result.output + listed.output
    assert shown.exit_code == 0, shown.output
    assert [seq for seq, _, _ in rows(result.stdout)] == list(range(1, last + 1))
    assert "why\ufffd?" in result.stdout and "why\ufffd?" in shown.stdout
    assert listed.stdout.isascii() and "\\ud800" not in listed.stdout
    said = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [line["seq"] for line in said] == list(range(1, last + 1))
    texts = json.dumps(said, ensure_ascii=False)
    assert "why\ufffd?" in texts
    texts.encode()  # no lone surrogate left in any string: it encodes as UTF-8

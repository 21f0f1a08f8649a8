"""The storage contract: every rule of ``akgentic.storage``, on every backend.

The ``backend`` fixture (conftest) runs each test on memory, SQLite and — when
``AKGENTIC_TEST_POSTGRES_URL`` is set — Postgres.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

import pytest

from akgentic.core import (
    ActorAddressProxy,
    BaseState,
    EventMessage,
    Message,
    ResultMessage,
    SentMessage,
    SerializableModel,
    SerializationError,
    StateChangedMessage,
    UserMessage,
)
from akgentic.storage import (
    MAX_SEQ,
    CorruptRecordError,
    EventRecord,
    InvalidTransitionError,
    SkillRecord,
    StorageBundle,
    StorageClosedError,
    TeamExistsError,
    TeamNotFoundError,
    TeamStatus,
    corrupt_rows,
)
from tests.storage.conftest import Backend


class Progress(SerializableModel):
    """A domain event payload defined outside the framework."""

    step: int
    note: str


class CounterState(BaseState):
    count: int = 0
    label: str = ""


class NotAMessage(SerializableModel):
    value: int = 0


def msg(text: str) -> UserMessage:
    return UserMessage(content=text)


def contents(records: list[EventRecord]) -> list[str]:
    out = []
    for record in records:
        message = record.require()
        assert isinstance(message, UserMessage)
        out.append(message.content)
    return out


def address(name: str) -> ActorAddressProxy:
    return ActorAddressProxy(agent_id=uuid4(), name=name, role="Worker", team_id=uuid4())


# -- the event log: numbering -------------------------------------------------------------


def test_each_team_numbers_its_events_from_one_without_gaps(store: StorageBundle) -> None:
    team_a, team_b = uuid4(), uuid4()
    assert store.events.last_seq(team_a) == 0
    assert [store.events.append(team_a, msg(f"a{i}")) for i in range(3)] == [1, 2, 3]
    assert store.events.append(team_b, msg("b0")) == 1
    assert store.events.append_many(team_a, [msg("a3"), msg("a4")]) == [4, 5]
    assert store.events.append_many(team_b, [msg("b1"), msg("b2")]) == [2, 3]
    assert store.events.append(team_a, msg("a5")) == 6

    assert store.events.last_seq(team_a) == 6
    assert store.events.last_seq(team_b) == 3
    assert contents(store.events.read(team_a)) == [f"a{i}" for i in range(6)]
    assert contents(store.events.read(team_b)) == ["b0", "b1", "b2"]
    assert [r.seq for r in store.events.read(team_a)] == [1, 2, 3, 4, 5, 6]
    assert all(r.team_id == team_a for r in store.events.read(team_a))


def test_an_empty_batch_stores_nothing_and_takes_no_number(store: StorageBundle) -> None:
    team = uuid4()
    assert store.events.append_many(team, []) == []
    assert store.events.last_seq(team) == 0
    assert store.events.append(team, msg("first")) == 1


def test_a_batch_that_cannot_be_encoded_is_refused_whole(store: StorageBundle) -> None:
    team = uuid4()
    store.events.append(team, msg("kept"))
    bad = EventMessage(event=object())  # not serializable
    with pytest.raises(SerializationError):
        store.events.append_many(team, [msg("lost 1"), bad, msg("lost 2")])
    with pytest.raises(SerializationError):
        store.events.append(team, bad)
    assert store.events.last_seq(team) == 1
    assert store.events.append(team, msg("next")) == 2
    assert contents(store.events.read(team)) == ["kept", "next"]


def test_only_messages_are_appended(store: StorageBundle) -> None:
    with pytest.raises(TypeError, match="Message"):
        store.events.append(uuid4(), Progress(step=1, note="x"))  # type: ignore[arg-type]


def _hammer(
    stores: list[StorageBundle], team: UUID, threads: int, rounds: int
) -> dict[int, list[int]]:
    """``threads`` writers, each doing ``rounds`` single appends and ``rounds`` batches of
    3, started together; returns the numbers each writer was given, by writer."""
    barrier = threading.Barrier(threads)
    given: dict[int, list[int]] = {}
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        events = stores[w % len(stores)].events
        mine: list[int] = []
        try:
            barrier.wait(timeout=30)
            for _ in range(rounds):
                mine.append(events.append(team, msg(f"{w}:{len(mine)}")))
                base = len(mine)
                mine.extend(events.append_many(team, [msg(f"{w}:{base + k}") for k in range(3)]))
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)
        given[w] = mine

    workers = [threading.Thread(target=writer, args=(w,)) for w in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(timeout=60)
    assert not errors, errors
    return given


def _assert_gap_free(store: StorageBundle, team: UUID, given: dict[int, list[int]]) -> None:
    every = sorted(seq for seqs in given.values() for seq in seqs)
    assert every == list(range(1, len(every) + 1))  # unique, no gap
    records = store.events.read(team)
    assert [r.seq for r in records] == every
    by_seq = {r.seq: contents([r])[0] for r in records}
    for w, seqs in given.items():  # each writer's messages sit at the numbers it was given
        assert seqs == sorted(seqs)
        assert [by_seq[s] for s in seqs] == [f"{w}:{i}" for i in range(len(seqs))]


def test_concurrent_writers_get_unique_gap_free_numbers(backend: Backend) -> None:
    team, other = uuid4(), uuid4()
    stores = [backend.store, backend.another()]  # two connections where the backend has them
    given = _hammer(stores, team, threads=8, rounds=10)
    assert sum(len(v) for v in given.values()) == 8 * 10 * 4
    _assert_gap_free(backend.store, team, given)
    assert backend.store.events.last_seq(other) == 0


def test_concurrent_processes_get_unique_gap_free_numbers(backend: Backend) -> None:
    if backend.open_again is None:
        pytest.skip("the memory backend lives in one process")
    team = uuid4()
    script = (
        "import sys, uuid\n"
        "from akgentic.core import UserMessage\n"
        "from akgentic.storage import open_storage\n"
        "url, team, name, n = sys.argv[1], uuid.UUID(sys.argv[2]), sys.argv[3], int(sys.argv[4])\n"
        "store = open_storage(url)\n"
        "seqs = []\n"
        "for i in range(0, n, 2):\n"
        "    seqs.append(store.events.append(team, UserMessage(content=f'{name}:{i}')))\n"
        "    seqs.append(store.events.append_many(\n"
        "        team, [UserMessage(content=f'{name}:{i + 1}')])[0])\n"
        "store.close()\n"
        "print(' '.join(map(str, seqs)))\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, backend.url, str(team), str(p), "60"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in range(3)
    ]
    given: dict[int, list[int]] = {}
    for p, proc in enumerate(procs):
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err
        given[p] = [int(s) for s in out.split()]
    _assert_gap_free(backend.store, team, given)


def test_an_append_is_committed_when_it_returns(backend: Backend) -> None:
    team = uuid4()
    other = backend.another()
    for i in range(5):
        seq = backend.store.events.append(team, msg(f"m{i}"))
        assert other.events.last_seq(team) == seq  # visible through another connection
        assert contents(other.events.read(team, from_seq=seq)) == [f"m{i}"]


# -- the event log: reading ----------------------------------------------------------------


def test_read_honours_range_and_limit(store: StorageBundle) -> None:
    team = uuid4()
    store.events.append_many(team, [msg(str(i)) for i in range(1, 11)])

    def seqs(**kwargs: Any) -> list[int]:
        return [r.seq for r in store.events.read(team, **kwargs)]

    assert seqs() == list(range(1, 11))
    assert seqs(from_seq=3, to_seq=6) == [3, 4, 5, 6]
    assert seqs(from_seq=3, limit=2) == [3, 4]
    assert seqs(from_seq=3, to_seq=4, limit=10) == [3, 4]
    assert seqs(from_seq=9) == [9, 10]
    assert seqs(from_seq=11) == []
    assert seqs(from_seq=0, limit=1) == [1]
    assert seqs(from_seq=5, to_seq=4) == []
    assert seqs(limit=0) == []
    assert contents(store.events.read(team, from_seq=4, to_seq=5)) == ["4", "5"]
    assert store.events.read(uuid4()) == []
    with pytest.raises(ValueError, match="limit"):
        store.events.read(team, limit=-1)


def test_read_past_any_number_a_column_holds_finds_nothing_and_does_not_overflow(
    store: StorageBundle,
) -> None:
    team = uuid4()
    store.events.append_many(team, [msg(str(i)) for i in range(1, 4)])
    huge = 10**20  # read from a URL: past a signed 64-bit column
    assert store.events.read(team, from_seq=huge) == []
    assert store.events.read(team, from_seq=MAX_SEQ) == []
    assert [r.seq for r in store.events.read(team, from_seq=2, to_seq=huge)] == [2, 3]
    assert [r.seq for r in store.events.read(team, from_seq=3, limit=huge)] == [3]


def test_read_agrees_with_slicing_for_every_range(store: StorageBundle) -> None:
    team = uuid4()
    store.events.append_many(team, [msg(str(i)) for i in range(1, 8)])
    every = list(range(1, 8))
    for start in range(0, 10):
        for stop in [None, *range(0, 10)]:
            for limit in [None, 0, 1, 3, 20]:
                expected = [s for s in every if s >= start and (stop is None or s <= stop)]
                expected = expected if limit is None else expected[:limit]
                got = [r.seq for r in store.events.read(team, start, stop, limit)]
                assert got == expected, (start, stop, limit)


def test_core_messages_round_trip_to_their_classes(store: StorageBundle) -> None:
    team = uuid4()
    writer, editor = address("@Writer"), address("@Editor")
    request = UserMessage(content="write a haiku", team_id=team, sender=editor, recipient=writer)
    sent = SentMessage(message=request, recipient=writer, sender=editor, team_id=team)
    changed = StateChangedMessage(state=CounterState(count=3, label="drafts"), sender=writer)
    event = EventMessage(event=Progress(step=2, note="outline done"), sender=writer)
    result = ResultMessage(content="an old silent pond", parent_id=request.id, sender=writer)
    originals: list[Message] = [sent, changed, event, result]
    store.events.append_many(team, originals[:2])
    store.events.append(team, event)
    store.events.append(team, result)

    records = store.events.read(team)
    assert [r.seq for r in records] == [1, 2, 3, 4]
    assert corrupt_rows(records) == []
    decoded = [r.require() for r in records]
    expected: list[type[Message]] = [SentMessage, StateChangedMessage, EventMessage, ResultMessage]
    assert [type(m) for m in decoded] == expected
    for record, original in zip(records, originals, strict=True):
        assert record.message is not None
        assert record.message.id == original.id
        assert record.timestamp == original.timestamp
        assert json.loads(record.raw)["__model__"].endswith(type(original).__name__)

    d_sent, d_changed, d_event, d_result = decoded
    assert isinstance(d_sent, SentMessage)
    assert isinstance(d_sent.message, UserMessage)
    assert d_sent.message.content == "write a haiku"
    assert d_sent.message.team_id == team
    assert d_sent.sender == editor and d_sent.recipient == writer
    assert isinstance(d_sent.sender, ActorAddressProxy) and d_sent.sender.name == "@Editor"
    assert isinstance(d_changed, StateChangedMessage)
    assert d_changed.state == CounterState(count=3, label="drafts")
    assert isinstance(d_event, EventMessage)
    assert d_event.event == Progress(step=2, note="outline done")
    assert isinstance(d_result, ResultMessage)
    assert d_result.parent_id == request.id and d_result.content == "an old silent pond"


def test_a_stored_message_is_a_snapshot(store: StorageBundle) -> None:
    team = uuid4()
    message = msg("before")
    store.events.append(team, message)
    message.content = "after"
    assert contents(store.events.read(team)) == ["before"]


# -- corrupt rows --------------------------------------------------------------------------


def test_corrupt_events_are_reported_and_the_rest_loads(backend: Backend) -> None:
    store, team = backend.store, uuid4()
    store.events.append_many(team, [msg(f"m{i}") for i in range(1, 7)])
    unknown = json.dumps({"__model__": "gone.module.Vanished", "content": "x"})
    wrong_kind = json.dumps({"__model__": f"{__name__}.NotAMessage", "value": 1})
    invalid = json.dumps({"__model__": "akgentic.core.messages.message.UserMessage"})
    backend.write_raw_event(team, 2, "{not json")
    backend.write_raw_event(team, 3, unknown)
    backend.write_raw_event(team, 4, wrong_kind)
    backend.write_raw_event(team, 5, invalid)

    records = store.events.read(team)
    assert [r.seq for r in records] == [1, 2, 3, 4, 5, 6]
    assert [r.ok for r in records] == [True, False, False, False, False, True]
    assert contents([records[0], records[5]]) == ["m1", "m6"]
    reasons = {2: "not valid JSON", 3: "gone.module.Vanished", 4: "NotAMessage", 5: "content"}
    for seq, reason in reasons.items():
        record = records[seq - 1]
        assert record.message is None
        assert record.error is not None
        assert str(team) in record.error
        assert f"seq {seq}" in record.error
        assert reason in record.error
        with pytest.raises(CorruptRecordError, match=f"seq {seq}"):
            record.require()
    assert records[1].raw == "{not json" and records[2].raw == unknown

    failures = corrupt_rows(records)
    assert [(f.kind, f.team_id, f.seq) for f in failures] == [
        ("event", team, 2),
        ("event", team, 3),
        ("event", team, 4),
        ("event", team, 5),
    ]
    assert failures[1].raw == unknown and "gone.module.Vanished" in failures[1].reason
    assert [r.seq for r in store.events.read(team, from_seq=2, limit=2)] == [2, 3]
    assert store.events.append(team, msg("m7")) == 7  # the log goes on


def test_corrupt_states_are_reported_and_the_others_load(backend: Backend) -> None:
    store, team = backend.store, uuid4()
    good, bad = uuid4(), uuid4()
    store.states.save_state(team, good, "@Good", CounterState(count=1))
    store.states.save_state(team, bad, "@Bad", CounterState(count=2))
    backend.write_raw_state(team, bad, json.dumps({"__model__": "gone.State", "count": 2}))

    states = store.states.load_states(team)
    assert set(states) == {good, bad}
    assert states[good].require() == CounterState(count=1)
    assert states[bad].state is None
    error = states[bad].error
    assert error is not None
    assert str(team) in error and str(bad) in error and "gone.State" in error
    assert states[bad].agent_name == "@Bad"
    failures = corrupt_rows(states.values())
    assert [(f.kind, f.team_id, f.agent_id, f.seq) for f in failures] == [
        ("state", team, bad, None)
    ]
    with pytest.raises(CorruptRecordError, match=str(bad)):
        states[bad].require()


def test_an_event_with_a_garbled_time_is_reported_and_the_rest_loads(backend: Backend) -> None:
    store, team = backend.store, uuid4()
    store.events.append_many(team, [msg(f"m{i}") for i in range(1, 5)])
    for seq, bad in zip((2, 3), backend.bad_times, strict=True):
        backend.write_raw_time(team, seq, bad)

    records = store.events.read(team)
    assert [r.seq for r in records] == [1, 2, 3, 4]
    assert [r.ok for r in records] == [True, False, False, True]
    assert contents([records[0], records[3]]) == ["m1", "m4"]
    for record in records[1:3]:
        assert record.message is None and record.timestamp is None
        assert record.error is not None
        assert str(team) in record.error and f"seq {record.seq}" in record.error
        assert "time" in record.error
        assert '"m' in record.raw  # the payload is kept as stored
        with pytest.raises(CorruptRecordError, match=f"seq {record.seq}"):
            record.require()
    assert [(f.kind, f.seq) for f in corrupt_rows(records)] == [("event", 2), ("event", 3)]
    assert store.events.append(team, msg("m5")) == 5  # the log goes on


def test_an_event_whose_payload_is_not_utf8_is_reported_and_the_rest_loads(
    backend: Backend,
) -> None:
    if not backend.holds_bytes:
        pytest.skip("a UTF8 Postgres database refuses text that is not UTF-8")
    store, team = backend.store, uuid4()
    store.events.append_many(team, [msg(f"m{i}") for i in range(1, 4)])
    backend.write_raw_event(team, 2, b'{"content":"caf\xe9 \xff"}')

    records = store.events.read(team)
    assert [r.ok for r in records] == [True, False, True]
    assert contents([records[0], records[2]]) == ["m1", "m3"]
    bad = records[1]
    assert bad.message is None and bad.error is not None
    assert str(team) in bad.error and "seq 2" in bad.error and "UTF-8" in bad.error
    assert bad.raw == '{"content":"caf\\xe9 \\xff"}'  # the bytes, shown escaped
    assert [f.seq for f in corrupt_rows(records)] == [2]


def test_a_corrupt_team_is_reported_and_the_others_are_listed(backend: Backend) -> None:
    store = backend.store
    good = store.teams.create("good", card={"k": 1}).team_id
    garbled = store.teams.create("garbled status").team_id
    broken = store.teams.create("broken card", card={"k": 2}).team_id
    backend.write_raw_team(garbled, "status", "garbage")
    backend.write_raw_team(broken, "card", "{not json")

    listed = store.teams.list()
    assert [t.team_id for t in listed] == [good, garbled, broken]
    assert [t.ok for t in listed] == [True, False, False]
    assert listed[0].card == {"k": 1} and listed[0].require() is listed[0]
    status_error, card_error = listed[1].error, listed[2].error
    assert status_error is not None and card_error is not None
    assert str(garbled) in status_error and "'garbage'" in status_error
    assert listed[1].status is None and listed[1].name == "garbled status"
    assert str(broken) in card_error and "card" in card_error and "not valid JSON" in card_error
    assert listed[2].status is TeamStatus.RUNNING and listed[2].card == {}
    for team in (garbled, broken):
        record = store.teams.get(team)
        assert record is not None and not record.ok
        with pytest.raises(CorruptRecordError, match=str(team)):
            record.require()
    assert [(f.kind, f.team_id) for f in corrupt_rows(listed)] == [
        ("team", garbled),
        ("team", broken),
    ]
    assert [t.team_id for t in store.teams.list(TeamStatus.RUNNING)] == [good, broken]

    # nothing is lost, and a corrupt team can still be stopped, deleted, purged
    repaired = store.teams.set_status(garbled, TeamStatus.STOPPED)
    assert repaired.ok and repaired.status is TeamStatus.STOPPED
    deleted = store.teams.delete(broken)
    assert deleted.status is TeamStatus.DELETED and not deleted.ok
    assert store.teams.purge(broken) is True
    assert [t.team_id for t in store.teams.list()] == [good, garbled]


def test_a_team_name_that_is_not_utf8_is_reported(backend: Backend) -> None:
    if not backend.holds_bytes:
        pytest.skip("a UTF8 Postgres database refuses text that is not UTF-8")
    store = backend.store
    team = store.teams.create("before").team_id
    other = store.teams.create("other").team_id
    backend.write_raw_team(team, "name", b"caf\xe9")
    backend.write_raw_team(other, "card", b'{"k":"\xff"}')
    first, second = store.teams.list()
    assert first.name == "caf\\xe9" and first.error is not None and "UTF-8" in first.error
    assert str(team) in first.error
    assert second.name == "other" and second.error is not None and "card" in second.error


# -- states --------------------------------------------------------------------------------


def test_the_latest_state_of_each_agent_wins(store: StorageBundle) -> None:
    team, other_team = uuid4(), uuid4()
    a, b = uuid4(), uuid4()
    assert store.states.load_states(team) == {}
    store.states.save_state(team, a, "@A", CounterState(count=1))
    store.states.save_state(team, b, "@B", CounterState(count=10))
    store.states.save_state(team, a, "@A2", CounterState(count=2, label="second"))
    store.states.save_state(other_team, a, "@A", CounterState(count=99))

    states = store.states.load_states(team)
    assert set(states) == {a, b}
    assert states[a].require() == CounterState(count=2, label="second")
    assert states[a].agent_name == "@A2"
    assert states[a].team_id == team and states[a].agent_id == a
    assert states[a].updated_at >= states[b].updated_at
    assert states[a].updated_at.tzinfo is not None
    assert states[b].require() == CounterState(count=10)
    assert store.states.load_states(other_team)[a].require() == CounterState(count=99)


# -- working memory ------------------------------------------------------------------------


def test_working_memory_append_replace_clear(store: StorageBundle) -> None:
    team, agent, other = uuid4(), uuid4(), uuid4()
    wm = store.working_memory
    assert wm.get(team, agent) == []
    wm.append(team, agent, [{"role": "system", "content": "be brief"}])
    wm.append(team, agent, [{"role": "user", "content": "hi"}, {"role": "ai", "n": [1, 2.5]}])
    wm.append(team, agent, [])
    wm.append(team, other, [{"role": "user", "content": "other agent"}])
    assert wm.get(team, agent) == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {"role": "ai", "n": [1, 2.5]},
    ]

    summary = [{"role": "system", "content": "summary: said hi"}]
    wm.replace(team, agent, summary)  # compaction
    assert wm.get(team, agent) == summary
    wm.append(team, agent, [{"role": "user", "content": "again", "nested": {"ok": None}}])
    assert [item["content"] for item in wm.get(team, agent)] == ["summary: said hi", "again"]

    wm.clear(team, agent)
    assert wm.get(team, agent) == []
    wm.append(team, agent, [{"k": 1}])
    assert wm.get(team, agent) == [{"k": 1}]
    wm.replace(team, agent, [])
    assert wm.get(team, agent) == []
    assert wm.get(team, other) == [{"role": "user", "content": "other agent"}]
    assert wm.get(uuid4(), agent) == []


def test_working_memory_refuses_what_is_not_json_objects(store: StorageBundle) -> None:
    team, agent = uuid4(), uuid4()
    wm = store.working_memory
    wm.append(team, agent, [{"kept": True}])
    with pytest.raises(TypeError, match=r"items\[1\]"):
        wm.append(team, agent, [{"ok": 1}, "not a dict"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="JSON-compatible"):
        wm.replace(team, agent, [{"when": datetime.now(UTC)}])
    with pytest.raises(TypeError, match="list of dicts"):
        wm.append(team, agent, {"role": "user"})  # type: ignore[arg-type]
    assert wm.get(team, agent) == [{"kept": True}]  # nothing half-written


def test_working_memory_items_are_snapshots(store: StorageBundle) -> None:
    team, agent = uuid4(), uuid4()
    item: dict[str, Any] = {"content": "before", "parts": [1]}
    store.working_memory.append(team, agent, [item])
    item["content"] = "after"
    item["parts"].append(2)
    got = store.working_memory.get(team, agent)
    assert got == [{"content": "before", "parts": [1]}]
    got[0]["content"] = "changed by the caller"
    assert store.working_memory.get(team, agent)[0]["content"] == "before"


# -- skills --------------------------------------------------------------------------------


def test_skills_upsert_get_list_remove(store: StorageBundle) -> None:
    skills = store.skills
    assert skills.list() == [] and skills.get("lint") is None
    before = datetime.now(UTC) - timedelta(seconds=1)
    stored = skills.upsert(
        SkillRecord(
            name="lint",
            description="Run the linter",
            content="# Lint\nruff check",
            source="skills/lint/SKILL.md",
            updated_at=datetime(2000, 1, 1, tzinfo=UTC),
        )
    )
    assert stored.updated_at > before  # stamped by the store
    skills.upsert(SkillRecord(name="deploy", description="Ship it", content="...", source="user"))
    assert [s.name for s in skills.list()] == ["deploy", "lint"]
    got = skills.get("lint")
    assert got is not None
    assert (got.description, got.content, got.source) == (
        "Run the linter",
        "# Lint\nruff check",
        "skills/lint/SKILL.md",
    )
    assert got.updated_at == stored.updated_at

    replaced = skills.upsert(SkillRecord(name="lint", description="Lint v2", content="ruff"))
    got = skills.get("lint")
    assert got is not None and got.description == "Lint v2" and got.source == ""
    assert got.updated_at == replaced.updated_at >= stored.updated_at
    assert len(skills.list()) == 2

    assert skills.remove("lint") is True
    assert skills.remove("lint") is False
    assert skills.get("lint") is None
    assert [s.name for s in skills.list()] == ["deploy"]


def test_a_skills_toolset_is_kept_through_upsert_and_replaced_with_it(
    store: StorageBundle,
) -> None:
    skills = store.skills
    skills.upsert(SkillRecord(name="films", description="Films.", toolset="media"))
    skills.upsert(SkillRecord(name="lint", description="Lint."))
    assert [(s.name, s.toolset) for s in skills.list()] == [("films", "media"), ("lint", None)]
    got = skills.get("films")
    assert got is not None and got.toolset == "media"
    skills.upsert(SkillRecord(name="films", description="Films.", toolset="video"))
    got = skills.get("films")
    assert got is not None and got.toolset == "video"
    skills.upsert(SkillRecord(name="films", description="Films."))  # the link dropped
    got = skills.get("films")
    assert got is not None and got.toolset is None


def test_a_skill_needs_a_name() -> None:
    with pytest.raises(ValueError, match="name"):
        SkillRecord(name="")
    with pytest.raises(ValueError, match="bodyy"):
        SkillRecord(name="x", bodyy="typo")  # type: ignore[call-arg]


# -- teams ---------------------------------------------------------------------------------


def test_team_records_and_status_transitions(store: StorageBundle) -> None:
    teams = store.teams
    card = {"name": "haiku", "members": [{"role": "Writer"}], "__model__": "x.TeamCard"}
    a = teams.create("haiku", card=card, metadata={"owner": "ann"})
    assert a.status is TeamStatus.RUNNING and a.name == "haiku"
    assert a.card == card and a.metadata == {"owner": "ann"}
    assert a.created_at == a.updated_at and a.created_at.tzinfo is not None
    fixed = uuid4()
    b = teams.create("review", team_id=fixed)
    assert b.team_id == fixed and b.card == {} and b.metadata == {}
    assert teams.get(a.team_id) == a
    assert teams.get(uuid4()) is None
    with pytest.raises(TeamExistsError, match=str(fixed)):
        teams.create("again", team_id=fixed)

    stopped = teams.set_status(a.team_id, TeamStatus.STOPPED)
    assert stopped.status is TeamStatus.STOPPED and stopped.updated_at >= a.updated_at
    assert stopped.created_at == a.created_at
    assert [t.team_id for t in teams.list()] == [a.team_id, b.team_id]
    assert [t.team_id for t in teams.list(TeamStatus.STOPPED)] == [a.team_id]
    assert [t.team_id for t in teams.list(TeamStatus.RUNNING)] == [b.team_id]
    assert teams.set_status(a.team_id, TeamStatus.RUNNING).status is TeamStatus.RUNNING

    deleted = teams.delete(a.team_id)
    assert deleted.status is TeamStatus.DELETED
    assert teams.get(a.team_id) == deleted  # still there, marked
    assert teams.delete(a.team_id).status is TeamStatus.DELETED  # idempotent
    for status in (TeamStatus.RUNNING, TeamStatus.STOPPED):
        with pytest.raises(InvalidTransitionError, match="DELETED"):
            teams.set_status(a.team_id, status)
    assert [t.team_id for t in teams.list(TeamStatus.DELETED)] == [a.team_id]

    missing = uuid4()
    calls: list[Callable[[], object]] = [
        lambda: teams.set_status(missing, TeamStatus.STOPPED),
        lambda: teams.delete(missing),
        lambda: teams.update(missing, name="x"),
    ]
    for call in calls:
        with pytest.raises(TeamNotFoundError, match=str(missing)):
            call()


def test_a_deleted_team_keeps_its_fields(store: StorageBundle) -> None:
    team = store.teams.create("kept", card={"v": 1}, metadata={"owner": "ann"})
    deleted = store.teams.delete(team.team_id)
    changes: list[dict[str, Any]] = [{"name": "renamed"}, {"card": {"v": 2}}, {"metadata": {}}]
    for change in changes:
        with pytest.raises(InvalidTransitionError, match="DELETED and cannot be changed"):
            store.teams.update(team.team_id, **change)
    assert store.teams.get(team.team_id) == deleted


def test_team_update_replaces_given_fields(store: StorageBundle) -> None:
    team = store.teams.create("draft", card={"v": 1}, metadata={"owner": "ann"})
    updated = store.teams.update(team.team_id, card={"v": 2, "agents": ["@A"]})
    assert updated.card == {"v": 2, "agents": ["@A"]}
    assert updated.name == "draft" and updated.metadata == {"owner": "ann"}
    renamed = store.teams.update(team.team_id, name="final", metadata={})
    assert (renamed.name, renamed.card, renamed.metadata) == ("final", updated.card, {})
    assert store.teams.get(team.team_id) == renamed
    with pytest.raises(TypeError, match="card"):
        store.teams.update(team.team_id, card={"when": datetime.now(UTC)})
    with pytest.raises(TypeError, match="metadata"):
        store.teams.create("bad", metadata=["not", "a", "dict"])  # type: ignore[arg-type]


def test_a_team_name_with_control_characters_is_refused(store: StorageBundle) -> None:
    # a name is printed on terminals (teams list, show): ESC, BEL, CR, LF... would let whoever
    # names a team retitle a terminal or forge a row
    for name in ("evil\x1b]0;pwned\x07", "two\nlines", "tab\t", "del\x7f", "c1\x85"):
        with pytest.raises(ValueError, match="may not contain control characters"):
            store.teams.create(name)
    assert store.teams.list() == []
    team = store.teams.create("plain")
    with pytest.raises(ValueError, match=r"'\\x1b' \(U\+001B\) at character 2"):
        store.teams.update(team.team_id, name="a\x1b[31mred")
    assert store.teams.get(team.team_id) == team
    assert store.teams.update(team.team_id, name="Équipe «β» 研究").name == "Équipe «β» 研究"


def test_a_team_name_that_breaks_a_line_reorders_text_or_is_blank_is_refused(
    store: StorageBundle,
) -> None:
    # a line separator breaks the row as a newline does; a bidi override makes it read
    # other than it is; spaces alone name nothing a person can tell apart
    refused = {
        "two\u2028lines": "line or paragraph separators: '\\u2028' (U+2028) at character 4",
        "para\u2029": "line or paragraph separators",
        "invoice\u202egpj.exe": "bidirectional text controls: '\\u202e' (U+202E)",
        "\u2066isolated\u2069": "bidirectional text controls",
        "   ": "may not be blank",
        "\u3000": "may not be blank",
    }
    for name, words in refused.items():
        with pytest.raises(ValueError, match=re.escape(words)):
            store.teams.create(name)
    assert store.teams.list() == []
    team = store.teams.create("plain")
    with pytest.raises(ValueError, match="may not be blank"):
        store.teams.update(team.team_id, name=" ")
    assert store.teams.get(team.team_id) == team
    assert store.teams.update(team.team_id, name="שלום team").name == "שלום team"


def test_purge_removes_the_team_and_everything_kept_for_it(store: StorageBundle) -> None:
    gone = store.teams.create("gone").team_id
    kept = store.teams.create("kept").team_id
    agent = uuid4()
    for team in (gone, kept):
        store.events.append_many(team, [msg("1"), msg("2")])
        store.states.save_state(team, agent, "@A", CounterState(count=1))
        store.working_memory.append(team, agent, [{"role": "user"}])

    assert store.teams.purge(gone) is True
    assert store.teams.get(gone) is None
    assert store.events.read(gone) == [] and store.events.last_seq(gone) == 0
    assert store.states.load_states(gone) == {}
    assert store.working_memory.get(gone, agent) == []
    assert store.teams.purge(gone) is False
    assert store.events.append(gone, msg("new life")) == 1  # numbering starts over

    assert store.teams.get(kept) is not None
    assert contents(store.events.read(kept)) == ["1", "2"]
    assert set(store.states.load_states(kept)) == {agent}
    assert store.working_memory.get(kept, agent) == [{"role": "user"}]

    orphan = uuid4()  # events without a team record are purged too
    store.events.append(orphan, msg("x"))
    assert store.teams.purge(orphan) is True
    assert store.events.last_seq(orphan) == 0


# -- lifecycle -----------------------------------------------------------------------------


def test_reopening_keeps_everything(backend: Backend) -> None:
    if backend.open_again is None:
        pytest.skip("the memory backend does not outlive its object")
    store = backend.store
    team = store.teams.create("durable", card={"k": "v"})
    store.teams.set_status(team.team_id, TeamStatus.STOPPED)
    agent = uuid4()
    store.events.append_many(team.team_id, [msg("one"), msg("two")])
    store.states.save_state(team.team_id, agent, "@A", CounterState(count=7))
    store.working_memory.append(team.team_id, agent, [{"role": "user", "content": "hi"}])
    store.skills.upsert(SkillRecord(name="s", content="body"))
    store.close()

    again = backend.another()
    got = again.teams.get(team.team_id)
    assert got is not None and got.status is TeamStatus.STOPPED and got.card == {"k": "v"}
    assert contents(again.events.read(team.team_id)) == ["one", "two"]
    assert again.events.append(team.team_id, msg("three")) == 3
    assert again.states.load_states(team.team_id)[agent].require() == CounterState(count=7)
    assert again.working_memory.get(team.team_id, agent) == [{"role": "user", "content": "hi"}]
    skill = again.skills.get("s")
    assert skill is not None and skill.content == "body"


def test_a_closed_store_refuses_calls(store: StorageBundle) -> None:
    team = uuid4()
    store.events.append(team, msg("x"))
    store.close()
    store.close()  # idempotent
    for call in (
        lambda: store.events.append(team, msg("y")),
        lambda: store.events.read(team),
        lambda: store.teams.list(),
        lambda: store.states.load_states(team),
        lambda: store.working_memory.get(team, team),
        lambda: store.skills.list(),
    ):
        with pytest.raises(StorageClosedError, match="closed"):
            call()

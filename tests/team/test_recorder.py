"""The EventRecorder's writer: commits gather into groups while records keep coming,
yet nobody who waits for a commit is kept waiting, and a stop writes everything."""

from __future__ import annotations

import logging
import threading
from typing import Any
from uuid import uuid4

import pytest

from akgentic.core import (
    ActorAddress,
    ActorSystem,
    Akgent,
    BaseConfig,
    BaseState,
    ErrorMessage,
    EventMessage,
    Message,
    Orchestrator,
    ProcessedMessage,
    ReceivedMessage,
    ResultMessage,
    SentMessage,
    UserMessage,
)
from akgentic.llm import ContextReplacedEvent
from akgentic.storage import Fence, LeaseHolder, LeaseLostError, TeamStatus, open_storage
from akgentic.team import EventRecorder
from akgentic.team import recorder as recorder_module


@pytest.fixture
def slow_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A gap no test would wait out: a commit inside it proves something cut it short."""
    monkeypatch.setattr(recorder_module, "COMMIT_GAP", 600.0)


@pytest.mark.usefixtures("slow_gap")
def test_commits_gather_yet_a_caller_waiting_for_one_is_served_at_once(
    storage_url: str,
) -> None:
    storage = open_storage(storage_url)
    team = uuid4()
    recorder = EventRecorder(storage, team)
    first, second, third = (UserMessage(content=str(i), team_id=team) for i in range(3))
    recorder.on_message(first)
    recorder.flush()
    assert recorder.wait_seq(1, 30)  # after a quiet spell: committed at once
    recorder.on_message(second)
    recorder.flush()
    assert not recorder.wait_seq(2, 0.3)  # within the gap: the group gathers
    assert storage.events.last_seq(team) == 1
    assert recorder.wait_committed(second.id, 30) == 2  # a caller waits: written now
    recorder.on_message(third)
    recorder.flush()
    assert recorder.written(30)  # so does one that waits for everything
    assert [r.require() for r in storage.events.read(team)] == [first, second, third]
    recorder.on_stop(team)


@pytest.mark.usefixtures("slow_gap")
def test_a_stop_writes_what_is_gathering_without_waiting_out_the_gap(storage_url: str) -> None:
    storage = open_storage(storage_url)
    team = uuid4()
    recorder = EventRecorder(storage, team)
    messages = [UserMessage(content=str(i), team_id=team) for i in range(5)]
    recorder.on_message(messages[0])
    recorder.flush()
    assert recorder.wait_seq(1, 30)
    for message in messages[1:]:
        recorder.on_message(message)
        recorder.flush()
    recorder.on_stop(team)  # returns once everything handed on is committed
    assert [r.require() for r in storage.events.read(team)] == messages


class Echo(Akgent[BaseConfig, BaseState]):
    def receiveMsg_UserMessage(self, msg: UserMessage, sender: ActorAddress | None) -> None:
        assert sender is not None
        self.send(sender, ResultMessage(content=msg.content))


class Odd(Message):
    """A message the store cannot write: a plain object in an Any field."""

    payload: Any = None


def _recorded_team(system: ActorSystem, storage_url: str) -> tuple[Any, EventRecorder, Any, Any]:
    """A team recorded into ``storage_url``, with one member, ``@Echo``: the
    orchestrator, its recorder, the store and the member."""
    orchestrator = system.createActor(Orchestrator)
    team = orchestrator.team_id
    assert team is not None
    storage = open_storage(storage_url)
    recorder = EventRecorder(storage, team)
    system.proxy_ask(orchestrator, Orchestrator, timeout=30).subscribe(recorder)
    echo = system.createActor(Echo, config=BaseConfig(name="@Echo"), team_id=team)
    return orchestrator, recorder, storage, echo


def _settle(system: ActorSystem, orchestrator: Any, recorder: EventRecorder, *members: Any) -> None:
    for member in members:  # their inboxes are FIFO: earlier handlers have finished
        system.proxy_ask(member, Akgent, timeout=30).config  # noqa: B018
    system.proxy_ask(orchestrator, Orchestrator, timeout=30).get_team()  # drains the queue
    assert recorder.written(30)


def test_a_team_s_messages_are_stored_as_sends_and_receipts_in_order(
    system: ActorSystem, storage_url: str
) -> None:
    """What a busy team hands its recorder is packed, and the log reads back every send
    and both receipts of every message, in the order they happened, with the sender's
    and the receiver's addresses, and the messages themselves equal to what was sent."""
    orchestrator, recorder, storage, echo = _recorded_team(system, storage_url)
    team = orchestrator.team_id
    asked = [UserMessage(content=f"m{i}") for i in range(300)]
    with system.private() as context:
        for message in asked:
            context.tell(echo, message)
        replies = [context.listen(30) for _ in asked]
    assert [r.content for r in replies] == [m.content for m in asked]  # type: ignore[union-attr]
    _settle(system, orchestrator, recorder, echo)
    records = storage.events.read(team)
    assert [r.seq for r in records] == list(range(1, len(records) + 1))
    assert all(r.error is None for r in records)
    messages = [r.require() for r in records]
    sent = [m for m in messages if isinstance(m, SentMessage)]
    to_echo = [m for m in sent if m.recipient is not None and m.recipient.name == "@Echo"]
    assert [m.message for m in to_echo] == asked
    assert all(isinstance(m.message.sender, ActorAddress) for m in to_echo)
    replies_stored = [m.message for m in sent if isinstance(m.message, ResultMessage)]
    assert [m.content for m in replies_stored] == [m.content for m in asked]
    assert all(m.sender is not None and m.sender.name == "@Echo" for m in replies_stored)
    for message in asked:  # each message: sent, then received, then processed by @Echo
        steps = [
            type(m)
            for m in messages
            if (isinstance(m, SentMessage) and m.message.id == message.id)
            or (isinstance(m, ReceivedMessage | ProcessedMessage) and m.message_id == message.id)
        ]
        assert steps == [SentMessage, ReceivedMessage, ProcessedMessage]
    receipt = next(m for m in messages if isinstance(m, ReceivedMessage))
    assert receipt.sender is not None and receipt.sender.name == "@Echo"
    again = [r.require() for r in storage.events.read(team)]
    assert [m.id for m in again] == [m.id for m in messages]  # read twice: the same ids
    assert len({m.id for m in messages}) == len(messages)


def test_a_caller_waiting_on_a_message_gets_its_own_number(
    system: ActorSystem, storage_url: str
) -> None:
    orchestrator, recorder, storage, echo = _recorded_team(system, storage_url)
    team = orchestrator.team_id
    asked = [UserMessage(content=f"m{i}") for i in range(50)]
    with system.private() as context:
        for message in asked:
            context.tell(echo, message)
        for _ in asked:
            context.listen(30)
    for message in (asked[0], asked[17], asked[-1]):
        seq = recorder.wait_committed(message.id, 30)
        assert seq is not None
        (record,) = storage.events.read(team, seq, seq)
        stored = record.require()
        assert isinstance(stored, SentMessage) and stored.message.id == message.id
    assert recorder.wait_committed(uuid4(), 0.2) is None  # never sent: not found


def test_a_message_the_store_cannot_write_is_reported_in_its_place(
    system: ActorSystem, storage_url: str
) -> None:
    """One bad message in a batch loses nothing else: the batch is written record by
    record, the bad send replaced by an error naming it."""
    orchestrator, recorder, storage, echo = _recorded_team(system, storage_url)
    team = orchestrator.team_id
    with system.private() as context:
        context.tell(echo, UserMessage(content="before"))
        context.tell(echo, Odd(payload=object()))
        context.tell(echo, UserMessage(content="after"))
        assert context.listen(30) is not None and context.listen(30) is not None
    _settle(system, orchestrator, recorder, echo)
    messages = [r.require() for r in storage.events.read(team)]
    contents = [
        m.message.content
        for m in messages
        if isinstance(m, SentMessage) and isinstance(m.message, UserMessage | ResultMessage)
    ]
    assert sorted(contents) == ["after", "after", "before", "before"]
    errors = [m for m in messages if isinstance(m, ErrorMessage)]
    assert any(
        "a SentMessage could not be stored" in str(e.content)
        and "builtins.object" in str(e.content)
        for e in errors
    )


def test_a_failed_commit_of_rows_and_packs_together_writes_each_event_once(
    system: ActorSystem, storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group holding built messages (rows) and packs is one transaction: when it fails
    and is retried, nothing of it was written the first time, so nothing twice."""
    orchestrator, recorder, storage, echo = _recorded_team(system, storage_url)
    team = orchestrator.team_id
    _settle(system, orchestrator, recorder, echo)
    before = storage.events.last_seq(team)
    recorder.hold()  # what arrives now waits in memory: one group at the release
    note = UserMessage(content="handed over as a built message", team_id=team)
    recorder.on_message(note)
    with system.private() as context:
        context.tell(echo, UserMessage(content="ping"))
        assert context.listen(30) is not None
    _settle(system, orchestrator, recorder, echo)
    real = storage.events.append_packs
    calls = {"n": 0}

    def fails_once(team_id: Any, packs: Any, states: Any = ()) -> list[int]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError("disk full (simulated)")
        return real(team_id, packs, states)

    monkeypatch.setattr(storage.events, "append_packs", fails_once)
    recorder.release()  # returns once written: after the failure and the retry
    assert calls["n"] == 2
    records = storage.events.read(team, before + 1)
    messages = [r.require() for r in records]
    assert [r.seq for r in records] == list(range(before + 1, before + 1 + len(records)))
    assert [m for m in messages if isinstance(m, UserMessage)] == [note]
    sent = [type(m.message) for m in messages if isinstance(m, SentMessage)]
    assert sent == [UserMessage, ResultMessage]  # the ping and its answer, once each
    assert len({m.id for m in messages}) == len(messages)


def test_a_group_the_store_refuses_for_a_lost_lease_is_not_written_nor_any_after(
    storage_url: str,
) -> None:
    """The team's lease is taken over between the recorder's last commit and its next
    (as while this process was paused): the store refuses that group whole, the recorder
    is told once (``on_lost``) and writes nothing more, not even once the lease is free."""
    storage = open_storage(storage_url)
    team = uuid4()
    resource = f"team/{team}"
    storage.leases.acquire(resource, LeaseHolder(owner="one", host="box", pid=1), 60)
    lost: list[LeaseLostError] = []
    recorder = EventRecorder(storage, team, Fence(resource=resource, owner="one"), lost.append)
    first, second, third = (UserMessage(content=str(i), team_id=team) for i in range(3))
    recorder.on_message(first)
    recorder.flush()
    assert recorder.wait_seq(1, 30)  # held: written
    storage.leases.acquire(
        resource, LeaseHolder(owner="two", host="box", pid=2), 60, take_over="one"
    )
    recorder.on_message(second)
    recorder.flush()
    assert recorder.written(30)  # handled: refused, not kept for a retry
    [refused] = lost
    assert refused.lease is not None and refused.lease.holder.owner == "two"
    storage.leases.release(resource, "two")
    recorder.on_message(third)
    recorder.flush()
    assert recorder.written(30)
    recorder.on_stop(team)
    assert [r.require() for r in storage.events.read(team)] == [first]
    assert len(lost) == 1 and recorder.last_seq == 1


def test_a_memory_change_written_apart_after_a_take_over_is_not_written(
    storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group the store would not take with its working memory is committed without it,
    and the memory is written apart after. The lease is taken over between the two (as
    while this process was paused): the memory change is refused under the same fence,
    the recorder is told once (``on_lost``) and writes nothing more."""
    storage = open_storage(storage_url)
    team, agent = uuid4(), uuid4()
    resource = f"team/{team}"
    storage.leases.acquire(resource, LeaseHolder(owner="one", host="box", pid=1), 60)
    storage.working_memory.replace(team, agent, [{"kept": 1}])
    real = storage.events.append_encoded

    def memory_refused_then_taken_over(
        team_id: Any, events: Any, states: Any = (), memory: Any = (), fence: Any = None
    ) -> list[int]:
        if memory:
            raise OSError("working memory table unavailable (simulated)")
        seqs = real(team_id, events, states, fence=fence)
        storage.leases.acquire(
            resource, LeaseHolder(owner="two", host="box", pid=2), 60, take_over="one"
        )
        return seqs

    monkeypatch.setattr(storage.events, "append_encoded", memory_refused_then_taken_over)
    lost: list[LeaseLostError] = []
    recorder = EventRecorder(storage, team, Fence(resource=resource, owner="one"), lost.append)
    compacted = EventMessage(
        event=ContextReplacedEvent(agent="@A", messages_json='[{"compacted": 2}]'),
        sender=ActorAddress(agent_id=agent, name="@A"),
        team_id=team,
    )
    recorder.on_message(compacted)
    recorder.flush()
    assert recorder.written(30)
    [refused] = lost
    assert refused.lease is not None and refused.lease.holder.owner == "two"
    assert storage.working_memory.get(team, agent) == [{"kept": 1}]  # not the old holder's
    assert [r.require().id for r in storage.events.read(team)] == [compacted.id]
    assert recorder.last_seq == 1  # the log was this process's when it was committed
    recorder.on_message(UserMessage(content="after", team_id=team))
    recorder.flush()
    assert recorder.written(30)
    recorder.on_stop(team)
    assert storage.events.last_seq(team) == 1 and len(lost) == 1


def test_a_graceful_stop_after_a_take_over_does_not_mark_the_new_holder_s_team_stopped(
    storage_url: str,
) -> None:
    """A stop requested, then the process paused and the team taken over and run again
    elsewhere: with nothing left to commit, the stop's STOPPED mark is what the old
    holder would write last. It is refused under the fence (the new holder's watcher
    would stop its team), and the recorder is told the lease was lost."""
    storage = open_storage(storage_url)
    team = storage.teams.create("taken").team_id
    resource = f"team/{team}"
    storage.leases.acquire(resource, LeaseHolder(owner="one", host="box", pid=1), 60)
    lost: list[LeaseLostError] = []
    recorder = EventRecorder(storage, team, Fence(resource=resource, owner="one"), lost.append)
    recorder.on_stop_request(team)
    storage.leases.acquire(
        resource, LeaseHolder(owner="two", host="box", pid=2), 60, take_over="one"
    )
    recorder.on_stop(team)
    assert storage.teams.get(team).status == TeamStatus.RUNNING  # type: ignore[union-attr]
    [refused] = lost
    assert refused.lease is not None and refused.lease.holder.owner == "two"


def test_an_event_log_that_cannot_check_a_lease_is_refused_at_the_start(
    storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log whose appends take no ``fence`` would refuse every commit of a leased team
    with a ``TypeError``, retried forever: the recorder says so when it is made."""
    storage = open_storage(storage_url)
    real = storage.events.append_packs

    def no_fence(team_id: Any, packs: Any, states: Any = (), memory: Any = ()) -> Any:
        return real(team_id, packs, states, memory)

    monkeypatch.setattr(storage.events, "append_packs", no_fence)
    fence = Fence(resource="team/x", owner="one")
    with pytest.raises(TypeError, match=r"append_packs takes no fence=: the stores of a team"):
        EventRecorder(storage, uuid4(), fence)
    EventRecorder(storage, uuid4())  # unfenced, the same log is fine


@pytest.mark.parametrize(
    ("part", "name"),
    [("working_memory", "replace"), ("working_memory", "append"), ("teams", "set_status")],
)
def test_a_store_beside_the_log_that_cannot_check_a_lease_is_refused_at_the_start(
    storage_url: str, monkeypatch: pytest.MonkeyPatch, part: str, name: str
) -> None:
    """The working memory a group could not take is written apart, and a graceful stop
    marks the team STOPPED, both under the fence: a store whose method takes no
    ``fence`` would drop the memory change or fail the stop with a ``TypeError``."""
    storage = open_storage(storage_url)

    def no_fence(team_id: Any, *args: Any) -> None:
        raise AssertionError("not called")

    monkeypatch.setattr(getattr(storage, part), name, no_fence)
    with pytest.raises(TypeError, match=rf"\.{name} takes no fence=: the stores of a team"):
        EventRecorder(storage, uuid4(), Fence(resource="team/x", owner="one"))
    EventRecorder(storage, uuid4())


@pytest.mark.usefixtures("slow_gap")
def test_a_stop_whose_commit_fails_once_tries_again_and_loses_nothing(
    storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store fails a commit as the team stops (a Postgres connection dropped, a disk
    full for a moment): the stop's records are kept and tried again, as while running —
    not dropped because the recorder is closing."""
    storage = open_storage(storage_url)
    team = uuid4()
    recorder = EventRecorder(storage, team)
    messages = [UserMessage(content=str(i), team_id=team) for i in range(3)]
    real = storage.events.append_encoded
    calls = {"n": 0}

    def fails_once(*args: Any, **kwargs: Any) -> list[int]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError("connection dropped (simulated)")
        return real(*args, **kwargs)

    monkeypatch.setattr(storage.events, "append_encoded", fails_once)
    for message in messages:
        recorder.on_message(message)
    recorder.on_stop(team)  # the first commit is the stop's, and it fails
    assert calls["n"] == 2
    assert [r.require() for r in storage.events.read(team)] == messages


def test_a_store_down_is_not_said_to_refuse_the_working_memory(
    storage_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A group with a working-memory change fails because the store is down (a disk full,
    a dropped connection), with its memory and without: nothing was committed, so the
    user is not told the log was committed without its memory — only that the group is
    kept; the next try commits it whole, memory with it."""
    storage = open_storage(storage_url)
    team, agent = uuid4(), uuid4()
    recorder = EventRecorder(storage, team)
    compacted = EventMessage(
        event=ContextReplacedEvent(agent="@A", messages_json='[{"compacted": 2}]'),
        sender=ActorAddress(agent_id=agent, name="@A"),
        team_id=team,
    )
    real = storage.events.append_encoded
    calls = {"n": 0}

    def down_twice(*args: Any, **kwargs: Any) -> list[int]:
        calls["n"] += 1
        if calls["n"] <= 2:  # with its memory, then without: the store is down
            raise OSError("database or disk is full (simulated)")
        return real(*args, **kwargs)

    monkeypatch.setattr(storage.events, "append_encoded", down_twice)
    with caplog.at_level(logging.WARNING, "akgentic.team"):
        recorder.on_message(compacted)
        recorder.flush()
        assert recorder.written(30)
    assert calls["n"] == 3
    assert "committed without it" not in caplog.text
    assert "it is kept" in caplog.text
    assert [r.require() for r in storage.events.read(team)] == [compacted]
    assert storage.working_memory.get(team, agent) == [{"compacted": 2}]
    recorder.on_stop(team)


def test_a_stop_the_store_cannot_mark_says_so_in_one_line_and_raises_nothing(
    storage_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The log is committed but the STOPPED mark fails (the disk filled up between): the
    stop goes on, the team stays RUNNING in storage — a resume treats it as a crash —
    and one ERROR line says so, naming the store's error (not the subscriber's repr)."""
    storage = open_storage(storage_url)
    team = storage.teams.create("unmarked").team_id
    recorder = EventRecorder(storage, team)
    message = UserMessage(content="kept", team_id=team)
    recorder.on_message(message)
    recorder.on_stop_request(team)

    def disk_full(*args: Any, **kwargs: Any) -> None:
        raise OSError("database or disk is full (simulated)")

    monkeypatch.setattr(storage.teams, "set_status", disk_full)
    with caplog.at_level(logging.ERROR, "akgentic.team"):
        recorder.on_stop(team)
    assert [r.require() for r in storage.events.read(team)] == [message]
    assert storage.teams.get(team).status == TeamStatus.RUNNING  # type: ignore[union-attr]
    [line] = [r.getMessage() for r in caplog.records]
    assert "not marked STOPPED (OSError: database or disk is full (simulated))" in line
    assert "as after a crash" in line


def test_a_stop_the_store_keeps_refusing_says_what_it_waits_for_then_what_was_lost(
    storage_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The store refuses every write to the log (a disk full) as the team stops: a line
    says the stop waits for the records not yet saved (counted meanwhile: what ending the
    process at once would lose), and — once it gave up — one says how many were lost,
    why, what a resume then finds and what to do first. The team is not marked STOPPED,
    though its status still takes writes: its log lacks its end, and its resume must say
    it did not stop cleanly."""
    storage = open_storage(storage_url)
    team = storage.teams.create("losing").team_id
    recorder = EventRecorder(storage, team)
    recorder.on_stop_request(team)
    refused = threading.Event()  # the writer said the refusal: it is counted, and kept

    class Said(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "refused a batch" in record.getMessage():
                refused.set()

    def disk_full(*args: Any, **kwargs: Any) -> list[int]:
        raise OSError("database or disk is full (simulated)")

    monkeypatch.setattr(storage.events, "append_encoded", disk_full)
    monkeypatch.setattr(recorder_module, "CLOSING_TRIES_FOR", 0.2)
    said_it = Said()
    logging.getLogger("akgentic.team").addHandler(said_it)
    try:
        with caplog.at_level(logging.WARNING, "akgentic.team"):
            for n in range(2):
                recorder.on_message(UserMessage(content=str(n), team_id=team))
            recorder.flush()
            assert refused.wait(30)
            assert recorder.refused() == 2
            recorder.on_stop(team)
    finally:
        logging.getLogger("akgentic.team").removeHandler(said_it)
    said = [r.getMessage() for r in caplog.records if "refused a batch" not in r.getMessage()]
    assert said == [
        f"team {team}: stopping with 2 records not yet saved (the store refuses them): "
        f"trying for up to 0.2s more",
        f"team {team}: 2 records not saved: the store still refused them (OSError: database "
        f"or disk is full (simulated)) after 0.2s of tries as the team stopped, and they are "
        f"lost; {recorder_module.LOSS_ADVICE}",
    ]
    assert storage.events.read(team) == []
    assert (recorder.unsaved, recorder.refused()) == (2, 0)
    assert storage.teams.get(team).status == TeamStatus.RUNNING  # type: ignore[union-attr]


def test_a_stop_whose_last_commit_outlasts_its_wait_is_not_marked_stopped(
    storage_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The stop's last commit does not return (a store that hangs) within the stop's wait
    for the writer: its records may still be lost, so the team is not marked STOPPED —
    it stays RUNNING, said in one line — and the outcome says so (``end_saved``)."""
    storage = open_storage(storage_url)
    team = storage.teams.create("hanging").team_id
    recorder = EventRecorder(storage, team)
    recorder.on_stop_request(team)
    inside, release = threading.Event(), threading.Event()
    real = storage.events.append_encoded

    def hangs(*args: Any, **kwargs: Any) -> list[int]:
        inside.set()
        assert release.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(storage.events, "append_encoded", hangs)
    close = EventRecorder._close_writer
    # the wait for the writer runs out only once its commit is inside the store
    monkeypatch.setattr(
        EventRecorder, "_close_writer", lambda self: close(self, 0.0 if inside.wait(30) else 60)
    )
    recorder.on_message(UserMessage(content="hanging", team_id=team))
    try:
        with caplog.at_level(logging.ERROR, "akgentic.team"):
            recorder.on_stop(team)
    finally:
        release.set()
    assert recorder.end_saved is False and recorder.unsaved == 0
    assert storage.teams.get(team).status == TeamStatus.RUNNING  # type: ignore[union-attr]
    [line] = [r.getMessage() for r in caplog.records]
    assert "not marked STOPPED: its last records were still being written" in line

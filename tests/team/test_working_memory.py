"""The working memory the recorder keeps beside the log: after turns (and a compaction)
each agent's memory is its model context as the log tells it, written in the commit of
the events that changed it; a store that will not take it holds back nothing of the log.

The worker's history is compared whole. The manager's is compared with the log's rule
(last replacement, then every later run) only: a message that reaches it during a run
is absorbed into that run's history and published apart, so its history and the runs'
messages differ in how they group the same turns (as before this test)."""

from __future__ import annotations

import json
import logging
from typing import Any
from uuid import UUID

import pytest
from pydantic_ai.messages import ModelMessagesTypeAdapter

from akgentic.agent import BaseAgent
from akgentic.core import ActorSystem, EventMessage
from akgentic.llm import ContextReplacedEvent, LlmMessageEvent
from akgentic.storage import StorageBundle, open_storage
from akgentic.team import TeamCard, TeamManager, TeamRuntime

from .conftest import answer
from .test_team import EXAMPLE


def _turns(runtime: TeamRuntime) -> None:
    """Questions with a compaction of the worker's context between them: two before it,
    so the worker's history is longer than the recent part a compaction keeps."""
    seq = runtime.recorder.last_seq
    asked = ("@Manager", "why actors?"), ("@Manager", "why not?")
    for to, text in (*asked, ("@Worker", "/compact"), ("@Manager", "and?")):
        runtime.send_to(to, text)
        seq, _ = answer(runtime, seq)


def _histories(system: ActorSystem, team: Any) -> dict[str, tuple[UUID, list[dict[str, Any]]]]:
    """Each LLM agent's id and model context (as the JSON objects it is stored as), by
    name."""
    histories: dict[str, tuple[UUID, list[dict[str, Any]]]] = {}
    for name in ("@Manager", "@Worker"):
        member = team.member(name)
        assert member is not None
        history = system.proxy_ask(member, BaseAgent, timeout=30).get_history()
        dumped = ModelMessagesTypeAdapter.dump_python(history, mode="json")
        histories[name] = (member.agent_id, dumped)
    return histories


def _from_the_log(storage: StorageBundle, team: UUID) -> dict[UUID, list[dict[str, Any]]]:
    """Each agent's context by the restorer's rule: its last replacement, then every later
    run — from the stored events, whose ``messages_json`` must also be, byte for byte,
    what pydantic-ai writes for their messages (what the log always held)."""
    contexts: dict[UUID, list[dict[str, Any]]] = {}
    replaced = 0
    for record in storage.events.read(team):
        msg = record.require()
        if not isinstance(msg, EventMessage) or msg.sender is None:
            continue
        event = msg.event
        if isinstance(event, LlmMessageEvent | ContextReplacedEvent):
            written = ModelMessagesTypeAdapter.dump_json(event.to_messages()).decode()
            assert event.messages_json == written
            items = json.loads(event.messages_json)
            if isinstance(event, ContextReplacedEvent):
                contexts[msg.sender.agent_id] = items
                replaced += 1
            else:
                contexts.setdefault(msg.sender.agent_id, []).extend(items)
    assert replaced == 1  # the worker's compaction
    return contexts


def _refusing_memory(append: Any, refused: list[Any] | None = None) -> Any:
    """``append`` (an event log's ``append_encoded`` or ``append_packs``) refusing any
    group that carries working-memory changes, as a store whose memory table is gone."""

    def appending(
        team_id: Any, events: Any, states: Any = (), memory: Any = (), fence: Any = None
    ) -> Any:
        if memory:
            if refused is not None:
                refused.append(memory)
            raise OSError("working memory table unavailable (simulated)")
        return append(team_id, events, states, fence=fence)

    return appending


def test_the_working_memory_is_each_agents_context_written_with_its_events(
    storage_url: str, system: ActorSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = manager.create_team(TeamCard.from_yaml(EXAMPLE))
    # a change written in a transaction of its own is seen here
    apart: list[Any] = []
    monkeypatch.setattr(storage.working_memory, "append", lambda *a: apart.append(a))
    monkeypatch.setattr(storage.working_memory, "replace", lambda *a: apart.append(a))
    _turns(runtime)
    histories = _histories(system, runtime)
    manager.stop_team(runtime.team_id)  # everything handed over is committed
    assert apart == []
    _check(storage, runtime.team_id, histories)


def _check(
    storage: StorageBundle, team: UUID, histories: dict[str, tuple[UUID, list[dict[str, Any]]]]
) -> None:
    """Each agent's memory is its context by the log's rule; the worker's is its history."""
    logged = _from_the_log(storage, team)
    for agent_id, _ in histories.values():
        assert len(logged[agent_id]) > 0
        assert storage.working_memory.get(team, agent_id) == logged[agent_id]
    worker, history = histories["@Worker"]
    assert logged[worker] == history


def test_a_store_that_refuses_the_memory_with_the_log_still_commits_the_log(
    storage_url: str,
    system: ActorSystem,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A group whose memory changes the store refuses is committed without them, and
    the changes are then written one by one as before: the log is whole, the memory too."""
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = manager.create_team(TeamCard.from_yaml(EXAMPLE))
    rows, packs = storage.events.append_encoded, storage.events.append_packs
    refused: list[Any] = []
    monkeypatch.setattr(storage.events, "append_encoded", _refusing_memory(rows, refused))
    monkeypatch.setattr(storage.events, "append_packs", _refusing_memory(packs, refused))
    with caplog.at_level(logging.WARNING, "akgentic.team"):
        _turns(runtime)
        histories = _histories(system, runtime)
        manager.stop_team(runtime.team_id)
    assert refused
    assert "the log was committed without it" in caplog.text
    _check(storage, runtime.team_id, histories)


def test_a_memory_no_write_reaches_loses_nothing_of_the_log(
    storage_url: str,
    system: ActorSystem,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The memory cannot be written at all, with the events or on its own: every group is
    still committed (the log holds every run), each failure is logged, and a resume
    rebuilds the contexts from the log."""
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    runtime = manager.create_team(TeamCard.from_yaml(EXAMPLE))
    rows, packs = storage.events.append_encoded, storage.events.append_packs

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("working memory table unavailable (simulated)")

    monkeypatch.setattr(storage.events, "append_encoded", _refusing_memory(rows))
    monkeypatch.setattr(storage.events, "append_packs", _refusing_memory(packs))
    monkeypatch.setattr(storage.working_memory, "append", broken)
    monkeypatch.setattr(storage.working_memory, "replace", broken)
    with caplog.at_level(logging.INFO, "akgentic.team"):
        _turns(runtime)
        histories = _histories(system, runtime)
        manager.stop_team(runtime.team_id)
    assert "could not update the working memory" in caplog.text
    assert "not saved: the store still refused them" not in caplog.text
    assert "nothing was lost" not in caplog.text  # memory changes were
    logged = _from_the_log(storage, runtime.team_id)
    for agent_id, _ in histories.values():
        assert storage.working_memory.get(runtime.team_id, agent_id) == []
    worker, history = histories["@Worker"]
    assert logged[worker] == history
    resumed = manager.resume_team(runtime.team_id)  # the contexts come back from the log
    for agent_id, restored in _histories(system, resumed).values():
        assert restored == logged[agent_id]

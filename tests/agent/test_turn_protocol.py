"""The turn protocol an agent publishes: started, then ended — after the error it reports
— and text deltas gathered unless every delta is asked for."""

from __future__ import annotations

from pathlib import Path

from akgentic.agent import AgentConfig
from akgentic.agent.turn import TurnEndedEvent, TurnStartedEvent
from akgentic.core import ActorSystem, ErrorMessage, EventMessage
from akgentic.llm import LlmTextDeltaEvent
from akgentic.storage import open_storage
from akgentic.team import TeamCard, TeamManager
from akgentic.team.card import walk

REPO = Path(__file__).resolve().parents[2]
TURNS = REPO / "tests" / "server" / "data" / "turns.yaml"


def _events(interval: float, text: str) -> list[object]:
    card = TeamCard.from_yaml(TURNS)
    for _, spec, _ in walk(card.members):
        config = spec.card.config
        assert isinstance(config, AgentConfig)
        config.stream_text_interval = interval
    storage = open_storage("memory://")
    system = ActorSystem()
    try:
        runtime = TeamManager(system, storage).create_team(card)
        sent = runtime.send(text)
        for record in runtime.follow(idle_timeout=30):
            message = record.message
            if (
                isinstance(message, EventMessage)
                and isinstance(message.event, TurnEndedEvent)
                and message.event.turn_id == sent
            ):
                break
        found: list[object] = []
        for record in storage.events.read(runtime.team_id):
            message = record.message
            found.append(message.event if isinstance(message, EventMessage) else message)
        return found
    finally:
        system.shutdown()
        storage.close()


def test_text_is_gathered_unless_every_delta_is_asked_for() -> None:
    gathered = [e for e in _events(10.0, "hello") if isinstance(e, LlmTextDeltaEvent)]
    every = [e for e in _events(0.0, "hello") if isinstance(e, LlmTextDeltaEvent)]
    text = "[scripted] you said hello; one two three four five six seven eight nine ten"
    assert "".join(e.delta for e in gathered) == "".join(e.delta for e in every) == text
    assert len(gathered) <= 2 < len(text.split()) <= len(every)


def test_a_failed_turn_reports_its_error_before_it_ends() -> None:
    events = _events(0.05, "fail")
    start = next(i for i, e in enumerate(events) if isinstance(e, TurnStartedEvent))
    error = next(i for i, e in enumerate(events) if isinstance(e, ErrorMessage))
    end = next(i for i, e in enumerate(events) if isinstance(e, TurnEndedEvent))
    assert start < error < end
    ended = events[end]
    assert isinstance(ended, TurnEndedEvent) and ended.outcome == "failed"
    assert ended.error is not None and "no_such_tool" in ended.error

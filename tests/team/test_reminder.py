"""A reminder an agent set itself (NotificationTool) starts a turn whose answer goes to the
person — or, in a team without one, to nobody — never back to ``#NotificationTool``,
which does not converse (it would warn that it has no handler)."""

from __future__ import annotations

from pathlib import Path

import pytest

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent
from akgentic.agent.turn import TurnEndedEvent
from akgentic.core import (
    ActorSystem,
    AgentCard,
    EventMessage,
    SentMessage,
    WarningMessage,
)
from akgentic.storage import EventRecord, open_storage
from akgentic.team import MemberSpec, TeamCard, TeamManager, TeamRuntime
from akgentic.tool import ToolStateEvent
from akgentic.tool.notification import NotificationActor, NotificationDelta, NotificationTool
from tests.processes import killed_when_ready

HERE = Path(__file__).resolve().parent


def analyst_team(human: str | None) -> TeamCard:
    config = AgentConfig(
        name="@Analyst",
        role="Analyst",
        models="scripted:reminder.scenario.yaml",
        scenario_dir=str(HERE),
        tools=[NotificationTool()],
    )
    analyst = AgentCard(role="Analyst", agent_class=BaseAgent, config=config)
    return TeamCard(
        name="reminding", entry_point="@Analyst", human=human, members=[MemberSpec(card=analyst)]
    )


def reminder_turn_ended(runtime: TeamRuntime) -> list[EventRecord]:
    """The log up to the end of the turn the reminder started."""
    seen: list[EventRecord] = []
    reminders: set[object] = set()
    for record in runtime.follow(1, idle_timeout=60):
        seen.append(record)
        msg = record.message
        if isinstance(msg, SentMessage) and msg.sender and msg.sender.name == "#NotificationTool":
            reminders.add(msg.message.id)
        if (
            isinstance(msg, EventMessage)
            and isinstance(msg.event, TurnEndedEvent)
            and msg.event.turn_id in reminders
        ):
            assert msg.event.outcome == "completed", msg.event.error
            return seen
    raise AssertionError("the reminder's turn never ended")


def sent(records: list[EventRecord]) -> list[tuple[str, str, str, str]]:
    return [
        (m.sender.name, m.recipient.name, m.message.type, m.message.content)
        for r in records
        if isinstance(m := r.message, SentMessage)
        and isinstance(m.message, AgentMessage)
        and m.sender is not None
        and m.recipient is not None
    ]


@pytest.mark.parametrize("human", ["@Human", None])
def test_a_reminders_answer_goes_to_the_person_or_nobody(
    storage_url: str, system: ActorSystem, human: str | None
) -> None:
    manager = TeamManager(system, open_storage(storage_url))
    runtime = manager.create_team(analyst_team(human))
    runtime.send("remind me of cats")
    records = reminder_turn_ended(runtime)
    manager.stop_team(runtime.team_id)

    messages = sent(records)
    assert ("#NotificationTool", "@Analyst", "request", "check on cats") in messages
    assert not [m for m in messages if m[1] == "#NotificationTool"]  # never answered back
    assert not [r for r in records if isinstance(r.message, WarningMessage)]
    to_person = [m for m in messages if m[0] == "@Analyst" and m[1] == "@Human"]
    if human is None:
        assert to_person == []
    else:
        assert to_person == [
            ("@Analyst", "@Human", "response", "[scripted] reminder set for cats"),
            ("@Analyst", "@Human", "notification", "[scripted] checked on cats"),
        ]


def test_a_reminder_sent_just_before_a_crash_is_not_sent_again_on_resume(
    storage_url: str, system: ActorSystem
) -> None:
    """Killed between the reminder's send and the delta that says it was delivered: the
    resume settles the entry from the log, so the agent gets the reminder once."""
    team_id = killed_when_ready("tests.team.reminder_crash_child", storage_url)

    storage = open_storage(storage_url)
    added = [
        p.added[0]
        for r in storage.events.read(team_id)
        if isinstance(m := r.message, EventMessage)
        and isinstance(m.event, ToolStateEvent)
        and isinstance(p := m.event.payload, NotificationDelta)
        and p.added
    ]
    [entry] = added
    manager = TeamManager(system, storage)
    # retried if the kill cut its turn: so its turn ends now, wherever the kill came
    runtime = manager.resume_team(team_id, retry_interrupted=True)
    tool = runtime.member("#NotificationTool")
    assert tool is not None
    assert system.proxy_ask(tool, NotificationActor, timeout=30).pending() == []
    reminder_turn_ended(runtime)  # in the child before the kill, or here
    manager.stop_team(team_id)

    records = storage.events.read(team_id)
    reminders = {
        m.message.id
        for r in records
        if isinstance(m := r.message, SentMessage)
        and m.sender
        and m.sender.name == "#NotificationTool"
    }
    assert reminders == {entry.message_id}  # sent once, under the id the entry holds
    settled = [
        p
        for r in records
        if isinstance(m := r.message, EventMessage)
        and isinstance(m.event, ToolStateEvent)
        and isinstance(p := m.event.payload, NotificationDelta)
        and p.delivered
    ]
    assert settled == [NotificationDelta(delivered=[entry.id])]  # on the log, for clients

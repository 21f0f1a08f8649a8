"""A resume waits for a member that does not finish its ``on_start`` once: the member
is named after one ``MEMBER_START_TIMEOUT``, not after one per wait the resume makes
for it (one for its context, one to confirm the team started)."""

from __future__ import annotations

import threading

import pytest

from akgentic.agent import AgentConfig, BaseAgent
from akgentic.core import ActorAddress, ActorStartError, ActorSystem, AgentCard
from akgentic.storage import TeamStatus, open_storage
from akgentic.team import MemberSpec, ResumeError, TeamCard, TeamManager, restorer

from .conftest import answer

GATE = threading.Event()
"""What a :class:`GatedAgent`'s ``on_start`` waits for (a service the test controls)."""


class GatedAgent(BaseAgent):
    """An agent whose ``on_start`` waits for :data:`GATE` before it starts."""

    def on_start(self) -> None:
        GATE.wait(60)
        super().on_start()


def gated_team() -> TeamCard:
    config = AgentConfig(name="@Lead", role="Lead", models="scripted:default")
    card = AgentCard(
        role="Lead", agent_class=f"{__name__}.{GatedAgent.__qualname__}", config=config
    )
    return TeamCard(name="gated", entry_point="@Lead", members=[MemberSpec(card=card)])


def test_a_member_that_does_not_start_is_waited_for_once_on_resume(
    storage_url: str, system: ActorSystem, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    GATE.set()
    runtime = manager.create_team(gated_team())
    team_id = runtime.team_id
    runtime.send("hello")
    answer(runtime, 0)  # @Lead has a context: the resume waits for it to give it back
    manager.stop_team(team_id)

    monkeypatch.setattr(restorer, "MEMBER_START_TIMEOUT", 0.5)
    waits: list[tuple[str, float | None]] = []
    wait_started = system.wait_started

    def recorded(address: ActorAddress, timeout: float | None = None) -> None:
        waits.append((address.name, timeout))
        try:
            wait_started(address, timeout)
        except ActorStartError:
            GATE.set()  # the service answers once the resume gave up: its teardown is prompt
            raise

    monkeypatch.setattr(system, "wait_started", recorded)
    GATE.clear()
    outcome: object
    try:
        outcome = manager.resume_team(team_id)
    except ResumeError as exc:
        outcome = exc
    finally:
        GATE.set()

    assert [timeout for name, timeout in waits if name == "@Lead"] == [0.5]  # once, not twice
    assert isinstance(outcome, ResumeError)
    assert outcome.member == "@Lead"
    assert str(outcome) == (
        "@Lead could not start: its on_start did not finish within 0.5s: it may wait on a "
        "service that does not answer, or on another tool actor that waits for it; see the "
        "log, fix the cause, then start again"
    )
    record = storage.teams.get(team_id)
    assert record is not None and record.status == TeamStatus.STOPPED  # kept, to resume
    resumed = manager.resume_team(team_id)  # the service answers: the same team resumes
    assert "@Lead" in [a.name for a in resumed.members()]

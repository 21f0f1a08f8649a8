"""Firing a member (TeamTool's ``fire_member``) stops it at once: its turn in progress is
cut, the messages queued for it are not taken as turns, each sender waiting for its answer
is told, and a resume neither starts it again nor delivers anything to it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent
from akgentic.core import ActorSystem, AgentCard, SentMessage, StopMessage
from akgentic.llm import register_model
from akgentic.storage import open_storage, sqlite_url
from akgentic.team import MemberSpec, TeamCard, TeamManager, plan_restore


def pair(models: str) -> TeamCard:
    """@Lead (the entry point, which fires) and @Worker, both started with the team."""

    def member(name: str) -> MemberSpec:
        role = name[1:]
        config = AgentConfig(name=name, role=role, models=models)
        return MemberSpec(card=AgentCard(role=role, agent_class=BaseAgent, config=config))

    return TeamCard(name="pair", entry_point="@Lead", members=[member("@Lead"), member("@Worker")])


@pytest.fixture
def manager(tmp_path: Path, system: ActorSystem) -> Iterator[TeamManager]:
    manager = TeamManager(system, open_storage(sqlite_url(tmp_path / "team.db")))
    yield manager
    manager.shutdown()


def test_a_fired_member_stops_mid_turn_its_senders_are_told_and_a_resume_leaves_it_gone(
    manager: TeamManager,
) -> None:
    release, arrived = threading.Event(), threading.Event()
    requests: list[list[ModelMessage]] = []

    async def held(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """Each request waits for ``release`` (never set while the team runs), the
        agent's loop left free for a cut."""
        requests.append(messages)
        arrived.set()
        await asyncio.get_running_loop().run_in_executor(None, release.wait)
        return ModelResponse(parts=[TextPart("done")])

    try:
        with register_model("held", FunctionModel(held)):
            runtime = manager.create_team(pair("registered:held"))
            sent = [runtime.send_to("@Worker", "first")]
            assert arrived.wait(60)  # its model request is in flight, held
            sent += [runtime.send_to("@Worker", "second"), runtime.send_to("@Worker", "third")]
            runtime.send_to("@Lead", "/fire_member @Worker")
            notices: dict[UUID, str] = {}
            stopped = False
            for record in runtime.follow(1, idle_timeout=60):
                msg = record.message
                if isinstance(msg, StopMessage) and msg.sender is not None:
                    stopped = stopped or msg.sender.name == "@Worker"
                if (
                    isinstance(msg, SentMessage)
                    and isinstance(msg.message, AgentMessage)
                    and msg.message.sender is not None
                    and msg.message.sender.name == "@Worker"
                    and msg.message.parent_id is not None
                ):
                    assert msg.recipient is not None and msg.recipient.name == "@Human"
                    notices[msg.message.parent_id] = msg.message.content
                if stopped and len(notices) == len(sent):
                    break
            else:
                raise AssertionError(f"@Worker stopped: {stopped}; notices: {notices}")
            notice = "@Worker left the team (fired by @Lead): your message was not handled."
            assert notices == dict.fromkeys(sent, notice)
            assert len(requests) == 1  # the queued messages were not taken as turns
            assert runtime.member("@Worker") is None
            assert runtime.member("@Lead") is not None

            manager.stop_team(runtime.team_id)
            resumed = manager.resume_team(runtime.team_id)
            assert resumed.member("@Worker") is None
            assert resumed.member("@Lead") is not None
            assert resumed.interrupted == []
            plan = plan_restore(list(manager.storage.events.read(runtime.team_id)))
            assert "@Worker" not in [m.name for m in plan.members]
            assert [m for m in plan.undelivered if m.id in sent] == []
            assert len(requests) == 1
    finally:
        release.set()

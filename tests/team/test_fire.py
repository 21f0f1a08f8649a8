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
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent
from akgentic.core import ActorSystem, AgentCard, ProcessedMessage, SentMessage, StopMessage
from akgentic.llm import ModelRoster, register_model
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


def test_the_sender_of_a_message_the_fired_members_cut_run_had_absorbed_is_told(
    manager: TeamManager,
) -> None:
    """Before, a message @Worker's run had taken in through its mailbox (``read_mailbox``)
    was settled with the cut run: its sender, waiting for an answer, was never told."""
    release, first_step, second_step = threading.Event(), threading.Event(), threading.Event()
    absorb: dict[str, str] = {}
    absorb_ready = threading.Event()
    seen: list[list[ModelMessage]] = []

    async def worker(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """Its first step takes @Lead's message into the run; its second is held (never
        released while the team runs), the agent's loop left free for the fire's cut."""
        seen.append(messages)
        wait = asyncio.get_running_loop().run_in_executor
        if len(seen) == 1:
            first_step.set()
            await wait(None, absorb_ready.wait)
            return ModelResponse(parts=[ToolCallPart("read_mailbox", absorb)])
        second_step.set()
        await wait(None, release.wait)
        return ModelResponse(parts=[TextPart("done")])

    def lead(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if "ask the worker" in str(messages[-1]):
            args = {"messages": [{"to": "@Worker", "content": "second"}]}
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])
        return ModelResponse(parts=[TextPart("ok")])

    try:
        with (
            register_model("fire-worker", FunctionModel(worker)),
            register_model("fire-lead", FunctionModel(lead)),
        ):
            card = pair("registered:fire-lead")
            spec = card.members[1].card.config
            assert isinstance(spec, AgentConfig)
            card.members[1].card.config = spec.model_copy(
                update={"models": ModelRoster.of("registered:fire-worker")}
            )
            runtime = manager.create_team(card)
            first = runtime.send_to("@Worker", "first")
            assert first_step.wait(60)  # @Worker's first model request is in flight
            asked = runtime.send_to("@Lead", "ask the worker")
            second: UUID | None = None
            for record in runtime.follow(1, idle_timeout=60):
                msg = record.message
                if (
                    isinstance(msg, SentMessage)
                    and isinstance(msg.message, AgentMessage)
                    and msg.recipient is not None
                    and msg.recipient.name == "@Worker"
                ):
                    second = msg.message.id
                if isinstance(msg, ProcessedMessage) and msg.message_id == asked:
                    break  # @Lead's turn is over: its message is in @Worker's inbox
            assert second is not None
            absorb["message_id"] = str(second)
            absorb_ready.set()
            assert second_step.wait(60)
            assert "second" in str(seen[-1][-1])  # taken into the run: absorbed
            runtime.send_to("@Lead", "/fire_member @Worker")
            notices: dict[UUID, tuple[str, str]] = {}
            for record in runtime.follow(1, idle_timeout=60):
                msg = record.message
                if (
                    isinstance(msg, SentMessage)
                    and isinstance(msg.message, AgentMessage)
                    and msg.message.sender is not None
                    and msg.message.sender.name == "@Worker"
                    and msg.message.parent_id is not None
                    and msg.recipient is not None
                ):
                    notices[msg.message.parent_id] = (msg.recipient.name, msg.message.content)
                if len(notices) == 2:
                    break
            else:
                raise AssertionError(f"notices: {notices}")
            notice = "@Worker left the team (fired by @Lead): your message was not handled."
            assert notices == {first: ("@Human", notice), second: ("@Lead", notice)}
            assert len(seen) == 2  # no model request after the cut
    finally:
        release.set()

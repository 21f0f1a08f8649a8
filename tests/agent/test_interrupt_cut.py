"""An interrupt cuts a model request in flight — the request proper, never a hook that
another capability runs around it: one that arrives while such a hook runs lets the hook
finish, and the turn stops at the next step boundary instead; one that arrives before the
request goes out (past the step boundary's check) cuts it as it starts; and a request cut
as its answer comes runs no hook after it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, ClassVar

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.tools import RunContext

from akgentic.agent import AgentConfig, AgentMessage, TurnInterrupted
from akgentic.agent.cut import CUT_NOTE
from akgentic.agent.turn import TurnEndedEvent, TurnOutcome
from akgentic.core import ActorAddress, ActorSystem, CancelMessage, EventMessage, UserMessage
from akgentic.llm import LlmUsageEvent
from akgentic.tool.core import ToolCard

from ..core.conftest import Team
from .conftest import Script, ScriptedAgent
from .test_base_agent import call, text


class CtrlC:
    """Sends ``agent`` an interrupting cancel (the team is stopping) when called."""

    def __init__(self, system: ActorSystem) -> None:
        self.system = system
        self.agent: ActorAddress | None = None

    def __call__(self) -> None:
        assert self.agent is not None
        self.system.tell(self.agent, CancelMessage(reason="Ctrl-C", interrupt=True))


class Hooks(AbstractCapability[Any]):
    """Another capability's hooks around the model request. Each calls ``arrives_*`` as it
    starts, then awaits (as a hook doing I/O does): an interrupt put in then is handled
    while it awaits. ``after`` records whether the agent would cut there
    (``requesting``) and whether it ran to its end."""

    def __init__(
        self,
        arrives_before: Callable[[], None] = lambda: None,
        arrives_after: Callable[[], None] = lambda: None,
    ) -> None:
        self.arrives_before = arrives_before
        self.arrives_after = arrives_after
        self.agent: Any = None
        self.seen: list[bool] = []
        self.finished = 0

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self.arrives_before()
        await asyncio.sleep(0)  # the hook yields to the loop: the interrupt is handled now
        return request_context

    async def after_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        response: ModelResponse,
    ) -> ModelResponse:
        self.seen.append(self.agent._boundary.requesting)
        self.arrives_after()
        await asyncio.sleep(0)  # the hook yields to the loop: the interrupt is handled now
        self.finished += 1
        return response


class HookedAgent(ScriptedAgent):
    """Its prompt accounting (a capability after the step boundary's) is ``hooks``; its
    model the class's ``model`` when set, else its ``script``."""

    hooks: ClassVar[Hooks]
    model: ClassVar[Any] = None

    def _prompt_accounting(self) -> Any:
        type(self).hooks.agent = self
        return type(self).hooks

    def _build_model(self) -> Any:
        return type(self).model or super()._build_model()


def one_turn(team: Team, ctrl_c: CtrlC, cls: type[HookedAgent], **config: Any) -> TurnOutcome:
    """Start an agent of ``cls``, have it take one turn; the turn's outcome."""
    settings = AgentConfig(name="@Agent", role="Assistant", **config)
    ctrl_c.agent = team.system.createActor(cls, config=settings, team_id=team.team_id)
    team.system.tell(ctrl_c.agent, UserMessage(content="go"))
    [ended] = team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, TurnEndedEvent)
    )
    assert isinstance(ended.event, TurnEndedEvent)
    return ended.event.outcome


def test_an_interrupt_during_another_capabilitys_after_hook_waits_for_the_step_boundary(
    system: ActorSystem, team: Team
) -> None:
    ran: list[str] = []

    class Tools(ToolCard):
        def get_tools(self) -> list[Callable[..., Any]]:
            def work() -> str:
                """Do the work."""
                ran.append("work")
                return "done"

            return [work]

    ctrl_c = CtrlC(system)
    hooks = Hooks(arrives_after=ctrl_c)
    script = Script(call("work"), text("never asked"))
    cls = type("TestAgent", (HookedAgent,), {"script": script, "hooks": hooks})
    assert one_turn(team, ctrl_c, cls, tools=[Tools()]) == "interrupted"
    assert hooks.seen == [False]  # not a stretch an interrupt cuts: the request is over
    assert hooks.finished == 1  # the hook ran to its end: nothing cut it half-way
    assert ran == []  # the turn stopped at the boundary before the tool call
    assert len(script.seen) == 1
    [kept] = team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, TurnInterrupted)
    )
    assert isinstance(kept.event, TurnInterrupted) and kept.event.reason
    assert ctrl_c.agent is not None
    history = system.proxy_ask(ctrl_c.agent, ScriptedAgent, timeout=30).get_history()
    response, closed, note = history[-3:]  # the model's answer is kept, its call not run
    assert isinstance(response, ModelResponse)
    assert [p.tool_name for p in response.parts if isinstance(p, ToolCallPart)] == ["work"]
    assert [p.outcome for p in closed.parts if isinstance(p, ToolReturnPart)] == ["interrupted"]
    assert isinstance(note, ModelResponse) and note.text == CUT_NOTE  # the turn closed out
    # it kept a step: a turn taken, its one answered request recorded
    usage = [m.event for m in team.recorder.of_type(EventMessage)]
    assert [u.requests for u in usage if isinstance(u, LlmUsageEvent)] == [1]
    actor = system.get_actor(ctrl_c.agent)
    assert isinstance(actor, HookedAgent) and actor.state.turns == 1


def test_a_model_request_that_goes_out_after_an_interrupt_is_cut_as_it_starts(
    system: ActorSystem, team: Team
) -> None:
    """The interrupt arrives in a hook after the step boundary's check, and is handled
    before the request goes out (nothing in flight to cut yet): the request is cut as it
    starts, not sent to a model that would never answer."""
    asked: list[str] = []

    async def never_answers(messages: list[Any], info: Any) -> ModelResponse:
        asked.append("asked")
        await asyncio.wait_for(asyncio.Event().wait(), 30)  # an endpoint that never answers
        return ModelResponse(parts=[TextPart("too late")])

    ctrl_c = CtrlC(system)
    model = FunctionModel(never_answers)
    cls = type("TestAgent", (HookedAgent,), {"model": model, "hooks": Hooks(ctrl_c)})
    assert one_turn(team, ctrl_c, cls, stream_events=False) == "interrupted"
    assert asked == []  # cut as it went out: the model was never asked
    assert ctrl_c.agent is not None  # and the prompt is not kept for the next run
    assert system.proxy_ask(ctrl_c.agent, ScriptedAgent, timeout=30).get_history() == []


def test_a_cut_request_answered_before_the_cut_reaches_it_runs_no_hook_after_it(
    system: ActorSystem, team: Team
) -> None:
    """The cut is decided while the request is in flight, and the model answers before the
    cut reaches the request (pydantic-ai passes it on a loop turn later): the answer is
    dropped there, and no hook after the request runs with a cut pending."""
    ctrl_c = CtrlC(system)

    async def answers_as_the_cut_comes(messages: list[Any], info: Any) -> ModelResponse:
        ctrl_c()
        await asyncio.sleep(0)  # the request yields to the loop: the interrupt cuts it now
        return ModelResponse(parts=[TextPart("just in time")])

    hooks = Hooks()
    model = FunctionModel(answers_as_the_cut_comes)
    cls = type("TestAgent", (HookedAgent,), {"model": model, "hooks": hooks})
    assert one_turn(team, ctrl_c, cls, stream_events=False) == "interrupted"
    assert hooks.seen == []  # the hook after the request never ran


def test_a_turn_cut_after_a_history_pydantic_ai_merges_keeps_no_prompt_of_it(
    system: ActorSystem, team: Team
) -> None:
    """A compaction's summary is a request before the first request it kept: pydantic-ai
    merges the two as the run starts, so its messages are one shorter than the history it
    was given. A turn cut before the model answered still leaves nothing of itself: its
    prompt is not split off one message late and kept."""
    from pydantic_ai.messages import ModelRequest, UserPromptPart

    async def never_answers(messages: list[Any], info: Any) -> ModelResponse:
        await asyncio.wait_for(asyncio.Event().wait(), 30)
        return ModelResponse(parts=[TextPart("too late")])

    ctrl_c = CtrlC(system)
    cls = type("TestAgent", (HookedAgent,), {"model": FunctionModel(never_answers)})
    cls.hooks = Hooks(ctrl_c)  # the interrupt comes before the request goes out
    settings = AgentConfig(name="@Agent", role="Assistant", stream_events=False)
    ctrl_c.agent = team.system.createActor(cls, config=settings, team_id=team.team_id)
    agent = system.proxy_ask(ctrl_c.agent, ScriptedAgent, timeout=30)
    agent.restore_history(
        [
            ModelRequest(parts=[UserPromptPart(content="summary of before")]),
            ModelRequest(parts=[UserPromptPart(content="earlier question")]),
            ModelResponse(parts=[TextPart("earlier answer")]),
        ]
    )
    team.system.tell(ctrl_c.agent, UserMessage(content="the cut question"))
    [ended] = team.recorder.wait_for_type(
        EventMessage, where=lambda m: isinstance(m.event, TurnEndedEvent)
    )
    assert ended.event.outcome == "interrupted"  # type: ignore[attr-defined]
    said = [
        part.content
        for message in agent.get_history()
        for part in message.parts
        if isinstance(part, UserPromptPart)
    ]
    assert said == ["summary of before", "earlier question"]


def test_a_turn_cut_before_the_model_answered_counts_no_turn_and_records_no_usage(
    system: ActorSystem, team: Team
) -> None:
    """A turn the team's stop cut while its only model request was in flight kept nothing
    (not even its prompt), and the provider never answered it: the agent's turn count and
    its usage stay as the turn before left them — no ``LlmUsageEvent`` says it ran, and a
    usage summary (``usage: N requests``) does not count it."""
    in_flight = threading.Event()

    async def answers_then_hangs(messages: list[Any], info: Any) -> ModelResponse:
        if any("first" in str(m) for m in messages[-1:]):
            return ModelResponse(parts=[TextPart("first answer")])
        in_flight.set()
        await asyncio.wait_for(asyncio.Event().wait(), 30)  # answered only by the cut
        return ModelResponse(parts=[TextPart("too late")])

    ctrl_c = CtrlC(system)
    cls = type("TestAgent", (HookedAgent,), {"model": FunctionModel(answers_then_hangs)})
    cls.hooks = Hooks()
    settings = AgentConfig(name="@Agent", role="Assistant", stream_events=False)
    ctrl_c.agent = team.system.createActor(cls, config=settings, team_id=team.team_id)
    reply = system.ask(ctrl_c.agent, UserMessage(content="first"), timeout=30)
    assert isinstance(reply, AgentMessage) and reply.content == "first answer"
    actor = system.get_actor(ctrl_c.agent)
    assert isinstance(actor, HookedAgent)
    used = dict(actor.state.lifetime_usage)
    assert actor.state.turns == 1 and used["requests"] == 1

    team.system.tell(ctrl_c.agent, UserMessage(content="second"))
    assert in_flight.wait(30)
    ctrl_c()
    ended = team.recorder.wait_for_type(
        EventMessage, 2, where=lambda m: isinstance(m.event, TurnEndedEvent)
    )
    assert [m.event.outcome for m in ended] == ["completed", "interrupted"]  # type: ignore[attr-defined]
    usage = [m.event for m in team.recorder.of_type(EventMessage)]
    assert [u.requests for u in usage if isinstance(u, LlmUsageEvent)] == [1]  # the first's
    assert actor.state.turns == 1  # the cut turn kept nothing: not a turn taken
    assert actor.state.lifetime_usage == used

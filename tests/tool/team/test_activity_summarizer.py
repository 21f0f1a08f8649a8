"""The #TeamActivity summarizer on a real team: the actor exists only when configured, the
signature follows the configuration, and the deferred rules hold through the tool.

Most tests pre-create ``#TeamActivity`` as :class:`ScriptedActivity` — a subclass, so the
card's get-or-create binds it — whose workers call a pydantic-ai ``FunctionModel`` held at a
gate, and whose clock the test drives. No sleeps: the test waits on conditions.
"""

from __future__ import annotations

import inspect
import logging
import threading
from typing import Any
from uuid import UUID, uuid4

import pytest
from pydantic import ValidationError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.core import ActorAddress, BaseConfig, UserMessage
from akgentic.core.messages.orchestrator import SentMessage
from akgentic.tool import ToolFactory
from akgentic.tool.core.deferred import DeferredWorker
from akgentic.tool.team import (
    TEAM_ACTIVITY_ACTOR_NAME,
    ActivitySummarizer,
    GetTeamActivity,
    SummarizerWorker,
    TeamActivityActor,
    TeamActivityConfig,
    TeamTool,
)
from akgentic.tool.team.activity import collect_summaries

from ..conftest import Waiter
from .conftest import Manager, Staffed

LONG = "review chapter three and flag every claim without a source " + "x" * 300
TRUNCATED = "working on: " + LONG[:200].rstrip() + "…"


class Shared:
    """What the test and the actors both see: a gate, a clock, a script, and what happened."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()
        self.clock = 1000.0
        self.fail = False
        self.answer = "Asked to review chapter three."
        self.calls = Waiter()  # (prompt, model settings) per model call
        self.requests = Waiter()  # every key requested of the cache, by every caller
        self.spawned = Waiter()  # the name of each worker the cache spawned
        self.finished = Waiter()  # (key, worker address) once the outcome is told


shared = Shared()


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    prompt = "".join(
        str(part.content) for part in messages[-1].parts if isinstance(part, UserPromptPart)
    )
    shared.calls.add((prompt, info.model_settings))
    if not shared.gate.wait(30):
        raise TimeoutError("the gate never opened")
    if shared.fail:
        raise RuntimeError("model down")
    return ModelResponse(parts=[TextPart(shared.answer)])


class ScriptedWorker(SummarizerWorker):
    def summary_model(self, summarizer: ActivitySummarizer) -> Model | str:
        return FunctionModel(scripted)

    def work(self, key: UUID, payload: Any, cache: ActorAddress) -> None:
        super().work(key, payload, cache)
        shared.finished.add((key, self.myAddress))  # after the tell: the cache has it


class ScriptedActivity(TeamActivityActor):
    def worker_class(self) -> type[DeferredWorker[UUID, str]]:
        return ScriptedWorker

    def worker_config(self, key: UUID) -> BaseConfig:
        config = super().worker_config(key)
        shared.spawned.add(config.name)
        return config

    def request(self, key: UUID, payload: Any = None) -> None:
        shared.requests.add(key)
        super().request(key, payload)

    def now(self) -> float:
        return shared.clock


# The longest budgets allowed: a loaded machine must never turn a held or slow summary
# into a timed-out one (a test that needs no wait sets ``wait_seconds=0``).
SUMMARIZER = ActivitySummarizer(model="test", max_chars=40, timeout_seconds=25, wait_seconds=60)


def tools(factory: ToolFactory) -> dict[str, Any]:
    return {fn.__name__: fn for fn in factory.get_tools()}


def card(summarizer: ActivitySummarizer | None = SUMMARIZER, **kwargs: Any) -> TeamTool:
    return TeamTool(get_team_activity=GetTeamActivity(summarizer=summarizer, **kwargs))


def activity_tool(staffed: Staffed, tool_card: TeamTool) -> Any:
    return tools(ToolFactory([tool_card], observer=staffed.manager))["team_activity"]


def busy_critic(staffed: Staffed, text: str = LONG) -> None:
    """Hire a Critic (it never answers) and send it ``text``: it is busy working on it."""
    tools(ToolFactory([TeamTool()], observer=staffed.manager))["hire_members"](["Critic"])
    critic = staffed.member("@Critic")
    assert critic is not None
    staffed.manager.myAddress.send(critic, UserMessage(content=text))
    staffed.team.recorder.wait_for(
        lambda: any(
            isinstance(m, SentMessage) and getattr(m.message, "content", None) == text
            for m in staffed.team.recorder.log
        )
    )


def activity_actors(staffed: Staffed) -> list[str]:
    return [name for name in staffed.names() if name == TEAM_ACTIVITY_ACTOR_NAME]


@pytest.fixture
def scripted_team(staffed: Staffed) -> Staffed:
    global shared
    shared = Shared()
    config = TeamActivityConfig(summarizer=SUMMARIZER)
    staffed.team.proxy.getChildrenOrCreate(ScriptedActivity, config)
    return staffed


# -- the actor and the signature follow the configuration -----------------------------------


def test_without_a_summarizer_no_actor_and_no_summarize_over(staffed: Staffed) -> None:
    activity = activity_tool(staffed, TeamTool())
    assert list(inspect.signature(activity).parameters) == []
    # A summarizer on a capability served nowhere binds nothing either.
    off = TeamTool(get_team_activity=GetTeamActivity(expose=set(), summarizer=SUMMARIZER))
    assert "team_activity" not in tools(ToolFactory([off], observer=staffed.manager))
    assert activity_actors(staffed) == []


def test_a_summarizer_adds_summarize_over_and_one_actor_shared_by_two_agents(
    staffed: Staffed, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        activity = activity_tool(staffed, card())
    parameters = inspect.signature(activity).parameters
    assert list(parameters) == ["summarize_over"]
    assert parameters["summarize_over"].default == 200  # GetTeamActivity.max_chars
    # Nothing "configured but not built" any more.
    assert not [r for r in caplog.records if r.name.startswith("akgentic.tool.team")]

    deputy_address = staffed.team.system.createActor(
        Manager,
        config=BaseConfig(name="@Deputy", role="Manager"),
        team_id=staffed.team.orchestrator.team_id,
    )
    deputy: Any = staffed.team.system.get_actor(deputy_address)
    ToolFactory([card()], observer=deputy)
    assert activity_actors(staffed) == [TEAM_ACTIVITY_ACTOR_NAME]
    address = staffed.member(TEAM_ACTIVITY_ACTOR_NAME)
    assert address is not None
    assert staffed.team.system.proxy_ask(address, TeamActivityActor, timeout=30).pending() == 0


def test_a_long_message_gets_its_summary_from_pydantic_ai(staffed: Staffed) -> None:
    """The real path: the model string resolved by pydantic-ai (``"test"``: its TestModel)."""
    activity = activity_tool(staffed, card(ActivitySummarizer(model="test", wait_seconds=60)))
    busy_critic(staffed)
    report = activity()
    assert "- @Critic (Critic): busy\n  working on: (summary) success (no tool calls)" in report
    assert TRUNCATED in activity(summarize_over=10_000)  # quotes only, on request


# -- the deferred rules, through the tool ---------------------------------------------------


def test_three_callers_one_key_one_worker(scripted_team: Staffed) -> None:
    shared.gate.clear()
    activity = activity_tool(scripted_team, card())
    busy_critic(scripted_team)
    reports: list[str] = []
    lock = threading.Lock()

    def caller() -> None:
        report = activity()
        with lock:
            reports.append(report)

    threads = [threading.Thread(target=caller) for _ in range(3)]
    for thread in threads:
        thread.start()
    # All three ask while the one model call is held: de-duplication by the in-flight set.
    shared.requests.wait_for(lambda: len(shared.requests.log) == 3)
    shared.calls.wait_for(lambda: len(shared.calls.log) == 1)
    shared.gate.set()
    for thread in threads:
        thread.join(60)
    assert reports == [reports[0]] * 3
    assert "working on: (summary) Asked to review chapter three." in reports[0]
    assert len(set(shared.requests.log)) == 1
    (name,) = shared.spawned.log
    assert name.startswith("#defer-")
    ((prompt, settings),) = shared.calls.log
    assert prompt == LONG
    assert settings == {"timeout": 25.0, "request_timeout": 25.0}  # the budget reaches the client
    # the worker logs "finished" after telling the cache, which may answer the callers first
    shared.finished.wait_for(lambda: len(shared.finished.log) == 1)
    ((_, worker),) = shared.finished.log
    assert scripted_team.team.system.wait_stopped(worker, timeout=30)  # it stopped itself


def test_a_failing_model_quotes_truncated_text_until_the_negative_ttl(
    scripted_team: Staffed,
) -> None:
    shared.fail = True
    activity = activity_tool(scripted_team, card())
    busy_critic(scripted_team)
    assert TRUNCATED in activity()
    assert len(shared.calls.log) == 1
    assert TRUNCATED in activity()  # the failure is cached: no request, no worker
    assert (len(shared.requests.log), len(shared.spawned.log)) == (1, 1)

    shared.clock += TeamActivityActor.negative_ttl  # the TTL ran out: one retry
    assert TRUNCATED in activity()
    assert (len(shared.calls.log), len(shared.spawned.log)) == (2, 2)
    shared.fail = False
    assert TRUNCATED in activity()  # failed again just now: cached for a new TTL
    assert len(shared.calls.log) == 2


def test_without_waiting_the_next_report_has_the_summary(scripted_team: Staffed) -> None:
    activity = activity_tool(scripted_team, card(SUMMARIZER.model_copy(update={"wait_seconds": 0})))
    busy_critic(scripted_team)
    assert TRUNCATED in activity()  # requested, not waited for
    shared.finished.wait_for(lambda: len(shared.finished.log) == 1)
    assert "working on: (summary) Asked to review chapter three." in activity()
    assert len(shared.spawned.log) == 1


def test_short_messages_are_quoted_and_summaries_are_cut(scripted_team: Staffed) -> None:
    shared.answer = "A long\nsummary " + "y" * 100
    activity = activity_tool(scripted_team, card())
    busy_critic(scripted_team)
    assert TRUNCATED in activity(summarize_over=len(LONG))  # not longer than that: quoted
    assert shared.requests.log == []
    report = activity()
    assert "working on: (summary) A long summary " + "y" * 25 + "…" in report  # max_chars=40


def test_the_command_takes_summarize_over(scripted_team: Staffed) -> None:
    factory = ToolFactory([card()], observer=scripted_team.manager)
    busy_critic(scripted_team)
    registry = factory.get_command_registry()
    assert TRUNCATED in registry.dispatch("/team_activity 100000")
    assert TRUNCATED in registry.dispatch("/team_activity summarize_over=100000")
    assert shared.requests.log == []


# -- degraded answers and configuration -----------------------------------------------------


class Unanswering:
    """An ask proxy whose actor is gone."""

    def settled(self, keys: list[UUID]) -> dict[UUID, str | None]:
        raise RuntimeError("actor is dead")


def test_collect_summaries_never_raises(caplog: pytest.LogCaptureFixture) -> None:
    cache: Any = Unanswering()
    assert collect_summaries(cache, {}, attempts=3) == {}  # nothing to ask: no ask
    with caplog.at_level(logging.WARNING):
        assert collect_summaries(cache, {uuid4(): "text"}, attempts=3, delay=0) == {}
    assert "summaries unavailable" in caplog.text


def test_summarizer_config_is_bounded() -> None:
    with pytest.raises(ValidationError, match="timeout_seconds"):
        ActivitySummarizer(model="test", timeout_seconds=60)
    with pytest.raises(ValidationError, match="wait_seconds"):
        ActivitySummarizer(model="test", wait_seconds=-1)
    assert ActivitySummarizer(model="test").poll_attempts() == 20  # 5 s at 0.25 s
    assert ActivitySummarizer(model="test", wait_seconds=0).poll_attempts() == 0

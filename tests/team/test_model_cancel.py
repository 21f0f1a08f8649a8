"""A stop cuts a model request in flight: Ctrl-C (an interrupting stop) at once, a graceful
stop once its grace runs out; the turn is kept as interrupted, for a resume to offer again,
and the agent's event loop closes without asyncio complaining of a task left pending."""

from __future__ import annotations

import gc
import json
import logging
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from pydantic_ai.messages import ModelRequest, UserPromptPart

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent, TurnInterrupted
from akgentic.agent.config import CompactionConfig
from akgentic.agent.turn import TurnEndedEvent, TurnInterruptedEvent, TurnStartedEvent
from akgentic.core import ActorSystem, AgentCard, CancelMessage, EventMessage, SentMessage
from akgentic.core.agent import LEFT_BEHIND, GraceRanOut
from akgentic.llm import (
    SUMMARY_ASK,
    SUMMARY_INSTRUCTIONS,
    ContextReplacedEvent,
    LlmMessageEvent,
    ModelRoster,
)
from akgentic.storage import StorageBundle, open_storage
from akgentic.team import MemberSpec, TeamCard, TeamManager, TeamRuntime, plan_restore
from tests.examples.openai_compatible import Stall, last_text, serve


def solo_card(url: str) -> TeamCard:
    """One member, @A, on an OpenAI-compatible endpoint at ``url``."""
    roster = ModelRoster.from_spec("openai-compatible:m").with_base_url(url)
    config = AgentConfig(name="@A", role="A", models=roster)
    card = AgentCard(role="A", agent_class=BaseAgent, config=config)
    return TeamCard(name="solo", entry_point="@A", members=[MemberSpec(card=card)])


@pytest.fixture
def manager(system: ActorSystem, storage_url: str) -> Iterator[TeamManager]:
    made = TeamManager(system, open_storage(storage_url))
    yield made
    made.shutdown(10)


def interrupted_events(storage: StorageBundle, team_id: UUID) -> tuple[list[UUID], list[UUID]]:
    """The turns the log reports cut (``TurnInterruptedEvent``) and interrupted
    (``TurnInterrupted``: a resume offers them again)."""
    events = [
        r.message.event for r in storage.events.read(team_id) if isinstance(r.message, EventMessage)
    ]
    cut = [e.turn_id for e in events if isinstance(e, TurnInterruptedEvent)]
    kept = [e.message_id for e in events if isinstance(e, TurnInterrupted)]
    return cut, kept


def start_stalled_turn(manager: TeamManager, url: str, stall: Stall) -> tuple[TeamRuntime, UUID]:
    runtime: TeamRuntime = manager.create_team(solo_card(url))
    message_id = runtime.send("hi")
    assert stall.arrived.wait(60)  # the model request is in flight, its answer held back
    return runtime, message_id


def test_ctrl_c_cuts_a_model_request_in_flight_and_keeps_the_turn(
    manager: TeamManager, caplog: pytest.LogCaptureFixture
) -> None:
    stall = Stall()  # never released while the team runs: an endpoint that never answers
    with serve(stall=stall) as (url, _), caplog.at_level(logging.WARNING):
        runtime, message_id = start_stalled_turn(manager, url, stall)
        cut = manager.interrupt_team(runtime.team_id, grace_timeout=60)
        gc.collect()  # a task the loop left pending is reported when collected
    assert [m.id for m in cut] == [message_id]
    assert interrupted_events(manager.storage, runtime.team_id) == ([message_id], [message_id])
    assert [r for r in caplog.records if hasattr(r, LEFT_BEHIND)] == []  # it stopped in time
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []
    resumed = manager.resume_team(runtime.team_id)  # nothing lost: offered again
    assert [m.id for m in resumed.interrupted] == [message_id]
    manager.stop_team(runtime.team_id)


def test_a_run_cancelled_after_a_stream_leaves_no_task_pending_at_the_stop(
    manager: TeamManager, caplog: pytest.LogCaptureFixture
) -> None:
    """A ``/stop`` mid-stream (not an interrupt: the stream is read to its end) cancels the
    run at the step boundary after it; the team's stop then closes the agent's loop, and
    asyncio has no task left pending on it to complain of (the stream's ``aclose``)."""
    stall = Stall()
    with (
        serve(lambda body: ("Hello there, person.", None), stall=stall) as (url, requests),
        caplog.at_level(logging.WARNING),
    ):
        runtime, message_id = start_stalled_turn(manager, url, stall)
        member = runtime.member("@A")
        assert member is not None
        runtime.system.tell(member, CancelMessage(reason="enough"))
        stall.release.set()
        for record in runtime.follow(1, idle_timeout=60):
            event = getattr(record.message, "event", None)
            if isinstance(event, TurnInterruptedEvent):
                break
        manager.stop_team(runtime.team_id)
        gc.collect()  # a task the loop left pending is reported when collected
    assert all(r.get("stream") for r in requests)
    assert interrupted_events(manager.storage, runtime.team_id)[0] == [message_id]
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []


def test_ctrl_c_mid_stream_logs_no_asyncio_error_and_reports_the_turn_interrupted(
    manager: TeamManager, caplog: pytest.LogCaptureFixture
) -> None:
    """The answer's first words are in, the rest held back: the stream is cut mid-way."""
    stall = Stall()
    with (
        serve(lambda body: ("Hello there, person.", None), stall=stall) as (url, requests),
        caplog.at_level(logging.WARNING),
    ):
        runtime, message_id = start_stalled_turn(manager, url, stall)
        cut = manager.interrupt_team(runtime.team_id, grace_timeout=60)
        gc.collect()
    assert all(r.get("stream") for r in requests)
    assert [m.id for m in cut] == [message_id]
    assert interrupted_events(manager.storage, runtime.team_id)[1] == [message_id]
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []


def test_a_graceful_stop_cuts_a_model_request_left_when_its_grace_runs_out(
    manager: TeamManager, caplog: pytest.LogCaptureFixture
) -> None:
    """No Ctrl-C: the stop waits for the turn its grace long, then cuts the request still
    in flight, and the turn is kept as interrupted rather than the member left behind."""
    stall = Stall()
    with serve(stall=stall) as (url, _), caplog.at_level(logging.WARNING):
        runtime, message_id = start_stalled_turn(manager, url, stall)
        manager.stop_team(runtime.team_id, grace_timeout=0.2)
    assert interrupted_events(manager.storage, runtime.team_id) == ([message_id], [message_id])
    assert [r for r in caplog.records if hasattr(r, LEFT_BEHIND)] == []
    plan = plan_restore(manager.storage.events.read(runtime.team_id))
    assert [m.id for m in plan.interrupted] == [message_id]


def test_the_grace_report_says_what_each_member_left_running_was_inside() -> None:
    same = GraceRanOut(30, ("@A", "@B"), ("a model request that has not been answered",) * 2)
    assert same.says() == (
        "the grace of 30s ran out with @A, @B still running (in a model request that has not "
        "been answered); the team stopped without them"
    )
    mixed = GraceRanOut(30, ("@A", "@B"), ("a tool call that has not ended", None))
    assert mixed.says() == (
        "the grace of 30s ran out with @A (in a tool call that has not ended), @B (in a "
        "tool call that never ends?) still running; the team stopped without them"
    )


# -- a compaction's model request is cut as a turn's is ----------------------------------------


def compacting_card(url: str) -> TeamCard:
    """@A with a context window so small that every turn after the first compacts first."""
    roster = ModelRoster.from_spec("openai-compatible:m", context_length=5).with_base_url(url)
    config = AgentConfig(
        name="@A", role="A", models=roster, compaction=CompactionConfig(keep_last=1)
    )
    card = AgentCard(role="A", agent_class=BaseAgent, config=config)
    return TeamCard(name="compacting", entry_point="@A", members=[MemberSpec(card=card)])


def asks_for_a_summary(body: dict[str, Any]) -> bool:
    """A summary's request, in either form: on the agent's prefix (its ask), or the bounded
    one a window this small gets (its instructions)."""
    text = json.dumps(body)
    return SUMMARY_ASK in text or SUMMARY_INSTRUCTIONS in text


def events_of(storage: StorageBundle, team_id: UUID) -> list[Any]:
    return [
        r.message.event for r in storage.events.read(team_id) if isinstance(r.message, EventMessage)
    ]


def start_stalled_compaction(manager: TeamManager, url: str, stall: Stall, text: str) -> Any:
    """A team whose first turn is answered; then ``text``, whose compaction's summary
    request is held. Returns the runtime and ``text``'s message id."""
    runtime = manager.create_team(compacting_card(url))
    first = runtime.send("first")
    for record in runtime.follow(1, idle_timeout=60):
        event = getattr(record.message, "event", None)
        if isinstance(event, TurnEndedEvent) and event.turn_id == first:
            assert event.outcome == "completed"
            break
    message_id = runtime.send(text)
    assert stall.arrived.wait(60)  # the summary's request is in flight, its answer held back
    member = runtime.member("@A")
    assert member is not None
    agent = runtime.system._actor_of(member.agent_id)
    assert agent is not None
    assert agent.busy_with() == "a model request that has not been answered"
    return runtime, message_id


def test_ctrl_c_cuts_a_compactions_model_request_and_keeps_the_turn(
    manager: TeamManager, caplog: pytest.LogCaptureFixture
) -> None:
    """The compaction before a turn asks the model for a summary that never comes: Ctrl-C
    cuts it at once, the history stays as it was, and the turn is kept as interrupted."""
    stall = Stall(holds=asks_for_a_summary)
    with (
        serve(lambda body: ("Noted.", None), stall=stall) as (url, requests),
        caplog.at_level(logging.WARNING),
    ):
        runtime, message_id = start_stalled_compaction(manager, url, stall, "second")
        cut = manager.interrupt_team(runtime.team_id, grace_timeout=60)
        gc.collect()
    assert [m.id for m in cut] == [message_id]
    assert interrupted_events(manager.storage, runtime.team_id) == ([message_id], [message_id])
    assert [r for r in caplog.records if hasattr(r, LEFT_BEHIND)] == []  # it stopped in time
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []
    events = events_of(manager.storage, runtime.team_id)
    assert not [e for e in events if isinstance(e, ContextReplacedEvent)]  # nothing replaced
    assert [asks_for_a_summary(r) for r in requests] == [False, True]  # the turn never asked
    resumed = manager.resume_team(runtime.team_id)  # nothing lost: offered again
    assert [m.id for m in resumed.interrupted] == [message_id]
    manager.stop_team(runtime.team_id)


def test_ctrl_c_cuts_a_compact_command_which_says_so_and_changes_nothing(
    manager: TeamManager,
) -> None:
    stall = Stall(holds=asks_for_a_summary)
    with serve(lambda body: ("Noted.", None), stall=stall) as (url, _):
        runtime, message_id = start_stalled_compaction(manager, url, stall, "/compact")
        cut = manager.interrupt_team(runtime.team_id, grace_timeout=60)
    assert cut == []  # answered: nothing to offer again
    records = manager.storage.events.read(runtime.team_id)
    sent = [r.message.message for r in records if isinstance(r.message, SentMessage)]
    answers = [m.content for m in sent if isinstance(m, AgentMessage) and m.parent_id == message_id]
    assert answers == ["The compaction was cut short (the team is stopping): nothing changed."]
    events = events_of(manager.storage, runtime.team_id)
    assert not [e for e in events if isinstance(e, ContextReplacedEvent)]


# -- a cut turn the model never answered leaves no trace in what the model is sent -----------


def user_texts(body: dict[str, Any]) -> list[str]:
    """The user messages a model request carried, in order."""
    return [last_text({"messages": [m]}) for m in body["messages"] if m.get("role") == "user"]


def answered_turn(runtime: TeamRuntime, message_id: UUID) -> None:
    """Wait for the turn on ``message_id`` to complete (a cut one before it does not)."""
    for record in runtime.follow(1, idle_timeout=60):
        event = getattr(record.message, "event", None)
        ended = isinstance(event, TurnEndedEvent) and event.turn_id == message_id
        if ended and event.outcome == "completed":
            return
    raise AssertionError(f"the turn on {message_id} never completed")


def cut_unanswered(manager: TeamManager, url: str, stall: Stall) -> tuple[UUID, UUID]:
    """A team whose turn on QUESTION-ONE is cut (Ctrl-C) before the model answered a word,
    stopped; the model answers every later request. Returns the team's and the message's ids."""
    runtime: TeamRuntime = manager.create_team(solo_card(url))
    message_id = runtime.send("QUESTION-ONE")
    assert stall.arrived.wait(60)
    assert [m.id for m in manager.interrupt_team(runtime.team_id, grace_timeout=60)] == [message_id]
    stall.release.set()  # the endpoint answers from now on
    return runtime.team_id, message_id


def test_a_retried_turn_the_model_never_answered_sends_the_question_once(
    manager: TeamManager,
) -> None:
    stall = Stall()
    with serve(lambda body: ("Noted.", None), stall=stall) as (url, requests):
        team_id, message_id = cut_unanswered(manager, url, stall)
        events = events_of(manager.storage, team_id)
        assert not [e for e in events if isinstance(e, LlmMessageEvent)]  # nothing kept
        resumed = manager.resume_team(team_id)
        assert isinstance(resumed, TeamRuntime)
        assert resumed.retry_interrupted() == [message_id]
        assert resumed.out_of_order == {}  # nothing taken on since (its cancel is no turn)
        answered_turn(resumed, message_id)
        manager.stop_team(team_id)
    asked = [t for t in user_texts(requests[-1]) if "QUESTION-ONE" in t]
    assert len(asked) == 1 and asked[0].startswith("Message from @Human:\nQUESTION-ONE")


def test_a_retried_cut_turn_is_interrupted_again_until_it_ends(manager: TeamManager) -> None:
    """A turn the stop cut is processed (its agent ended it as interrupted); retried after
    the resume, it is received again: until the retried turn ends, the log has it in
    progress — and interrupted, so that a crash then leaves it for the next resume."""
    stall = Stall()
    with serve(lambda body: ("Noted.", None), stall=stall) as (url, _):
        runtime, message_id = start_stalled_turn(manager, url, stall)
        manager.interrupt_team(runtime.team_id, grace_timeout=60)
        stall.arrived.clear()
        resumed = manager.resume_team(runtime.team_id)
        assert isinstance(resumed, TeamRuntime)
        after = manager.storage.events.last_seq(runtime.team_id)
        assert resumed.retry_interrupted() == [message_id]
        assert stall.arrived.wait(60)  # the retried turn's model request is held
        for record in resumed.follow(after + 1, idle_timeout=60):
            event = getattr(record.message, "event", None)
            if isinstance(event, TurnStartedEvent) and event.turn_id == message_id:
                break
        plan = plan_restore(manager.storage.events.read(runtime.team_id))
        assert [m.id for m in plan.interrupted] == [message_id]
        assert [m.id for m in plan.in_progress] == [message_id]
        stall.release.set()
        answered_turn(resumed, message_id)
        manager.stop_team(runtime.team_id)
    assert plan_restore(manager.storage.events.read(runtime.team_id)).interrupted == []


def test_a_dismissed_turn_the_model_never_answered_is_not_sent_to_the_model(
    manager: TeamManager,
) -> None:
    stall = Stall()
    with serve(lambda body: ("Hello there, person.", None), stall=stall) as (url, requests):
        team_id, _ = cut_unanswered(manager, url, stall)  # cut mid-stream: a word was in
        resumed = manager.resume_team(team_id)
        assert isinstance(resumed, TeamRuntime)
        resumed.dismiss_interrupted()
        new_id = resumed.send("QUESTION-TWO")
        answered_turn(resumed, new_id)
        manager.stop_team(team_id)
    said = user_texts(requests[-1])
    assert [t for t in said if "QUESTION-ONE" in t] == []
    assert [t for t in said if "QUESTION-TWO" in t] != []
    assert "Hello" not in json.dumps(requests[-1]["messages"])  # nor the half-streamed word


def test_a_resume_leaves_out_a_cut_turns_prompt_that_an_older_log_kept(
    manager: TeamManager,
) -> None:
    """A log written before the agent stopped publishing a cut turn's unanswered prompt
    has it as a run of its own: the context a resume rebuilds leaves it out."""
    stall = Stall()
    with serve(lambda body: ("Noted.", None), stall=stall) as (url, _):
        team_id, _ = cut_unanswered(manager, url, stall)
    records = manager.storage.events.read(team_id)
    cut = next(r for r in records if isinstance(getattr(r.message, "event", None), TurnEndedEvent))
    assert isinstance(cut.message, EventMessage)
    prompt = ModelRequest(parts=[UserPromptPart("Message from @Human:\nQUESTION-ONE")])
    old = LlmMessageEvent.from_messages([prompt], run_id="", agent="@A")
    kept = cut.model_copy(update={"message": cut.message.model_copy(update={"event": old})})
    assert plan_restore([*records, kept]).contexts == plan_restore(records).contexts == {}

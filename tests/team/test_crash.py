"""A team killed with SIGKILL mid-run resumes in a fresh process with nothing lost."""

from __future__ import annotations

from uuid import UUID, uuid4

from akgentic.agent import AgentMessage, AgentState, BaseAgent, TurnInterrupted
from akgentic.core import ActorAddress, ActorSystem, EventMessage, SentMessage, UserMessage
from akgentic.storage import TeamStatus, open_storage
from akgentic.team import RestorePlan, TeamManager, TeamRuntime, plan_restore
from tests.processes import killed_when_ready

from .crash_cards import SlowStep  # noqa: F401  (the class must exist to restore the team)


def run_child_until_ready(url: str, how: str = "") -> UUID:
    return killed_when_ready("tests.team.crash_child", url, how, env={"AKGENTIC_CRASH_BLOCK": "1"})


def answers(runtime: TeamRuntime) -> list[str]:
    found = []
    for record in runtime.storage.events.read(runtime.team_id):
        msg = record.message
        if (
            isinstance(msg, SentMessage)
            and isinstance(msg.message, AgentMessage)
            and msg.recipient is not None
            and msg.recipient.name == "@Human"
        ):
            found.append(msg.message.content)
    return found


def wait_for_answer(runtime: TeamRuntime, content: str) -> None:
    for record in runtime.follow(1, idle_timeout=60):
        msg = record.message
        if isinstance(msg, SentMessage) and getattr(msg.message, "content", None) == content:
            return
    raise AssertionError(f"no answer {content!r}; answers: {answers(runtime)}")


def test_a_killed_team_resumes_with_nothing_lost(storage_url: str, system: ActorSystem) -> None:
    team_id = run_child_until_ready(storage_url)

    storage = open_storage(storage_url)
    assert storage.teams.get(team_id).status == TeamStatus.RUNNING  # type: ignore[union-attr]
    before_states = storage.states.load_states(team_id)
    accepted = [
        r.message.message.content  # type: ignore[union-attr]
        for r in storage.events.read(team_id)
        if isinstance(r.message, SentMessage) and isinstance(r.message.message, UserMessage)
    ]
    assert accepted == ["first task", "block please", "after block"]

    manager = TeamManager(system, storage)
    runtime = manager.resume_team(team_id)
    boss = runtime.member("@Boss")
    assert boss is not None
    # the state persisted before the kill is the state the agent resumes with
    actor = system.get_actor(boss)
    assert isinstance(actor, BaseAgent)
    persisted = before_states[boss.agent_id].state
    assert isinstance(persisted, AgentState) and persisted.turns >= 1
    # the model context came back from working memory
    history = system.proxy_ask(boss, BaseAgent, timeout=30).get_history()
    assert any("first task" in str(m) for m in history)
    # the turn the kill interrupted is reported, not silently re-run
    assert [getattr(m, "content", None) for m in runtime.interrupted] == ["block please"]
    # the message that was accepted but never received is delivered again
    wait_for_answer(runtime, "[scripted] done: after block")
    # and the interrupted one can be retried: after it, and said to be out of its place
    [block] = runtime.interrupted
    assert runtime.retry_interrupted() == [block.id]
    assert runtime.out_of_order == {block.id: 1}  # "after block" was taken on first
    wait_for_answer(runtime, "[scripted] done: block please")
    assert answers(runtime)[1:] == ["[scripted] done: after block", "[scripted] done: block please"]
    assert answers(runtime).count("[scripted] done: first task") == 1
    manager.stop_team(team_id)
    assert storage.teams.get(team_id).status == TeamStatus.STOPPED  # type: ignore[union-attr]


def test_a_resume_that_retries_redoes_the_interrupted_turn_before_the_message_behind_it(
    storage_url: str, system: ActorSystem
) -> None:
    """Killed while "block please" ran, with "after block" queued behind it: resumed with
    ``retry_interrupted``, the interrupted turn is redone first, in its place — the person
    gets its answer before the one to the message sent after it (a retry after the resume
    came after the queued message)."""
    team_id = run_child_until_ready(storage_url)
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)

    runtime = manager.resume_team(team_id, retry_interrupted=True)

    assert isinstance(runtime, TeamRuntime)
    assert runtime.interrupted == []  # retried: nothing left to decide
    assert [getattr(m, "content", None) for m in runtime.retried] == ["block please"]
    assert runtime.out_of_order == {}  # redone in its place
    wait_for_answer(runtime, "[scripted] done: block please")
    wait_for_answer(runtime, "[scripted] done: after block")
    assert answers(runtime) == [
        "[scripted] done: first task",
        "[scripted] done: block please",
        "[scripted] done: after block",
    ]
    manager.stop_team(team_id)
    assert plan_restore(storage.events.read(team_id)).interrupted == []  # done: settled


def test_a_turn_an_earlier_run_left_unsettled_is_retried_out_of_order_and_said_so(
    storage_url: str, system: ActorSystem
) -> None:
    """Resumed without a decision, the team answered "after block" (queued behind the
    interrupted "block please") and was stopped; a later resume with ``retry_interrupted``
    cannot redo "block please" before an answer given already: it redoes it, and says it
    is out of order."""
    team_id = run_child_until_ready(storage_url)
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    first = manager.resume_team(team_id)
    assert isinstance(first, TeamRuntime)
    [block] = first.interrupted
    wait_for_answer(first, "[scripted] done: after block")
    manager.stop_team(team_id)

    runtime = manager.resume_team(team_id, retry_interrupted=True)

    assert isinstance(runtime, TeamRuntime)
    assert [m.id for m in runtime.retried] == [block.id]
    assert runtime.out_of_order == {block.id: 1}
    wait_for_answer(runtime, "[scripted] done: block please")
    manager.stop_team(team_id)


def test_a_retried_turn_is_out_of_order_after_what_its_recipient_took_on_since() -> None:
    """What comes before an interrupted turn delivered again now: the messages its
    recipient received after it (other retried turns aside: they keep their order) and,
    on a running team (``waiting``), those in its inbox — not another member's."""
    boss, helper = (ActorAddress(agent_id=uuid4(), name=n) for n in ("@Boss", "@Helper"))
    first, second, newer, queued, elsewhere = (
        UserMessage(content=c, recipient=boss) for c in ("first", "second", "newer", "queued", "x")
    )
    elsewhere.recipient = helper
    plan = RestorePlan(
        interrupted=[first, second],
        undelivered=[queued, elsewhere],
        received_after={first.id: [second.id, newer.id], second.id: [newer.id]},
    )

    assert plan.overtaken([first, second], waiting=False) == {first.id: 1, second.id: 1}
    assert plan.overtaken([first, second], waiting=True) == {first.id: 2, second.id: 2}
    assert plan.overtaken([first], waiting=False) == {first.id: 2}  # second is no retry now
    assert RestorePlan(interrupted=[first]).overtaken([first], waiting=True) == {}


def test_a_resume_delivers_the_retried_turns_first_in_their_original_order() -> None:
    """What a resume delivers again: the interrupted turns (when retried) in their order,
    then the undelivered messages; without a retry, the undelivered ones alone."""
    first, second, queued = (UserMessage(content=c) for c in ("first", "second", "queued"))
    plan = RestorePlan(interrupted=[first, second], undelivered=[queued])

    assert plan.deliveries(retry_interrupted=True) == [first, second, queued]
    assert plan.deliveries(retry_interrupted=False) == [queued]


def test_an_interrupted_turn_can_be_dismissed_for_good(
    storage_url: str, system: ActorSystem
) -> None:
    team_id = run_child_until_ready(storage_url)
    manager = TeamManager(system, open_storage(storage_url))
    runtime = manager.resume_team(team_id)
    assert [getattr(m, "content", None) for m in runtime.interrupted] == ["block please"]
    dismissed = runtime.dismiss_interrupted()
    assert len(dismissed) == 1 and runtime.interrupted == []
    wait_for_answer(runtime, "[scripted] done: after block")
    manager.stop_team(team_id)
    again = manager.resume_team(team_id)
    assert again.interrupted == []  # the dismissal is on the log
    assert "[scripted] done: block please" not in answers(again)
    manager.stop_team(team_id)


def test_a_turn_a_crash_left_is_not_in_progress_in_the_team_resumed_without_a_choice(
    storage_url: str, system: ActorSystem
) -> None:
    """Resumed with neither a retry nor a dismissal (the Python API's ``resume_team``
    asks for none): the turn the crash cut stays interrupted on the log, and it is no
    turn the running team is on — its member started again since it was received."""
    team_id = run_child_until_ready(storage_url)
    storage = open_storage(storage_url)
    before = plan_restore(storage.events.read(team_id))  # the crashed run's own view
    assert [getattr(m, "content", None) for m in before.in_progress] == ["block please"]

    manager = TeamManager(system, storage)
    runtime = manager.resume_team(team_id)
    wait_for_answer(runtime, "[scripted] done: after block")
    plan = plan_restore(storage.events.read(team_id))
    assert [getattr(m, "content", None) for m in plan.interrupted] == ["block please"]
    assert plan.in_progress == []
    manager.stop_team(team_id)


def test_a_cancel_of_a_process_that_died_never_cuts_a_turn_after_the_resume(
    storage_url: str, system: ActorSystem
) -> None:
    """Ctrl-C (an interrupting cancel, then a stop) while a turn hangs, then the process
    dies (a second Ctrl-C, SIGKILL): the cancel, never received, was aimed at that turn.
    The resume does not deliver it again: the messages after it are answered."""
    team_id = run_child_until_ready(storage_url, "ctrl-c")
    storage = open_storage(storage_url)
    plan = plan_restore(storage.events.read(team_id))
    assert [type(m).__name__ for m in plan.undelivered] == ["UserMessage"]  # not the cancel
    assert [getattr(m, "content", None) for m in plan.interrupted] == ["block please"]

    manager = TeamManager(system, storage)
    runtime = manager.resume_team(team_id)
    assert [getattr(m, "content", None) for m in runtime.interrupted] == ["block please"]
    wait_for_answer(runtime, "[scripted] done: after block")
    runtime.send("after resume")
    wait_for_answer(runtime, "[scripted] done: after resume")
    log = storage.events.read(team_id)
    assert not any(
        isinstance(r.message, EventMessage) and isinstance(r.message.event, TurnInterrupted)
        for r in log
    )
    manager.stop_team(team_id)
    again = plan_restore(storage.events.read(team_id))
    assert [getattr(m, "content", None) for m in again.interrupted] == ["block please"]
    assert again.undelivered == []


def test_a_team_killed_while_it_was_being_created_resumes_whole(
    storage_url: str, system: ActorSystem
) -> None:
    """Killed before every member had started (@Boss's start held, @Helper not created
    yet): the team is stored and RUNNING, its log knows at most the members created
    before. The resume starts the card's members the log never saw, so the team answers."""
    team_id = run_child_until_ready(storage_url, "starting")
    storage = open_storage(storage_url)
    assert storage.teams.get(team_id).status == TeamStatus.RUNNING  # type: ignore[union-attr]
    assert "@Helper" not in {m.name for m in plan_restore(storage.events.read(team_id)).members}

    manager = TeamManager(system, storage)
    runtime = manager.resume_team(team_id)

    assert runtime.member("@Boss") is not None and runtime.member("@Helper") is not None
    runtime.send("hello")
    wait_for_answer(runtime, "[scripted] done: hello")
    manager.stop_team(team_id)
    again = manager.resume_team(team_id)  # the fresh members are on the log: once each
    assert sorted(m.name for m in again.members()) == ["@Boss", "@Helper", "@Human"]
    manager.stop_team(team_id)

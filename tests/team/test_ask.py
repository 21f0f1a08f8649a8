"""``TeamRuntime.ask`` on a team in this process, with the scripted model: the same
answers and errors as ``RemoteTeam.ask`` (one :class:`~akgentic.team.Exchange` decides):
a direct answer, one after a delegation, a closing notification, a deadline, a failed
turn, a question back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from akgentic.core import ActorSystem, AddressError, SentMessage
from akgentic.storage import StorageBundle, open_storage, sqlite_url
from akgentic.team import (
    NoReplyError,
    TeamCard,
    TeamManager,
    TeamRuntime,
    TurnFailedError,
)
from tests.server import gate_tool
from tests.server.conftest import RESEARCH, TURNS

SAID = "one two three four five six seven eight nine ten"


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[StorageBundle]:
    bundle = open_storage(sqlite_url(tmp_path / "ask.db"))
    yield bundle
    bundle.close()


@pytest.fixture
def manager(system: ActorSystem, storage: StorageBundle) -> Iterator[TeamManager]:
    gate_tool.ENTERED.clear()
    gate_tool.OPEN.clear()
    teams = TeamManager(system, storage)
    try:
        yield teams
    finally:
        gate_tool.OPEN.set()  # never leave a turn waiting
        teams.shutdown()


@pytest.fixture
def turns(manager: TeamManager) -> TeamRuntime:
    return manager.create_team(TeamCard.from_yaml(TURNS))


def _seq_of(runtime: TeamRuntime, message_id: object) -> int:
    return next(
        r.seq
        for r in runtime.history(limit=10_000)
        if isinstance(r.message, SentMessage) and r.message.message.id == message_id
    )


def test_ask_returns_the_answer_to_its_own_message(turns: TeamRuntime) -> None:
    first = turns.ask("hello there", timeout=60)
    second = turns.ask("and again", to="@Boss", timeout=60)
    assert (first.sender, first.content) == ("@Boss", f"[scripted] you said hello there; {SAID}")
    assert second.content == f"[scripted] you said and again; {SAID}"  # not the first's
    assert first.message.type == "response" and first.message.parent_id == first.asked
    assert first.seq < _seq_of(turns, second.asked) < second.seq


def test_the_answer_may_come_after_a_delegation(manager: TeamManager) -> None:
    """``@Manager`` acknowledges, delegates to ``@Worker``, then answers: the
    acknowledgment is no answer, the response is."""
    team = manager.create_team(TeamCard.from_yaml(RESEARCH))
    answer = team.ask("why actors?", timeout=60)
    assert answer.sender == "@Manager" and answer.message.type == "response"
    assert answer.content.startswith("Here is what @Worker found: [scripted] On why actors?")


def test_a_closing_notification_is_the_answer(turns: TeamRuntime) -> None:
    """``@Boss`` only tells the person (a ``notification``) and its turn ends: that is the
    answer, as ``akgentic run -m`` prints it."""
    answer = turns.ask("tell the news", timeout=60)
    assert (answer.sender, answer.content) == ("@Boss", "Noted: the news")
    assert answer.message.type == "notification" and answer.message.parent_id == answer.asked


def test_a_deadline_says_what_still_runs_and_how_to_follow_it(turns: TeamRuntime) -> None:
    turns.send("wait first")
    assert gate_tool.ENTERED.wait(30)
    with pytest.raises(NoReplyError) as caught:
        turns.ask("hello", timeout=1)
    asked = caught.value.asked
    assert str(caught.value) == (
        f"no answer from @Boss to message {asked} within 1s; still running: a message to "
        f"@Boss not handled yet; follow it with follow({_seq_of(turns, asked)}), or ask "
        f"with a longer timeout"
    )
    gate_tool.OPEN.set()
    assert turns.ask("again", timeout=60).content.startswith("[scripted] you said again")


def test_a_failed_turn_is_an_error_naming_who_and_why(turns: TeamRuntime) -> None:
    with pytest.raises(TurnFailedError) as caught:
        turns.ask("fail", timeout=60)
    error = caught.value
    assert (error.agent, error.outcome) == ("@Boss", "failed")
    assert str(error).startswith("@Boss's turn failed: ") and "no_such_tool" in str(error)
    assert turns.ask("still there?", timeout=60).content.startswith("[scripted] you said still")


def test_a_question_back_is_no_answer(turns: TeamRuntime) -> None:
    with pytest.raises(NoReplyError) as caught:
        turns.ask("ask colour", timeout=600)
    assert str(caught.value) == (
        f"@Boss finished without answering message {caught.value.asked}: the last message to "
        f"you was @Boss's request, which you may answer with process_human_input: "
        f"'Which colour?'"
    )


def test_bad_input_is_refused_before_anything_is_sent(turns: TeamRuntime) -> None:
    before = turns.recorder.last_seq
    with pytest.raises(ValueError, match="ask's timeout is in seconds, more than 0, not 0"):
        turns.ask("hi", timeout=0)
    with pytest.raises(AddressError, match="@Nobody is not a member"):
        turns.ask("hi", to="@Nobody", timeout=600)
    assert turns.recorder.last_seq == before

"""``ask``: send a message and get the answer the team's causal chain ties to it, against
a real server with the scripted model (the ``turns`` card: ``@Boss`` answers, waits at a
gate, fails, or asks back). A failed or cut turn, an exchange that ends without an answer
and a deadline passing are one-line errors; an answer written before the stream opens
is not missed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from akgentic.agent.turn import TurnEndedEvent
from akgentic.client import (
    AkgenticClient,
    AskError,
    NoReplyError,
    RemoteTeam,
    ServerError,
    TurnFailedError,
)
from akgentic.core import ActorSystem, EventMessage, SentMessage
from akgentic.llm import register_model
from akgentic.server import BackgroundServer, ServerSettings, create_app
from akgentic.storage import open_storage, sqlite_url
from akgentic.team import TeamCard, TeamManager
from tests.processes import wait_until
from tests.server import gate_tool
from tests.server.conftest import TURNS, Served, serve_cards
from tests.team.test_agent_hops import CARD as PING_PONG
from tests.team.test_agent_hops import player

NOHUMAN = Path(__file__).parents[1] / "cli" / "data" / "nohuman.yaml"
SAID = "one two three four five six seven eight nine ten"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    gate_tool.ENTERED.clear()
    gate_tool.OPEN.clear()
    try:
        yield from serve_cards(tmp_path, ServerSettings(port=0, heartbeat=0.5))
    finally:
        gate_tool.OPEN.set()  # never leave a turn waiting


def test_ask_returns_the_answer_to_its_own_message(served: Served) -> None:
    team = served.client.create_team("turns")
    first = team.ask("hello there", timeout=60)
    second = served.client.ask(team.team_id, "and again", to="@Boss", timeout=60)
    assert (first.sender, first.content) == ("@Boss", f"[scripted] you said hello there; {SAID}")
    assert second.content == f"[scripted] you said and again; {SAID}"  # not the first's answer
    assert first.seq < second.seq and first.message.type == "response"
    assert first.message.parent_id == first.asked  # the answer names the message it answers
    log = served.storage.events.read(team.team_id)
    sent = {r.message.message.id: r for r in log if isinstance(r.message, SentMessage)}
    asked = sent[second.asked].message
    assert isinstance(asked, SentMessage) and getattr(asked.message, "content", "") == "and again"
    assert sent[second.message.id].seq == second.seq


def test_without_a_human_proxy_the_answer_to_the_outside_caller_counts(tmp_path: Path) -> None:
    """A ``human: null`` card: the server writes as ``@System``, and ``@A``'s response to
    ``@System`` is the answer."""
    for served in serve_cards(tmp_path, ServerSettings(port=0, heartbeat=0.5), (NOHUMAN,)):
        team = served.client.create_team("nohuman")
        assert team.info.human is None
        answer = team.ask("hi", timeout=60)
        assert (answer.sender, answer.content) == ("@A", "hello from @A")


def test_the_answer_may_come_after_a_delegation(served: Served) -> None:
    """``@Manager`` acknowledges, delegates to ``@Worker``, and answers once the worker
    has: the acknowledgment is no answer; the response the chain leads back from is."""
    team = served.client.create_team("research")
    answer = team.ask("why actors?", timeout=60)
    assert answer.sender == "@Manager"
    assert answer.content.startswith("Here is what @Worker found: [scripted] On why actors?")
    log = served.storage.events.read(team.team_id)
    sent = [r.message for r in log if isinstance(r.message, SentMessage)]
    parent = {m.message.id: m.message.parent_id for m in sent}
    chain, at = [], answer.message.id
    while at is not None:
        chain.append(at)
        at = parent.get(at)
    assert chain[-1] == answer.asked and len(chain) == 4  # answer, worker's reply, request
    assert any(getattr(m.message, "type", "") == "acknowledgment" for m in sent)


def test_an_answer_written_before_the_stream_opens_is_not_missed(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The follow only opens once the whole turn, answer included, is in the log: ``ask``
    read its position before sending, so it reads the answer from the log."""
    team = served.client.create_team("turns")
    follow = RemoteTeam.follow
    opened: list[int] = []

    def late_follow(self: RemoteTeam, from_seq: int = 1, **kwargs: Any) -> Any:
        def ended() -> bool:
            return any(
                isinstance(r.message, EventMessage) and isinstance(r.message.event, TurnEndedEvent)
                for r in served.storage.events.read(team.team_id, from_seq)
            )

        wait_until(ended, 30, "the turn ended before the follow opens")
        opened.append(from_seq)
        return follow(self, from_seq, **kwargs)

    monkeypatch.setattr(RemoteTeam, "follow", late_follow)
    answer = team.ask("quick one", timeout=60)
    assert answer.content == f"[scripted] you said quick one; {SAID}"
    assert len(opened) == 1 and opened[0] <= answer.seq


def test_a_deadline_says_what_still_runs_and_how_to_follow_it(served: Served) -> None:
    """``@Boss`` is held at the gate by an earlier turn: the asked message waits for it
    past the deadline, and the error says so — and where to follow it from."""
    team = served.client.create_team("turns")
    team.send("wait first")
    assert gate_tool.ENTERED.wait(30)
    with pytest.raises(NoReplyError) as caught:
        team.ask("hello", timeout=2)
    asked = caught.value.asked
    asked_at = next(
        r.seq
        for r in served.storage.events.read(team.team_id)
        if isinstance(r.message, SentMessage) and r.message.message.id == asked
    )
    assert str(caught.value) == (
        f"no answer from @Boss to message {asked} within 2s; still running: a message to "
        f"@Boss not handled yet; follow it with client.get_team('{team.team_id}')"
        f".follow({asked_at}), or ask with a longer timeout"
    )
    gate_tool.OPEN.set()  # the message is handled then, and answered: ask again to get one
    assert team.ask("again", timeout=60).content.startswith("[scripted] you said again")


def test_a_failed_turn_is_an_error_naming_who_and_why(served: Served) -> None:
    team = served.client.create_team("turns")
    with pytest.raises(TurnFailedError) as caught:
        team.ask("fail", timeout=60)
    error = caught.value
    assert (error.agent, error.outcome) == ("@Boss", "failed")
    assert str(error).startswith("@Boss's turn failed: ") and "no_such_tool" in str(error)
    assert "\n" not in str(error)
    assert team.ask("still there?", timeout=60).content.startswith("[scripted] you said still")


def test_an_interrupted_turn_is_an_error_too(served: Served) -> None:
    team = served.client.create_team("turns")
    failures: list[BaseException] = []

    def asking() -> None:
        try:
            team.ask("wait for me", timeout=60)
        except AskError as exc:
            failures.append(exc)

    asker = threading.Thread(target=asking, daemon=True)
    asker.start()
    assert gate_tool.ENTERED.wait(30)
    assert team.interrupt() == ["@Boss"]
    gate_tool.OPEN.set()
    asker.join(60)
    assert not asker.is_alive() and len(failures) == 1
    error = failures[0]
    assert isinstance(error, TurnFailedError) and error.outcome == "interrupted"
    assert str(error) == "@Boss's turn was interrupted before it answered (@Human cancelled it)"


def test_an_exchange_that_ends_without_an_answer_says_what_came_instead(
    served: Served,
) -> None:
    """``@Boss`` asks a question back, a ``request``, and its turn ends: nothing is left
    to do, so ``ask`` says so at once (not at its deadline), quoting the question."""
    team = served.client.create_team("turns")
    with pytest.raises(NoReplyError) as caught:
        team.ask("ask colour", timeout=600)
    assert str(caught.value) == (
        f"@Boss finished without answering message {caught.value.asked}: the last message to "
        f"you was @Boss's request, which you may answer with process_human_input: "
        f"'Which colour?'"
    )


def test_a_closing_notification_is_the_answer(served: Served) -> None:
    """``@Boss`` only tells the person (a ``notification``) and its turn ends: that is the
    answer, as ``akgentic run -m`` prints it (it was a NoReplyError)."""
    team = served.client.create_team("turns")
    answer = team.ask("tell the news", timeout=60)
    assert (answer.sender, answer.content) == ("@Boss", "Noted: the news")
    assert answer.message.type == "notification" and answer.message.parent_id == answer.asked


def test_a_refused_message_is_the_server_s_error_and_nothing_waits(served: Served) -> None:
    team = served.client.create_team("turns")
    with pytest.raises(ServerError) as caught:
        team.ask("hi", to="@Nobody", timeout=600)
    assert caught.value.status == 422 and "@Nobody is not a member" in caught.value.detail


def test_a_message_the_team_s_stop_cuts_is_an_error_saying_a_resume_offers_it(
    served: Served,
) -> None:
    """The message waits behind a turn at the gate; the team is stopped, cutting both:
    the asked message's turn never runs, and ``ask`` says so, with how to get it done."""
    team = served.client.create_team("turns")
    team.send("wait first")
    assert gate_tool.ENTERED.wait(30)
    failures: list[BaseException] = []

    def asking() -> None:
        try:
            team.ask("queued", timeout=120)
        except AskError as exc:
            failures.append(exc)

    asker = threading.Thread(target=asking, daemon=True)
    asker.start()

    def queued() -> bool:
        return any(
            isinstance(r.message, SentMessage)
            and getattr(r.message.message, "content", "") == "queued"
            for r in served.storage.events.read(team.team_id)
        )

    wait_until(queued, 30, "the asked message is in the log")
    served.client.stop_team(team.team_id, grace_timeout=5, interrupt=True)
    asker.join(60)
    assert not asker.is_alive() and len(failures) == 1
    error = failures[0]
    assert isinstance(error, TurnFailedError) and error.outcome == "interrupted"
    assert str(error) == (
        "@Boss's turn was cut by the team's stop before it answered; a resume offers it "
        "again (resume_team(..., retry_interrupted=True))"
    )
    assert error.asked in served.client.info(team.team_id).interrupted


def test_a_team_that_stops_with_the_exchange_unsettled_says_how_to_resume(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stream ends (the team stopped: ``follow`` returns) before anything of the
    exchange is read: ``ask`` says the team stopped, what was running, how to resume."""
    team = served.client.create_team("turns")

    def stopped_at_once(self: RemoteTeam, from_seq: int = 1, **kwargs: Any) -> Iterator[Any]:
        yield from ()

    monkeypatch.setattr(RemoteTeam, "follow", stopped_at_once)
    with pytest.raises(NoReplyError) as caught:
        team.ask("hello", timeout=120)
    asked = caught.value.asked
    seq = next(
        r.seq
        for r in served.storage.events.read(team.team_id)
        if isinstance(r.message, SentMessage) and r.message.message.id == asked
    )
    assert str(caught.value) == (
        f"team turns ({team.team_id}) stopped before @Boss answered message {asked} (still "
        f"running then: nothing of it read yet); resume it with "
        f"client.resume_team('{team.team_id}') and read "
        f"client.get_team('{team.team_id}').follow({seq})"
    )


@pytest.mark.parametrize("timeout", [0, -1, float("nan")])
def test_a_timeout_that_cannot_wait_is_refused_before_anything_is_sent(
    served: Served, timeout: float
) -> None:
    team = served.client.create_team("turns")
    with pytest.raises(ValueError) as caught:
        team.ask("hello", timeout=timeout)
    assert str(caught.value) == f"ask's timeout is in seconds, more than 0, not {timeout!r}"
    sent = [
        r for r in served.storage.events.read(team.team_id) if isinstance(r.message, SentMessage)
    ]
    assert sent == []  # nothing was sent


def test_a_deadline_after_the_server_went_away_says_so_not_that_the_turn_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server stops (a second Ctrl-C) while ``@Boss`` holds the asked message behind
    a gated turn: at the deadline ``ask`` said the turn was 'still running' on a server
    that was gone. The deadline fires only once the server has stopped (a gated timer)."""
    gate_tool.ENTERED.clear()
    gate_tool.OPEN.clear()
    gone = threading.Event()

    class AfterTheServer:  # threading.Timer's shape, firing once the server is gone
        def __init__(self, interval: float, function: Any) -> None:
            self.function = function
            self.daemon = True

        def start(self) -> None:
            threading.Thread(target=lambda: gone.wait(30) and self.function(), daemon=True).start()

        def cancel(self) -> None:
            pass

    monkeypatch.setattr(
        "akgentic.client.client.threading",
        SimpleNamespace(Event=threading.Event, Timer=AfterTheServer),
    )
    storage = open_storage(sqlite_url(tmp_path / "server.db"))
    system = ActorSystem()
    manager = TeamManager(system, storage)
    app = create_app(
        manager, ServerSettings(port=0, heartbeat=0.5), cards=[TeamCard.from_yaml(TURNS)]
    )
    server = BackgroundServer(app).start()
    client = AkgenticClient(server.url)
    caught: list[BaseException] = []
    try:
        team = client.create_team("turns")
        team.send("wait first")
        assert gate_tool.ENTERED.wait(30)

        def ask() -> None:
            try:
                team.ask("hello", timeout=60)
            except BaseException as exc:  # the test reads it
                caught.append(exc)

        asking = threading.Thread(target=ask)
        asking.start()
        wait_until(
            lambda: any(
                isinstance(r.message, SentMessage)
                and getattr(r.message.message, "content", "") == "hello"
                for r in storage.events.read(team.team_id)
            ),
            timeout=30,
            what="the asked message on the log",
        )
        server.stop()
        gone.set()
        asking.join(60)
        assert not asking.is_alive()
    finally:
        gate_tool.OPEN.set()
        client.close()
        server.stop()
        manager.shutdown(5)
        system.shutdown()
        storage.close()
    [error] = caught
    assert isinstance(error, NoReplyError)
    words = str(error)
    assert words.startswith(
        f"no answer from @Boss to message {error.asked} within 60s: the server stopped "
        f"answering (cannot reach {server.url}"
    ), words
    assert f"resume the team with client.resume_team('{team.team_id}')" in words
    assert "still running" not in words


def test_an_agent_stopped_at_max_agent_hops_answers_with_its_report(tmp_path: Path) -> None:
    """@A and @B answer each other until the team's max_agent_hops; @A, told to stop,
    reports to the person: that report is the answer (it was a notification, and ask said
    @A 'finished without answering')."""
    card = tmp_path / "ping-pong.yaml"
    card.write_text(PING_PONG)
    retries: list[str] = []
    with (
        register_model("hops-A", player("@A", retries)),
        register_model("hops-B", player("@B", retries)),
    ):
        for served in serve_cards(tmp_path, ServerSettings(port=0, heartbeat=0.5), (card,)):
            answer = served.client.create_team("ping-pong").ask("start", timeout=60)
            assert (answer.sender, answer.content) == ("@A", "@A: we went round in circles")
            assert answer.message.type == "response"
    assert len(retries) == 1 and "Stop: do not write to @B." in retries[0]


def test_ask_on_a_stopped_team_says_to_resume_it_with_the_clients_call(served: Served) -> None:
    """The server's 409 speaks HTTP (``POST /teams/ID/resume``); ``ask`` says what a Python
    caller does instead, and that nothing was sent. Another 409 is still a ServerError."""
    team = served.client.create_team("turns")
    assert team.stop() is True
    last = served.storage.events.last_seq(team.team_id)
    with pytest.raises(NoReplyError) as caught:
        team.ask("anyone?", timeout=60)
    assert caught.value.asked is None
    assert str(caught.value) == (
        f"team turns ({team.team_id}) is not running, so nothing was sent; resume it with "
        f"client.resume_team('{team.team_id}'), then ask again"
    )
    assert served.storage.events.last_seq(team.team_id) == last  # nothing was sent
    with pytest.raises(ServerError) as raw:
        team.send("anyone?")
    assert (raw.value.status, raw.value.code) == (409, "team_not_running")
    resumed = served.client.resume_team(team.team_id)
    assert resumed.ask("hello", timeout=60).content.startswith("[scripted] you said hello")

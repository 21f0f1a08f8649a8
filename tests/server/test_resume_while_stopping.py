"""A resume asked of the server while it stops the same team (``POST /teams/{id}/stop``
still waiting for a turn) waits for that stop, then resumes the team: it was a 409
"already running" although a moment later it would have worked. Its answer's
``first_seq`` is where the resumed run began, after what the stop wrote meanwhile."""

from __future__ import annotations

import os
import socket
import threading
from typing import Any

import pytest

from akgentic.client import TEAM_STOPPING, AkgenticClient, ServerError, StopInProgress
from akgentic.core import EventMessage, StartMessage, StopMessage, TeamStoppingEvent
from akgentic.storage import EventRecord, stopping_resource
from akgentic.team import TeamRuntime
from tests.server import gate_tool
from tests.server.conftest import Served, until


def stop_started(record: EventRecord) -> bool:
    msg = record.message
    return isinstance(msg, EventMessage) and isinstance(msg.event, TeamStoppingEvent)


def in_a_thread(call: Any, outcome: list[Any], done: threading.Event) -> threading.Thread:
    """``call()`` on a thread: what it returned or raised goes to ``outcome``, then
    ``done`` is set."""

    def run() -> None:
        try:
            outcome.append(call())
        except Exception as exc:
            outcome.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_resume_while_the_server_stops_the_team_waits_for_the_stop_then_resumes_it(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    team = served.client.create_team("turns")
    team.send("wait here")
    assert gate_tool.ENTERED.wait(60)  # the turn holds the stop in its grace
    stopper, resumer = AkgenticClient(served.url), AkgenticClient(served.url)
    try:
        stopped: list[Any] = []
        stopping = in_a_thread(lambda: stopper.stop_team(team.team_id), stopped, threading.Event())
        until(team, stop_started)

        looked = threading.Event()  # the resume looked whether a stop is in progress
        leases = served.manager.storage.leases
        inspect = leases.inspect

        def spy(resource: str) -> Any:
            try:
                return inspect(resource)
            finally:
                if resource == stopping_resource(team.team_id):
                    looked.set()

        monkeypatch.setattr(leases, "inspect", spy)
        resumed: list[Any] = []
        resuming = in_a_thread(lambda: resumer.resume_team(team.team_id), resumed, looked)
        assert looked.wait(60)
        assert resumed == []  # neither refused nor resumed: waiting for the stop
        waited_at = served.manager.storage.events.last_seq(team.team_id)

        gate_tool.OPEN.set()
        stopping.join(90)
        resuming.join(90)
        assert not stopping.is_alive() and not resuming.is_alive()
        assert [info.status for info in stopped] == ["STOPPED"]
        [remote] = resumed
        assert remote.team_id == team.team_id, remote
        info = served.client.info(team.team_id)
        assert info.status == "RUNNING" and info.running
        # the resumed run began after the stop's last records, written while it waited
        began = remote.info.first_seq
        assert began is not None and began > waited_at + 1
        running = served.manager.get_team(team.team_id)
        assert isinstance(running, TeamRuntime)
        # the resume answers before its run's first records are committed: wait for them
        first = next(iter(running.follow(began, idle_timeout=60)))
        assert first.seq == began
        resumed_began = first.message
        logged = {r.seq: r.message for r in served.manager.storage.events.read(team.team_id)}
        stop_ended = logged[began - 1]
        assert isinstance(stop_ended, StopMessage)
        assert stop_ended.sender is not None and stop_ended.sender.name == "@Orchestrator"
        assert isinstance(resumed_began, StartMessage)
    finally:
        gate_tool.OPEN.set()
        stopper.close()
        resumer.close()


def test_a_team_being_stopped_says_who_stops_it_and_how_long_a_resume_would_wait(
    served: Served,
) -> None:
    """``GET /teams/{id}`` of a team the server is stopping (a turn at the gate holds the
    stop in its grace): ``stopping`` names the server's process and how long a resume
    asked now would wait at most (the grace of 2s and the margin); null before the stop,
    once it has ended, and in a page of teams."""
    team = served.client.create_team("turns")
    assert served.client.info(team.team_id).stopping is None
    team.send("wait here")
    assert gate_tool.ENTERED.wait(60)
    stopped: list[Any] = []
    stopping = in_a_thread(
        lambda: served.client.stop_team(team.team_id, 2), stopped, threading.Event()
    )
    try:
        until(team, stop_started)
        stop = served.client.info(team.team_id).stopping
        listed = {t.team_id: t for t in served.client.list_teams()}[team.team_id]
    finally:
        gate_tool.OPEN.set()
        stopping.join(90)

    assert stop == StopInProgress(pid=os.getpid(), host=socket.gethostname(), up_to=17.0)
    assert listed.stopping is None
    assert [info.status for info in stopped] == ["STOPPED"]
    assert served.client.info(team.team_id).stopping is None


def test_a_resume_asked_not_to_wait_for_a_stop_is_refused_at_once_with_a_code(
    served: Served,
) -> None:
    """``wait_for_stop: false`` (what ``teams resume --server`` asks, waiting itself, so
    its person can give the wait up): a resume while the server stops the team is a 409
    at once, code ``team_stopping``, while the stop still holds at the gate — and nothing
    is resumed: once the stop has ended, the team is STOPPED, not running."""
    team = served.client.create_team("turns")
    team.send("wait here")
    assert gate_tool.ENTERED.wait(60)  # the turn holds the stop in its grace
    stopped: list[Any] = []
    stopping = in_a_thread(
        lambda: served.client.stop_team(team.team_id), stopped, threading.Event()
    )
    try:
        until(team, stop_started)
        with pytest.raises(ServerError) as refused:
            served.client.resume_team(team.team_id, wait_for_stop=False)
        still_stopping = stopping.is_alive()
    finally:
        gate_tool.OPEN.set()
        stopping.join(90)

    assert (refused.value.status, refused.value.code) == (409, TEAM_STOPPING)
    assert refused.value.detail == (
        f"team {team.team_id} is stopping, nothing resumed: ask again once its stop has ended "
        f"(GET /teams/{team.team_id}: stopping is null)"
    )
    assert still_stopping  # refused at once, not once the stop had ended
    assert [info.status for info in stopped] == ["STOPPED"]
    info = served.client.info(team.team_id)
    assert info.status == "STOPPED" and not info.running

"""A deleted team's streams: its own stream says ``deleted`` (with the team's id) after
its last record and ends — never ``stopped`` then keep-alives forever — and the
all-teams stream says ``deleted`` for it; the client's ``follow`` raises
``TeamDeletedError`` after yielding every record, and on a reconnection too when the
server says ``team_not_found`` — but never for a 404 from something else (a wrong base
URL, a proxy), which is a ``ServerError`` saying what to check. Nothing sleeps: readers
count keep-alives (a stream still open after many of them has not ended) and tests wait
on events with bounds."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from uuid import UUID

import httpx
import pytest

from akgentic.client import AkgenticClient, RemoteTeam, ServerError, TeamDeletedError, parse_sse
from akgentic.server import ServerSettings
from akgentic.storage import open_storage, sqlite_url
from tests.server.conftest import Served, kind, serve_cards, until
from tests.server.proxy import DroppingProxy
from tests.server.stub import StubServer

KEEP_ALIVES = 25
"""Keep-alives after the delete after which a stream is taken for one that never ends."""


@dataclass
class Reader:
    """Reads a stream on a thread: the events (``""`` for a keep-alive), whether the
    server ended it, and an event set once it has sent everything stored (a keep-alive or
    a notice)."""

    url: str
    params: dict[str, float] = field(default_factory=lambda: {"heartbeat": 0.2})
    kinds: list[str] = field(default_factory=list)
    data: list[str] = field(default_factory=list)
    ended = False
    idle: threading.Event = field(default_factory=threading.Event)
    deleted: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        after_delete = 0
        with httpx.stream("GET", self.url, params=self.params, timeout=60) as response:
            for event in parse_sse(response.iter_lines()):
                self.kinds.append(event.event)
                self.data.append(event.data)
                if event.event in ("", "stopped"):
                    self.idle.set()
                if self.deleted.is_set() and event.event == "":
                    after_delete += 1
                    if after_delete >= KEEP_ALIVES:
                        return  # kept alive long after the delete: it would never end
            self.ended = True

    def join(self) -> None:
        self.thread.join(60)
        assert not self.thread.is_alive()

    def notices(self) -> list[str]:
        return [k for k in self.kinds if k in ("stopped", "deleted")]


def test_deleting_a_running_team_ends_its_stream_with_one_deleted_event(served: Served) -> None:
    team = served.client.create_team("turns")
    reader = Reader(f"{served.url}/teams/{team.team_id}/events")
    assert reader.idle.wait(30)
    served.client.delete_team(team.team_id)  # the team's stop is not counted against it
    reader.deleted.set()
    reader.join()
    assert reader.ended, f"still open after {KEEP_ALIVES} keep-alives: {reader.notices()}"
    assert reader.kinds[-1] == "deleted"
    assert reader.notices() == ["deleted"]  # not "stopped" on the way
    assert json.loads(reader.data[-1]) == {"team_id": str(team.team_id)}
    records = [k for k in reader.kinds if k not in ("", "deleted")]
    assert len(records) == served.storage.events.last_seq(team.team_id)  # every record first


@pytest.mark.parametrize("purge", [False, True])
def test_deleting_a_stopped_team_ends_its_open_stream(served: Served, purge: bool) -> None:
    team = served.client.create_team("turns")
    team.stop()
    reader = Reader(f"{served.url}/teams/{team.team_id}/events")
    assert reader.idle.wait(30)
    served.client.delete_team(team.team_id, purge=purge)
    reader.deleted.set()
    reader.join()
    assert reader.ended, f"still open after {KEEP_ALIVES} keep-alives: {reader.notices()}"
    assert reader.notices() == ["stopped", "deleted"]
    assert reader.kinds[-1] == "deleted"


def test_a_stream_of_a_team_already_deleted_sends_its_log_then_deleted(served: Served) -> None:
    team = served.client.create_team("turns")
    served.client.delete_team(team.team_id)
    reader = Reader(f"{served.url}/teams/{team.team_id}/events")
    reader.deleted.set()
    reader.join()
    assert reader.ended and reader.notices() == ["deleted"]
    last = served.storage.events.last_seq(team.team_id)
    assert [k for k in reader.kinds if k not in ("", "deleted")].__len__() == last


def test_a_team_deleted_by_another_process_ends_its_stream(served: Served) -> None:
    """Deleted behind the server's back (``akgentic teams delete`` over the same store):
    its stream says ``stopped``, then ``deleted`` within a heartbeat, and ends."""
    team = served.client.create_team("turns")
    team.stop()
    reader = Reader(f"{served.url}/teams/{team.team_id}/events")
    assert reader.idle.wait(30)
    served.storage.teams.delete(team.team_id)
    reader.deleted.set()
    reader.join()
    assert reader.ended, f"still open after {KEEP_ALIVES} keep-alives: {reader.notices()}"
    assert reader.notices() == ["stopped", "deleted"]


@pytest.mark.parametrize("purge", [False, True])
def test_a_team_deleted_through_another_store_handle_ends_its_stream_before_a_heartbeat(
    served: Served, tmp_path: Path, purge: bool
) -> None:
    """Deleted (or purged) by another process, which writes no record: the stream says
    ``deleted`` and ends at once — not at its next keep-alive, minutes away here."""
    team = served.client.create_team("turns")
    team.stop()
    reader = Reader(f"{served.url}/teams/{team.team_id}/events", {"heartbeat": 300})
    assert reader.idle.wait(30)  # "stopped": everything stored was sent
    other = open_storage(sqlite_url(tmp_path / "server.db"))  # another process's handle
    try:
        if purge:
            assert other.teams.purge(team.team_id)
        else:
            other.teams.delete(team.team_id)
    finally:
        other.close()
    reader.thread.join(30)  # well before the keep-alive that ended it before
    assert not reader.thread.is_alive(), f"still open: {reader.kinds}"
    assert reader.ended and reader.notices() == ["stopped", "deleted"], reader.kinds
    assert reader.kinds[-1] == "deleted"
    assert json.loads(reader.data[-1]) == {"team_id": str(team.team_id)}


def test_the_all_teams_stream_says_deleted_once_for_each_deleted_team(served: Served) -> None:
    running = served.client.create_team("turns")
    stopped = served.client.create_team("turns")
    stopped.stop()
    seen: list[tuple[str, str]] = []
    ready = threading.Event()
    both = threading.Event()

    def read() -> None:
        with httpx.stream(
            "GET", f"{served.url}/events", params={"heartbeat": 0.2}, timeout=60
        ) as response:
            for event in parse_sse(response.iter_lines()):
                if event.event == "":
                    ready.set()
                elif event.event in ("stopped", "deleted"):
                    seen.append((event.event, json.loads(event.data)["team_id"]))
                    if len([e for e in seen if e[0] == "deleted"]) == 2:
                        both.set()
                if both.is_set() and event.event == "":
                    return  # a keep-alive after both: no second notice came between

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert ready.wait(30)
    served.client.delete_team(running.team_id)
    served.client.delete_team(stopped.team_id)
    reader.join(60)
    assert not reader.is_alive()
    assert seen == [("deleted", str(running.team_id)), ("deleted", str(stopped.team_id))]


def test_follow_yields_every_record_then_raises_team_deleted(served: Served) -> None:
    team = served.client.create_team("turns")
    team.send("hello")
    until(team, lambda r: kind(r) == "End")
    got: list[int] = []
    failure: list[BaseException] = []
    caught_up = threading.Event()
    last = served.storage.events.last_seq(team.team_id)

    def follow() -> None:
        try:
            for record in team.follow(end_when_stopped=False):
                got.append(record.seq)
                if record.seq >= last:
                    caught_up.set()
        except BaseException as exc:
            failure.append(exc)

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    assert caught_up.wait(30)
    served.client.delete_team(team.team_id)
    follower.join(60)
    assert not follower.is_alive()
    assert got == list(range(1, served.storage.events.last_seq(team.team_id) + 1))
    assert len(failure) == 1 and isinstance(failure[0], TeamDeletedError), failure
    assert failure[0].team_id == team.team_id and failure[0].status == 410
    assert str(team.team_id) in str(failure[0])
    assert isinstance(team.team_id, UUID)


@dataclass
class Follower:
    """``team.follow`` through a proxy, on a thread: the seqs yielded, what it raised,
    and an event set once it has yielded the record ``last``."""

    team: RemoteTeam
    proxy: DroppingProxy
    last: int
    got: list[int] = field(default_factory=list)
    failure: list[BaseException] = field(default_factory=list)
    caught_up: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self.thread.start()

    def _follow(self) -> None:
        with AkgenticClient(self.proxy.url) as client:
            try:
                for record in client.get_team(self.team.team_id).follow(end_when_stopped=False):
                    self.got.append(record.seq)
                    if record.seq >= self.last:
                        self.caught_up.set()
            except BaseException as exc:
                self.failure.append(exc)

    def join(self) -> None:
        self.thread.join(60)
        assert not self.thread.is_alive()


def _followed(served: Served) -> tuple[RemoteTeam, DroppingProxy, Follower]:
    """A stopped team with a turn in its log, followed through a proxy up to its last
    record (the stream then stays open: ``end_when_stopped=False``)."""
    team = served.client.create_team("turns")
    team.send("hello")
    until(team, lambda r: kind(r) == "End")
    team.stop()
    port = httpx.URL(served.url).port
    assert port is not None
    proxy = DroppingProxy(port, cut_after=0, drops=0)
    follower = Follower(team, proxy, served.storage.events.last_seq(team.team_id))
    assert follower.caught_up.wait(30)
    return team, proxy, follower


def test_a_reconnection_to_a_purged_team_raises_team_deleted(served: Served) -> None:
    """The connection drops; the team is purged before the client is back: the server's
    404 says ``team_not_found``, so ``follow`` ends as for a deleted team."""
    team, proxy, follower = _followed(served)
    proxy.admit.clear()  # the reconnection waits until the team is gone
    assert proxy.cut_open() == 2
    served.client.delete_team(team.team_id, purge=True)
    proxy.admit.set()
    follower.join()
    proxy.close()
    assert follower.got == list(range(1, follower.last + 1))
    assert len(follower.failure) == 1, follower.failure
    failure = follower.failure[0]
    assert isinstance(failure, TeamDeletedError) and failure.team_id == team.team_id


def test_a_reconnection_answered_404_by_something_else_is_an_error_saying_what_to_check(
    served: Served,
) -> None:
    """The connection drops and the address now reaches another server (a proxy's plain
    404): the team is not taken for deleted; ``follow`` raises a one-line ServerError
    naming the address to check."""
    team, proxy, follower = _followed(served)
    with StubServer(404, "<html><body><h1>404 Not Found</h1></body></html>", "text/html") as stub:
        proxy.upstream_port = stub.port
        assert proxy.cut_open() == 2
        follower.join()
    proxy.close()
    assert follower.got == list(range(1, follower.last + 1))
    assert len(follower.failure) == 1, follower.failure
    failure = follower.failure[0]
    assert type(failure) is ServerError and failure.status == 404, failure
    said = str(failure)
    assert "\n" not in said
    assert said == (
        f"404: {proxy.url}/teams/{team.team_id}/events is no team's event stream (404 Not "
        f"Found); check that {proxy.url} is the akgentic server's address, with the path "
        f"prefix a proxy serves it under, and that it is an akgentic server "
        f"(GET {proxy.url}/health says its version)"
    )
    assert served.client.info(team.team_id).status == "STOPPED"  # the team is still there


def test_following_under_a_wrong_path_prefix_says_to_check_the_base_url(served: Served) -> None:
    """A base URL with a path the server does not serve under: the server's own 404 (no
    such route, no ``team_not_found``) is an error saying to check the base URL."""
    team = served.client.create_team("turns")
    with AkgenticClient(f"{served.url}/api") as wrong, pytest.raises(ServerError) as err:
        next(RemoteTeam(wrong, team.info).follow(idle_timeout=5))
    assert type(err.value) is ServerError and err.value.status == 404
    said = str(err.value)
    assert "\n" not in said
    assert f"no route GET /api/teams/{team.team_id}/events" in said
    assert f"check that {served.url}/api is the akgentic server's address" in said


def test_the_server_s_404_for_an_unknown_team_carries_the_code_team_not_found(
    served: Served,
) -> None:
    team = served.client.create_team("turns")
    served.client.delete_team(team.team_id, purge=True)
    for path in ("", "/events", "/messages", "/members"):
        response = httpx.get(f"{served.url}/teams/{team.team_id}{path}", timeout=30)
        assert response.status_code == 404, path
        assert response.json() == {
            "detail": f"no team {team.team_id}; list the teams with GET /teams",
            "code": "team_not_found",
        }
    with pytest.raises(ServerError) as err:
        served.client.info(team.team_id)
    assert err.value.code == "team_not_found"
    with pytest.raises(ServerError) as err:  # never followed: an error, not a deletion
        next(team.follow(idle_timeout=5))
    assert type(err.value) is ServerError and err.value.code == "team_not_found"
    assert str(err.value) == f"404: no team {team.team_id}; list the teams with GET /teams"
    nowhere = httpx.get(f"{served.url}/nowhere", timeout=30).json()
    assert "code" not in nowhere  # a route the server lacks has no code


def test_a_team_purged_while_its_stop_waits_is_a_404_not_a_500(served: Served) -> None:
    """``akgentic teams delete --purge`` (another process) while this server stops the team:
    the stop, waiting for the turn in progress, finds the team gone — a 404 with the code
    ``team_not_found``, as for any purged team, not a 500 (the manager's LookupError)."""
    from tests.server import gate_tool

    team = served.client.create_team("turns")
    team.send("wait please")
    assert gate_tool.ENTERED.wait(30)
    answers: list[httpx.Response] = []
    path = f"/teams/{team.team_id}/stop"
    stopper = threading.Thread(
        target=lambda: answers.append(served.client.request("POST", path, allow=(404, 500)))
    )
    stopper.start()
    until(team, lambda r: kind(r) == "TeamStoppingEvent")  # the stop waits for the turn
    served.storage.teams.purge(team.team_id)
    gate_tool.OPEN.set()
    stopper.join(60)
    assert answers, "the stop did not answer"
    assert answers[0].status_code == 404, answers[0].text
    assert answers[0].json()["code"] == "team_not_found"


def test_a_follow_rides_out_a_restart_of_the_server_on_the_same_store(tmp_path: Path) -> None:
    """The server stops under a follow and a new one starts on the same store (another
    port, behind the same proxy): the follow reconnects and goes on from the last record
    it had — the resumed team's new records come, none lost and none twice."""
    settings = ServerSettings(port=0, heartbeat=0.5)
    first = serve_cards(tmp_path, settings)
    team, proxy, follower = _followed(next(first))
    proxy.admit.clear()  # reconnections wait for the new server (the proxy dials at once)
    for _ in first:  # the first server stops
        pass
    second = serve_cards(tmp_path, settings)
    again = next(second)
    try:
        port = httpx.URL(again.url).port
        assert port is not None
        proxy.upstream_port = port
        proxy.cut_open()
        proxy.admit.set()
        follower.caught_up.clear()
        resumed = again.client.resume_team(team.team_id)
        resumed.send("hello again")
        until(resumed, lambda r: kind(r) == "End", from_seq=follower.last + 1)
        follower.last = again.storage.events.last_seq(team.team_id)
        assert follower.caught_up.wait(30), follower.got
        again.client.delete_team(team.team_id)
        follower.join()
        last = again.storage.events.last_seq(team.team_id)
    finally:
        proxy.close()
        for _ in second:
            pass
    assert follower.got == list(range(1, last + 1))
    assert len(follower.failure) == 1 and isinstance(follower.failure[0], TeamDeletedError)

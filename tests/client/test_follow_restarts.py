"""A follow through a proxy while the server behind it restarts: the proxy's 502, 503 and
504 are a restart, not the end — ``follow`` reconnects, backing off, and goes on after
the last record it delivered (none lost, none twice); past its bound it gives up with one
line saying what it saw."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from akgentic.client import AkgenticClient, RemoteTeam, ServerError, TeamDeletedError
from akgentic.server import ServerSettings
from akgentic.storage import EventRecord
from tests.client.gateway import Gateway
from tests.processes import wait_until
from tests.server.conftest import Served, kind, serve_cards, until
from tests.server.stub import StubServer


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serve_cards(tmp_path, ServerSettings(port=0, heartbeat=0.5))


@pytest.fixture
def gateway(served: Served) -> Iterator[Gateway]:
    port = httpx.URL(served.url).port
    assert port is not None
    proxy = Gateway(port)
    yield proxy
    proxy.admit.set()
    proxy.close()


class Follower:
    """``follow`` of a team through ``url`` on a thread: the seqs it yielded, what it
    raised."""

    def __init__(self, url: str, team: RemoteTeam, *, end_when_stopped: bool = True) -> None:
        self.end_when_stopped = end_when_stopped
        self.got: list[int] = []
        self.failure: list[BaseException] = []
        self._client = AkgenticClient(url)
        self._team = RemoteTeam(self._client, team.info)
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self.thread.start()

    def _follow(self) -> None:
        try:
            for record in self._team.follow(end_when_stopped=self.end_when_stopped):
                self.got.append(record.seq)
        except BaseException as exc:  # handed to the test
            self.failure.append(exc)
        finally:
            self._client.close()

    def has(self, seq: int) -> bool:
        return bool(self.got) and self.got[-1] >= seq


def _ended(records: list[EventRecord]) -> int:
    return records[-1].seq


def test_a_follow_rides_out_a_proxys_502_503_504_and_loses_nothing(
    served: Served, gateway: Gateway
) -> None:
    team = served.client.create_team("turns")
    team.send("hello")
    first = _ended(until(team, lambda r: kind(r) == "End"))
    follower = Follower(gateway.url, team)
    wait_until(lambda: follower.has(first), 30, "the follower read the first turn")
    gateway.admit.clear()  # the server is "down" until the test says otherwise
    gateway.refusals.extend([502, 503, 504])
    gateway.cut_open()
    wait_until(lambda: gateway.refused == [502, 503, 504], 30, "three refused reconnections")
    team.send("hello again")  # written while the follower is away
    second = _ended(until(team, lambda r: kind(r) == "End", from_seq=first + 1))
    assert not follower.has(second)
    gateway.admit.set()
    wait_until(lambda: follower.has(second), 30, "the follower read the second turn")
    team.stop()
    follower.thread.join(30)
    assert not follower.thread.is_alive() and follower.failure == []
    last = served.storage.events.last_seq(team.team_id)
    assert follower.got == list(range(1, last + 1))  # none lost, none twice
    assert gateway.put_through == 2


def test_a_follow_rides_out_a_real_restart_behind_the_proxy(tmp_path: Path) -> None:
    """The server stops; the proxy answers 502, 503, 502 while a new one starts on the same
    store (another port); the team is resumed there: the follow goes on from its last
    record, through the old run's last records and the new run's, each once."""
    settings = ServerSettings(port=0, heartbeat=0.5)
    first = serve_cards(tmp_path, settings)
    served = next(first)
    team = served.client.create_team("turns")
    team.send("hello")
    until(team, lambda r: kind(r) == "End")
    port = httpx.URL(served.url).port
    assert port is not None
    gateway = Gateway(port)
    follower = Follower(gateway.url, team, end_when_stopped=False)
    try:
        before = served.storage.events.last_seq(team.team_id)
        wait_until(lambda: follower.has(before), 30, "the follower read the first turn")
        gateway.admit.clear()
        gateway.refusals.extend([502, 503, 502])
        for _ in first:  # the first server stops (and its team with it)
            pass
        gateway.cut_open()
        wait_until(lambda: gateway.refused == [502, 503, 502], 30, "three refused reconnections")
        second = serve_cards(tmp_path, settings)
        again = next(second)
        try:
            port = httpx.URL(again.url).port
            assert port is not None
            gateway.upstream_port = port
            gateway.admit.set()
            resumed = again.client.resume_team(team.team_id)
            resumed.send("hello again")
            until(resumed, lambda r: kind(r) == "End", from_seq=before + 1)
            last = again.storage.events.last_seq(team.team_id)
            wait_until(lambda: follower.has(last), 30, "the follower read the resumed run")
            again.client.delete_team(team.team_id)
            follower.thread.join(30)
            last = again.storage.events.last_seq(team.team_id)
        finally:
            for _ in second:
                pass
    finally:
        gateway.admit.set()
        gateway.close()
    assert not follower.thread.is_alive()
    assert follower.got == list(range(1, last + 1))  # none lost, none twice
    assert [type(f) for f in follower.failure] == [TeamDeletedError]


def test_a_proxy_that_stays_down_ends_the_follow_saying_what_it_saw(served: Served) -> None:
    team = served.client.create_team("turns")
    with StubServer(502, "<html>Bad Gateway</html>", "text/html") as stub:
        with AkgenticClient(stub.url) as client, pytest.raises(ServerError) as caught:
            list(RemoteTeam(client, team.info).follow(reconnects=2))
        assert stub.requests == 3  # the first try and two reconnections
    message = str(caught.value)
    assert caught.value.status == 0 and "\n" not in message
    assert message.startswith(
        f"the event stream keeps failing: {stub.url}/teams/{team.team_id}/events answered "
        f"502 Bad Gateway (text/html), which is no akgentic server's answer: "
    )
    assert f"check that `akgentic serve` runs behind {stub.url}" in message
    assert message.endswith(
        "(3 attempts in a row failed: 502 Bad Gateway 3x; follow(reconnects=N) tries more times)"
    )


def test_a_refused_connection_after_following_is_a_restart_too(
    served: Served, gateway: Gateway
) -> None:
    """The proxy goes away with the server: the stream is cut, then nothing listens
    (connection refused). Both are retried as a restart, in one tally, up to the bound."""
    team = served.client.create_team("turns")
    team.send("hello")
    until(team, lambda r: kind(r) == "End")
    team.stop()
    last = served.storage.events.last_seq(team.team_id)
    with AkgenticClient(gateway.url) as client:
        records = RemoteTeam(client, team.info).follow(end_when_stopped=False, reconnects=2)
        seqs = [next(records).seq for _ in range(last)]
        gateway.close()
        with pytest.raises(ServerError) as caught:
            next(records)
    assert seqs == list(range(1, last + 1))
    message = str(caught.value)
    assert "\n" not in message and message.startswith("the event stream keeps failing: ")
    assert f"cannot reach {gateway.url} (connection refused)" in message
    assert "(3 attempts in a row failed: connection refused 2x, connection cut 1x; " in message


def test_a_negative_bound_is_refused(served: Served) -> None:
    team = served.client.create_team("turns")
    with pytest.raises(ValueError) as caught:
        next(team.follow(reconnects=-1))
    assert str(caught.value) == "follow's reconnects is a count, 0 or more, not -1"

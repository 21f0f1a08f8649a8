"""The event streams read the store off the event loop: a store read that hangs (a slow
Postgres) holds up the stream that made it, never the server's other requests. Each
case holds one read an opening stream makes until the test lets it go; meanwhile
``/health`` answers, and then the stream goes on."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any
from uuid import UUID

import httpx
import pytest

from tests.server.conftest import Served


class Held:
    """Stands for a store call: the first call after it is installed whose arguments
    ``matches`` (made on a thread ``matches`` accepts) waits until :attr:`release`."""

    def __init__(self, real: Callable[..., Any], matches: Callable[..., bool]) -> None:
        self.real = real
        self.matches = matches
        self.entered = threading.Event()
        self.release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            hold = not self.entered.is_set() and self.matches(*args, **kwargs)
            if hold:
                self.entered.set()
        if hold:
            assert self.release.wait(60)
        return self.real(*args, **kwargs)


def _not_a_feed(team_id: UUID) -> Callable[..., bool]:
    """A call about ``team_id`` made by a stream, not by a feed's thread (which reads the
    store by design)."""

    def matches(asked: UUID, *_: Any, **__: Any) -> bool:
        return asked == team_id and not threading.current_thread().name.startswith("akgentic-feed")

    return matches


def _read_until(url: str, needle: str, lines: list[str]) -> None:
    with httpx.stream("GET", url, params={"heartbeat": 0.2}, timeout=60) as response:
        for line in response.iter_lines():
            lines.append(line)
            if line == needle:
                return


@pytest.mark.parametrize("read", ["record", "head", "running", "running_ids"])
def test_a_store_read_held_by_an_opening_stream_holds_up_no_other_request(
    served: Served, monkeypatch: pytest.MonkeyPatch, read: str
) -> None:
    """``record``: the team's record its stream checks first; ``head``: the last seq of
    the feed the stream makes; ``running``: whether the stopped team runs (here or in
    another process) once its stream has sent its log; ``running_ids``: the teams an
    all-teams stream follows. Each used to be read on the event loop: ``/health`` waited
    for it (a stalled Postgres stalled every stream)."""
    team = served.client.create_team("turns")
    served.client.stop_team(team.team_id)
    url, needle = f"{served.url}/teams/{team.team_id}/events", "event: stopped"
    held: Held
    if read == "record":
        held = Held(served.storage.teams.get, _not_a_feed(team.team_id))
        monkeypatch.setattr(served.storage.teams, "get", held)
    elif read == "head":
        held = Held(served.storage.events.last_seq, _not_a_feed(team.team_id))
        monkeypatch.setattr(served.storage.events, "last_seq", held)
    elif read == "running":
        held = Held(served.manager.get_team, _not_a_feed(team.team_id))
        monkeypatch.setattr(served.manager, "get_team", held)
    else:
        held = Held(served.manager.running, lambda: True)
        monkeypatch.setattr(served.manager, "running", held)
        url, needle = f"{served.url}/events", ": keep-alive"
    lines: list[str] = []
    stream = threading.Thread(target=_read_until, args=(url, needle, lines), daemon=True)
    stream.start()
    try:
        assert held.entered.wait(30), "the stream never made the read"
        health = httpx.get(f"{served.url}/health", timeout=30)  # fails: the loop waits
        assert health.status_code == 200 and health.json()["status"] == "ok"
    finally:
        held.release.set()
    stream.join(60)
    assert not stream.is_alive() and needle in lines, lines  # the stream went on

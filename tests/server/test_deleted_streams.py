"""A deleted team's streams: its own stream says ``deleted`` (with the team's id) after
its last record and ends — never ``stopped`` then keep-alives forever — and the
all-teams stream says ``deleted`` for it; the client's ``follow`` raises
``TeamDeletedError`` after yielding every record. Nothing sleeps: readers count
keep-alives (a stream still open after many of them has not ended) and tests wait on
events with bounds."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from uuid import UUID

import httpx
import pytest

from akgentic.client import TeamDeletedError, parse_sse
from tests.server.conftest import Served, kind, until

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

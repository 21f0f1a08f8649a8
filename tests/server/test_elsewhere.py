"""A team run by another process on the same store, seen from this server: its stream does
not say ``stopped`` while it runs there, and a message for it is refused with who runs it."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from akgentic.client import ServerError, parse_sse
from akgentic.team import TeamCard, TeamManager
from tests.server import gate_tool
from tests.server.conftest import TURNS, Served, manager_elsewhere


@pytest.fixture
def elsewhere(served: Served, tmp_path: Path) -> Iterator[TeamManager]:
    """Another process's manager over the server's store (its own connection and holder)."""
    yield from manager_elsewhere(tmp_path)


def kinds_until_quiet(url: str, until_stopped: bool = False) -> list[str]:
    """The stream's event types up to its first keep-alive (all stored was sent), or up to
    ``stopped`` with ``until_stopped``."""
    kinds: list[str] = []
    with httpx.stream("GET", url, params={"heartbeat": 0.2}, timeout=30) as response:
        for event in parse_sse(response.iter_lines()):
            kinds.append(event.event)
            if event.event == "stopped" or (event.event == "" and not until_stopped):
                break
    return kinds


def test_a_team_running_in_another_process_is_followed_not_called_stopped(
    served: Served, elsewhere: TeamManager
) -> None:
    team_id = elsewhere.create_team(TeamCard.from_yaml(TURNS)).team_id
    url = f"{served.url}/teams/{team_id}/events"

    runtime = elsewhere.get_team(team_id)
    assert runtime is not None
    runtime.send("wait please")  # a turn in progress over there, at its gate
    assert gate_tool.ENTERED.wait(30)
    kinds = kinds_until_quiet(url)
    assert kinds[-1] == "" and "stopped" not in kinds  # it runs: the stream waits for more
    shown = served.client.get_team(team_id).refresh()
    assert not shown.running and shown.interrupted == [], shown  # in a turn there, not interrupted
    gate_tool.OPEN.set()

    with pytest.raises(ServerError) as err:  # the resume it used to suggest is refused too
        served.client.request("POST", f"/teams/{team_id}/messages", json={"content": "hi"})
    assert err.value.status == 409
    assert "is running in another process" in err.value.detail
    assert "resume it with" not in err.value.detail
    assert err.value.detail.endswith(
        "talk to it there (send, interrupt), or stop it there and resume it here"
    )
    with pytest.raises(ServerError) as err:  # an interrupt is not told to stop it first
        served.client.request("POST", f"/teams/{team_id}/interrupt")
    assert err.value.status == 409 and "stop it there first" not in err.value.detail
    assert "talk to it there (send, interrupt)" in err.value.detail

    elsewhere.stop_team(team_id, grace_timeout=5)
    assert kinds_until_quiet(url, until_stopped=True)[-1] == "stopped"  # now it is


@pytest.mark.parametrize("purge", [False, True])
def test_a_delete_of_a_team_another_process_runs_is_a_409_and_changes_nothing(
    served: Served, elsewhere: TeamManager, purge: bool
) -> None:
    team_id = elsewhere.create_team(TeamCard.from_yaml(TURNS)).team_id

    with pytest.raises(ServerError) as err:
        served.client.delete_team(team_id, purge=purge)

    assert err.value.status == 409
    assert "is running in another process" in err.value.detail
    assert served.client.get_team(team_id).info.status == "RUNNING"
    runtime = elsewhere.get_team(team_id)
    assert runtime is not None and runtime.stop_reason is None  # not told to stop
    elsewhere.stop_team(team_id, grace_timeout=5)
    served.client.delete_team(team_id, purge=purge)  # stopped: it goes


def test_a_second_resume_while_one_is_under_way_keeps_the_lease(
    served: Served, elsewhere: TeamManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two resumes of one team racing in this server (a double click, a retry): one runs
    it, the other is a 409 — and the loser leaves the winner's lease alone, so another
    process over the store is still refused the team (it used to release it: both ran)."""
    from akgentic.team import restorer

    team = served.client.create_team("research")
    served.client.stop_team(team.team_id, grace_timeout=5)
    entered, release = threading.Event(), threading.Event()
    real = restorer.restore

    def held_restore(*args: Any, **kwargs: Any) -> Any:
        if not entered.is_set():  # the first resume waits inside, the second races it
            entered.set()
            assert release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(restorer, "restore", held_restore)
    first: list[object] = []
    racer = threading.Thread(target=lambda: first.append(served.client.resume_team(team.team_id)))
    racer.start()
    try:
        assert entered.wait(30)
        second = served.client.request(
            "POST", f"/teams/{team.team_id}/resume", allow=(409,), timeout=10
        )
    finally:
        release.set()
        racer.join(30)
    assert second.status_code == 409, second.text
    detail = second.json()["detail"]
    assert detail == f"team {team.team_id} is already running (or resuming) in this process"
    assert first and served.client.get_team(team.team_id).is_running()
    lease = served.manager.lease_of(team.team_id)
    assert lease is not None and lease.holder.owner == served.manager.holder.owner
    assert elsewhere.running_elsewhere(team.team_id) is not None


def test_a_resume_of_a_team_whose_log_is_unreadable_says_to_restore_the_store(
    served: Served, tmp_path: Path
) -> None:
    """Every event overwritten: the resume is a 409 saying the log is unreadable and the
    ways on (a backup; the events route shows what still reads); the team is unchanged."""
    team = served.client.create_team("research")
    served.client.stop_team(team.team_id)
    with sqlite3.connect(tmp_path / "server.db") as db:
        assert db.execute("UPDATE akgentic_event_packs SET data = x'00ff13'").rowcount > 0
    answer = served.client.request(
        "POST", f"/teams/{team.team_id}/resume", allow=(409,), timeout=30
    )
    assert answer.status_code == 409, answer.text
    detail = answer.json()["detail"]
    assert detail.startswith(f"team {team.team_id} cannot be resumed, nothing changed: its ")
    assert "event log is unreadable: its numbering cannot be vouched for: " in detail
    assert f"from a backup (GET /teams/{team.team_id}/events shows what still reads)" in detail
    assert "\n" not in detail
    assert served.client.info(team.team_id).status == "STOPPED"


def test_a_team_another_process_runs_lists_an_earlier_runs_interrupted_turn_not_its_own(
    served: Served, elsewhere: TeamManager
) -> None:
    """``GET /teams/{id}`` of a team another process resumed without settling a cut turn,
    while it is on a new one: ``interrupted`` is the cut turn only (it used to be empty,
    hiding it; the log alone would list the turn in progress too). Once this server runs
    the team, the same: its runtime's list, not the turn it is on."""
    team_id = elsewhere.create_team(TeamCard.from_yaml(TURNS)).team_id
    runtime = elsewhere.get_team(team_id)
    assert runtime is not None
    cut = runtime.send("wait one")
    assert gate_tool.ENTERED.wait(30)
    assert [m.id for m in elsewhere.interrupt_team(team_id, 30, cancelled=gate_tool.OPEN.set)] == [
        cut
    ]
    gate_tool.ENTERED.clear()
    gate_tool.OPEN.clear()
    resumed = elsewhere.resume_team(team_id)  # nobody decided: the cut turn stays listed
    resumed.send("wait two")  # a turn in progress over there, at its gate
    assert gate_tool.ENTERED.wait(30)

    shown = served.client.get_team(team_id).refresh()
    assert not shown.running and shown.interrupted == [cut], shown

    gate_tool.OPEN.set()
    elsewhere.stop_team(team_id, grace_timeout=30)
    gate_tool.ENTERED.clear()
    gate_tool.OPEN.clear()
    here = served.client.resume_team(team_id)
    here.send("wait three")
    assert gate_tool.ENTERED.wait(30)
    assert here.refresh().interrupted == [cut]
    gate_tool.OPEN.set()

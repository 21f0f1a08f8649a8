"""A running team's interrupted turns settled over HTTP: a team resumed without deciding
(by a placement after its worker was lost, or by a plain resume) keeps listing them, and
``POST /teams/{id}/resume`` with ``retry_interrupted`` or ``dismiss_interrupted`` settles
them on the running team."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from uuid import UUID

import pytest

from akgentic.client import AkgenticClient, ServerError
from akgentic.core import ActorSystem
from akgentic.server import BackgroundServer, ServerSettings, create_app
from akgentic.storage import open_storage
from akgentic.team import TeamManager
from tests.team.crash_cards import SlowStep  # noqa: F401  (the crashed team's tool)
from tests.team.test_crash import answers, run_child_until_ready


@contextmanager
def crashed_team_served(tmp_path: Path) -> Iterator[tuple[UUID, TeamManager, AkgenticClient]]:
    """A team whose process was killed mid-turn ("block please" interrupted), and a server
    over its store (the team not resumed) with a client."""
    url = f"sqlite:///{tmp_path / 'crashed.db'}"
    team_id = run_child_until_ready(url)
    storage, system = open_storage(url), ActorSystem()
    manager = TeamManager(system, storage)
    server = BackgroundServer(create_app(manager, ServerSettings(port=0)))
    try:
        with server, AkgenticClient(server.url) as client:
            yield team_id, manager, client
    finally:
        manager.shutdown(5)
        system.shutdown()
        storage.close()


@pytest.mark.parametrize("settle", ["retry", "dismiss"])
def test_a_running_team_settles_its_interrupted_turns(tmp_path: Path, settle: str) -> None:
    with crashed_team_served(tmp_path) as (team_id, manager, client):
        team = client.resume_team(team_id)  # nobody decided yet
        [interrupted] = team.refresh().interrupted
        with pytest.raises(ServerError, match="409: .* is already running"):
            client.resume_team(team_id)
        settled = client.resume_team(
            team_id,
            retry_interrupted=settle == "retry",
            dismiss_interrupted=settle == "dismiss",
        )
        # a settle starts no run: the answer's first_seq is the run's, from before it
        assert settled.info.first_seq == team.info.first_seq
        assert settled.refresh().interrupted == []
        # "after block", queued behind it, was redelivered by the plain resume: taken on first
        assert settled.info.out_of_order == ({interrupted: 1} if settle == "retry" else {})
        runtime = manager.get_team(team_id)
        assert runtime is not None and runtime.interrupted == []
        for record in team.follow(1, idle_timeout=30):
            if "[scripted] done: after block" in answers(runtime) and (
                settle == "dismiss" or "[scripted] done: block please" in answers(runtime)
            ):
                break
            assert record.seq >= 1
        done = answers(runtime)
        assert ("[scripted] done: block please" in done) == (settle == "retry")
        assert interrupted not in [m.id for m in runtime.interrupted]


def test_a_team_not_running_here_lists_its_interrupted_turns_before_a_resume(
    tmp_path: Path,
) -> None:
    with crashed_team_served(tmp_path) as (team_id, _, client):
        crashed = client.get_team(team_id).refresh()
        assert not crashed.running and len(crashed.interrupted) == 1  # it used to be []
        listed = [t for t in client.list_teams() if t.team_id == team_id]
        assert listed and listed[0].interrupted == []  # a list reads no log
        resumed = client.resume_team(team_id)
        assert resumed.refresh().interrupted == crashed.interrupted


@pytest.mark.parametrize("settle", ["retry", "dismiss"])
def test_a_resume_that_settles_redoes_the_interrupted_turn_in_its_place_or_drops_it(
    tmp_path: Path, settle: str
) -> None:
    """The crashed team resumed with its choice made (``"after block"`` was queued behind
    the interrupted ``"block please"``): a retry redoes the interrupted turn first, before
    the message queued behind it; a dismissal drops it, and the queued one is answered."""
    with crashed_team_served(tmp_path) as (team_id, manager, client):
        resumed = client.resume_team(
            team_id,
            retry_interrupted=settle == "retry",
            dismiss_interrupted=settle == "dismiss",
        )
        assert resumed.refresh().interrupted == []
        assert resumed.info.out_of_order == {}  # redone in its place
        runtime = manager.get_team(team_id)
        assert runtime is not None and runtime.interrupted == []
        for _ in resumed.follow(1, idle_timeout=30):
            if "[scripted] done: after block" in answers(runtime):
                break
        redone = ["[scripted] done: block please"] if settle == "retry" else []
        assert answers(runtime) == [
            "[scripted] done: first task",
            *redone,
            "[scripted] done: after block",
        ]

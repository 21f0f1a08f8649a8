"""A team whose stored record does not read whole (its card, its status) over HTTP: shown
DAMAGED as ``akgentic teams list`` shows it, its card a 409 rather than an empty card, and
a resume refused in one line saying what to do — never a 500; nothing changes."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from uuid import UUID

import httpx

from tests.server.conftest import Served


def _damage(folder: Path, team_id: UUID, column: str, value: str) -> None:
    with closing(sqlite3.connect(folder / "server.db")) as conn, conn:  # the served store
        conn.execute(
            f"UPDATE akgentic_teams SET {column} = ? WHERE team_id = ?", (value, str(team_id))
        )


def test_a_team_whose_card_does_not_read_is_damaged_and_its_resume_says_what_to_do(
    served: Served, tmp_path: Path
) -> None:
    team = served.client.create_team("research")
    served.client.stop_team(team.team_id)
    _damage(tmp_path, team.team_id, "card", "{not json")
    url = f"{served.url}/teams/{team.team_id}"

    assert httpx.get(url, timeout=30).json()["status"] == "DAMAGED"
    [listed] = httpx.get(f"{served.url}/teams", timeout=30).json()["items"]
    assert listed["status"] == "DAMAGED"
    card = httpx.get(f"{url}/card", timeout=30)
    assert card.status_code == 409 and "not valid JSON" in card.json()["detail"]
    resumed = httpx.post(f"{url}/resume", timeout=30)

    assert resumed.status_code == 409, resumed.text
    detail = resumed.json()["detail"]
    assert detail.startswith(f"team {team.team_id} cannot be resumed, nothing changed: ")
    assert "not valid JSON" in detail and "restore the server's store from a backup" in detail
    assert "\n" not in detail
    after = httpx.get(url, timeout=30).json()
    assert after["status"] == "DAMAGED" and not after["running"]


def test_a_team_whose_status_does_not_read_is_resumed_once_a_stop_rewrites_it(
    served: Served, tmp_path: Path
) -> None:
    team = served.client.create_team("research")
    served.client.stop_team(team.team_id)
    _damage(tmp_path, team.team_id, "status", "garbage")
    url = f"{served.url}/teams/{team.team_id}"

    resumed = httpx.post(f"{url}/resume", timeout=30)

    assert resumed.status_code == 409, resumed.text
    assert f"POST /teams/{team.team_id}/stop rewrites its status" in resumed.json()["detail"]
    assert httpx.post(f"{url}/stop", timeout=30).json()["status"] == "STOPPED"
    again = httpx.post(f"{url}/resume", timeout=30)
    assert again.status_code == 200 and again.json()["running"], again.text

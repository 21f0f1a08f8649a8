"""An error raised in a team's Ray actor comes back to the caller as itself, on a real
cluster: ``except CorruptRecordError`` works with the Ray placement as in one process."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit
from uuid import UUID

import pytest

from akgentic.storage import CorruptRecordError
from tests.team.placement.cards import gate_card
from tests.team.placement.conftest import POSTGRES, Deployment, needs_cluster

pytestmark = needs_cluster


def garble_card(url: str, team_id: UUID) -> None:
    """Write a team card that is not JSON into the team's row, behind the store's back."""
    import psycopg
    from psycopg import sql

    schema = parse_qs(urlsplit(url).query)["schema"][0]
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
        update = "UPDATE akgentic_teams SET card = %s WHERE team_id = %s"
        assert conn.execute(update, ("{not json", team_id)).rowcount == 1


def test_a_damaged_team_row_read_on_a_worker_is_a_corrupt_record_error_here(
    deployment: Deployment,
) -> None:
    """The placement knows the card (it created the team), so only the actor reads the
    damaged row: its CorruptRecordError crosses back whole, not as a PlacementError."""
    manager = deployment.manager()
    team_id = manager.create_team(gate_card()).team_id
    manager.stop_team(team_id)
    garble_card(deployment.url, team_id)
    record = deployment.storage.teams.get(team_id)
    assert record is not None and record.error is not None
    with pytest.raises(CorruptRecordError) as raised:
        manager.resume_team(team_id)
    assert type(raised.value) is CorruptRecordError
    assert str(raised.value) == record.error  # what require() raises in this process
    assert str(team_id) in record.error and "card" in record.error

"""Talking to an akgentic server from the CLI (``--server URL``).

The client needs the ``server`` extra's httpx (installed with akgentic's dependencies);
a server that cannot be reached, or that answers an error, is a :class:`CliError` with
the server's own reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from akgentic.cli.errors import CliError
from akgentic.cli.store import match_team
from akgentic.client import AkgenticClient, ServerError, TeamInfo
from akgentic.storage import TeamRecord, TeamStatus

__all__ = ["connected", "find_remote_team"]


@contextmanager
def connected(url: str, token: str | None) -> Iterator[AkgenticClient]:
    """A client of the server at ``url``; its errors become :class:`CliError`."""
    client = AkgenticClient(url, token=token)
    try:
        client.health()
        yield client
    except ServerError as exc:
        hint = (
            " (pass the server's token with --token or AKGENTIC_TOKEN)" if exc.status == 401 else ""
        )
        raise CliError(f"server {url}: {exc.detail}{hint}") from None
    finally:
        client.close()


def _record(info: TeamInfo) -> TeamRecord:
    return TeamRecord(
        team_id=info.team_id,
        name=info.name,
        status=TeamStatus(info.status),
        created_at=info.created_at,
        updated_at=info.updated_at,
    )


def find_remote_team(client: AkgenticClient, ref: str) -> TeamRecord:
    """The server's team that ``ref`` names (id, id prefix or name), as ``find_team``."""
    teams = client.list_teams(include_deleted=True)
    listing = f"GET {client.base_url}/teams (the page {client.base_url}/ shows them too)"
    return match_team(ref, [_record(t) for t in teams], listing)

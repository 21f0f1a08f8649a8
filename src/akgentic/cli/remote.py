"""Talking to an akgentic server from the CLI (``--server URL``).

The client needs the ``server`` extra's httpx (installed with akgentic's dependencies);
a server that cannot be reached, or that answers an error, is a :class:`CliError` with
the server's own reason.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from uuid import UUID

from akgentic.cli.errors import CliError
from akgentic.cli.output import command_line, short_id
from akgentic.cli.store import DAMAGED, import_flags, match_team
from akgentic.client import AkgenticClient, RemoteTeam, ServerError, TeamInfo
from akgentic.core import Message
from akgentic.storage import EventRecord, TeamRecord, TeamStatus
from akgentic.team import plan_restore

__all__ = ["connected", "find_remote_team", "interrupted_turns", "read_remote", "server_command"]

PAGE = 500
"""Records asked for at once."""


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
    """The server's team as a record (no card: the server keeps it); one the server says
    is DAMAGED has no status, as a store's record whose status does not read."""
    damaged = info.status == DAMAGED
    return TeamRecord(
        team_id=info.team_id,
        name=info.name,
        status=None if damaged else TeamStatus(info.status),
        created_at=info.created_at,
        updated_at=info.updated_at,
        error=f"team {info.team_id}'s record is damaged on the server" if damaged else None,
    )


def find_remote_team(client: AkgenticClient, ref: str) -> TeamRecord:
    """The server's team that ``ref`` names (id, id prefix or name), as ``find_team``;
    among several that match, each with the status the server says."""
    teams = client.list_teams(include_deleted=True)
    listing = (
        f"{command_line('teams', 'list', '--server', client.base_url)} "
        f"(the page {client.base_url}/ shows them too)"
    )
    said = {t.team_id: t.status for t in teams}
    return match_team(ref, [_record(t) for t in teams], listing, lambda r: said[r.team_id])


def read_remote(
    team: RemoteTeam, from_seq: int = 1, to_seq: int | None = None
) -> Iterator[EventRecord]:
    """The server's records of ``team`` from ``from_seq`` on (to ``to_seq``), page by page."""
    after = from_seq - 1
    while to_seq is None or after < to_seq:
        page = team.history(after=after, limit=PAGE)
        yield from (row for row in page if to_seq is None or row.seq <= to_seq)
        if len(page) < PAGE:
            return
        after = page[-1].last  # past a range record (a damaged pack, a gap)


def interrupted_turns(team: RemoteTeam, to_seq: int | None = None) -> list[Message]:
    """The turns a resume of ``team`` would offer again, read from the server's log as
    ``teams show`` reads a local one (up to ``to_seq``: those a resume that began after
    it offered)."""
    return plan_restore(list(read_remote(team, to_seq=to_seq))).interrupted


def server_command(team_id: UUID, url: str, imports: Sequence[str] = ()) -> str:
    """``akgentic teams resume 104b23b9 --server URL`` (+ ``--import M`` for each module
    the team's messages need): how to resume a server's team."""
    return command_line(
        "teams", "resume", short_id(team_id), "--server", url, *import_flags(imports)
    )

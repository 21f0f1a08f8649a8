"""Names and ids a caller passes go into the URL as one path segment each: a value from
elsewhere (a form, a file) never reaches another route of the server."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from urllib.parse import unquote

import httpx
import pytest

from akgentic.client import AkgenticClient, RemoteTeam, ServerError
from akgentic.client.models import TeamInfo

TEAM = "00000000-0000-0000-0000-000000000001"


def recording() -> tuple[AkgenticClient, list[httpx.Request]]:
    """A client whose every request is answered 404 (``team_not_found``) and kept."""
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(404, json={"detail": "no", "code": "team_not_found"})

    return AkgenticClient("http://server", transport=httpx.MockTransport(answer)), seen


def a_team(client: AkgenticClient) -> RemoteTeam:
    info = TeamInfo.model_validate(
        {
            "team_id": TEAM,
            "name": "t",
            "card_name": "t",
            "status": "RUNNING",
            "running": True,
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "last_seq": 0,
        }
    )
    return RemoteTeam(client, info)


HOSTILE = [
    "..",
    "../catalog/tools/x",
    "../../teams/" + TEAM,
    "x?force=true",
    "a/b",
    "victim/credential",
    "x#y",
    "x%2Fy",
]


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize(
    ("call", "prefix"),
    [
        (lambda c, v: c.delete_team(v), "/teams/"),
        (lambda c, v: c.get_team(v), "/teams/"),
        (lambda c, v: c.stop_team(v), "/teams/"),
        (lambda c, v: c.resume_team(v), "/teams/"),
        (lambda c, v: c.rename_team(v, "n"), "/teams/"),
        (lambda c, v: c.catalog.remove(v, force=True), "/catalog/tools/"),
        (lambda c, v: c.catalog.show(v), "/catalog/tools/"),
        (lambda c, v: c.catalog.disable(v), "/catalog/tools/"),
        (lambda c, v: a_team(c).tool_state(v), f"/teams/{TEAM}/state/"),
    ],
)
def test_a_name_or_id_stays_one_segment_of_its_route(
    call: Callable[[AkgenticClient, str], object], prefix: str, value: str
) -> None:
    client, seen = recording()
    if "/" in value:  # a server decodes %2F before it routes: refused, nothing sent
        with pytest.raises(ValueError, match="holds a '/': no team id or tool name does"):
            call(client, value)
        assert seen == []
        return
    with contextlib.suppress(ServerError):  # the 404 answer: what matters is where it went
        call(client, value)
    assert len(seen) == 1
    url = seen[0].url
    raw = url.raw_path.decode().split("?")[0]
    assert raw.startswith(prefix), url
    segment = unquote(raw[len(prefix) :].split("/")[0])
    assert segment.removeprefix("#") == value.removeprefix("#"), url  # #Tool: tool_state's

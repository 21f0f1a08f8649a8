"""A message or command whose team stops, or is deleted, while it is on its way: a stop
or a delete from another client got there first. That is a 409 saying nothing was sent
and how to send it again — never a 422 blaming the client's address — and the team's log
is as the stop left it. A verb a deleted team takes no more says what to do instead."""

from __future__ import annotations

from collections.abc import Callable
from uuid import UUID

import httpx
import pytest

from akgentic.core import SentMessage, UserMessage
from tests.server.conftest import Served

ROUTES = [
    ("messages", {"content": "are you there?"}),
    ("commands", {"command": "/help"}),
]


def _raced_by(served: Served, team_id: UUID, verb: Callable[[UUID], object]) -> None:
    """Make the team's next delivery meet ``verb`` (a stop, a delete) first: the race of
    two clients, with the second one's request landing between the route's look-up of
    the team and its delivery."""
    runtime = served.manager.get_team(team_id)
    assert runtime is not None
    deliver = runtime.send_to

    def raced(member: str, content: str) -> UUID:
        verb(team_id)
        return deliver(member, content)

    runtime.send_to = raced  # type: ignore[method-assign]


def _people_wrote(served: Served, team_id: UUID) -> list[str]:
    return [
        r.message.message.content
        for r in served.storage.events.read(team_id)
        if isinstance(r.message, SentMessage) and isinstance(r.message.message, UserMessage)
    ]


def _deleted(team_id: UUID) -> str:
    return (
        f"team {team_id} is deleted and runs no more: start a new team from its card "
        f"(POST /teams); its history still reads at GET /teams/{team_id}/messages"
    )


def _stopped(team_id: UUID) -> str:
    return (
        f"team {team_id} stopped while the message was on its way, so nothing was sent; "
        f"resume it with POST /teams/{team_id}/resume, then send the message again"
    )


@pytest.mark.parametrize(("route", "body"), ROUTES)
@pytest.mark.parametrize(
    ("racer", "status", "said"),
    [("stop", "STOPPED", _stopped), ("delete", "DELETED", _deleted)],
)
def test_a_team_stopped_or_deleted_on_the_way_is_a_409_and_nothing_is_sent(
    served: Served,
    route: str,
    body: dict[str, str],
    racer: str,
    status: str,
    said: Callable[[UUID], str],
) -> None:
    team = served.client.create_team("turns")
    verbs = {"stop": lambda t: served.manager.stop_team(t, 5), "delete": served.manager.delete_team}
    _raced_by(served, team.team_id, verbs[racer])
    answer = httpx.post(f"{served.url}/teams/{team.team_id}/{route}", json=body)
    assert answer.status_code == 409, answer.text
    assert answer.json()["detail"] == said(team.team_id)
    assert served.client.info(team.team_id).status == status
    assert _people_wrote(served, team.team_id) == []
    if racer == "stop":  # the way the answer says: resume, send again
        assert httpx.post(f"{served.url}/teams/{team.team_id}/resume").status_code == 200
        sent = httpx.post(f"{served.url}/teams/{team.team_id}/{route}", json=body)
        assert sent.status_code == 202, sent.text


def test_a_wrong_address_on_a_running_team_stays_a_422(served: Served) -> None:
    team = served.client.create_team("turns")
    answer = httpx.post(
        f"{served.url}/teams/{team.team_id}/messages", json={"content": "hi", "to": "@Nobody"}
    )
    assert answer.status_code == 422
    assert answer.json()["detail"] == "@Nobody is not a member of this team (members: @Boss)"
    assert served.client.info(team.team_id).status == "RUNNING"


@pytest.mark.parametrize(
    ("route", "body"),
    [*ROUTES, ("interrupt", None), ("stop", None)],
)
def test_a_verb_a_deleted_team_takes_no_more_says_what_to_do(
    served: Served, route: str, body: dict[str, str] | None
) -> None:
    team = served.client.create_team("turns")
    served.client.delete_team(team.team_id)
    answer = httpx.post(f"{served.url}/teams/{team.team_id}/{route}", json=body)
    assert answer.status_code == 409
    assert answer.json()["detail"] == _deleted(team.team_id)
    assert served.client.info(team.team_id).status == "DELETED"

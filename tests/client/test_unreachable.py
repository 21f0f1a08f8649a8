"""A server the client cannot talk to — none listening, or one that never answers — is a
one-line :class:`ServerError` that says which URL and what to do: start ``akgentic
serve``, or wait longer (the timeout, and how to raise it). Never httpx's bare words."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from uuid import uuid4

import pytest

from akgentic.client import AkgenticClient, RemoteTeam, ServerError
from akgentic.client.models import TeamInfo


@pytest.fixture
def refusing() -> Iterator[str]:
    """The URL of a port held but not listening: every connection to it is refused."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{held.getsockname()[1]}"


@pytest.fixture
def silent() -> Iterator[str]:
    """The URL of a socket that takes connections (the kernel's backlog) but never answers."""
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(8)
        yield f"http://127.0.0.1:{listening.getsockname()[1]}"


def _team(client: AkgenticClient) -> RemoteTeam:
    """A team as a client last knew it (the server it ran on is gone)."""
    info = TeamInfo.model_validate(
        {
            "team_id": str(uuid4()),
            "name": "t",
            "card_name": "research",
            "status": "RUNNING",
            "running": True,
            "created_at": "2024-01-01T00:00:00Z",
            "updated_at": "2024-01-01T00:00:00Z",
        }
    )
    return RemoteTeam(client, info)


def test_no_server_listening_names_the_url_and_says_to_start_one(refusing: str) -> None:
    with AkgenticClient(refusing) as client:
        for call in (client.health, client.list_teams, lambda: client.create_team("research")):
            with pytest.raises(ServerError) as caught:
                call()
            message = str(caught.value)
            assert caught.value.status == 0
            assert "\n" not in message
            assert message.startswith(f"cannot reach {refusing} (connection refused)")
            assert "akgentic serve" in message
            assert "Errno" not in message


def test_a_follow_that_cannot_reconnect_says_where_and_to_start_the_server(
    refusing: str,
) -> None:
    with AkgenticClient(refusing) as client, pytest.raises(ServerError) as caught:
        list(_team(client).follow(idle_timeout=0.01))
    message = str(caught.value)
    assert "\n" not in message
    assert f"cannot reach {refusing} (connection refused)" in message
    assert "akgentic serve" in message


def test_a_server_that_never_answers_says_the_bound_and_how_to_raise_it(silent: str) -> None:
    with AkgenticClient(silent, timeout=0.2) as client, pytest.raises(ServerError) as caught:
        client.list_teams()
    message = str(caught.value)
    assert caught.value.status == 0
    assert "\n" not in message
    assert message.startswith(f"{silent}/teams gave no answer within 0.2s")
    assert "AkgenticClient(timeout=" in message
    assert "cannot reach" not in message  # it was reached: it did not answer


def test_a_call_with_its_own_bound_says_that_bound(silent: str) -> None:
    """``stop_team`` waits its grace and 30 s more: the bound said is the one that ran out."""
    with AkgenticClient(silent, timeout=0.2) as client, pytest.raises(ServerError) as caught:
        client.request("GET", "/teams", timeout=0.3)
    assert "gave no answer within 0.3s" in str(caught.value)

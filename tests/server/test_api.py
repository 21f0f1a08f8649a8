"""Every team endpoint through the real app and client, and the server's safety rules:
a token off loopback, size limits, a reason on every 4xx, no traceback on a 500, CORS
off unless configured, OpenAPI at /docs."""

from __future__ import annotations

import logging
import re
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest

from akgentic.client import AkgenticClient, RemoteTeam, ServerError
from akgentic.client import client as client_module
from akgentic.client.models import TEAM_NOT_FOUND, TeamInfo
from akgentic.core.serialization import serialize
from akgentic.server import InsecureServerError, ServerSettings
from akgentic.server.context import deleted_team
from akgentic.team import TeamCard
from tests.catalog.distributions import make_distribution
from tests.server.conftest import RESEARCH, TURNS, Served
from tests.server.stub import StubServer

TOKEN = "s3cret-token-of-some-length"


def test_health_and_cards(served: Served) -> None:
    health = served.client.health()
    assert health.status == "ok" and health.teams_running == 0
    cards = {c.name: c for c in served.client.cards()}
    assert set(cards) == {"research", "analyst", "turns"}
    assert cards["research"].entry_point == "@Manager"
    assert cards["research"].members == ["@Manager", "@Worker"]


@pytest.mark.parametrize(
    ("status", "body", "content_type", "said"),
    [
        (
            503,
            "<h1>Service Unavailable</h1>",
            "text/html",
            "503: {url}/health answered 503 Service Unavailable (text/html), which is no "
            "akgentic server's answer: a proxy there may have no server behind it: check "
            "that `akgentic serve` runs behind {url}, then try again",
        ),
        (503, '{"detail": "maintenance"}', "application/json", "503: maintenance"),
        (
            404,
            "Not Found",
            "text/plain",
            "404: {url}/health answered 404 Not Found (text/plain), which is no akgentic "
            "server's answer: check that {url} is the akgentic server's address, with the "
            "path prefix a proxy serves it under",
        ),
        (401, '{"detail": "who are you?"}', "application/json", "401: who are you?"),
    ],
)
def test_health_of_something_that_is_not_a_server_is_a_server_error(
    status: int, body: str, content_type: str, said: str
) -> None:
    """Only a draining server's 503 (a Health body) is an answer; any other error answer
    is a ServerError with the body's detail, or, with none, the URL, its status line and
    what to check."""
    with (
        StubServer(status, body, content_type) as stub,
        AkgenticClient(stub.url) as client,
        pytest.raises(ServerError) as err,
    ):
        client.health()
    assert type(err.value) is ServerError and err.value.status == status
    assert str(err.value) == said.format(url=stub.url)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ("<html><h1>Welcome to the proxy</h1></html>", "text/html"),  # not JSON
        ('{"status": "UP"}', "application/json"),  # another program's health
    ],
)
def test_a_200_that_is_not_an_akgentic_server_says_to_check_the_base_url(
    body: str, content_type: str
) -> None:
    """A proxy's page or another program answering 200 at the base URL: one line naming
    the URL and what to check, not a JSONDecodeError or a ValidationError."""
    with StubServer(200, body, content_type) as stub, AkgenticClient(stub.url) as client:
        with pytest.raises(ServerError) as err:
            client.health()
        assert type(err.value) is ServerError and err.value.status == 200
        assert str(err.value) == (
            f"200: {stub.url}/health answered something that is not an akgentic server "
            f"({content_type}); check that {stub.url} is the akgentic server's address, "
            f"with the path prefix a proxy serves it under, and that its version is this "
            f"client's (GET /health says it)"
        )
        team = uuid.uuid4()
        calls: list[Callable[[], object]] = [
            client.cards,
            client.list_teams,
            client.catalog.list,
            lambda: client.info(team),
        ]
        for call in calls:  # every other call reads a body the same way, JSON or not
            with pytest.raises(ServerError, match="not an akgentic server") as other:
                call()
            assert type(other.value) is ServerError and "\n" not in str(other.value)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ("<html><h1>Welcome to the proxy</h1></html>", "text/html"),  # a proxy's page
        ("event: record\ndata: nope\n\n", "text/event-stream"),  # a frame that is not JSON
        ('id: 1\nevent: record\ndata: {"x": 1}\n\n', "text/event-stream"),  # nor an event
        ('event: deleted\ndata: {"x": 1}\n\n', "text/event-stream"),
    ],
)
def test_a_stream_that_is_not_an_akgentic_servers_is_one_line_saying_so(
    body: str, content_type: str
) -> None:
    """Following a team at an address that answers 200 with something else: one
    ``ServerError`` naming the URL and what to check, at the first answer."""
    with StubServer(200, body, content_type) as stub, AkgenticClient(stub.url) as client:
        team = RemoteTeam(client, _info())
        with pytest.raises(ServerError) as err:
            list(team.follow(idle_timeout=30))
        assert type(err.value) is ServerError and err.value.status == 200
        assert str(err.value).startswith(
            f"200: {stub.url}/teams/{team.team_id}/events answered something that is not an "
            f"akgentic server ({content_type}); check that {stub.url} is the akgentic server's"
        )
        assert "\n" not in str(err.value) and stub.requests == 1


def test_a_stream_that_ends_before_a_word_is_retried_with_a_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stream closed at once, again and again (a proxy swallowing it), is retried as a
    dropped connection is — backing off, up to ``RECONNECTS`` times — not at once and
    forever."""
    monkeypatch.setattr(client_module, "RECONNECTS", 2)
    with StubServer(200, "", "text/event-stream") as stub, AkgenticClient(stub.url) as client:
        team = RemoteTeam(client, _info())
        with pytest.raises(ServerError, match="the event stream keeps failing: the stream "):
            list(team.follow(idle_timeout=30))
        assert stub.requests == 3


def test_follow_rides_out_a_server_restart_of_a_minute_and_backs_off() -> None:
    """Reconnections start quick (a blip) and back off to a few seconds apart, so a follow
    outlives a server that is down for a minute and does not hammer it meanwhile."""
    waits = [client_module.reconnect_wait(n) for n in range(1, client_module.RECONNECTS + 1)]
    assert waits[0] <= 0.1
    assert waits == sorted(waits) and max(waits) == client_module.RECONNECT_WAIT_MAX
    assert sum(waits) >= 60


def _info() -> TeamInfo:
    return TeamInfo.model_validate(
        {
            "team_id": str(uuid.uuid4()),
            "name": "t",
            "card_name": "t",
            "status": "RUNNING",
            "running": True,
            "created_at": None,
            "updated_at": None,
        }
    )


def test_health_of_nothing_listening_says_it_cannot_reach_it() -> None:
    with AkgenticClient("http://127.0.0.1:9") as client, pytest.raises(ServerError) as err:
        client.health()
    assert err.value.status == 0
    assert str(err.value).startswith("cannot reach http://127.0.0.1:9 (connection refused): ")


def test_create_list_get_rename_delete(served: Served) -> None:
    client = served.client
    by_name = client.create_team("research", name="first")
    by_card = client.create_team(TeamCard.from_yaml(RESEARCH))
    by_file = client.create_team(RESEARCH, model="scripted:default")
    yaml_text = (
        "name: tiny\nentry_point: '@Solo'\n"
        "members:\n  - card: {role: Solo, config: {name: '@Solo', role: Solo}}\n"
    )
    response = client.request("POST", "/teams", json={"card_yaml": yaml_text})
    assert response.status_code == 201 and response.json()["card_name"] == "tiny"
    assert by_name.info.name == "first" and by_name.info.running
    assert by_card.card.entry_point == "@Manager"
    listed = client.list_teams()
    assert [t.team_id for t in listed][1:] == [by_file.team_id, by_card.team_id, by_name.team_id]
    page = client.request("GET", "/teams", params={"limit": 2, "offset": 1}).json()
    assert page["total"] == 4 and len(page["items"]) == 2
    renamed = client.rename_team(by_card.team_id, "renamed")
    assert renamed.name == "renamed" and client.info(by_card.team_id).name == "renamed"
    client.delete_team(by_card.team_id)
    assert client.info(by_card.team_id).status == "DELETED"
    assert by_card.team_id not in [t.team_id for t in client.list_teams()]
    assert by_card.team_id in [t.team_id for t in client.list_teams(include_deleted=True)]
    client.delete_team(by_file.team_id, purge=True)
    with pytest.raises(ServerError) as err:
        client.info(by_file.team_id)
    assert err.value.status == 404 and "GET /teams" in err.value.detail


@pytest.mark.parametrize("grace", ["nan", "inf", "-1", "301"])
def test_a_stop_grace_out_of_range_says_why(served: Served, grace: str) -> None:
    team = served.client.create_team("research")
    response = httpx.post(
        f"{served.url}/teams/{team.team_id}/stop", params={"grace": grace}, timeout=30
    )
    assert response.status_code == 422
    detail = response.json()["detail"]
    says = "finite number" if grace in ("nan", "inf") else "300" if grace == "301" else "0"
    assert "grace" in detail and says in detail and "\n" not in detail, detail
    assert served.client.info(team.team_id).running  # nothing stopped


@pytest.mark.parametrize("value", ["yes", 1, "true", None])
def test_a_resume_flag_that_is_not_a_json_boolean_is_refused_naming_it(
    served: Served, value: object
) -> None:
    """Pydantic's lax mode read ``"yes"`` and ``1`` as true: a resume that retried the
    interrupted turns when the client meant something else."""
    team = served.client.create_team("turns")
    served.client.stop_team(team.team_id)
    response = httpx.post(
        f"{served.url}/teams/{team.team_id}/resume",
        json={"retry_interrupted": value},
        timeout=30,
    )
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert "retry_interrupted" in detail and "boolean" in detail and "\n" not in detail, detail
    assert not served.client.info(team.team_id).running  # nothing resumed


@pytest.mark.parametrize(
    "body", [b'{"grace": 1}', b'{"interrupt": true}', b"[1]", b"grace=1", b"[" * 100_000]
)
def test_a_stop_refuses_a_body_it_would_ignore_and_says_where_grace_goes(
    served: Served, body: bytes
) -> None:
    team = served.client.create_team("turns")
    stopped = httpx.post(
        f"{served.url}/teams/{team.team_id}/stop",
        content=body,
        headers={"Content-Type": "application/json"},
    )
    assert stopped.status_code == 422
    assert stopped.json()["detail"] == (
        f"POST /teams/{team.team_id}/stop takes no body, nothing was stopped: give grace and "
        f"interrupt as query parameters (POST /teams/{team.team_id}/stop?grace=1&interrupt=true)"
    )
    assert served.client.info(team.team_id).running


@pytest.mark.parametrize("body", [b"", b"{}", b" null "])
def test_a_stop_with_an_empty_body_stops_with_its_query_grace(served: Served, body: bytes) -> None:
    team = served.client.create_team("turns")
    stopped = httpx.post(
        f"{served.url}/teams/{team.team_id}/stop", params={"grace": 1}, content=body, timeout=30
    )
    assert stopped.status_code == 200 and stopped.json()["status"] == "STOPPED"


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"card": "nope"}, 422, "no team card named 'nope'; known cards: analyst, research, turns"),
        ({}, 422, "give exactly one of 'card'"),
        ({"card": "research", "card_yaml": "x: 1"}, 422, "give exactly one"),
        ({"card": "research", "colour": "red"}, 422, "colour: Extra inputs are not permitted"),
        ({"card": {"name": "x", "entry_point": "@A", "members": []}}, 422, "members"),
        ({"card_yaml": "[1, 2"}, 422, "card_yaml is not valid YAML: expected ',' or ']'"),
        ({"card_yaml": "a: &a [1, *a]"}, 422, "card_yaml is not valid YAML: the data contains"),
        (
            {"card_yaml": "name: x\nmax_turns: " + "1" * 5000},
            422,
            "card_yaml is not valid YAML: an integer of 5,000 digits, more than the 4,300 "
            "Python reads: write a shorter number, or quote it to make it text at line 2",
        ),
        (
            {"card_yaml": "a: 2001-13-45"},
            422,
            "card_yaml is not valid YAML: '2001-13-45' is not a valid timestamp",
        ),
        ({"card_yaml": "a: !!set [1]"}, 422, "card_yaml is not valid YAML: expected a mapping"),
        ({"card": "research", "model": "openai:gpt-5"}, 422, "OPENAI_API_KEY"),
    ],
)
def test_bad_creations_say_why(
    served: Served, body: dict[str, object], status: int, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    response = httpx.post(f"{served.url}/teams", json=body, timeout=30)
    assert response.status_code == status
    detail = response.json()["detail"]
    assert says in detail and "\n" not in detail  # one line, no quoted source


def test_a_posted_card_cannot_import_code(served: Served) -> None:
    card = serialize(TeamCard.from_yaml(TURNS))
    card["imports"] = ["os.path", "not_imported_anywhere"]
    response = httpx.post(f"{served.url}/teams", json={"card": card}, timeout=30)
    assert response.status_code == 422
    assert "cannot import code (not_imported_anywhere)" in response.json()["detail"]


def test_errors_say_why_and_never_show_a_traceback(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = served.url
    missing = httpx.get(f"{url}/nowhere")
    assert missing.status_code == 404 and "/docs" in missing.json()["detail"]
    wrong = httpx.put(f"{url}/teams")
    assert wrong.status_code == 405 and "PUT is not allowed" in wrong.json()["detail"]
    garbled = httpx.post(
        f"{url}/teams", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert garbled.status_code == 422 and "not valid" in garbled.json()["detail"]
    bad_id = httpx.get(f"{url}/teams/not-a-uuid")
    assert bad_id.status_code == 422 and "is not a team id" in bad_id.json()["detail"]
    bad_query = httpx.get(f"{url}/teams", params={"limit": 0})
    assert bad_query.status_code == 422 and "limit" in bad_query.json()["detail"]

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated failure deep inside")

    monkeypatch.setattr(served.manager, "list_teams", broken)
    crashed = httpx.get(f"{url}/teams")
    assert crashed.status_code == 500
    assert "internal error" in crashed.json()["detail"]
    assert "Traceback" not in crashed.text and "simulated" not in crashed.text


def test_an_unexpected_error_is_logged_once_under_its_id(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 500 is one record of ``akgentic.server`` naming its error id (the CLI prints it as
    one line, its traceback only with --debug) — not also uvicorn's "Exception in ASGI
    application" with the whole traceback, printed whatever --debug says."""
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    keep = Keep(logging.DEBUG)
    watched = [logging.getLogger(name) for name in ("uvicorn.error", "akgentic.server")]
    for logger in watched:
        logger.addHandler(keep)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated failure deep inside")

    monkeypatch.setattr(served.manager, "list_teams", broken)
    try:
        crashed = httpx.get(f"{served.url}/teams")
    finally:
        for logger in watched:
            logger.removeHandler(keep)
    assert crashed.status_code == 500
    error_id = crashed.json()["detail"].split()[2].rstrip(";")
    said = [(r.name, r.getMessage()) for r in records if r.levelno >= logging.ERROR]
    assert said == [("akgentic.server", f"error {error_id} on GET /teams")], said


def test_request_bodies_are_limited(serve_with: Callable[[ServerSettings], Served]) -> None:
    served = serve_with(ServerSettings(port=0, max_body_bytes=2048))
    big = {"card": "turns", "name": "x" * 4000}
    response = httpx.post(f"{served.url}/teams", json=big)
    assert response.status_code == 413 and "larger than 2048 bytes" in response.json()["detail"]

    def chunks() -> Iterator[bytes]:
        yield b'{"card": "turns", "name": "'
        yield b"y" * 4000
        yield b'"}'

    streamed = httpx.post(
        f"{served.url}/teams", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert streamed.status_code == 413 and "2048" in streamed.json()["detail"]
    long_message = httpx.post(
        f"{served.url}/teams/00000000-0000-4000-8000-000000000000/messages", json={"content": ""}
    )
    assert long_message.status_code == 422 and "content" in long_message.json()["detail"]


def test_off_loopback_needs_a_token() -> None:
    with pytest.raises(InsecureServerError, match="set a token"):
        ServerSettings(host="0.0.0.0")
    with pytest.raises(InsecureServerError):
        ServerSettings(host="example.org")
    assert ServerSettings(host="0.0.0.0", token=TOKEN).token == TOKEN
    assert ServerSettings(host="::1").token is None
    assert ServerSettings(host="localhost").host == "localhost"


def test_a_token_is_required_when_set(serve_with: Callable[[ServerSettings], Served]) -> None:
    served = serve_with(ServerSettings(port=0, token=TOKEN))
    assert httpx.get(f"{served.url}/health").status_code == 200
    assert httpx.get(f"{served.url}/openapi.json").status_code == 200
    bare = httpx.get(f"{served.url}/teams")
    assert bare.status_code == 401 and "Authorization: Bearer" in bare.json()["detail"]
    assert bare.headers["www-authenticate"] == "Bearer"
    wrong = httpx.get(f"{served.url}/teams", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and "not this server's" in wrong.json()["detail"]
    stream = httpx.get(f"{served.url}/events")
    assert stream.status_code == 401
    team = served.client.create_team("turns")  # the client sends the token
    assert served.client.info(team.team_id).running
    with AkgenticClient(served.url) as anonymous, pytest.raises(ServerError) as err:
        anonymous.list_teams()
    assert err.value.status == 401


def test_cors_is_off_unless_configured(
    served: Served, serve_with: Callable[[ServerSettings], Served]
) -> None:
    preflight = {"Origin": "http://page.example", "Access-Control-Request-Method": "POST"}
    off = httpx.options(f"{served.url}/teams", headers=preflight)
    assert "access-control-allow-origin" not in off.headers
    on = serve_with(ServerSettings(port=0, cors_origins=["http://page.example"]))
    allowed = httpx.options(f"{on.url}/teams", headers=preflight)
    assert allowed.headers["access-control-allow-origin"] == "http://page.example"
    other = httpx.get(f"{on.url}/health", headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in other.headers


@pytest.mark.parametrize(
    ("origin", "method", "headers", "refused"),
    [
        ("http://evil.example", "POST", None, "origin"),
        ("http://page.example", "TRACE", None, "method"),
        ("http://page.example", "GET", "x-custom", "headers"),
    ],
)
def test_a_refused_cors_preflight_says_why_as_json(
    serve_with: Callable[[ServerSettings], Served],
    origin: str,
    method: str,
    headers: str | None,
    refused: str,
) -> None:
    on = serve_with(ServerSettings(port=0, cors_origins=["http://page.example"]))
    preflight = {"Origin": origin, "Access-Control-Request-Method": method}
    if headers:
        preflight["Access-Control-Request-Headers"] = headers
    answer = httpx.options(f"{on.url}/teams", headers=preflight)
    assert answer.status_code == 400
    assert answer.json()["detail"] == (
        f"this server refuses the cross-origin request ({refused} not allowed) from "
        f"'{origin}': a page's origin is allowed with akgentic serve --cors-origin; its "
        "methods may be DELETE, GET, HEAD, PATCH, POST, PUT and its headers Authorization, "
        "Content-Type, Last-Event-ID"
    )
    assert "access-control-allow-methods" in answer.headers  # Starlette's headers kept


def test_cors_lets_an_allowed_page_send_every_method_the_api_has(
    serve_with: Callable[[ServerSettings], Served],
) -> None:
    """The catalog's ``PUT`` (config, credential) included: a preflight for any method
    a route answers is allowed, else the page's call fails in the browser alone."""
    on = serve_with(ServerSettings(port=0, cors_origins=["http://page.example"]))
    spec = httpx.get(f"{on.url}/openapi.json").json()["paths"]
    methods = {method.upper() for operations in spec.values() for method in operations}
    assert "PUT" in methods
    for method in sorted(methods):
        preflight = {"Origin": "http://page.example", "Access-Control-Request-Method": method}
        answer = httpx.options(f"{on.url}/catalog/tools/mcp/config", headers=preflight)
        assert answer.status_code == 200, (method, answer.text)
        assert method in answer.headers["access-control-allow-methods"]


@pytest.mark.parametrize(
    "origin", ["http://localhost:3000/", "http://page.example/app", "page.example", "not a url"]
)
def test_a_cors_origin_a_browser_never_sends_is_refused(origin: str) -> None:
    """A browser's ``Origin`` is scheme://host[:port]: an origin with a path or a trailing
    '/' would never match, leaving CORS off without a word."""
    with pytest.raises(ValueError, match="is not an origin"):
        ServerSettings(cors_origins=[origin])
    assert ServerSettings(cors_origins=["http://localhost:3000", "https://[::1]:8443", "*"])


def test_openapi_at_docs(served: Served) -> None:
    docs = httpx.get(f"{served.url}/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    paths = httpx.get(f"{served.url}/openapi.json").json()["paths"]
    for path in (
        "/health",
        "/teams",
        "/teams/{team_id}",
        "/teams/{team_id}/messages",
        "/teams/{team_id}/interrupt",
        "/teams/{team_id}/commands",
        "/teams/{team_id}/events",
        "/events",
        "/teams/{team_id}/state/{tool_id}",
        "/team-cards",
        "/teams/{team_id}/members",
        "/teams/{team_id}/resume",
    ):
        assert path in paths


def test_storage_path_is_the_users(tmp_path: Path) -> None:
    assert ServerSettings().host == "127.0.0.1" and ServerSettings().port == 8080


def test_a_body_that_is_not_json_says_what_is_wrong_and_where(served: Served) -> None:
    url = served.url
    garbled = httpx.post(
        f"{url}/teams",
        content=b'{"card": "turns",\n  "name": }',
        headers={"Content-Type": "application/json"},
    )
    assert garbled.status_code == 422
    assert garbled.json()["detail"] == (
        "the request body is not valid JSON: expecting value at line 2, column 11 (character 28)"
    )
    team = served.client.create_team("turns")
    unlabelled = httpx.post(f"{url}/teams/{team.team_id}/messages", content=b'{"content": "hi"}')
    assert unlabelled.status_code == 422
    assert unlabelled.json()["detail"] == (
        "the request body was sent without a Content-Type: send it as a JSON object with "
        "'Content-Type: application/json'"
    )
    as_text = httpx.post(
        f"{url}/teams/{team.team_id}/messages",
        content=b'{"content": "hi"}',
        headers={"Content-Type": "text/plain; charset=utf-8"},
    )
    assert as_text.status_code == 422
    assert as_text.json()["detail"].startswith("the request body was sent as text/plain: send")


def test_the_page_answers_head_and_the_docs_load_nothing_from_elsewhere(served: Served) -> None:
    head = httpx.head(f"{served.url}/")
    assert head.status_code == 200 and head.headers["content-type"].startswith("text/html")
    for page in ("/docs", "/redoc"):
        html = httpx.get(f"{served.url}{page}").text
        assets = re.findall(r"""(?:src|href|url)\s*[=:]\s*["']([^"']+)["']""", html)
        assert assets and all(a.startswith("/") for a in assets), assets  # nothing remote
        for asset in assets:
            assert httpx.get(f"{served.url}{asset}").status_code == 200, asset


def test_a_remote_team_says_what_and_where_it_is(served: Served) -> None:
    team = served.client.create_team("turns", name="shown")
    assert repr(team) == (
        f"RemoteTeam('shown', team_id='{team.team_id}', status='RUNNING', server='{served.url}')"
    )
    assert repr(served.client) == f"AkgenticClient('{served.url}')"


@pytest.mark.parametrize(
    "name",
    ["evil\u001b]0;pwned\u0007\r\nFAKE-TEAM  RUNNING", "a\nb", "tab\t", "del\u007f", "c1\u0085"],
)
def test_a_team_name_with_control_characters_is_refused(served: Served, name: str) -> None:
    created = httpx.post(f"{served.url}/teams", json={"card": "turns", "name": name})
    assert created.status_code == 422
    detail = created.json()["detail"]
    assert "name: a team name may not contain control characters" in detail
    assert "use printable text on one line" in detail and "Value error" not in detail
    assert served.client.list_teams() == []  # refused before a team started
    team = served.client.create_team("turns", name="plain")
    renamed = httpx.patch(f"{served.url}/teams/{team.team_id}", json={"name": name})
    assert renamed.status_code == 422
    assert "a team name may not contain control characters" in renamed.json()["detail"]
    assert served.client.info(team.team_id).name == "plain"


def test_a_team_name_may_hold_any_printable_text(served: Served) -> None:
    team = served.client.create_team("turns", name="Équipe «β» — 研究 #2 🚀")
    assert served.client.info(team.team_id).name == "Équipe «β» — 研究 #2 🚀"


def test_a_deleted_team_cannot_be_renamed(served: Served) -> None:
    team = served.client.create_team("turns", name="before")
    served.client.delete_team(team.team_id)
    renamed = httpx.patch(f"{served.url}/teams/{team.team_id}", json={"name": "after"})
    assert renamed.status_code == 409
    assert renamed.json()["detail"] == deleted_team(team.team_id).detail
    assert "start a new team from its card (POST /teams)" in renamed.json()["detail"]
    assert served.client.info(team.team_id).name == "before"


@pytest.mark.parametrize("purge", [False, True])
def test_a_rename_a_delete_overtakes_renames_nothing(
    served: Served, monkeypatch: pytest.MonkeyPatch, purge: bool
) -> None:
    team = served.client.create_team("turns", name="before")
    teams = served.manager.storage.teams
    update = teams.update

    def deleted_first(team_id: UUID, **changes: Any) -> Any:
        served.manager.delete_team(team_id, purge=purge)  # after the route's own look
        return update(team_id, **changes)

    monkeypatch.setattr(teams, "update", deleted_first)
    renamed = httpx.patch(f"{served.url}/teams/{team.team_id}", json={"name": "after"})
    monkeypatch.undo()
    if purge:  # the 404 of any team the server lacks; no record brought back
        assert renamed.status_code == 404 and renamed.json()["code"] == TEAM_NOT_FOUND
        assert teams.get(team.team_id) is None
    else:
        assert renamed.status_code == 409
        assert renamed.json()["detail"] == deleted_team(team.team_id).detail
        record = teams.get(team.team_id)
        assert record is not None and (record.name, record.status.value) == ("before", "DELETED")


def test_a_deleted_team_cannot_be_resumed_and_the_refusal_says_what_to_do(
    served: Served,
) -> None:
    team = served.client.create_team("turns", name="gone")
    served.client.delete_team(team.team_id)
    resumed = httpx.post(f"{served.url}/teams/{team.team_id}/resume")
    assert resumed.status_code == 409
    assert resumed.json()["detail"] == deleted_team(team.team_id).detail
    assert "start a new team from its card (POST /teams)" in resumed.json()["detail"]
    assert httpx.get(f"{served.url}/teams/{team.team_id}/messages").status_code == 200


def test_a_resume_a_delete_overtakes_says_what_to_do_as_for_a_deleted_team(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    team = served.client.create_team("turns", name="raced")
    served.client.stop_team(team.team_id)
    resume = served.manager.resume_team

    def deleted_first(team_id: UUID, **options: Any) -> Any:
        served.manager.delete_team(team_id)  # the DELETE lands after the route's own look
        return resume(team_id, **options)

    monkeypatch.setattr(served.manager, "resume_team", deleted_first)
    resumed = httpx.post(f"{served.url}/teams/{team.team_id}/resume")
    assert resumed.status_code == 409
    assert resumed.json()["detail"] == deleted_team(team.team_id).detail
    assert served.client.info(team.team_id).status == "DELETED"


def test_a_body_json_cannot_read_says_why_as_malformed_json_does(served: Served) -> None:
    json_body = {"Content-Type": "application/json"}
    not_utf8 = httpx.post(f"{served.url}/teams", content=b'{"card":"\xff\xfe"}', headers=json_body)
    assert not_utf8.status_code == 422
    assert not_utf8.json()["detail"] == (
        "the request body is not UTF-8: byte 0xff at offset 9 cannot be decoded; send the JSON "
        "encoded as UTF-8 (escape other characters as \\uXXXX)"
    )
    for depth in (1_000, 100_000):
        deep = b'{"card":' + b"[" * depth + b"]" * depth + b"}"
        nested = httpx.post(f"{served.url}/teams", content=deep, headers=json_body)
        assert nested.status_code == 422
        assert nested.json()["detail"] == (
            "the request body is JSON nested too deeply to read (arrays and objects inside "
            "one another hundreds of levels deep); send the same data with less nesting"
        )
    long = b'{"card": {"name": "x", "max_turns": ' + b"1" * 5000 + b"}}"
    number = httpx.post(f"{served.url}/teams", content=long, headers=json_body)
    assert number.status_code == 422
    assert number.json()["detail"] == (
        "the request body holds a number of more than 4,300 digits, longer than Python reads; "
        "send a shorter number, or it as a string"
    )
    assert served.client.list_teams() == []


def test_a_posted_card_does_not_load_an_installed_distribution(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A card an installed distribution declares is found by a team card on the operator's
    disk, not by a posted one: the server's posted-card policy knows the fields of the
    cards it loaded, not of whatever is installed."""
    name = f"Jira{uuid.uuid4().hex[:8]}"
    dist = make_distribution(tmp_path / "site", class_name=name)
    monkeypatch.syspath_prepend(str(dist.root))
    try:
        card_yaml = (
            "name: posted\nentry_point: '@A'\n"
            "members:\n  - card: {role: A, config: {name: '@A', tools: [jira]}}\n"
        )
        serialized = serialize(TeamCard.from_yaml(TURNS))  # the framework's form, one
        serialized["members"][0]["card"]["config"]["tools"] = [{"type": "jira"}]  # tool named
        for body in ({"card_yaml": card_yaml}, {"card": serialized}):
            response = httpx.post(f"{served.url}/teams", json=body, timeout=30)
            assert response.status_code == 422
            detail = response.json()["detail"]
            assert "unknown tool card 'jira'" in detail
            assert "a posted card names only the cards the server started with" in detail
            assert "entry point" not in detail and "imports" not in detail  # it can use neither
            assert dist.package not in sys.modules
    finally:
        dist.forget()


class _Silent:
    """An event stream that opens (200, ``text/event-stream``, one ``retry`` line) and then
    says nothing, not even a keep-alive: a wedged server, or a connection gone quiet."""

    def __init__(self) -> None:
        self.opened = 0
        self.done = threading.Event()
        silent = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                silent.opened += 1
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(b"retry: 2000\n\n")
                self.wfile.flush()
                silent.done.wait(60)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.done.set()
        self._server.shutdown()
        self._server.server_close()


def test_a_silent_stream_is_a_dropped_connection_and_idle_timeout_bounds_the_follow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A stream that stops saying anything (no record, no keep-alive past its heartbeat)
    is taken for a dead connection and reconnected; ``follow(idle_timeout=...)`` then
    ends within about that time with a ServerError saying why — it used to block on each
    read for the client's whole timeout (60 s), twenty times over."""
    monkeypatch.setattr(client_module, "SILENCE", 0.3, raising=False)
    silent = _Silent()
    outcome: list[BaseException] = []
    try:
        with AkgenticClient(silent.url) as client:
            team = RemoteTeam(client, _info())

            def follow() -> None:
                try:
                    list(team.follow(idle_timeout=1.0, heartbeat=0.2))
                except ServerError as exc:
                    outcome.append(exc)

            reader = threading.Thread(target=follow, daemon=True)
            reader.start()
            reader.join(20)
            assert not reader.is_alive(), "follow still blocked on a silent stream"
    finally:
        silent.close()
    assert outcome and "nothing new came for 1s" in str(outcome[0]), outcome
    assert silent.opened >= 2  # the silence was read as a drop: it reconnected


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            b'{"card": {"name": "t", "entry_point": "@A", "max_turns": Infinity, "members": []}}',
            "max_turns: Infinity",
        ),
        (
            b'{"card_yaml": "name: t\\nentry_point: \\"@A\\"\\nmembers:\\n  - card:\\n      '
            b'role: A\\n      config: {name: \\"@A\\", tool_timeout: -.inf}\\n"}',
            "members.0.card.config.tool_timeout: -Infinity",
        ),
        (b'{"card": {"name": "t", "x": [1, NaN]}}', "x.1: NaN"),
    ],
)
def test_a_posted_card_with_a_number_json_does_not_hold_is_refused(
    served: Served, body: bytes, said: str
) -> None:
    """Python's JSON reads NaN and Infinity, YAML .inf: a card holding one was stored as
    text that is not JSON (a Postgres jsonb column refuses it) and read back as null."""
    created = httpx.post(
        f"{served.url}/teams", content=body, headers={"Content-Type": "application/json"}
    )
    assert created.status_code == 422, created.text
    assert created.json()["detail"] == (
        f"the card is not valid: {said} is not a number JSON holds (the server could not "
        "store the card); give a finite number"
    )
    assert served.client.list_teams() == []


def test_head_answers_wherever_get_does_with_its_headers_and_no_body(served: Served) -> None:
    team = served.client.create_team("turns", name="headed")
    reads = [
        "/teams",
        f"/teams/{team.team_id}",
        f"/teams/{team.team_id}/card",
        f"/teams/{team.team_id}/members",
        f"/teams/{team.team_id}/messages",
        f"/teams/{team.team_id}/usage",
        f"/teams/{uuid.uuid4()}",  # the 404 of an unknown team, as its GET
        "/team-cards",
        "/catalog/tools",
        "/health",
        "/",
    ]
    for path in reads:
        got = httpx.get(f"{served.url}{path}")
        head = httpx.head(f"{served.url}{path}")
        assert (head.status_code, head.content) == (got.status_code, b""), path
        for header in ("content-type", "content-length"):
            assert head.headers.get(header) == got.headers.get(header), (path, header)
    stop = httpx.head(f"{served.url}/teams/{team.team_id}/stop")  # POST only: as before
    assert stop.status_code == 405
    assert httpx.head(f"{served.url}/no/such/route").status_code == 404


def test_head_of_an_event_stream_answers_its_headers_at_once(
    serve_with: Callable[[ServerSettings], Served],
) -> None:
    served = serve_with(ServerSettings(port=0, heartbeat=300))  # a GET would send nothing
    team = served.client.create_team("turns", name="streamed")
    for path in ("/events", f"/teams/{team.team_id}/events"):
        head = httpx.head(f"{served.url}{path}", timeout=30)  # bounded: else a hang fails it
        assert head.status_code == 200 and head.content == b"", path
        assert head.headers["content-type"].startswith("text/event-stream"), path
    assert httpx.head(f"{served.url}/teams/{uuid.uuid4()}/events").status_code == 404

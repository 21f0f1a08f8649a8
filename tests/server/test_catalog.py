"""The catalog's admin endpoints through the real app, a real socket and the real client:
behind the server's token, the principal taken from the request, 4xx with reasons, the
credential accepted in a body only and never answered back — and an instance configured
over HTTP reaches a team the server runs."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from akgentic.agent import AgentMessage
from akgentic.catalog import SECRET_KEY_ENV, generate_key
from akgentic.client import AkgenticClient, ServerError
from akgentic.core import SentMessage
from akgentic.server import ServerSettings
from tests.server.conftest import Served
from tests.tool.search.tavily_server import KEY, FakeTavily, serve

TOKEN = "catalog-admin-token-0123"
ACTOR = f"api:token-{hashlib.sha256(TOKEN.encode()).hexdigest()[:12]}"
SEARCH_CARD = Path(__file__).resolve().parents[1] / "catalog" / "data" / "search.yaml"


@pytest.fixture
def tavily(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeTavily]:
    monkeypatch.setenv(SECRET_KEY_ENV, generate_key())
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)  # the catalog's key or none
    with serve() as fake:
        yield fake


@pytest.fixture
def admin(serve_with: Callable[[ServerSettings], Served]) -> Served:
    # SEARCH_CARD is posted, its scenario beside it, outside this server's cards folders
    return serve_with(ServerSettings(port=0, token=TOKEN, allow_posted=["paths"]))


def test_an_admin_configures_keys_enables_and_probes_and_the_trail_names_the_token(
    admin: Served, tavily: FakeTavily
) -> None:
    catalog = admin.client.catalog
    listed = {v.name: v for v in catalog.list().tools}
    assert listed["web_search"].enabled == [] and not listed["web_search"].configured
    assert listed["mcp"].kind == "card" and listed["vector.qdrant"].kind == "service"

    catalog.configure("web_search", {"api_base_url": tavily.url, "web_crawl": False})
    view = catalog.set_credential("web_search", KEY)
    assert view.credential_set and KEY not in view.model_dump_json()
    assert catalog.enable("web_search", ["agents", "api"]).enabled == ["agents", "api"]
    view, result = catalog.probe("web_search", timeout=10)
    assert (result.status, view.status) == ("active", "active")
    assert result.detail.startswith("Tavily accepted the key")
    assert [(path, auth) for path, _, auth in tavily.requests] == [("/usage", f"Bearer {KEY}")]
    detail = catalog.show("web_search")
    assert detail.config == {"api_base_url": tavily.url, "web_crawl": False}
    assert "web_search" in detail.params and detail.status_detail == result.detail
    assert catalog.disable("web_search", ["api"]).enabled == ["agents"]
    assert not catalog.set_credential("web_search", None).credential_set

    trail = catalog.audit("web_search")
    assert [(line.actor, line.action, line.detail) for line in trail] == [
        (ACTOR, "configure", {"config": {"api_base_url": tavily.url, "web_crawl": False}}),
        (ACTOR, "set_credential", {"credential": "set"}),
        (ACTOR, "enable", {"surfaces": ["agents", "api"]}),
        (ACTOR, "disable", {"surfaces": ["api"]}),
        (ACTOR, "set_credential", {"credential": "cleared"}),
    ]
    assert [line.action for line in catalog.audit(limit=1)] == ["set_credential"]
    assert TOKEN not in str(trail) and KEY not in str(trail)


def test_a_probe_over_http_is_refused_until_the_tool_is_enabled_for_the_api(
    admin: Served, tavily: FakeTavily
) -> None:
    """The api flag gates the API's use of an instance — a probe opens its credential on
    its outside exit — while reading and administering it work with every flag off (else
    no client could turn one on)."""
    catalog = admin.client.catalog
    catalog.configure("web_search", {"api_base_url": tavily.url})
    catalog.set_credential("web_search", KEY)
    catalog.enable("web_search", ["agents", "cli"])
    assert catalog.show("web_search").enabled == ["agents", "cli"]
    assert [line.action for line in catalog.audit("web_search")] == [
        "configure",
        "set_credential",
        "enable",
    ]
    with pytest.raises(ServerError) as refused:
        catalog.probe("web_search", timeout=10)
    assert refused.value.status == 409
    assert refused.value.detail == (
        "catalog tool 'web_search' is not enabled for api: akgentic catalog enable "
        'web_search --surface api (over HTTP: POST /catalog/tools/web_search/enable {"surfaces": '
        '["api"]})'
    )
    assert tavily.requests == []  # refused before the key was opened or sent
    assert catalog.show("web_search").status == "unchecked"

    assert catalog.enable("web_search", ["api"]).enabled == ["agents", "api", "cli"]
    view, result = catalog.probe("web_search", timeout=10)
    assert (result.status, view.status) == ("active", "active")
    assert [(path, auth) for path, _, auth in tavily.requests] == [("/usage", f"Bearer {KEY}")]

    catalog.disable("web_search", ["api"])
    with pytest.raises(ServerError, match="not enabled for api"):
        catalog.probe("web_search", timeout=10)
    assert len(tavily.requests) == 1
    assert catalog.remove("web_search", force=True) is True


def test_the_credential_is_never_answered_back_and_never_leaves_a_body(
    admin: Served, tavily: FakeTavily
) -> None:
    path = f"{admin.url}/catalog/tools/web_search/credential"
    headers = {"Authorization": f"Bearer {TOKEN}"}
    answers = [
        httpx.put(path, json={"secret": KEY}, headers=headers),
        httpx.put(path, json={"secret": KEY, "bogus": 1}, headers=headers),  # 422
        httpx.put(path, json={"secret": KEY, "type_name": "NOT A NAME"}, headers=headers),
        httpx.put(path, json={"secret": KEY}),  # no token: 401
        httpx.get(f"{admin.url}/catalog/tools", headers=headers),
        httpx.get(f"{admin.url}/catalog/tools/web_search", headers=headers),
        httpx.get(f"{admin.url}/catalog/audit", headers=headers),
    ]
    assert [a.status_code for a in answers] == [200, 422, 422, 401, 200, 200, 200]
    assert all(KEY not in a.text for a in answers)
    assert answers[0].json()["credential_set"] is True
    assert "bogus" in answers[1].json()["detail"]
    assert httpx.put(path, params={"secret": KEY}, headers=headers).status_code == 422
    admin.storage.close()
    stored = b"".join(p.read_bytes() for p in admin.storage.path.parent.iterdir() if p.is_file())
    assert KEY.encode() not in stored


def test_every_refusal_is_a_4xx_with_its_reason(
    admin: Served, tavily: FakeTavily, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = admin.client.catalog
    cases: list[tuple[Callable[[], object], int, str]] = [
        (lambda: catalog.show("jira"), 404, "no tool type or catalog instance is called 'jira'"),
        (lambda: catalog.configure("vector.qdrant", {"url": "ftp://x"}), 422, "url: must be an"),
        (lambda: catalog.configure("vector.qdrant", {"port": 1}), 422, "port: Extra inputs"),
        (lambda: catalog.set_credential("planning", "k"), 422, "planning takes no credential"),
        (lambda: catalog.set_credential("web_search", "  "), 422, "an empty credential"),
        (lambda: catalog.probe("planning"), 409, "planning has no outside exit to probe"),
        (lambda: catalog.enable("east", type_name="nope"), 404, "no tool type 'nope'"),
        (lambda: catalog.show("Not-A-Name"), 422, "'Not-A-Name' is not a tool name (a lower-case"),
    ]
    for call, status, reason in cases:
        with pytest.raises(ServerError) as refused:
            call()
        assert (refused.value.status, reason in refused.value.detail) == (status, True), (
            refused.value.detail
        )
    assert catalog.remove("east") is False

    monkeypatch.delenv(SECRET_KEY_ENV)
    with pytest.raises(ServerError) as no_key:
        catalog.set_credential("vector.qdrant", "qd-key")
    assert no_key.value.status == 409
    assert "cannot keep credentials" in no_key.value.detail
    assert SECRET_KEY_ENV in no_key.value.detail

    anonymous = AkgenticClient(admin.url)
    with pytest.raises(ServerError) as unauthorized:
        anonymous.catalog.list()
    assert unauthorized.value.status == 401
    anonymous.close()


@pytest.mark.parametrize(
    ("value", "said"),
    [("Infinity", "Infinity"), ("-Infinity", "-Infinity"), ("NaN", "NaN")],
)
def test_a_config_number_json_does_not_hold_is_refused_and_nothing_is_stored(
    served: Served, value: str, said: str
) -> None:
    """Python's JSON reads NaN and Infinity, JSON has neither: Infinity passed a ``gt=0``
    bound, was stored as text that is not JSON and answered back as null."""
    served.client.catalog.configure("notification", {"max_delay_seconds": 60})
    body = '{"config": {"max_delay_seconds": ' + value + "}}"
    answer = httpx.put(
        f"{served.url}/catalog/tools/notification/config",
        content=body,
        headers={"Content-Type": "application/json"},
    )
    assert answer.status_code == 422
    assert answer.json()["detail"] == (
        f"config of notification does not validate: max_delay_seconds: {said} is not a "
        "number JSON holds (the store could not keep it, nor a client read it back); give a "
        "finite number"
    )
    assert served.client.catalog.show("notification").config == {"max_delay_seconds": 60}
    assert [e.action for e in served.client.catalog.audit(name="notification")] == ["configure"]


def test_without_a_token_the_principal_is_loopback(served: Served) -> None:
    served.client.catalog.enable("planning")
    [line] = served.client.catalog.audit()
    assert (line.actor, line.action, line.instance) == ("api:loopback", "enable", "planning")


def test_an_instance_enabled_over_http_serves_a_team_the_server_runs(
    admin: Served, tavily: FakeTavily
) -> None:
    catalog = admin.client.catalog
    catalog.configure("web_search", {"api_base_url": tavily.url})
    catalog.set_credential("web_search", KEY)
    with pytest.raises(ServerError) as disabled:
        admin.client.create_team(SEARCH_CARD)
    assert disabled.value.status == 422
    assert "catalog tool 'web_search' is not enabled for agents" in disabled.value.detail

    catalog.enable("web_search")
    team = admin.client.create_team(SEARCH_CARD)
    team.send("please search the web")
    reply = next(
        r.message.message.content
        for r in team.follow(idle_timeout=30)
        if isinstance(r.message, SentMessage)
        and isinstance(r.message.message, AgentMessage)
        and r.message.recipient is not None
        and r.message.recipient.name == "@Human"
    )
    assert reply.startswith('[scripted] Web search "actor model": 2 results.')
    assert [auth for _, _, auth in tavily.requests] == [f"Bearer {KEY}"]
    assert KEY not in str(team.card.model_dump())


def test_delete_takes_orphaned_rows_only_unless_forced(admin: Served) -> None:
    catalog = admin.client.catalog
    catalog.enable("planning")
    with pytest.raises(ServerError) as kept:
        catalog.remove("planning")
    assert kept.value.status == 409
    assert kept.value.detail.startswith(
        "catalog instance 'planning' is not orphaned (its type 'planning' is installed)"
    )
    assert catalog.show("planning").enabled == ["agents"]
    assert catalog.remove("planning", force=True) is True
    assert catalog.show("planning").configured is False

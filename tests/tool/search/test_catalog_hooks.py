"""SearchTool's catalog hooks: a bound key preferred over the environment and never
serialized; ``probe()`` against the loopback Tavily (reachable, refused key, closed port)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from akgentic.tool.search import SearchTool
from akgentic.tool.search.tavily import SearchUnavailableError

from .tavily_server import ERRORS, KEY, FakeTavily, serve


@pytest.fixture
def tavily(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeTavily]:
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    with serve() as fake:
        yield fake


def test_a_bound_key_is_used_before_the_variable_and_never_serialized(
    tavily: FakeTavily, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-the-environment-s-stale-key")
    card = SearchTool(api_base_url=tavily.url)
    card.bind_credential(KEY)
    [search] = [fn for fn in card.get_tools() if fn.__name__ == "web_search"]
    assert search("actors").startswith('Web search "actors": ')
    assert [auth for _, _, auth in tavily.requests] == [f"Bearer {KEY}"]
    assert KEY not in card.model_dump_json() and KEY not in repr(card)
    assert KEY not in SearchTool.model_validate(card.model_dump()).model_dump_json()


def test_the_probe_reads_the_usage_which_costs_no_credit(tavily: FakeTavily) -> None:
    card = SearchTool(api_base_url=tavily.url)
    card.bind_credential(KEY)
    detail = card.probe(timeout=5)
    assert detail == "Tavily accepted the key; it used 150 of 1000 credits; plan Bootstrap"
    assert [(path, auth) for path, _, auth in tavily.requests] == [("/usage", f"Bearer {KEY}")]


def test_the_probe_says_the_key_was_refused(tavily: FakeTavily) -> None:
    card = SearchTool(api_base_url=tavily.url)
    card.bind_credential("tvly-revoked")
    with pytest.raises(SearchUnavailableError) as refused:
        card.probe(timeout=5)
    assert str(refused.value) == (
        f"Tavily refused the API key set in the catalog (401: {ERRORS[401]})"
    )
    assert "tvly-revoked" not in str(refused.value)


def test_the_probe_of_a_closed_port_says_it_cannot_reach_it() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    card = SearchTool(api_base_url=closed)
    card.bind_credential(KEY)
    with pytest.raises(SearchUnavailableError, match=f"^cannot reach {closed}: "):
        card.probe(timeout=5)


def test_without_a_bound_key_the_probe_uses_the_variable_or_says_it_is_unset(
    tavily: FakeTavily, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = SearchTool(api_base_url=tavily.url, api_key_env="SEARCH_KEY")
    with pytest.raises(SearchUnavailableError, match="^SEARCH_KEY is not set"):
        card.probe(timeout=5)
    assert tavily.requests == []
    monkeypatch.setenv("SEARCH_KEY", KEY)
    assert card.probe(timeout=5).startswith("Tavily accepted the key")

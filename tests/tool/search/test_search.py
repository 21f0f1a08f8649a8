"""SearchTool: the real tavily-python client against a local stand-in of the Tavily API."""

from __future__ import annotations

import inspect
import json
import os
import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import ValidationError
from pydantic_ai import ModelRetry
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo

from akgentic.agent import AgentConfig
from akgentic.core import ActorSystem, UserMessage
from akgentic.core.excerpt import validation_words
from akgentic.tool.core import RetriableError, ToolFactory
from akgentic.tool.search import SearchTool, WebCrawl, WebFetch, WebSearch

from ...agent.conftest import Script, ScriptedAgent
from ...core.conftest import Team
from .tavily_server import ERRORS, KEY, FakeTavily, serve


@pytest.fixture
def tavily(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeTavily]:
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    with serve() as fake:
        yield fake


def tools(card: SearchTool) -> dict[str, Callable[..., Any]]:
    return {fn.__name__: fn for fn in card.get_tools()}


def test_web_search_cites_every_url_and_sends_the_cards_defaults(tavily: FakeTavily) -> None:
    card = SearchTool(api_base_url=tavily.url, web_search=WebSearch(max_results=2, topic="news"))
    answer = tools(card)["web_search"]("actor model")
    assert answer.splitlines()[0] == 'Web search "actor model": 2 results.'
    assert "[1] Actors 0 — https://actors.example/intro" in answer
    assert "[2] Actors 1 — https://actors.example/history" in answer
    assert "Carl Hewitt in 1973" in answer
    [(path, body, auth)] = tavily.requests
    assert (path, auth) == ("/search", f"Bearer {KEY}")
    assert body["query"] == "actor model" and body["max_results"] == 2
    assert body["topic"] == "news" and body["search_depth"] == "basic"


def test_the_params_are_the_defaults_of_the_tool_arguments() -> None:
    card = SearchTool(
        web_search=WebSearch(max_results=7, include_domains=["docs.example"]),
        web_fetch=WebFetch(chunks_per_source=2),
        web_crawl=WebCrawl(max_depth=2, limit=50),
    )
    found = {name: inspect.signature(fn).parameters for name, fn in tools(card).items()}
    assert found["web_search"]["max_results"].default == 7
    assert found["web_search"]["include_domains"].default == ["docs.example"]
    assert found["web_fetch"]["chunks_per_source"].default == 2
    assert found["web_fetch"]["query"].default is inspect.Parameter.empty  # required
    assert found["web_crawl"]["crawl_instructions"].default is inspect.Parameter.empty
    assert (found["web_crawl"]["max_depth"].default, found["web_crawl"]["limit"].default) == (2, 50)
    assert list(tools(SearchTool(web_crawl=False, web_fetch=False))) == ["web_search"]


def test_params_refuse_values_outside_tavilys_ranges() -> None:
    with pytest.raises(ValidationError, match="less than or equal to 5"):
        WebFetch(chunks_per_source=6)
    with pytest.raises(ValidationError, match="less than or equal to 20"):
        WebSearch(max_results=21)
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        WebCrawl(depth=2)  # type: ignore[call-arg]


def test_a_base_url_that_is_no_http_url_is_refused_in_words_not_as_a_pattern() -> None:
    with pytest.raises(ValidationError) as info:
        SearchTool(api_base_url="api.tavily.com")
    message = validation_words(info.value)
    assert message == (
        "api_base_url: must be an http:// or https:// URL, e.g. https://api.tavily.com, "
        "got 'api.tavily.com'"
    )
    assert SearchTool(api_base_url="http://127.0.0.1:9").api_base_url == "http://127.0.0.1:9"


def test_web_fetch_returns_the_passages_for_the_query_and_lists_failures(
    tavily: FakeTavily,
) -> None:
    card = SearchTool(api_base_url=tavily.url, web_fetch=WebFetch(chunks_per_source=2))
    answer = tools(card)["web_fetch"](
        ["https://actors.example/intro", "https://nowhere.example/"], "how do actors talk"
    )
    assert answer.splitlines()[0] == 'Fetched 1 page for "how do actors talk".'
    assert "[1] https://actors.example/intro\nAn actor handles one message" in answer
    assert "only by messages." in answer and "Supervisors" not in answer  # 2 chunks
    assert "[failed] https://nowhere.example/: Failed to fetch url" in answer
    [(_, body, _)] = tavily.requests
    assert body["query"] == "how do actors talk" and body["chunks_per_source"] == 2


def test_a_long_page_is_cut_with_a_note(tavily: FakeTavily) -> None:
    card = SearchTool(api_base_url=tavily.url, web_fetch=WebFetch(max_chars=600))
    answer = tools(card)["web_fetch"](["https://actors.example/long"], "letters")
    page = " [...] ".join(c * 480 for c in "xyz")
    assert f"\n[cut: {len(page) - 600:,} more characters; narrow the query" in answer
    assert "z" * 10 not in answer


def test_web_crawl_sends_crawl_instructions_as_tavilys_instructions(tavily: FakeTavily) -> None:
    card = SearchTool(api_base_url=tavily.url, web_crawl=WebCrawl(max_depth=2, limit=2))
    answer = tools(card)["web_crawl"]("https://actors.example", "only history pages")
    assert answer.splitlines()[0] == "Crawled https://actors.example: 2 pages."
    assert "[2] https://actors.example/history" in answer
    [(path, body, _)] = tavily.requests
    assert path == "/crawl" and body["instructions"] == "only history pages"
    assert (body["max_depth"], body["limit"], body["chunks_per_source"]) == (2, 2, 3)


def test_a_missing_key_is_answered_and_nothing_is_sent(
    tavily: FakeTavily, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TAVILY_API_KEY")
    card = SearchTool(api_base_url=tavily.url)
    answer = tools(card)["web_search"]("anything")
    assert answer == (
        "search is unavailable: TAVILY_API_KEY is not set (export a Tavily API key to enable "
        "web search)"
    )
    assert tavily.requests == []


def test_an_invalid_key_is_answered_with_tavilys_reason(
    tavily: FakeTavily, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEARCH_KEY", "tvly-revoked")
    card = SearchTool(api_base_url=tavily.url, api_key_env="SEARCH_KEY")
    assert tools(card)["web_fetch"](["https://actors.example/intro"], "q") == (
        f"search is unavailable: Tavily refused the API key in SEARCH_KEY (401: {ERRORS[401]})"
    )


@pytest.mark.parametrize(
    ("status", "answer"),
    [
        (429, f"Tavily's rate limit is reached (429: {ERRORS[429]})"),
        (432, f"Tavily refused this account's request: {ERRORS[432]}"),
        (433, f"Tavily refused this account's request: {ERRORS[433]}"),
        (500, "Tavily answered 500: 500 Server Error"),
    ],
)
def test_quota_rate_and_server_errors_are_answered_never_raised(
    tavily: FakeTavily, status: int, answer: str
) -> None:
    tavily.status = status
    card = SearchTool(api_base_url=tavily.url)
    for name, args in [
        ("web_search", ("q",)),
        ("web_fetch", (["https://actors.example/intro"], "q")),
        ("web_crawl", ("https://actors.example", "all")),
    ]:
        assert tools(card)[name](*args).startswith(f"search is unavailable: {answer}")


def test_refused_arguments_are_a_retriable_error_the_model_reads(tavily: FakeTavily) -> None:
    tavily.status = 400
    card = SearchTool(api_base_url=tavily.url)
    with pytest.raises(
        RetriableError, match=r"Tavily refused these arguments \(400\): Bad Request"
    ):
        tools(card)["web_search"]("q")
    [wrapped] = [t for t in ToolFactory([card], retry_exception=ModelRetry).get_tools()][:1]
    with pytest.raises(ModelRetry, match="Correct them and call again"):
        wrapped("q")


def test_a_network_failure_is_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    answer = tools(SearchTool(api_base_url=closed))["web_search"]("q")
    assert answer.startswith(f"search is unavailable: cannot reach {closed}: ")


def test_an_agent_searches_and_cites_through_the_tool(
    system: ActorSystem, team: Team, tavily: FakeTavily
) -> None:
    def cite(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        [part] = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
        first = next(line for line in str(part.content).splitlines() if line.startswith("[1]"))
        return ModelResponse(parts=[TextPart(f"Source: {first.split(' — ')[1]}")])

    script = Script(
        lambda m, i: ModelResponse(parts=[ToolCallPart("web_search", {"query": "actors"})]), cite
    )
    agent_class = type("Searcher", (ScriptedAgent,), {"script": script})
    agent = system.createActor(
        agent_class,
        config=AgentConfig(
            name="@Searcher", tools=[SearchTool(api_base_url=tavily.url)], stream_events=False
        ),
        team_id=team.team_id,
    )
    reply = system.ask(agent, UserMessage(content="find"), timeout=30)
    assert reply.content == "Source: https://actors.example/intro"  # type: ignore[attr-defined]
    offered = {t.name for t in script.infos[0].function_tools}
    assert {"web_search", "web_fetch", "web_crawl"} <= offered


@pytest.mark.skipif(
    not (os.environ.get("TAVILY_API_KEY") and os.environ.get("AKGENTIC_TEST_TAVILY_LIVE")),
    reason="needs the real Tavily: set TAVILY_API_KEY and AKGENTIC_TEST_TAVILY_LIVE=1",
)
def test_the_real_tavily_answers_a_search() -> None:  # pragma: no cover — needs the service
    answer = tools(SearchTool())["web_search"]("actor model Carl Hewitt")
    assert answer.startswith('Web search "actor model Carl Hewitt":') and "https://" in answer


# -- a provider (or a gateway in front of it) answering garbage: never a raw exception --
CALLS: list[tuple[str, tuple[Any, ...]]] = [
    ("web_search", ("q",)),
    ("web_fetch", (["https://actors.example/intro"], "q")),
    ("web_crawl", ("https://actors.example", "all")),
]


@pytest.mark.parametrize(
    ("status", "body", "why"),
    [
        (200, b"[1, 2]", "its answer is not a JSON object but a list"),
        (200, b"null", "its answer is not a JSON object but null"),
        (200, b'"results"', "its answer is not a JSON object but a string"),
        (200, b"<html>Bad gateway</html>", "its answer is not JSON"),
        (202, b"{}", "it answered 202, not a result"),
    ],
)
def test_an_answer_that_is_no_result_is_said_never_raised(
    tavily: FakeTavily, status: int, body: bytes, why: str
) -> None:
    tavily.raw = (status, body)
    card = SearchTool(api_base_url=tavily.url)
    for name, args in CALLS:
        answer = tools(card)[name](*args)
        assert answer.startswith(f"search is unavailable: Tavily at {tavily.url}: {why}"), answer


@pytest.mark.parametrize(
    "results",
    [
        '"abc"',
        "[1, null, []]",
        '{"url": "https://a.example"}',
    ],
)
def test_results_that_are_not_entries_are_left_out_and_said(
    tavily: FakeTavily, results: str
) -> None:
    tavily.raw = (200, f'{{"results": {results}, "failed_results": [7]}}'.encode())
    card = SearchTool(api_base_url=tavily.url)
    for name, args in CALLS:
        answer = tools(card)[name](*args)
        assert " 0 " in answer.splitlines()[0], answer
        assert "unreadable" in answer and "left out" in answer, answer


def test_missing_fields_of_a_result_are_not_rendered_as_none(tavily: FakeTavily) -> None:
    tavily.raw = (200, b'{"results": [{"url": null, "title": null, "content": 42}]}')
    answer = tools(SearchTool(api_base_url=tavily.url))["web_search"]("q")
    assert "None" not in answer and "42" not in answer
    assert answer == 'Web search "q": 1 result.\n\n[1] (no URL)'


def test_a_huge_title_url_or_answer_is_cut_and_extra_results_are_left_out(
    tavily: FakeTavily,
) -> None:
    result = {"url": "https://a.example/" + "u" * 5_000, "title": "t" * 5_000, "content": "c"}
    tavily.raw = (
        200,
        json.dumps({"answer": "a" * 50_000, "results": [result] * 1_000}).encode(),
    )
    card = SearchTool(api_base_url=tavily.url, web_search=WebSearch(max_results=3))
    answer = tools(card)["web_search"]("q")
    assert answer.splitlines()[0] == 'Web search "q": 3 results (Tavily sent 1,000; 997 left out).'
    assert "[3] " in answer and "[4] " not in answer
    assert "t" * 400 not in answer and "u" * 1_500 not in answer and "a" * 1_500 not in answer
    assert len(answer) < 5_000


def test_a_timeout_is_answered_never_raised(
    tavily: FakeTavily, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fake transport: the client's request times out at once, nothing is sent."""
    import requests

    def timed_out(self: Any, request: Any, **kwargs: Any) -> Any:
        raise requests.ReadTimeout("read timed out")

    monkeypatch.setattr(requests.adapters.HTTPAdapter, "send", timed_out)
    card = SearchTool(api_base_url=tavily.url)
    for name, args in CALLS:
        answer = tools(card)[name](*args)
        assert answer.startswith("search is unavailable: Tavily did not answer in time"), answer
    assert tavily.requests == []

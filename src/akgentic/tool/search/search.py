"""SearchTool: web search, fetch and crawl through Tavily.

Three TOOL_CALL capabilities, each ``Param | bool`` (False removes it):

- ``web_search(query, ...)`` — ranked results: title, URL, snippet.
- ``web_fetch(urls, query, ...)`` — the passages of each URL that answer ``query``.
- ``web_crawl(url, crawl_instructions, ...)`` — a directed walk of a site.

Every field of a capability's param is the default of the matching tool argument, bound
when the tool is built. ``query`` and ``crawl_instructions`` have no default: unfiltered,
Tavily returns whole pages and undirected site walks — enough output to crowd out the
conversation. Answers are compact, cite their URLs and cut long texts with a note.

Failures never escape a tool: a missing or refused key, a quota, a rate limit, the network
or a server error is answered ``search is unavailable: <why>``; arguments Tavily refuses
are a ``RetriableError``. ``api_base_url`` points the client elsewhere (a gateway, a proxy).

The key: the catalog's credential when the card is a catalog instance (``web_search``:
:meth:`SearchTool.bind_credential` keeps it in a private attribute, never serialized),
else the environment variable ``api_key_env`` (default ``TAVILY_API_KEY``), read at each
call. :meth:`SearchTool.probe` is the catalog's "Test": ``GET /usage``, which costs no
credit.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field, PrivateAttr, field_validator

from akgentic.core.urls import http_url
from akgentic.core.words import env_var_name
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.channels import TOOL_CALL
from akgentic.tool.core.params import serve
from akgentic.tool.search.params import (
    CrawlExtractDepth,
    SearchDepth,
    SearchTopic,
    TimeRange,
    WebCrawl,
    WebFetch,
    WebSearch,
)
from akgentic.tool.search.render import render_crawl, render_fetch, render_search
from akgentic.tool.search.tavily import SearchUnavailableError, call_tavily, read_usage

__all__ = ["UNAVAILABLE", "SearchTool"]

UNAVAILABLE = "search is unavailable: "
"""How every tool's answer starts when search cannot be done."""


class SearchTool(ToolCard):
    """Web search, fetch and crawl via Tavily; see the module docstring."""

    web_search: WebSearch | bool = True
    web_fetch: WebFetch | bool = True
    web_crawl: WebCrawl | bool = True
    api_key_env: str = Field(default="TAVILY_API_KEY", min_length=1)
    """The environment variable holding the Tavily key (the key is never in the card)."""
    api_base_url: str | None = None
    """Another Tavily-compatible endpoint; the public API when unset."""

    @field_validator("api_key_env")
    @classmethod
    def _a_variable_name(cls, value: str) -> str:
        return env_var_name(value, "TAVILY_API_KEY")

    @field_validator("api_base_url")
    @classmethod
    def _an_http_url(cls, value: str | None) -> str | None:
        return http_url(value, "https://api.tavily.com")

    _api_key: str | None = PrivateAttr(default=None)

    # -- the catalog's hooks ----------------------------------------------------------
    def bind_credential(self, secret: str) -> None:
        """The Tavily key of a catalog instance: kept private (never serialized, so never
        in a team card or the event log) and preferred over ``api_key_env``."""
        self._api_key = secret.strip() or None

    def probe(self, timeout: float) -> str:
        """Check the key without spending a credit: Tavily's ``GET /usage`` (its credits
        page prices search, extract, crawl, map and research; ``/usage`` only reports
        them), within ``timeout``. Answers the credits this key used; raises
        :class:`~akgentic.tool.search.tavily.SearchUnavailableError` saying why not."""
        key, label = self._key()
        usage = call_tavily(
            lambda client: read_usage(client, timeout),
            key=key,
            key_label=label,
            base_url=self.api_base_url,
        )
        return _usage_summary(usage)

    def _key(self) -> tuple[str, str]:
        """The key in force and how a refusal names it: the catalog's, else the variable's."""
        if self._api_key:
            return self._api_key, "the API key set in the catalog"
        key = os.environ.get(self.api_key_env, "").strip()
        if not key:
            raise SearchUnavailableError(
                f"{self.api_key_env} is not set (export a Tavily API key to enable web search)"
            )
        return key, f"the API key in {self.api_key_env}"

    def get_tools(self) -> list[Callable[..., Any]]:
        tools: list[Callable[..., Any]] = []
        search = serve(self.web_search, WebSearch, TOOL_CALL)
        if search is not None:
            tools.append(self._web_search(search))
        fetch = serve(self.web_fetch, WebFetch, TOOL_CALL)
        if fetch is not None:
            tools.append(self._web_fetch(fetch))
        crawl = serve(self.web_crawl, WebCrawl, TOOL_CALL)
        if crawl is not None:
            tools.append(self._web_crawl(crawl))
        return tools

    def _call(self, action: Callable[[Any], dict[str, Any]]) -> dict[str, Any] | str:
        try:
            key, label = self._key()
            return call_tavily(action, key=key, key_label=label, base_url=self.api_base_url)
        except SearchUnavailableError as exc:
            return f"{UNAVAILABLE}{exc}"

    def _web_search(self, p: WebSearch) -> Callable[..., str]:
        call, fetch = self._call, self.called_as("web_fetch")

        def web_search(
            query: Annotated[str, Field(min_length=1)],
            max_results: Annotated[int, Field(ge=0, le=20)] = p.max_results,
            search_depth: SearchDepth = p.search_depth,
            topic: SearchTopic = p.topic,
            time_range: TimeRange | None = p.time_range,
            include_domains: list[str] | None = list(p.include_domains) or None,
            exclude_domains: list[str] | None = list(p.exclude_domains) or None,
        ) -> str:
            found = call(
                lambda client: client.search(
                    query=query,
                    max_results=max_results,
                    search_depth=search_depth,
                    topic=topic,
                    time_range=time_range,
                    include_domains=include_domains,
                    exclude_domains=exclude_domains,
                )
            )
            if isinstance(found, str):
                return found
            return render_search(query, found, p.max_chars, max_results, fetch)

        web_search.__doc__ = (  # names web_fetch as the model calls it
            "Search the web. Answers ranked results, each with its title, URL and a\n"
            f"snippet; cite the URLs you use. Fetch a URL with {fetch} for more of it."
        )
        return web_search

    def _web_fetch(self, p: WebFetch) -> Callable[..., str]:
        call = self._call

        def web_fetch(
            urls: Annotated[list[str], Field(min_length=1, max_length=20)],
            query: Annotated[str, Field(min_length=1)],
            chunks_per_source: Annotated[int, Field(ge=1, le=5)] = p.chunks_per_source,
            extract_depth: CrawlExtractDepth = p.extract_depth,
        ) -> str:
            """Read web pages: for each URL, the passages most relevant to ``query`` (say
            what you are looking for), at most ``chunks_per_source`` of them."""
            found = call(
                lambda client: client.extract(
                    urls=urls,
                    query=query,
                    chunks_per_source=chunks_per_source,
                    extract_depth=extract_depth,
                )
            )
            if isinstance(found, str):
                return found
            return render_fetch(query, found, p.max_chars, len(urls))

        return web_fetch

    def _web_crawl(self, p: WebCrawl) -> Callable[..., str]:
        call = self._call

        def web_crawl(
            url: Annotated[str, Field(min_length=1)],
            crawl_instructions: Annotated[str, Field(min_length=1)],
            max_depth: Annotated[int, Field(ge=1, le=5)] = p.max_depth,
            max_breadth: Annotated[int, Field(ge=1, le=500)] = p.max_breadth,
            limit: Annotated[int, Field(ge=1)] = p.limit,
            chunks_per_source: Annotated[int, Field(ge=1, le=5)] = p.chunks_per_source,
            extract_depth: CrawlExtractDepth = p.extract_depth,
            allow_external: bool = p.allow_external,
        ) -> str:
            """Crawl a site from ``url``: ``crawl_instructions`` says which links to follow
            and what to extract (e.g. "pricing pages only"). Answers each page's URL and
            its most relevant passages."""
            found = call(
                lambda client: client.crawl(
                    url=url,
                    instructions=crawl_instructions,
                    max_depth=max_depth,
                    max_breadth=max_breadth,
                    limit=limit,
                    chunks_per_source=chunks_per_source,
                    extract_depth=extract_depth,
                    allow_external=allow_external,
                )
            )
            if isinstance(found, str):
                return found
            return render_crawl(url, found, p.max_chars, limit)

        return web_crawl


def _usage_summary(usage: dict[str, Any]) -> str:
    """One line of ``GET /usage``: the key's credits this cycle, and the account's plan."""
    key, account = usage.get("key"), usage.get("account")
    line = "Tavily accepted the key"
    if isinstance(key, dict) and key.get("usage") is not None:
        limit = key.get("limit")
        line += f"; it used {key['usage']} of {limit if limit is not None else 'unlimited'} credits"
    if isinstance(account, dict) and account.get("current_plan"):
        line += f"; plan {account['current_plan']}"
    return line

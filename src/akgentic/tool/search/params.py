"""The three capabilities of SearchTool; every field is the default of a tool argument.

A field is read once, when the card builds its tool, and becomes that argument's default:
configuration biases the model without taking the choice away from it. The ranges are
Tavily's own (the API answers 400 outside them), checked here so a bad card fails where it
is written.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from akgentic.tool.core.params import BaseToolParam

__all__ = [
    "CrawlExtractDepth",
    "SearchDepth",
    "SearchTopic",
    "TimeRange",
    "WebCrawl",
    "WebFetch",
    "WebSearch",
]

SearchDepth = Literal["basic", "advanced", "fast", "ultra-fast"]
SearchTopic = Literal["general", "news", "finance"]
TimeRange = Literal["day", "week", "month", "year"]
CrawlExtractDepth = Literal["basic", "advanced"]


class WebSearch(BaseToolParam):
    """``web_search(query, ...)``: ranked results, each a title, its URL and a snippet.

    ``max_results`` 0-20 (Tavily's default 5); ``search_depth`` trades latency for
    relevance (``advanced`` costs two credits); ``topic`` ``news`` favours recent
    mainstream reporting; ``time_range`` filters by publication date; the domain lists
    restrict or exclude sites. ``max_chars`` cuts each snippet, with a note.
    """

    max_results: int = Field(
        default=5, ge=0, le=20, description="Results per search, 0-20 (Tavily's default 5)."
    )
    search_depth: SearchDepth = Field(
        default="basic",
        description="Latency against relevance: advanced is more relevant and costs two credits.",
    )
    topic: SearchTopic = Field(
        default="general",
        description="What to search: general, or news (favours recent mainstream reporting).",
    )
    time_range: TimeRange | None = Field(
        default=None, description="Only results published in this range (None: any time)."
    )
    include_domains: list[str] = Field(default_factory=list)
    exclude_domains: list[str] = Field(default_factory=list)
    max_chars: int = Field(default=1_000, ge=100)


class WebFetch(BaseToolParam):
    """``web_fetch(urls, query, ...)``: the passages of each URL that answer ``query``.

    ``query`` is required of the model and has no default here: it is what makes Tavily
    return the ``chunks_per_source`` most relevant passages (1-5, each at most 500
    characters) instead of whole pages. ``extract_depth`` ``advanced`` also reads tables
    and embedded content. ``max_chars`` cuts each page's text, with a note.
    """

    chunks_per_source: int = Field(default=3, ge=1, le=5)
    extract_depth: CrawlExtractDepth = "basic"
    max_chars: int = Field(default=4_000, ge=100)


class WebCrawl(BaseToolParam):
    """``web_crawl(url, crawl_instructions, ...)``: a site walk from ``url``.

    ``crawl_instructions`` is required of the model and has no default here: it tells
    Tavily which links to follow and what to return (and makes it return the
    ``chunks_per_source`` most relevant passages of each page). It is sent to Tavily as its
    ``instructions``; the inherited ``instructions`` field of this param is something else —
    guidance appended to the tool's docstring for the model. ``max_depth`` 1-5,
    ``max_breadth`` (links per page) 1-500, ``limit`` (pages in all) from 1.
    """

    max_depth: int = Field(
        default=1, ge=1, le=5, description="How many links deep from url the walk goes, 1-5."
    )
    max_breadth: int = Field(
        default=20, ge=1, le=500, description="The most links followed from one page, 1-500."
    )
    limit: int = Field(default=20, ge=1, description="The most pages read in all.")
    chunks_per_source: int = Field(default=3, ge=1, le=5)
    extract_depth: CrawlExtractDepth = "basic"
    allow_external: bool = False
    max_chars: int = Field(default=2_000, ge=100)

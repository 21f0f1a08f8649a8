"""What the model reads back from Tavily: compact text that cites every URL.

Each source is one block — ``[n] title — url`` then its text — and a text longer than the
budget is cut with a note saying how much was left out and how to get less. A source
Tavily could not read is listed with its reason rather than dropped. What the model sent
(a query, a URL) is quoted clipped: an answer never echoes a megabyte it was given.
"""

from __future__ import annotations

from typing import Any

from akgentic.core.excerpt import clip, cut
from akgentic.core.words import counted

__all__ = ["render_crawl", "render_fetch", "render_search"]


def _block(index: int, url: str, title: str, body: str) -> str:
    head = f"[{index}] {title} — {url}" if title else f"[{index}] {url}"
    return f"{head}\n{body}" if body else head


def render_search(query: str, response: dict[str, Any], budget: int) -> str:
    results = response.get("results") or []
    lines = [f'Web search "{clip(query)}": {counted(len(results), "result")}.']
    if response.get("answer"):
        lines.append(f"Answer: {response['answer']}")
    for index, result in enumerate(results, 1):
        body = cut(str(result.get("content") or ""), budget, "web_fetch the URL for more")
        lines.append(_block(index, str(result.get("url", "")), str(result.get("title", "")), body))
    return "\n\n".join(lines)


def render_fetch(query: str, response: dict[str, Any], budget: int) -> str:
    results = response.get("results") or []
    failed = response.get("failed_results") or []
    lines = [f'Fetched {counted(len(results), "page")} for "{clip(query)}".']
    hint = "narrow the query or lower chunks_per_source"
    for index, result in enumerate(results, 1):
        body = cut(str(result.get("raw_content") or ""), budget, hint)
        lines.append(_block(index, str(result.get("url", "")), "", body))
    for failure in failed:
        url, why = str(failure.get("url", "")), str(failure.get("error", "not readable"))
        lines.append(f"[failed] {clip(url)}: {clip(why, 500)}")
    return "\n\n".join(lines)


def render_crawl(response: dict[str, Any], budget: int) -> str:
    results = response.get("results") or []
    base = response.get("base_url", "")
    lines = [f"Crawled {clip(str(base))}: {counted(len(results), 'page')}."]
    hint = "narrow crawl_instructions or lower chunks_per_source"
    for index, result in enumerate(results, 1):
        body = cut(str(result.get("raw_content") or ""), budget, hint)
        lines.append(_block(index, str(result.get("url", "")), "", body))
    return "\n\n".join(lines)

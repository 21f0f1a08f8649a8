"""What the model reads back from Tavily: compact text that cites every URL.

Each source is one block — ``[n] title — url`` then its text — and a text longer than the
budget is cut with a note saying how much was left out and how to get less. A source
Tavily could not read is listed with its reason rather than dropped. What the model sent
(a query, a URL) is quoted clipped: an answer never echoes a megabyte it was given.

What Tavily sends is read as untrusted: a title or a URL is clipped too, entries past the
number asked for are left out (the header says how many), an entry that is not an object
is left out and counted in a last line, and a missing or non-text field is left empty
(never rendered ``None``).
"""

from __future__ import annotations

from typing import Any

from akgentic.core.excerpt import clip, cut
from akgentic.core.words import counted

__all__ = ["render_crawl", "render_fetch", "render_search"]

TITLE_CHARS = 200
"""The most of a result's title the model reads."""

URL_CHARS = 500
"""The most of a result's URL the model reads."""


def _entries(response: dict[str, Any], key: str) -> tuple[list[dict[str, Any]], int]:
    """The entries of ``response[key]`` that are objects, and how many were not (a value
    that is not a list counts as one)."""
    value = response.get(key)
    if value is None:
        return [], 0
    if not isinstance(value, list):
        return [], 1
    entries = [item for item in value if isinstance(item, dict)]
    return entries, len(value) - len(entries)


def _text(entry: dict[str, Any], key: str) -> str:
    value = entry.get(key)
    return value if isinstance(value, str) else ""


def _shown(entries: list[dict[str, Any]], limit: int, noun: str) -> tuple[list[Any], str]:
    """The first ``limit`` entries, and ``N nouns`` saying how many more Tavily sent."""
    said = counted(min(len(entries), limit), noun)
    if len(entries) > limit:
        said += f" (Tavily sent {len(entries):,}; {len(entries) - limit:,} left out)"
    return entries[:limit], said


def _unreadable(count: int) -> list[str]:
    if not count:
        return []
    return [f"[{counted(count, 'entry', 'entries')} of Tavily's answer unreadable, left out]"]


def _block(index: int, entry: dict[str, Any], body: str, *, titled: bool = False) -> str:
    url = clip(_text(entry, "url"), URL_CHARS) or "(no URL)"
    title = clip(_text(entry, "title"), TITLE_CHARS) if titled else ""
    head = f"[{index}] {title} — {url}" if title else f"[{index}] {url}"
    return f"{head}\n{body}" if body else head


def render_search(
    query: str, response: dict[str, Any], budget: int, limit: int, fetch: str = "web_fetch"
) -> str:
    """``limit``: the results asked for (``max_results``); ``fetch``: the name the model
    calls ``web_fetch`` by (``<set>_web_fetch`` in a toolset), for the cut texts' advice."""
    results, unreadable = _entries(response, "results")
    results, said = _shown(results, limit, "result")
    lines = [f'Web search "{clip(query)}": {said}.']
    answer = _text(response, "answer")
    if answer:
        lines.append(f"Answer: {cut(answer, budget, f'{fetch} a result for more')}")
    for index, result in enumerate(results, 1):
        body = cut(_text(result, "content"), budget, f"{fetch} the URL for more")
        lines.append(_block(index, result, body, titled=True))
    return "\n\n".join(lines + _unreadable(unreadable))


def render_fetch(query: str, response: dict[str, Any], budget: int, limit: int) -> str:
    """``limit``: the URLs asked for."""
    results, unreadable = _entries(response, "results")
    failed, unreadable_failures = _entries(response, "failed_results")
    results, said = _shown(results, limit, "page")
    lines = [f'Fetched {said} for "{clip(query)}".']
    hint = "narrow the query or lower chunks_per_source"
    for index, result in enumerate(results, 1):
        body = cut(_text(result, "raw_content"), budget, hint)
        lines.append(_block(index, result, body))
    for failure in failed[:limit]:
        url, why = _text(failure, "url"), _text(failure, "error") or "not readable"
        lines.append(f"[failed] {clip(url)}: {clip(why, 500)}")
    return "\n\n".join(lines + _unreadable(unreadable + unreadable_failures))


def render_crawl(url: str, response: dict[str, Any], budget: int, limit: int) -> str:
    """``url``: where the crawl started (said when Tavily does not say its ``base_url``);
    ``limit``: the pages asked for."""
    results, unreadable = _entries(response, "results")
    results, said = _shown(results, limit, "page")
    base = _text(response, "base_url") or url
    lines = [f"Crawled {clip(base)}: {said}."]
    hint = "narrow crawl_instructions or lower chunks_per_source"
    for index, result in enumerate(results, 1):
        body = cut(_text(result, "raw_content"), budget, hint)
        lines.append(_block(index, result, body))
    return "\n\n".join(lines + _unreadable(unreadable))

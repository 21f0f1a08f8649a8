"""Reading a ``text/event-stream``: lines in, events out (the WHATWG rules we need)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = ["SseEvent", "parse_sse", "sse_lines"]

_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event; ``event`` is ``""`` for a keep-alive comment."""

    event: str
    data: str
    id: str | None = None


KEEP_ALIVE = SseEvent("", "")


def parse_sse(lines: Iterable[str]) -> Iterator[SseEvent]:
    """Events from the stream's lines (without their line breaks). A comment yields
    :data:`KEEP_ALIVE`, so a reader wakes on heartbeats too."""
    event, event_id = "", None
    data: list[str] = []
    for line in lines:
        if not line:
            if data or event:
                yield SseEvent(event or "message", "\n".join(data), event_id)
            event, event_id, data = "", None, []
            continue
        if line.startswith(":"):
            yield KEEP_ALIVE
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
        elif field == "id":
            event_id = value


def sse_lines(chunks: Iterable[str]) -> Iterator[str]:
    """The lines of a stream's text (without their breaks), as SSE ends them: at CRLF, LF
    or CR only — not at the other characters ``str.splitlines`` (and httpx's
    ``iter_lines``) break at (U+2028, U+2029, U+0085...), which an event's JSON carries
    raw inside its strings. A CR at the end of a chunk waits for the next: it may be the
    first half of a CRLF."""
    buffer = ""
    for chunk in chunks:
        scan = max(len(buffer) - 1, 0)  # what was scanned had no break but a last CR
        buffer += chunk
        start = 0
        for found in _BREAK.finditer(buffer, scan):
            if found.group() == "\r" and found.end() == len(buffer):
                break
            yield buffer[start : found.start()]
            start = found.end()
        buffer = buffer[start:]
    if buffer:
        yield buffer.removesuffix("\r")

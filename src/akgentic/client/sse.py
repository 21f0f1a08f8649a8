"""Reading a ``text/event-stream``: lines in, events out (the WHATWG rules we need)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = ["SseEvent", "parse_sse"]


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

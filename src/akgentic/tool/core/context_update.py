"""ContextUpdater: at most one ``**Context update N**`` block per turn.

It reads every LLM_CONTEXT provider, diffs each snapshot against the baseline
persisted in ``ToolState`` and returns one block — or None when nothing changed. It
never appends: the append is the agent layer's job.

The trust gate. Baselines are honoured only while the last marker they claim to have
delivered (``context_update_seq``) is still visible in the history:

- counter behind the visible markers (a save was lost after later blocks went out):
  baselines kept, the next delta re-states what the missed blocks said — a repeat,
  never an omission; the new block is numbered past every visible marker;
- last delivered marker no longer visible (compaction, trimming, an out-of-band wipe,
  or a block that was never appended): baselines dropped, the next block is a full
  snapshot;
- otherwise: an ordinary delta.

So a wrong, stale or missing save degrades to a wider delta or a full snapshot,
never to a lost update.

The trap this class is shaped around: never cache a ToolState reference. It reads
``observer.state.tool_state`` on every call, and holds the observer weakly.
"""

from __future__ import annotations

import logging
import re
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import compress, count
from operator import is_not
from typing import Any

from akgentic.tool.core.context_state import ContextState
from akgentic.tool.core.guard import describe_exception
from akgentic.tool.core.observer import ActorToolObserver
from akgentic.tool.core.state import ToolState, read_tool_state
from akgentic.tool.errors import ToolObserverGone

__all__ = ["MARKER_PATTERN", "ContextUpdater", "iter_message_texts", "marker"]

logger = logging.getLogger("akgentic.tool")

ContextProvider = Callable[[], ContextState | None]

MARKER_PATTERN = re.compile(r"^\*\*Context update (\d+)\*\*", re.MULTILINE)
"""A delivered block's marker, at the start of a line."""


def marker(seq: int) -> str:
    """The marker line that opens block ``seq``."""
    return f"**Context update {seq}**"


def iter_message_texts(messages: Iterable[object]) -> Iterator[str]:
    """The text of a history, whatever shape its items take.

    An item is a ``str``; or has ``.content`` (a str, or a list whose str items count);
    or has ``.parts`` whose parts are read the same way — which covers pydantic-ai's
    ``ModelRequest``/``ModelResponse`` without importing it. Anything else is ignored.
    """
    for item in messages:
        if isinstance(item, str):
            yield item
            continue
        yield from _content_texts(item)
        parts = getattr(item, "parts", None)
        if isinstance(parts, Iterable) and not isinstance(parts, str | bytes):
            for part in parts:
                if isinstance(part, str):
                    yield part
                else:
                    yield from _content_texts(part)


def _content_texts(item: object) -> Iterator[str]:
    content = getattr(item, "content", None)
    if isinstance(content, str):
        yield content
    elif isinstance(content, list | tuple):
        yield from (piece for piece in content if isinstance(piece, str))


def _markers_in(message: object) -> frozenset[int]:
    found: set[int] = set()
    for text in iter_message_texts((message,)):
        if "**Context update " in text:  # cheap pre-check before the regex
            found.update(int(n) for n in MARKER_PATTERN.findall(text))
    return frozenset(found)


class _MarkerScan:
    """The markers a history shows, read in O(new messages) per turn.

    A message in the history is never edited (a compaction replaces messages), so the
    messages two successive histories share — the same objects, in the same places, which
    is the whole history but the turn's new messages — show the markers they showed last
    time: only the messages past that shared prefix are read (the prefix itself is found
    by identity at C speed, not scanned for text). Only the messages that carry a marker
    are remembered, by position."""

    def __init__(self) -> None:
        self._messages: list[object] = []
        self._marked: list[tuple[int, frozenset[int]]] = []

    def visible(self, messages: Iterable[object]) -> set[int]:
        """Every marker ``messages`` shows."""
        current = list(messages)
        last = self._messages
        same = next(compress(count(), map(is_not, last, current)), min(len(last), len(current)))
        marked = [(index, found) for index, found in self._marked if index < same]
        for index in range(same, len(current)):
            found = _markers_in(current[index])
            if found:
                marked.append((index, found))
        self._messages, self._marked = current, marked
        seen: set[int] = set()
        for _, found in marked:
            seen |= found
        return seen


def _render(state: ContextState, previous: ContextState | None) -> str | None:
    """``state`` as this turn's text: full when first seen (or its type changed), else
    what changed since ``previous`` (None when nothing did)."""
    if previous is None or type(previous) is not type(state):
        return state.render_full()
    if state is previous:  # its baseline handed back: a snapshot never changes
        return None
    return state.render_delta(previous)


class ContextUpdater:
    """Composes the per-turn context block from providers and persisted baselines.

    Built by ``ToolFactory.get_context_updater()``. Provider keys are their
    ``__name__`` and must be unique. A provider returning None is skipped and its
    baseline kept. Providers never raise; one that does (or whose state fails to
    render) has a bug, and it must not cost the agent its turn: the error is logged
    with its traceback, the provider is treated as unavailable for this turn (skipped,
    its baseline kept, so the next turn that reads it re-states what changed) and
    :attr:`last_failures` names it.
    """

    def __init__(self, observer: ActorToolObserver, providers: Sequence[ContextProvider]) -> None:
        self._observer_ref: weakref.ref[Any] = weakref.ref(observer)
        self._providers: list[tuple[str, ContextProvider]] = []
        seen: set[str] = set()
        for provider in providers:
            key = getattr(provider, "__name__", "")
            if not key:
                raise ValueError(f"context provider {provider!r} has no __name__")
            if key in seen:
                raise ValueError(f"two context providers share the name {key!r}")
            seen.add(key)
            self._providers.append((key, provider))
        self._sections: list[tuple[str, str]] = []
        self._failures: list[tuple[str, str]] = []
        self._scan = _MarkerScan()

    @property
    def last_sections(self) -> list[tuple[str, str]]:
        """The sections of the block the last :meth:`compose_update` returned, as
        ``(provider key, text)`` in block order (empty when it returned None): what each
        provider put in the turn's block, for accounting."""
        return list(self._sections)

    @property
    def last_failures(self) -> list[tuple[str, str]]:
        """The providers the last :meth:`compose_update` skipped because they raised, as
        ``(provider key, "ExceptionType: message")``; empty when none did."""
        return list(self._failures)

    @property
    def provider_names(self) -> list[str]:
        """The providers' keys, in composition order."""
        return [key for key, _ in self._providers]

    def _tool_state(self) -> ToolState:
        observer = self._observer_ref()
        if observer is None:
            raise ToolObserverGone("the agent this ContextUpdater served is gone")
        return read_tool_state(observer)

    def compose_update(self, messages: Iterable[object]) -> str | None:
        """The next ``**Context update N**`` block for this history, or None.

        ``messages`` is the agent's history, as strings or message objects (see
        :func:`iter_message_texts`). Updates the baselines and the counter in the
        persisted ToolState as if the block is delivered; if it is not, its marker
        never shows up and the trust gate widens the next block.
        """
        tool_state = self._tool_state()
        visible = self._scan.visible(messages)
        seq = tool_state.context_update_seq
        if seq == 0 or seq not in visible:
            baselines: dict[str, ContextState] = {}  # nothing provably delivered
        else:
            baselines = tool_state.context_baselines

        sections: list[tuple[str, str]] = []
        failures: list[tuple[str, str]] = []
        for key, provider in self._providers:
            try:
                state = provider()
                if state is None:
                    continue
                text = _render(state, baselines.get(key))
            except Exception as exc:  # a provider bug: skip it, keep its baseline
                logger.error("context provider %s raised; skipped this turn", key, exc_info=exc)
                failures.append((key, describe_exception(exc)))
                continue
            baselines[key] = state
            if text:
                sections.append((key, text))
        tool_state.context_baselines = baselines

        self._sections = sections
        self._failures = failures
        if not sections:
            return None
        number = max(seq, *visible) + 1 if visible else seq + 1
        tool_state.context_update_seq = number
        return "\n\n".join([marker(number), *(text for _, text in sections)])

    def reset(self) -> None:
        """Zero the baselines and the counter — the ``/clear`` path, and the only one.

        It matches a history whose markers were wiped along with it.
        """
        tool_state = self._tool_state()
        tool_state.context_baselines = {}
        tool_state.context_update_seq = 0

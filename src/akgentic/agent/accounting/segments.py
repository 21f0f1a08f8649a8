"""Segment: one piece of a model request as the provider receives it, counted as one text.

A request goes on the wire as tools, then the system prompt, then the messages (Anthropic's
documented order; OpenAI caches the same prefix, tools included). The accounting cuts it
into segments in that order: one per tool definition, one for the system prompt, one per
message part. A segment is the unit the prefix-cache model compares; its ``spans`` split
its text by :class:`~akgentic.agent.accounting.source.Source` (the system prompt by card,
the turn's prompt into the message and each context section).

What is counted, in ``o200k_base`` tokens (``akgentic.llm.token_counter``):

- a tool: its OpenAI chat-completions ``tools`` entry as compact JSON (:func:`tool_json`);
- the system prompt and every message part: its text;
- framing: OpenAI's published rule for chat messages (the cookbook "How to count tokens
  with tiktoken": 3 tokens a message plus its role, and 3 that prime the reply) —
  :data:`MESSAGE_FRAMING` on each segment that opens a message, :data:`REPLY_PRIMING` once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic_ai.tools import ToolDefinition

from akgentic.agent.accounting.source import Source

__all__ = [
    "MESSAGE_FRAMING",
    "REPLY_PRIMING",
    "Counted",
    "Role",
    "Segment",
    "tool_json",
    "tool_wire",
]

MESSAGE_FRAMING = 4
"""Tokens around each chat message: 3, plus 1 for its role (OpenAI's rule)."""

REPLY_PRIMING = 3
"""Tokens that prime the reply, once per request (OpenAI's rule)."""

Role = Literal["tools", "system", "user", "assistant", "tool"]


def tool_wire(tool_def: ToolDefinition) -> dict[str, Any]:
    """One tool as OpenAI's chat-completions ``tools`` array carries it."""
    return {
        "type": "function",
        "function": {
            "name": tool_def.name,
            "description": tool_def.description or "",
            "parameters": tool_def.parameters_json_schema,
        },
    }


def tool_json(tool_def: ToolDefinition) -> str:
    """:func:`tool_wire` as compact JSON; a list of them joined by ``,`` in ``[...]`` is the
    ``tools`` array itself."""
    return json.dumps(tool_wire(tool_def), separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Segment:
    """One request piece: its wire ``role``, its ``text``, the ``spans`` of that text (each
    source with the offset its part starts at; the first at 0) and whether it
    ``opens_message`` (and so carries :data:`MESSAGE_FRAMING`).

    Two segments are the same on the wire when role, opening and text are equal
    (:attr:`key`); their sources do not matter to a cache.
    """

    role: Role
    text: str
    spans: tuple[tuple[Source, int], ...]
    opens_message: bool = False

    @property
    def key(self) -> tuple[str, bool, str]:
        return (self.role, self.opens_message, self.text)

    @property
    def starts(self) -> tuple[int, ...]:
        return tuple(start for _, start in self.spans)

    def span_texts(self) -> list[str]:
        """The text of each span, in order."""
        starts = self.starts
        ends = (*starts[1:], len(self.text))
        return [self.text[a:b] for a, b in zip(starts, ends, strict=True)]

    @classmethod
    def single(cls, role: Role, text: str, source: Source, *, opens: bool = False) -> Segment:
        """A segment with one source."""
        return cls(role=role, text=text, spans=((source, 0),), opens_message=opens)


@dataclass(frozen=True, slots=True)
class Counted:
    """A segment with its tokens: ``counts`` per span, and its ``framing``.

    ``tokens`` (the whole, framing included) and ``key`` (the segment's) are computed once:
    a history segment is compared and added up on every later request.
    """

    segment: Segment
    counts: tuple[int, ...]
    framing: int
    tokens: int = field(init=False)
    key: tuple[str, bool, str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tokens", sum(self.counts) + self.framing)
        object.__setattr__(self, "key", self.segment.key)

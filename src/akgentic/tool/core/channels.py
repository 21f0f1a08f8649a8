"""The four channels a capability can surface on.

A channel is a promise about how a capability reaches the model or the people
around it:

- ``TOOL_CALL`` — the model calls it during the ReAct loop (pull).
- ``SYSTEM_PROMPT`` — rendered once into the frozen system block: static content only,
  part of the cached prefix.
- ``LLM_CONTEXT`` — structured state appended at the context tail per turn, as a delta;
  volatile awareness that must not invalidate the cached prefix.
- ``COMMAND`` — invoked by name by a human or by code (push), also as ``/``-text.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "COMMAND",
    "LLM_CONTEXT",
    "SYSTEM_PROMPT",
    "TOOL_CALL",
    "Channels",
    "group_tool_name",
    "invocation",
]


class Channels(StrEnum):
    """How a capability is surfaced. Values are the strings persisted payloads carry.

    A value is read whatever its case (``expose: [TOOL_CALL, COMMAND]`` in a card, as the
    docs name the channels): the member stored is the canonical one."""

    TOOL_CALL = "tool_call"
    SYSTEM_PROMPT = "system_prompt"
    LLM_CONTEXT = "llm_context"
    COMMAND = "command"

    @classmethod
    def _missing_(cls, value: object) -> Channels | None:
        if isinstance(value, str):
            return next((c for c in cls if c.value == value.lower()), None)
        return None


TOOL_CALL = Channels.TOOL_CALL
SYSTEM_PROMPT = Channels.SYSTEM_PROMPT
LLM_CONTEXT = Channels.LLM_CONTEXT
COMMAND = Channels.COMMAND


def group_tool_name(toolset: str, tool: str) -> str:
    """The name tool ``tool`` has inside toolset ``toolset``, as the model sees it: a tool
    already named ``<set>_…`` keeps its name (``workspace_read`` in set ``workspace``), any
    other is ``<set>_<tool>`` (``search`` in set ``media`` is ``media_search``). The one
    rule: the group renames by it, and a member card names its tools by it
    (:meth:`~akgentic.tool.core.card.ToolCard.called_as`)."""
    prefix = f"{toolset}_"
    return tool if tool.startswith(prefix) else f"{prefix}{tool}"


def invocation(name: str, channel: Channels, args: str | None = None) -> str:
    """How whoever is on ``channel`` calls capability ``name`` (with ``args``), for a text
    that tells them to: a person types ``/name args`` (COMMAND), the model calls
    ``name(args)`` — ``name`` alone without ``args``. A card that serves one capability on
    both channels builds its callable per channel, so each says the call its reader
    makes."""
    if channel == COMMAND:
        return f"/{name}" if args is None else f"/{name} {args}"
    return name if args is None else f"{name}({args})"

"""Source: where a piece of a model request came from — its channel, its card, the item.

Every token the accounting counts belongs to exactly one source. The channels are seed
004's three prompt-bearing ones (their values as ``akgentic.tool.core.Channels`` persists
them) plus the conversation itself:

- ``tool_call`` — a tool's schema (name, description, parameters), served by a card;
- ``system_prompt`` — a part of the frozen system prompt, served by a card (or the agent's
  own instructions);
- ``llm_context`` — a section of the turn's context block, served by a card's provider;
- ``history`` — the earlier messages of the conversation, sent again;
- ``message`` — the request's new message: the turn's prompt, or the tool returns of a step.

``card`` names who served the part, from the factory's wiring: the card's class
(``PlanningTool``; with its position when the class repeats), ``ToolsetCard[tasks]`` for a
toolset and ``ToolsetCard[tasks].PlanningTool`` for a member of it, :data:`AGENT` for the
agent's own parts, :data:`TOOLSETS` for the toolsets capability, :data:`UNATTRIBUTED` when
nothing in the wiring claims the part. History and the new message have no card.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "AGENT",
    "CHANNELS",
    "CONTEXT_MARKER",
    "TOOLSETS",
    "UNATTRIBUTED",
    "Channel",
    "Source",
]

Channel = Literal["tool_call", "system_prompt", "llm_context", "history", "message"]
CHANNELS: tuple[Channel, ...] = ("tool_call", "system_prompt", "llm_context", "history", "message")
"""The channels in the order a request puts them on the wire (tools, system, messages)."""

AGENT = "BaseAgent"
"""The card name of the agent's own parts: its prompt, its backstory, its output tool."""

TOOLSETS = "DynamicToolsets"
"""The card name of the toolsets capability's parts: the catalog, ``enable_toolset`` /
``disable_toolset`` and the active-toolsets context section."""

CONTEXT_MARKER = "ContextUpdater"
"""The card name of a context block's ``**Context update N**`` marker line."""

UNATTRIBUTED = "(unattributed)"
"""The card name of a part nothing in the agent's wiring claims."""


@dataclass(frozen=True, slots=True)
class Source:
    """One origin of request tokens: ``channel``, the ``card`` that served it, the ``name``
    of the item (a tool, a context provider, a prompt renderer; empty for conversation)."""

    channel: Channel
    card: str = ""
    name: str = ""

    def describe(self) -> str:
        """``channel card: name`` — how a report names it."""
        who = f" {self.card}" if self.card else ""
        what = f": {self.name}" if self.name and self.name != self.card else ""
        return f"{self.channel}{who}{what}"

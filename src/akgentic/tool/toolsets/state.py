"""ActiveToolsets: which toolsets are active, as LLM_CONTEXT state.

The catalog in the frozen prefix never says which sets are active — that would change the
cached prefix on every enable. This state says it instead, as a delta at the tail of the
turn's request: the first block lists the active sets (nothing when there are none), later
blocks say only what changed. A restored agent starts with no active set while its
persisted baseline may still list some, so its first block says they are no longer active
— which is true.
"""

from __future__ import annotations

from typing import ClassVar, Self

from pydantic import ConfigDict, Field

from akgentic.tool.core.context_state import ContextState

__all__ = ["ActiveToolsets"]


class ActiveToolsets(ContextState):
    """The names of the active toolsets, sorted."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    names: list[str] = Field(default_factory=list)

    def render_full(self) -> str:
        if not self.names:
            return ""
        return f"Active toolsets: {', '.join(self.names)}. Their tools are in your tool list."

    def render_delta(self, previous: Self) -> str | None:
        if self.names == previous.names:
            return None
        gone = [n for n in previous.names if n not in self.names]
        lines = []
        if gone:
            lines.append(
                f"No longer active: {', '.join(gone)} (disabled, idle for 10 minutes, or "
                f"the conversation restarted); enable_toolset brings a set back."
            )
        lines.append(f"Active toolsets now: {', '.join(self.names) or 'none'}.")
        return " ".join(lines)

"""The import path seed 004's migration note (ADR-018) names: ``akgentic.llm.event``.

``ToolCallEvent`` and ``ToolReturnEvent`` live in :mod:`akgentic.llm.events` beside the other LLM
events; this module re-exports them (the classes, not copies: stored markers name ``events``).
"""

from akgentic.llm.events import ToolCallEvent, ToolReturnEvent

__all__ = ["ToolCallEvent", "ToolReturnEvent"]

"""ToolState: the persisted per-agent slot of the tool layer.

It is carried by the agent's own state object and written out by the agent's
existing checkpoints; this package ships the slot and the engine, never a save path.

- ``context_baselines`` and ``context_update_seq`` are a *cache*: what the
  ``ContextUpdater`` last told the model, keyed by provider ``__name__``, and the number
  of the last ``**Context update N**`` block. The durable record of what the model was
  told is the message history; a wrong, stale or missing save degrades to a wider
  delta or a full snapshot, never to a lost update.
- ``active_model`` is the one *record*: the roster key (``"provider:model"``) of the
  model in force, written by ModelTool's switch and by nothing else. None means no
  preference — the config's declared entry wins, which is also what a payload stored
  before the field existed restores to. A new tool-layer field that must survive a
  restart is a new typed field here, never a blob under a string key.
- ``metadata_block`` is the second record: the team metadata block MetadataTool rendered
  into this agent's system prompt, written once, at its first render that succeeds. A
  restored agent is given that block again rather than a fresh render, so its frozen
  prefix is the same as before the stop (and a provider's cache of it still serves)
  whatever ``set_metadata`` said meanwhile. None: not rendered yet.

Never cache a ToolState reference: read it through the observer, every call
(:func:`read_tool_state`). The agent replaces its state wholesale on restore.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict, Field

from akgentic.core.serialization import SerializableModel
from akgentic.tool.core.context_state import ContextState

__all__ = ["ToolState", "read_tool_state"]


class ToolState(SerializableModel):
    """Context baselines, the update counter, the active model key and the team metadata
    block the agent was given."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    context_baselines: dict[str, ContextState] = Field(default_factory=dict)
    context_update_seq: int = Field(default=0, ge=0)
    active_model: str | None = None
    metadata_block: str | None = None


def read_tool_state(observer: Any) -> ToolState:
    """``observer.state.tool_state``, read now — the only correct way to reach the slot.

    Raises TypeError naming what is missing when the observer has no state, or its
    state carries no ``tool_state: ToolState`` field.
    """
    state = getattr(observer, "state", None)
    if state is None:
        raise TypeError(
            f"{type(observer).__name__} has no state: the tool layer reads "
            f"observer.state.tool_state on every call"
        )
    tool_state = getattr(state, "tool_state", None)
    if not isinstance(tool_state, ToolState):
        raise TypeError(
            f"{type(state).__name__} carries no ToolState: give the agent's state a "
            f"`tool_state: ToolState` field (found {type(tool_state).__name__})"
        )
    return tool_state

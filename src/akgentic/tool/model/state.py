"""ModelTool's data: ``ModelRow`` (the roster as the observer hands it over) and
``ActiveModelState`` (the model in force, as LLM_CONTEXT state).

``ModelRow`` is a *projection*: the roster's own configuration lives in a package this one
may not import (akgentic-llm), so the observer contract is written in five plain fields and
the agent layer maps one onto the other. A row is rebuilt on every call and never stored,
which is why ``context_length`` has no default: there is no legacy payload a default could
protect, and an omitted value is a construction bug that must fail loudly.

``ActiveModelState`` is the opposite case: the ContextUpdater persists it as a baseline in
``ToolState``, so it is read back off disk and its optional field has a default.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import ConfigDict

from akgentic.core.serialization import SerializableModel
from akgentic.tool.core.context_state import ContextState

__all__ = ["ActiveModelState", "ModelRow"]


class ModelRow(SerializableModel):
    """One roster entry: ``key`` is ``f"{provider}:{model}"``, ``active`` marks the one in force.

    ``context_length`` is the window in tokens, None when unknown — and it is *required*:
    pass None explicitly. Do not add a default (see the module docstring).
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    key: str
    provider: str
    model: str
    context_length: int | None
    active: bool


def _window(context_length: int | None) -> str:
    if context_length is None:
        return "context window unknown"
    return f"context window {context_length} tokens"


class ActiveModelState(ContextState):
    """The model in force, published per turn on LLM_CONTEXT.

    - :meth:`render_full`: ``Model in force: <key> (<window>).``
    - :meth:`render_delta`: ``Model switched: <old key> -> <new key> (<window>).`` when the
      key changed, ``Model <key>: <window>.`` when only the window changed, None otherwise.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    key: str
    context_length: int | None = None

    @classmethod
    def from_row(cls, row: ModelRow) -> ActiveModelState:
        """The state of an active roster row."""
        return cls(key=row.key, context_length=row.context_length)

    def render_full(self) -> str:
        return f"Model in force: {self.key} ({_window(self.context_length)})."

    def render_delta(self, previous: ActiveModelState) -> str | None:
        if previous.key != self.key:
            return f"Model switched: {previous.key} -> {self.key} ({_window(self.context_length)})."
        if previous.context_length != self.context_length:
            return f"Model {self.key}: {_window(self.context_length)}."
        return None

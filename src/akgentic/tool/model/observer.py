"""ModelSwitchToolObserver: ModelTool's own contract with the agent that hosts it.

It extends ``ActorToolObserver`` (ModelTool writes ``state.tool_state.active_model``, which
only an actor observer carries) and adds the two things the card cannot do itself: read the
roster, and put one of its entries in force. The implementation lives in akgentic-agent —
the one package that may import both this one and the roster's home, akgentic-llm — and maps
the roster's own rows onto :class:`ModelRow`.

``@runtime_checkable`` is kept although it is inherited (and so inert here): it is the
convention, and it becomes load-bearing the day the base stops carrying it. The conformance
guard is proven by removing a *member*, never the decorator.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from akgentic.tool.core.observer import ActorToolObserver
from akgentic.tool.model.state import ModelRow

__all__ = ["ModelSwitchToolObserver"]


@runtime_checkable
class ModelSwitchToolObserver(ActorToolObserver, Protocol):
    """An actor observer that can list its model roster and switch between its entries."""

    def list_model_rows(self) -> list[ModelRow]:
        """The roster, one fresh row per entry in declaration order, exactly one ``active``.

        An agent without a roster returns ``[]``. Must not raise for an ordinary roster.
        """
        ...

    def switch_model(self, key: str) -> str:
        """Put the roster entry ``key`` (``"provider:model"``) in force; return a confirmation.

        Raises (any exception, typically ``ValueError``) for a key that is not in the roster,
        leaving the model in force unchanged. It does not write ``ToolState.active_model``:
        ModelTool writes that record, and only once this call has succeeded.
        """
        ...

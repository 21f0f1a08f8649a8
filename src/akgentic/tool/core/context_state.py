"""ContextState: the diffable state a card publishes on the LLM_CONTEXT channel.

A provider (a zero-argument callable from ``ToolCard.get_context_states()``) returns a
snapshot of its state, or None when the state is unavailable. The ``ContextUpdater``
keeps the snapshot it last delivered as the provider's baseline and asks the next one
what changed since. Baselines are persisted in ``ToolState``, so every concrete state
must round-trip through ``akgentic.core.serialization`` — which is why this is a
serializable model and not a bare ABC.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Self

from akgentic.core.serialization import SerializableModel

__all__ = ["ContextState"]


class ContextState(SerializableModel, ABC):
    """A snapshot of volatile tool state, rendered for the model in full or as a delta.

    Contract:

    - A provider hands out a *snapshot*: the updater may keep the object as the
      baseline, so it must not change after it is returned.
    - :meth:`render_full` is the whole state as the model should first see it, ``""``
      when there is nothing to say.
    - :meth:`render_delta` says what changed since ``previous`` and returns None when
      nothing did. ``previous`` is always of the same concrete type (the updater
      renders a first-seen state, or a state whose type changed, in full), so
      ``render_delta`` never diffs against nothing.
    """

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Self:
        """Itself: a snapshot never changes after it is handed out (the contract above),
        so a deep copy of the agent's state — taken at every state change, to hand a
        detached state to the team — shares the baselines instead of copying each."""
        return self

    @abstractmethod
    def render_full(self) -> str:
        """The whole state; ``""`` when there is nothing to say."""

    @abstractmethod
    def render_delta(self, previous: Self) -> str | None:
        """What changed since ``previous`` (same concrete type); None when nothing did."""

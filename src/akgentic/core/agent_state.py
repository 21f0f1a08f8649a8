"""Actor state: a pydantic model that knows whom to tell when it changes."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from pydantic import ConfigDict, PrivateAttr

from akgentic.core.serialization import SerializableModel

__all__ = ["BaseState", "StateObserver"]


class StateObserver(Protocol):
    """Whoever publishes a state when it changes (an ``Akgent`` is one)."""

    def notify_state_change(self, state: Any = None) -> None: ...


class BaseState(SerializableModel):
    """The typed, serializable state of an actor.

    Mutate fields, then call :meth:`notify_state_change` to publish a snapshot on the
    team stream (where the event store records it and restore reads it back). Unknown
    fields are an error.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    _observer: StateObserver | None = PrivateAttr(default=None)

    def __eq__(self, other: object) -> bool:
        """Equal when of the same class with equal fields; the observer is not compared."""
        if not isinstance(other, BaseState):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]

    def observer(self, observer: StateObserver | None) -> BaseState:
        """Attach (or, with None, detach) the observer told about changes."""
        self._observer = observer
        return self

    def notify_state_change(self) -> None:
        """Publish the current state through the observer; a no-op when detached."""
        if self._observer is not None:
            self._observer.notify_state_change(self)

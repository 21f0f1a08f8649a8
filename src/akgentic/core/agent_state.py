"""Actor state: a pydantic model that knows whom to tell when it changes."""

from __future__ import annotations

import copy
from typing import Any, ClassVar, Protocol, Self

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

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Self:
        """A deep copy of the fields; the copy has no observer (it is not the actor's)."""
        cls = type(self)
        copied = cls.__new__(cls)
        object.__setattr__(copied, "__dict__", copy.deepcopy(self.__dict__, memo))
        object.__setattr__(
            copied, "__pydantic_extra__", copy.deepcopy(self.__pydantic_extra__, memo)
        )
        object.__setattr__(copied, "__pydantic_fields_set__", set(self.__pydantic_fields_set__))
        private = {
            key: None if key == "_observer" else copy.deepcopy(value, memo)
            for key, value in (self.__pydantic_private__ or {}).items()
        }
        object.__setattr__(copied, "__pydantic_private__", private)
        return copied

    def observer(self, observer: StateObserver | None) -> BaseState:
        """Attach (or, with None, detach) the observer told about changes."""
        self._observer = observer
        return self

    def notify_state_change(self) -> None:
        """Publish the current state through the observer; a no-op when detached."""
        if self._observer is not None:
            self._observer.notify_state_change(self)

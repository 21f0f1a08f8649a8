"""Package-global event contracts: tool state deltas and command discovery.

``ToolStateEvent`` is how a stateful tool actor tells clients what changed — the
increment, never a snapshot. It rides the orchestrator's ordinary event stream
(``notify_event``), so a late client replays history and applies the deltas in order;
there is no snapshot request and no snapshot protocol.

The emit-before-return contract: a mutation emits its event before it returns, and
before it raises if it collected errors along the way. An empty delta emits nothing,
and ``seq`` advances only when an event is actually emitted, so the stream has no gaps
and a gap means a missed event. :class:`ToolStateEmitter` keeps that numbering.

These classes moved here from ``akgentic.tool.event``; stored rows naming the old
paths still decode through serialization aliases.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from akgentic.core.messages import Message
from akgentic.core.serialization import SerializableModel, register_serializable
from akgentic.tool.core.observer import ToolObserver

__all__ = [
    "CommandArg",
    "CommandDescriptor",
    "CommandsAnnouncedEvent",
    "ToolStateEmitter",
    "ToolStateEvent",
]


class ToolStateEvent(Message):
    """One delta of a tool actor's state.

    - ``tool_id`` — the emitting actor's name, ``#``-prefixed like the actor.
    - ``seq`` — per-tool, monotonic, gap-free, starting at 1.
    - ``payload`` — the delta: any serializable model. Typed structurally rather than
      as a union of the domains' delta types, so this envelope depends on no domain;
      serialization tags the payload with its class and decoding returns that class.
    """

    tool_id: str
    seq: int = Field(ge=1)
    payload: SerializableModel

    @field_validator("payload", mode="before")
    @classmethod
    def _payload_is_a_model(cls, value: Any) -> Any:
        if not isinstance(value, SerializableModel):
            raise ValueError(
                f"payload must be a SerializableModel instance, got {type(value).__name__}; "
                f"decode stored data with akgentic.core.serialization.deserialize"
            )
        return value


class CommandArg(SerializableModel):
    """One parameter of a command, as derived from the callable's signature.

    ``default`` is the parameter's default when it is a JSON scalar, else its repr;
    it is only meaningful when ``required`` is False. ``rest_of_line``: the argument
    takes the rest of the typed line (``RestOfLine``), unquoted.
    """

    name: str
    type: str = "str"
    required: bool = True
    default: str | int | float | bool | None = None
    rest_of_line: bool = False


class CommandDescriptor(SerializableModel):
    """A command as a frontend shows it: ``/name`` with its arguments and description."""

    name: str
    description: str = ""
    args: list[CommandArg] = Field(default_factory=list)

    @property
    def usage(self) -> str:
        """``/name arg [opt=default]`` — the line error messages quote (``[opt]`` when the
        default is None: left out, it is not given)."""
        parts = [f"/{self.name}"]
        for arg in self.args:
            if arg.rest_of_line:
                parts.append(f"{arg.name}..." if arg.required else f"[{arg.name}...]")
            elif arg.required:
                parts.append(arg.name)
            elif arg.default is None:
                parts.append(f"[{arg.name}]")
            else:
                parts.append(f"[{arg.name}={arg.default!r}]")
        return " ".join(parts)


class CommandsAnnouncedEvent(Message):
    """The commands an agent answers, announced on the team stream for every frontend."""

    commands: list[CommandDescriptor] = Field(default_factory=list)


class ToolStateEmitter:
    """Numbers one tool actor's ToolStateEvent stream: starts at 1, never skips.

    Keep one per tool actor and call :meth:`emit` before the mutation returns (or
    raises). ``seq`` is the last number emitted; restore it from the actor's state when
    the stream must continue across a restart.
    """

    def __init__(self, tool_id: str, seq: int = 0) -> None:
        self.tool_id = tool_id
        self.seq = seq

    def emit(
        self, observer: ToolObserver, delta: SerializableModel, *, empty: bool | None = None
    ) -> ToolStateEvent | None:
        """Emit ``delta`` unless it is empty; return the event, or None when nothing was sent.

        ``empty`` defaults to "every field of the delta is falsy" (empty collections,
        None, ``""``, 0); pass it explicitly when a falsy field carries meaning.
        """
        if empty is None:
            empty = not any(getattr(delta, name) for name in type(delta).model_fields)
        if empty:
            return None
        event = ToolStateEvent(tool_id=self.tool_id, seq=self.seq + 1, payload=delta)
        observer.notify_event(event)
        self.seq = event.seq  # advanced only once the event is on its way: no gaps
        return event


for _moved in (ToolStateEvent, CommandArg, CommandDescriptor, CommandsAnnouncedEvent):
    register_serializable(_moved, aliases=[f"akgentic.tool.event.{_moved.__name__}"])

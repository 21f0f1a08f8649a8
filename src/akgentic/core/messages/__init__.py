"""Messages: the base class, the common messages, and (in ``.orchestrator``) telemetry."""

from akgentic.core.messages.message import (
    CancelMessage,
    DisplayType,
    Message,
    ResultMessage,
    StopRecursively,
    UserMessage,
)

__all__ = [
    "CancelMessage",
    "DisplayType",
    "Message",
    "ResultMessage",
    "StopRecursively",
    "UserMessage",
]

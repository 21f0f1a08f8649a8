"""Pieces for the server tests: a tool that holds a turn until the test opens the gate,
an event class and an actor that emits many events."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from akgentic.core import Akgent, BaseConfig, BaseState
from akgentic.core.serialization import SerializableModel
from akgentic.tool.core import ToolCard

ENTERED = threading.Event()
OPEN = threading.Event()


class GateTool(ToolCard):
    """Offers ``gate_step(label)``: it signals ENTERED, then waits (bounded) for OPEN."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def gate_step(label: str) -> str:
            """Work on ``label``."""
            ENTERED.set()
            OPEN.wait(60)
            return f"worked on {label}"

        return [gate_step]


class Tick(SerializableModel):
    n: int


class Emitter(Akgent[BaseConfig, BaseState]):
    """Publishes ``Tick`` events on its team's stream."""

    def emit(self, count: int) -> None:
        for n in range(count):
            self.notify_event(Tick(n=n))

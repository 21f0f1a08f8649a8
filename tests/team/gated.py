"""A tool that holds a turn inside its call until the test lets it go: how the team
tests catch a member mid-turn (a stop, an interrupt) without timing anything."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

from akgentic.tool.core import ToolCard


class Gate:
    """``entered``: a turn is inside ``wait_here``. ``release``: let it return."""

    entered = threading.Event()
    release = threading.Event()


class GatedStep(ToolCard):
    """``wait_here`` blocks until the test opens the gate (bounded)."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def wait_here(label: str) -> str:
            """Work on ``label``."""
            Gate.entered.set()
            Gate.release.wait(60)
            return f"worked on {label}"

        return [wait_here]


def gate() -> Iterator[None]:
    """Close the gate for one test (``for _ in gate():``); it is open again after."""
    Gate.entered.clear()
    Gate.release.clear()
    try:
        yield
    finally:
        Gate.release.set()

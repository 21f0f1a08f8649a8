"""A tool that holds a turn inside its call until the test lets it go: how the team
tests catch a member mid-turn (a stop, an interrupt) without timing anything."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from akgentic.core import Orchestrator
from akgentic.team import StopWait, TeamManager
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


def cut_once_a_resume_waits(
    monkeypatch: pytest.MonkeyPatch, release: Callable[[], None]
) -> threading.Event:
    """Hold the cancel a stop sends when its grace runs out until a resume has begun to
    wait for that stop (as it tells ``TeamManager.on_stop_wait``), then ``release`` the
    turn's tool call: the turn ends cut, and the stop's last records are written during
    the resume's wait. Returns the event set once a resume waits (set it to let a stop
    go on without one)."""
    told = threading.Event()
    tell, cut = TeamManager._tell_stop_wait, Orchestrator._interrupt_turns

    def told_then_set(manager: TeamManager, notice: StopWait) -> None:
        tell(manager, notice)
        told.set()

    def cut_once_waited_for(orchestrator: Orchestrator, regular: list[Any], grace: float) -> None:
        assert told.wait(60)  # a resume waits for this stop
        cut(orchestrator, regular, grace)
        release()

    monkeypatch.setattr(TeamManager, "_tell_stop_wait", told_then_set)
    monkeypatch.setattr(Orchestrator, "_interrupt_turns", cut_once_waited_for)
    return told

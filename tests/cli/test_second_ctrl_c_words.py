"""What the second Ctrl-C says it cut (``chat.ended_at_once``), read at each step of a
team's stop: the turns only while a regular member still runs. Once they have all
stopped the stop is at its tool actors and last records — there is no turn left to cut,
whether or not its recorder has begun writing them."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from akgentic.cli import chat
from akgentic.core import ActorSystem, Orchestrator
from akgentic.storage import open_storage
from akgentic.team import TeamCard, TeamManager
from tests.team.test_graceful_stop import member

HINT = "resume it with: akgentic teams resume X"


def test_a_second_ctrl_c_once_the_members_stopped_says_no_turn_was_cut(
    storage_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stop is held as its regular members have all stopped and its tool actors are
    next (the recorder not yet closing): the line said 'the turns in progress were cut'
    there — it says the turns had ended and the stop was saving its last records."""
    at_tools, go_on = threading.Event(), threading.Event()
    stop_tools = Orchestrator._stop_tool_actors

    def held(orchestrator: Orchestrator, deadline: float) -> Any:
        at_tools.set()
        assert go_on.wait(30)
        return stop_tools(orchestrator, deadline)

    monkeypatch.setattr(Orchestrator, "_stop_tool_actors", held)
    system = ActorSystem()
    storage = open_storage(storage_url)
    manager = TeamManager(system, storage)
    try:
        card = TeamCard(name="one", entry_point="@Boss", members=[member("@Boss", gated=False)])
        runtime = manager.create_team(card)
        running = chat.ended_at_once(HINT, [runtime])
        stopping = threading.Thread(target=manager.stop_team, args=(runtime.team_id, 5.0))
        stopping.start()
        try:
            assert at_tools.wait(30)
            assert runtime.recorder.tries_left() is None  # not yet writing its last records
            ended = chat.ended_at_once(HINT, [runtime])
        finally:
            go_on.set()
            stopping.join(30)
    finally:
        manager.shutdown()
        system.shutdown()
        storage.close()

    assert running == f"interrupted again: stopped at once ({chat.TURNS_CUT}); {HINT}"
    assert ended == f"interrupted again: stopped at once ({chat.CLOSING_CUT}); {HINT}"

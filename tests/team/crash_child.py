"""The process the crash test kills: runs a team until a turn is blocked mid-tool-call.

Prints ``READY <team_id>`` once: one turn finished, a second is blocked inside its tool
call (the call is on the log), and a third message is accepted and waiting.

With ``starting`` as second argument, the process is caught in the team's creation
instead: @Boss's start blocks (``StartGate`` prints READY), @Helper is not created yet.

With ``ctrl-c`` as second argument, the team is then stopped as a first Ctrl-C stops it
(``TeamRuntime.interrupt_and_stop``: an interrupting ``CancelMessage`` to every member,
then a graceful stop), which the blocked turn never lets finish: READY comes once the
cancel and the stop are on the log, as when a second Ctrl-C ends the process there.
"""

from __future__ import annotations

import sys
import threading

from akgentic.agent import AgentMessage
from akgentic.core import ActorSystem, CancelMessage, EventMessage, SentMessage, TeamStoppingEvent
from akgentic.llm import ToolCallEvent
from akgentic.storage import open_storage
from akgentic.team import TeamManager, TeamRuntime
from tests.team.crash_cards import crash_card


def wait_for(runtime: TeamRuntime, predicate: object) -> None:
    for record in runtime.follow(1, idle_timeout=60):
        if record.message is not None and predicate(record.message):  # type: ignore[operator]
            return
    raise SystemExit("condition not met")


def main(url: str, how: str = "") -> None:
    manager = TeamManager(ActorSystem(), open_storage(url))
    if how == "starting":
        manager.create_team(crash_card(held_start=True))  # never returns: StartGate
    runtime = manager.create_team(crash_card())
    runtime.send("first task")
    wait_for(
        runtime,
        lambda m: (
            isinstance(m, SentMessage)
            and isinstance(m.message, AgentMessage)
            and m.message.content == "[scripted] done: first task"
        ),
    )
    runtime.send("block please")
    wait_for(
        runtime,
        lambda m: (
            isinstance(m, EventMessage)
            and isinstance(m.event, ToolCallEvent)
            and m.event.arguments == {"label": "block please"}
        ),
    )
    runtime.send("after block")
    if how == "ctrl-c":
        threading.Thread(target=runtime.interrupt_and_stop, daemon=True).start()
        wait_for(
            runtime,
            lambda m: isinstance(m, SentMessage) and isinstance(m.message, CancelMessage),
        )
        wait_for(
            runtime,
            lambda m: isinstance(m, EventMessage) and isinstance(m.event, TeamStoppingEvent),
        )
    print(f"READY {runtime.team_id}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main(*sys.argv[1:3])

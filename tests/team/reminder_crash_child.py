"""The process the reminder crash test kills: between a reminder's send and its delta.

@Analyst sets itself a reminder due at once. ``#NotificationTool`` sends it, and is then
held for ever where it would record the ``delivered`` delta, as a process killed between
the two is. Prints ``READY <team_id>`` once the send is on the log.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from akgentic.core import ActorSystem, SentMessage
from akgentic.storage import open_storage
from akgentic.team import TeamManager
from akgentic.tool.notification import NotificationActor, NotificationDelta
from tests.team.test_reminder import analyst_team

_apply = NotificationActor._apply


def held_after_the_send(self: NotificationActor, delta: NotificationDelta) -> Any:
    if delta.delivered:
        threading.Event().wait()
    return _apply(self, delta)


def main(url: str) -> None:
    NotificationActor._apply = held_after_the_send  # type: ignore[method-assign]
    manager = TeamManager(ActorSystem(), open_storage(url))
    runtime = manager.create_team(analyst_team("@Human"))
    runtime.send("remind me of cats")
    for record in runtime.follow(1, idle_timeout=60):
        msg = record.message
        if isinstance(msg, SentMessage) and msg.sender and msg.sender.name == "#NotificationTool":
            print(f"READY {runtime.team_id}", flush=True)
            threading.Event().wait()
    raise SystemExit("the reminder was never sent")


if __name__ == "__main__":
    main(sys.argv[1])

"""A team manager for the length of one command.

On the way out every team it runs is stopped gracefully, then its actor system is shut
down. A Ctrl-C while a team is talked to is the session's (:mod:`akgentic.cli.chat`:
the turns are cut at a step boundary and reported). One that escapes to here — taken
during the team's start-up, raised once the start-up returns (``interrupt.deferred``)
— skips the graceful stop: the actor system is shut down at once (the log shows any
turn in progress as interrupted, and ``akgentic teams resume`` offers to retry it).

Once the teams have had their grace, a member still running is inside a call that has
not returned (a tool call that never ends): the command says so on one line — unless the
team's own ``warning:`` line, as its grace ran out, named it already (:mod:`logs`) —
and ends without waiting for it (its thread does not hold up the exit). The team's
records are already written: the team stopped without it. A team whose stop had not
ended in its wait (its records still being written: ``TeamManager.stops_unended``) is
not named so: nothing of it is stuck in a call, and its stop's ``error:`` line said
what may be lost.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from uuid import UUID

from akgentic.cli import logs
from akgentic.cli.output import SafeText, error_console, member_name
from akgentic.core import ActorAddress, ActorSystem, left_behind
from akgentic.storage import StorageBundle
from akgentic.team import TeamManager

__all__ = ["team_manager"]

HURRIED = 1.0
"""Seconds an interrupted command gives its teams to stop; and what is left of the
actor system once the teams have had their grace (waiting longer only delays the exit)."""


@contextmanager
def team_manager(storage: StorageBundle) -> Iterator[TeamManager]:
    """A :class:`TeamManager` over ``storage`` with its own ``ActorSystem``."""
    system = ActorSystem()
    manager = TeamManager(system, storage)
    logs.left_said()  # another command's (in one process: tests) is not this one's
    graced = False  # the teams have had their time to stop (or a Ctrl-C cut it short)
    try:
        yield manager
    except KeyboardInterrupt:
        graced = True
        raise
    finally:
        try:
            if not graced:
                manager.shutdown()
                graced = True
        finally:
            unended = manager.stops_unended()
            _say_left(system.shutdown(HURRIED) if graced else system.shutdown(), unended)


def _say_left(left: list[ActorAddress], unended: set[UUID]) -> None:
    """One line naming the actors still running (see the module docstring), if any and
    not named already. Those of a team whose stop had not ended (``unended``: its
    recorder still at its last records) are not stuck in a call: that stop's own
    ``error:`` line said so, and what may be lost."""
    said = logs.left_said()
    left = [a for a in left if a.name not in said and a.team_id not in unended]
    if left:
        text = f"warning: {left_behind(left, member_name)}"
        error_console().print(SafeText(text, style="yellow"))

"""A team manager for the length of one command.

On the way out every team it runs is stopped gracefully, then its actor system is shut
down. A Ctrl-C while a team is talked to is the session's (:mod:`akgentic.cli.chat`:
the turns are cut at a step boundary and reported). One that escapes to here — taken
during the team's start-up, raised once the start-up returns (``interrupt.deferred``)
— skips the graceful stop: the actor system is shut down at once (the log shows any
turn in progress as interrupted, and ``akgentic teams resume`` offers to retry it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from akgentic.core import ActorSystem
from akgentic.storage import StorageBundle
from akgentic.team import TeamManager

__all__ = ["team_manager"]

HURRIED = 1.0
"""Seconds an interrupted command gives its teams to stop."""


@contextmanager
def team_manager(storage: StorageBundle) -> Iterator[TeamManager]:
    """A :class:`TeamManager` over ``storage`` with its own ``ActorSystem``."""
    system = ActorSystem()
    manager = TeamManager(system, storage)
    hurried = False
    try:
        yield manager
    except KeyboardInterrupt:
        hurried = True
        raise
    finally:
        if hurried:
            system.shutdown(HURRIED)
        else:
            try:
                manager.shutdown()
            finally:
                system.shutdown()

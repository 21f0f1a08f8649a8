"""The ``akgentic`` console script held at a chosen point, for the Ctrl-C tests that must
hit one moment of a command (``test_ctrl_c_windows``) without timing it.

``python -m tests.cli.held POINTS ARGS...`` runs ``akgentic ARGS...`` through the console
script's entry; when the process comes to a point of ``POINTS`` (comma-separated) it
prints ``held: POINT`` on stdout and waits there until a signal comes (the test sends it
once it reads the line), then goes on as the signal's handler lets it: a handler that
ends the process ends it there, one that raises raises there, one that only takes note
(inside ``interrupt.deferred``) lets the command go on from that point. ``POINT*2`` waits
for two signals (saying ``taken: 1`` after the first): the second comes while the
process is still there.

The points (each held once, the first time it is reached):

- ``parsing``: the command's module imported, its command line not yet parsed (the
  hooks :func:`akgentic.cli.lazy.after_imports` runs then);
- ``storage``: ``run``'s card read, its store about to be opened;
- ``creating``: ``run``'s team about to be created (``TeamManager.create_team``);
- ``resuming``: ``teams resume``'s team found, its team manager about to be made (its
  restore, ``TeamManager.resume_team``, is next);
- ``stopping``: the team's interrupt under way (``TeamManager.interrupt_team``, on the
  thread the session runs it on: the main thread waits, as a graceful stop leaves it);
- ``leaving``: the command over, the process about to end (``interrupt.leave``);
- ``exiting``: the interpreter's exit (the last ``atexit`` callback).
"""

from __future__ import annotations

import atexit
import functools
import importlib
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from akgentic.cli import interrupt, teams
from akgentic.cli import run as run_module
from akgentic.team import TeamManager

main = importlib.import_module("akgentic.cli.main")  # the package's ``main`` is the function
HOLD_BOUND = 120.0
"""Seconds a hold waits for its signal at most (a test that never sends it fails then)."""


def hold(point: str, signals: int = 1) -> None:
    """Say ``held: POINT`` and wait for ``signals`` signals (see the module docstring)."""
    before = interrupt.pressed()
    print(f"held: {point}", flush=True)
    if threading.current_thread() is not threading.main_thread():
        threading.Event().wait(HOLD_BOUND)  # the signals are the main thread's to take
        return
    deadline = time.monotonic() + HOLD_BOUND
    said = 0
    while (taken := interrupt.pressed() - before) < signals:  # what the handler counts
        if taken > said:
            said = taken
            print(f"taken: {taken}", flush=True)
        if time.monotonic() > deadline:
            raise SystemExit(f"held at {point}: no signal came")
        time.sleep(0.01)


def held_before(point: str, call: Callable[..., Any], signals: int = 1) -> Callable[..., Any]:
    """``call``, held at ``point`` the first time, before it runs."""
    first = [True]

    @functools.wraps(call)
    def held(*args: Any, **kwargs: Any) -> Any:
        if first[0]:
            first[0] = False
            hold(point, signals)
        return call(*args, **kwargs)

    return held


def place(spec: str) -> None:
    """Put the hold of ``spec`` (``POINT`` or ``POINT*N``) where it goes."""
    point, _, count = spec.partition("*")
    signals = int(count or 1)
    if point == "parsing":
        main._configure_logs = held_before(point, main._configure_logs, signals)
    elif point == "storage":
        run_module.opened_storage = held_before(point, run_module.opened_storage, signals)
    elif point == "resuming":
        teams.team_manager = held_before(point, teams.team_manager, signals)
    elif point in ("creating", "stopping"):
        name = "create_team" if point == "creating" else "interrupt_team"
        setattr(TeamManager, name, held_before(point, getattr(TeamManager, name), signals))
    elif point == "leaving":
        interrupt.leave = held_before(point, interrupt.leave, signals)
    elif point == "exiting":
        atexit.register(hold, point, signals)  # registered first: run last
    else:
        raise SystemExit(f"no such point: {point}")


def run() -> None:
    points, *argv = sys.argv[1:]
    for spec in points.split(","):
        place(spec)
    sys.argv = ["akgentic", *argv]
    from akgentic.cli.entry import main as akgentic  # the console script's entry point

    akgentic()


if __name__ == "__main__":
    run()

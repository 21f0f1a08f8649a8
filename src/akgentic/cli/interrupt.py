"""Ctrl-C, the same in every command: the first one asks, the second one exits at once.

:func:`install` (the console script does it first thing, before the framework is
imported) replaces Python's SIGINT handler:

- the **first** Ctrl-C raises ``KeyboardInterrupt`` in the main thread, as usual — each
  command turns it into its graceful way out (``run`` cancels the turns at a step
  boundary, stops the team and says how to resume; ``reporting`` prints
  ``interrupted``) — or, inside :func:`quietly`, only sets an event the command waits
  on (``events --follow``), so no exception lands inside storage code;
- the **second** one prints :data:`at_once` (set by the command: what was cut, how to
  resume) and ends the process with exit code 130 there and then (``os._exit``: nothing
  waits, not a thread stuck in a tool call, not the interpreter's shutdown).

Never a traceback. Off the console script (a test's in-process runner) nothing is
installed and Python's own handling stays.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import NoReturn

__all__ = ["EXIT_INTERRUPTED", "at_once", "install", "pressed", "quietly", "report_and_exit"]

EXIT_INTERRUPTED = 130

at_once = "interrupted again: stopped at once"
"""What the second Ctrl-C prints before the process ends (a command may say more)."""

_state = {"count": 0}
_quiet: list[threading.Event] = []


def install() -> None:
    """Take over SIGINT for this process (main thread only; a no-op elsewhere)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _handle)


def pressed() -> int:
    """How many times Ctrl-C was pressed since :func:`install`."""
    return _state["count"]


def _handle(signum: int, frame: FrameType | None) -> None:
    _state["count"] += 1
    if _state["count"] > 1:
        _write(f"\n{at_once}\n")
        os._exit(EXIT_INTERRUPTED)
    if _quiet:
        _quiet[-1].set()
        return
    raise KeyboardInterrupt


@contextmanager
def quietly() -> Iterator[threading.Event]:
    """Within the block, the first Ctrl-C sets the yielded event instead of raising."""
    event = threading.Event()
    _quiet.append(event)
    try:
        yield event
    finally:
        _quiet.remove(event)


def report_and_exit() -> NoReturn:
    """Ctrl-C before the command started (the imports): ``interrupted``, exit 130."""
    _write("interrupted\n")
    raise SystemExit(EXIT_INTERRUPTED)


def _write(text: str) -> None:
    with suppress(Exception):  # a closed or broken stdout must not stop the exit
        sys.stdout.flush()
    with suppress(OSError):
        os.write(2, text.encode("utf-8", "replace"))

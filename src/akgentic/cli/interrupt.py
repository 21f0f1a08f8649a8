"""Ctrl-C, the same in every command: the first one asks, the second one exits at once.

:func:`install` (the console script does it first thing, before the framework is
imported) replaces Python's SIGINT handler:

- the **first** Ctrl-C raises ``KeyboardInterrupt`` in the main thread, as usual — each
  command turns it into its graceful way out (``reporting`` prints ``interrupted``) — or,
  inside :func:`quietly`, only sets an event the command waits on (``events --follow``,
  ``serve``), or, inside :func:`deferred` (``run``, ``teams resume``: the main thread
  runs the framework — locks, conditions, the recorder, pykka — and must never have an
  exception thrown into it there), is raised only at the main thread's safe points: each
  :func:`check`, which the session's waits call every :data:`SLICE` seconds (the typed
  line, the reply, a stop run :func:`aside`), and the block's end;
- the **second** one prints :data:`at_once` (set by the command: what was cut, how to
  resume) and ends the process with exit code 130 there and then (``os._exit``: nothing
  waits, not a thread stuck in a tool call, not the interpreter's shutdown).

Never a traceback. Off the console script (a test's in-process runner) nothing is
installed and Python's own handling stays (:func:`check` then never raises).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import NoReturn, TypeVar

__all__ = [
    "EXIT_INTERRUPTED",
    "SLICE",
    "aside",
    "at_once",
    "check",
    "deferred",
    "install",
    "pressed",
    "quietly",
    "report_and_exit",
]

T = TypeVar("T")

EXIT_INTERRUPTED = 130

at_once = "interrupted again: stopped at once"
"""What the second Ctrl-C prints before the process ends (a command may say more)."""

SLICE = 0.1
"""Seconds a wait of the main thread inside :func:`deferred` goes without a :func:`check`."""

_state = {"count": 0}
_quiet: list[threading.Event] = []


def install() -> None:
    """Take over SIGINT for this process (main thread only; a no-op elsewhere); the count
    of :func:`pressed` starts again."""
    if threading.current_thread() is threading.main_thread():
        _state["count"] = 0
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


@contextmanager
def deferred() -> Iterator[None]:
    """Within the block, the first Ctrl-C is raised (``KeyboardInterrupt``) only at a
    :func:`check` of the main thread, or at the block's end when none came first."""
    with quietly():
        yield
        check()


def check() -> None:
    """The main thread's safe point: raise the first Ctrl-C that :func:`deferred` (or
    :func:`quietly`) took, once. A no-op when none is pending, and in other threads."""
    if _quiet and _quiet[-1].is_set() and threading.current_thread() is threading.main_thread():
        _quiet[-1].clear()
        raise KeyboardInterrupt


def aside(call: Callable[[], T]) -> T:
    """``call()`` on a thread of its own while the main thread waits for it, checking for
    Ctrl-C every :data:`SLICE` seconds: its result, or its exception, or — at the first
    Ctrl-C — ``KeyboardInterrupt`` here while the call goes on in its thread (a graceful
    stop that the Ctrl-C turns into an interrupt). The second Ctrl-C finds the main thread
    in an interruptible wait, never inside the call."""
    check()
    done = threading.Event()
    outcome: list[T] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # handed to the waiting caller
            failure.append(exc)
        finally:
            done.set()

    threading.Thread(target=work, name="akgentic-cli-aside", daemon=True).start()
    while not done.wait(SLICE):
        check()
    if failure:
        raise failure[0]
    return outcome[0]


def report_and_exit() -> NoReturn:
    """Ctrl-C before the command started (the imports): ``interrupted``, exit 130."""
    _write("interrupted\n")
    raise SystemExit(EXIT_INTERRUPTED)


def _write(text: str) -> None:
    with suppress(Exception):  # a closed or broken stdout must not stop the exit
        sys.stdout.flush()
    with suppress(OSError):
        os.write(2, text.encode("utf-8", "replace"))

"""Ctrl-C, the same in every command: the first one asks, the second one exits at once.

:func:`install` (the console script does it first thing, before the framework is
imported) replaces Python's handlers of SIGINT, SIGTERM and SIGHUP (the terminal closed,
``kill PID``, a service manager stopping the command): the three are taken alike — a
"Ctrl-C" below is any of them:

- the **first** Ctrl-C raises ``KeyboardInterrupt`` in the main thread, as usual — each
  command turns it into its graceful way out (``reporting`` prints ``interrupted``) — or,
  inside :func:`quietly`, only sets an event the command waits on (``events --follow``,
  ``serve``), or, inside :func:`deferred` (``run``, ``teams resume``: the main thread
  runs the framework — locks, conditions, the recorder, pykka — and must never have an
  exception thrown into it there), is raised only at the main thread's safe points: each
  :func:`check`, which the session's waits call every :data:`SLICE` seconds (the typed
  line, the reply, a stop run :func:`aside`), and the block's end;
- the **second** one prints :data:`at_once` (set by the command: what was cut, how to
  resume) and ends the process there and then (``os._exit``: nothing waits, not a thread
  stuck in a tool call, not the interpreter's shutdown).

The exit code names the first signal, 128 + its number (:func:`exit_code`): 130 after
Ctrl-C, 143 after SIGTERM, 129 after SIGHUP. A SIGTERM or SIGHUP that the process was
started ignoring (``nohup``) stays ignored.

Output whose reader is gone — a closed pipe (``akgentic run ... | head -1``), a hung-up
terminal — is :func:`output_lost`: the descriptor is pointed at ``/dev/null`` (what is
left to write goes nowhere, nothing fails, no "Exception ignored" at exit) and, when
nothing stopped the command yet, it is taken as a first Ctrl-C by SIGPIPE: the command
stops as gracefully, silently, with exit code 141 (as a Unix tool killed by SIGPIPE).

However the command ended, :func:`leave` ends the process without waiting for a thread
the interpreter's exit would join for ever — one that is not a daemon, or a pool's
(``ThreadPoolExecutor``, ``asyncio.to_thread``) stuck in a tool call that never returns:
it names them on one line and ends with the command's code.

A Ctrl-C outside a command's own handling is said and ends the process at once, with
the same exit code: before the command started — the start-up imports, the parsing of
the command line, until the command's body begins (:func:`begin`) — ``interrupted before
the command started: nothing was done`` (:data:`NOT_STARTED`); once the command is over
— leaving (:func:`leave`), the interpreter's exit (:func:`end`) — ``interrupted while
exiting: the command had already ended`` (:data:`ENDED`), whose lines above said how.
Nothing runs there that a stop would have to wait for.

Never a traceback. Off the console script (a test's in-process runner) nothing is
installed and Python's own handling stays (:func:`check` then never raises).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from types import FrameType
from typing import NoReturn, TypeVar

__all__ = [
    "AT_ONCE",
    "ENDED",
    "EXIT_INTERRUPTED",
    "NOT_STARTED",
    "SLICE",
    "aside",
    "at_once",
    "begin",
    "cause",
    "check",
    "deferred",
    "end",
    "exit_code",
    "install",
    "interrupted_by",
    "leave",
    "output_lost",
    "pause",
    "pressed",
    "quietly",
    "report_and_exit",
    "say",
]

T = TypeVar("T")

EXIT_INTERRUPTED = 130

AT_ONCE = "interrupted again: stopped at once"
at_once: str | Callable[[], str] = AT_ONCE
"""What the second Ctrl-C prints before the process ends (a command may say more), or
what makes it then: what is lost may be known only at that moment (records a store
refuses). Called in the signal handler: it must only read; should it fail,
:data:`AT_ONCE` is printed. ``""``: nothing is (a command whose work is over and said,
which only has to exit)."""

NOT_STARTED = "before the command started: nothing was done"
"""What a Ctrl-C before the command's body began did (after ``interrupted``, or
``interrupted by SIGTERM``): it ends the process there and then."""
ENDED = "while exiting: the command had already ended"
"""What a Ctrl-C once the command is over did (after ``interrupted``, or ``interrupted
again``): the process ends there and then, its command's lines said."""

SLICE = 0.1
"""Seconds a wait of the main thread inside :func:`deferred` goes without a :func:`check`."""

LEAVE_WAIT = 1.0
"""Seconds :func:`leave` gives the threads still running when the command is over (one
finishing its work ends in far less) before the process ends without them."""

_TAKEN = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""The signals :func:`install` takes as Ctrl-C (no SIGHUP on Windows)."""
_PIPE = int(getattr(signal, "SIGPIPE", 13))
"""SIGPIPE's number, the cause :func:`output_lost` records (POSIX's, on Windows too)."""

_STARTING, _RUNNING, _ENDED = "starting", "running", "ended"
_state = {"count": 0, "signal": 0}
_stage = [_RUNNING]
"""Where the command is: before its body (:func:`install` with ``starting``, until
:func:`begin`), in it, or over (:func:`end`)."""
_quiet: list[threading.Event] = []


def install(*, starting: bool = False) -> None:
    """Take over SIGINT, SIGTERM and SIGHUP for this process (main thread only; a no-op
    elsewhere; one the process started ignoring stays ignored, but SIGINT); the count of
    :func:`pressed` starts again, and :data:`at_once` is the plain words again.

    ``starting`` (the console script's entry): the command has not begun; until
    :func:`begin`, a Ctrl-C says :data:`NOT_STARTED` and ends the process at once."""
    global at_once
    if threading.current_thread() is threading.main_thread():
        _state["count"] = _state["signal"] = 0
        _stage[0] = _STARTING if starting else _RUNNING
        at_once = AT_ONCE
        for signum in _TAKEN:
            if signum == signal.SIGINT or signal.getsignal(signum) is not signal.SIG_IGN:
                signal.signal(signum, _handle)


def begin() -> None:
    """The command's body begins (:func:`akgentic.cli.errors.reporting` calls it): a
    Ctrl-C from now on is the command's to handle. A no-op once begun or ended."""
    if _stage[0] == _STARTING:
        _stage[0] = _RUNNING


def end() -> None:
    """The command is over, its lines said: a Ctrl-C from now on — while the process
    leaves (:func:`leave`), in the interpreter's exit — says :data:`ENDED` and ends the
    process at once, with the first signal's exit code (none of the command's handling
    runs any more: it would find nothing to stop, and only a traceback to print)."""
    _stage[0] = _ENDED


def pressed() -> int:
    """How many times Ctrl-C (or SIGTERM, SIGHUP, a lost output) came since :func:`install`."""
    return _state["count"]


def cause() -> int:
    """The number of the first signal taken (SIGPIPE's for a lost output); 0 before any."""
    return _state["signal"]


def cause_name() -> str:
    """The first signal taken, as the person knows it: ``Ctrl-C`` (also before any, as
    :func:`exit_code` counts it), else its name (``SIGTERM``, ``SIGHUP``, ``SIGPIPE``)."""
    taken = _state["signal"]
    return "Ctrl-C" if taken in (0, signal.SIGINT) else signal.Signals(taken).name


def exit_code() -> int:
    """The exit code of a command a signal stopped: 128 + the first signal's number (130
    for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP, 141 for a lost output); 130 when none was
    taken (Python's own ``KeyboardInterrupt``, off the console script)."""
    return 128 + (_state["signal"] or int(signal.SIGINT))


def interrupted_by() -> str:
    """``interrupted`` (Ctrl-C), ``interrupted by SIGTERM`` (or SIGHUP, SIGPIPE: the
    output's reader went)."""
    cause = cause_name()
    return "interrupted" if cause == "Ctrl-C" else f"interrupted by {cause}"


def _handle(signum: int, frame: FrameType | None) -> None:
    _state["count"] += 1
    if _state["count"] == 1:
        _state["signal"] = signum
    if _stage[0] == _STARTING:  # nothing begun: nothing to stop, nothing to wait for
        _write(f"{_off_the_line()}{interrupted_by()} {NOT_STARTED}\n")
        os._exit(exit_code())
    if _stage[0] == _ENDED:
        again = _state["count"] > 1
        if not (again and at_once == ""):  # "": the command's last line said how it ended
            said = "interrupted again" if again else interrupted_by()
            _write(f"{_off_the_line()}{said} {ENDED}\n")
        os._exit(exit_code())
    if _state["count"] > 1:
        words = _at_once()
        if words:
            _write(f"\n{words}\n")
        os._exit(exit_code())
    if _quiet:
        _quiet[-1].set()
        return
    raise KeyboardInterrupt


def _off_the_line() -> str:
    """A newline when stderr is a terminal: off the line the ``^C`` was echoed on."""
    try:
        return "\n" if os.isatty(2) else ""
    except OSError:
        return ""


def _at_once() -> str:
    """:data:`at_once`'s words (made now when it is a function)."""
    if isinstance(at_once, str):
        return at_once
    try:
        return at_once()
    except Exception:  # the process ends now whatever: with the plain words
        return AT_ONCE


def output_lost(fd: int) -> None:
    """The reader of ``fd`` (1 or 2) is gone (a closed pipe, a hung-up terminal): from now
    on it writes to ``/dev/null``. When no signal came yet, this is the first "Ctrl-C"
    (cause SIGPIPE): inside :func:`quietly` it sets the event; in the main thread outside
    it raises ``KeyboardInterrupt``; in another thread it is only recorded (the command's
    output goes nowhere until it ends)."""
    with suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    if _state["count"] or _stage[0] == _ENDED:
        return  # already stopping, or over: the rest of the way out writes nowhere
    _state["count"], _state["signal"] = 1, _PIPE
    if _quiet:
        _quiet[-1].set()
    elif threading.current_thread() is threading.main_thread():
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


def pause(seconds: float) -> None:
    """Wait ``seconds`` in the main thread (a poll's interval), cut short by the first
    Ctrl-C that :func:`deferred` (or :func:`quietly`) takes, which is raised then, as
    :func:`check` raises it."""
    check()
    if _quiet and threading.current_thread() is threading.main_thread():
        _quiet[-1].wait(seconds)
    else:
        time.sleep(seconds)
    check()


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
    """Ctrl-C (or SIGTERM, SIGHUP) before the command started (the imports), raised where
    the handler of :func:`install` ``starting`` did not end the process itself (Python's
    own, off the console script): ``interrupted before the command started: nothing was
    done``, exit 128 + the signal's number."""
    _write(f"{interrupted_by()} {NOT_STARTED}\n")
    raise SystemExit(exit_code())


def leave(code: int) -> None:
    """The command is over (exit ``code``): return when no thread but daemons and this one
    runs after :data:`LEAVE_WAIT`, so the interpreter exits as usual; else say which on
    one line and end the process now with ``code`` (``os._exit``, output flushed).

    A thread that is not a daemon and never ends — or a pool's thread (``concurrent.futures``
    joins its workers at exit, daemons or not): a tool call stuck there, which a team's
    stop left behind — would otherwise hold the exit for ever. The team
    has been stopped and its records written before the command returned: nothing waits
    for that thread but the join."""
    from concurrent.futures import thread as pools

    deadline = time.monotonic() + LEAVE_WAIT
    here = threading.current_thread()
    joined = set(getattr(pools, "_threads_queues", {}))  # what the pools' atexit joins
    held = []
    for thread in threading.enumerate():
        if thread is here or (thread.daemon and thread not in joined):
            continue
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            held.append(thread.name)
    if not held:
        return
    from akgentic.core.words import counted

    names = ", ".join(held)
    _write(
        f"warning: exiting without waiting for {counted(len(held), 'thread')} still running "
        f"({names}; a call that has not returned?)\n"
    )
    with suppress(Exception):
        sys.stderr.flush()
    os._exit(code)


def say(line: str) -> None:
    """Write ``line`` on stderr, the way the signal handler writes (stdout flushed first)."""
    _write(f"{line}\n")


def _write(text: str) -> None:
    with suppress(Exception):  # a closed or broken stdout must not stop the exit
        sys.stdout.flush()
    with suppress(OSError):
        os.write(2, text.encode("utf-8", "replace"))

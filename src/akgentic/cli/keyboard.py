"""What the person types, read by a thread, so a session can wait for a line *or* the end
of the team (stopped from another terminal) — whichever comes first.

The thread reads only when asked (:meth:`Keyboard.line` shows the prompt first), so the
prompt never appears while the team is still answering. It reads the file descriptor
with ``os.read``, never through Python's buffered ``sys.stdin``: a thread left blocked
in a read when the session ends holds no lock the interpreter's shutdown would wait
for. (A replaced ``sys.stdin`` without a descriptor — a test runner — is read by lines.)
As the session ends, :meth:`Keyboard.left` gives the lines typed that it never took (typed
while the team was working), so that none is lost without a word.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import queue
import select
import sys
import threading
from collections.abc import Callable
from typing import Final

from akgentic.cli import interrupt
from akgentic.cli.output import write_out

__all__ = ["ENDED", "Keyboard", "typed_ahead"]


class _Ended:
    def __repr__(self) -> str:
        return "ENDED"


ENDED: Final = _Ended()
"""What :meth:`Keyboard.line` returns once :meth:`Keyboard.end` was called."""


class Keyboard:
    """Lines from standard input on demand; see the module docstring."""

    def __init__(self) -> None:
        self._asks: queue.Queue[bool] = queue.Queue()  # True: what is there, without waiting
        self._drained: queue.Queue[list[str]] = queue.Queue()
        self._lines: queue.Queue[str | _Ended | None] = queue.Queue()
        self._pending = False
        self._ended = False
        self._thread = threading.Thread(target=self._read, name="akgentic-keyboard", daemon=True)
        self._thread.start()

    def line(
        self, prompt: str = "", show: Callable[[str], None] | None = None
    ) -> str | _Ended | None:
        """The next line typed (without its newline), None at end of input, or
        :data:`ENDED` once :meth:`end` was called. Ctrl-C interrupts the wait (at an
        :func:`interrupt.check`, within :func:`interrupt.deferred`).

        ``show`` prints the prompt (the live view's, which keeps it below the team's
        lines); by default it is written to stdout."""
        if self._ended:
            return ENDED
        if not self._pending:
            if prompt:
                (show or _write)(prompt)
            self._pending = True
            self._asks.put(False)
        while True:
            try:
                item = self._lines.get(timeout=interrupt.SLICE)
                break
            except queue.Empty:
                interrupt.check()
        if not isinstance(item, _Ended):
            self._pending = False
        return item

    def end(self) -> None:
        """Wake a :meth:`line` waiting (from any thread): the session is over."""
        self._ended = True
        self._lines.put(ENDED)

    def left(self) -> list[str]:
        """The lines typed that no :meth:`line` took — queued, or still in standard input
        (typed while the team was working), read without waiting — in order: what a
        session ending now leaves unsent. Called as the session ends. A line being waited
        for (the prompt shown) that has not come is no line: there is nothing to read."""
        lines: list[str] = []
        answered = False  # the read asked for gave its line (or the end of the input)
        while True:
            try:
                item = self._lines.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, str):
                lines.append(item)
            answered = answered or not isinstance(item, _Ended)
        if self._pending and not answered:
            return lines  # the thread reads the input: what it holds is not a line yet
        self._pending = False
        self._asks.put(True)
        with contextlib.suppress(queue.Empty):  # reading without waiting takes no time
            lines += self._drained.get(timeout=_DRAIN_BOUND)
        return lines

    # -- the reading thread ----------------------------------------------------------------
    def _read(self) -> None:
        source = _Input(_descriptor())
        while True:
            if self._asks.get():
                self._drained.put(source.available())
            else:
                self._lines.put(source.next())


_DRAIN_BOUND = 5.0
"""Seconds :meth:`Keyboard.left` waits for the reading thread, which does not block."""


class _Input:
    """Standard input split into lines, read by one thread: waiting for the next line, or
    taking what is already there without waiting."""

    def __init__(self, fd: int | None) -> None:
        self._fd = fd
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffered = ""
        self._ended = False

    def next(self) -> str | None:
        """The next line (the last one may have no newline); None at the end of the input,
        and ever after."""
        if self._fd is None:
            text = "" if self._ended else sys.stdin.readline()
            self._ended = not text
            return text.rstrip("\n") if text else None
        while "\n" not in self._buffered and not self._ended:
            self._take(self._fd)
        return self._split()

    def available(self) -> list[str]:
        """The lines already in the input (a last one without its newline too), read
        without waiting; none from a replaced ``sys.stdin`` without a descriptor, which
        cannot say whether a read would wait."""
        while self._fd is not None and not self._ended and _readable(self._fd):
            self._take(self._fd)
        lines: list[str] = []
        while (line := self._split()) is not None:
            lines.append(line)
        return lines

    def _take(self, fd: int) -> None:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the terminal hung up — the end of the input
            chunk = b""
        self._buffered += self._decoder.decode(chunk, final=not chunk)
        self._ended = not chunk

    def _split(self) -> str | None:
        if "\n" in self._buffered:
            line, self._buffered = self._buffered.split("\n", 1)
            return line
        line, self._buffered = self._buffered, ""
        return line or None


def typed_ahead() -> list[str]:
    """The lines already in standard input, read without waiting (no :class:`Keyboard`
    reads it yet): what was typed while a session was starting, which it ended before
    taking. None from a replaced ``sys.stdin`` without a descriptor."""
    fd = _descriptor()
    return _Input(fd).available() if fd is not None else []


def _readable(fd: int) -> bool:
    """Whether reading ``fd`` now would not wait."""
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):  # a descriptor select cannot watch: read nothing more
        return False


def _write(prompt: str) -> None:
    write_out(prompt)


def _descriptor() -> int | None:
    try:
        return sys.stdin.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return None

"""What the person types, read by a thread, so a session can wait for a line *or* the end
of the team (stopped from another terminal) — whichever comes first.

The thread reads only when asked (:meth:`Keyboard.line` shows the prompt first), so the
prompt never appears while the team is still answering. It reads the file descriptor
with ``os.read``, never through Python's buffered ``sys.stdin``: a thread left blocked
in a read when the session ends holds no lock the interpreter's shutdown would wait
for. (A replaced ``sys.stdin`` without a descriptor — a test runner — is read by lines.)
"""

from __future__ import annotations

import codecs
import io
import os
import queue
import sys
import threading
from collections.abc import Callable
from typing import Final

from akgentic.cli import interrupt
from akgentic.cli.output import write_out

__all__ = ["ENDED", "Keyboard"]


class _Ended:
    def __repr__(self) -> str:
        return "ENDED"


ENDED: Final = _Ended()
"""What :meth:`Keyboard.line` returns once :meth:`Keyboard.end` was called."""


class Keyboard:
    """Lines from standard input on demand; see the module docstring."""

    def __init__(self) -> None:
        self._asks: queue.Queue[None] = queue.Queue()
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
            self._asks.put(None)
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

    # -- the reading thread ----------------------------------------------------------------
    def _read(self) -> None:
        fd = _descriptor()
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        buffered = ""
        while True:
            self._asks.get()
            if fd is None:
                text = sys.stdin.readline()
                self._lines.put(text.rstrip("\n") if text else None)
                if not text:
                    return
                continue
            while "\n" not in buffered:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: the terminal hung up — the end of the input
                    chunk = b""
                if not chunk:
                    buffered += decoder.decode(b"", final=True)
                    break
                buffered += decoder.decode(chunk)
            if "\n" in buffered:
                line, buffered = buffered.split("\n", 1)
                self._lines.put(line)
            elif buffered:
                line, buffered = buffered, ""
                self._lines.put(line)  # the last line had no newline
            else:
                self._lines.put(None)
                return


def _write(prompt: str) -> None:
    write_out(prompt)


def _descriptor() -> int | None:
    try:
        return sys.stdin.fileno()
    except (AttributeError, ValueError, io.UnsupportedOperation):
        return None

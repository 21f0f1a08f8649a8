"""Regular-expression matching for ``workspace_grep``, in a worker process with a time budget.

Python's ``re`` backtracks and has no timeout: a model's ``(a+)+$`` against a long line of
``a`` holds the matching thread for minutes — or hours — and a thread cannot be stopped.
Refusing "dangerous" patterns by their structure is a guess that misses some (``(a|a)*$``,
``a*a*a*a*b``) and refuses good ones, and the ``regex`` package's timeout would be a new
dependency. So the matching runs in a worker process, this module run as a script
(``python -I -S grep.py``: the standard library only, no site, ~20 ms to start), and a
worker that has not answered within the call's budget is killed — it is the only thing
that can stop ``re``. The caller is told :class:`PatternTooSlowError`.

Workers are reused: one is taken from an idle pool per grep (started when none is idle)
and given back after, so a normal grep pays a pipe round trip per batch of text, not a
process start. A worker whose parent is gone dies at its own alarm (the budget plus a
margin, ``signal.alarm``) or at end of input, never matching on for ever.

The protocol on the worker's stdin and stdout: once started, the worker writes a zero
length (ready: a request's budget is its matching only, never the process start); then
each request is a 4-byte big-endian length, then a
``marshal`` of ``(pattern, flags, texts, limit, alarm_seconds)``; the answer is a
``marshal`` of ``[(text_index, line_number, line), …]`` — at most ``limit`` of them.
"""

from __future__ import annotations

import marshal
import os
import re
import select
import struct
import subprocess
import sys
import threading
import time

__all__ = ["PatternTooSlowError", "matching_lines"]

_HEADER = struct.Struct(">I")
_START_SECONDS = 60.0
"""How long a worker may take to start (a busy machine's Python start) before the grep
is said to have failed; apart from a request's matching budget."""
_IDLE_MAX = 2
"""Idle workers kept for the next grep (more start when several agents grep at once)."""
_ORPHAN_MARGIN = 30
"""Seconds past a request's budget after which a worker kills itself (its parent is gone
or did not kill it)."""


class PatternTooSlowError(Exception):
    """The matching outran its budget; its worker was killed."""


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes:
    """``size`` bytes from ``fd``, waiting until ``deadline`` (``time.monotonic``) at most."""
    chunks: list[bytes] = []
    while size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise PatternTooSlowError
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError("the grep worker ended")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _send(fd: int, payload: bytes) -> None:
    data = memoryview(_HEADER.pack(len(payload)) + payload)
    while data:
        data = data[os.write(fd, data) :]


class _Worker:
    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-S", os.path.abspath(__file__)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin = self.process.stdin.fileno()
        self.stdout = self.process.stdout.fileno()
        # A request's budget is the matching's: the worker's start (slow on a busy machine)
        # is waited for apart, until it says it is ready.
        try:
            _read_exactly(self.stdout, _HEADER.size, time.monotonic() + _START_SECONDS)
        except PatternTooSlowError:
            self.kill()
            raise OSError(f"its worker did not start within {_START_SECONDS:g}s") from None
        except BaseException:
            self.kill()
            raise

    def ask(
        self, request: tuple[str, int, list[str], int, int], seconds: float
    ) -> list[tuple[int, int, str]]:
        _send(self.stdin, marshal.dumps(request))
        deadline = time.monotonic() + seconds
        (size,) = _HEADER.unpack(_read_exactly(self.stdout, _HEADER.size, deadline))
        answer: list[tuple[int, int, str]] = marshal.loads(
            _read_exactly(self.stdout, size, deadline)
        )
        return answer

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


_idle: list[_Worker] = []
_idle_lock = threading.Lock()


def _take() -> _Worker:
    with _idle_lock:
        while _idle:
            worker = _idle.pop()
            if worker.process.poll() is None:
                return worker
    return _Worker()


def _give_back(worker: _Worker) -> None:
    with _idle_lock:
        if len(_idle) < _IDLE_MAX:
            _idle.append(worker)
            return
    worker.kill()


def matching_lines(
    pattern: str, flags: int, texts: list[str], limit: int, seconds: float
) -> list[tuple[int, int, str]]:
    """``(index in texts, line number, line)`` of the first ``limit`` lines of ``texts``
    that ``re.compile(pattern, flags)`` searches a match in, in order.

    Raises :class:`PatternTooSlowError` when the worker has not answered within
    ``seconds`` (it is killed), ``OSError``/``EOFError`` when it failed (it is dropped).
    ``pattern`` must compile: the caller compiles it first, to say why it does not."""
    worker = _take()
    try:
        request = (pattern, flags, texts, limit, int(seconds) + _ORPHAN_MARGIN)
        answer = worker.ask(request, seconds)
    except BaseException:
        worker.kill()
        raise
    _give_back(worker)
    return answer


def _serve() -> None:  # pragma: no cover - runs in the worker process
    import signal

    source, sink = sys.stdin.buffer.fileno(), sys.stdout.buffer.fileno()
    _send(sink, b"")  # ready: an empty frame
    while True:
        try:
            (size,) = _HEADER.unpack(_read_exactly(source, _HEADER.size, None))
        except EOFError:
            return
        pattern, flags, texts, limit, alarm = marshal.loads(_read_exactly(source, size, None))
        signal.alarm(alarm)  # SIGALRM's default action ends the process
        search = re.compile(pattern, flags).search
        found: list[tuple[int, int, str]] = []
        for index, text in enumerate(texts):
            for number, line in enumerate(text.split("\n"), 1):
                if search(line):
                    found.append((index, number, line))
                    if len(found) >= limit:
                        break
            if len(found) >= limit:
                break
        signal.alarm(0)
        _send(sink, marshal.dumps(found))


if __name__ == "__main__":  # pragma: no cover
    _serve()

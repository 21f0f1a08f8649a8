"""The framework's log lines in a terminal: one line each, the traceback only with --debug.

:func:`configure` installs one stderr handler (``LEVEL name: message``). Without
``--debug`` (:func:`show_tracebacks`) a record's traceback is left out — the line says
what happened, ``--debug`` says where. While a session shows a team's stream
(:func:`stream_shown`), records flagged :data:`akgentic.core.agent.ON_STREAM` — a
handler that failed, a model that could not be reached — are skipped: the stream prints
them already, once; and so is a team's report that its stop grace ran out with members
still running (:data:`akgentic.core.agent.LEFT_BEHIND`): the session names them itself,
on one ``warning:`` line, as it exits without them. A record is one line whatever its
message holds: a newline, a carriage return or any other control character in it is
printed escaped (:func:`akgentic.cli.output.printable` with ``ONE_LINE``), so a message
cannot break its line or forge another one; only the ``--debug`` traceback spans lines.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from akgentic.cli.output import ONE_LINE, printable
from akgentic.core.agent import LEFT_BEHIND, ON_STREAM

__all__ = ["configure", "show_tracebacks", "stream_shown", "tracebacks_shown"]

_FORMAT = "%(levelname)s %(name)s: %(message)s"


class _Lines(logging.Formatter):
    """A record as one line, followed by its traceback when ``tracebacks`` is on."""

    tracebacks = False

    def format(self, record: logging.LogRecord) -> str:
        plain = _plain(record)
        line = printable(self.formatMessage(plain), keep=ONE_LINE)
        if not self.tracebacks:
            return line
        # the line, then the traceback and stack (after a newline the message may have ended)
        after = super().format(record)[len(self.formatMessage(plain)) :].lstrip("\n")
        return line + printable(f"\n{after}") if after else line


def _plain(record: logging.LogRecord) -> logging.LogRecord:
    copy = logging.makeLogRecord(record.__dict__)
    copy.message = copy.getMessage()
    copy.exc_info = copy.exc_text = copy.stack_info = None
    return copy


class _NotOnStream(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        said = getattr(record, ON_STREAM, False) or getattr(record, LEFT_BEHIND, False)
        return _FORMATTER.tracebacks or not said


_FORMATTER = _Lines(_FORMAT)
_HANDLER = logging.StreamHandler(sys.stderr)
_HANDLER.setFormatter(_FORMATTER)
_SKIP_STREAMED = _NotOnStream()


def configure() -> None:
    """Send WARNING and above to stderr, one line per record (idempotent)."""
    root = logging.getLogger()
    if _HANDLER not in root.handlers:
        root.addHandler(_HANDLER)
    if root.level == logging.NOTSET or root.level > logging.WARNING:
        root.setLevel(logging.WARNING)


def show_tracebacks(on: bool) -> bool:
    """``--debug``: log lines carry their traceback (and stream news is not skipped).
    Returns what it was, for whoever sets it for a while to put back."""
    before = _FORMATTER.tracebacks
    _FORMATTER.tracebacks = on
    return before


def tracebacks_shown() -> bool:
    """Whether ``--debug`` is on: tracebacks are printed (a log line's, a member's error's)."""
    return _FORMATTER.tracebacks


@contextmanager
def stream_shown() -> Iterator[None]:
    """While a team's stream is printed: skip the log lines it prints already."""
    _HANDLER.addFilter(_SKIP_STREAMED)
    try:
        yield
    finally:
        _HANDLER.removeFilter(_SKIP_STREAMED)

"""The framework's log lines in a terminal: one line each, the traceback only with --debug.

:func:`configure` installs one stderr handler (``LEVEL name: message``). Without
``--debug`` (:func:`show_tracebacks`) a record's traceback is left out — the line says
what happened, ``--debug`` says where. While a session shows a team's stream
(:func:`stream_shown`), records flagged :data:`akgentic.core.agent.ON_STREAM` — a
handler that failed, a model that could not be reached — are skipped: the stream prints
them already, once. A team's report that its stop grace ran out with members still
running (:data:`akgentic.core.agent.LEFT_BEHIND`) is then the CLI's own ``warning:``
line, and the session does not name them again as it exits without them
(:func:`left_said`). A record is one line whatever its
message holds: a newline, a carriage return or any other control character in it is
printed escaped (:func:`akgentic.cli.output.printable` with ``ONE_LINE``), so a message
cannot break its line or forge another one; only the ``--debug`` traceback spans lines.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from akgentic.cli.output import ONE_LINE, member_name, printable
from akgentic.core.agent import LEFT_BEHIND, ON_STREAM, GraceRanOut

__all__ = ["configure", "left_said", "show_tracebacks", "stream_shown", "tracebacks_shown"]

_left_said: set[str] = set()  # the members a grace-ran-out line named (see left_said)

_FORMAT = "%(levelname)s %(name)s: %(message)s"


class _Lines(logging.Formatter):
    """A record as one line, followed by its traceback when ``tracebacks`` is on."""

    tracebacks = False
    session = False  # a session shows its team (stream_shown): a team's report is its own

    def format(self, record: logging.LogRecord) -> str:
        report = getattr(record, LEFT_BEHIND, None)
        if self.session and isinstance(report, GraceRanOut):  # the CLI's own line
            _left_said.update(report.names)
            return printable(f"warning: {report.says(member_name)}", keep=ONE_LINE)
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
        return _FORMATTER.tracebacks or not getattr(record, ON_STREAM, False)


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


def left_said() -> set[str]:
    """The members a ``warning: the grace of ... ran out`` line named since the last call
    (the call forgets them): the team stopped without them, which a command exiting
    without them need not say again."""
    said = set(_left_said)
    _left_said.difference_update(said)
    return said


@contextmanager
def stream_shown() -> Iterator[None]:
    """While a team's stream is printed: skip the log lines it prints already, and say
    the team's grace running out as the CLI's own ``warning:`` line."""
    _HANDLER.addFilter(_SKIP_STREAMED)
    _FORMATTER.session = True
    try:
        yield
    finally:
        _FORMATTER.session = False
        _HANDLER.removeFilter(_SKIP_STREAMED)

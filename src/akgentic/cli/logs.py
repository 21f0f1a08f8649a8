"""The framework's log records in a terminal: one ``warning:`` or ``error:`` line each,
a repeated condition said once; the full records only with ``--debug``.

:func:`configure` installs one stderr handler. Without ``--debug``
(:func:`show_tracebacks`) a record at WARNING or above is a line in the CLI's own format,
``warning: <message>`` or ``error: <message>`` (an exception the record carries is named
after it, ``: StorageError: …``; its traceback is left out), and:

- a line is not said again within :data:`QUIET_FOR` seconds of saying it: a failure
  retried every second is news once, and the same failure an hour later is news again
  (``serve`` says every record: :func:`say_each_time`, an operator counts them);
- a store that is busy — locked by another process, whatever record says so (a lease
  renewal, an event log batch, the working memory) — is one line, :data:`STORE_BUSY`,
  that says what happens and what to do;
- a write that failed for any other reason (a disk full, a read-only file, a dropped
  connection: a record flagged :data:`akgentic.storage.WRITE_FAILED`) is a line — the
  first of an outage only: until the writes that failed went through, the other failed
  writes and reads of the store (flagged :data:`akgentic.storage.READ_FAILED`) are not
  said, since a store that stopped answering fails all of them at once, each in its
  own words;
- when the writes that failed all went through at last (each a record flagged
  :data:`akgentic.storage.RECOVERED`, with the key its failures carried) one ``note:``
  line says so — :data:`STORE_FREE` after a lock, :data:`STORE_BACK` otherwise — once,
  and a later failure is said again;
- records below WARNING are not shown (the ``akgentic`` loggers log at INFO under the
  CLI, for the records flagged RECOVERED).

With ``--debug`` every record is printed whole: ``LEVEL name: message`` and its
traceback, each record, each time. While a session shows a team's stream
(:func:`stream_shown`), records flagged :data:`akgentic.core.agent.ON_STREAM` — a
handler that failed, a model that could not be reached — are skipped: the stream prints
them already, once; so are the records of a lost lease
(:data:`akgentic.storage.LEASE_LOST`): the session says it in one line of its own, and
once it has, those records are skipped for good (:func:`lease_loss_said`). A
team's report that its stop grace ran out with members still running
(:data:`akgentic.core.agent.LEFT_BEHIND`) is then the CLI's own ``warning:`` line, and
the session does not name them again as it exits without them (:func:`left_said`). A
record is one line whatever its message holds: a newline, a carriage return or any
other control character in it is printed escaped (:func:`akgentic.cli.output.printable`
with ``ONE_LINE``), so a message cannot break its line or forge another one; only the
``--debug`` traceback spans lines.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from akgentic.cli.output import ONE_LINE, member_name, printable
from akgentic.core.agent import LEFT_BEHIND, ON_STREAM, GraceRanOut
from akgentic.core.excerpt import exception_line
from akgentic.storage import LEASE_LOST, READ_FAILED, RECOVERED, WRITE_FAILED

__all__ = [
    "QUIET_FOR",
    "STORE_BACK",
    "STORE_BUSY",
    "STORE_FREE",
    "configure",
    "lease_loss_said",
    "left_said",
    "say_each_time",
    "show_tracebacks",
    "stream_shown",
    "tracebacks_shown",
]

_left_said: set[str] = set()  # the members a grace-ran-out line named (see left_said)

_FORMAT = "%(levelname)s %(name)s: %(message)s"

STORE_BUSY = (
    "warning: the store is busy (another process holds it locked); what the team writes "
    "is kept and retried, nothing is lost so far; if this lasts, end that process's "
    "transaction (a sqlite3 shell, a backup, another program) and keep this one running"
)
"""The one line for every record that says the store is locked, until it is free again."""
STORE_FREE = "note: the store is free again; what was kept is written, nothing was lost"
"""The line when a write goes through after :data:`STORE_BUSY`."""
STORE_BACK = "note: the store takes writes again; what was kept is written, nothing was lost"
"""The line when the writes that failed otherwise (a disk full, a read-only file, a
dropped connection) all went through."""

QUIET_FOR = 60.0
"""Seconds within which a line said is not said again (see the module docstring)."""
_SAID_KEPT = 256  # lines remembered; past that the older half is forgotten

_BUSY_WORDS = (
    "database is locked",
    "database is busy",
    "database table is locked",
    "lock timeout",
    "could not obtain lock",
)
"""How SQLite and PostgreSQL say another connection holds what a write needs."""


class _Lines(logging.Formatter):
    """A record as the CLI's one line; with ``tracebacks`` on (``--debug``), the whole
    record: ``LEVEL name: message``, then its traceback."""

    tracebacks = False
    session = False  # a session shows its team (stream_shown): a team's report is its own

    def format(self, record: logging.LogRecord) -> str:
        report = getattr(record, LEFT_BEHIND, None)
        if self.session and isinstance(report, GraceRanOut):  # the CLI's own line
            _left_said.update(report.names)
            return printable(f"warning: {report.says(member_name)}", keep=ONE_LINE)
        plain = _plain(record)
        if not self.tracebacks:
            return printable(_said(record, plain.message), keep=ONE_LINE)
        line = printable(self.formatMessage(plain), keep=ONE_LINE)
        # the line, then the traceback and stack (after a newline the message may have ended)
        after = super().format(record)[len(self.formatMessage(plain)) :].lstrip("\n")
        return line + printable(f"\n{after}") if after else line


def _said(record: logging.LogRecord, message: str) -> str:
    """``warning: <message>`` (``error:`` from ERROR up; ``note:`` below WARNING), the
    exception the record carries named after it."""
    exc = record.exc_info[1] if record.exc_info else None
    if exc is not None:
        message = f"{message}: {exception_line(exc)}"
    if record.levelno >= logging.ERROR:
        return f"error: {message}"
    return f"warning: {message}" if record.levelno >= logging.WARNING else f"note: {message}"


def _plain(record: logging.LogRecord) -> logging.LogRecord:
    copy = logging.makeLogRecord(record.__dict__)
    copy.message = copy.getMessage()
    copy.exc_info = copy.exc_text = copy.stack_info = None
    return copy


def _store_busy(record: logging.LogRecord) -> bool:
    """Whether ``record`` says a write failed because another connection holds the store:
    by the exception it carries, or one among its arguments, or a cause of either."""
    found = [record.exc_info[1]] if record.exc_info else []
    args = record.args if isinstance(record.args, tuple) else ()
    found += [a for a in args if isinstance(a, BaseException)]
    seen: set[int] = set()
    while found:
        exc = found.pop()
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        if any(words in str(exc).lower() for words in _BUSY_WORDS):
            return True
        found += [exc.__cause__, exc.__context__]
    return False


class _Terminal(logging.StreamHandler):  # type: ignore[type-arg]
    """The CLI's stderr handler: each record through :class:`_Lines`; without
    ``--debug``, what was said is not said again (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.said: dict[str, float] = {}  # a line, when it was said (monotonic)
        self.quiet_for: float | None = QUIET_FOR
        self.busy = False  # STORE_BUSY was said, and no write went through since
        self.failing: set[object] = set()  # the keys of the writes failed and kept
        self.failures: set[str] = set()  # the lines that said them

    def emit(self, record: logging.LogRecord) -> None:
        if _FORMATTER.tracebacks:
            super().emit(record)
            return
        try:  # a handler never raises into the code that logs (a writer thread, say)
            line = self._line(record)
            if line is None or self._said_lately(line):
                return
            self.stream.write(line + self.terminator)
            self.flush()
        except Exception:
            self.handleError(record)

    def _said_lately(self, line: str) -> bool:
        """Whether ``line`` was said within ``quiet_for`` seconds; else it is noted as said
        now. The table keeps only lines said within that time."""
        quiet = self.quiet_for
        if quiet is None:
            return False
        now = time.monotonic()
        last = self.said.get(line)
        if last is not None and now - last < quiet:
            return True
        if len(self.said) > _SAID_KEPT:  # forget the older half (a dict keeps its order)
            self.said = dict(list(self.said.items())[_SAID_KEPT // 2 :])
        self.said.pop(line, None)  # to the end: the order is the order of saying
        self.said[line] = now
        return False

    def _line(self, record: logging.LogRecord) -> str | None:
        """What to print for ``record``, or None: nothing."""
        recovered = getattr(record, RECOVERED, False)
        if recovered:
            return self._recovered(recovered)
        if record.levelno < logging.WARNING:
            return None
        failed = getattr(record, WRITE_FAILED, None)
        outage_said = bool(self.failing) and not self.busy
        if failed is not None:
            self.failing.add(failed)
        if _store_busy(record):
            self.busy = True
            return STORE_BUSY
        if outage_said and (failed is not None or getattr(record, READ_FAILED, False)):
            return None  # one store down, said once: its other failures wait for its return
        line = self.format(record)
        if failed is not None:
            self.failures.add(line)
        return line

    def _recovered(self, key: object) -> str | None:
        """The line once a write that had failed went through (``key``: what its
        failures carried; ``True``: whatever failed): none while another kept write
        still fails, or when no failure was said; else :data:`STORE_FREE` after a lock,
        :data:`STORE_BACK` otherwise — and the failures said are news again."""
        said = self.busy or bool(self.failing)
        if key is True:
            self.failing.clear()
        else:
            self.failing.discard(key)
        if not said or self.failing:
            return None
        line = STORE_FREE if self.busy else STORE_BACK
        self.busy = False
        for forgotten in (STORE_BUSY, STORE_FREE, STORE_BACK, *self.failures):
            self.said.pop(forgotten, None)
        self.failures.clear()
        return line


class _NotOnStream(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        said = getattr(record, ON_STREAM, False) or getattr(record, LEASE_LOST, False)
        return _FORMATTER.tracebacks or not said


class _LossSaid(logging.Filter):
    """Skips a lost lease's records once the session said the loss (see lease_loss_said)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return _FORMATTER.tracebacks or not getattr(record, LEASE_LOST, False)


_FORMATTER = _Lines(_FORMAT)
_HANDLER = _Terminal()
_HANDLER.setFormatter(_FORMATTER)
_SKIP_STREAMED = _NotOnStream()
_SKIP_LOSS_SAID = _LossSaid()


def configure() -> None:
    """Send the framework's WARNING and above to stderr, one line per record, and let its
    RECOVERED records reach the handler (INFO); what was said is forgotten (idempotent)."""
    root = logging.getLogger()
    if _HANDLER not in root.handlers:
        root.addHandler(_HANDLER)
    if root.level == logging.NOTSET or root.level > logging.WARNING:
        root.setLevel(logging.WARNING)
    framework = logging.getLogger("akgentic")
    if framework.level == logging.NOTSET or framework.level > logging.INFO:
        framework.setLevel(logging.INFO)
    _HANDLER.removeFilter(_SKIP_LOSS_SAID)
    _HANDLER.said.clear()
    _HANDLER.quiet_for = QUIET_FOR
    _HANDLER.busy = False
    _HANDLER.failing.clear()
    _HANDLER.failures.clear()


def say_each_time() -> None:
    """Every record is said, a repeat too (``serve``: a server's log is read by counting
    what happened, and runs for days)."""
    _HANDLER.quiet_for = None


def show_tracebacks(on: bool) -> bool:
    """``--debug``: log records are printed whole, with their traceback, each time (and
    stream news is not skipped). Returns what it was, for whoever sets it for a while to
    put back."""
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


def lease_loss_said() -> None:
    """The session said, in its own line, that its team was taken over: the records of
    that loss are skipped from now on (until :func:`configure`), also those logged after
    the session, as the team shuts down (the recorder counts the records it dropped)."""
    _HANDLER.addFilter(_SKIP_LOSS_SAID)


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

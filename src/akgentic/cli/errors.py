"""How the CLI fails: one readable line per problem on stderr, and a non-zero exit code.

:func:`reporting` wraps a command. An exception the user can act on (a bad team card,
an unknown team, a missing API key, a bad storage URL...) becomes ``error: <message>``
lines and exit code 1; anything else also says to rerun with ``--debug``, which prints
the traceback first. A pydantic ``ValidationError`` that escapes a command (an option's
value a model refused) is one line in the words a server's ``detail`` uses
(:func:`akgentic.core.excerpt.exception_words`), never pydantic's title, ``[type=…]`` or
link; options a command validates together are named by :func:`invalid_options`. Ctrl-C
becomes ``interrupted`` and exit code 130 (SIGTERM ``interrupted by SIGTERM`` and 143,
SIGHUP 129, a closed output 141, silently: :mod:`akgentic.cli.interrupt`); the body is
where the command begins (:func:`akgentic.cli.interrupt.begin`): a Ctrl-C before it is
the console script's. Tracebacks are never shown otherwise.
Both go through :func:`akgentic.cli.output.printable`: an exception's message may quote
a value from a hostile YAML file or a stored name, and its ESC sequences are shown
escaped (``\\x1b``), in the ``error:`` lines and in the traceback's lines alike.
"""

from __future__ import annotations

import logging
import signal
import sys
import traceback
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import typer
from pydantic import ValidationError

from akgentic.cli import interrupt, logs
from akgentic.cli.interrupt import EXIT_INTERRUPTED
from akgentic.cli.output import SafeText, error_console, printable
from akgentic.core import AddressError
from akgentic.core.excerpt import exception_words, validator_words
from akgentic.storage import StorageError

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "CliError",
    "explain",
    "invalid_options",
    "report",
    "reporting",
    "usage_words",
]

EXIT_ERROR = 1

_EXPECTED: tuple[type[BaseException], ...] = (
    ValueError,  # a TeamCardError too (not imported: it would import the team layer)
    LookupError,
    ImportError,
    StorageError,
    AddressError,
    TimeoutError,
    OSError,
)


class CliError(Exception):
    """A problem the user can fix; the message says what to do. Printed as ``error: ...``."""


def explain(exc: BaseException) -> str:
    """The message for ``exc``: its own words when the user can act on them, else its type
    and words with a pointer to ``--debug``."""
    if isinstance(exc, ValidationError):
        return exception_words(exc)
    if isinstance(exc, (CliError, *_EXPECTED)):
        text = str(exc).strip() or type(exc).__name__
        if isinstance(exc, OSError) and exc.strerror and exc.filename:
            text = f"{exc.filename}: {exc.strerror}"
        return text
    # a driver's message may span lines (psycopg's "connection failed: ...\n\tIs the
    # server running ..."): one line, as every ``error:`` line is
    words = exception_words(exc)
    return f"{type(exc).__name__}: {words} (rerun with --debug to see the traceback)"


def report(exc: BaseException, *, debug: bool = False) -> None:
    """Print ``exc`` on stderr as ``error:`` lines (after its traceback with ``debug``),
    control characters escaped."""
    if debug:  # its lines through printable: the message may quote a hostile value
        sys.stderr.write(printable("".join(traceback.format_exception(exc))))
        sys.stderr.flush()
    console = error_console()
    for line in explain(exc).splitlines():
        console.print(SafeText(f"error: {line}", style="red"))


def invalid_options(exc: ValidationError, options: Mapping[str, str]) -> CliError:
    """The one line of a model built from a command's options that refused them:
    ``invalid --port: …; --token: …``, each field named by its option in ``options`` and
    said in a validator's own words (never a value: one may be a token)."""
    parts = []
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        option = options.get(str(loc[0]), str(loc[0])) if loc else "an option"
        said = validator_words(error["msg"])
        parts.append(f"{option}: {said[:1].lower()}{said[1:]}")
    return CliError("invalid " + "; ".join(parts))


def usage_words(message: str, command_path: str | None) -> str:
    """A command line the parser refused, in one line: its own words (first letter and
    last full stop as an ``error:`` line has them) and, for a usage error, where the
    command's help is (``command_path``) — not click's usage block, its hint line and its
    ``Error:`` line."""
    words = " ".join(message.split())
    if words[:1].isupper() and not words[1:2].isupper():
        words = words[:1].lower() + words[1:]
    words = words.removesuffix(".")
    if command_path:
        words += f" (see: {command_path} --help)"
    return words


@contextmanager
def reporting(debug: bool = False) -> Iterator[None]:
    """Run a command body: errors become ``error:`` lines and ``typer.Exit(1)``; Ctrl-C
    (or SIGTERM, SIGHUP, a closed output) becomes ``typer.Exit(128 + the signal's
    number)``. ``debug`` also turns on DEBUG logging for ``akgentic``,
    for the body only: both are put back after it (a command run in-process, by a test
    or a program, leaves the next one as it found it)."""
    interrupt.begin()  # a Ctrl-C is the command's from here on (before: the console script's)
    shown = logs.show_tracebacks(debug)
    logger = logging.getLogger("akgentic")
    level = logger.level
    if debug:
        logger.setLevel(logging.DEBUG)
    try:
        yield
    except (typer.Exit, typer.Abort, typer.TyperException):
        raise
    except KeyboardInterrupt:
        if interrupt.cause() != signal.SIGPIPE:  # a closed output ends it quietly
            error_console().print(SafeText(interrupt.interrupted_by(), style="yellow"))
        raise typer.Exit(interrupt.exit_code()) from None
    except Exception as exc:
        report(exc, debug=debug)
        raise typer.Exit(EXIT_ERROR) from None
    finally:
        logs.show_tracebacks(shown)
        logger.setLevel(level)

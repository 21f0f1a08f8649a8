"""Where the CLI writes, and the symbols it writes with.

Consoles are made per command so they follow the current ``sys.stdout``/``sys.stderr``
(test runners swap them). They never wrap lines and never interpret markup in what a team
said: callers pass :class:`SafeText`. Colours follow the terminal (and ``NO_COLOR``).

What the CLI prints never carries a control character but newline and tab: a model's
text, a tool's result, an exception's message, a person's line or a stored row holding
``ESC [2J`` or an OSC sequence would clear the screen, retitle the terminal or forge a
line. One function makes text safe, :func:`printable` (its docstring is the contract:
controls escaped, ``\\x1b``; long text clipped where a line is a summary). Everything goes
through it: each :class:`SafeText` (every line the commands print), the consoles (a
``Text`` or string made elsewhere), team and member names (:func:`team_name`,
:func:`member_name`), table cells
(:func:`print_table`), the one-line summaries (:func:`akgentic.cli.describe.one_line`),
the log lines (:mod:`akgentic.cli.logs`) and the ``--debug`` traceback
(:func:`akgentic.cli.errors.report`).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.style import Style
from rich.text import Text

from akgentic.cli import interrupt
from akgentic.core.excerpt import EXCERPT_CHARS
from akgentic.core.surrogates import replace_lone_surrogates

__all__ = [
    "ASCII",
    "KEPT",
    "ONE_LINE",
    "SafeText",
    "Symbols",
    "command_line",
    "error_console",
    "local_time",
    "member_name",
    "out_console",
    "print_table",
    "printable",
    "short_id",
    "symbols_for",
    "team_name",
    "team_title",
    "write_out",
]


KEPT: frozenset[str] = frozenset("\n\t")
"""What :func:`printable` leaves as it is by default: newline and tab (text on several lines)."""
ONE_LINE: frozenset[str] = frozenset()
"""``keep=ONE_LINE``: newline and tab escaped too, for a value that must stay on its line (a
name, a table cell, a one-line summary of raw text)."""
_BIDI = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""The bidirectional marks, embeddings, overrides and isolates: text that reorders how
the rest of a line is shown (a reply could make its words read backwards)."""


def _control(c: str, keep: frozenset[str] = KEPT) -> bool:
    return (c < " " or "\x7f" <= c < "\xa0" or c in _BIDI) and c not in keep


def _escape(c: str) -> str:
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def _pieces(text: str, keep: frozenset[str]) -> Iterator[str]:
    """What each character of ``text`` is written as (see :func:`printable`)."""
    crlf = "\n" in keep
    for at, c in enumerate(text):
        if not _control(c, keep):
            yield c
        elif crlf and c == "\r" and text[at + 1 : at + 2] == "\n":
            yield ""  # a CRLF line ending: its newline is kept
        else:
            yield _escape(c)


def printable(text: str, *, keep: frozenset[str] = KEPT, limit: int | None = None) -> str:
    """``text`` made safe to write to a terminal: the one way the CLI does it.

    - Each control character (Unicode category Cc: C0, DEL and C1) and each bidirectional
      control is written as its escape, ``\\x1b``, ``\\x9b``, ``\\u202e``, so an ESC
      sequence shows as text (``\\x1b[2J``) and does nothing. Newline and tab are kept
      (``keep``; :data:`ONE_LINE` escapes them too); where newline is kept, a CRLF line
      ending is a newline, and a lone carriage return is escaped.
    - With ``limit`` (a one-line summary, an echo), text longer than ``limit`` characters
      once escaped is clipped: as many whole characters as fit in ``limit - 1``, then
      ``… (1,048,576 characters)``, the length of ``text``. An escape is never cut.

    - A lone surrogate, which no terminal encoding can write (a stored row older than
      the text made sound where it enters a team: ``"\\ud800"`` in its JSON), is
      U+FFFD (``akgentic.core.surrogates``) — the line is shown, not a UnicodeEncodeError.

    Everything else, any script, emoji, right-to-left text, is left as it is, and the
    result passes through again unchanged: what this returned may be printed through a
    console that calls it once more."""
    text = replace_lone_surrogates(text)
    if (limit is None or len(text) <= limit) and not any(_control(c, keep) for c in text):
        return text
    pieces: list[str] = []
    used = 0
    for piece in _pieces(text, keep):
        pieces.append(piece)
        used += len(piece)
        if limit is not None and used > limit:
            while pieces and used > limit - 1:
                used -= len(pieces.pop())
            pieces.append(f"… ({len(text):,} characters)")
            break
    return "".join(pieces)


class SafeText(Text):
    """A :class:`rich.text.Text` whose string went through :func:`printable` first. Every
    line the CLI prints is built with it: rich's own ``Text`` drops BEL, backspace, VT, FF
    and carriage return without a trace, so escaping them afterwards is too late."""

    def __init__(self, text: str = "", style: str | Style = "", **kwargs: Any) -> None:
        super().__init__(printable(text), style, **kwargs)


def _printable_text(text: Text) -> Text:
    """``text`` through :func:`printable`, its style and its spans' styles kept (a ``Text``
    made elsewhere than by :class:`SafeText`)."""
    plain = text.plain
    if replace_lone_surrogates(plain) is not plain:  # rare: the spans would not fit
        return Text(printable(plain), style=text.style, end=text.end, no_wrap=text.no_wrap)
    if not any(_control(c) for c in plain):
        return text
    starts = [0]  # where each character of ``plain`` starts in the escaped text
    for piece in _pieces(plain, KEPT):
        starts.append(starts[-1] + len(piece))
    safe = Text(printable(plain), style=text.style, end=text.end, no_wrap=text.no_wrap)
    for span in text.spans:
        safe.stylize(span.style, starts[span.start], starts[span.end])
    return safe


class _SafeConsole(Console):
    """A console that prints strings and :class:`Text` through :func:`printable`, and
    whose output's reader may go: a closed pipe or a hung-up terminal is
    :func:`akgentic.cli.interrupt.output_lost` (the command stops as a signal stops it),
    never rich's ``SystemExit(1)`` nor an ``OSError`` in the middle of a stop."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        safe = [
            _printable_text(o) if isinstance(o, Text) else printable(o) if isinstance(o, str) else o
            for o in objects
        ]
        try:
            super().print(*safe, **kwargs)
        except OSError:  # EIO: the terminal hung up (a broken pipe is on_broken_pipe)
            del self._buffer[:]
            self.on_broken_pipe()

    def on_broken_pipe(self) -> None:
        self.quiet = True  # nothing more to write: rich drops what is printed
        interrupt.output_lost(2 if self.stderr else 1)


def write_out(text: str) -> None:
    """Write ``text`` raw on stdout (a prompt, the newline off it), flushed; a reader that
    is gone is :func:`akgentic.cli.interrupt.output_lost`, as for the consoles."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError:
        interrupt.output_lost(1)


def out_console() -> Console:
    """A console on stdout: the conversation, listings, the ``answer:`` line."""
    return _SafeConsole(highlight=False, soft_wrap=True, emoji=False)


def error_console() -> Console:
    """A console on stderr: errors and warnings about the command itself."""
    return _SafeConsole(stderr=True, highlight=False, soft_wrap=True, emoji=False)


@dataclass(frozen=True)
class Symbols:
    """The marks of the live view; ASCII ones when the output cannot encode Unicode."""

    arrow: str = "→"
    tool: str = "⚙"
    ok: str = "✓"
    failed: str = "✗"
    state: str = "◆"
    warning: str = "!"
    writing: str = "✎"
    joined: str = "+"
    left: str = "-"


ASCII = Symbols(arrow="->", tool="*", ok="ok", failed="x", state="#", writing="...", warning="!")


def symbols_for(console: Console) -> Symbols:
    """Unicode marks when ``console`` writes UTF-8, ASCII ones otherwise."""
    return Symbols() if console.encoding.lower().startswith("utf") else ASCII


def command_line(*words: object) -> str:
    """``akgentic WORDS...``: a command the CLI suggests, each word quoted for a POSIX
    shell where it needs it (:func:`shlex.quote`), so it can be pasted as it is — a
    storage URL's ``?busy_timeout=3`` would otherwise be a glob (zsh: "no matches
    found"). Every suggested command line is built here."""
    return " ".join(["akgentic", *(shlex.quote(str(w)) for w in words)])


def short_id(team_id: object) -> str:
    """The first 8 characters of an id: enough to name a team on the command line."""
    return str(team_id)[:8]


def team_name(name: str) -> str:
    """A team's name as the CLI prints it: through :func:`printable` on one line
    (:data:`ONE_LINE`: ``evil\\x1b]0;...\\x0d\\x0aFAKE``) and clipped at
    :data:`~akgentic.core.excerpt.EXCERPT_CHARS`, so a name never moves the cursor,
    retitles the terminal, forges a row or fills the screen. The store refuses control
    characters in a name now; older records may hold some."""
    return _name(name)


def member_name(name: str) -> str:
    """A member's (or tool actor's) name as the CLI prints it, as :func:`team_name` does
    a team's: ``@Worker``; ``@evil\\x0a@Boss → @Human`` on one line, clipped. A name
    comes from a card or a stored log, which may be hostile: every line that names a
    member (the roster, ``who said what``, ``teams show``) writes it through here."""
    return _name(name)


def _name(name: str) -> str:
    return printable(name, keep=ONE_LINE, limit=EXCERPT_CHARS)


def team_title(name: str, team_id: object) -> str:
    """``team research (104b23b9)``: how a line names a team."""
    return f"team {team_name(name)} ({short_id(team_id)})"


def local_time(moment: datetime | None, *, millis: bool = False) -> str:
    """``moment`` in local time, ``YYYY-MM-DD HH:MM:SS`` (``.mmm`` with ``millis``); ``?``
    for a time the store could not read."""
    if moment is None:
        return "?"
    local = moment.astimezone()
    if millis:
        return local.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    return local.strftime("%Y-%m-%d %H:%M:%S")


def print_table(console: Console, rows: Sequence[Sequence[str]]) -> None:
    """``rows`` as left-aligned columns two spaces apart, the first (the header) in bold;
    each cell through :func:`printable` on one line (a newline in a cell would forge a
    row), before the widths are measured."""
    cells = [[printable(cell, keep=ONE_LINE) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    for n, row in enumerate(cells):
        line = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        console.print(SafeText(line.rstrip(), style="bold" if n == 0 else ""))

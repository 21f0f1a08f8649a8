"""Where the CLI writes, and the symbols it writes with.

Consoles are made per command so they follow the current ``sys.stdout``/``sys.stderr``
(test runners swap them). They never wrap lines and never interpret markup in what a team
said: callers pass :class:`rich.text.Text`. Colours follow the terminal (and ``NO_COLOR``).
What they print never carries a control character but newline and tab: a model's text, a
tool's result or a stored row holding ``ESC [2J`` or an OSC sequence would clear the
screen, retitle the terminal or forge a line; each such character is printed escaped
(``\x1b``), see :func:`printable`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.text import Text

from akgentic.core.excerpt import excerpt

__all__ = [
    "ASCII",
    "Symbols",
    "error_console",
    "local_time",
    "out_console",
    "print_table",
    "printable",
    "short_id",
    "symbols_for",
    "team_name",
    "team_title",
]


_KEPT = frozenset("\n\t")
_BIDI = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""The bidirectional marks, embeddings, overrides and isolates: text that reorders how
the rest of a line is shown (a reply could make its words read backwards)."""


def _control(c: str, keep: frozenset[str] = _KEPT) -> bool:
    return (c < " " or "\x7f" <= c < "\xa0" or c in _BIDI) and c not in keep


def _escape(c: str) -> str:
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def printable(text: str, *, keep: frozenset[str] = _KEPT) -> str:
    """``text`` with each control character (C0, DEL, C1) and bidirectional control not
    in ``keep`` written as its escape, ``\\x1b``, ``\\u202e``: safe to write to a
    terminal."""
    if not any(_control(c, keep) for c in text):
        return text
    return "".join(_escape(c) if _control(c, keep) else c for c in text)


def _printable_text(text: Text) -> Text:
    """``text`` through :func:`printable`, its style and its spans' styles kept."""
    plain = text.plain
    if not any(_control(c) for c in plain):
        return text
    starts = [0]  # where each character of ``plain`` starts in the escaped text
    for c in plain:
        starts.append(starts[-1] + (len(_escape(c)) if _control(c) else 1))
    safe = Text(printable(plain), style=text.style, end=text.end, no_wrap=text.no_wrap)
    for span in text.spans:
        safe.stylize(span.style, starts[span.start], starts[span.end])
    return safe


class _SafeConsole(Console):
    """A console that prints strings and :class:`Text` through :func:`printable`."""

    def print(self, *objects: Any, **kwargs: Any) -> None:
        safe = [
            _printable_text(o) if isinstance(o, Text) else printable(o) if isinstance(o, str) else o
            for o in objects
        ]
        super().print(*safe, **kwargs)


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


def short_id(team_id: object) -> str:
    """The first 8 characters of an id: enough to name a team on the command line."""
    return str(team_id)[:8]


def team_name(name: str) -> str:
    """A team's name as the CLI prints it: as it is when every character is printable, else
    quoted with its control characters escaped (``'evil\\x1b]0;...'``, through
    :func:`~akgentic.core.excerpt.excerpt`) so a name never moves the cursor, retitles the
    terminal or forges a row. The store refuses such names now; older records may hold one."""
    return name if name.isprintable() else excerpt(name)


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
    """``rows`` as left-aligned columns two spaces apart, the first (the header) in bold."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for n, row in enumerate(rows):
        line = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        console.print(Text(line.rstrip(), style="bold" if n == 0 else ""))

"""Where the CLI writes, and the symbols it writes with.

Consoles are made per command so they follow the current ``sys.stdout``/``sys.stderr``
(test runners swap them). They never wrap lines and never interpret markup in what a team
said: callers pass :class:`rich.text.Text`. Colours follow the terminal (and ``NO_COLOR``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

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
    "short_id",
    "symbols_for",
    "team_name",
    "team_title",
]


def out_console() -> Console:
    """A console on stdout: the conversation, listings, the ``answer:`` line."""
    return Console(highlight=False, soft_wrap=True, emoji=False)


def error_console() -> Console:
    """A console on stderr: errors and warnings about the command itself."""
    return Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


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

"""What makes a name or a title one line of a context block: :func:`one_line_problem`.

A task title or an entity name is rendered as one line of every member's context
(``#3 [todo] <title> — @Dev``, ``- <name> (<type>)``). A line break in it would start a
line that reads as another task or another root; a control character (NUL, ESC, ...)
is noise at best; spaces around it make ``'Alice '`` a second entity next to
``'Alice'``. Such a value is refused where it comes in, with what to send instead, and
never stripped silently: what the model sent is what is stored.
"""

from __future__ import annotations

import unicodedata

from akgentic.core.excerpt import excerpt

__all__ = ["LINE_MAX", "TEXT_MAX", "one_line_problem"]

LINE_MAX = 200
"""The longest name, type or title a shared-state card takes: it is one line of every
member's context, each turn."""
TEXT_MAX = 8_000
"""The longest free text (a description, an observation, a task's output) a shared-state
card takes in one field; a longer text belongs in a file (the workspace), the entry saying
where."""

_NOT_ON_ONE_LINE = ("Cc", "Zl", "Zp")
"""Control characters (line feed, NUL, ESC, NEL, ...) and the Unicode line and
paragraph separators."""


def one_line_problem(value: str) -> str | None:
    """Why ``value`` is not one line of ordinary characters, or None when it is."""
    if not value.strip():
        return "is blank: send some text"
    if any(unicodedata.category(char) in _NOT_ON_ONE_LINE for char in value):
        return (
            f"{excerpt(value)} holds a line break or a control character: send one line "
            f"of ordinary characters"
        )
    if value != value.strip():
        return f"{excerpt(value)} has spaces around it: send {excerpt(value.strip())}"
    if len(value) > LINE_MAX:
        return (
            f"{excerpt(value)} is longer than the {LINE_MAX} characters one line of the "
            f"team's context takes: send a short one (details go in a description)"
        )
    return None

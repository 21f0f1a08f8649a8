"""What the CLI's consoles and log lines print: never a control character but newline and
tab (a model's text holding ``ESC [2J`` would clear the screen)."""

from __future__ import annotations

import io
import logging

from rich.text import Text

from akgentic.cli import logs
from akgentic.cli.output import _printable_text, out_console, printable


def test_printable_escapes_c0_del_and_c1_but_newline_and_tab() -> None:
    assert printable("plain ünïcode ☃\n\tok") == "plain ünïcode ☃\n\tok"
    assert printable("a\x1b[2Jb\x00c\x7fd\x9be\r") == "a\\x1b[2Jb\\x00c\\x7fd\\x9be\\x0d"
    assert printable("one\ntwo", keep=frozenset()) == "one\\x0atwo"


def test_printable_escapes_the_marks_that_reorder_a_line() -> None:
    """U+202E would show what follows backwards: 'txt.exe' read as 'exe.txt'."""
    assert printable("file\u202etxt.exe") == "file\\u202etxt.exe"
    assert printable("a\u2066b\u2069c\u200fd") == "a\\u2066b\\u2069c\\u200fd"
    assert printable("عربي and עברית") == "عربي and עברית"  # right-to-left text itself stays
    styled = Text("x\u202ey", style="bold")
    styled.stylize("italic", 2, 3)
    safe = _printable_text(styled)
    assert safe.plain == "x\\u202ey"
    assert [(span.start, span.end, span.style) for span in safe.spans] == [(7, 8, "italic")]


def test_a_console_prints_text_and_strings_escaped_with_their_styles() -> None:
    console = out_console()
    buffer = io.StringIO()
    console.file = buffer
    styled = Text("red\x1b[31m", style="bold")
    styled.stylize("italic", 3, 5)  # a span over the escape and the bracket
    console.print(styled, "and\x1b]0;title")
    assert buffer.getvalue() == "red\\x1b[31m and\\x1b]0;title\n"
    safe = _printable_text(styled)
    assert safe.plain == "red\\x1b[31m" and safe.style == "bold"
    assert [(span.start, span.end, span.style) for span in safe.spans] == [(3, 8, "italic")]


def test_a_log_line_is_printed_escaped() -> None:
    record = logging.LogRecord(
        "akgentic.x", logging.WARNING, __file__, 1, "said %s", ("\x1b[2J",), None
    )
    assert logs._FORMATTER.format(record) == "WARNING akgentic.x: said \\x1b[2J"

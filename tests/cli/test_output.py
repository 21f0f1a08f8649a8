"""What the CLI's consoles and log lines print: never a control character but newline and
tab (a model's text holding ``ESC [2J`` would clear the screen), through one helper,
:func:`printable`, whose contract is tested here."""

from __future__ import annotations

import io
import logging
import sys

from rich.text import Text

from akgentic.cli import logs
from akgentic.cli.describe import one_line
from akgentic.cli.output import (
    ONE_LINE,
    SafeText,
    _printable_text,
    member_name,
    out_console,
    print_table,
    printable,
    team_name,
)


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
    assert logs._FORMATTER.format(record) == "warning: said \\x1b[2J"


def test_a_log_record_is_one_line_whatever_its_message_holds() -> None:
    """A newline or carriage return in a message would print one record as several lines
    (or forge one): escaped, the record stays on its line; with ``--debug`` only the
    traceback after it spans lines."""
    forged = "first\nWARNING akgentic.fake: forged\r\nthird\rover"
    record = logging.LogRecord("akgentic.x", logging.WARNING, __file__, 1, "%s", (forged,), None)
    line = "warning: first\\x0aWARNING akgentic.fake: forged\\x0d\\x0athird\\x0dover"
    assert logs._FORMATTER.format(record) == line
    try:
        raise RuntimeError("boom\x1b[2J")
    except RuntimeError:
        failed = logging.LogRecord(
            "akgentic.x", logging.ERROR, __file__, 1, "said\n%s", ("two",), sys.exc_info()
        )
    assert logs._FORMATTER.format(failed) == "error: said\\x0atwo: RuntimeError: boom\\x1b[2J"
    logs.show_tracebacks(True)
    try:
        shown = logs._FORMATTER.format(failed).splitlines()
    finally:
        logs.show_tracebacks(False)
    assert shown[0] == "ERROR akgentic.x: said\\x0atwo"
    assert shown[1] == "Traceback (most recent call last):"
    assert shown[-1] == "RuntimeError: boom\\x1b[2J"


def test_printable_clips_at_its_limit_saying_how_long_the_text_was() -> None:
    """A one-line summary or an echo is clipped: at most ``limit - 1`` characters once
    escaped, ``…`` and the full length; an escape is never cut in two."""
    line = "x" * 1_048_576
    assert printable(line, limit=10) == "xxxxxxxxx… (1,048,576 characters)"
    assert printable("x" * 10, limit=10) == "x" * 10  # what fits is whole
    assert printable("abcdefgh\x1b[2J", limit=10) == "abcdefgh… (12 characters)"
    assert printable("ab\x1bcdefghijk", limit=8) == "ab\\x1bc… (12 characters)"
    assert printable("a\nb" * 5, keep=ONE_LINE, limit=12) == "a\\x0aba\\x0a… (15 characters)"


def test_printable_keeps_a_crlf_line_ending_and_escapes_a_lone_carriage_return() -> None:
    assert printable("one\r\ntwo\rthree") == "one\ntwo\\x0dthree"
    assert printable("one\r\ntwo", keep=ONE_LINE) == "one\\x0d\\x0atwo"


def test_what_printable_returned_passes_through_it_again_unchanged() -> None:
    for text in ("a\x1b[2J\x07\u202e\r\n\tz", "é" * 300, "\x9b" * 100):
        for keep, limit in ((ONE_LINE, None), (ONE_LINE, 50), (frozenset("\n\t"), 50)):
            once = printable(text, keep=keep, limit=limit)
            assert printable(once, keep=keep) == once
            assert not any(c in once for c in "\x1b\x07\x9b\u202e\r")


def test_a_line_built_by_the_cli_shows_bel_and_carriage_return_escaped() -> None:
    """rich's ``Text`` drops BEL, BS, VT, FF and CR without a trace: :class:`SafeText`
    escapes them first, so they are shown (``\\x07``) as every other control is."""
    console = out_console()
    buffer = io.StringIO()
    console.file = buffer
    console.print(SafeText("ding\x07 back\x08 over\rwrite", style="red"))
    assert buffer.getvalue() == "ding\\x07 back\\x08 over\\x0dwrite\n"


def test_names_cells_and_summaries_go_through_the_same_helper() -> None:
    """A team name, a table cell and a one-line summary: escaped as :func:`printable`
    does, on one line; a name and a summary clipped saying how long they were."""
    forged = "evil\x1b]0;pwned\x07\r\nFAKE-TEAM  RUNNING"
    assert team_name(forged) == printable(forged, keep=ONE_LINE)
    assert team_name(forged) == "evil\\x1b]0;pwned\\x07\\x0d\\x0aFAKE-TEAM  RUNNING"
    assert team_name("n" * 1000) == "n" * 79 + "… (1,000 characters)"
    assert team_name("research") == "research"
    assert member_name(forged) == team_name(forged)  # a member's name: the same treatment
    assert member_name("@Worker") == "@Worker"
    assert one_line("say\n  \x1b[2J" + "w" * 500, 20) == "say \\x1b[2Jwwwwwwww… (508 characters)"
    console = out_console()
    buffer = io.StringIO()
    console.file = buffer
    print_table(console, [("NAME", "X"), ("a\nb\x1b", "1"), ("c", "2")])
    assert buffer.getvalue().splitlines() == ["NAME        X", "a\\x0ab\\x1b  1", "c           2"]

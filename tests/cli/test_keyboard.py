"""What :meth:`Keyboard.left` gives as a session ends: the lines typed that no read took,
whether the reading thread holds them already or they are still in the input — and
nothing while a read waits for a line not typed yet."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

from akgentic.cli.keyboard import ENDED, Keyboard


@pytest.fixture
def typed(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """Standard input is a pipe; the end to write what the person types."""
    read_end, write_end = os.pipe()
    monkeypatch.setattr(sys, "stdin", os.fdopen(read_end, "r"))
    yield write_end
    os.close(write_end)
    sys.stdin.close()


def test_left_gives_the_lines_no_read_took_held_or_still_in_the_input(typed: int) -> None:
    keyboard = Keyboard()
    os.write(typed, b"first\nsecond\n")  # read in one go: the thread holds "second"
    assert keyboard.line() == "first"
    os.write(typed, b"third\nno newline yet")  # still in the pipe
    keyboard.end()  # the team stopped: the session takes no line any more

    assert keyboard.line() is ENDED
    assert keyboard.left() == ["second", "third", "no newline yet"]
    assert keyboard.left() == []  # given once


def test_left_gives_nothing_while_a_read_waits_for_a_line_not_typed(typed: int) -> None:
    keyboard = Keyboard()
    stopped_at_the_prompt = keyboard.line("you> ", lambda _: keyboard.end())

    assert stopped_at_the_prompt is ENDED
    assert keyboard.left() == []  # the thread waits in its read: no line was typed

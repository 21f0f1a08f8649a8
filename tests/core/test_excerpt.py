"""An exception as words on one line: the one way a message quotes another error."""

from __future__ import annotations

from akgentic.core.excerpt import exception_line, exception_words


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no words")


def test_an_exception_s_words_are_one_line_and_its_line_names_its_class() -> None:
    exc = ValueError("file is not\n  a database\t(code 26)")
    assert exception_words(exc) == "file is not a database (code 26)"
    assert exception_line(exc) == "ValueError: file is not a database (code 26)"


def test_an_exception_whose_str_raises_has_no_words_and_is_named_by_its_class() -> None:
    assert exception_words(UnprintableError()) == ""
    assert exception_line(UnprintableError()) == "UnprintableError"

"""offer_while: the mark a card puts on a tool offered only while something holds, kept
through the factory's wrapper, and read safely (a failing check offers the tool)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from akgentic.tool.core import (
    RetriableError,
    ToolCard,
    ToolFactory,
    offer_predicate,
    offer_while,
    offered_now,
)


class Shelf(ToolCard):
    """A card whose one tool is offered only while the shelf holds books."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def find_book(title: str) -> str:
            """Find a book on the shelf."""
            raise RetriableError("no such book")

        return [offer_while(find_book, lambda: bool(BOOKS))]


BOOKS: list[str] = []


def test_the_mark_survives_the_factory_s_wrapper_and_follows_the_predicate() -> None:
    [tool] = ToolFactory([Shelf()], retry_exception=ValueError).get_tools()
    assert tool.__name__ == "find_book" and offer_predicate(tool) is not None
    with pytest.raises(ValueError, match="no such book"):  # still the wrapper
        tool("Dune")
    BOOKS.clear()
    assert not offered_now(tool)
    BOOKS.append("Dune")
    assert offered_now(tool)
    BOOKS.clear()


def test_an_unmarked_tool_is_always_offered_and_a_failing_check_offers_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def plain() -> str:
        return "x"

    def broken() -> bool:
        raise RuntimeError("the shelf actor is gone")

    assert offer_predicate(plain) is None and offered_now(plain)
    marked = offer_while(lambda: "y", broken)
    with caplog.at_level(logging.WARNING, logger="akgentic.tool"):
        assert offered_now(marked)
    assert "availability check failed" in caplog.text and "the shelf actor is gone" in caplog.text

"""The interrupted-turns line a session ends with counts in words a person reads:
``1 interrupted turn:``, ``2 interrupted turns:`` — never ``turn(s)``."""

from __future__ import annotations

import io
from uuid import uuid4

import pytest
from rich.console import Console

from akgentic.cli import chat
from akgentic.core import ActorAddressProxy, Message, UserMessage

HUMAN = ActorAddressProxy(agent_id=uuid4(), name="@Human")
BOSS = ActorAddressProxy(agent_id=uuid4(), name="@Boss")


def cut_turn(content: str) -> Message:
    return UserMessage(content=content, sender=HUMAN, recipient=BOSS)


@pytest.mark.parametrize(
    ("contents", "title_line"),
    [
        (["please hang"], "team t (1a2b) stopped; 1 interrupted turn:"),
        (["please hang", "and wait"], "team t (1a2b) stopped; 2 interrupted turns:"),
    ],
)
def test_the_interrupted_turns_line_says_turn_for_one_and_turns_for_more(
    contents: list[str], title_line: str
) -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, soft_wrap=True, highlight=False)
    chat._stopped(console, "team t (1a2b)", [cut_turn(c) for c in contents], "akgentic resume")
    lines = buffer.getvalue().splitlines()
    assert lines[: 1 + len(contents)] == [
        title_line,
        *(f"  @Human → @Boss: {c}" for c in contents),
    ]

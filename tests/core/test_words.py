"""``counted``: a count and its noun, in the singular for one."""

from __future__ import annotations

from akgentic.core import counted


def test_one_is_singular_and_any_other_count_plural() -> None:
    assert counted(1, "model request") == "1 model request"
    assert counted(0, "team") == "0 teams"
    assert counted(2, "team") == "2 teams"
    assert counted(1234, "token") == "1,234 tokens"
    assert counted(3, "reply", "replies") == "3 replies"
    assert counted(1, "reply", "replies") == "1 reply"

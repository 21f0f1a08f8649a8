"""team_activity: who is working right now, and on what — derived, never tracked.

The report is built from what the orchestrator already keeps: the running members
(``get_team()``) and its bounded window of recent messages (``get_messages(window)``, oldest
first, each stamped with its sender and recipient). It costs no actor and no model call.

How "busy" is derived: a member is *busy* when the latest message it received in the window
came after the latest message it sent — it has something it has not answered yet. It is
*idle* otherwise (including when the window holds nothing for it). This is an approximation
bounded by the window: a member whose traffic scrolled out of it reads idle.

Texts are truncated to ``max_chars``: a message's ``content`` when it is text, else its class
name. ``ActivitySummarizer`` is configuration for summaries made by a ``#TeamActivity`` cache
actor — that actor is a follow-up, not in this release: configuring one logs a warning at
wiring and the report stays truncation-only, with ``summarize_over`` absent from the tool's
signature (nothing could produce a summary).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from pydantic import ConfigDict, Field

from akgentic.core.address import ActorAddress
from akgentic.core.messages import Message
from akgentic.core.serialization import SerializableModel
from akgentic.tool.core.channels import COMMAND, TOOL_CALL, Channels
from akgentic.tool.core.params import BaseToolParam

__all__ = [
    "ActivitySummarizer",
    "GetTeamActivity",
    "MemberActivity",
    "derive_activity",
    "render_activity",
    "truncate",
]

ELLIPSIS = "…"


class ActivitySummarizer(SerializableModel):
    """How a ``#TeamActivity`` actor would summarise long messages (follow-up: not served yet).

    - ``model`` — the roster-style key of the model making summaries (``"openai:gpt-5.2-mini"``).
    - ``max_chars`` — the length a summary aims for.
    - ``timeout_seconds`` — the worker's bound on one model call, below the team's stop grace.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    model: str = Field(min_length=1)
    max_chars: int = Field(default=300, ge=20)
    timeout_seconds: float = Field(default=20.0, gt=0)


class GetTeamActivity(BaseToolParam):
    """The ``team_activity()`` capability, on TOOL_CALL and COMMAND.

    - ``max_chars`` — each quoted message is cut to this many characters (plus ``…``).
    - ``window`` — how many of the orchestrator's most recent messages are read.
    - ``summarizer`` — see :class:`ActivitySummarizer` (not served yet).
    """

    expose: set[Channels] = {TOOL_CALL, COMMAND}
    max_chars: int = Field(default=200, ge=20)
    window: int = Field(default=200, ge=1)
    summarizer: ActivitySummarizer | None = None


class MemberActivity(SerializableModel):
    """One member's activity: busy or idle, the last message in and out (truncated)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    name: str
    role: str = ""
    busy: bool = False
    working_on: str | None = None
    last_said: str | None = None


def truncate(text: str, max_chars: int) -> str:
    """``text`` on one line, cut to ``max_chars`` characters plus ``…`` when longer."""
    flat = " ".join(text.split())
    return flat if len(flat) <= max_chars else flat[:max_chars].rstrip() + ELLIPSIS


def message_text(message: Message) -> str:
    """What a message says: its ``content`` when it is text, else its class name."""
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else f"({type(message).__name__})"


def derive_activity(
    members: Sequence[ActorAddress], messages: Sequence[Message], max_chars: int
) -> list[MemberActivity]:
    """Each member's activity from the message window (oldest first); see the module doc."""
    rows: list[MemberActivity] = []
    for member in members:
        last_in: tuple[int, Message] | None = None
        last_out: tuple[int, Message] | None = None
        for index, message in enumerate(messages):
            if message.sender == member:
                last_out = (index, message)
            elif message.recipient == member:
                last_in = (index, message)
        busy = last_in is not None and (last_out is None or last_out[0] < last_in[0])
        rows.append(
            MemberActivity(
                name=member.name,
                role=member.role,
                busy=busy,
                working_on=truncate(message_text(last_in[1]), max_chars)
                if busy and last_in is not None
                else None,
                last_said=truncate(message_text(last_out[1]), max_chars)
                if last_out is not None
                else None,
            )
        )
    return rows


def render_activity(rows: Sequence[MemberActivity]) -> str:
    """``<name> (<role>): busy|idle``, then ``  working on: …`` / ``  last said: …`` lines."""
    if not rows:
        return "Nobody else is on the team."
    lines = ["Team activity (busy = has a message it has not answered yet):"]
    for row in rows:
        lines.append(f"- {row.name} ({row.role or 'no role'}): {'busy' if row.busy else 'idle'}")
        if row.working_on is not None:
            lines.append(f"  working on: {row.working_on}")
        if row.last_said is not None:
            lines.append(f"  last said: {row.last_said}")
    return "\n".join(lines)

"""What a cut turn leaves in the agent's history (and on the log a resume rebuilds it from).

A turn cut before the model completed a step leaves nothing: the person's prompt is not
kept, so the next run does not carry it (pydantic-ai would merge it into the next
request), a retry delivers it once, and a dismissed turn leaves no trace the model is sent.

A turn cut after completed steps keeps them — a tool call's side effects happened, and the
model must not be told otherwise — minus a response the cut left half-streamed (nothing
came of it). The kept turn is closed out: the tool calls it never ran get pydantic-ai's
synthesized "interrupted" returns, and the model's last word is :data:`CUT_NOTE` (the
team stopped) or :data:`CANCEL_NOTE` (a cancel, the team goes on). So the
next prompt (the same question retried, or another) arrives as a new user message after
a finished exchange, never merged into the cut turn's tool returns or its prompt.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, repair_messages

__all__ = ["CANCEL_NOTE", "CUT_NOTE", "kept_of_cut"]

CUT_NOTE = (
    "(This turn was cut short before I finished it: the team stopped. The steps above "
    "happened; nothing after them was done.)"
)
"""The closing word of a turn the team's stop cut that kept completed steps."""

CANCEL_NOTE = (
    "(This turn was cancelled before I finished it. The steps above happened; nothing "
    "after them was done.)"
)
"""The closing word of a turn a cancel cut (the team goes on) that kept completed steps."""


def kept_of_cut(new: Sequence[ModelMessage], *, stopping: bool) -> list[ModelMessage]:
    """What the agent keeps of a cut turn whose run produced ``new`` (the messages after
    the history it started from): nothing when the model completed no step; else the
    completed steps, closed out (``stopping``: the team's stop cut it, not a cancel)."""
    if not any(_complete_response(m) for m in new):
        return []
    kept = list(new)
    while not _complete_response(kept[-1]) and isinstance(kept[-1], ModelResponse):
        kept.pop()  # half-streamed: never acted on
    note = CUT_NOTE if stopping else CANCEL_NOTE
    return [*repair_messages(kept), ModelResponse(parts=[TextPart(note)])]


def _complete_response(message: ModelMessage) -> bool:
    return isinstance(message, ModelResponse) and message.state == "complete"

"""The tool layer's errors.

``RetriableError`` is the single signal for a recoverable failure: a tool raises it
with a clear, actionable message, and ``ToolFactory`` translates it to the framework's
retry exception, so tool logic never imports the LLM framework.
"""

from __future__ import annotations

from akgentic.core import ActorStartError
from akgentic.core.error_pickle import reduce_by_fields

__all__ = [
    "CardHookError",
    "CommandArgumentError",
    "CommandNotRecognized",
    "RetriableError",
    "ToolActorStartError",
    "ToolNotWiredError",
    "ToolObserverGone",
]


class RetriableError(Exception):
    """A recoverable failure; the message is what the model reads on its next turn.

    Write it as an instruction: what went wrong and what to do instead. A raw
    exception escaping a tool produces no tool response and stalls the ReAct loop.
    """


class CommandArgumentError(RetriableError):
    """A recognised command was given arguments it cannot bind.

    Missing or extra arguments, a value that does not convert to the parameter's
    type, an unbalanced quote. The message names the command, the problem and the
    usage line, so it can be shown to whoever typed it as is.
    """


class CommandNotRecognized(LookupError):  # noqa: N818 — the spec's name
    """The first token of a dispatched text names no registered command.

    Raised only for an unknown command name, never for bad arguments to a known one
    (that is :class:`CommandArgumentError`), so a caller can fall back to treating the
    text as an ordinary message.
    """

    __reduce__ = reduce_by_fields  # its __init__ builds args from fields

    def __init__(self, command: str, known: list[str]) -> None:
        self.command = command
        self.known = known
        listing = ", ".join(f"/{name}" for name in known) or "none"
        super().__init__(f"unknown command /{command}; known commands: {listing}")


class ToolObserverGone(RuntimeError):  # noqa: N818 — the spec's name
    """The agent that owned this tool has been collected.

    A defined outcome, not a crash: a card holds its observer weakly, so a tool used
    after its owner stopped finds nobody to act through.
    """


class ToolNotWiredError(RuntimeError):
    """A card's tool was used before the card was wired (no observer, no tool actor).

    Uninitialised state is a programming error, not an LLM error: the factory's guard
    lets it propagate rather than turning it into a retry the model could do nothing
    about. Wire the card through ``ToolFactory(..., observer=agent)``.
    """


class CardHookError(RuntimeError):
    """A card's hook (``get_tools``, ``get_commands``, ...) raised, or handed back what is
    not a collection: a card author's bug, named with the card and the hook by
    ``ToolFactory``, so the agent's start fails with a line that says which card to fix.
    The hook's own exception is the ``__cause__``."""


class ToolActorStartError(ActorStartError):
    """A card's ``#`` tool actor could not start when an agent wired the card.

    Raised by ``ToolFactory`` at wiring, so the agent's start fails, and with it the
    team's creation or resume — never a tool call later. ``card`` names the card (as the
    factory labels it), ``actor`` the tool actor, ``reason`` the cause, all on one line.
    """

    def __init__(self, card: str, error: ActorStartError) -> None:
        super().__init__(error.actor, error.reason)
        self.card = card
        self.args = (f"{card}: its tool actor {error.actor} could not start: {error.reason}",)

"""NotificationTool: an agent schedules a message to itself, delivered after a delay.

Three capabilities, one param each, each served on the channels in its ``expose``:

- ``register_notification`` (:class:`RegisterNotification`, TOOL_CALL) builds
  ``notify_me_in(delay_seconds, content)``.
- ``pending_notification`` (:class:`PendingNotifications`, TOOL_CALL + COMMAND) builds
  ``pending_notification(all=False)`` — the caller's own entries, or the whole team's.
- ``cancel_notification`` (:class:`CancelNotification`, TOOL_CALL + COMMAND) builds
  ``cancel_notification(id)`` — the caller's own entries only, whatever the listing
  showed: listing widens, cancel authority never does.

As commands, a person types ``/pending_notification [all=true]`` and
``/cancel_notification <id>`` on an agent's command surface, and acts *as that agent*.

A ``message_class`` that breaks the contract is refused when the card is built (a YAML
card: when it is read, naming its line), never first when the team starts. The card binds
the team's ``#NotificationTool`` singleton at wiring time (``getChildrenOrCreate``).
Every failure a tool call can meet reaches the model as a ``RetriableError``; a card used
after its agent stopped raises ``ToolObserverGone``, the framework's defined outcome.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any, ClassVar, Self, cast

from pydantic import ConfigDict, Field, PrivateAttr, field_validator

from akgentic.core import ActorAddress, AddressError, AskTimeoutError
from akgentic.core.excerpt import clip, excerpt
from akgentic.core.serialization import model_path
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.channels import COMMAND, TOOL_CALL, Channels
from akgentic.tool.core.commands import RestOfLine
from akgentic.tool.core.observer import ActorToolObserver, ToolObserver
from akgentic.tool.core.params import BaseToolParam, attach_param, serve
from akgentic.tool.core.team_actor import bind_team_actor, require_team_observer
from akgentic.tool.errors import RetriableError, ToolNotWiredError
from akgentic.tool.notification.actor import NotificationActor
from akgentic.tool.notification.models import (
    NotificationConfig,
    PendingNotification,
    default_message_class,
    resolve_message_class,
)

__all__ = [
    "CancelNotification",
    "NotificationTool",
    "PendingNotifications",
    "RegisterNotification",
]

ASK_TIMEOUT_SECONDS = 10.0
"""Bound on every ask the card makes (wiring and tool calls): none waits for ever."""
MAX_CONTENT_CHARS = 4_000
"""The longest note ``notify_me_in`` accepts: a reminder, not a store."""
MAX_DELAY_SECONDS = 366 * 24 * 3600.0
"""The largest ``max_delay_seconds`` a card may set (a year): a note is a reminder, and a
due time past ``datetime``'s range would fail in the tool call, not when the card is read."""
PREVIEW_CHARS = 200
"""How much of each note ``pending_notification`` shows (the whole note arrives when due)."""


class RegisterNotification(BaseToolParam):
    """``notify_me_in(delay_seconds, content)``: schedule a note to yourself."""

    expose: set[Channels] = {TOOL_CALL}


class PendingNotifications(BaseToolParam):
    """``pending_notification(all=False)``: list your pending notes, or the team's."""

    expose: set[Channels] = {TOOL_CALL, COMMAND}


class CancelNotification(BaseToolParam):
    """``cancel_notification(id)``: cancel one of your own pending notes."""

    expose: set[Channels] = {TOOL_CALL, COMMAND}


def _when(entry: PendingNotification) -> str:
    return entry.due_at.strftime("%Y-%m-%dT%H:%M:%SZ")


class NotificationTool(ToolCard):
    """Delayed messages an agent schedules to itself, held by the ``#NotificationTool`` actor.

    - ``max_delay_seconds`` — the longest delay ``notify_me_in`` accepts (default 300, at
      most a year); a longer one is refused with a RetriableError naming the cap.
    - ``max_pending`` — the most pending notes one agent may hold at once (default 20).
    - ``message_class`` — the registered path of the class notes are delivered as,
      built as ``message_class(content=...)``; see :func:`resolve_message_class`. Its
      module is imported first (a YAML card lists it under ``imports``): a path that
      breaks the contract is refused when the card is built.
      None (the default) means ``akgentic.agent.messages.AgentMessage`` when the agent
      layer has registered it, else ``akgentic.core.messages.UserMessage``.
    - the three capabilities, each ``Param | bool`` (False removes it).

    Wiring needs an ``ActorToolObserver`` in a team (the singleton is the team's).
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    max_delay_seconds: float = Field(default=300.0, gt=0, le=MAX_DELAY_SECONDS)
    max_pending: int = Field(default=20, ge=1)
    message_class: str | None = None
    register_notification: RegisterNotification | bool = True
    pending_notification: PendingNotifications | bool = True
    cancel_notification: CancelNotification | bool = True

    _actor_address: ActorAddress | None = PrivateAttr(default=None)
    _message_class_path: str | None = PrivateAttr(default=None)

    @field_validator("message_class")
    @classmethod
    def _message_class_meets_the_contract(cls, value: str | None) -> str | None:
        if value is not None:
            resolve_message_class(value)  # ValueError saying what to do
        return value

    # -- wiring -----------------------------------------------------------------------
    def observer(self, observer: ToolObserver) -> Self:
        """Resolve the message class (checked when the card was built) and bind the
        team's ``#NotificationTool``.

        Raises ValueError when the default class breaks the contract, and TypeError /
        ValueError for an observer that is not an actor in a team.
        """
        super().observer(observer)
        team = require_team_observer(observer, "NotificationTool", "#NotificationTool")
        if self.message_class is None:
            resolved = default_message_class()
        else:
            resolved = resolve_message_class(self.message_class)
        self._message_class_path = model_path(resolved)
        self._actor_address = bind_team_actor(
            team, NotificationActor, NotificationConfig(), ASK_TIMEOUT_SECONDS
        )
        return self

    def _actor_observer(self) -> ActorToolObserver:
        observer = self.get_observer()
        if not isinstance(observer, ActorToolObserver):
            raise TypeError(
                f"NotificationTool needs an ActorToolObserver (an agent: myAddress, "
                f"orchestrator, proxy_ask, ...); {type(observer).__name__} is not one"
            )
        return observer

    def _wiring(self) -> tuple[ActorAddress, str]:
        """The singleton's address and the delivery class path; ToolNotWiredError if unwired."""
        address, path = self._actor_address, self._message_class_path
        if address is None or path is None:
            raise ToolNotWiredError(
                "NotificationTool is not wired: build it through ToolFactory (or call "
                "card.observer(agent)) before using its tools"
            )
        return address, path

    def _service(self) -> tuple[NotificationActor, ActorAddress]:
        """An ask proxy to the singleton, and the calling agent's address."""
        obs = self._actor_observer()
        address, _ = self._wiring()
        proxy = obs.proxy_ask(address, NotificationActor, ASK_TIMEOUT_SECONDS)
        return cast(NotificationActor, proxy), obs.myAddress

    def _call(self, action: Callable[[NotificationActor, ActorAddress], Any]) -> Any:
        """Run ``action`` against the singleton; its unavailability is a RetriableError."""
        try:
            proxy, me = self._service()
            return action(proxy, me)
        except AddressError as exc:
            raise RetriableError(
                f"the notification service is not running ({clip(str(exc))}); nothing was changed"
            ) from None
        except AskTimeoutError:
            raise RetriableError(
                f"the notification service did not answer within {ASK_TIMEOUT_SECONDS:g}s; "
                f"try again"
            ) from None

    # -- capabilities -------------------------------------------------------------------
    # Each builder takes the channel it builds for: a reply or an error names the next
    # call as its reader makes it (``/cancel_notification ID`` to a person).
    def _build_register(self, channel: Channels) -> Callable[..., str]:
        card = self

        def notify_me_in(delay_seconds: float, content: RestOfLine) -> str:
            """Schedule a message to yourself, delivered after ``delay_seconds`` seconds.

            Use it to come back to something later: check a long-running result, or
            nudge yourself if nothing has happened by then. When it falls due, ``content``
            arrives as a new message to you, so write it as the note you want to read
            then. Returns the notification's id.
            """
            cap = card.max_delay_seconds
            if not (math.isfinite(delay_seconds) and delay_seconds >= 0):
                raise RetriableError(
                    f"delay_seconds must be a number of seconds, zero or more; got "
                    f"{excerpt(delay_seconds)}"
                )
            if delay_seconds > cap:
                raise RetriableError(
                    f"delay_seconds={delay_seconds:g} exceeds this tool's cap of "
                    f"max_delay_seconds={cap:g}: schedule at most {cap:g} seconds ahead "
                    f"(schedule a follow-up when this one arrives if you need longer)"
                )
            if not content.strip():
                raise RetriableError("content must not be empty: write the note you want to read")
            if len(content) > MAX_CONTENT_CHARS:
                raise RetriableError(
                    f"content is {len(content)} characters; a note holds at most "
                    f"{MAX_CONTENT_CHARS}: write a short reminder and keep the details "
                    f"where the team keeps its work"
                )
            _, path = card._wiring()
            entry: PendingNotification = card._call(
                lambda actor, me: actor.register(
                    me,
                    delay_seconds,
                    content,
                    path,
                    card.max_pending,
                    card.invocation("cancel_notification", channel),
                )
            )
            arg = entry.id if channel == COMMAND else repr(entry.id)
            return (
                f"Scheduled notification {entry.id}: due at {_when(entry)} "
                f"(in {delay_seconds:g} s). Cancel it with "
                f"{card.invocation('cancel_notification', channel, arg)}."
            )

        # The model only knows the cap the docstring teaches it, and the canceller's name.
        notify_me_in.__doc__ = (
            f"{inspect.cleandoc(notify_me_in.__doc__ or '')} Cancel it with "
            f"{card.invocation('cancel_notification', channel)}.\n\n"
            f"The longest delay accepted is {card.max_delay_seconds:g} seconds."
        )
        return notify_me_in

    def _build_pending(self, channel: Channels) -> Callable[..., str]:
        card = self

        def pending_notification(all: bool = False) -> str:
            """List pending notifications: yours, or with ``all=True`` the whole team's.

            The team-wide listing is for awareness only: you can cancel your own
            notifications, never another agent's.
            """
            entries: list[PendingNotification] = card._call(
                lambda actor, me: actor.pending(None if all else me)
            )
            if not entries:
                return (
                    "No pending notifications."
                    if not all
                    else "The team has no pending notifications."
                )
            if all:
                lines = [
                    f"- {e.id} due {_when(e)} for {e.owner_name}: {clip(e.content, PREVIEW_CHARS)}"
                    for e in entries
                ]
                return "Pending notifications (whole team):\n" + "\n".join(lines)
            lines = [f"- {e.id} due {_when(e)}: {clip(e.content, PREVIEW_CHARS)}" for e in entries]
            return "Your pending notifications:\n" + "\n".join(lines)

        return pending_notification

    def _build_cancel(self, channel: Channels) -> Callable[..., str]:
        card = self

        def cancel_notification(id: str) -> str:
            """Cancel one of your pending notifications by its id; it will not be delivered.

            Only the agent that scheduled a notification may cancel it.
            """
            listing = card.invocation("pending_notification", channel)
            entry: PendingNotification = card._call(
                lambda actor, me: actor.cancel(me, id.strip(), listing)
            )
            return f"Cancelled notification {entry.id} (was due {_when(entry)})."

        return cancel_notification

    def _capabilities(
        self,
    ) -> list[
        tuple[BaseToolParam | bool, type[BaseToolParam], Callable[[Channels], Callable[..., str]]]
    ]:
        return [
            (self.register_notification, RegisterNotification, self._build_register),
            (self.pending_notification, PendingNotifications, self._build_pending),
            (self.cancel_notification, CancelNotification, self._build_cancel),
        ]

    def get_tools(self) -> list[Callable[..., Any]]:
        """TOOL_CALL: every capability whose param resolves and exposes TOOL_CALL."""
        tools: list[Callable[..., Any]] = []
        for value, param_cls, build in self._capabilities():
            param = serve(value, param_cls, TOOL_CALL)
            if param is not None:
                tools.append(attach_param(build(TOOL_CALL), param))
        return tools

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        """COMMAND: every capability whose param resolves and exposes COMMAND."""
        commands: dict[type[BaseToolParam], Callable[..., Any]] = {}
        for value, param_cls, build in self._capabilities():
            param = serve(value, param_cls, COMMAND)
            if param is not None:
                commands[param_cls] = attach_param(build(COMMAND), param)
        return commands

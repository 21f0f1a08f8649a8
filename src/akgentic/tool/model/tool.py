"""ModelTool: the model roster listed, the switch between its entries, the selection published.

Three capabilities, one param each:

- ``list_models`` — TOOL_CALL and COMMAND: the roster, one line per entry.
- ``switch_model`` — TOOL_CALL and COMMAND: put a roster entry in force, and record its key
  in ``ToolState.active_model`` (the only writer of that record).
- ``active_model`` — LLM_CONTEXT: the model in force, as :class:`ActiveModelState` deltas.

The two shared capabilities are built by one factory method each, called by both serving
hooks, so the tool and the command cannot drift apart: they do the same thing. The one
argument the builder takes is the channel's reader, for the words that name a next call
(``list_models`` to the model, ``/list_models`` to a person: ``core/README.md``,
"Shared capabilities: one behaviour, the reader's words"). The card
creates no actor and performs no proxy round trip: everything goes through the
:class:`ModelSwitchToolObserver` the agent implements.

The card is opt-in: nothing adds it to an agent by default (a consumer contract honoured by
akgentic-agent, not enforceable here).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, ClassVar, Self, cast

from akgentic.core.excerpt import clip, excerpt
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.channels import COMMAND, LLM_CONTEXT, TOOL_CALL, Channels
from akgentic.tool.core.context_state import ContextState
from akgentic.tool.core.observer import ToolObserver
from akgentic.tool.core.params import BaseToolParam, resolve_param, serve
from akgentic.tool.core.state import read_tool_state
from akgentic.tool.errors import RetriableError
from akgentic.tool.model.observer import ModelSwitchToolObserver
from akgentic.tool.model.state import ActiveModelState, ModelRow

__all__ = [
    "LISTING_HEADER",
    "NO_MODELS",
    "ActiveModel",
    "ListModels",
    "ModelTool",
    "SwitchModel",
    "render_listing",
]

logger = logging.getLogger(__name__)

NO_MODELS = "No models are configured for this agent: there is nothing to list or switch to."
"""What the listing returns for an empty roster — a fixed sentinel, never an empty string."""

LISTING_HEADER = "Models (* marks the one in force):"
"""The first line of a non-empty listing."""


class ListModels(BaseToolParam):
    """The roster listing: ``list_models()`` on TOOL_CALL and ``/list_models`` on COMMAND."""

    expose: set[Channels] = {TOOL_CALL, COMMAND}


class SwitchModel(BaseToolParam):
    """The switch: ``switch_model(model)`` on TOOL_CALL and ``/switch_model`` on COMMAND."""

    expose: set[Channels] = {TOOL_CALL, COMMAND}


class ActiveModel(BaseToolParam):
    """The model in force, published as ``ActiveModelState`` on LLM_CONTEXT."""

    expose: set[Channels] = {LLM_CONTEXT}


def render_listing(rows: list[ModelRow]) -> str:
    """The listing: :data:`LISTING_HEADER`, then ``<* or -> <key> — <window>`` per row.

    An empty roster renders :data:`NO_MODELS`.
    """
    if not rows:
        return NO_MODELS
    lines = [LISTING_HEADER]
    for row in rows:
        window = (
            "context window unknown"
            if row.context_length is None
            else f"context window {row.context_length} tokens"
        )
        lines.append(f"{'*' if row.active else '-'} {row.key} — {window}")
    return "\n".join(lines)


class ModelTool(ToolCard):
    """Runtime model switching; requires an observer satisfying ModelSwitchToolObserver.

    ``ModelTool()`` serves all three capabilities; ``ModelTool(switch_model=False)`` is
    read-only; ``ModelTool(switch_model=SwitchModel(expose={COMMAND}))`` lets humans switch
    while the model may not.
    """

    _CAPABILITIES: ClassVar[tuple[tuple[str, type[BaseToolParam]], ...]] = (
        ("list_models", ListModels),
        ("switch_model", SwitchModel),
        ("active_model", ActiveModel),
    )

    list_models: ListModels | bool = True
    switch_model: SwitchModel | bool = True
    active_model: ActiveModel | bool = True

    # -- wiring -----------------------------------------------------------------------
    def observer(self, observer: ToolObserver) -> Self:
        """Attach the agent; TypeError unless it satisfies ModelSwitchToolObserver.

        Checked only when a capability is on. When the switch is on, the agent's state must
        carry ``tool_state`` too — the record the switch writes.
        """
        if any(resolve_param(getattr(self, f), cls) for f, cls in self._CAPABILITIES):
            if not isinstance(observer, ModelSwitchToolObserver):
                raise TypeError(
                    f"ModelTool needs an observer satisfying ModelSwitchToolObserver "
                    f"(list_model_rows, switch_model, on an ActorToolObserver); "
                    f"{type(observer).__name__} is not one"
                )
            if resolve_param(self.switch_model, SwitchModel) is not None:
                read_tool_state(observer)  # TypeError naming what is missing
        return super().observer(observer)

    def _model_observer(self) -> ModelSwitchToolObserver:
        return cast(ModelSwitchToolObserver, self.get_observer())

    # -- hooks ------------------------------------------------------------------------
    def get_tools(self) -> list[Callable[..., Any]]:
        tools: list[Callable[..., Any]] = []
        if serve(self.list_models, ListModels, TOOL_CALL) is not None:
            tools.append(self._build_list_models(TOOL_CALL))
        if serve(self.switch_model, SwitchModel, TOOL_CALL) is not None:
            tools.append(self._build_switch_model(TOOL_CALL))
        return tools

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        commands: dict[type[BaseToolParam], Callable[..., Any]] = {}
        if serve(self.list_models, ListModels, COMMAND) is not None:
            commands[ListModels] = self._build_list_models(COMMAND)
        if serve(self.switch_model, SwitchModel, COMMAND) is not None:
            commands[SwitchModel] = self._build_switch_model(COMMAND)
        return commands

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        if serve(self.active_model, ActiveModel, LLM_CONTEXT) is None:
            return []
        return [self._build_active_model()]

    # -- builders: one per capability, shared by every channel ------------------------
    def _rows(self) -> list[ModelRow]:
        try:
            return list(self._model_observer().list_model_rows())
        except RetriableError:
            raise
        except Exception as exc:
            raise RetriableError(
                f"The model roster is unavailable right now "
                f"({type(exc).__name__}: {clip(str(exc))}). Carry on with the model in force."
            ) from exc

    def _build_list_models(self, channel: Channels) -> Callable[[], str]:
        def list_models() -> str:
            return render_listing(self._rows())

        list_models.__doc__ = (  # names the switch as the reader calls it
            "List the models you can switch to, one per line; `*` marks the one in force.\n\n"
            "Each line reads `<marker> <key> — <context window>`. Pass a key from this list\n"
            f"to {self.invocation('switch_model', channel)}."
        )
        return list_models

    def _build_switch_model(self, channel: Channels) -> Callable[[str], str]:
        def switch_model(model: str) -> str:
            observer = self._model_observer()
            tool_state = read_tool_state(observer)
            key = model.strip()
            try:
                confirmation = observer.switch_model(key)
            except Exception as exc:
                raise RetriableError(
                    f"Cannot switch to {excerpt(key)}: {clip(str(exc))}. "
                    f"{self._known_keys_hint(channel)}"
                ) from exc
            tool_state.active_model = key
            notify = getattr(observer.state, "notify_state_change", None)
            if callable(notify):
                notify()
            return confirmation

        switch_model.__doc__ = (  # names the listing as the reader calls it
            "Switch the model that serves your next requests.\n\n"
            f"`model` is a roster key exactly as {self.invocation('list_models', channel)} "
            'shows it, e.g. "openai:gpt-5.2".\n'
            "The switch takes effect from the next model request and survives a restart."
        )
        return switch_model

    def _known_keys_hint(self, channel: Channels) -> str:
        """The keys a refused switch may use; when the roster does not read, the call that
        lists them, as ``channel``'s reader makes it (``/list_models`` for a person)."""
        try:
            keys = [row.key for row in self._model_observer().list_model_rows()]
        except Exception:
            return f"{self.invocation('list_models', channel)} lists the keys you can use."
        if not keys:
            return "The roster is empty: there is no model to switch to."
        return f"Use one of: {', '.join(keys)}."

    def _build_active_model(self) -> Callable[[], ContextState | None]:
        def active_model() -> ActiveModelState | None:
            # Reads the roster's active flag, never the persisted ToolState.active_model:
            # the flag is what is in force, the record is only a preference to restore.
            observer = self.observer_or_none()
            if observer is None:
                return None
            try:  # providers never raise: an unreadable roster or row is no state
                rows = cast(ModelSwitchToolObserver, observer).list_model_rows()
                active = next((row for row in rows if row.active), None)
                return None if active is None else ActiveModelState.from_row(active)
            except Exception:
                logger.warning("active_model: the roster could not be read", exc_info=True)
                return None

        return active_model

"""ToolFactory: many cards in, agent-ready capabilities out.

Wiring happens once, in the constructor: the cards are put in dependency order and
the observer is attached to every card, in that order. A card whose ``#`` tool actor
could not start fails there, as a ``ToolActorStartError`` naming the card, the actor
and the cause. Each aggregator then walks the
cards in the same order and returns exactly what their hooks return — nothing
cross-checks a param's ``expose`` against the hooks, so a capability on a channel its
card does not serve is dropped silently (test the lists, not the declarations).

Tool callables are wrapped once more on the way out:

- each tool is checked when it is handed out (see ``guard.py``): a named function, with
  a docstring and a type hint on every parameter, or a ``TypeError`` naming the card,
  the tool and the fix — at team creation, not in a turn (a command, handed out by
  ``get_commands`` and ``get_command_registry``, needs a docstring too: ``/help`` shows
  it);
- each argument is checked against its annotation before the tool runs (see
  ``arguments.py``): a wrong type is a ``RetriableError`` naming the argument, the item
  and what was expected, never a raw exception from inside the tool;
- any other exception the tool raises is logged and becomes a ``RetriableError`` naming
  the tool (framework signals and ``ToolObserverGone`` excepted): nothing raw escapes;
  so does a return value pydantic-ai could not serialize for the model (``check_return``);
- ``RetriableError`` becomes ``retry_exception`` (e.g. pydantic-ai's ``ModelRetry``),
  so tool logic stays framework-agnostic;
- a runtime toolset (``get_toolsets``) gets the same two translations around its
  ``call_tool`` (see ``guarded.py``), so a toolset's tool keeps the rule too;
- a param's ``instructions`` is appended to the tool's docstring;
- what the wrappers say names the tool as the model calls it (its card's ``called_as``:
  ``<set>_<verb>`` for a card grouped in a toolset);
- each call is held to ``tool_timeout`` seconds when one is given (see
  ``time_bound.py``): past it the model reads that the tool took too long and the turn
  goes on (an async tool is cancelled; a sync tool, run on a thread of its own for that,
  is abandoned — a thread cannot be killed).

The wrapper keeps name, docstring, signature and (resolved) annotations, so the
framework can still build the tool's schema, and an async tool stays async. A sync tool
held to a bound becomes async: its caller awaits the thread it runs on, so the caller's
loop stays free and a cancel (an agent's turn interrupted) ends the await at once.

Each aggregator also records which card served each item it hands out
(:meth:`ToolFactory.card_of`, :meth:`ToolFactory.served`): what a prompt part, a tool or
a context provider costs is attributed to its card from the wiring, never guessed from
names.
"""

from __future__ import annotations

import functools
import inspect
import typing
import weakref
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Literal

from akgentic.core import ActorStartError
from akgentic.core.excerpt import exception_line, exception_words
from akgentic.tool.core.arguments import Parameters
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.commands import CommandRegistry
from akgentic.tool.core.context_state import ContextState
from akgentic.tool.core.context_update import ContextUpdater
from akgentic.tool.core.dependencies import card_label, order_cards
from akgentic.tool.core.guard import (
    as_the_model_reads,
    check_command,
    check_return,
    check_tool,
)
from akgentic.tool.core.guarded import guarded
from akgentic.tool.core.observer import ActorToolObserver, ToolObserver
from akgentic.tool.core.params import BaseToolParam, param_of
from akgentic.tool.core.time_bound import await_within, mark_runs_alone, run_within
from akgentic.tool.errors import (
    CardHookError,
    RetriableError,
    ToolActorStartError,
    ToolNotWiredError,
    ToolObserverGone,
)

__all__ = ["ServedKind", "ToolFactory"]

_HOOK_SIGNALS: tuple[type[BaseException], ...] = (
    ActorStartError,
    RetriableError,
    ToolNotWiredError,
    ToolObserverGone,
)
"""What a card's hook may raise that the factory's callers handle themselves."""

ServedKind = Literal["tool", "system_prompt", "context_state", "toolset"]
"""What an aggregator hands out, by hook."""


class ToolFactory:
    """Aggregates cards: tools, system prompts, context states, commands, toolsets."""

    def __init__(
        self,
        tool_cards: Sequence[ToolCard],
        observer: ToolObserver | None = None,
        retry_exception: type[Exception] | None = None,
        tool_timeout: float | None = None,
    ) -> None:
        self.tool_cards: list[ToolCard] = order_cards(list(tool_cards))
        self.retry_exception = retry_exception
        self.tool_timeout = tool_timeout  # seconds a tool call may take; None: no bound
        self._served: dict[ServedKind, dict[int, tuple[Any, ToolCard]]] = {}
        self._observer_ref: weakref.ref[Any] | None = None
        if observer is not None:
            self._observer_ref = weakref.ref(observer)
            for index, card in enumerate(self.tool_cards):
                try:
                    card.observer(observer)
                except ActorStartError as exc:  # its # actor: name the card that wired it
                    raise ToolActorStartError(self._label(index), exc) from exc

    def _label(self, index: int) -> str:
        return card_label(self.tool_cards, index)

    def _hook(self, index: int, hook: str) -> Any:
        """Card ``index``'s ``hook()``, its failure named: a card author's bug says which
        card and hook (``Tally.get_tools() raised KeyError: 'x'``), not only what broke.
        A ``ValueError`` or ``TypeError`` — a card refusing its own configuration, on
        purpose — keeps its type with the card and hook put before its words; the
        framework's signals pass untouched; anything else is a :class:`CardHookError`.
        What is handed back must be a collection (``get_commands``: a mapping)."""
        label = self._label(index)
        try:
            result = getattr(self.tool_cards[index], hook)()
        except _HOOK_SIGNALS:
            raise
        except Exception as exc:
            if type(exc) in (ValueError, TypeError):
                raise type(exc)(f"{label}.{hook}(): {exception_words(exc)}") from exc
            raise CardHookError(
                f"{label}.{hook}() raised {exception_line(exc)}: fix the card's {hook}"
            ) from exc
        wanted = Mapping if hook == "get_commands" else Collection
        if not isinstance(result, wanted) or isinstance(result, str | bytes):
            kind = "a dict of commands" if hook == "get_commands" else "a list"
            raise CardHookError(
                f"{label}.{hook}() returned {type(result).__name__}, not {kind}: return "
                f"{'{}' if hook == 'get_commands' else '[]'} when the card has none"
            )
        return result

    def label_of(self, card: ToolCard) -> str:
        """How this factory names ``card``: its class, and its position when the class
        repeats (``PlanningTool``, ``Verbs (tool_cards[2])``)."""
        index = next(i for i, c in enumerate(self.tool_cards) if c is card)
        return self._label(index)

    # -- who served what --------------------------------------------------------------
    def _record(self, kind: ServedKind, served: list[tuple[Any, ToolCard]]) -> None:
        self._served[kind] = {id(item): (item, card) for item, card in served}

    def served(self, kind: ServedKind) -> list[tuple[Any, ToolCard]]:
        """What the last call of ``kind``'s aggregator handed out, each with its card, in
        order (``get_tools`` for ``"tool"``, ``get_system_prompts`` for
        ``"system_prompt"``...). Empty before that aggregator was called."""
        return list(self._served.get(kind, {}).values())

    def card_of(self, item: object) -> ToolCard | None:
        """The card whose hook served ``item`` (a tool, prompt renderer, context provider,
        or toolset the latest aggregator call handed out), by identity; or None."""
        for served in self._served.values():
            entry = served.get(id(item))
            if entry is not None and entry[0] is item:
                return entry[1]
        return None

    # -- TOOL_CALL ------------------------------------------------------------------
    def get_tools(self) -> list[Callable[..., Any]]:
        """Every card's tools, retry-translated and carrying their param's instructions.

        Raises ``TypeError`` for a tool the model could not use: not a named function,
        no docstring, a parameter without a type hint (see ``guard.check_tool``); and
        ``ValueError`` naming both cards for two tools sharing a name (the model calls a
        tool by its name: one of them could never be called).
        """
        served: list[tuple[Any, ToolCard]] = []
        owners: dict[str, int] = {}
        for index, card in enumerate(self.tool_cards):
            params = _params_by_field(card)
            for fn in self._hook(index, "get_tools"):
                name = getattr(fn, "__name__", "")
                param = param_of(fn) or params.get(name)
                instructions = param.instructions if param is not None else None
                documented = bool((getattr(fn, "__doc__", None) or "").strip() or instructions)
                check_tool(fn, self._label(index), documented=documented)
                if name in owners:
                    raise ValueError(
                        f"tool {name!r} is provided by both {self._label(owners[name])} and "
                        f"{self._label(index)}: rename one, or turn it off on one card"
                    )
                owners[name] = index
                served.append((self._wrap(fn, instructions, card.called_as(name)), card))
        self._record("tool", served)
        return [fn for fn, _ in served]

    def _wrap(
        self, fn: Callable[..., Any], instructions: str | None, called: str
    ) -> Callable[..., Any]:
        """``fn`` wrapped (see the module docstring); what the wrapper says of the tool
        names it ``called``, as the model calls it (its card's ``called_as``)."""
        retry = self.retry_exception
        seconds = self.tool_timeout
        parameters = Parameters(fn, called)
        name = parameters.name
        wrapper: Callable[..., Any]
        alone = False  # a bounded sync tool: each call runs alone (time_bound.runs_alone)
        if inspect.iscoroutinefunction(fn):

            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                with as_the_model_reads(name, retry):
                    bound = parameters.check(args, kwargs)
                    call = fn(*bound.args, **bound.kwargs)
                    return check_return(await await_within(seconds, name, call))

            wrapper = async_wrapper
        elif seconds is not None:  # awaited, on a thread of its own: the bound can cut it

            async def bounded_wrapper(*args: Any, **kwargs: Any) -> Any:
                with as_the_model_reads(name, retry):
                    bound = parameters.check(args, kwargs)
                    call = functools.partial(fn, *bound.args, **bound.kwargs)
                    return check_return(await run_within(seconds, name, call))

            wrapper = bounded_wrapper
            alone = True
        else:

            def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
                with as_the_model_reads(name, retry):
                    bound = parameters.check(args, kwargs)
                    return check_return(fn(*bound.args, **bound.kwargs))

            wrapper = sync_wrapper
        _copy_identity(fn, wrapper)
        if alone:
            mark_runs_alone(wrapper)
        if instructions:
            doc = (fn.__doc__ or "").rstrip()
            wrapper.__doc__ = f"{doc}\n\n{instructions}" if doc else instructions
        return wrapper

    # -- SYSTEM_PROMPT / LLM_CONTEXT ------------------------------------------------
    def get_system_prompts(self) -> list[Callable[[], str]]:
        """Every card's static prompt renderers, in card order."""
        served = [
            (p, card)
            for index, card in enumerate(self.tool_cards)
            for p in self._hook(index, "get_system_prompts")
        ]
        self._record("system_prompt", served)
        return [prompt for prompt, _ in served]

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        """Every card's context-state providers, in card order.

        Keyed by ``__name__``; two providers sharing one raise ValueError naming both
        cards.
        """
        served: list[tuple[Any, ToolCard]] = []
        owners: dict[str, int] = {}
        for index, card in enumerate(self.tool_cards):
            for provider in self._hook(index, "get_context_states"):
                key = getattr(provider, "__name__", "")
                if key in owners:
                    raise ValueError(
                        f"context provider {key!r} is provided by both "
                        f"{self._label(owners[key])} and {self._label(index)}"
                    )
                owners[key] = index
                served.append((provider, card))
        self._record("context_state", served)
        return [provider for provider, _ in served]

    def get_context_updater(self) -> ContextUpdater:
        """The ContextUpdater over this factory's observer and context providers.

        Raises ValueError when the observer is missing or is not an
        ``ActorToolObserver`` — at team creation, rather than going silently inert.
        """
        if self._observer_ref is None:
            raise ValueError(
                "get_context_updater() needs an observer: build the ToolFactory with "
                "observer=<the agent> (an ActorToolObserver)"
            )
        observer = self._observer_ref()
        if observer is None:
            raise ToolObserverGone("the agent this ToolFactory was built for is gone")
        if not isinstance(observer, ActorToolObserver):
            raise ValueError(
                f"get_context_updater() needs an ActorToolObserver (myAddress, "
                f"orchestrator, team_id, state, proxy_ask, proxy_tell); "
                f"{type(observer).__name__} is not one"
            )
        return ContextUpdater(observer, self.get_context_states())

    # -- COMMAND ---------------------------------------------------------------------
    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        """Every card's commands, keyed by param class; a key served twice is an error."""
        commands: dict[type[BaseToolParam], Callable[..., Any]] = {}
        owners: dict[type[BaseToolParam], int] = {}
        for index in range(len(self.tool_cards)):
            for param_cls, fn in self._hook(index, "get_commands").items():
                check_command(fn, self._label(index))
                if param_cls in owners:
                    raise ValueError(
                        f"command {param_cls.__name__} is provided by both "
                        f"{self._label(owners[param_cls])} and {self._label(index)}"
                    )
                owners[param_cls] = index
                commands[param_cls] = fn
        return commands

    def get_command_registry(
        self,
        reserved: Mapping[str, str] | None = None,
        *,
        registrars: Mapping[str, type[ToolCard]] | None = None,
    ) -> CommandRegistry:
        """A CommandRegistry holding every command under its callable's ``__name__``.

        ``reserved`` maps the names a caller keeps for itself (the agent's built-in
        ``/help``, the chat's ``/quit``) to what they are: a card command with one of
        them would replace the built-in or be shadowed by it, whichever came first.
        ``registrars`` names the one card class that registers a reserved name on its
        holder's behalf (MailboxTool registers the agent's ``/stop``).

        Raises ``TypeError`` for a command without a docstring (see
        ``guard.check_command``): ``/help`` would have nothing to say about it; and
        ``ValueError`` naming the card and the command for one that takes a reserved
        name, or naming both cards for two giving one name — never silent shadowing."""
        registry = CommandRegistry()
        taken = reserved or {}
        delegated = registrars or {}
        for index, card in enumerate(self.tool_cards):
            for fn in self._hook(index, "get_commands").values():
                check_command(fn, self._label(index))
                name = getattr(fn, "__name__", "")
                registrar = delegated.get(name)
                if name in taken and not (registrar is not None and isinstance(card, registrar)):
                    names = ", ".join(f"/{n}" for n in taken)
                    raise ValueError(
                        f"{self._label(index)}'s command /{name} has the name of {taken[name]}: "
                        f"rename the command (names taken: {names})"
                    )
                registry.register(fn, owner=self._label(index))
        return registry

    # -- toolsets --------------------------------------------------------------------
    def get_toolsets(self) -> list[Any]:
        """Every card's runtime toolset objects, each in a ``GuardedToolset``: a
        ``RetriableError`` (or any raw exception) from a toolset's tool reaches the model
        as a retry, as one from a function tool does (see ``guarded.py``)."""
        retry = self.retry_exception
        served = [
            (guarded(t, retry, card.called_as), card)
            for index, card in enumerate(self.tool_cards)
            for t in self._hook(index, "get_toolsets")
        ]
        self._record("toolset", served)
        return [toolset for toolset, _ in served]


def _params_by_field(card: ToolCard) -> dict[str, BaseToolParam]:
    """The card's capability params by field name (fields holding a param instance)."""
    return {
        name: value
        for name in type(card).model_fields
        if isinstance(value := getattr(card, name), BaseToolParam)
    }


def _copy_identity(fn: Callable[..., Any], wrapper: Callable[..., Any]) -> None:
    """Give ``wrapper`` the name, doc, signature and resolved annotations of ``fn``.

    Annotations are resolved here, in ``fn``'s own namespace, because a schema builder
    resolving string annotations would otherwise look in the wrong module.
    """
    functools.update_wrapper(wrapper, fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolvable forward references: keep them as written
        hints = dict(getattr(fn, "__annotations__", {}))
    wrapper.__annotations__ = hints
    signature = inspect.signature(fn)
    params = [
        p.replace(annotation=hints.get(p.name, p.annotation)) for p in signature.parameters.values()
    ]
    setattr(  # noqa: B010 — mypy: Callable declares no __signature__
        wrapper,
        "__signature__",
        signature.replace(
            parameters=params,
            return_annotation=hints.get("return", signature.return_annotation),
        ),
    )

"""ToolFactory: channel routing, the silent drop, dependency order, wrapping, aggregation."""

from __future__ import annotations

import asyncio
import inspect
import logging
import threading
import typing
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from akgentic.tool import (
    COMMAND,
    LLM_CONTEXT,
    SYSTEM_PROMPT,
    TOOL_CALL,
    BaseToolParam,
    Channels,
    ContextState,
    ContextUpdater,
    RetriableError,
    ToolCard,
    ToolFactory,
    ToolObserver,
)
from akgentic.tool.core import attach_param, serve

from .conftest import EventObserver, FakeAgent


class RetryError(Exception):
    """Stands in for pydantic-ai's ModelRetry."""


class Note(ContextState):
    text: str = ""

    def render_full(self) -> str:
        return self.text

    def render_delta(self, previous: Note) -> str | None:
        return None if previous.text == self.text else self.text


class Lookup(BaseToolParam):
    limit: int = 3  # read at bind time: the tool's default


class Board(BaseToolParam):
    expose: set[Channels] = {LLM_CONTEXT, COMMAND}


class Guide(BaseToolParam):
    expose: set[Channels] = {SYSTEM_PROMPT}


class BoardCard(ToolCard):
    """A card serving each channel from its own param, through the routing rule."""

    lookup: Lookup | bool = True
    board: Board | bool = True
    guide: Guide | bool = True

    def get_tools(self) -> list[Callable[..., Any]]:
        tools: list[Callable[..., Any]] = []
        if (param := serve(self.lookup, Lookup, TOOL_CALL)) is not None:
            limit = param.limit

            def lookup(query: str, count: int | None = None) -> list[str]:
                """Look up entries matching query."""
                if not query:
                    raise RetriableError("query must not be empty")
                return [query] * (count or limit)

            tools.append(lookup)
        if (board := serve(self.board, Board, TOOL_CALL)) is not None:

            def board_tool() -> str:
                """Show the board."""
                return "board"

            tools.append(attach_param(board_tool, board))
        return tools

    def get_system_prompts(self) -> list[Callable[[], str]]:
        if serve(self.guide, Guide, SYSTEM_PROMPT) is None:
            return []
        return [lambda: "Use the board."]

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        if serve(self.board, Board, LLM_CONTEXT) is None:
            return []

        def board_state() -> Note:
            return Note(text="3 tasks")

        return [board_state]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        commands: dict[type[BaseToolParam], Callable[..., Any]] = {}
        if serve(self.board, Board, COMMAND) is not None:

            def show_board() -> str:
                """Show the board."""
                return "board"

            commands[Board] = show_board
        return commands

    def get_toolsets(self) -> list[Any]:
        return ["toolset-object"]


def names(fns: list[Callable[..., Any]]) -> list[str]:
    return [fn.__name__ for fn in fns]


# -- routing ------------------------------------------------------------------------


def test_each_capability_is_served_on_its_exposed_channels(agent: FakeAgent) -> None:
    factory = ToolFactory([BoardCard()], observer=agent)
    assert names(factory.get_tools()) == ["lookup"]
    assert [p() for p in factory.get_system_prompts()] == ["Use the board."]
    assert names(factory.get_context_states()) == ["board_state"]
    assert list(factory.get_commands()) == [Board]
    assert factory.get_command_registry().names() == ["show_board"]
    assert factory.get_toolsets() == ["toolset-object"]


def test_false_removes_a_capability_from_every_channel(agent: FakeAgent) -> None:
    factory = ToolFactory([BoardCard(board=False, lookup=False, guide=False)], observer=agent)
    assert factory.get_tools() == []
    assert factory.get_system_prompts() == []
    assert factory.get_context_states() == []
    assert factory.get_commands() == {}


def test_expose_gates_each_hook_independently(agent: FakeAgent) -> None:
    card = BoardCard(board=Board(expose={TOOL_CALL}), lookup=Lookup(expose={COMMAND}))
    factory = ToolFactory([card], observer=agent)
    assert names(factory.get_tools()) == ["board_tool"]  # board moved to TOOL_CALL
    assert factory.get_context_states() == []
    assert factory.get_commands() == {}  # lookup "exposed" on COMMAND: no hook serves it


def test_the_silent_drop(agent: FakeAgent, caplog: pytest.LogCaptureFixture) -> None:
    """Exposed on a channel its card cannot serve: no error, no warning, just absent."""
    card = BoardCard(board=Board(expose={SYSTEM_PROMPT}), guide=False)
    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.DEBUG):
        warnings.simplefilter("always")
        factory = ToolFactory([card], observer=agent)
        assert factory.get_system_prompts() == []
        assert factory.get_context_states() == []
        assert factory.get_commands() == {}
        assert names(factory.get_tools()) == ["lookup"]  # the rest of the card is served
        assert factory.get_command_registry().names() == []
        factory.get_context_updater()
    assert [str(w.message) for w in caught] == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_param_fields_are_read_at_bind_time(agent: FakeAgent) -> None:
    (lookup,) = ToolFactory([BoardCard(lookup=Lookup(limit=2))], observer=agent).get_tools()
    assert lookup("q") == ["q", "q"]


# -- wrapping ------------------------------------------------------------------------


def test_retriable_error_becomes_the_retry_exception(agent: FakeAgent) -> None:
    (lookup,) = ToolFactory([BoardCard()], observer=agent, retry_exception=RetryError).get_tools()
    with pytest.raises(RetryError, match="query must not be empty") as info:
        lookup("")
    assert isinstance(info.value.__cause__, RetriableError)


def test_without_retry_exception_the_error_is_untouched(agent: FakeAgent) -> None:
    card = BoardCard()
    (lookup,) = ToolFactory([card], observer=agent).get_tools()
    with pytest.raises(RetriableError):
        lookup("")


def test_wrapping_keeps_name_doc_signature_and_resolved_annotations(agent: FakeAgent) -> None:
    (lookup,) = ToolFactory([BoardCard()], observer=agent, retry_exception=RetryError).get_tools()
    assert lookup.__name__ == "lookup"
    assert lookup.__doc__ == "Look up entries matching query."
    signature = inspect.signature(lookup)
    assert list(signature.parameters) == ["query", "count"]
    assert signature.parameters["query"].annotation is str
    assert signature.parameters["count"].default is None
    hints = typing.get_type_hints(lookup)
    assert hints == {"query": str, "count": int | None, "return": list[str]}


def test_async_tools_stay_async_and_translate_too(agent: FakeAgent) -> None:
    class AsyncCard(ToolCard):
        def get_tools(self) -> list[Callable[..., Any]]:
            async def fetch(url: str) -> str:
                """Fetch url."""
                if url == "bad":
                    raise RetriableError("bad url")
                return url

            return [fetch]

    (fetch,) = ToolFactory([AsyncCard()], observer=agent, retry_exception=RetryError).get_tools()
    assert inspect.iscoroutinefunction(fetch)
    assert asyncio.run(fetch("ok")) == "ok"
    with pytest.raises(RetryError, match="bad url"):
        asyncio.run(fetch("bad"))


def test_instructions_are_appended_to_the_docstring(agent: FakeAgent) -> None:
    card = BoardCard(
        lookup=Lookup(instructions="Only look up customer ids."),
        board=Board(expose={TOOL_CALL}, instructions="Check the board first."),
    )
    lookup, board_tool = ToolFactory([card], observer=agent).get_tools()
    assert lookup.__doc__ == "Look up entries matching query.\n\nOnly look up customer ids."
    assert board_tool.__doc__ == "Show the board.\n\nCheck the board first."
    # The card's own callable is not mutated: a second build appends once, not twice.
    again = ToolFactory([card], observer=agent).get_tools()[0]
    assert again.__doc__ == "Look up entries matching query.\n\nOnly look up customer ids."


def test_without_instructions_or_retry_a_tool_still_behaves_as_itself(agent: FakeAgent) -> None:
    class Plain(ToolCard):
        def get_tools(self) -> list[Callable[..., Any]]:
            return [len]

    (tool,) = ToolFactory([Plain()], observer=agent).get_tools()
    assert tool.__name__ == "len" and tool([1, 2]) == 2  # wrapped only to check arguments
    with pytest.raises(RetriableError, match="len: missing a required argument"):
        tool()


# -- dependencies and wiring ----------------------------------------------------------


class Store(ToolCard):
    pass


class Indexer(ToolCard):
    def depends_on(self) -> list[str | type[ToolCard]]:
        return [Store]


class Searcher(ToolCard):
    def depends_on(self) -> list[str | type[ToolCard]]:
        return ["Indexer", "Store"]


class Loner(ToolCard):
    pass


def test_cards_are_ordered_by_dependency_and_stable_otherwise() -> None:
    searcher, loner, indexer, store = Searcher(), Loner(), Indexer(), Store()
    factory = ToolFactory([searcher, loner, indexer, store])
    assert factory.tool_cards == [loner, store, indexer, searcher]


def test_observer_is_attached_to_every_card_in_dependency_order() -> None:
    attached: list[str] = []

    class Recording(ToolCard):
        label: str

        def observer(self, observer: ToolObserver) -> Recording:
            attached.append(self.label)
            return super().observer(observer)

    class Late(Recording):
        def depends_on(self) -> list[str | type[ToolCard]]:
            return ["Early"]

    class Early(Recording):
        pass

    agent = EventObserver()
    cards = [Late(label="late"), Early(label="early")]
    ToolFactory(cards, observer=agent)
    assert attached == ["early", "late"]
    assert all(card.get_observer() is agent for card in cards)


def test_a_dependency_cycle_is_an_error_naming_the_cards() -> None:
    class Ping(ToolCard):
        def depends_on(self) -> list[str | type[ToolCard]]:
            return ["Pong"]

    class Pong(ToolCard):
        def depends_on(self) -> list[str | type[ToolCard]]:
            return ["Ping"]

    with pytest.raises(ValueError, match=r"cycle between cards: Ping -> Pong -> Ping"):
        ToolFactory([Loner(), Ping(), Pong()])


def test_an_unknown_dependency_is_an_error_naming_card_and_dependency() -> None:
    with pytest.raises(ValueError, match=r"Indexer depends on 'Store', which is not among"):
        ToolFactory([Indexer(), Loner()])


def test_a_card_depending_on_itself_is_an_error() -> None:
    class Selfish(ToolCard):
        def depends_on(self) -> list[str | type[ToolCard]]:
            return ["Selfish"]

    with pytest.raises(ValueError, match="Selfish depends on itself"):
        ToolFactory([Selfish()])


# -- aggregation errors ----------------------------------------------------------------


def test_duplicate_context_provider_names_raise_naming_both_cards(agent: FakeAgent) -> None:
    class Other(ToolCard):
        def get_context_states(self) -> list[Callable[[], ContextState | None]]:
            def board_state() -> Note:
                return Note()

            return [board_state]

    factory = ToolFactory([BoardCard(), Other()], observer=agent)
    with pytest.raises(ValueError, match="'board_state' is provided by both BoardCard and Other"):
        factory.get_context_states()
    with pytest.raises(ValueError, match="provided by both"):
        factory.get_context_updater()  # the same check, through the updater's path


def test_two_cards_serving_one_tool_name_raise_naming_both_cards() -> None:
    def tool_card(label: str) -> type[ToolCard]:
        def get_tools(self: ToolCard) -> list[Callable[..., Any]]:
            def lookup(key: str) -> str:
                """Look ``key`` up."""
                return key

            return [lookup]

        return type(label, (ToolCard,), {"get_tools": get_tools})

    factory = ToolFactory([tool_card("Left")(), tool_card("Right")()])
    with pytest.raises(ValueError, match="tool 'lookup' is provided by both Left and Right"):
        factory.get_tools()


def test_two_cards_of_one_class_are_told_apart_by_position(agent: FakeAgent) -> None:
    factory = ToolFactory([BoardCard(), BoardCard()], observer=agent)
    with pytest.raises(ValueError, match=r"BoardCard \(tool_cards\[0\]\) and BoardCard \(tool"):
        factory.get_context_states()
    with pytest.raises(ValueError, match=r"command Board is provided by both"):
        factory.get_commands()
    with pytest.raises(ValueError, match=r"/show_board is registered twice"):
        factory.get_command_registry()


def command_card(label: str, name: str) -> ToolCard:
    """A card of its own class (``label``) giving one command named ``name``."""
    param = type(f"{label}Param", (BaseToolParam,), {})

    def get_commands(self: ToolCard) -> dict[type[BaseToolParam], Callable[..., Any]]:
        def command() -> str:
            """Answer."""
            return label

        command.__name__ = name
        return {param: command}

    card: ToolCard = type(label, (ToolCard,), {"get_commands": get_commands})()
    return card


def test_a_card_command_named_like_a_reserved_one_is_an_error_naming_card_and_command() -> None:
    factory = ToolFactory([command_card("Wiper", "clear")])
    reserved = {"clear": "the agent's built-in /clear", "help": "the agent's built-in /help"}
    with pytest.raises(ValueError) as caught:
        factory.get_command_registry(reserved=reserved)
    assert str(caught.value) == (
        "Wiper's command /clear has the name of the agent's built-in /clear: rename the "
        "command (names taken: /clear, /help)"
    )
    assert factory.get_command_registry().names() == ["clear"]  # nothing reserved: fine


def test_a_reserved_name_is_open_to_its_registrar_card_only() -> None:
    stopper = command_card("Stopper", "stop")
    reserved = {"stop": "the agent's built-in /stop"}
    registry = ToolFactory([stopper]).get_command_registry(
        reserved=reserved, registrars={"stop": type(stopper)}
    )
    assert registry.names() == ["stop"]
    other = ToolFactory([command_card("Other", "stop")])
    with pytest.raises(ValueError, match="Other's command /stop has the name of the agent's"):
        other.get_command_registry(reserved=reserved, registrars={"stop": type(stopper)})


def test_two_cards_giving_one_command_is_an_error_naming_both_and_the_fix() -> None:
    factory = ToolFactory([command_card("Left", "tally"), command_card("Right", "tally")])
    with pytest.raises(ValueError) as caught:
        factory.get_command_registry(reserved={"clear": "the agent's built-in /clear"})
    assert str(caught.value) == (
        "command /tally is registered twice: by Left and by Right; rename the command on "
        "one of them"
    )


def test_context_updater_needs_an_actor_observer() -> None:
    with pytest.raises(ValueError, match="needs an observer"):
        ToolFactory([BoardCard()]).get_context_updater()
    events_only = EventObserver()  # held here: the factory holds its observer weakly
    with pytest.raises(ValueError, match="EventObserver is not one"):
        ToolFactory([BoardCard()], observer=events_only).get_context_updater()


def test_context_updater_is_built_over_the_factory_providers(agent: FakeAgent) -> None:
    updater = ToolFactory([BoardCard()], observer=agent).get_context_updater()
    assert isinstance(updater, ContextUpdater)
    assert updater.provider_names == ["board_state"]
    assert updater.compose_update([]) == "**Context update 1**\n\n3 tasks"


# -- who served what ------------------------------------------------------------------


class Other(ToolCard):
    tool_name: str = "other"  # two Others serve two tools: one name would be a clash

    def get_tools(self) -> list[Callable[..., Any]]:
        def other() -> str:
            """Another tool."""
            return "other"

        other.__name__ = self.tool_name
        return [other]

    def get_system_prompts(self) -> list[Callable[[], str]]:
        return [lambda: "Other rules."]

    def get_toolsets(self) -> list[Any]:
        return [object()]


def test_each_item_handed_out_names_the_card_that_served_it() -> None:
    board, other = BoardCard(), Other()
    factory = ToolFactory([board, other, Other(tool_name="another")])
    tools = factory.get_tools()
    prompts = factory.get_system_prompts()
    states = factory.get_context_states()
    toolsets = factory.get_toolsets()
    owners = [board, other, factory.tool_cards[2]]  # BoardCard serves one tool: lookup
    assert [factory.card_of(fn) for fn in tools] == owners
    assert [factory.card_of(p) for p in prompts] == [board, other, factory.tool_cards[2]]
    assert [factory.card_of(s) for s in states] == [board]
    assert [factory.card_of(t) for t in toolsets] == [board, other, factory.tool_cards[2]]
    assert factory.served("tool") == list(zip(tools, owners, strict=True))
    assert factory.card_of(lambda: "never served") is None
    assert factory.label_of(board) == "BoardCard"
    assert factory.label_of(other) == "Other (tool_cards[1])"


def test_the_record_follows_the_last_call_of_each_aggregator() -> None:
    factory = ToolFactory([BoardCard()], retry_exception=RetryError)
    first = factory.get_tools()
    second = factory.get_tools()  # wrapped afresh
    assert factory.card_of(second[0]) is factory.tool_cards[0]
    assert factory.card_of(first[0]) is None
    assert factory.served("context_state") == []  # not asked yet


def test_a_return_the_model_cannot_receive_is_a_retry_naming_the_tool() -> None:
    class Returns(ToolCard):
        def get_tools(self) -> list[Callable[..., Any]]:
            def handle(kind: str) -> Any:
                """Return a value of ``kind``."""
                values: dict[str, Any] = {
                    "lock": threading.Lock(),
                    "bytes": b"\xff\x00",
                    "model": Note(),
                    "data": {"a": [1, 2.5, None]},
                }
                return values[kind]

            return [handle]

    [handle] = ToolFactory([Returns()], retry_exception=RetryError).get_tools()
    with pytest.raises(RetryError) as caught:
        handle(kind="lock")
    assert str(caught.value) == (
        "handle failed (TypeError: returned a lock; return str, a model or JSON data). Try "
        "again; if it fails again, report that handle is not working."
    )
    assert handle(kind="bytes") == b"\xff\x00"
    assert handle(kind="model") == Note()
    assert handle(kind="data") == {"a": [1, 2.5, None]}


# -- a card author's broken hook is named -------------------------------------------------


class Tally(ToolCard):
    """A card whose hooks go wrong the ways a card author's do."""

    fault: str = "none"

    def get_tools(self) -> list[Callable[..., Any]]:
        if self.fault == "raises":
            return [{}["counter"]]
        if self.fault == "refuses":
            raise ValueError("limit must be positive")
        return None  # type: ignore[return-value]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        return []  # type: ignore[return-value]


def test_a_hook_that_raises_or_returns_no_collection_names_the_card_and_the_hook(
    agent: FakeAgent,
) -> None:
    from akgentic.tool import CardHookError

    with pytest.raises(CardHookError) as raised:
        ToolFactory([Tally(fault="raises")], observer=agent).get_tools()
    assert str(raised.value) == (
        "Tally.get_tools() raised KeyError: 'counter': fix the card's get_tools"
    )
    assert isinstance(raised.value.__cause__, KeyError)
    with pytest.raises(CardHookError, match=r"^Tally.get_tools\(\) returned NoneType, not a list"):
        ToolFactory([Tally(fault="none")], observer=agent).get_tools()
    with pytest.raises(CardHookError, match=r"returned list, not a dict of commands: return \{\}"):
        ToolFactory([Tally()], observer=agent).get_command_registry()
    # a card refusing its own configuration keeps its type, its words after the card's name
    with pytest.raises(ValueError, match=r"^Tally.get_tools\(\): limit must be positive$"):
        ToolFactory([Tally(fault="refuses")], observer=agent).get_tools()

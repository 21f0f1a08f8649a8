"""ToolsetCard and ToolGroup: validation, <set>_<verb> naming, any member card (tools from
get_tools() or toolsets from get_toolsets(), an MCP server's stand-in here), the members'
other channels, wiring and serialization."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError
from pydantic_ai import Agent
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import FunctionToolset

from akgentic.agent import AgentConfig
from akgentic.core.serialization import deserialize, serialize
from akgentic.tool.core import (
    COMMAND,
    BaseToolParam,
    ContextState,
    RetriableError,
    ToolCard,
    ToolFactory,
)
from akgentic.tool.toolsets import (
    ToolGroup,
    ToolsetCard,
    group_tool_name,
    toolset_of,
)

from ..conftest import EventObserver


class Films(ToolCard):
    """Two plain tools; ``info`` refuses a negative id with a RetriableError."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def search(query: str) -> str:
            """Search films by title."""
            return f"found {query}"

        def info(id: int) -> str:
            """Details of one film."""
            if id < 0:
                raise RetriableError("ids are 0 or more")
            return f"film {id}"

        return [search, info]


class Remote(ToolCard):
    """A card whose capability comes as a runtime toolset, like an MCP server's."""

    def get_toolsets(self) -> list[Any]:
        def play(id: int) -> str:
            """Play a film."""
            return f"playing {id}"

        def media_stop() -> str:
            """Stop playing (already named for the set)."""
            return "stopped"

        return [FunctionToolset([play, media_stop])]


class Empty(BaseToolParam):
    expose: set[Any] = {COMMAND}


class Chatty(ToolCard):
    """A member with a prompt, a context provider and a command besides a tool."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def ping() -> str:
            """Ping."""
            return "pong"

        return [ping]

    def get_system_prompts(self) -> list[Callable[[], str]]:
        return [lambda: "chatty prompt"]

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        def chatty_state() -> ContextState | None:
            return None

        return [chatty_state]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        def chatty() -> str:
            """Say hi."""
            return "hi"

        return {Empty: chatty}


def media() -> ToolsetCard:
    return ToolsetCard(
        name="media", description="Films: search, details, playback", cards=[Films(), Remote()]
    )


def run(group: ToolGroup, *calls: ToolCallPart) -> tuple[list[AgentInfo], list[ModelMessage]]:
    """A plain pydantic-ai run with the group as a toolset; the model makes ``calls``."""
    infos: list[AgentInfo] = []
    steps = [*calls]

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        infos.append(info)
        if steps:
            return ModelResponse(parts=[steps.pop(0)])
        return ModelResponse(parts=[TextPart("done")])

    result = Agent(FunctionModel(model), toolsets=[group]).run_sync("go")
    return infos, result.all_messages()


def returns(messages: list[ModelMessage]) -> list[str]:
    return [
        str(part.content)
        for message in messages
        for part in message.parts
        if getattr(part, "part_kind", "") in ("tool-return", "retry-prompt")
    ]


# -- naming --
def test_group_tool_names() -> None:
    assert group_tool_name("media", "search") == "media_search"
    assert group_tool_name("media", "media_stop") == "media_stop"
    assert group_tool_name("media", "mediastop") == "media_mediastop"


def test_every_member_tool_and_toolset_is_grouped_under_the_set_name() -> None:
    [group] = media().get_toolsets()
    assert isinstance(group, ToolGroup)
    assert (group.name, group.description) == ("media", "Films: search, details, playback")
    infos, _ = run(group)
    tools = {t.name: t for t in infos[0].function_tools}
    assert sorted(tools) == ["media_info", "media_play", "media_search", "media_stop"]
    assert {toolset_of(t) for t in tools.values()} == {"media"}
    assert tools["media_search"].description == "Search films by title."


def test_calls_reach_the_member_under_its_own_name() -> None:
    [group] = media().get_toolsets()
    _, messages = run(
        group,
        ToolCallPart("media_search", {"query": "Alien"}),
        ToolCallPart("media_play", {"id": 7}),
        ToolCallPart("media_stop", {}),
    )
    assert returns(messages) == ["found Alien", "playing 7", "stopped"]


def test_a_member_retriable_error_reaches_the_model_as_a_retry() -> None:
    [group] = media().get_toolsets()
    _, messages = run(group, ToolCallPart("media_info", {"id": -1}))
    [answer] = returns(messages)
    assert "ids are 0 or more" in answer


def test_a_member_failing_is_named_to_the_model_by_its_name_in_the_set() -> None:
    """What the wrappers say of a tool that broke names it as the model called it: a plain
    tool (the member factory's wrapper) and a runtime toolset's (its guard), both."""

    class Broken(ToolCard):
        def get_tools(self) -> list[Callable[..., Any]]:
            def info(id: int) -> str:
                """Details of one film."""
                raise KeyError(id)

            return [info]

        def get_toolsets(self) -> list[Any]:
            def play(id: int) -> str:
                """Play a film."""
                raise KeyError(id)

            return [FunctionToolset([play])]

    card = ToolsetCard(name="media", description="d", cards=[Broken()])
    assert [c.called_as("info") for c in card.cards] == ["media_info"]
    [group] = card.get_toolsets()
    _, messages = run(
        group, ToolCallPart("media_info", {"id": 1}), ToolCallPart("media_play", {"id": 2})
    )
    info, play = returns(messages)
    assert info.startswith("media_info failed (KeyError: 1). Try again; if it fails again, report")
    assert "report that media_info is not working" in info
    assert play.startswith("media_play failed (KeyError: 2).")
    assert "report that media_play is not working" in play


def test_a_member_is_told_its_set_however_the_card_is_made() -> None:
    """Built, read back from data, or given a member later: the members name their tools
    as the set does once it is wired."""
    built = ToolsetCard(name="media", description="d", cards=[Films()])
    assert built.cards[0].called_as("search") == "media_search"
    again = deserialize(serialize(built))
    assert again.cards[0].called_as("search") == "media_search"
    later = Chatty()
    built.cards.append(later)
    assert later.called_as("ping") == "ping"  # not yet: the set is told at wiring
    ToolFactory([built], observer=EventObserver())
    assert later.called_as("ping") == "media_ping"
    assert Films().called_as("search") == "search"  # a card in no set


def test_two_members_producing_one_name_is_an_error_naming_it() -> None:
    card = ToolsetCard(name="media", description="d", cards=[Films(), Films()])
    with pytest.raises(ValueError, match="toolset 'media'.*'search'"):
        card.get_toolsets()

    class Prefixed(ToolCard):  # "media_search" clashes with Films' "search" once grouped
        def get_toolsets(self) -> list[Any]:
            def media_search() -> str:
                """Search."""
                return ""

            return [FunctionToolset([media_search])]

    [group] = ToolsetCard(name="media", description="d", cards=[Films(), Prefixed()]).get_toolsets()
    with pytest.raises(
        UserError, match="toolset 'media': two member tools are both named 'media_search'"
    ):
        run(group)


def test_a_toolset_card_serves_no_tool_directly() -> None:
    assert media().get_tools() == []
    factory = ToolFactory([media()])
    assert factory.get_tools() == []
    assert [type(t) for t in factory.get_toolsets()] == [ToolGroup]


# -- the members' other channels --
def test_members_prompts_context_and_commands_are_served_as_usual() -> None:
    card = ToolsetCard(name="chat", description="d", cards=[Chatty()])
    factory = ToolFactory([card], observer=EventObserver())
    assert [p() for p in factory.get_system_prompts()] == ["chatty prompt"]
    assert [p.__name__ for p in factory.get_context_states()] == ["chatty_state"]
    assert "chatty" in factory.get_command_registry()


def test_the_observer_reaches_the_members() -> None:
    observer = EventObserver()
    card = ToolsetCard(name="chat", description="d", cards=[Chatty()])
    ToolFactory([card], observer=observer)
    assert card.cards[0].observer_or_none() is observer


def test_a_member_dependency_outside_the_set_becomes_the_cards_own() -> None:
    class Needy(ToolCard):
        def depends_on(self) -> list[str | type[ToolCard]]:
            return ["Films", "Chatty"]

    card = ToolsetCard(name="x", description="d", cards=[Needy(), Films()])
    assert card.depends_on() == ["Chatty"]
    ordered = ToolFactory([card, Chatty()]).tool_cards
    assert [type(c).__name__ for c in ordered] == ["Chatty", "ToolsetCard"]


# -- validation and data --
@pytest.mark.parametrize("name", ["", "media_x", "1media", "a" * 33, "me dia"])
def test_a_bad_name_is_refused(name: str) -> None:
    with pytest.raises(ValidationError, match="toolset name"):
        ToolsetCard(name=name, description="d", cards=[Films()])


@pytest.mark.parametrize("description", ["", "  ", "two\nlines", "two\u2028lines", "a\x85b"])
def test_a_description_is_one_line(description: str) -> None:
    with pytest.raises(ValidationError):
        ToolsetCard(name="media", description=description, cards=[Films()])


def test_toolsets_do_not_nest_and_are_not_empty() -> None:
    with pytest.raises(ValidationError, match="toolsets do not nest"):
        ToolsetCard(name="outer", description="d", cards=[media()])
    with pytest.raises(ValidationError):
        ToolsetCard(name="media", description="d", cards=[])


def test_a_mailbox_reading_its_mail_is_refused_in_a_set_and_one_that_only_stops_is_kept() -> None:
    """The agent reads mail through the call named ``read_mailbox``: in a set the model
    would call ``<set>_read_mailbox``, which reads nothing. ``/stop`` alone keeps its name."""
    from akgentic.tool.mailbox import MailboxTool

    with pytest.raises(ValidationError, match="MailboxTool cannot be in a toolset.*on the agent"):
        ToolsetCard(name="mail", description="d", cards=[MailboxTool()])
    kept = ToolsetCard(name="mail", description="d", cards=[MailboxTool(read_mailbox=False)])
    assert [type(c).__name__ for c in kept.cards] == ["MailboxTool"]


SEARCH_AGAIN = (
    "turns on web_search, web_fetch, web_crawl again, as {first} does: a member has each "
    "capability once. Remove the duplicate card, or turn those off on one of them "
    "(web_search: false)"
)


def test_a_capability_twice_among_a_sets_members_is_refused_as_the_card_is_read() -> None:
    """Not when the group is built at the team's start: the card's own error, one line
    naming both members and what to do, as for an agent's tools."""
    with pytest.raises(ValidationError) as caught:
        ToolsetCard.model_validate(
            {"name": "web", "description": "d", "cards": [{"type": "SearchTool"}] * 2}
        )
    [error] = caught.value.errors()
    assert error["loc"] == ("cards",)
    assert error["msg"] == "Value error, toolset 'web': cards[1] (SearchTool) " + (
        SEARCH_AGAIN.format(first="cards[0] (SearchTool)")
    )


@pytest.mark.parametrize(
    ("tools", "said"),
    [
        (  # on the agent and in a set: the set's web_search keeps its name, a clash
            [
                {"type": "SearchTool"},
                {
                    "type": "ToolsetCard",
                    "name": "web",
                    "description": "d",
                    "cards": [{"type": "SearchTool"}],
                },
            ],
            "tools[1].cards[0] (SearchTool, in toolset 'web') "
            + SEARCH_AGAIN.format(first="tools[0] (SearchTool)"),
        ),
        (  # in two sets: their commands and context would be served twice
            [
                {
                    "type": "ToolsetCard",
                    "name": n,
                    "description": "d",
                    "cards": [{"type": "SearchTool"}],
                }
                for n in ("a", "b")
            ],
            "tools[1].cards[0] (SearchTool, in toolset 'b') "
            + SEARCH_AGAIN.format(first="tools[0].cards[0] (SearchTool, in toolset 'a')"),
        ),
        (  # two sets of one name: one enable_toolset name, tools named alike
            [
                {"type": "ToolsetCard", "name": "a", "description": "d", "cards": [c]}
                for c in ({"type": "SearchTool"}, {"type": "PlanningTool"})
            ],
            "tools[1] (ToolsetCard) is named 'a' again, as tools[0] (ToolsetCard) is: its "
            "tools would be named alike (a_<verb>). Rename one toolset, or merge their cards "
            "into one",
        ),
    ],
    ids=["agent-and-set", "two-sets", "one-name"],
)
def test_a_toolset_repeating_the_agents_tools_is_refused_as_the_card_is_read(
    tools: list[dict[str, Any]], said: str
) -> None:
    """Found only when the agent started (a command or a set name twice) or when the set
    was enabled (a tool name twice): now the agent's card says so, naming both places."""
    with pytest.raises(ValidationError) as caught:
        AgentConfig.model_validate({"name": "@A", "role": "A", "tools": tools})
    [error] = caught.value.errors()
    assert error["loc"] == ("tools",)
    assert error["msg"] == f"Value error, @A: {said}"


def test_distinct_capabilities_across_the_agent_and_its_sets_are_accepted() -> None:
    config = AgentConfig.model_validate(
        {
            "name": "@A",
            "role": "A",
            "tools": [
                {"type": "SearchTool", "web_crawl": False},
                {
                    "type": "ToolsetCard",
                    "name": "crawl",
                    "description": "d",
                    "cards": [{"type": "SearchTool", "web_search": False, "web_fetch": False}],
                },
            ],
        }
    )
    assert [type(card).__name__ for card in config.tools] == ["SearchTool", "ToolsetCard"]


def test_unknown_fields_are_refused() -> None:
    with pytest.raises(ValidationError, match="colour"):
        ToolsetCard(name="media", description="d", cards=[Films()], colour="red")  # type: ignore[call-arg]


def test_a_card_from_yaml_data_names_its_members_by_type() -> None:
    config = AgentConfig(
        name="@A",
        tools=[
            {
                "type": "ToolsetCard",
                "name": "plan",
                "description": "The task board",
                # Films by its dotted path: other test modules define a Films card too
                "cards": [{"type": "PlanningTool"}, f"{__name__}.Films"],
            }
        ],
    )
    [card] = config.tools
    assert isinstance(card, ToolsetCard)
    assert type(card.cards[0]).__name__ == "PlanningTool"
    assert type(card.cards[1]) is Films
    with pytest.raises(ValidationError, match="unknown tool card 'Nope'"):
        ToolsetCard.model_validate({"name": "x", "description": "d", "cards": [{"type": "Nope"}]})


def test_a_card_round_trips_through_serialization() -> None:
    card = media()
    again = deserialize(serialize(card))
    assert again == card and isinstance(again.cards[1], Remote)


def test_the_group_enters_and_exits_its_member_toolsets() -> None:
    entered: list[str] = []

    class Tracked(FunctionToolset[Any]):
        async def __aenter__(self) -> Any:
            entered.append("in")
            return self

        async def __aexit__(self, *args: Any) -> bool | None:
            entered.append("out")
            return None

    class Server(ToolCard):
        def get_toolsets(self) -> list[Any]:
            return [Tracked([])]

    [group] = ToolsetCard(name="srv", description="d", cards=[Server()]).get_toolsets()

    async def enter_and_exit() -> None:
        async with group:
            assert entered == ["in"]

    asyncio.run(enter_and_exit())
    assert entered == ["in", "out"]


def test_a_member_given_as_data_that_does_not_validate_is_named_by_its_position() -> None:
    with pytest.raises(ValidationError) as caught:
        ToolsetCard.model_validate(
            {
                "name": "web",
                "description": "d",
                "cards": [{"type": "SearchTool"}, {"type": "SearchTool", "bogus": 1}],
            }
        )
    [error] = caught.value.errors()
    assert (error["loc"], error["type"]) == (("cards", 1, "bogus"), "extra_forbidden")

"""A card's command never hides a built-in, nor another card's: the agent refuses to start.

A card command named like one of the agent's built-ins (``/clear``, ``/help``...) used to
replace it in silence, and one named like the chat's ``/quit`` could never be typed; two
cards giving one name would hide one of them. Each is one line at start, naming the card
and the command and saying what to do. A command of its own name works as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai.messages import ModelResponse, TextPart

from akgentic.agent import BUILTIN_COMMANDS, CHAT_COMMANDS, AgentConfig, BaseAgent
from akgentic.core import ActorSystem, ErrorMessage, UserMessage
from akgentic.tool import BaseToolParam, ToolCard

from ..core.conftest import Team, eventually
from .conftest import Script, ScriptedAgent

TAKEN = "/compact, /clear, /stop, /help, /quit, /exit"


def command_card(label: str, name: str) -> ToolCard:
    """A card of its own class (``label``) giving one command named ``name``."""
    param = type(f"{label}Param", (BaseToolParam,), {})

    def get_commands(self: ToolCard) -> dict[type[BaseToolParam], Callable[..., Any]]:
        def command(times: int = 1) -> str:
            """Count up."""
            return f"{label} counted {times}"

        command.__name__ = name
        return {param: command}

    card: ToolCard = type(label, (ToolCard,), {"get_commands": get_commands})()
    return card


def start(system: ActorSystem, team: Team, cards: list[ToolCard]) -> Any:
    script = Script(lambda messages, info: ModelResponse(parts=[TextPart("never")]))
    cls: type[BaseAgent] = type("CommandAgent", (ScriptedAgent,), {"script": script})
    return system.createActor(
        cls,
        config=AgentConfig(name="@Agent", role="Assistant", tools=cards, stream_events=False),
        team_id=team.team_id,
    )


def test_the_reserved_names_are_the_agents_and_the_chats() -> None:
    assert ", ".join(f"/{n}" for n in (*BUILTIN_COMMANDS, *CHAT_COMMANDS)) == TAKEN


def test_a_card_command_named_like_a_built_in_stops_the_agent_at_start(
    system: ActorSystem, team: Team
) -> None:
    agent = start(system, team, [command_card("Wiper", "clear")])
    [error] = team.recorder.wait_for_type(ErrorMessage)
    assert (
        f"Wiper's command /clear has the name of the agent's built-in /clear: rename the "
        f"command (names taken: {TAKEN})" in error.content
    )
    eventually(lambda: not agent.is_alive())


def test_a_card_command_named_like_the_chats_quit_stops_the_agent_at_start(
    system: ActorSystem, team: Team
) -> None:
    agent = start(system, team, [command_card("Leaver", "quit")])
    [error] = team.recorder.wait_for_type(ErrorMessage)
    assert (
        "Leaver's command /quit has the name of the chat's /quit (it leaves the chat): "
        "rename the command" in error.content
    )
    eventually(lambda: not agent.is_alive())


def test_only_mailbox_tool_registers_stop(system: ActorSystem, team: Team) -> None:
    agent = start(system, team, [command_card("Halter", "stop")])
    [error] = team.recorder.wait_for_type(ErrorMessage)
    assert "Halter's command /stop has the name of the agent's built-in /stop" in error.content
    eventually(lambda: not agent.is_alive())


def test_two_cards_giving_one_command_stop_the_agent_at_start(
    system: ActorSystem, team: Team
) -> None:
    agent = start(system, team, [command_card("Left", "tally"), command_card("Right", "tally")])
    [error] = team.recorder.wait_for_type(ErrorMessage)
    assert (
        "command /tally is registered twice: by Left and by Right; rename the command on "
        "one of them" in error.content
    )
    eventually(lambda: not agent.is_alive())


def test_a_card_command_of_its_own_name_works_beside_the_built_ins(
    system: ActorSystem, team: Team
) -> None:
    agent = start(system, team, [command_card("Counter", "tally")])
    reply = system.ask(agent, UserMessage(content="/tally 3"), timeout=30)
    assert reply.content == "Counter counted 3"  # type: ignore[attr-defined]
    cleared = system.ask(agent, UserMessage(content="/clear"), timeout=30)
    assert cleared.content == "Conversation cleared."  # type: ignore[attr-defined]
    commands = system.proxy_ask(agent, BaseAgent, timeout=30).get_commands()
    assert commands[0] == "tally" and set(BUILTIN_COMMANDS) <= set(commands)

"""Two agents answering each other stop at the team's ``max_agent_hops``: the messages
between agents in a row since the person last wrote. The agent that would send one more is
told, in its run, to stop and report to the person, and the team's stream says why; a
person's message starts the count again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from akgentic.agent import AgentHopLimitReached, AgentMessage
from akgentic.agent.turn import TurnEndedEvent
from akgentic.core import ActorSystem, ErrorMessage, Orchestrator, SentMessage, WarningMessage
from akgentic.core.orchestrator import DEFAULT_MAX_AGENT_HOPS
from akgentic.llm import register_model
from akgentic.storage import open_storage, sqlite_url
from akgentic.team import TeamCard, TeamCardError, TeamManager, TeamRuntime

from .conftest import answer

CARD = """\
name: ping-pong
entry_point: "@A"
max_agent_hops: 4
members:
  - card: {role: A, config: {name: "@A", models: registered:hops-A}}
  - card: {role: B, config: {name: "@B", models: registered:hops-B}}
"""


def told(messages: list[ModelMessage]) -> str | None:
    """The feedback on a refused answer, if the run's last request gives one (whatever
    part pydantic-ai gives it in: a refused text answer's, a refused tool call's)."""
    for part in messages[-1].parts:
        content = str(getattr(part, "content", ""))
        if "max_agent_hops" in content:
            return content
    return None


def player(
    name: str, retries: list[str], *, addressed: bool = False, stubborn: bool = False
) -> FunctionModel:
    """An agent that answers every agent's message with a message back, for ever — a plain
    answer, or with ``addressed`` a structured one naming the other agent; on a person's,
    it writes to the other agent first (@A to @B). Told to stop, it reports — unless
    ``stubborn``: it writes to the other agent again."""
    other = "@B" if name == "@A" else "@A"

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        retry = told(messages)
        if retry is not None:
            retries.append(retry)
        if retry is not None and not stubborn:
            return ModelResponse(parts=[TextPart(f"{name}: we went round in circles")])
        if addressed or "start" in str(messages[-1]):
            args = {"messages": [{"to": other, "content": "ping"}]}
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])
        return ModelResponse(parts=[TextPart("ping" if name == "@A" else "pong")])

    return FunctionModel(respond)


def pair(human: str | None, limit: int) -> TeamCard:
    return TeamCard.model_validate(
        {
            "name": "ping-pong",
            "entry_point": "@A",
            "human": human,
            "max_agent_hops": limit,
            "members": [
                {"card": {"role": r, "config": {"name": f"@{r}", "models": f"registered:hops-{r}"}}}
                for r in ("A", "B")
            ],
        }
    )


@pytest.fixture
def manager(tmp_path: Path, system: ActorSystem) -> Iterator[TeamManager]:
    manager = TeamManager(system, open_storage(sqlite_url(tmp_path / "team.db")))
    yield manager
    manager.shutdown()


def report_type(runtime: TeamRuntime, seq: int) -> str:
    """The type of the message to the person logged at ``seq``."""
    (record,) = runtime.history(after=seq - 1, limit=1)
    assert isinstance(record.message, SentMessage)
    assert isinstance(record.message.message, AgentMessage)
    return record.message.message.type


def between_agents(runtime: TeamRuntime, upto: int) -> list[tuple[str, str, int]]:
    """(sender, recipient, agent_hops) of each message between agents up to seq ``upto``."""
    found = []
    for record in runtime.history(after=0, limit=10_000):
        msg = record.message
        if record.seq > upto:
            break
        if (
            isinstance(msg, SentMessage)
            and isinstance(msg.message, AgentMessage)
            and msg.sender is not None
            and msg.recipient is not None
            and msg.recipient.name != "@Human"
        ):
            found.append((msg.sender.name, msg.recipient.name, msg.message.agent_hops))
    return found


def test_two_agents_answering_each_other_stop_at_the_limit_and_a_person_starts_it_again(
    tmp_path: Path, manager: TeamManager
) -> None:
    path = tmp_path / "ping-pong.yaml"
    path.write_text(CARD)
    card = TeamCard.from_yaml(path)
    assert card.max_agent_hops == 4
    retries: list[str] = []
    with (
        register_model("hops-A", player("@A", retries)),
        register_model("hops-B", player("@B", retries)),
    ):
        runtime = manager.create_team(card)
        runtime.send("start")
        seq, said = answer(runtime, runtime.first_seq)
        assert said == "@A: we went round in circles"  # reported to the person
        assert report_type(runtime, seq) == "response"  # the answer to the person's message
        round_trip = [("@A", "@B", 1), ("@B", "@A", 2), ("@A", "@B", 3), ("@B", "@A", 4)]
        assert between_agents(runtime, seq) == round_trip  # the fifth was refused
        refusal = (
            "Stop: do not write to @B. The agents of this team have sent one another 4 "
            "messages in a row since the person last wrote, the most the team allows "
            "(max_agent_hops: 4): no agent may write to another until a person writes again. "
            "Instead, answer @Human with where the work stands and what you need from them "
            "(your plain answer now goes to @Human)."
        )
        assert len(retries) == 1 and refusal in retries[0]  # told once, in the run
        warnings = [
            r.message
            for r in runtime.history(after=0, limit=10_000)
            if isinstance(r.message, AgentHopLimitReached)
        ]
        assert len(warnings) == 1
        warning = warnings[0]
        assert warning.sender is not None and warning.sender.name == "@A"
        assert (warning.limit, warning.to) == (4, ["@B"])
        assert warning.content == (
            "@A was stopped from writing to @B: agents sent one another 4 messages in a row "
            "since the person last wrote, the team's max_agent_hops; it reports to the person "
            "instead. Write to a member to let the agents go on."
        )

        runtime.send("start")  # the person writes: the count starts again
        upto, said = answer(runtime, seq)
        assert said == "@A: we went round in circles"
        assert between_agents(runtime, upto) == round_trip * 2
        assert len(retries) == 2


def test_an_answer_naming_an_agent_past_the_limit_is_refused_and_the_report_goes_to_the_person(
    manager: TeamManager,
) -> None:
    """@B answers @A by name (an ``AgentReply``): refused past the limit like a plain answer;
    told, its plain answer goes to the person, not to @A who wrote to it."""
    retries: list[str] = []
    with (
        register_model("hops-A", player("@A", retries)),
        register_model("hops-B", player("@B", retries, addressed=True)),
    ):
        runtime = manager.create_team(pair("@Human", 1))
        runtime.send("start")
        seq, said = answer(runtime, runtime.first_seq)
        assert said == "@B: we went round in circles"
        assert between_agents(runtime, seq) == [("@A", "@B", 1)]
        assert len(retries) == 1 and "Stop: do not write to @A." in retries[0]
        (warning,) = [
            r.message
            for r in runtime.history(after=0, limit=10_000)
            if isinstance(r.message, AgentHopLimitReached)
        ]
        assert warning.sender is not None and warning.sender.name == "@B"
        assert (warning.limit, warning.to) == (1, ["@A"])


def test_an_agent_that_writes_on_to_agents_when_told_fails_its_turn_with_a_warning(
    manager: TeamManager,
) -> None:
    """The model may ignore the words: its retries run out, nothing is sent, and the turn
    ends failed with a warning saying why (not a traceback, as for a bug)."""
    retries: list[str] = []
    with (
        register_model("hops-A", player("@A", retries)),
        register_model("hops-B", player("@B", retries, addressed=True, stubborn=True)),
    ):
        runtime = manager.create_team(pair("@Human", 1))
        runtime.send("start")
        ended = None
        for record in runtime.follow(runtime.first_seq, idle_timeout=60):
            event = getattr(record.message, "event", None)
            if isinstance(event, TurnEndedEvent) and event.agent == "@B":
                ended = event
                upto = record.seq
                break
        assert ended is not None and ended.outcome == "failed"
        stopped = (
            "@B kept writing to other agents past the team's max_agent_hops: nothing was "
            "sent; write to a member to let the agents go on"
        )
        assert ended.error == stopped
        assert between_agents(runtime, upto) == [("@A", "@B", 1)]
        logged = list(runtime.history(after=0, limit=10_000))
        assert [r.message.content for r in logged if isinstance(r.message, WarningMessage)][
            -1
        ] == stopped
        assert not [r for r in logged if isinstance(r.message, ErrorMessage)]


def test_without_a_person_the_agent_is_told_its_answer_stays_on_the_log(
    manager: TeamManager,
) -> None:
    retries: list[str] = []
    with (
        register_model("hops-A", player("@A", retries)),
        register_model("hops-B", player("@B", retries)),
    ):
        runtime = manager.create_team(pair(None, 1))
        runtime.send("start")
        ended = None
        for record in runtime.follow(runtime.first_seq, idle_timeout=60):
            event = getattr(record.message, "event", None)
            if isinstance(event, TurnEndedEvent) and event.agent == "@B":
                ended = record.seq
                break
        assert ended is not None and between_agents(runtime, ended) == [("@A", "@B", 1)]
        assert len(retries) == 1
        assert (
            "Instead, end your turn with a plain answer saying where the work stands: it stays "
            "on the team's log for whoever runs the team."
        ) in retries[0]
        sent = [
            r for r in runtime.history(after=0, limit=10_000) if isinstance(r.message, SentMessage)
        ]
        senders = [r.message.sender.name for r in sent if r.message.sender is not None]
        assert "@B" not in senders  # its report went to nobody: @A was not written to


def test_a_resumed_team_keeps_its_bound(manager: TeamManager) -> None:
    with register_model("hops-A", TestModel()), register_model("hops-B", TestModel()):
        runtime = manager.create_team(pair("@Human", 3))
        manager.stop_team(runtime.team_id)
        resumed = manager.resume_team(runtime.team_id)
        orchestrator = resumed.system.proxy_ask(resumed.orchestrator, Orchestrator, timeout=10)
        assert orchestrator.get_max_agent_hops() == 3


def test_the_bound_is_thirty_by_default_at_least_one_and_null_removes_it() -> None:
    def card(**extra: object) -> TeamCard:
        return TeamCard.model_validate(
            {
                "name": "t",
                "entry_point": "@A",
                "members": [{"card": {"role": "A", "config": {"name": "@A"}}}],
                **extra,
            }
        )

    assert card().max_agent_hops == DEFAULT_MAX_AGENT_HOPS == 30
    assert card(max_agent_hops=None).max_agent_hops is None
    with pytest.raises(ValidationError, match="max_agent_hops"):
        card(max_agent_hops=0)


@pytest.mark.parametrize("flag", ["true", "false", "yes"])
def test_a_boolean_bound_in_a_yaml_card_is_refused_at_its_line(tmp_path: Path, flag: str) -> None:
    """``max_agent_hops: true`` was read as 1 (pydantic's lax int): every agent stopped at
    its first message to another. A boolean is refused saying what the field takes."""
    path = tmp_path / "team.yaml"
    path.write_text(
        "name: t\nentry_point: '@A'\nmembers: [{card: {role: A, config: {name: '@A'}}}]\n"
        f"max_agent_hops: {flag}\n"
    )
    with pytest.raises(TeamCardError) as refused:
        TeamCard.from_yaml(path)
    assert str(refused.value) == (
        f"{path}:4: max_agent_hops: a boolean is not a count: give a whole number of "
        f"messages, 1 or more (null: no bound)"
    )
    path.write_text(path.read_text().replace(f"max_agent_hops: {flag}", "max_agent_hops: 1"))
    assert TeamCard.from_yaml(path).max_agent_hops == 1

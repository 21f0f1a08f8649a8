"""A team runs on a model the test builds (pydantic-ai's FunctionModel), through the public
way: ``register_model`` and the roster key ``registered:<name>`` — from Python, from a YAML
card, and across a resume, which needs the name registered again (docs/testing.md)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.agent import AgentConfig
from akgentic.core import ActorSystem, AgentCard
from akgentic.llm import register_model
from akgentic.storage import TeamStatus, open_storage, sqlite_url
from akgentic.team import MemberSpec, ResumeError, TeamCard, TeamManager

from .conftest import answer


def asked(messages: list[ModelMessage]) -> str:
    """The text of the latest user prompt the model was given."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


def saying(prefix: str) -> FunctionModel:
    """A model that answers ``prefix`` and the number of user prompts it has seen, so a
    test knows both which model answered and how much of the conversation it was given."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompts = sum(
            isinstance(part, UserPromptPart)
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
        )
        return ModelResponse(parts=[TextPart(f"{prefix} (prompt {prompts})")])

    return FunctionModel(respond)


def solo(models: str) -> TeamCard:
    analyst = AgentCard(
        role="Analyst",
        agent_class="akgentic.agent.agent.BaseAgent",
        config=AgentConfig(name="@Analyst", role="Analyst", models=models),
    )
    return TeamCard(name="solo", entry_point="@Analyst", members=[MemberSpec(card=analyst)])


@pytest.fixture
def manager(tmp_path: Path, system: ActorSystem) -> Iterator[TeamManager]:
    manager = TeamManager(system, open_storage(sqlite_url(tmp_path / "team.db")))
    yield manager
    manager.shutdown()


def test_an_agent_in_a_team_answers_with_the_function_models_text(manager: TeamManager) -> None:
    with register_model("fake-llm", saying("From the FunctionModel")):
        runtime = manager.create_team(solo("registered:fake-llm"))
        runtime.send("hello")
        _, text = answer(runtime, 0)
    assert text == "From the FunctionModel (prompt 1)"


def test_a_yaml_card_names_a_registered_factory_called_per_role(
    manager: TeamManager, tmp_path: Path
) -> None:
    card = tmp_path / "team.yaml"
    card.write_text(
        "name: pair\n"
        'entry_point: "@Lead"\n'
        "members:\n"
        "  - card:\n"
        "      role: Lead\n"
        "      config: {name: '@Lead', models: 'registered:my-scripted'}\n"
        "  - card:\n"
        "      role: Critic\n"
        "      config: {name: '@Critic', models: 'registered:my-scripted'}\n"
    )
    built: list[str | None] = []

    def factory(role: str | None) -> FunctionModel:
        built.append(role)

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            return ModelResponse(parts=[TextPart(f"{role} read: {asked(messages)}")])

        return FunctionModel(respond)

    with register_model("my-scripted", factory):
        runtime = manager.create_team(TeamCard.from_yaml(card))
        runtime.send("first")
        seq, lead = answer(runtime, 0)
        runtime.send_to("@Critic", "second")
        _, critic = answer(runtime, seq)
    assert lead.startswith("Lead read: ") and "first" in lead
    assert critic.startswith("Critic read: ") and "second" in critic
    # once at the team's check and once at its start, for each member
    assert sorted(built) == ["Critic", "Critic", "Lead", "Lead"]


def test_a_wrong_name_is_one_line_listing_the_registered_names(manager: TeamManager) -> None:
    with (
        register_model("fake-llm", saying("unused")),
        register_model("other", saying("x")),
        pytest.raises(ValueError) as caught,
    ):
        manager.create_team(solo("registered:fake-lm"))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("@Analyst: model 'registered:fake-lm': ")
    assert "(registered: fake-llm, other)" in message
    assert "register_model('fake-lm', model)" in message
    assert manager.storage.teams.list() == []  # refused before anything was stored


def test_a_resume_needs_the_name_registered_again_and_changes_nothing_without_it(
    manager: TeamManager,
) -> None:
    with register_model("fake-llm", saying("before")):
        runtime = manager.create_team(solo("registered:fake-llm"))
        runtime.send("hello")
        seq, text = answer(runtime, 0)
        assert text == "before (prompt 1)"
        team_id = runtime.team_id
        manager.stop_team(team_id)
    storage = manager.storage
    stored = storage.teams.get(team_id)
    assert stored is not None and "registered:fake-llm" in str(stored.card)  # only the name
    last = storage.events.last_seq(team_id)

    with pytest.raises(ResumeError) as caught:
        manager.resume_team(team_id)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("@Analyst: model 'registered:fake-llm': ")
    assert "(registered: none)" in message
    record = storage.teams.get(team_id)
    assert record is not None and record.status == TeamStatus.STOPPED
    assert storage.events.last_seq(team_id) == last  # nothing recorded
    assert manager.lease_of(team_id) is None

    with register_model("fake-llm", saying("after")):
        runtime = manager.resume_team(team_id)
        runtime.send("again")
        _, text = answer(runtime, seq)
    assert text == "after (prompt 2)"  # the new model, given the conversation so far

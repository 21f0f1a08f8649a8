"""MetadataTool: off by default, the template grammar, both validation points, the snapshot,
the degradations — on a real agent asking a real orchestrator."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from akgentic.core import Akgent, BaseConfig
from akgentic.core.serialization import deserialize, serialize
from akgentic.tool import COMMAND, SYSTEM_PROMPT, TOOL_CALL, ToolFactory
from akgentic.tool.metadata import MetadataTool, RenderMetadata, placeholders

from ..conftest import AgentStateWithTools, EventObserver, FakeAgent, Team


class Member(Akgent[BaseConfig, AgentStateWithTools]):
    """A plain agent: the ActorToolObserver the card asks through."""


class Engagement(BaseModel):
    fiscal_year: int
    engagement: str


TEMPLATE = "Fiscal year: {fiscal_year}. Engagement: {engagement}."


@pytest.fixture
def member(team: Team) -> Any:
    address = team.system.createActor(
        Member, config=BaseConfig(name="@Member"), team_id=team.orchestrator.team_id
    )
    return team.system.get_actor(address)


def card(**kwargs: Any) -> MetadataTool:
    return MetadataTool(render_metadata=RenderMetadata(template=TEMPLATE, **kwargs))


def prompt(factory: ToolFactory) -> str:
    (render,) = factory.get_system_prompts()
    return render()


# -- off by default ------------------------------------------------------------------------


def test_unconfigured_card_contributes_nothing_and_needs_nothing() -> None:
    factory = ToolFactory([MetadataTool()], observer=EventObserver())
    assert factory.get_system_prompts() == []
    assert factory.get_commands() == {}
    assert factory.get_tools() == []


def test_true_is_refused_for_want_of_a_template() -> None:
    with pytest.raises(ValidationError, match=r"pass RenderMetadata\(template='...'\)"):
        MetadataTool(render_metadata=True)


# -- the grammar ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "complaint"),
    [
        ("Year {meta.year}", r"placeholder \{meta.year\} at position 5 .* dotted paths"),
        ("{years[0]}", r"placeholder \{years\[0\]\} .* indices"),
        ("{fiscal_year!r}", r"placeholder \{fiscal_year!r\} .* conversions"),
        ("{fiscal_year:>6}", r"placeholder \{fiscal_year:>6\} .* format specs"),
        ("{}", r"placeholder \{\} .* name a metadata field"),
        ("{0}", r"placeholder \{0\} .* positional"),
        ("Year { unclosed", r"literal braces"),
    ],
)
def test_grammar_breaks_raise_value_error_next_to_the_mistake(
    template: str, complaint: str
) -> None:
    with pytest.raises(ValueError, match=complaint):
        RenderMetadata(template=template)


def test_placeholders_in_order_of_first_use_and_literal_braces() -> None:
    assert placeholders("{b} {{not}} {a} {b}") == ["b", "a"]


# -- routing -------------------------------------------------------------------------------


def test_default_exposure_is_prompt_and_command(member: Any) -> None:
    factory = ToolFactory([card()], observer=member)
    assert [p.__name__ for p in factory.get_system_prompts()] == ["team_metadata_prompt"]
    assert factory.get_command_registry().names() == ["team_metadata"]
    assert factory.get_tools() == []
    assert RenderMetadata(template="x").expose == {SYSTEM_PROMPT, COMMAND}


def test_command_only_puts_nothing_in_the_prompt(member: Any) -> None:
    factory = ToolFactory([card(expose={COMMAND})], observer=member)
    assert factory.get_system_prompts() == []
    assert list(factory.get_commands()) == [RenderMetadata]


def test_tool_call_exposure_is_dropped_silently(member: Any) -> None:
    factory = ToolFactory([card(expose={TOOL_CALL})], observer=member)
    assert factory.get_tools() == []
    assert factory.get_system_prompts() == []
    assert factory.get_commands() == {}


# -- rendering and the snapshot ------------------------------------------------------------


def test_metadata_set_before_start_renders_the_block(team: Team, member: Any) -> None:
    team.proxy.set_metadata(Engagement(fiscal_year=2026, engagement="Audit"))
    factory = ToolFactory([card(header="Team context")], observer=member)
    block = "Team context\n\nFiscal year: 2026. Engagement: Audit."
    assert prompt(factory) == block
    assert factory.get_command_registry().dispatch("/team_metadata") == block


def test_empty_header_renders_the_body_alone(team: Team, member: Any) -> None:
    team.proxy.set_metadata(Engagement(fiscal_year=2026, engagement="Audit"))
    factory = ToolFactory([MetadataTool(render_metadata=RenderMetadata(
        template="{{{engagement}}}", header=""
    ))], observer=member)  # fmt: skip
    assert prompt(factory) == "{Audit}"


def test_the_block_is_a_snapshot(team: Team, member: Any) -> None:
    team.proxy.set_metadata(Engagement(fiscal_year=2026, engagement="Audit"))
    factory = ToolFactory([card()], observer=member)
    first = prompt(factory)
    team.proxy.set_metadata(Engagement(fiscal_year=2027, engagement="Review"))
    assert prompt(factory) == first
    assert "2026" in factory.get_command_registry().dispatch("/team_metadata")


def test_the_snapshot_is_kept_in_the_agents_tool_state_for_a_restart(
    team: Team, member: Any
) -> None:
    """The block rendered is written to the agent's ``ToolState``; a card wired afresh on
    that state (a restored agent) serves it, not the metadata set since."""
    team.proxy.set_metadata(Engagement(fiscal_year=2026, engagement="Audit"))
    first = prompt(ToolFactory([card()], observer=member))
    assert member.state.tool_state.metadata_block == first
    team.proxy.set_metadata(Engagement(fiscal_year=2027, engagement="Review"))
    restarted = ToolFactory([card()], observer=member)
    assert prompt(restarted) == first
    assert restarted.get_command_registry().dispatch("/team_metadata") == first
    member.state.tool_state.metadata_block = None  # a new agent: it renders what is set now
    assert "2027" in prompt(ToolFactory([card()], observer=member))


def test_metadata_set_after_start_degrades_then_renders(
    team: Team, member: Any, caplog: pytest.LogCaptureFixture
) -> None:
    factory = ToolFactory([card()], observer=member)  # no metadata yet: wiring is fine
    with caplog.at_level(logging.WARNING, logger="akgentic.tool.metadata.tool"):
        assert prompt(factory) == ""  # degraded: empty block, nothing cached
        assert prompt(factory) == ""  # each turn asks again, and says so once, not each turn
    assert "holds no metadata yet" in caplog.text
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert "holds no metadata yet" in factory.get_command_registry().dispatch("team_metadata")
    team.proxy.set_metadata(Engagement(fiscal_year=2026, engagement="Audit"))
    assert prompt(factory) == "Team context\n\nFiscal year: 2026. Engagement: Audit."


# -- names: at wiring when metadata exists, else at the first render -----------------------


def test_unknown_name_raises_at_wiring_when_metadata_exists(team: Team, member: Any) -> None:
    team.proxy.set_metadata(Engagement(fiscal_year=2026, engagement="Audit"))
    bad = MetadataTool(render_metadata=RenderMetadata(template="{fiscal_year} {client}"))
    with pytest.raises(ValueError, match=r"\{client\}.*Engagement.*fiscal_year, engagement"):
        ToolFactory([bad], observer=member)


def test_unknown_name_without_metadata_degrades_at_first_render(
    team: Team, member: Any, caplog: pytest.LogCaptureFixture
) -> None:
    bad = MetadataTool(render_metadata=RenderMetadata(template="{fiscal_year} {client}"))
    factory = ToolFactory([bad], observer=member)  # nothing to check against yet
    team.proxy.set_metadata(Engagement(fiscal_year=2026, engagement="Audit"))
    with caplog.at_level(logging.ERROR, logger="akgentic.tool.metadata.tool"):
        assert prompt(factory) == ""
    (record,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "{client}" in record.getMessage()
    assert "{client}" in factory.get_command_registry().dispatch("/team_metadata")


# -- what the card needs -------------------------------------------------------------------


def test_a_configured_card_needs_an_actor_observer() -> None:
    with pytest.raises(TypeError, match="ActorToolObserver"):
        ToolFactory([card()], observer=EventObserver())


def test_an_agent_outside_a_team_degrades() -> None:
    agent = FakeAgent()  # orchestrator is None; held here, as its actor would be
    factory = ToolFactory([card()], observer=agent)
    assert prompt(factory) == ""
    assert "no orchestrator" in factory.get_command_registry().dispatch("/team_metadata")


def test_a_gone_agent_renders_nothing() -> None:
    agent = FakeAgent()
    factory = ToolFactory([card()], observer=agent)
    del agent
    assert prompt(factory) == ""
    assert "gone" in factory.get_command_registry().dispatch("/team_metadata")


def test_card_round_trips_and_deep_copies_once_rendered(team: Team, member: Any) -> None:
    team.proxy.set_metadata(Engagement(fiscal_year=2026, engagement="Audit"))
    wired = card(header="Context")
    prompt(ToolFactory([wired], observer=member))
    assert deserialize(serialize(wired)) == card(header="Context")
    assert wired.model_copy(deep=True).render_metadata == wired.render_metadata

"""How a compaction's summary is asked for is the compaction config's choice
(``summary_request``): on the agent's own prefix (its instructions and tool definitions, the
history as messages, one ask), or bounded (short instructions, no tools, the conversation as
text). Automatic compaction, before a turn and within one, and ``/compact`` all honour it,
and a team card's YAML sets it."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Literal

import pytest
from pydantic_ai.messages import CompactionPart, ModelRequest, ToolAvailabilityDeltaPart

from akgentic.agent import AgentConfig, BaseAgent
from akgentic.agent.config import CompactionConfig
from akgentic.core import ActorSystem, Orchestrator
from akgentic.llm import ModelRoster
from akgentic.team import TeamCard, TeamCardError
from akgentic.tool.toolsets import ToolsetCard

from ..core.conftest import Team
from ..processes import wait_until
from .test_base_agent import Calc, start
from .test_compaction_lifecycle import WINDOW, ask, is_summary
from .test_summary_overflow import is_bounded, refusing_past
from .test_toolsets import Films


@pytest.mark.parametrize("trigger", ["/compact", "before a turn", "within a turn"])
@pytest.mark.parametrize("summary_request", ["prefix", "bounded"])
def test_every_compaction_asks_for_its_summary_as_configured(
    system: ActorSystem, team: Team, trigger: str, summary_request: str
) -> None:
    within = trigger == "within a turn"
    script = refusing_past(10**9, calls=6 if within else 0)  # refuses nothing
    compaction = CompactionConfig.model_validate(
        {
            "threshold": {"/compact": 0.99, "before a turn": 0.3, "within a turn": 0.5}[trigger],
            "keep_last": 2 if within else 1,
            "summary_request": summary_request,
        }
    )
    agent = start(system, team, script, tools=[Calc()], models=WINDOW, compaction=compaction)
    if within:
        assert ask(system, agent, "add a lot") == "done after 6 calls"
    else:
        for text in ("one", "two", "three"):
            assert ask(system, agent, text).startswith("done after 0 calls")
        if trigger == "/compact":
            assert ask(system, agent, "/compact").startswith("Compacted")
    on_prefix = sum(1 for info in script.infos if is_summary(info))
    bounded = sum(1 for info in script.infos if is_bounded(info))
    asked, never = (on_prefix, bounded) if summary_request == "prefix" else (bounded, on_prefix)
    assert asked >= 1 and never == 0
    history = system.proxy_ask(agent, BaseAgent, timeout=30).get_history()
    head = history[0]
    assert isinstance(head, ModelRequest) and isinstance(head.parts[0], CompactionPart)
    summary = head.parts[0].content
    assert (summary == "BOUNDED") == (summary_request == "bounded")


HEAD = "name: t\nentry_point: '@A'\nhuman: null\nmembers:\n"


def test_a_team_card_sets_how_summaries_are_asked_for_and_a_wrong_value_is_named(
    tmp_path: Path,
) -> None:
    path = tmp_path / "team.yaml"
    card = "  - card: {role: A, config: {name: '@A', compaction: {summary_request: %s}}}\n"
    path.write_text(HEAD + card % "bounded")
    (member,) = TeamCard.from_yaml(path).members
    assert member.card.config.compaction.summary_request == "bounded"
    assert CompactionConfig().summary_request == "prefix"  # the default
    path.write_text(HEAD + card % "cached")
    with pytest.raises(TeamCardError) as caught:
        TeamCard.from_yaml(path)
    (message,) = str(caught.value).splitlines()
    assert message.startswith(f"{path}:5: ")
    assert "compaction.summary_request" in message and "'prefix' or 'bounded'" in message


LOOKING_UP = textwrap.dedent(
    r"""
    roles:
      "*":
        rules:
          - when: 'look up (?P<title>\w+)'
            steps:
              - tool_calls: [{tool: enable_toolset, args: {name: media}}]
              - tool_calls: [{tool: media_search, args: {query: "{title}"}}]
              - text: "[scripted] found {title}"
        default: {text: "[scripted] noted"}
    """
)


def test_the_scripted_model_writes_the_same_summary_either_way(
    system: ActorSystem, team: Team, tmp_path: Path
) -> None:
    """Two agents on the scripted model play the same turns, one enabling a toolset (its
    history holds a tool-availability change), and ``/compact``: one asks on the prefix,
    one bounded, and the summaries are the same text — a comparison of the two forms
    (the bench's) is not fooled by the scripted model."""
    (tmp_path / "look.scenario.yaml").write_text(LOOKING_UP)
    forms: list[Literal["prefix", "bounded"]] = ["prefix", "bounded"]
    agents = [  # both first: each one's first context block lists both members
        system.createActor(
            BaseAgent,
            config=AgentConfig(
                name=f"@{form}",
                role="Assistant",
                models=ModelRoster.from_spec("scripted:look.scenario.yaml", context_length=10**5),
                scenario_dir=str(tmp_path),
                tools=[ToolsetCard(name="media", description="Films", cards=[Films()])],
                compaction=CompactionConfig(threshold=0.99, keep_last=1, summary_request=form),
                stream_events=False,
            ),
            team_id=team.team_id,
        )
        for form in forms
    ]
    orchestrator = system.proxy_ask(team.orchestrator, Orchestrator, timeout=10)
    names = {"@prefix", "@bounded"}
    wait_until(lambda: names <= {a.name for a in orchestrator.get_team()}, 10, "both in the team")
    summaries: list[str] = []
    for agent in agents:
        assert ask(system, agent, "look up Alien") == "[scripted] found Alien"
        assert ask(system, agent, "thanks") == "[scripted] noted"
        proxy = system.proxy_ask(agent, BaseAgent, timeout=30)
        parts = [p for m in proxy.get_history() for p in m.parts]
        assert any(isinstance(p, ToolAvailabilityDeltaPart) for p in parts)
        assert ask(system, agent, "/compact").startswith("Compacted")
        head = proxy.get_history()[0]
        assert isinstance(head, ModelRequest) and isinstance(head.parts[0], CompactionPart)
        summaries.append(str(head.parts[0].content))
    on_prefix, bounded = summaries
    assert on_prefix.startswith("[scripted] Summary of ")
    assert on_prefix == bounded

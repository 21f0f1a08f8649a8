"""The card of your own in examples/cards (docs/custom-cards.md) works as the guide says:
from YAML through ``akgentic run``, from Python, shared by two agents through one ``#``
actor, its context sent as deltas under a byte-identical system prompt, and its actor's
state rebuilt exactly by a resume and by a replay of its events (with no reducer
registered: the state's own ``apply_delta`` folds them). The guide's own code, as a
reader copies it, is run by tests/tooling/test_docs.py."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent
from akgentic.core import ActorSystem, AgentCard, UserMessage
from akgentic.storage import open_storage
from akgentic.team import MemberSpec, TeamCard, TeamManager

from ..agent.conftest import Script
from ..core.conftest import Team
from ..team.conftest import answer

CARDS = Path(__file__).resolve().parents[2] / "examples" / "cards"


@pytest.fixture
def tally(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The example module, imported as the guide says: its folder on sys.path."""
    monkeypatch.syspath_prepend(str(CARDS))
    import tally as module

    yield module


def test_akgentic_run_plays_the_yaml_team_from_its_folder(tmp_path: Path) -> None:
    env = {**os.environ, "AKGENTIC_STORAGE": f"sqlite:///{tmp_path / 'cards.db'}"}
    # the installed console script, as the guide runs it: `python -c` would put the
    # current folder on sys.path by itself, and hide whether the CLI does
    akgentic = Path(sys.executable).parent / "akgentic"
    result = subprocess.run(
        [str(akgentic), "run", "tally.yaml", "-m", "count apples"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=CARDS,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "#Tally state changed (TallyDelta #1)" in result.stdout
    assert result.stdout.rstrip().endswith("answer: [scripted] Counted: apples is now 1.")


def counter(tally: Any, name: str = "@Counter", headcount: int = 1) -> MemberSpec:
    card = AgentCard(
        role="Counter",
        agent_class="akgentic.agent.agent.BaseAgent",
        config=AgentConfig(
            name=name,
            role="Counter",
            models="scripted:tally.scenario.yaml",
            scenario_dir=str(CARDS),
            tools=[tally.TallyTool()],
        ),
    )
    return MemberSpec(card=card, headcount=headcount)


def test_two_agents_share_one_actor_whose_state_a_resume_and_a_replay_rebuild(
    tally: Any, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'team.db'}"
    card = TeamCard(name="tally", entry_point="@Counter-1", members=[counter(tally, headcount=2)])
    manager = TeamManager(ActorSystem(), open_storage(url))
    runtime = manager.create_team(card)
    names = [a.name for a in runtime.members()]
    assert names.count("#Tally") == 1  # two agents wired at once, one actor
    seq = 0
    for what in ("apples", "pears", "apples"):
        runtime.send(f"count {what}")
        seq, text = answer(runtime, seq)
    assert text == "[scripted] Counted: apples is now 2."
    runtime.send_to("@Counter-2", "count pears")  # the other agent, the same board
    seq, text = answer(runtime, seq)
    assert text == "[scripted] Counted: pears is now 2."
    runtime.send("/tally_reset nothing")
    seq, text = answer(runtime, seq)
    assert text == "There is no tally named nothing."
    team_id = runtime.team_id
    manager.stop_team(team_id)
    manager.shutdown()

    manager = TeamManager(ActorSystem(), open_storage(url))
    try:
        runtime = manager.resume_team(team_id)
        runtime.send("count apples")
        seq, text = answer(runtime, seq)
        assert text == "[scripted] Counted: apples is now 3."  # the board came back whole
        # no reducer registered: replay folds the log with TallyState's own apply_delta
        replayed = runtime.tool_state("#Tally")
        assert replayed.gaps == [] and replayed.unknown_tools == set()
        address = runtime.member("#Tally")
        assert address is not None
        live = manager.system.get_actor(address).state  # the actor is idle: no turn runs
        assert replayed.states["#Tally"] == live
        assert live.counts == {"apples": 3, "pears": 2}
        assert live.event_seq == replayed.last_seq["#Tally"] == 5
    finally:
        manager.shutdown()


def text(content: str) -> Any:
    return lambda messages, info: ModelResponse(parts=[TextPart(content)])


def call(tool: str, **args: Any) -> Any:
    return lambda messages, info: ModelResponse(parts=[ToolCallPart(tool, args)])


def prompt_of(messages: list[ModelMessage]) -> str:
    request = messages[-1]
    assert isinstance(request, ModelRequest)
    return "\n".join(str(p.content) for p in request.parts if p.part_kind == "user-prompt")


def test_the_board_reaches_the_model_as_deltas_under_a_frozen_prompt(
    tally: Any, system: ActorSystem, team: Team, model_key: Callable[[Script], str]
) -> None:
    script = Script(
        call("tally_add", name="apples"), text("one"),
        call("tally_add", name="pears", amount=3), text("two"),
        text("three"),
    )  # fmt: skip
    config = AgentConfig(
        name="@Counter", role="Counter", models=model_key(script), tools=[tally.TallyTool()]
    )
    agent = system.createActor(BaseAgent, config=config, team_id=team.team_id)
    for turn in ("first", "second", "third", "fourth"):
        reply = system.ask(agent, UserMessage(content=turn), timeout=30)
        assert isinstance(reply, AgentMessage)
    # one request per model call: turn 1 (2 calls), turn 2 (2 calls), turns 3 and 4
    prompts = [prompt_of(seen) for seen in script.seen]
    starts = [p for p in prompts if "Message from" in p]
    assert len(starts) == 4
    assert "Tally board" not in starts[0]  # an empty board: nothing to say
    assert "Tally board, changes:\n- apples: 1" in starts[1]  # against the empty baseline
    assert "Tally board, changes:\n- pears: 3" in starts[2] and "apples" not in starts[2]
    assert "Tally board" not in starts[3]  # nothing changed, nothing sent
    instructions = {info.instructions for info in script.infos}
    assert len(instructions) == 1  # the system prompt is byte-identical on every request
    assert "count things with tally_add" in str(next(iter(instructions)))


def test_the_card_round_trips_and_refuses_unknown_fields(tally: Any) -> None:
    from akgentic.core.serialization import deserialize, serialize

    card = tally.TallyTool(max_amount=5, tally_reset=False)
    assert deserialize(serialize(card)) == card
    with pytest.raises(ValueError, match="max_amont"):
        tally.TallyTool(max_amont=5)


def test_the_yaml_teams_suggestions_are_read_whole(tally: Any) -> None:
    # an unquoted ` #` starts a YAML comment: the "Try:" line would stop at "the team's"
    card = TeamCard.from_yaml(CARDS / "tally.yaml")
    shows = [s.shows for s in card.suggestions]
    assert (
        shows[0] == "tally_add on the team's #Tally actor, and the board in the next turn's context"
    )

"""A member hired at runtime (an agent's ``hire_members``) is part of the team's log like
one its card started: stopped and resumed from the same store, the team has it back, with
its name, parent, history and state, and it takes the next message."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.agent import AgentState
from akgentic.core import ActorSystem, Orchestrator
from akgentic.llm import register_model
from akgentic.storage import open_storage, sqlite_url
from akgentic.team import TeamCard, TeamManager, plan_restore

from .conftest import answer

CARD = """\
name: hiring
entry_point: "@Lead"
members:
  - card:
      role: Lead
      config:
        name: "@Lead"
        models: registered:hiring-lead
profiles:
  - role: Writer
    description: Writes what it is told, and remembers it
    config:
      name: "@Writer"
      models: registered:hiring-writer
"""


def prompts(messages: list[ModelMessage]) -> list[str]:
    """Every user prompt the model was given, oldest first."""
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and isinstance(part.content, str)
    ]


def lead(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Hires a Writer when asked, then says whom the hire gave."""
    last = messages[-1]
    returned = [p for p in last.parts if isinstance(p, ToolReturnPart)]
    if returned:
        return ModelResponse(parts=[TextPart(str(returned[0].content))])
    return ModelResponse(parts=[ToolCallPart("hire_members", {"roles": ["Writer"]})])


def writer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Notes a word; asked for it, answers with every word its history holds."""
    said = prompts(messages)
    if "which words?" in said[-1]:
        words = [w for p in said for w in re.findall(r"note the word (\w+)", p)]
        return ModelResponse(parts=[TextPart("words: " + ", ".join(words))])
    return ModelResponse(parts=[TextPart("noted")])


def test_a_member_hired_at_runtime_comes_back_after_stop_and_resume(
    tmp_path: Path, system: ActorSystem
) -> None:
    path = tmp_path / "hiring.yaml"
    path.write_text(CARD)
    manager = TeamManager(system, open_storage(sqlite_url(tmp_path / "team.db")))
    try:
        with (
            register_model("hiring-lead", FunctionModel(lead)),
            register_model("hiring-writer", FunctionModel(writer)),
        ):
            runtime = manager.create_team(TeamCard.from_yaml(path))
            assert runtime.member("@Writer") is None
            runtime.send("hire a writer")
            seq, said = answer(runtime, runtime.first_seq)
            assert said == "Hired 1 of 1: @Writer (Writer)."
            hired = runtime.member("@Writer")
            assert hired is not None and hired.role == "Writer"
            runtime.send_to("@Writer", "note the word kiwi")
            seq, said = answer(runtime, seq)
            assert said == "noted"
            manager.stop_team(runtime.team_id)

            resumed = manager.resume_team(runtime.team_id)
            back = resumed.member("@Writer")
            assert back is not None
            assert back.agent_id == hired.agent_id  # the same member, not a new hire
            assert back.role == "Writer"
            assert resumed.interrupted == []
            plan = plan_restore(list(manager.storage.events.read(runtime.team_id)))
            parents = {m.name: m.parent for m in plan.members}
            lead_address = resumed.member("@Lead")
            assert lead_address is not None
            assert parents["@Writer"] == lead_address.agent_id  # still the Lead's hire
            states = resumed.system.proxy_ask(
                resumed.orchestrator, Orchestrator, timeout=10
            ).get_states()
            state: Any = states[back.agent_id]
            assert isinstance(state, AgentState) and state.turns == 1
            resumed.send_to("@Writer", "note the word fig")
            seq, said = answer(resumed, resumed.first_seq)
            assert said == "noted"
            resumed.send_to("@Writer", "which words?")
            seq, said = answer(resumed, seq)
            assert said == "words: kiwi, fig"  # its history from before the stop, and after
            # a name is not hired twice: the next Writer is -2, @Writer being back
            resumed.send("hire a writer")
            _, said = answer(resumed, seq)
            assert said == "Hired 1 of 1: @Writer-2 (Writer)."
    finally:
        manager.shutdown()

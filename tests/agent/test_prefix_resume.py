"""The cached prefix across a stop and a resume, as the model receives it: the first
request after the resume carries the tools and the system prompt of the last request
before the stop, byte for byte, so a provider still holding that prefix serves it —
including the team metadata block, a snapshot an agent keeps for its life, a restart
included, whatever ``set_metadata`` said since. A ``/compact`` first after the resume, before
any turn of the new process, sends that prefix too."""

from __future__ import annotations

import json
import threading

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from akgentic.agent import AgentConfig
from akgentic.agent.config import CompactionConfig
from akgentic.core import AgentCard, Orchestrator
from akgentic.core.serialization import SerializableModel
from akgentic.llm import register_model
from akgentic.team import MemberSpec, TeamCard, TeamManager, TeamRuntime
from akgentic.tool.metadata import MetadataTool, RenderMetadata
from akgentic.tool.planning import PlanningTool
from akgentic.tool.skill import SkillEntry, Skills, SkillTool

from ..team import test_registered_models
from ..team.conftest import answer

manager = test_registered_models.manager  # a TeamManager on a SQLite store (the fixture)


class Engagement(SerializableModel):
    client: str


class Requests:
    """A model that records what each request put before its messages — the tool
    definitions, in order, as JSON, and the instructions — and plans on "plan"."""

    def __init__(self) -> None:
        self.prefixes: list[tuple[list[str], str]] = []
        self.summaries: list[int] = []  # which requests asked for a summary
        self.lock = threading.Lock()

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tools = [
            json.dumps([t.name, t.description, t.parameters_json_schema, t.strict], sort_keys=False)
            for t in [*info.function_tools, *info.output_tools]
        ]
        with self.lock:
            if (info.model_settings or {}).get("tool_choice") == "none":
                self.summaries.append(len(self.prefixes))
            self.prefixes.append((tools, info.instructions or ""))
        last = messages[-1].parts[-1]
        if getattr(last, "content", None) == "Message from @Human:\nplan":
            item = {"op": "create", "title": "Write the report"}
            return ModelResponse(parts=[ToolCallPart("update_planning", {"items": [item]})])
        return ModelResponse(parts=[TextPart("noted")])


def team_card(keep_last: int = 6) -> TeamCard:
    skills = Skills(skills=[SkillEntry(name="triage", description="Sort requests.", content="…")])
    analyst = AgentCard(
        role="Analyst",
        agent_class="akgentic.agent.agent.BaseAgent",
        config=AgentConfig(
            name="@Analyst",
            role="Analyst",
            models="registered:prefix-llm",
            tools=[
                PlanningTool(),
                SkillTool(skills=skills),
                MetadataTool(render_metadata=RenderMetadata(template="Client: {client}.")),
            ],
            compaction=CompactionConfig(keep_last=keep_last),
        ),
    )
    return TeamCard(name="solo", entry_point="@Analyst", members=[MemberSpec(card=analyst)])


def ask(runtime: TeamRuntime, text: str, after: int) -> int:
    runtime.send(text)
    seq, _ = answer(runtime, after)
    return seq


def set_metadata(runtime: TeamRuntime, metadata: Engagement) -> None:
    proxy = runtime.system.proxy_ask(runtime.orchestrator, Orchestrator, timeout=10)
    proxy.set_metadata(metadata)


def test_the_first_request_after_a_resume_has_the_prefix_of_the_last_before_the_stop(
    manager: TeamManager,
) -> None:
    requests = Requests()
    with register_model("prefix-llm", FunctionModel(requests)):
        runtime = manager.create_team(team_card())
        set_metadata(runtime, Engagement(client="Acme"))
        seq = ask(runtime, "plan", 0)
        # the business context changes: the agent keeps what it was given, at every turn
        set_metadata(runtime, Engagement(client="Globex"))
        ask(runtime, "and now?", seq)
        before = len(requests.prefixes)
        manager.stop_team(runtime.team_id)
        resumed = manager.resume_team(runtime.team_id)
        ask(resumed, "still there?", resumed.recorder.last_seq)
        manager.stop_team(runtime.team_id)
    first_tools, first_prompt = requests.prefixes[0]
    assert "Client: Acme." in first_prompt
    assert all(prefix == requests.prefixes[0] for prefix in requests.prefixes[:before])
    after_tools, after_prompt = requests.prefixes[before]
    assert after_prompt == first_prompt  # not re-rendered from the metadata set since
    assert after_tools == first_tools


def test_a_compact_first_after_a_resume_sends_the_prefix_of_the_turns(
    manager: TeamManager,
) -> None:
    requests = Requests()
    with register_model("prefix-llm", FunctionModel(requests)):
        runtime = manager.create_team(team_card(keep_last=1))
        set_metadata(runtime, Engagement(client="Acme"))
        seq = ask(runtime, "plan", 0)
        ask(runtime, "and now?", seq)
        before = len(requests.prefixes)
        manager.stop_team(runtime.team_id)
        resumed = manager.resume_team(runtime.team_id)
        seq = ask(resumed, "/compact", resumed.recorder.last_seq)
        ask(resumed, "still there?", seq)
        manager.stop_team(runtime.team_id)
    assert requests.summaries == [before]  # the first request after the resume
    first_tools, first_prompt = requests.prefixes[0]
    assert "Client: Acme." in first_prompt and "update_planning" in "".join(first_tools)
    assert len(requests.prefixes) == before + 2
    assert all(prefix == requests.prefixes[0] for prefix in requests.prefixes)

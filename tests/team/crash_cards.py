"""Cards and scenario for the crash test (imported by the child and by the test)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from akgentic.agent import AgentConfig, PromptTemplate
from akgentic.core import AgentCard
from akgentic.llm import ModelConfig, ModelRoster
from akgentic.team import MemberSpec, TeamCard
from akgentic.tool.core import ToolCard

HERE = Path(__file__).resolve().parent


class SlowStep(ToolCard):
    """A tool that blocks for ever when AKGENTIC_CRASH_BLOCK is set and its label says so."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def slow_step(label: str) -> str:
            """Do one step of work."""
            if os.environ.get("AKGENTIC_CRASH_BLOCK") and "block" in label:
                threading.Event().wait()
            return f"step done: {label}"

        return [slow_step]


class StartGate(ToolCard):
    """Holds its agent's start (``on_start`` builds the tools) for ever when
    AKGENTIC_CRASH_BLOCK is set, after printing ``READY <team id>``: how the crash
    test kills a process in the middle of a team's creation."""

    def get_tools(self) -> list[Callable[..., Any]]:
        if os.environ.get("AKGENTIC_CRASH_BLOCK"):
            print(f"READY {self.get_observer().team_id}", flush=True)
            threading.Event().wait()
        return []


def crash_card(*, held_start: bool = False) -> TeamCard:
    """@Boss; with ``held_start``, @Boss's start is held by :class:`StartGate` and @Helper
    comes after it (a team's members start one after the other), so the log of a process
    killed then never holds @Helper, whatever its recorder managed to commit."""
    gate = [StartGate()] if held_start else []
    config = AgentConfig(
        name="@Boss",
        role="Boss",
        models=ModelRoster(models=[ModelConfig(provider="scripted", model="crash.scenario.yaml")]),
        scenario_dir=str(HERE),
        prompt=PromptTemplate(template="You are {name}."),
        tools=[SlowStep(), *gate],
        # unbounded: a blocked slow_step runs on the agent's own thread, where no interrupt
        # cuts it (a bounded call is cut by a Ctrl-C's interrupt), so a turn blocked there
        # stays blocked until the process dies, whatever the Ctrl-C does meanwhile
        tool_timeout=None,
    )
    members = [
        MemberSpec(
            card=AgentCard(role="Boss", agent_class="akgentic.agent.agent.BaseAgent", config=config)
        )
    ]
    if held_start:
        helper = config.model_copy(update={"name": "@Helper", "tools": []})
        members.append(
            MemberSpec(
                card=AgentCard(
                    role="Boss", agent_class="akgentic.agent.agent.BaseAgent", config=helper
                )
            )
        )
    return TeamCard(
        name="crash",
        entry_point="@Boss",
        members=members,
        imports=["tests.team.crash_cards"],
    )

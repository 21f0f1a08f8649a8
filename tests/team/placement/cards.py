"""The placement tests' team: one agent whose tool can hold a turn until the test opens a
gate (a file). Imported by the tests and, through the card's ``imports``, by the Ray
workers that host the team (the repository root is on their PYTHONPATH)."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from akgentic.agent import AgentConfig, PromptTemplate
from akgentic.core import AgentCard
from akgentic.llm import ModelConfig, ModelRoster
from akgentic.team import MemberSpec, TeamCard
from akgentic.tool.core import ToolCard

HERE = Path(__file__).resolve().parent
GATE_DIR = "AKGENTIC_GATE_DIR"
HOLD = 300.0
"""Seconds a held turn waits for its gate at most."""


def gate_file(folder: str | Path, label: str) -> Path:
    """The file that opens the gate of a turn labelled ``label``."""
    return Path(folder) / re.sub(r"[^\w.-]", "_", label)


class Gate(ToolCard):
    """``gate(label)``: a label with 'hold' in it waits until its gate file exists (in the
    folder ``AKGENTIC_GATE_DIR`` names); any other returns at once."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def gate(label: str) -> str:
            """Do the work ``label`` names."""
            folder = os.environ.get(GATE_DIR)
            if folder and "hold" in label:
                opened, pause = gate_file(folder, label), threading.Event()
                deadline = time.monotonic() + HOLD
                while not opened.exists() and time.monotonic() < deadline:
                    pause.wait(0.05)
            return f"worked on {label}"

        return [gate]


def gate_card(name: str = "gate") -> TeamCard:
    config = AgentConfig(
        name="@Boss",
        role="Boss",
        models=ModelRoster(models=[ModelConfig(provider="scripted", model="gate.scenario.yaml")]),
        scenario_dir=str(HERE),
        prompt=PromptTemplate(template="You are {name}."),
        tools=[Gate()],
    )
    return TeamCard(
        name=name,
        entry_point="@Boss",
        members=[
            MemberSpec(
                card=AgentCard(
                    role="Boss", agent_class="akgentic.agent.agent.BaseAgent", config=config
                )
            )
        ],
        imports=["tests.team.placement.cards"],
    )

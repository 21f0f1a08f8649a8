"""Two agents and a person: a manager that delegates to a worker.

@Human asks @Manager a question. The manager acknowledges and delegates to @Worker in
one structured reply; the worker takes a note with a tool and answers; the manager
reports back to the human. Everything runs on the offline scripted model
(``manager_worker.yaml``) unless ``AKGENTIC_MODEL`` names a real one, e.g.
``AKGENTIC_MODEL=openai:gpt-5.2`` (with ``OPENAI_API_KEY``) or
``AKGENTIC_MODEL=openai-compatible:llama3.2 AKGENTIC_BASE_URL=http://localhost:11434/v1``.

Run: ``python examples/manager_worker.py ["your question"]``
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

from akgentic.agent import AgentConfig, AgentMessage, BaseAgent, HumanProxy, PromptTemplate
from akgentic.core import ActorSystem, Message, Orchestrator, SentMessage
from akgentic.llm import ModelConfig, ModelRoster
from akgentic.tool.core import ToolCard

HERE = Path(__file__).resolve().parent


class Notebook(ToolCard):
    """A tool for the worker: it writes notes down."""

    def get_tools(self) -> list[Callable[..., Any]]:
        def take_note(note: str) -> str:
            """Write a note down; returns a confirmation."""
            return f"(noted: {len(note.split())} words)"

        return [take_note]


def roster() -> ModelRoster:
    spec = os.environ.get("AKGENTIC_MODEL")
    if not spec:
        return ModelRoster(models=[ModelConfig(provider="scripted", model="manager_worker.yaml")])
    provider, _, model = spec.partition(":")
    return ModelRoster(
        models=[
            ModelConfig(
                provider=provider,  # type: ignore[arg-type]
                model=model,
                base_url=os.environ.get("AKGENTIC_BASE_URL"),
            )
        ]
    )


class Watcher:
    """Prints the conversation and signals when the human has the final answer."""

    def __init__(self) -> None:
        self.answered = threading.Event()
        self.answer = ""

    def on_message(self, msg: Message) -> None:
        if not isinstance(msg, SentMessage):
            return
        inner = msg.message
        content = getattr(inner, "content", None)
        if content is None:
            return
        to = msg.recipient.name if msg.recipient else "?"
        who = msg.sender.name if msg.sender else "?"
        kind = inner.type if isinstance(inner, AgentMessage) else ""
        print(f"{who} -> {to} [{kind or type(inner).__name__}]: {content}")
        if to == "@Human" and kind == "response":
            self.answer = content
            self.answered.set()

    def set_restoring(self, team_id: UUID, restoring: bool) -> None:
        pass

    def on_stop_request(self, team_id: UUID) -> None:
        pass

    def on_stop(self, team_id: UUID) -> None:
        pass


def main(question: str) -> str:
    system = ActorSystem()
    orchestrator = system.createActor(Orchestrator)
    team = orchestrator.team_id
    watcher = Watcher()
    system.proxy_ask(orchestrator, Orchestrator, timeout=10).subscribe(watcher)
    common: dict[str, Any] = {"models": roster(), "scenario_dir": str(HERE)}
    system.createActor(
        BaseAgent,
        config=AgentConfig(
            name="@Worker",
            role="Worker",
            prompt=PromptTemplate(
                template="You are {name}, a careful researcher. Take a note of every request "
                "with take_note, then answer the manager in three short points."
            ),
            tools=[Notebook()],
            **common,
        ),
        team_id=team,
    )
    system.createActor(
        BaseAgent,
        config=AgentConfig(
            name="@Manager",
            role="Manager",
            prompt=PromptTemplate(
                template="You are {name}. You never research yourself: when @Human asks, "
                "send @Worker a request and @Human an acknowledgment in one structured reply; "
                "when @Worker answers, send @Human the findings as a response."
            ),
            **common,
        ),
        team_id=team,
    )
    human = system.createActor(HumanProxy, team_id=team)
    system.proxy_ask(human, HumanProxy, timeout=10).process_human_input(question, to="@Manager")
    if not watcher.answered.wait(120):
        raise SystemExit("no answer reached @Human within 120 seconds")
    system.shutdown(10)
    return watcher.answer


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "what is special about this framework?")

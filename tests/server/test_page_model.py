"""The page's fold of the event stream (web/static/js/model.js), run by node on wire
events as the server encodes them: an answer cut off and asked again has its text
dropped, the earlier text of the turn kept."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from akgentic.agent.turn import TurnStartedEvent
from akgentic.core import ActorAddressProxy, EventMessage
from akgentic.llm import LlmAnswerRestartedEvent, LlmTextDeltaEvent, ToolCallEvent
from akgentic.server.protocol import protocol_of

MODEL_JS = Path(__file__).parents[2] / "src/akgentic/server/web/static/js/model.js"
NODE = shutil.which("node")

FOLD = """
const { TeamModel } = await import(process.argv[1]);
const events = JSON.parse(process.argv[2]);
const model = new TeamModel({ human: "@Human", running: true });
events.forEach((e, i) => model.apply({ seq: i + 1, ...e }));
console.log(JSON.stringify(model.chat[0].parts.map((p) => p.text ?? p.name)));
"""


def wire(event: object) -> dict[str, Any]:
    kind, data = protocol_of(EventMessage(sender=WORKER, event=event))
    return {"type": kind, "data": data, "sender": "@Worker"}


WORKER = ActorAddressProxy(agent_id=uuid4(), name="@Worker")


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_page_drops_a_cut_answers_text_counted_in_code_points() -> None:
    partial = "Hel", "lo \U0001f600"  # an emoji: two UTF-16 units, one character
    events = [
        wire(TurnStartedEvent(turn_id=uuid4(), agent="@Worker")),
        wire(LlmTextDeltaEvent(run_id="r", delta="Looking. ")),
        wire(ToolCallEvent(run_id="r", tool_name="search", tool_call_id="1")),
        wire(LlmTextDeltaEvent(run_id="r", delta="Found. ")),
        *(wire(LlmTextDeltaEvent(run_id="r", delta=piece)) for piece in partial),
        wire(LlmAnswerRestartedEvent(run_id="r", chars=len("".join(partial)))),
        wire(LlmTextDeltaEvent(run_id="r", delta="Hello there.")),
    ]
    assert events[-2] == {
        "type": "RestartAnswer",
        "data": {"chars": 7, "runId": "r"},
        "sender": "@Worker",
    }
    assert NODE is not None
    done = subprocess.run(  # node alone: its own folder, no stdin, only PATH and HOME
        [NODE, "--input-type=module", "-e", FOLD, MODEL_JS.as_uri(), json.dumps(events)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=MODEL_JS.parent,
        stdin=subprocess.DEVNULL,
        env={key: os.environ[key] for key in ("PATH", "HOME") if key in os.environ},
    )
    said = f"node exited {done.returncode}: stdout {done.stdout!r}, stderr {done.stderr!r}"
    assert done.returncode == 0 and done.stdout.strip(), said
    assert json.loads(done.stdout) == ["Looking. ", "search", "Found. Hello there."]

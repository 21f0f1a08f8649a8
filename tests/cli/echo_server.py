"""An OpenAI-compatible server on loopback whose model answers every message "pong: ..."
to whoever wrote it — the real wire format, so ``--base-url`` is tested end to end."""

from __future__ import annotations

import re
from typing import Any

from tests.examples.openai_compatible import Decision, last_text, serve

__all__ = ["echo", "serve"]


def echo(body: dict[str, Any]) -> Decision:
    """Reply to the message's sender with ``pong: <its text>`` (through the agent's
    structured output when it has one)."""
    tools = [t["function"]["name"] for t in body.get("tools", [])]
    output = next((t for t in tools if t.startswith("final_result")), None)
    said = last_text(body)
    found = re.search(r"Message from (@[\w.-]+):\n(.*)", said, re.DOTALL)
    sender, text = (found.group(1), found.group(2)) if found else ("@Human", said)
    text = text.split("\n\n")[0].strip()  # the message, not the context block after it
    if output is None:
        return f"pong: {text}", None
    reply = {"to": sender, "type": "response", "content": f"pong: {text}"}
    return None, (output, {"messages": [reply]})

"""A small offline MCP server: a glossary of akgentic's terms, over stdio.

Written with the ``mcp`` package (``pip install 'akgentic[mcp]'``). Any MCP client can use
it; ``examples/teams/glossary.yaml`` gives it to a team through ``glossary.mcp.json``.

``GLOSSARY_EXTRA`` adds terms: ``"term=definition;other=definition"``.
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

TERMS = {
    "actor": "an object with a mailbox that handles one message at a time",
    "card": "serializable configuration that builds an agent's capabilities",
    "orchestrator": "the actor that keeps a team's roster and its event stream",
    "toolset": "a group of tools handed to the model as one unit",
}

app = MCPServer("glossary")


def glossary() -> dict[str, str]:
    extra = os.environ.get("GLOSSARY_EXTRA", "")
    pairs = (item.split("=", 1) for item in extra.split(";") if "=" in item)
    return {**TERMS, **{term.strip().lower(): text.strip() for term, text in pairs}}


@app.tool()
def define(term: str) -> str:
    """The definition of ``term`` in this glossary."""
    found = glossary().get(term.strip().lower())
    if found is None:
        raise ToolError(f"no entry for {term!r}; terms: {', '.join(sorted(glossary()))}")
    return found


@app.tool()
def terms() -> list[str]:
    """Every term the glossary defines."""
    return sorted(glossary())


if __name__ == "__main__":
    app.run()

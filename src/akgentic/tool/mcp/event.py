"""MCPServerUnavailable: the one line the team stream gets when a server cannot serve."""

from __future__ import annotations

from akgentic.core.serialization import SerializableModel

__all__ = ["MCPServerUnavailable"]


class MCPServerUnavailable(SerializableModel):
    """Event payload: the agent that published it goes on without MCP server ``server``.

    ``message`` is the whole story in one line — which server, where, why, and what
    happens next — so a client shows it as is.
    """

    server: str
    message: str

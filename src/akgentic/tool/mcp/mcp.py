"""MCPTool: one external MCP server, reaching the agent as a pydantic-ai toolset.

The card is configuration only — a name, exactly one connection, a tool prefix — and
stores ``${VAR}`` references unexpanded. Its one channel is :meth:`MCPTool.get_toolsets`:
``get_tools()`` is always empty. Each call of ``get_toolsets()`` builds a fresh, unopened
toolset, so every agent wired with the card gets its own connection, opened on its first
turn and closed when it stops (see ``toolset.py``).

Tools are named ``<name>__<tool>`` (seed 003's ``server__tool``): the default
``tool_prefix`` is ``"<name>_"``, and pydantic-ai's ``PrefixedToolset`` joins a prefix and a
tool name with one more ``_``. ``tool_prefix=""`` leaves the names as the server gives them.

Two servers wired to one agent under the same name or the same prefix are refused at
wiring, naming both — their tools would otherwise shadow each other in the model's eyes.

:meth:`MCPTool.probe` is the catalog's "Test" (the ``mcp`` type): start or reach the
server, list its tools, close.
"""

from __future__ import annotations

import re
import weakref
from pathlib import Path
from typing import Any, Self
from urllib.parse import urlparse

import anyio
from pydantic import Field, field_validator

from akgentic.core.excerpt import clip
from akgentic.core.words import counted
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.observer import ToolObserver
from akgentic.tool.mcp.config import (
    MCPHTTPConnectionConfig,
    MCPStdioConnectionConfig,
    read_mcp_config,
)
from akgentic.tool.mcp.event import MCPServerUnavailable
from akgentic.tool.mcp.toolset import (
    DEFAULT_MAX_RESULT_CHARS,
    DEFAULT_MAX_TOOLS,
    build_server_toolset,
    list_server_tools,
    start_failure,
)

__all__ = ["MCPProbeError", "MCPTool"]

_NAME = re.compile(r"^[A-Za-z0-9_-]+$")

_WIRED: weakref.WeakKeyDictionary[Any, dict[str, MCPTool]] = weakref.WeakKeyDictionary()
"""Per observer (agent): the MCPTool cards wired to it, by ``name:<n>`` and ``prefix:<p>``."""


class MCPProbeError(Exception):
    """The probe's answer when the server does not start or list its tools."""


class MCPTool(ToolCard):
    """An MCP server's tools for the agent; see the module docstring.

    - ``connection``: :class:`MCPStdioConnectionConfig` (a command the agent starts) or
      :class:`MCPHTTPConnectionConfig` (a running server's URL; streamable HTTP unless
      ``transport="sse"``). Exactly one.
    - ``name``: the server's name in the team (an ``mcpServers`` key); default: derived
      from the connection (the URL's host, or the command's last argument).
    - ``tool_prefix``: ``None`` (default) names tools ``<name>__<tool>``; any other string
      ``<tool_prefix>_<tool>``; ``""`` leaves them unprefixed.
    - ``max_result_chars``: the longest text of a tool result the model reads; a longer one
      is cut with a note (default 16,000).
    - ``max_tools``: the most of the server's tools the agent is offered, in the server's
      order; the rest are left out, said in one line (default 128, what OpenAI takes in one
      request; at least 1).
    """

    connection: MCPStdioConnectionConfig | MCPHTTPConnectionConfig
    name: str | None = Field(default=None, min_length=1)
    tool_prefix: str | None = None
    max_result_chars: int = Field(default=DEFAULT_MAX_RESULT_CHARS, ge=100)
    max_tools: int = Field(default=DEFAULT_MAX_TOOLS, json_schema_extra={"minimum": 1})

    @field_validator("name")
    @classmethod
    def _name_is_a_word(cls, value: str | None) -> str | None:
        if value is not None and not _NAME.match(value):
            raise ValueError(
                f"MCP server name {value!r} may hold letters, digits, '_' and '-' only "
                f"(it prefixes the names of its tools)"
            )
        return value

    @field_validator("max_tools")
    @classmethod
    def _offers_a_tool(cls, value: int) -> int:
        if value < 1:
            raise ValueError(
                f"{value} offers no tool: max_tools is how many of the server's tools the "
                f"agent is offered, at least 1 (to offer none, leave the MCPTool card out)"
            )
        return value

    @classmethod
    def from_config(cls, path: str | Path) -> list[MCPTool]:
        """One card per server of a Claude Desktop ``mcp.json``, in file order.

        ``${VAR}`` references are kept as written (expanded when an agent connects). Raises
        :class:`~akgentic.tool.mcp.MCPConfigError` naming the file and the server.
        """
        return [cls(name=name, connection=c) for name, c in read_mcp_config(path).items()]

    # -- names ------------------------------------------------------------------------
    @property
    def server_name(self) -> str:
        """The name in force: ``name``, or one derived from the connection."""
        if self.name is not None:
            return self.name
        connection = self.connection
        if isinstance(connection, MCPHTTPConnectionConfig):
            raw = urlparse(connection.url).hostname or "mcp"
        else:
            words = [a for a in connection.stdio_args if not a.startswith("-")]
            raw = Path(words[-1] if words else connection.stdio_command).stem
        return re.sub(r"[^A-Za-z0-9_-]+", "_", raw).strip("_") or "mcp"

    @property
    def prefix(self) -> str:
        """The ``PrefixedToolset`` prefix: tools are ``<prefix>_<tool>`` (none when empty)."""
        return f"{self.server_name}_" if self.tool_prefix is None else self.tool_prefix

    # -- wiring -----------------------------------------------------------------------
    def observer(self, observer: ToolObserver) -> Self:
        """Attach the agent; refuse a second server with this name or prefix on it. Two
        servers with no prefix (``tool_prefix=""``) keep the servers' own names, which only
        their tool lists can show to clash: team creation and the first turn say that."""
        try:
            wired = _WIRED.setdefault(observer, {})
        except TypeError:  # an observer that cannot key a weak mapping: nothing to compare
            wired = {}
        keys = {"name": self.server_name}
        if self.prefix:
            keys["prefix"] = self.prefix
        for kind, value in keys.items():
            other = wired.get(f"{kind}:{value}")
            if other is not None and other is not self:
                fix = "tool_prefix" if kind == "prefix" else "name or tool_prefix"
                raise ValueError(
                    f"MCP servers {other.server_name!r} ({other.connection.describe()}) and "
                    f"{self.server_name!r} ({self.connection.describe()}) share the {kind} "
                    f"{value!r} on one agent: give one of them another {fix}"
                )
        for kind, value in keys.items():
            wired[f"{kind}:{value}"] = self
        return super().observer(observer)

    def get_toolsets(self) -> list[Any]:
        """One fresh, unopened toolset for this server (see ``toolset.py``).

        ``${VAR}`` references are expanded now, from this process's environment.
        """
        return [
            build_server_toolset(
                self.server_name,
                self.connection,
                self.prefix,
                on_unavailable=self._report,
                max_result_chars=self.max_result_chars,
                max_tools=self.max_tools,
            )
        ]

    def probe(self, timeout: float) -> str:
        """Start (or reach) the server, list its tools and close: ``timeout`` bounds the
        start and the listing, each (handed to the client). Answers how many tools it
        serves, and which the client's check left out with why; raises
        :class:`MCPProbeError` saying why it does not answer.

        Runs its own event loop: call it from a thread without one (the catalog runs
        every probe in a thread of its own).
        """
        connection = self.connection.model_copy(
            update={"connect_timeout": timeout, "call_timeout": timeout}
        )
        try:
            names, left_out = anyio.run(list_server_tools, self.server_name, connection)
        except Exception as exc:
            raise MCPProbeError(
                f"MCP server {self.server_name!r} ({connection.describe()}) does not answer: "
                f"{start_failure(connection, exc)}"
            ) from None
        shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
        served = counted(len(names), "tool")
        said = f"MCP server {self.server_name!r} serves {served}: {shown or 'none'}"
        if left_out:
            why = "; ".join(
                f"{clip(n, 80)!r}: {clip(w, 160)}" for n, w in list(left_out.items())[:3]
            )
            more = f"; and {len(left_out) - 3} more" if len(left_out) > 3 else ""
            said += (
                f"; {counted(len(left_out), 'tool')} left out, not valid MCP ({why}{more}): "
                f"fix them on the server"
            )
        return said

    def _report(self, server: str, line: str) -> None:
        observer = self.observer_or_none()
        if observer is not None:
            observer.notify_event(MCPServerUnavailable(server=server, message=line))

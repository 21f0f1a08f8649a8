"""The connection models of MCPTool, and the Claude Desktop ``mcp.json`` that lists them.

A connection is configuration, stored as written: ``${VAR}`` and ``${VAR:-default}``
references stay references in every stored copy (a team card, an agent's config in the
event log) and are expanded from the environment only when the connection is opened —
:func:`expand_env` is that one moment. A secret therefore lives in the environment and
never in a database.

The transport is always the config's, never inferred from a URL: ``/sse`` at the end of a
URL means nothing; ``transport="sse"`` does.

An ``mcp.json`` is portable: a stdio server it lists runs in the file's own folder (its
``cwd`` defaults to that folder, and a relative ``cwd`` is relative to it), so the file's
relative paths mean the same from any working directory; and ``${AKGENTIC_PYTHON}`` names
the Python running akgentic (unless the environment sets it), so a server written in
Python needs neither ``python3`` on PATH nor the right one first.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator, model_validator

from akgentic.core.excerpt import validation_words
from akgentic.core.serialization import SerializableModel
from akgentic.core.urls import http_url
from akgentic.core.words import counted

__all__ = [
    "PYTHON_VARIABLE",
    "MCPConfigError",
    "MCPConnectionConfig",
    "MCPHTTPConnectionConfig",
    "MCPStdioConnectionConfig",
    "expand_env",
    "in_folder",
    "read_mcp_config",
]


class MCPConfigError(ValueError):
    """An ``mcp.json`` that cannot be used; the message names the file and the server."""


class MCPConnectionConfig(SerializableModel):
    """What every transport shares: the two timeouts, in seconds.

    ``connect_timeout`` bounds the start (spawn + MCP handshake); ``call_timeout`` bounds
    each request to the server, a tool call included. Past either, the server is answered
    for: a failed start leaves the agent without the server, a call past its timeout is a
    tool error the model reads.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    connect_timeout: float = Field(
        default=10.0,
        gt=0,
        description="Seconds the start may take (spawn and MCP handshake); past it, the agent "
        "goes without the server.",
    )
    call_timeout: float = Field(
        default=60.0,
        gt=0,
        description="Seconds each request to the server may take, a tool call included; past "
        "it, the model reads a tool error.",
    )

    def describe(self) -> str:
        """One line saying where the server is (for errors and the team stream)."""
        raise NotImplementedError


class MCPStdioConnectionConfig(MCPConnectionConfig):
    """A server the agent starts itself and talks to over its stdin/stdout.

    The process gets the MCP SDK's minimal inherited environment (``PATH``, ``HOME``,
    ``USER``...), not the agent's whole one, plus ``stdio_env`` (values may be ``${VAR}``
    references — that is how a token reaches a server). ``stdio_cwd`` is its working
    directory (default: the agent's). It is stopped when the connection closes, with every
    process it started (on Linux; see ``stdio.py``).
    """

    transport: Literal["stdio"] = "stdio"
    """How the server is reached: a process the agent starts."""
    stdio_command: str = Field(min_length=1)
    """The program to start (``npx``, ``uvx``, a path)."""
    stdio_args: list[str] = Field(default_factory=list)
    """Its arguments."""
    stdio_env: dict[str, str] = Field(default_factory=dict)
    stdio_cwd: str | None = None

    def describe(self) -> str:
        return " ".join([self.stdio_command, *self.stdio_args])


class MCPHTTPConnectionConfig(MCPConnectionConfig):
    """A server already running, reached at ``url``.

    ``transport`` is ``"streamable-http"`` (the default) or ``"sse"``. ``headers`` go with
    every request (values may be ``${VAR}`` references, e.g. a bearer token).

    The SSE subtlety: an SSE server answers a request on the long-lived event stream, not
    on the request itself, so ``sse_read_timeout`` — how long that stream may stay silent —
    must be at least ``call_timeout``, or a slow tool call would drop the whole stream.
    """

    transport: Literal["streamable-http", "sse"] = "streamable-http"
    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    sse_read_timeout: float = Field(
        default=300.0,
        gt=0,
        description="Seconds the SSE event stream may stay silent; with sse, at least "
        "call_timeout (answers arrive on that stream).",
    )

    @field_validator("url")
    @classmethod
    def _an_http_url(cls, value: str) -> str:
        if value.startswith("${"):  # resolved when the server is reached
            return value
        return http_url(value, "http://127.0.0.1:8000/mcp", alternative="a ${VAR} reference")

    @model_validator(mode="after")
    def _sse_outlasts_a_call(self) -> MCPHTTPConnectionConfig:
        if self.transport == "sse" and self.sse_read_timeout < self.call_timeout:
            raise ValueError(
                f"sse_read_timeout ({self.sse_read_timeout}s) is shorter than call_timeout "
                f"({self.call_timeout}s): an SSE answer arrives on the event stream, so the "
                f"stream must outlast a call — raise sse_read_timeout"
            )
        return self

    def describe(self) -> str:
        return f"{self.url} ({self.transport})"


# -- environment references ----------------------------------------------------------------
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

PYTHON_VARIABLE = "AKGENTIC_PYTHON"
"""``${AKGENTIC_PYTHON}``: the interpreter running akgentic, unless the environment sets it."""


def expand_env(value: str, *, where: str, environ: dict[str, str] | None = None) -> str:
    """``value`` with every ``${VAR}`` / ``${VAR:-default}`` replaced from the environment.

    A ``${VAR}`` that is not set and has no default raises ValueError naming ``where`` and
    the variable to export. Called only when a connection opens, never on stored data.
    ``${AKGENTIC_PYTHON}`` is this process's interpreter unless ``environ`` sets it.
    """
    env = {PYTHON_VARIABLE: sys.executable, **(os.environ if environ is None else environ)}

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise ValueError(f"{where} refers to ${{{name}}}, which is not set: export {name}")

    return _REFERENCE.sub(replace, value)


# -- mcp.json ---------------------------------------------------------------------------------
_STDIO_KEYS = {"command", "args", "env", "cwd"}
_HTTP_KEYS = {"url", "headers"}
_SHARED_KEYS = {"type"}
_TYPES = {
    "stdio": "stdio",
    "http": "streamable-http",
    "streamable-http": "streamable-http",
    "sse": "sse",
}


def read_mcp_config(path: str | Path) -> dict[str, MCPConnectionConfig]:
    """The servers of a Claude Desktop ``mcp.json``, by name, in file order.

    The format: ``{"mcpServers": {"<name>": {"command", "args", "env", "cwd"}}`` for a
    server started over stdio, ``{"<name>": {"url", "headers"}}`` for one already running
    (streamable HTTP unless ``"type": "sse"``; ``"type"`` may also say ``"stdio"`` or
    ``"http"``). Values are kept as written: ``${VAR}`` references are not expanded here.
    A stdio server runs in the file's folder: ``cwd`` is made absolute against it (and is
    that folder when absent), so relative paths in ``command``/``args`` are the file's.

    Unknown keys are an error naming the server and the key (a misspelt ``"evn"`` would
    otherwise start a server without its token); so are a missing file and bad JSON — each
    a :class:`MCPConfigError` naming the file.
    """
    path = Path(path)
    folder = path.resolve().parent
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise MCPConfigError(f"{path}: cannot read the MCP config: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise MCPConfigError(f"{path}: not valid JSON: {exc}") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise MCPConfigError(
            f'{path}: an MCP config is {{"mcpServers": {{"<name>": {{"command": ...}} or '
            f'{{"url": ...}}}}}} (the Claude Desktop format)'
        )
    found: dict[str, MCPConnectionConfig] = {}
    for name, entry in servers.items():
        try:
            found[name] = _connection(name, entry, folder)
        except (ValueError, ValidationError) as exc:
            raise MCPConfigError(f"{path}: server {name!r}: {_reason(exc)}") from None
    return found


def _connection(name: str, entry: Any, folder: Path) -> MCPConnectionConfig:
    if not isinstance(entry, dict):
        raise ValueError('an entry is an object with "command" (stdio) or "url"')
    kind = entry.get("type")
    if kind is not None and kind not in _TYPES:
        raise ValueError(f'"type" is {kind!r}; use one of {", ".join(sorted(_TYPES))}')
    transport = _TYPES.get(kind or ("stdio" if "command" in entry else "streamable-http"))
    allowed = _SHARED_KEYS | (_STDIO_KEYS if transport == "stdio" else _HTTP_KEYS)
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise ValueError(
            f"{counted(len(unknown), 'unknown key')} {', '.join(unknown)}; "
            f"a {transport} server takes {', '.join(sorted(allowed))}"
        )
    if transport == "stdio":
        if "command" not in entry:
            raise ValueError('a stdio server needs "command"')
        return MCPStdioConnectionConfig(
            stdio_command=entry["command"],
            stdio_args=entry.get("args") or [],
            stdio_env=entry.get("env") or {},
            stdio_cwd=in_folder(entry.get("cwd"), folder),
        )
    if "url" not in entry:
        raise ValueError(f'a {transport} server needs "url"')
    return MCPHTTPConnectionConfig(
        url=entry["url"], transport=transport, headers=entry.get("headers") or {}
    )


def in_folder(cwd: Any, folder: Path) -> Any:
    """``cwd`` against the mcp.json's folder: absent is the folder, relative is under it, a
    ``${VAR}`` start (expanded at connect time) or an absolute path stays as written."""
    if cwd is None:
        return str(folder)
    if not isinstance(cwd, str) or cwd.startswith("${") or Path(cwd).is_absolute():
        return cwd
    return str(folder / cwd)


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return validation_words(exc, top="entry")
    return str(exc)

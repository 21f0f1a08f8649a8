"""One MCP server, for one agent: pydantic-ai's ``MCPToolset`` with a lifecycle around it.

The client is pydantic-ai's (``MCPToolset``, on FastMCP's client); this module adds what an
agent that lives for days needs from it, and nothing else:

- **Lazy, then held.** Nothing connects until the toolset is first entered (the agent's
  first turn). Entering opens the connection once; later entries only count, and the
  connection closes when the last one leaves — the agent holds one entry for its whole
  life and leaves it when it stops.
- **A server that cannot start is not fatal.** The start is bounded by the connection's
  ``connect_timeout``; a failure is reported once (``on_unavailable``: one line for the
  team stream) and the toolset then offers no tools. It is not retried: the agent goes
  on without that server until it restarts.
- **A server that dies is a tool error the model reads.** A call on a closed connection
  (a crash) is answered with ``ToolFailed`` naming the server; the connection is closed
  and opened again, once, at the next entry (the next turn). Errors the server itself
  reports stay pydantic-ai's ``ModelRetry``, so the model corrects its arguments (clipped
  to ``MAX_ERROR_CHARS``: a server may echo a megabyte it was sent).
- **A call past ``call_timeout``** over HTTP is a ``ToolFailed`` saying it was abandoned;
  each request is its own, so the connection stays. Over stdio the connection is
  restarted there and then, and the model reads a ``ModelRetry`` (what ``RetriableError``
  becomes for it) saying the server did not answer in time and the connection was
  restarted: a stdio connection that missed an answer may never deliver another (the
  ``mcp`` client's reader stops on one line that is not UTF-8, and every later call would
  wait its full timeout, until the agent restarted).
- **A result that is not valid MCP** (``content`` not a list, say) is a ``ToolFailed``
  saying so; the server is alive and the connection stays.
- **Content stays content.** Images and embedded resources in a tool result reach the
  model as pydantic-ai ``BinaryContent`` / text, as ``MCPToolset`` maps them — never a
  stringified blob.
- **A tool list fits a model.** Every tool goes with every request, and one a provider
  refuses fails every request of the agent, not just that server's tools; so each of these
  is left out, said once on the team stream (one line per kind, again only when it
  changes):

  - a tool whose name no model provider accepts (OpenAI and Anthropic take
    ``[A-Za-z0-9_-]``, 64 at most);
  - the later tools of a name the server lists twice (pydantic-ai's ``MCPToolset`` would
    keep the last with no word said, and the model could read a description of a tool the
    server does not run);
  - a tool whose input schema no model can use: not an object, a root ``type`` other than
    ``"object"``, or not valid JSON Schema under its own ``$schema`` (2020-12 when it names
    none). The ``mcp`` 2.x client would refuse a whole list over one such tool (a schema
    that is not an object of ``type`` ``"object"``); here it reads the list tool by tool
    (``listing.py``), so that tool is left out alone — and so is a tool it refuses for
    another field out of shape, said in a line of its own. ``mcp`` 1.x lets any object
    through, and neither looks below the root;
  - the tools past ``max_tools`` (a server listing ten thousand would flood the model's
    list, and OpenAI takes 128 in one request), with how to raise it.

  A description longer than ``MAX_DESCRIPTION_CHARS`` is cut with a note. A tool list that
  is not valid MCP as a whole (``tools`` not a list) is a failed server, said as such, not
  a crash: the server is not started again, since it would send the same list.
- **An answer fits a context.** A text longer than ``max_result_chars`` (each text of a
  list, or a structured result as the model reads it, JSON) is cut with a note saying how
  much more there was: a server that echoes a megabyte does not flood the conversation.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, Self, TextIO, TypeVar, cast

import anyio
from pydantic import ValidationError
from pydantic_ai.exceptions import ModelRetry, ToolFailed
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from akgentic.core.excerpt import clip, cut
from akgentic.core.words import counted
from akgentic.tool.mcp.config import (
    MCPConnectionConfig,
    MCPHTTPConnectionConfig,
    MCPStdioConnectionConfig,
    expand_env,
)

if TYPE_CHECKING:
    from pydantic_ai.mcp import MCPToolset

__all__ = [
    "MCPServerToolset",
    "ServerTools",
    "build_server_toolset",
    "callable_name",
    "list_server_tools",
    "rename_hint",
    "start_failure",
]

logger = logging.getLogger(__name__)

_CONNECTION_CLOSED = -32000
_REQUEST_TIMEOUT = -32001
_START_GRACE = 5.0
"""Seconds past ``connect_timeout`` before a start that is still going is abandoned (the
handshake has its own ``connect_timeout``; this bounds a spawn or a TCP connect as well)."""

MAX_ERROR_CHARS = 1_000
"""The longest error of a server the model reads (a server may echo what it was given)."""

MAX_DESCRIPTION_CHARS = 4_000
"""The longest tool description the model reads: it goes with every request of the agent."""

_CALLABLE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""A tool name every model provider accepts (OpenAI's rule; Anthropic's allows 128)."""

DEFAULT_MAX_TOOLS = 128
"""The most tools of one server the agent is offered: OpenAI's limit for one request (every
tool goes with every request; a server listing thousands would flood the model's list)."""

DEFAULT_MAX_RESULT_CHARS = 16_000
"""The longest text of a tool result the model reads (see ``MCPServerToolset``)."""

MISSING_EXTRA = "MCPTool needs the mcp extra (pydantic-ai-slim[mcp]): pip install 'akgentic[mcp]'"


@dataclass
class MCPServerToolset(AbstractToolset[Any]):
    """The toolset of one MCP server for one agent; see the module docstring.

    ``server`` is the server's name (the ``mcpServers`` key); ``connection`` says where it
    is. ``build`` makes the client toolset (pydantic-ai's ``MCPToolset``) when the server
    is first started — so ``${VAR}`` references are read then, and an unset one is a
    failed start like any other. ``client`` is that toolset once built, and ``wrapped`` the
    same with ``prefix`` applied (what the agent lists and calls). A client that has a
    ``repeated`` attribute (the names its last listing held more than once, see
    :func:`_first_of_each_name`) has them said on the team stream.
    """

    server: str
    connection: MCPConnectionConfig
    build: Callable[[], AbstractToolset[Any]]
    prefix: str = ""
    """The card's prefix: the server's tools are named ``<prefix>_<tool>`` (none: ``""``)."""
    on_unavailable: Callable[[str, str], None] | None = None
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    max_tools: int = DEFAULT_MAX_TOOLS
    """The most of the server's tools offered: the first ``max_tools`` it lists that a model
    can be offered (a name it accepts, a schema it can use); the rest are left out, said
    once."""
    client: AbstractToolset[Any] | None = field(default=None, repr=False)
    wrapped: AbstractToolset[Any] | None = field(default=None, repr=False)
    _entries: int = field(default=0, repr=False)
    _open: bool = field(default=False, repr=False)
    _failure: str | None = field(default=None, repr=False)
    _restarts: int = field(default=0, repr=False)
    _opened: int = field(default=0, repr=False)
    """How many times the connection was opened: a call that fails on an earlier one must
    not close the one opened since."""
    _verdicts: dict[str, str | None] = field(default_factory=dict, repr=False)
    """:func:`_unusable_schema` of the schemas (as JSON) of the last listing: checking one
    takes milliseconds, and the tools are listed before each model request."""
    _said: dict[str, object] = field(default_factory=dict, repr=False)
    """What each kind of "left out" line last said (its tools), so a line is said when
    that changes, not at every step: tools are listed before each model request."""

    # -- identity ---------------------------------------------------------------------
    @property
    def id(self) -> str | None:
        return f"mcp:{self.server}"

    @property
    def label(self) -> str:
        return f"MCP server {self.server!r}"

    @property
    def tool_name_conflict_hint(self) -> str:
        """What to do when a tool of this server's is named as another tool of the agent:
        known only once the server listed its tools (its first turn), so said then, after
        pydantic-ai's line naming both sources, in the card's own words."""
        return rename_hint(self.server, self.prefix)

    @property
    def is_open(self) -> bool:
        """Whether the connection is open now."""
        return self._open

    @property
    def failure(self) -> str | None:
        """Why the server is unavailable for good, or None."""
        return self._failure

    async def for_run(self, ctx: RunContext[Any]) -> AbstractToolset[Any]:
        return self  # one connection per agent: never a per-run copy

    async def for_run_step(self, ctx: RunContext[Any]) -> AbstractToolset[Any]:
        return self

    # -- lifecycle --------------------------------------------------------------------
    async def __aenter__(self) -> Self:
        self._entries += 1
        if not self._open and self._failure is None:
            await self._start()
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        self._entries = max(0, self._entries - 1)
        if self._entries == 0:
            await self._close()
        return None

    @property
    def where(self) -> str:
        return self.connection.describe()

    async def _start(self) -> None:
        bound = self.connection.connect_timeout
        try:
            if self.client is None:
                self.client = self.build()
                self.wrapped = self.client.prefixed(self.prefix) if self.prefix else self.client
            assert self.wrapped is not None
            with anyio.fail_after(bound + _START_GRACE):
                await self.wrapped.__aenter__()
        except Exception as exc:  # any failure to start is reported, not raised
            reason = start_failure(self.connection, exc)
            self._failure = reason
            self._unavailable(
                f"MCP server {self.server!r} ({self.where}) cannot start: {reason}. "
                f"The agent goes on without its tools."
            )
            return
        self._open = True
        self._opened += 1

    async def _close(self) -> None:
        if not self._open or self.wrapped is None:
            return
        self._open = False
        try:
            await self.wrapped.__aexit__(None, None, None)
        except Exception as exc:  # a dead server may fail to close cleanly
            logger.debug("MCP server %r did not close cleanly: %r", self.server, exc)

    async def _restart(self, why: str) -> None:
        """Close the connection and open it again now (a failed start is reported as one)."""
        await self._close()
        await self._start()
        if self._open:
            self._unavailable(
                f"MCP server {self.server!r} ({self.where}) {why}; its connection was restarted."
            )

    async def _lost(self, reason: str, what: str = "stopped") -> None:
        """The connection died — or, ``what`` says, failed otherwise: close it; the next
        entry opens it again, once."""
        if not self._open:
            return  # a call running beside this one already saw it go
        await self._close()
        self._restarts += 1
        if self._restarts > 1:
            self._failure = reason
        self._unavailable(
            f"MCP server {self.server!r} ({self.where}) {what}: {reason}. "
            + (
                "It will be started again at the agent's next turn."
                if self._failure is None
                else "The agent goes on without its tools."
            )
        )

    def _unavailable(self, line: str) -> None:
        logger.info("%s", line)  # the line itself goes to the team stream
        if self.on_unavailable is not None:
            self.on_unavailable(self.server, line)

    # -- tools ------------------------------------------------------------------------
    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        if not self._open or self.wrapped is None:
            return {}
        try:
            tools = await self.wrapped.get_tools(ctx)
        except Exception as exc:  # a server that cannot list is a lost server
            invalid = _not_mcp(exc)
            if invalid is None:
                code = _mcp_code(_first_leaf(exc))
                answered = code is not None and code not in (_CONNECTION_CLOSED, _REQUEST_TIMEOUT)
                what = "answered its tool list with an error" if answered else "stopped"
                await self._lost(_reason(exc, self._call_timeout()), what)
                return {}
            await self._close()  # alive, but it would send the same list again
            self._failure = f"its tool list is not valid MCP ({invalid})"
            self._unavailable(
                f"MCP server {self.server!r} ({self.where}) sent a tool list that is not "
                f"valid MCP ({invalid}). The agent goes on without its tools; fix the server."
            )
            return {}
        self._say_repeated(frozenset(getattr(self.client, "repeated", ())))
        usable = {name: tool for name, tool in tools.items() if callable_name(name)}
        self._say_left_out(frozenset(tools) - frozenset(usable))
        offered: dict[str, ToolsetTool[Any]] = {}
        unusable: dict[str, str] = {}
        not_mcp: dict[str, str] = {}
        verdicts: dict[str, str | None] = {}
        for refused in getattr(self.client, "refused", ()):  # left out by the client's check
            schema = refused.schema
            why = None if schema is None else self._schema_verdict(schema, verdicts)
            if why is None:
                not_mcp[refused.name] = refused.error
            else:
                unusable[refused.name] = why
        past = 0
        for name, tool in usable.items():  # in the server's order
            if len(offered) >= self.max_tools:
                past += 1  # not checked: left out whatever its schema
                continue
            why = self._schema_verdict(tool.tool_def.parameters_json_schema, verdicts)
            if why is None:
                offered[name] = _owned(tool, self)
            else:
                unusable[self._server_name_of(name)] = why
        self._verdicts = verdicts
        self._say_unusable(unusable)
        self._say_invalid(not_mcp)
        self._say_past_cap(past)
        return offered

    def _schema_verdict(self, schema: object, verdicts: dict[str, str | None]) -> str | None:
        """:func:`_unusable_schema`, from the last listing's verdicts when it was there;
        each verdict given is kept in ``verdicts`` (this listing's)."""
        try:
            key = json.dumps(schema, sort_keys=True, default=repr)
        except Exception:  # not JSON, or nested past recursion: no key, check it anew
            return _unusable_schema(schema)
        if key not in verdicts:
            verdicts[key] = (
                self._verdicts[key] if key in self._verdicts else _unusable_schema(schema)
            )
        return verdicts[key]

    def _server_name_of(self, name: str) -> str:
        """A tool's name as the server lists it (the name offered, without the prefix)."""
        return name.removeprefix(f"{self.prefix}_") if self.prefix else name

    def _say_unusable(self, why: dict[str, str]) -> None:
        """One line for the tools whose schema no model can use, when they change: each
        named (as the server names it) with why, three at most."""
        if not self._changed("unusable", why) or not why:
            return
        self._unavailable(
            f"MCP server {self.server!r} ({self.where}) serves {counted(len(why), 'tool')} "
            f"whose input schema no model can use ({_first_three(why)}); they are left out. Fix "
            f"their inputSchema on the server: a JSON Schema of type 'object'."
        )

    def _say_invalid(self, why: dict[str, str]) -> None:
        """One line for the tools the client's check refused for something other than
        their schema (a field out of shape), when they change: each named with where and
        what, three at most."""
        if not self._changed("invalid", why) or not why:
            return
        self._unavailable(
            f"MCP server {self.server!r} ({self.where}) lists {counted(len(why), 'tool')} "
            f"that are not valid MCP ({_first_three(why, 160)}); they are left out and its "
            f"other tools are offered. Fix them on the server."
        )

    def _changed(self, kind: str, said: object) -> bool:
        """Whether the ``kind`` line would say something new (and remember it if so)."""
        if self._said.get(kind) == said:
            return False
        self._said[kind] = said
        return True

    def _say_left_out(self, names: frozenset[str]) -> None:
        """One line for the tools a model could not be offered, when that set changes."""
        if not self._changed("unnamed", names) or not names:
            return
        self._unavailable(
            f"MCP server {self.server!r} ({self.where}) serves {counted(len(names), 'tool')} "
            f"whose names no model accepts ({_shown(names)}: letters, digits, '_' and '-', "
            f"64 at most, prefix included); they are left out. Rename them on the server "
            f"or shorten the card's tool_prefix."
        )

    def _say_past_cap(self, past: int) -> None:
        """One line for the tools past ``max_tools``, when their number changes."""
        if not self._changed("past_cap", (past, self.max_tools)) or not past:
            return
        usable = counted(self.max_tools + past, "tool")
        self._unavailable(
            f"MCP server {self.server!r} ({self.where}) offers {usable} a model can use, "
            f"more than its card's max_tools ({self.max_tools:,}): the first "
            f"{self.max_tools:,} in the server's order are offered and the other {past:,} "
            f"left out. Raise max_tools on its MCPTool card to offer more."
        )

    def _say_repeated(self, names: frozenset[str]) -> None:
        """One line for the names the server lists more than once, when that set changes:
        the first tool of each is offered, the later ones are left out."""
        if not self._changed("repeated", names) or not names:
            return
        self._unavailable(
            f"MCP server {self.server!r} ({self.where}) lists "
            f"{counted(len(names), 'tool name')} more than once ({_shown(names)}); the first "
            f"tool of each name is offered and the later ones are left out. Give each tool "
            f"its own name on the server."
        )

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        if not self._open or self.wrapped is None:
            raise ToolFailed(
                f"MCP server {self.server!r} is not running, so {name} did not run. "
                f"Go on without it."
            )
        opened = self._opened
        try:
            result = await self.wrapped.call_tool(name, tool_args, ctx, tool)
            return _bounded(result, self.max_result_chars, name)
        except (ModelRetry, ToolFailed) as exc:
            code = _mcp_code(exc.__cause__)
            if code == _REQUEST_TIMEOUT:
                await self._timed_out(name, opened)
            if code != _CONNECTION_CLOSED:
                said = exc.message if isinstance(exc, ToolFailed) else str(exc)
                if len(said) <= MAX_ERROR_CHARS:
                    raise
                raise type(exc)(clip(said, MAX_ERROR_CHARS)) from exc
            reason = clip(str(exc) or "connection closed", MAX_ERROR_CHARS)
        except Exception as exc:  # transport failures are the model's to read
            invalid = _not_mcp(exc)
            if invalid is not None:
                raise ToolFailed(
                    f"MCP server {self.server!r} sent a result for {name} that is not valid MCP "
                    f"({invalid}), so there is no answer to read. The server is still running."
                ) from None
            reason = _reason(exc, self._call_timeout())
        if opened != self._opened:  # the connection it ran on was already replaced
            raise ToolFailed(
                f"MCP server {self.server!r}'s connection was restarted while {name} ran "
                f"({reason}); the call did not complete. Call it again if you still need it."
            )
        await self._lost(reason)
        raise ToolFailed(
            f"MCP server {self.server!r} stopped while running {name} ({reason}); the call "
            f"did not complete and the server's tools are unavailable for now."
        )

    async def _timed_out(self, name: str, opened: int) -> NoReturn:
        """A call got no answer within ``call_timeout``: say so — and over stdio, restart
        the connection first (see the module docstring), unless a call beside this one
        already did."""
        late = f"MCP server {self.server!r} did not answer {name} within {self._call_timeout():g}s"
        if not isinstance(self.connection, MCPStdioConnectionConfig):
            raise ToolFailed(f"{late}; the call was abandoned.")
        if opened == self._opened and self._open:
            await self._restart(f"did not answer {name} within {self._call_timeout():g}s")
        if not self._open:
            raise ToolFailed(
                f"{late}, and its connection could not be restarted "
                f"({self._failure or 'it was closed'}): its tools are unavailable. Go on "
                f"without them."
            )
        raise ModelRetry(
            f"{late}; its connection was restarted and the call did not complete. Call it "
            f"again if you still need it."
        )

    def _call_timeout(self) -> float:
        return self.connection.call_timeout


def rename_hint(server: str, prefix: str) -> str:
    """What to do when a tool of ``server`` (its card's ``prefix``) is named as another tool
    of the agent: the card setting that renames its tools, in the card's own words."""
    if not prefix:
        return (
            f"Give MCP server {server!r} a tool_prefix on its card (it has none: its tools "
            f"keep the server's names)."
        )
    return (
        f"Give MCP server {server!r} another tool_prefix on its card (now {prefix!r}: its "
        f"tools are named {prefix}_<tool>)."
    )


def callable_name(name: str) -> bool:
    """Whether every model provider accepts ``name`` as a tool's (the prefix included)."""
    return _CALLABLE_NAME.match(name) is not None


def _unusable_schema(schema: object) -> str | None:
    """Why a tool's input schema cannot be offered to a model, in a few words; None when it
    can.

    A tool's arguments are a JSON object, so its schema must be a JSON object whose root
    ``type`` is ``"object"`` (OpenAI refuses a request holding any other), and a JSON Schema
    its own draft accepts — its ``$schema``, else 2020-12 — since providers check schemas,
    and one they refuse fails the agent's every request, not just that tool's calls. What
    cannot be checked at all (a ``$schema`` that is not a string, nesting past Python's
    recursion limit) is unusable too.
    """
    if not isinstance(schema, dict):
        return f"it is {type(schema).__name__}, not a JSON object"
    kind = schema.get("type")
    if kind is None:
        return "it has no type; a tool's input is type 'object'"
    if kind != "object":
        return f"its type is {clip(repr(kind), 40)}, not 'object'"
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import Draft202012Validator, validator_for

    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as exc:
        where = ".".join(str(part) for part in exc.absolute_path) or "its root"
        return f"not valid JSON Schema at {clip(where, 80)}: {clip(exc.message, 120)}"
    except Exception as exc:  # a check that cannot be made is not a schema to send
        return f"it cannot be checked ({type(exc).__name__})"
    return None


def _shown(names: frozenset[str], most: int = 5) -> str:
    """Up to ``most`` of ``names``, sorted and quoted, and how many more there are."""
    shown = ", ".join(repr(clip(n, 80)) for n in sorted(names)[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


def _bounded(result: Any, budget: int, name: str) -> Any:
    """``result`` with every text over ``budget`` characters cut (see the module docstring)."""
    hint = f"{name}'s answer was longer; ask it for less"
    if isinstance(result, str):
        return cut(result, budget, hint)
    if isinstance(result, list):
        return [cut(item, budget, hint) if isinstance(item, str) else item for item in result]
    if isinstance(result, dict):
        text = json.dumps(result, default=str, ensure_ascii=False)
        return cut(text, budget, hint) if len(text) > budget else result
    return result


def _owned(tool: ToolsetTool[Any], owner: MCPServerToolset) -> ToolsetTool[Any]:
    """The tool, re-pointed at ``owner`` so its calls come through the lifecycle, its
    description cut to ``MAX_DESCRIPTION_CHARS`` (it is sent with every request)."""
    described = tool.tool_def.description
    if described is not None and len(described) > MAX_DESCRIPTION_CHARS:
        hint = "the server's description was longer"
        short = replace(tool.tool_def, description=cut(described, MAX_DESCRIPTION_CHARS, hint))
        return replace(tool, toolset=owner, tool_def=short)
    return replace(tool, toolset=owner)


def _not_mcp(exc: BaseException) -> str | None:
    """What is wrong with a result that does not validate as MCP, or None when ``exc``
    (or the first leaf of its groups) is something else."""
    exc = _first_leaf(exc)
    if not isinstance(exc, ValidationError):
        return None
    errors = exc.errors(include_url=False)
    if not errors:
        return clip(f"{exc.title}: {exc}", MAX_ERROR_CHARS)
    where = ".".join(str(part) for part in errors[0]["loc"]) or "the result"
    return clip(f"{exc.title}: {where}: {errors[0]['msg']}", MAX_ERROR_CHARS)


def _first_leaf(exc: BaseException) -> BaseException:
    """``exc``, or the first exception inside it when it is a group (its groups too): what
    a task group raised for the failure that ended it."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _mcp_code(error: BaseException | None) -> int | None:
    """The JSON-RPC error code of an MCP SDK error (either SDK generation), or None."""
    code = getattr(error, "code", None)
    if code is None:
        code = getattr(getattr(error, "error", None), "code", None)
    return code if isinstance(code, int) else None


def start_failure(connection: MCPConnectionConfig, exc: BaseException) -> str:
    """Why a server could not start, in one line (a stdio server that closed its pipes
    before the handshake is said as such: its stderr has the details; a process that could
    not be spawned is said with what to do)."""
    reason = _reason(exc, connection.connect_timeout)
    if isinstance(connection, MCPStdioConnectionConfig):
        spawn = _spawn_error(exc)
        if spawn is not None:
            return _spawn_words(connection, spawn)
        if "closed" in reason:
            reason = "the process exited before the MCP handshake (its stderr says why)"
    return reason


def _spawn_error(exc: BaseException) -> OSError | None:
    """The ``OSError`` of a failed spawn (it names a file) in ``exc``'s chain, or None."""
    link: BaseException | None = exc
    for _ in range(8):
        if link is None:
            return None
        link = _first_leaf(link)
        if isinstance(link, OSError) and link.filename is not None:
            return link
        link = link.__cause__ or link.__context__
    return None


def _spawn_words(connection: MCPStdioConnectionConfig, error: OSError) -> str:
    """A failed spawn in words saying what to do, naming the command and the cwd as the
    config writes them (``${VAR}`` unexpanded: the value may be a secret)."""
    command = connection.stdio_command
    cwd = connection.stdio_cwd
    if cwd is not None and str(error.filename) == _expanded_or_none(cwd):
        return f"its cwd {cwd!r} is not a folder that can be entered ({error.strerror}): fix cwd"
    if isinstance(error, FileNotFoundError):
        return (
            f"the command {command!r} was not found: install it, or give its full path "
            f"(a bare name is looked up on PATH)"
        )
    if isinstance(error, PermissionError | IsADirectoryError):
        return (
            f"the command {command!r} cannot be run ({error.strerror}): make it executable "
            f"(chmod +x), or give its interpreter as the command and it as an argument"
        )
    return f"the command {command!r} cannot be run: {error.strerror or type(error).__name__}"


def _expanded_or_none(value: str) -> str | None:
    try:
        return expand_env(value, where="cwd")
    except ValueError:
        return None


def _reason(exc: BaseException, timeout: float) -> str:
    """A one-line reason: the first real cause in exception groups, and a timeout anywhere
    in the chain said as one (a handshake timeout arrives wrapped as "failed to connect")."""
    exc = _first_leaf(exc)
    link: BaseException | None = exc
    for _ in range(8):
        if link is None:
            break
        if isinstance(link, TimeoutError) or _mcp_code(link) == _REQUEST_TIMEOUT:
            return f"no answer within {timeout:g}s"
        link = link.__cause__ or link.__context__
    text = str(exc).strip() or type(exc).__name__
    return clip(text.splitlines()[0], MAX_ERROR_CHARS)


# -- building -------------------------------------------------------------------------------
def build_server_toolset(
    server: str,
    connection: MCPConnectionConfig,
    prefix: str,
    on_unavailable: Callable[[str, str], None] | None = None,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    max_tools: int = DEFAULT_MAX_TOOLS,
) -> MCPServerToolset:
    """A fresh, unopened toolset for ``server`` (one per agent), tools named ``prefix_tool``.

    Raises ImportError naming the extra when ``pydantic-ai-slim[mcp]`` is not installed —
    at wiring, since no server of the card could ever start.
    """
    _require_extra()

    def build() -> AbstractToolset[Any]:
        return _client(server, connection)

    return MCPServerToolset(
        server=server,
        connection=connection,
        build=build,
        prefix=prefix,
        on_unavailable=on_unavailable,
        max_result_chars=max_result_chars,
        max_tools=max_tools,
    )


def _require_extra() -> None:
    """ImportError naming the extra when ``pydantic-ai-slim[mcp]`` is not installed."""
    try:
        import fastmcp.client.transports  # noqa: F401
        import pydantic_ai.mcp  # noqa: F401
    except ImportError as exc:
        raise ImportError(MISSING_EXTRA) from exc


class ServerTools(NamedTuple):
    """One look at a server's tools: the names it serves (the first of each), in its order,
    and those the client's check left out, each with what is wrong with it."""

    names: list[str]
    left_out: dict[str, str]


async def list_server_tools(server: str, connection: MCPConnectionConfig) -> ServerTools:
    """Start ``server``, list its tools and close it: one look, no lifecycle.

    The start is bounded by ``connect_timeout`` and the listing by ``call_timeout`` (both
    handed to the client; the whole is given up ``_START_GRACE`` seconds past their sum).
    Raises whatever the start or the listing raised (see :func:`start_failure`).
    """
    _require_extra()
    client = _client(server, connection)
    bound = connection.connect_timeout + connection.call_timeout + _START_GRACE
    with anyio.fail_after(bound):
        async with client:
            tools = await client.list_tools()
    left_out = {
        refused.name: (None if refused.schema is None else _unusable_schema(refused.schema))
        or refused.error
        for refused in getattr(client, "refused", ())
    }
    return ServerTools([tool.name for tool in tools], left_out)


def _stderr_for_servers() -> TextIO | Path:
    """Where a stdio server's stderr goes: ours when it is a real file (a server explains
    its own failures there), else the process's original stderr, else nowhere — a captured
    ``sys.stderr`` (a test runner, a notebook) has no descriptor a child process can use."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (AttributeError, OSError, ValueError):
            continue
    return Path(os.devnull)


def _client(server: str, connection: MCPConnectionConfig) -> MCPToolset[Any]:
    """pydantic-ai's ``MCPToolset`` over the connection's own transport, keeping the first
    tool of each name (:func:`_first_of_each_name`).

    ``${VAR}`` references are expanded here, from this process's environment; an unset
    one raises ValueError naming the server, the field and the variable.
    """
    from fastmcp.client.transports import SSETransport, StreamableHttpTransport

    from akgentic.tool.mcp.stdio import stdio_transport

    def env(value: str, what: str) -> str:
        return expand_env(value, where=f"{what} of MCP server {server!r}")

    transport: Any
    if isinstance(connection, MCPStdioConnectionConfig):
        transport = stdio_transport(  # the process tree lives as long as the connection
            env(connection.stdio_command, "the command"),
            [env(a, "an argument") for a in connection.stdio_args],
            env={k: env(v, f"env {k}") for k, v in connection.stdio_env.items()} or None,
            cwd=env(connection.stdio_cwd, "cwd") if connection.stdio_cwd else None,
            log_file=_stderr_for_servers(),
            shaped=_tool_by_tool,
        )
    elif isinstance(connection, MCPHTTPConnectionConfig):
        url = env(connection.url, "the url")
        headers = {k: env(v, f"header {k}") for k, v in connection.headers.items()} or None
        if connection.transport == "sse":
            transport = _tool_by_tool(SSETransport)(
                url=url, headers=headers, sse_read_timeout=connection.sse_read_timeout
            )
        else:
            transport = _tool_by_tool(StreamableHttpTransport)(url=url, headers=headers)
    else:  # pragma: no cover — the two models above are the only connections
        raise TypeError(f"unknown MCP connection {type(connection).__name__}")
    return _first_of_each_name()(
        transport,
        id=server,
        init_timeout=connection.connect_timeout,
        read_timeout=connection.call_timeout,
    )


T = TypeVar("T")


def _tool_by_tool(transport: type[T]) -> type[T]:
    """``transport``'s class reading a server's tool list tool by tool (``listing.py``): with
    the ``mcp`` 2.x client, one tool out of shape is left out instead of the whole list
    refused. The ``mcp`` 1.x client takes any schema object and has none of the seams that
    reading uses: there, ``transport`` as it is."""
    try:
        from akgentic.tool.mcp.listing import tool_by_tool
    except ImportError:  # the mcp 1.x client (fastmcp 3)
        return transport
    return cast("type[T]", tool_by_tool(cast("Any", transport)))


@functools.cache
def _first_of_each_name() -> type[MCPToolset[Any]]:
    """pydantic-ai's ``MCPToolset``, whose listing keeps the first tool of each name.

    ``MCPToolset.get_tools`` makes a dict of the server's list, so of two tools with one
    name it would keep the later, and say nothing. Here the later ones are taken out of the
    list before it is read, and ``repeated`` holds their names as of the last listing (the
    owning ``MCPServerToolset`` says them). Made on first use: ``pydantic_ai.mcp`` needs
    the mcp extra, which importing this module does not.
    """
    from pydantic_ai.mcp import MCPToolset

    class FirstOfEachName(MCPToolset[Any]):
        repeated: frozenset[str] = frozenset()
        refused: tuple[Any, ...] = ()

        async def list_tools(self) -> list[Any]:
            seen: set[str] = set()
            kept: list[Any] = []
            repeated: set[str] = set()
            listed = await super().list_tools()
            try:  # the session of this listing: where its refused tools were kept
                self.refused = tuple(getattr(self.client.session, "refused", ()))
            except Exception:  # no session (the connection just ended): none refused said
                self.refused = ()
            for tool in listed:
                if tool.name in seen:
                    repeated.add(tool.name)
                else:
                    seen.add(tool.name)
                    kept.append(tool)
            self.repeated = frozenset(repeated)
            return kept

    return FirstOfEachName


def _first_three(why: dict[str, str], reason_limit: int | None = None) -> str:
    """The first three tools of ``why`` by name (clipped), each with why (clipped at
    ``reason_limit``), and how many more: the words a left-out line names them with."""
    shown = "; ".join(
        f"{clip(n, 80)!r}: {w if reason_limit is None else clip(w, reason_limit)}"
        for n, w in sorted(why.items())[:3]
    )
    return shown + (f"; and {len(why) - 3} more" if len(why) > 3 else "")

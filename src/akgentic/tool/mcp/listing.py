"""A server's tool list read tool by tool: one tool out of shape does not take the others.

The ``mcp`` 2.x client checks a ``tools/list`` answer as a whole, against the negotiated
protocol version's schema (``mcp_types.methods.validate_server_result``, inside
``ClientSession.send_request``), before anyone reads it: a single tool whose
``inputSchema`` has a root ``type`` other than ``"object"`` — or any other field out of
shape — fails the list, and the agent would lose every tool of the server. No public call
of the session hands back the answer before that check. Two public seams reach it:

- a ``ClientSession`` runs on a dispatcher it may be given (``dispatcher=``), and every
  answer passes through the dispatcher's ``send_raw_request`` as plain JSON;
- fastmcp's transports build the session class their ``TransportOptions`` name
  (``session_class``).

So :class:`ToolByToolDispatcher` checks each tool of a ``tools/list`` answer on its own,
as the session would check the list, keeps those that pass and records the others
(:class:`RefusedTool`: the name, the ``inputSchema`` as sent and what the check said);
:class:`ToolByToolSession` runs on one and shows what it refused of the last listing
(``refused``); :func:`tool_by_tool` is a transport class whose connections use that
session. The session then checks what is left, as before: an answer out of shape as a
whole (``tools`` not a list) is still refused whole.

Importing this module needs the ``mcp`` 2.x client (the mcp extra): the ``mcp`` 1.x client
lets any schema object through, and has none of these seams (see ``toolset.py``).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any, TypeVar, cast

from fastmcp.client.transports import ClientTransport
from fastmcp.client.transports.base import TransportOptions, VersionAwareClientSession
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types.methods import validate_server_result
from pydantic import ValidationError

__all__ = [
    "RefusedTool",
    "ToolByToolDispatcher",
    "ToolByToolSession",
    "split_listing",
    "tool_by_tool",
]

_TOOLS_LIST = "tools/list"

T = TypeVar("T", bound=ClientTransport)


@dataclass(frozen=True)
class RefusedTool:
    """A tool of a listing that the client's check refused, left out of the list.

    ``name`` is the server's (its ``repr`` when it is not a string), ``schema`` its
    ``inputSchema`` as sent (``None`` when it sent none), ``error`` the check's first
    complaint, located within the tool (``inputSchema.type: Input should be 'object'``).
    """

    name: str
    schema: object
    error: str


def _refusal(tool: object, exc: ValidationError) -> RefusedTool:
    """``tool`` as refused by ``exc``, a check of a one-tool list (its paths start
    ``tools.0``, taken off here)."""
    errors = exc.errors(include_url=False)
    where, what = "the tool", exc.title
    if errors:
        path = [str(p) for p in errors[0]["loc"]][2:]
        where, what = ".".join(path) or "the tool", str(errors[0]["msg"])
    fields = tool if isinstance(tool, dict) else {}
    name = fields.get("name")
    return RefusedTool(
        name=name if isinstance(name, str) else repr(name),
        schema=fields.get("inputSchema"),
        error=f"{where}: {what}",
    )


def split_listing(answer: dict[str, Any], version: str) -> tuple[dict[str, Any], list[RefusedTool]]:
    """``answer`` (a ``tools/list`` result) with the tools the check of ``version`` refuses
    taken out, and those tools. An answer whose ``tools`` is no list, or a version with no
    check, is given back as it is: the session refuses or takes it whole, as before."""
    tools = answer.get("tools")
    if not isinstance(tools, list):
        return answer, []
    try:
        validate_server_result(_TOOLS_LIST, version, answer)
        return answer, []  # the usual case: one check, as the session makes it
    except ValidationError:
        pass  # some tool is out of shape: which, below
    except (KeyError, ValueError):  # no check of this version: nothing to refuse by
        return answer, []
    kept: list[Any] = []
    refused: list[RefusedTool] = []
    for tool in tools:
        try:
            validate_server_result(_TOOLS_LIST, version, {"tools": [tool]})
        except ValidationError as exc:
            refused.append(_refusal(tool, exc))
            continue
        kept.append(tool)
    return {**answer, "tools": kept}, refused


class ToolByToolDispatcher(JSONRPCDispatcher[Any]):
    """The SDK's JSON-RPC dispatcher, whose ``tools/list`` answers come out checked tool by
    tool (:func:`split_listing`, under the version ``version()`` names; none yet: as they
    came). ``refused`` holds the tools left out of the last listing — every page of it: a
    first page (no cursor) starts it anew, a later page adds to it."""

    def __init__(self, *args: Any, version: Callable[[], str | None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._version = version
        self.refused: list[RefusedTool] = []

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, *args: Any, **kwargs: Any
    ) -> dict[str, Any]:
        answer = await super().send_raw_request(method, params, *args, **kwargs)
        version = self._version()
        if method != _TOOLS_LIST or version is None:
            return answer
        kept, refused = split_listing(answer, version)
        if not (params or {}).get("cursor"):
            self.refused = []
        self.refused = [*self.refused, *refused]
        return kept


class ToolByToolSession(VersionAwareClientSession):
    """fastmcp's client session on a :class:`ToolByToolDispatcher` of its own (unless it is
    handed a dispatcher: then as it is, and ``refused`` stays empty)."""

    def __init__(
        self, read_stream: Any = None, write_stream: Any = None, *args: Any, **kwargs: Any
    ) -> None:
        self._tool_by_tool: ToolByToolDispatcher | None = None
        if kwargs.get("dispatcher") is None and read_stream is not None:
            self._tool_by_tool = ToolByToolDispatcher(
                read_stream, write_stream, version=lambda: self.protocol_version
            )
            kwargs["dispatcher"] = self._tool_by_tool
            read_stream = write_stream = None
        super().__init__(read_stream, write_stream, *args, **kwargs)

    @property
    def refused(self) -> list[RefusedTool]:
        """The tools left out of the last listing (see :class:`ToolByToolDispatcher`)."""
        return [] if self._tool_by_tool is None else list(self._tool_by_tool.refused)


@functools.cache
def tool_by_tool(transport: type[T]) -> type[T]:
    """``transport``'s class, whose connections read tool lists tool by tool: its sessions
    are :class:`ToolByToolSession` where they would be fastmcp's default one (a session
    class someone chose stays theirs)."""

    class ToolByToolTransport(transport):  # type: ignore[valid-type,misc]
        @asynccontextmanager
        async def connect_session(
            self, *, transport_options: TransportOptions | None = None, **session_kwargs: Any
        ) -> AsyncIterator[Any]:
            options = transport_options or TransportOptions()
            if options.session_class is VersionAwareClientSession:
                options = replace(options, session_class=ToolByToolSession)
            connection = super().connect_session(transport_options=options, **session_kwargs)
            async with connection as session:
                yield session

    ToolByToolTransport.__name__ = ToolByToolTransport.__qualname__ = (
        f"ToolByTool{transport.__name__}"
    )
    return cast("type[T]", ToolByToolTransport)

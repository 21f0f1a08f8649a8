"""ServerSettings: how ``akgentic serve`` (or :func:`create_app`) runs.

The rule that matters: a server reachable from other machines requires a token. A host
that is not a loopback address without ``token`` is refused at construction, before any
socket is opened (:class:`InsecureServerError`). A server without a token answers only
requests whose ``Host`` is its own (see :mod:`akgentic.server.hosts`), and posted cards
reach only what ``allow_posted`` says (see :mod:`akgentic.server.posted`).
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from akgentic.server.posted import Reach

__all__ = ["InsecureServerError", "ServerSettings", "is_loopback"]


_HOST_NAME = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)$")
_ORIGIN = re.compile(
    r"^[A-Za-z][A-Za-z0-9+.-]*://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$"
)
"""An origin as a browser sends it (``Origin``): scheme, host, optional port, no path."""


class InsecureServerError(ValueError):
    """A server off loopback without a token."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine (``localhost``, a
    127.x.x.x or ``::1`` address). A host name other than localhost counts as reachable."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


class ServerSettings(BaseModel):
    """Where the server listens and what it allows; see the field descriptions."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    host: str = Field(default="127.0.0.1", description="The address to listen on.")
    port: int = Field(default=8080, ge=0, le=65535, description="0 picks a free port.")
    token: str | None = Field(
        default=None,
        min_length=16,
        description="Bearer token every request (but /health and /docs) must carry; "
        "required off loopback.",
    )
    cors_origins: list[str] = Field(
        default_factory=list, description="Origins a browser may call from; none: CORS off."
    )
    max_body_bytes: int = Field(default=1_048_576, ge=1024, description="Largest request body.")
    heartbeat: float = Field(
        default=15.0,
        gt=0,
        allow_inf_nan=False,
        description="Seconds between SSE keep-alive comments.",
    )
    poll_interval: float = Field(
        default=0.5,
        gt=0,
        allow_inf_nan=False,
        description="Seconds between store reads when following a team run by another process.",
    )
    allow_posted: list[Reach] = Field(
        default_factory=list,
        description="What a posted card may reach on the server host besides its team: "
        "'processes' (MCP stdio commands), 'paths' (files outside the cards folders), "
        "'endpoints' (model and tool URLs, the server's environment variables), "
        "'cards' (card classes loaded after the server started).",
    )
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host names clients may use besides the listening address, localhost, "
        "127.0.0.1 and [::1] (checked always when given, else only without a token).",
    )
    mcp_config: str | None = Field(
        default=None,
        min_length=1,
        description="An mcp.json (Claude Desktop format) whose servers every agent of every "
        "team created here gets; read when the app is built.",
    )

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, origins: list[str]) -> list[str]:
        """An origin the browser's ``Origin`` header can equal (or ``*``): one with a path
        or a trailing ``/`` would never match, and CORS would stay off for it silently."""
        for origin in origins:
            if origin != "*" and not _ORIGIN.match(origin):
                raise ValueError(
                    f"{origin!r} is not an origin: give scheme://host[:port] as a browser "
                    f"sends it, without a path or a trailing '/' (e.g. http://localhost:3000)"
                )
        return origins

    @field_validator("allowed_hosts")
    @classmethod
    def _host_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not _HOST_NAME.match(name):
                raise ValueError(
                    f"{name!r} is not a host name (letters, digits, '.' and '-'; an IPv6 "
                    f"address in brackets), without a scheme, port or path"
                )
        return names

    def __init__(self, **data: Any) -> None:
        """Refuse a server off loopback without a token (raised as itself, not wrapped
        in a validation error, so callers can tell it apart)."""
        super().__init__(**data)
        if self.token is None and not is_loopback(self.host):
            raise InsecureServerError(
                f"host {self.host} is reachable from other machines: set a token of 16 "
                f"characters or more (--token or AKGENTIC_TOKEN); clients send it as "
                f"'Authorization: Bearer <token>'. Or listen on 127.0.0.1."
            )

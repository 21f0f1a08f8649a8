"""The tool catalog's admin endpoints: thin wrappers over ``CatalogService``.

Behind the server's token like every route but ``/health``; the acting principal is taken
from the request: ``api:token-<id>`` (``<id>``: the first 12 hex digits of the token's
SHA-256, so the audit trail tells tokens apart without holding one), or ``api:loopback``
on a server without a token (which only listens on loopback). A credential is accepted in
a request body only (never a path or query: those reach access logs) and never answered
back: views say ``credential_set``. Every refusal is a 4xx saying why.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, TypeVar

from fastapi import APIRouter, Body, Depends, HTTPException, Path, Query, Request, Response

from akgentic.catalog import (
    CatalogError,
    CatalogListing,
    CatalogService,
    ConfigError,
    CredentialError,
    OrphanedInstanceError,
    Principal,
    SecretKeyError,
    ToolDetail,
    ToolView,
    UnknownToolError,
)
from akgentic.catalog.manifest import NAME_PATTERN
from akgentic.client.catalog import (
    ConfigureTool,
    DisableTool,
    EnableTool,
    ProbeOutcome,
    ProbeTool,
    SetCredential,
)
from akgentic.server.context import ServerContext, context
from akgentic.storage import CatalogAuditRecord

__all__ = ["principal", "router"]

router = APIRouter(prefix="/catalog", tags=["catalog"])

T = TypeVar("T")
Ctx = Annotated[ServerContext, Depends(context)]
Name = Annotated[
    str,
    Path(
        pattern=NAME_PATTERN,
        max_length=64,
        description="A tool type, or a catalog instance (a type's name or another).",
    ),
]
TypeName = Annotated[str | None, Query(pattern=NAME_PATTERN, max_length=64)]


def principal(request: Request) -> Principal:
    """Who acts: ``api:token-<id>`` for the server's token, ``api:loopback`` without one."""
    token: str | None = request.app.state.settings.token
    if token is None:
        return Principal(name="loopback", via="api")
    digest = hashlib.sha256(token.encode()).hexdigest()[:12]
    return Principal(name=f"token-{digest}", via="api")


Who = Annotated[Principal, Depends(principal)]


def _catalog(ctx: ServerContext) -> CatalogService:
    return ctx.manager.catalog


@contextmanager
def _answered() -> Iterator[None]:
    """The catalog's refusals as 4xx with their reason (none ever holds a secret)."""
    try:
        yield
    except UnknownToolError as exc:
        raise HTTPException(404, str(exc)) from None
    except ConfigError as exc:
        raise HTTPException(422, str(exc)) from None
    except SecretKeyError as exc:
        raise HTTPException(
            409, f"this server cannot keep credentials: {exc} (its operator sets it)"
        ) from None
    except (OrphanedInstanceError, CredentialError, CatalogError) as exc:
        raise HTTPException(409, str(exc)) from None


def _call(action: Callable[[], T]) -> T:
    with _answered():
        return action()


@router.get("/tools")
def list_tools(ctx: Ctx, who: Who) -> CatalogListing:
    """Every tool type (configured or not) and named instance, the orphaned rows apart,
    and what discovery could not load."""
    return _call(lambda: _catalog(ctx).list(who))


@router.get("/tools/{name}")
def show_tool(name: Name, ctx: Ctx, who: Who) -> ToolDetail:
    """One type or instance: its state, its config schema, the params the model sees."""
    return _call(lambda: _catalog(ctx).show(who, name))


@router.post("/tools/{name}/enable")
def enable_tool(
    name: Name, ctx: Ctx, who: Who, body: Annotated[EnableTool | None, Body()] = None
) -> ToolView:
    """Turn the tool on for surfaces (default: agents). Audited."""
    options = body or EnableTool()
    return _call(
        lambda: _catalog(ctx).enable(who, name, options.surfaces, type_name=options.type_name)
    )


@router.post("/tools/{name}/disable")
def disable_tool(
    name: Name, ctx: Ctx, who: Who, body: Annotated[DisableTool | None, Body()] = None
) -> ToolView:
    """Turn the tool off for surfaces (default: all). Audited."""
    options = body or DisableTool()
    return _call(lambda: _catalog(ctx).disable(who, name, options.surfaces))


@router.put("/tools/{name}/config")
def configure_tool(name: Name, body: ConfigureTool, ctx: Ctx, who: Who) -> ToolView:
    """Replace the non-secret config, validated against the type. Audited."""
    return _call(lambda: _catalog(ctx).configure(who, name, body.config, type_name=body.type_name))


@router.put("/tools/{name}/credential")
def set_credential(name: Name, body: SetCredential, ctx: Ctx, who: Who) -> ToolView:
    """Seal and store the tool's secret (sent in this body only; never answered back).
    Audited as "set"."""
    secret = body.secret.get_secret_value()
    return _call(lambda: _catalog(ctx).set_credential(who, name, secret, type_name=body.type_name))


@router.delete("/tools/{name}/credential")
def clear_credential(name: Name, ctx: Ctx, who: Who, type_name: TypeName = None) -> ToolView:
    """Remove the stored secret. Audited as "cleared"."""
    return _call(lambda: _catalog(ctx).set_credential(who, name, None, type_name=type_name))


@router.post("/tools/{name}/probe")
def probe_tool(
    name: Name, ctx: Ctx, who: Who, body: Annotated[ProbeTool | None, Body()] = None
) -> ProbeOutcome:
    """Check that the tool's outside service answers; the status and time are kept. A
    service that does not answer is a 200 whose ``result.status`` is ``error``."""
    timeout = (body or ProbeTool()).timeout
    view, result = _call(lambda: _catalog(ctx).probe(who, name, timeout))
    return ProbeOutcome(tool=view, result=result)


@router.delete("/tools/{name}", status_code=204)
def remove_tool(name: Name, ctx: Ctx, who: Who, force: bool = False) -> Response:
    """Remove an orphaned instance's row; the row of an installed type is refused (409)
    unless ``force``. Audited."""
    if not _call(lambda: _catalog(ctx).remove(who, name, force=force)):
        raise HTTPException(404, f"no catalog instance {name!r} is stored; see GET /catalog/tools")
    return Response(status_code=204)


@router.get("/audit")
def audit(
    ctx: Ctx,
    who: Who,
    name: Annotated[str | None, Query(pattern=NAME_PATTERN, max_length=64)] = None,
    limit: Annotated[int | None, Query(ge=0, le=100_000)] = None,
) -> list[CatalogAuditRecord]:
    """The audit trail, oldest first: when, who, what, on which tool (of ``name`` only;
    the last ``limit`` lines)."""
    return _call(lambda: _catalog(ctx).audit(who, name, limit))

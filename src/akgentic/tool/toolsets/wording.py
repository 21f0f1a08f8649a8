"""What the model reads about toolsets: the catalog, the response table, the auto-activation
answers. English, short, and in one place, so the tests and the README quote the same text.

The response table (seed 000) — every answer is an ordinary tool return except a blank
name, which is a RetriableError (the model retries with a name):

=================  =====================================  ==========================================
call               the set is …                           answer
=================  =====================================  ==========================================
enable_toolset     inactive                               ``Toolset 'X' activated.``
enable_toolset     active                                 ``Toolset 'X' is already active; its
                                                          timeout is extended.``
enable_toolset     unknown                                ``There is no toolset 'X'. Available
                                                          toolsets: a, b.``
disable_toolset    active                                 ``Toolset 'X' deactivated.``
disable_toolset    inactive                               ``Toolset 'X' deactivated (it was not
                                                          active).``
disable_toolset    unknown                                ``There is no toolset 'X'. Available
                                                          toolsets: a, b.``
either             blank name                             RetriableError naming the toolsets
=================  =====================================  ==========================================
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = [
    "CATALOG_HEADER",
    "DISABLE_TOOL",
    "ENABLE_TOOL",
    "activated",
    "already_active",
    "auto_activated_not_executed",
    "blank_name",
    "deactivated",
    "invalid_arguments",
    "not_active",
    "render_catalog",
    "tool_signature",
    "unknown",
]

ENABLE_TOOL = "enable_toolset"
DISABLE_TOOL = "disable_toolset"

CATALOG_HEADER = (
    "## Toolsets\n"
    "Named groups of tools, off until you need them. enable_toolset(name) adds a toolset's "
    "tools to your tool list from your next step on; disable_toolset(name) removes them. "
    "Both are idempotent. A toolset stays active until 10 minutes after the last use of "
    "one of its tools; the context updates say which toolsets are active."
)
"""The catalog's first lines; one ``name — description`` line per toolset follows."""


def render_catalog(rows: Iterable[tuple[str, str]]) -> str:
    """The SYSTEM_PROMPT section: the header, then ``name — description`` per toolset.

    Frozen: it never says which sets are active (that is LLM_CONTEXT's job), so enabling
    a set never changes the cached prefix. ``""`` when there is no toolset.
    """
    lines = [f"{name} — {description}" for name, description in rows]
    return "\n".join([CATALOG_HEADER, *lines]) if lines else ""


def _listing(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "(none)"


def activated(name: str) -> str:
    return f"Toolset '{name}' activated."


def already_active(name: str) -> str:
    return f"Toolset '{name}' is already active; its timeout is extended."


def deactivated(name: str) -> str:
    return f"Toolset '{name}' deactivated."


def not_active(name: str) -> str:
    return f"Toolset '{name}' deactivated (it was not active)."


def unknown(name: str, available: Sequence[str]) -> str:
    return f"There is no toolset '{name}'. Available toolsets: {_listing(available)}."


def blank_name(tool: str, available: Sequence[str]) -> str:
    return f"{tool} needs the name of a toolset: one of {_listing(available)}."


def tool_signature(name: str, schema: dict[str, object]) -> str:
    """``name(a, b?)``: the parameters of a tool's JSON schema, ``?`` marking optional ones."""
    properties = schema.get("properties")
    required = schema.get("required")
    names = list(properties) if isinstance(properties, dict) else []
    needed = set(required) if isinstance(required, list) else set()
    return f"{name}({', '.join(p if p in needed else f'{p}?' for p in names)})"


def auto_activated_not_executed(
    toolset: str, tool: str, signatures: Sequence[str], problems: str, schema: str
) -> str:
    """The answer to a call of an inactive set's tool whose arguments do not validate.

    It says, explicitly, that the call was NOT executed — otherwise the model assumes it
    ran and invents its result.
    """
    return (
        f"Toolset '{toolset}' activated; its tools: {_listing(signatures)}. "
        f"Your call to {tool} was NOT executed yet: its arguments do not match its schema "
        f"({problems}). Its schema: {schema}. Call {tool} again with arguments that match it."
    )


def invalid_arguments(tool: str, errors: str, schema: str) -> str:
    """The answer to invalid arguments: what is wrong, and the schema to follow."""
    return f"The arguments of {tool} do not match its schema ({errors}). Its schema: {schema}"

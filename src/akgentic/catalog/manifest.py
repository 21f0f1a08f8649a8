"""The type contract: a class, its manifest, and the decorator that declares it.

A catalog **type** is a class in code — a pydantic model (a ``ToolCard`` for a tool an
agent uses; any model for a service such as an embeddings endpoint) whose instances are
built from an instance's non-secret config (``cls.model_validate(config)``). It carries a
:class:`ToolManifest` as the class attribute ``manifest`` and is declared with
:func:`register_tool`::

    @register_tool
    class JiraTool(ToolCard):
        manifest: ClassVar[ToolManifest] = ToolManifest(
            name="jira", description="Read and comment on Jira issues.",
            access="write", credential="api_key",
        )
        site: str                                    # non-secret config: the card's fields
        _token: str | None = PrivateAttr(default=None)

        def bind_credential(self, secret: str) -> None:   # the credential, at wiring time
            self._token = secret

        def probe(self, timeout: float) -> str:           # the "Test" button
            ...  # a light ping that hands ``timeout`` to its client; raise on failure

        def get_tools(self) -> list[Callable[..., Any]]:  # the body the model calls
            ...

``manifest`` is annotated ``ClassVar`` (pydantic would take it for a field otherwise).
The optional hooks, by name (duck-typed, so a card in ``akgentic.tool`` declares them
without importing the catalog):

- ``bind_credential(self, secret: str) -> None`` — required when the manifest names a
  ``credential`` kind: keep the secret in a ``PrivateAttr``, never in a field, so it is
  never serialized (not into a team card, not into the event log).
- ``probe(self, timeout: float) -> str`` — a type with an outside exit declares it: a light
  ping of the service (never a real model request), run on an instance built from the
  config with the credential bound. It returns a one-line detail when the service answers
  as it should and raises (any exception, its message the reason) when not. It hands
  ``timeout`` to its I/O client: a thread cannot be cancelled.

The decorator checks the contract and marks the class; it registers nothing globally.
Discovery (``akgentic.catalog.registry``) collects marked classes from the places it
walks, so a type whose package is removed leaves the list at the next start.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, TypeVar, overload

from pydantic import BaseModel, ConfigDict, Field

from akgentic.tool.core.installed import is_declared as is_registered_tool
from akgentic.tool.core.installed import mark_declared

__all__ = [
    "Access",
    "CredentialKind",
    "ToolManifest",
    "check_type",
    "is_registered_tool",
    "register_tool",
]

Access = Literal["read_only", "write"]
"""What a type's tools may do: read only, or change things (the platform's presets are
read-only; a custom type may write, at the organization's own responsibility)."""

CredentialKind = Literal["api_key", "token", "password"]
"""The kind of secret a type takes (``credential_enc``), shown to the admin who sets it."""

NAME_PATTERN = r"^[a-z][a-z0-9_.-]{0,63}$"

T = TypeVar("T", bound=type[Any])


class ToolManifest(BaseModel):
    """What the catalog knows of a type without running it.

    - ``name`` — the type's key (lower case, digits, ``_ . -``): what an instance links to.
    - ``description`` — one line for the admin's list.
    - ``access`` — ``read_only`` or ``write``.
    - ``credential`` — the kind of secret the type takes, or None; with
      ``credential_required`` (the default) wiring refuses an instance that has none.
    - ``params`` — the schema the model sees, by tool name. None derives it from the
      card's tools (``get_tools()`` of a default card), so it never drifts from the code.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME_PATTERN)
    description: str = Field(min_length=1)
    access: Access = "read_only"
    credential: CredentialKind | None = None
    credential_required: bool = True
    params: dict[str, dict[str, Any]] | None = None


def check_type(cls: Any, manifest: ToolManifest | None = None) -> ToolManifest:
    """The manifest of ``cls`` once ``cls`` follows the contract; TypeError saying what is
    missing otherwise."""
    if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
        raise TypeError(
            f"a catalog type is a pydantic model class (a ToolCard, or a model of its "
            f"config); got {cls!r}"
        )
    found = manifest if manifest is not None else getattr(cls, "manifest", None)
    if not isinstance(found, ToolManifest):
        raise TypeError(
            f"{cls.__qualname__} has no manifest: give it a class attribute "
            f"manifest = ToolManifest(name=..., description=...)"
        )
    if found.credential is not None and not callable(getattr(cls, "bind_credential", None)):
        raise TypeError(
            f"{cls.__qualname__} takes a credential ({found.credential}) but defines no "
            f"bind_credential(self, secret: str): keep the secret in a PrivateAttr there"
        )
    probe = getattr(cls, "probe", None)
    if probe is not None and not callable(probe):
        raise TypeError(f"{cls.__qualname__}.probe must be a method probe(self, timeout) -> str")
    return found


@overload
def register_tool(cls: T) -> T: ...


@overload
def register_tool(*, manifest: ToolManifest) -> Any: ...


def register_tool(cls: Any = None, *, manifest: ToolManifest | None = None) -> Any:
    """Declare a catalog type: ``@register_tool`` on a class with a ``manifest``.

    Checks the contract at class definition (a missing manifest or a credential kind
    without ``bind_credential`` is a TypeError naming the class) and marks the class for
    discovery. ``@register_tool(manifest=...)`` sets the manifest on the class first.
    """

    def declare(klass: Any) -> Any:
        if manifest is not None:
            klass.manifest = manifest
        check_type(klass)
        mark_declared(klass)
        return klass

    return declare if cls is None else declare(cls)

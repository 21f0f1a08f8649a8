"""MetadataTool: the team's business context, rendered once into every agent's prefix.

One operator-written template, filled from the team's metadata model
(``Orchestrator.set_metadata()``), read through the observer:
``observer.proxy_ask(observer.orchestrator, Orchestrator).get_metadata()``.

The template grammar: ``{field}`` where ``field`` is a bare field name of the metadata model
(a Python identifier); ``{{`` and ``}}`` are literal braces. Nothing else — no dotted paths,
no indices, no ``!r`` conversions, no ``:spec`` formats, no positional ``{}``/``{0}``.

Validation happens in two places, each raising ValueError next to the mistake:

- the grammar, when the param is built (so at the latest when the card is wired);
- the names, at wiring — but only when the team already holds metadata. ``set_metadata``
  may legitimately run after the agents start, so otherwise the name check moves to the
  first render, which then degrades to an empty block and an ERROR log instead of raising.

The block is a snapshot: rendered at the first render that succeeds, cached, and never
re-read — a later ``set_metadata`` is not reflected, by design (re-reading per turn would
make the prefix volatile and invalidate every agent's prompt cache). A degraded render
caches nothing, so metadata that arrives after start-up still produces its block later.
The snapshot is the agent's for its life, a restart included: it is kept in the agent's
``ToolState.metadata_block``, and a restored agent is given it again rather than a fresh
render (which would change its frozen prefix, and lose the provider's cache of it).

The capability ships off (``render_metadata=False``): there is no template a framework could
supply. ``get_tools()`` is always empty — the model is never handed a metadata fetch.
"""

from __future__ import annotations

import logging
import string
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple, Self, cast

from pydantic import BaseModel, PrivateAttr, field_validator

from akgentic.core.orchestrator import Orchestrator
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.channels import COMMAND, SYSTEM_PROMPT, Channels
from akgentic.tool.core.observer import ActorToolObserver, ToolObserver
from akgentic.tool.core.params import BaseToolParam, resolve_param, serve
from akgentic.tool.core.state import ToolState, read_tool_state

__all__ = ["ASK_TIMEOUT", "MetadataTool", "RenderMetadata", "placeholders"]

logger = logging.getLogger(__name__)

ASK_TIMEOUT = 10.0
"""Seconds to wait for the orchestrator's answer; past it the render degrades (never hangs)."""


def placeholders(template: str) -> list[str]:
    """The field names ``template`` uses, in order of first use; ValueError on bad grammar.

    The error names the offending placeholder and its position in the template.
    """
    names: list[str] = []
    cursor = 0
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:  # a lone "{" or "}"
        raise ValueError(
            f"template {template!r}: {exc}; write {{{{ and }}}} for literal braces"
        ) from None
    for _literal, field, spec, conversion in parsed:
        if field is None:
            continue
        shown = "{" + field + (f"!{conversion}" if conversion else "")
        shown += (f":{spec}" if spec else "") + "}"
        found = template.find(shown, cursor)
        cursor = found + len(shown) if found >= 0 else cursor
        at = f" at position {found}" if found >= 0 else ""
        where = f"placeholder {shown}{at} of template {template!r}"
        if not field:
            raise ValueError(f"{where}: name a metadata field, e.g. {{fiscal_year}}")
        if conversion or spec:
            raise ValueError(f"{where}: conversions and format specs are not allowed")
        if not field.isidentifier():
            raise ValueError(
                f"{where}: only bare field names are allowed — no dotted paths, indices "
                f"or positional arguments"
            )
        if field not in names:
            names.append(field)
    return names


class RenderMetadata(BaseToolParam):
    """Turns the capability on: ``template`` filled from the team metadata.

    - ``template`` — the operator's text (grammar in the module docstring), required.
    - ``header`` — the block's first line; ``""`` for none.
    - ``expose`` — ``{SYSTEM_PROMPT, COMMAND}`` by default: the prompt the agents read, and
      ``/team_metadata`` for a human who wants to see exactly what they were given.
    """

    expose: set[Channels] = {SYSTEM_PROMPT, COMMAND}
    template: str
    header: str = "Team context"

    @field_validator("template")
    @classmethod
    def _grammar(cls, template: str) -> str:
        placeholders(template)
        return template


class _Rendered(NamedTuple):
    block: str | None
    reason: str  # why nothing was rendered; "" on success


class MetadataTool(ToolCard):
    """The team's business context in every agent's prefix; off until configured.

    Needs an ``ActorToolObserver`` (it asks the orchestrator for the metadata) once
    ``render_metadata`` is set. Owns no actor and holds no state beyond the cached block.
    """

    render_metadata: RenderMetadata | bool = False

    _block: str | None = PrivateAttr(default=None)
    _said_missing: bool = PrivateAttr(default=False)
    """Whether the log was told the block has nothing to render yet: a turn asks again
    while it has none (its block joins at a later turn), and says so once, not each turn."""

    _NO_TEMPLATE: ClassVar[str] = (
        "render_metadata=True has no template to render: pass "
        "RenderMetadata(template='...') to turn the capability on"
    )

    @field_validator("render_metadata")
    @classmethod
    def _true_needs_a_template(cls, value: RenderMetadata | bool) -> RenderMetadata | bool:
        if value is True:
            raise ValueError(cls._NO_TEMPLATE)
        return value

    def _param(self) -> RenderMetadata | None:
        return resolve_param(self.render_metadata, RenderMetadata)

    # -- wiring -----------------------------------------------------------------------
    def observer(self, observer: ToolObserver) -> Self:
        """Attach the agent; with the capability on, check the names if metadata exists.

        ValueError when the team already holds metadata and the template names a field
        the metadata model does not declare.
        """
        super().observer(observer)
        param = self._param()
        if param is None:
            return self
        if not isinstance(observer, ActorToolObserver):
            raise TypeError(
                f"MetadataTool needs an ActorToolObserver to ask the orchestrator for the "
                f"team metadata; {type(observer).__name__} is not one"
            )
        metadata, reason = self._fetch(observer)
        if metadata is not None:
            unknown = _unknown(param.template, metadata)
            if unknown:
                raise ValueError(_unknown_message(param.template, unknown, metadata))
        elif reason:
            logger.info("MetadataTool: %s; the names are checked at the first render", reason)
        return self

    # -- hooks ------------------------------------------------------------------------
    def get_system_prompts(self) -> list[Callable[[], str]]:
        if serve(self.render_metadata, RenderMetadata, SYSTEM_PROMPT) is None:
            return []

        def team_metadata_prompt() -> str:
            return self._render().block or ""

        return [team_metadata_prompt]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        if serve(self.render_metadata, RenderMetadata, COMMAND) is None:
            return {}

        def team_metadata() -> str:
            """Show the team context block exactly as this agent's prompt carries it."""
            rendered = self._render()
            if rendered.block is None:
                return f"No team context was rendered: {rendered.reason}."
            return rendered.block or "(the team context block is empty)"

        return {RenderMetadata: team_metadata}

    # -- rendering --------------------------------------------------------------------
    def _render(self) -> _Rendered:
        """The cached block, the one the agent kept from before a restart, or a fresh
        render — cached, and kept in the agent's ``ToolState``, only when it succeeded.

        No lock: two concurrent first renders compute the same text, and a lock in a
        private attribute would make the card impossible to deep-copy.
        """
        if self._block is not None:
            return _Rendered(self._block, "")
        param = self._param()
        if param is None:
            return _Rendered(None, "the capability is off")
        observer = self.observer_or_none()
        if observer is None:
            return _Rendered(None, "the agent is gone or was never wired")
        tool_state = _tool_state(observer)
        if tool_state is not None and tool_state.metadata_block is not None:
            self._block = tool_state.metadata_block
            return _Rendered(self._block, "")
        metadata, reason = self._fetch(observer)
        if metadata is None:
            level = logging.DEBUG if self._said_missing else logging.WARNING
            self._said_missing = True
            logger.log(level, "MetadataTool: nothing rendered yet: %s", reason)
            return _Rendered(None, reason)
        unknown = _unknown(param.template, metadata)
        if unknown:
            message = _unknown_message(param.template, unknown, metadata)
            logger.error("MetadataTool: %s — rendering an empty block", message)
            return _Rendered(None, message)
        values = {name: getattr(metadata, name) for name in placeholders(param.template)}
        body = param.template.format_map(values)
        self._block = f"{param.header}\n\n{body}" if param.header else body
        if tool_state is not None:
            tool_state.metadata_block = self._block
            notify = getattr(getattr(observer, "state", None), "notify_state_change", None)
            if callable(notify):
                notify()
        return _Rendered(self._block, "")

    @staticmethod
    def _fetch(observer: ToolObserver) -> tuple[BaseModel | None, str]:
        """The team metadata, or None with the reason it is not available."""
        actor = cast(ActorToolObserver, observer)
        if actor.orchestrator is None:
            return None, "the agent has no orchestrator to ask for the team metadata"
        try:
            orchestrator = actor.proxy_ask(actor.orchestrator, Orchestrator, timeout=ASK_TIMEOUT)
            metadata = orchestrator.get_metadata()
        except Exception as exc:
            return None, f"the orchestrator could not be asked ({type(exc).__name__}: {exc})"
        if metadata is None:
            return None, "the team holds no metadata yet (Orchestrator.set_metadata)"
        if not isinstance(metadata, BaseModel):
            return None, f"the team metadata is a {type(metadata).__name__}, not a model"
        return metadata, ""


def _tool_state(observer: ToolObserver) -> ToolState | None:
    """The agent's ``ToolState``, read now; None for an observer whose state carries none
    (the block is then kept for the card's life only)."""
    try:
        return read_tool_state(observer)
    except TypeError:
        return None


def _unknown(template: str, metadata: BaseModel) -> list[str]:
    declared = type(metadata).model_fields
    return [name for name in placeholders(template) if name not in declared]


def _unknown_message(template: str, unknown: list[str], metadata: BaseModel) -> str:
    fields = ", ".join(type(metadata).model_fields) or "none"
    names = ", ".join("{" + name + "}" for name in unknown)
    return (
        f"template {template!r} names {names}, which {type(metadata).__name__} does not "
        f"declare; its fields are: {fields}"
    )

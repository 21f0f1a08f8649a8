"""The live type registry, and discovery: what the catalog lists is what code declares.

:func:`discover` builds a :class:`ToolRegistry` at start from three places:

1. **the package's own types** (``akgentic.catalog.builtin``): the shipped cards, the
   embeddings endpoints and the vector clusters;
2. **the entry-point group** ``akgentic.tools`` (installed distributions; the canonical
   way: the platform is untouched and its upgrade stays clean). An entry point names a
   declared class (``acme_tools.jira:JiraTool``) or a module whose declared classes all
   count (``acme_tools.jira``);
3. **the in-tree custom package** ``akgentic.catalog.custom`` (quick development: every
   module in it is imported, its declared classes count).

A type whose package is gone is simply not found: it leaves the list, and its instance
row, which no longer matches a type by name, is orphaned (listed, ignored). Nothing that
goes wrong in one place stops the others: a module that fails to import, a class that
breaks the contract, or a name already taken is recorded in ``problems`` (and logged), and
the first declaration of a name wins. Discovery reads classes when it runs: a type added
later is seen at the next start.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import EntryPoint
from typing import Any

from pydantic import BaseModel, ValidationError

from akgentic.catalog.errors import ConfigError, UnknownToolError
from akgentic.catalog.manifest import ToolManifest, check_type
from akgentic.core.excerpt import validation_words
from akgentic.tool.core import ToolCard
from akgentic.tool.core.installed import (
    ENTRY_POINT_GROUP,
    declared_in,
    describe,
    installed_entry_points,
    load_entry_point,
)

__all__ = [
    "CUSTOM_PACKAGE",
    "ENTRY_POINT_GROUP",
    "ToolRegistry",
    "ToolType",
    "declared_in",
    "discover",
]

logger = logging.getLogger("akgentic.catalog")

CUSTOM_PACKAGE = "akgentic.catalog.custom"


@dataclass(frozen=True)
class ToolType:
    """One discovered type: its class, its manifest and where it was found."""

    cls: type[BaseModel]
    manifest: ToolManifest
    source: str

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def is_card(self) -> bool:
        """Whether agents can use it (a ToolCard), rather than a service behind cards."""
        return issubclass(self.cls, ToolCard)

    @property
    def has_probe(self) -> bool:
        """Whether it declares ``probe()``: it has an outside exit to check."""
        return callable(getattr(self.cls, "probe", None))

    def validate_config(self, config: dict[str, Any]) -> BaseModel:
        """An instance of the type built from ``config``; :class:`ConfigError` naming the
        fields that do not validate."""
        try:
            return self.cls.model_validate(config)
        except ValidationError as exc:
            problems = validation_words(exc, top="(config)", model=self.cls, data=config)
            raise ConfigError(f"config of {self.name} does not validate: {problems}") from None

    def config_schema(self) -> dict[str, Any]:
        """The JSON schema of the non-secret config (the class's fields)."""
        return self.cls.model_json_schema()

    def params(self) -> dict[str, dict[str, Any]]:
        """The schema the model sees, by tool name: the manifest's, else derived from
        the tools of a default card (empty when there is none to derive from)."""
        if self.manifest.params is not None:
            return dict(self.manifest.params)
        if not self.is_card:
            return {}
        try:
            from pydantic_ai import Tool

            card = self.cls()
            tools = [Tool(fn) for fn in card.get_tools()]  # type: ignore[attr-defined]
            return {tool.name: tool.tool_def.parameters_json_schema for tool in tools}
        except Exception as exc:  # a card that needs config or wiring to list its tools
            logger.debug("%s: tool schemas not derivable: %r", self.name, exc)
            return {}


@dataclass
class ToolRegistry:
    """Types by name, and what went wrong finding them (see the module docstring)."""

    _types: dict[str, ToolType] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def add(self, cls: Any, source: str, manifest: ToolManifest | None = None) -> ToolType:
        """Register ``cls``; TypeError when it breaks the contract, ValueError when its
        name is taken by another class."""
        found = check_type(cls, manifest)
        existing = self._types.get(found.name)
        if existing is not None:
            if existing.cls is cls:
                return existing
            raise ValueError(
                f"type name {found.name!r} of {_path(cls)} ({source}) is already taken by "
                f"{_path(existing.cls)} ({existing.source}); the first one is kept"
            )
        entry = ToolType(cls=cls, manifest=found, source=source)
        self._types[found.name] = entry
        return entry

    def get(self, name: str) -> ToolType | None:
        return self._types.get(name)

    def require(self, name: str) -> ToolType:
        """The type called ``name``; :class:`UnknownToolError` listing the known names."""
        found = self._types.get(name)
        if found is None:
            known = ", ".join(sorted(self._types)) or "none"
            raise UnknownToolError(f"no tool type {name!r} is installed; types: {known}")
        return found

    def types(self) -> list[ToolType]:
        """Every type, by name."""
        return [self._types[name] for name in sorted(self._types)]

    def __contains__(self, name: object) -> bool:
        return name in self._types

    def __len__(self) -> int:
        return len(self._types)

    def _collect(
        self, source: str, load: Callable[[], Iterable[tuple[Any, ToolManifest | None]]]
    ) -> None:
        """Add what ``load`` yields; any failure becomes a problem, never an exception."""
        try:
            found = list(load())
        except Exception as exc:
            self._problem(f"{source}: {type(exc).__name__}: {exc}")
            return
        for cls, manifest in found:
            try:
                self.add(cls, source, manifest)
            except (TypeError, ValueError) as exc:
                self._problem(f"{source}: {exc}")

    def _problem(self, text: str) -> None:
        logger.warning("tool catalog discovery: %s", text)
        self.problems.append(text)


def _path(cls: type[Any]) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _from_entry_point(ep: EntryPoint) -> Iterator[tuple[Any, None]]:
    yield from ((cls, None) for cls in load_entry_point(ep))


def _custom_module_names(package: str) -> list[str]:
    root = importlib.import_module(package)
    found = pkgutil.iter_modules(getattr(root, "__path__", []))
    return sorted(f"{package}.{info.name}" for info in found)


def _from_module(name: str) -> list[tuple[Any, None]]:
    return [(cls, None) for cls in declared_in(importlib.import_module(name))]


def discover(
    *,
    entry_point_group: str | None = ENTRY_POINT_GROUP,
    custom_packages: Sequence[str] = (CUSTOM_PACKAGE,),
    builtin: bool = True,
    extra: Sequence[type[Any]] = (),
) -> ToolRegistry:
    """The registry of every type found now; see the module docstring.

    ``entry_point_group=None`` skips entry points, ``builtin=False`` the shipped types;
    ``extra`` adds declared classes of your own (an application, a test).
    """
    registry = ToolRegistry()
    if builtin:
        from akgentic.catalog.builtin import builtin_types

        registry._collect("akgentic", builtin_types)
    if entry_point_group:
        for ep in installed_entry_points(entry_point_group):
            registry._collect(describe(ep), partial(_from_entry_point, ep))
    for package in custom_packages:
        try:
            names = _custom_module_names(package)
        except Exception as exc:
            registry._problem(f"custom package {package}: {type(exc).__name__}: {exc}")
            continue
        for name in names:
            registry._collect(f"custom {name}", partial(_from_module, name))
    for cls in extra:
        registry._collect(f"added {_path(cls)}", partial(list, [(cls, None)]))
    return registry

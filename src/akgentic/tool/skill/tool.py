"""SkillTool: a library of domain guidance — the menu in the prefix, the bodies on demand.

One capability, four channels, each carrying what it is good at:

- SYSTEM_PROMPT — the menu: :data:`MENU_HEADER`, then one ``name — description`` line per
  skill. Small and immutable, so it belongs in the frozen prefix, and it survives any
  compaction — which is why re-calling ``use_skill`` always works.
- LLM_CONTEXT — the per-turn view of the skills that tell the model to enable a toolset
  (``SkillEntry.toolset``): such a skill is set aside while its toolset is active (the
  temptation to enable it again is removed, not forbidden) and offered again when it is
  not. Those skills are in the view instead of the frozen menu, which never changes.
- TOOL_CALL — ``use_skill(name, part=1)``: the body, as this call's result, in the same
  turn — ``f"{name}\\n\\n{content}"``. A body over ``Skills.part_chars`` characters comes
  in parts, each saying which it is and how to ask for the next; an unknown name, or a
  part out of range, is a RetriableError saying what is valid.
- COMMAND — ``/skills``: every skill, from the same renderer, for a human asking what this
  agent was actually given.

In a ToolsetCard the model calls the tool ``<set>_use_skill``: every text of the card names
it so (``ToolCard.called_as``), the menu's header first.

Where skills come from, in this order (the first of a name wins; a later one is an error
reported on the team stream, as is a broken file): the card's own ``skills``, then the
folders (``Skills.folders``, or ``AKGENTIC_SKILLS_DIR`` when the card names none), then the
storage bundle's skill store (``Skills.stored``, filled by the team when it is created or
resumed). They are assembled once, when the card is wired.

The prefix costs O(skills), not O(content). The card keeps no "loaded" set, so calling
``use_skill`` again after the body fell out of the window is the intended recovery.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable
from os import PathLike
from typing import Any, ClassVar, Self

from pydantic import ConfigDict, Field, PrivateAttr, field_validator

from akgentic.core.agent import ON_STREAM
from akgentic.core.excerpt import excerpt
from akgentic.core.serialization import SerializableModel
from akgentic.core.words import counted
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.channels import COMMAND, LLM_CONTEXT, SYSTEM_PROMPT, TOOL_CALL, Channels
from akgentic.tool.core.context_state import ContextState
from akgentic.tool.core.observer import ToolObserver, ToolsetActivityObserver
from akgentic.tool.core.params import BaseToolParam, resolve_param, serve
from akgentic.tool.errors import RetriableError
from akgentic.tool.toolsets.card import TOOLSET_NAME

__all__ = [
    "DEFAULT_PART_CHARS",
    "MENU_HEADER",
    "NO_SKILLS",
    "SKILLS_DIR_ENV",
    "USE_SKILL",
    "VIEW_HEADER",
    "SkillEntry",
    "SkillRow",
    "SkillTool",
    "SkillView",
    "Skills",
    "menu_header",
    "render_menu",
    "render_part",
    "skill_folders",
    "split_parts",
    "view_header",
]

logger = logging.getLogger(__name__)

USE_SKILL = "use_skill"
"""The tool's own name; in a toolset the model calls it ``<set>_use_skill``, and every text
of the card names it so (``ToolCard.called_as``)."""


def menu_header(tool: str = USE_SKILL) -> str:
    """The menu's first line, naming the tool as the model calls it."""
    return f"Skills you can load with {tool}(name) when a task needs one:"


MENU_HEADER = menu_header()
"""The menu's first line outside a toolset; one ``name — description`` line per skill
follows."""

NO_SKILLS = "No skills are configured for this agent."
"""What ``/skills`` answers when the agent was given none (the prompt then carries nothing)."""

SKILLS_DIR_ENV = "AKGENTIC_SKILLS_DIR"
"""Skill folders (``os.pathsep``-separated) for a card that names none of its own."""


class SkillEntry(SerializableModel):
    """One skill.

    - ``name`` — what ``use_skill`` is called with; one line, unique within a ``Skills``.
      Paid in the prefix.
    - ``description`` — when to use it; one line. Paid in the prefix, on every turn of every
      agent carrying the card, so keep it short.
    - ``content`` — the body. Paid only by a conversation that asks for it.
    - ``toolset`` — the toolset this skill tells the model to enable, if any. Such a skill
      is listed in the per-turn view (LLM_CONTEXT) rather than the frozen menu, and is set
      aside while that toolset is active.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    content: str
    toolset: str | None = None

    @field_validator("name", "description")
    @classmethod
    def _one_line(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("must not be blank")
        if len(value.splitlines()) > 1:  # \n, \r, and every other break: U+2028, U+0085...
            raise ValueError("must be a single line: it becomes one line of the menu")
        return value

    @field_validator("toolset")
    @classmethod
    def _a_toolset_name(cls, value: str | None) -> str | None:
        """A name a toolset can have: any other would keep the skill out of the menu and
        never set it aside."""
        if value is None:
            return None
        value = value.strip()
        if not value:
            raise ValueError("must not be blank: leave 'toolset' out when the skill enables none")
        if not TOOLSET_NAME.match(value):
            raise ValueError(
                f"{excerpt(value)} is no toolset name: a letter, then letters, digits or '-' "
                f"(32 at most), as the ToolsetCard it enables is named"
            )
        return value


def skill_folders(folders: list[str] | None) -> list[str]:
    """The folders to read: the card's, or ``AKGENTIC_SKILLS_DIR``'s when it names none."""
    if folders is not None:
        return list(folders)
    value = os.environ.get(SKILLS_DIR_ENV, "")
    return [part for part in value.split(os.pathsep) if part.strip()]


def view_header(tool: str = USE_SKILL) -> str:
    """The per-turn view's first line, naming the tool as the model calls it."""
    return f"Skills that switch on a toolset (load one with {tool}(name) when a task needs it):"


VIEW_HEADER = view_header()
"""The first line of the per-turn view outside a toolset; one ``name — description`` line
per skill follows."""


class SkillView(ContextState):
    """The per-turn view of the skills that enable a toolset: offered, and set aside."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    offered: dict[str, str] = Field(default_factory=dict)
    """name -> description, for the skills whose toolset is not active."""
    aside: dict[str, str] = Field(default_factory=dict)
    """name -> toolset, for the skills set aside while their toolset is active."""
    tool: str = USE_SKILL
    """The tool's name as the model calls it (``<set>_use_skill`` in a toolset)."""

    def render_full(self) -> str:
        if not self.offered:
            return ""
        lines = [f"{name} — {description}" for name, description in self.offered.items()]
        return "\n".join([view_header(self.tool), *lines])

    def render_delta(self, previous: Self) -> str | None:
        if self.offered == previous.offered:
            return None
        lines = []
        gone = [n for n in previous.offered if n not in self.offered]
        if gone:
            aside = ", ".join(
                f"{n} ({self.aside[n]} is active)" if n in self.aside else n for n in gone
            )
            lines.append(f"Skills set aside, their toolset's tools are in your list: {aside}.")
        back = [n for n in self.offered if n not in previous.offered]
        if back:
            lines.append("Skills offered again:")
            lines.extend(f"{n} — {self.offered[n]}" for n in back)
        return "\n".join(lines)


DEFAULT_PART_CHARS = 20_000
"""The most characters of a body one ``use_skill`` call returns by default (about 5,000
tokens): a usual skill is whole in one, a 4 MiB file is not dumped into one result."""

MIN_PART_CHARS = 1_000
"""The smallest ``Skills.part_chars`` accepted: smaller parts would cost a call a page."""


def split_parts(content: str, size: int) -> list[str]:
    """``content`` cut into parts of at most ``size`` characters, in order, a cut made after
    a line break when the part's second half has one (else at ``size``). The same content
    and size always give the same parts, so ``part=N`` names the same text on every call.
    An empty body is one empty part."""
    parts: list[str] = []
    start = 0
    while len(content) - start > size:
        end = start + size
        cut = content.rfind("\n", start + size // 2, end)
        cut = end if cut < 0 else cut + 1  # the line break stays with the part it ends
        parts.append(content[start:cut])
        start = cut
    parts.append(content[start:])
    return parts


def render_part(name: str, parts: list[str], part: int, tool: str) -> str:
    """What ``use_skill(name, part)`` returns: ``f"{name}\\n\\n{content}"`` for a body in one
    part (the usual skill); for a longer one, the part with a header saying which it is
    and a last line saying how to ask for the next (``tool``: the name the model calls
    ``use_skill`` by). A part out of range is a RetriableError naming the valid range."""
    count = len(parts)
    if not 1 <= part <= count:
        valid = "part=1 (or leave part out)" if count == 1 else f"part from 1 to {count}"
        raise RetriableError(
            f"Skill {name!r} has {counted(count, 'part')}: there is no part {part}. Call "
            f"{tool} with {valid}."
        )
    if count == 1:
        return f"{name}\n\n{parts[0]}"
    where = f"part {part} of {count}"
    if part < count:
        after = f"[{where}; call {tool}(name={json.dumps(name)}, part={part + 1}) for more]"
    else:
        after = f"[{where}: the end of {name}]"
    return f"{name} ({where})\n\n{parts[part - 1]}\n\n{after}"


def render_menu(skills: Iterable[SkillEntry], tool: str = USE_SKILL) -> str:
    """The menu: its header naming ``tool`` (the name the model calls ``use_skill`` by:
    :data:`MENU_HEADER` outside a toolset), then ``name — description`` per skill; ``""``
    if none."""
    lines = [f"{skill.name} — {skill.description}" for skill in skills]
    return "\n".join([menu_header(tool), *lines]) if lines else ""


class SkillRow(SerializableModel):
    """A skill as the storage bundle's skill store holds it — this package's projection.

    The tool layer may not import the store's own record; the team layer maps one onto
    the other. A row is checked when the card is wired: one that is not a valid skill (a
    blank description, say) is reported like a broken file and skipped.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    content: str = ""
    source: str = ""
    toolset: str | None = None


class Skills(BaseToolParam):
    """The capability: the skill list, on all four channels by default.

    - ``skills`` — skills given inline. Names must be unique (a duplicate is a ValueError
      naming it). Build one from files with :meth:`from_paths`.
    - ``folders`` — folders (or files) read recursively when the card is wired:
      ``SKILL.md`` with YAML frontmatter, ``*.yaml`` / ``*.yml``. None (the default) means
      ``AKGENTIC_SKILLS_DIR`` when it is set; ``[]`` means no folder at all.
    - ``store`` — whether the team's storage bundle's skill store is read too.
    - ``stored`` — the store's skills, filled by the team when it creates or resumes the
      team (what is set by hand is replaced then); read only when ``store`` is on.
    - ``part_chars`` — the most characters of a body one ``use_skill`` call returns; a
      longer body comes in parts (``use_skill(name, part=2)``...), each saying how to ask
      for the next, so a huge skill never fills the model's context in one result.
    """

    expose: set[Channels] = {SYSTEM_PROMPT, LLM_CONTEXT, TOOL_CALL, COMMAND}
    skills: list[SkillEntry] = Field(default_factory=list)
    folders: list[str] | None = None
    store: bool = True
    stored: list[SkillRow] = Field(default_factory=list)
    part_chars: int = Field(default=DEFAULT_PART_CHARS, ge=MIN_PART_CHARS)

    @field_validator("skills")
    @classmethod
    def _unique_names(cls, skills: list[SkillEntry]) -> list[SkillEntry]:
        seen: set[str] = set()
        for skill in skills:
            if skill.name in seen:
                raise ValueError(f"skill {skill.name!r} is listed twice; names are unique")
            seen.add(skill.name)
        return skills

    @classmethod
    def from_paths(
        cls, paths: Iterable[str | PathLike[str]], *, expose: set[Channels] | None = None
    ) -> Skills:
        """Skills loaded from files and directories (see ``akgentic.tool.skill.loader``).

        A broken file or a duplicate name is logged at WARNING and skipped, never fatal;
        call :func:`~akgentic.tool.skill.loader.load_skills` to handle the errors yourself.
        """
        from akgentic.tool.skill.loader import load_skills  # the loader imports SkillEntry

        result = load_skills(paths)
        for error in result.errors:
            logger.warning("skill file %s skipped: %s", error.path, error.reason)
        if expose is None:
            return cls(skills=result.skills)
        return cls(skills=result.skills, expose=expose)


class SkillTool(ToolCard):
    """Skills: the menu in the prefix, ``use_skill`` for the bodies, ``/skills`` for humans.

    ``SkillTool(skills=Skills(skills=[...]))`` serves all four channels;
    ``SkillTool(skills=False)`` removes the capability entirely. The skills are assembled
    (card, folders, store) once, when the card is wired; the files skipped and the
    duplicate names are reported on the team stream as one ``SkillsSkippedEvent``.
    """

    skills: Skills | bool = True

    _library: list[SkillEntry] | None = PrivateAttr(default=None)

    def observer(self, observer: ToolObserver) -> Self:
        super().observer(observer)
        self._library = None
        param = resolve_param(self.skills, Skills)
        if param is not None:
            self._load(param, observer)
        return self

    def _load(self, param: Skills, observer: ToolObserver | None = None) -> list[SkillEntry]:
        if self._library is None:
            from akgentic.tool.skill.loader import SkillsSkippedEvent, assemble

            result = assemble(param.skills, skill_folders(param.folders), param.stored, param.store)
            on_stream = {ON_STREAM: observer is not None}  # the event below says it too
            for error in result.errors:
                logger.warning("skill %s skipped: %s", error.path, error.reason, extra=on_stream)
            if result.errors and observer is not None:
                observer.notify_event(SkillsSkippedEvent(errors=result.errors))
            self._library = result.skills
        return self._library

    def _entries(self, channel: Channels) -> list[SkillEntry] | None:
        param = serve(self.skills, Skills, channel)
        return None if param is None else list(self._load(param))

    def get_system_prompts(self) -> list[Callable[[], str]]:
        entries = self._entries(SYSTEM_PROMPT)
        if entries is None:
            return []
        if serve(self.skills, Skills, LLM_CONTEXT) is not None:
            entries = [entry for entry in entries if entry.toolset is None]  # in the view
        menu = render_menu(entries, self.called_as(USE_SKILL))

        def skills_menu() -> str:
            return menu

        return [skills_menu]

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        entries = self._entries(LLM_CONTEXT)
        linked = [entry for entry in entries or [] if entry.toolset is not None]
        if not linked:
            return []
        card, tool = self, self.called_as(USE_SKILL)

        def skills_in_view() -> ContextState | None:
            """The linked skills, offered or set aside; None when the active toolsets cannot
            be read (its baseline is kept). Never raises."""
            observer = card.observer_or_none()
            active: frozenset[str] = frozenset()
            if isinstance(observer, ToolsetActivityObserver):
                try:
                    active = frozenset(observer.active_toolsets())
                except Exception:
                    logger.warning("skills_in_view: active toolsets unreadable", exc_info=True)
                    return None
            return SkillView(
                offered={e.name: e.description for e in linked if e.toolset not in active},
                aside={e.name: str(e.toolset) for e in linked if e.toolset in active},
                tool=tool,
            )

        return [skills_in_view]

    def get_tools(self) -> list[Callable[..., Any]]:
        entries = self._entries(TOOL_CALL)
        if entries is None:
            return []
        param = serve(self.skills, Skills, TOOL_CALL)
        size = param.part_chars if param is not None else DEFAULT_PART_CHARS
        bodies = {entry.name: entry.content for entry in entries}
        split: dict[str, list[str]] = {}  # name -> its parts, cut once, when first asked
        tool = self.called_as(USE_SKILL)

        def use_skill(name: str, part: int = 1) -> str:
            """Load the full text of one skill from the skills menu in your instructions.

            Call it, with the name exactly as the menu shows it, before working on a task the
            skill covers: the skill's text is this call's result. A long skill comes in
            parts: the result says which part it is and how to ask for the next (``part``,
            from 1). If an earlier result has dropped out of your context, call it again.
            """
            key = name.strip()
            content = bodies.get(key)
            if content is None:
                known = ", ".join(bodies) or "(none: this agent has no skills)"
                raise RetriableError(
                    f"Unknown skill {excerpt(name)}. Available skills: {known}. Call {tool} "
                    f"with one of these names, exactly as listed."
                )
            parts = split.get(key)
            if parts is None:
                parts = split[key] = split_parts(content, size)
            return render_part(key, parts, part, tool)

        return [use_skill]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        entries = self._entries(COMMAND)
        if entries is None:
            return {}
        menu = render_menu(entries, self.called_as(USE_SKILL))  # the model's tool, named

        def skills() -> str:
            """Show the skills menu this agent was given."""
            return menu or NO_SKILLS

        return {Skills: skills}

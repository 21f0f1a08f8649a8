"""SkillTool: a library of domain guidance — the menu in the prefix, the bodies on demand.

One capability, three channels, each carrying what it is good at:

- SYSTEM_PROMPT — the menu: :data:`MENU_HEADER`, then one ``name — description`` line per
  skill. Small and immutable, so it belongs in the frozen prefix, and it survives any
  compaction — which is why re-calling ``use_skill`` always works.
- TOOL_CALL — ``use_skill(name)``: the body, as this call's result, in the same turn —
  ``f"{name}\\n\\n{content}"``. An unknown name is a RetriableError listing the names.
- COMMAND — ``/skills``: the same menu, from the same renderer, for a human asking what this
  agent was actually given.

The prefix costs O(skills), not O(content). The card holds no state: it keeps no "loaded"
set, so calling ``use_skill`` again after the body fell out of the window is the intended
recovery. No actor, no observer needed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from os import PathLike
from typing import Any, ClassVar

from pydantic import ConfigDict, Field, field_validator

from akgentic.core.excerpt import excerpt
from akgentic.core.serialization import SerializableModel
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.channels import COMMAND, SYSTEM_PROMPT, TOOL_CALL, Channels
from akgentic.tool.core.params import BaseToolParam, serve
from akgentic.tool.errors import RetriableError

__all__ = ["MENU_HEADER", "NO_SKILLS", "SkillEntry", "SkillTool", "Skills", "render_menu"]

logger = logging.getLogger(__name__)

MENU_HEADER = "Skills you can load with use_skill(name) when a task needs one:"
"""The menu's first line; one ``name — description`` line per skill follows."""

NO_SKILLS = "No skills are configured for this agent."
"""What ``/skills`` answers when the agent was given none (the prompt then carries nothing)."""


class SkillEntry(SerializableModel):
    """One skill.

    - ``name`` — what ``use_skill`` is called with; one line, unique within a ``Skills``.
      Paid in the prefix.
    - ``description`` — when to use it; one line. Paid in the prefix, on every turn of every
      agent carrying the card, so keep it short.
    - ``content`` — the body. Paid only by a conversation that asks for it.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    content: str

    @field_validator("name", "description")
    @classmethod
    def _one_line(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("must not be blank")
        if "\n" in value or "\r" in value:
            raise ValueError("must be a single line: it becomes one line of the menu")
        return value


def render_menu(skills: Iterable[SkillEntry]) -> str:
    """The menu: :data:`MENU_HEADER`, then ``name — description`` per skill; ``""`` if none."""
    lines = [f"{skill.name} — {skill.description}" for skill in skills]
    return "\n".join([MENU_HEADER, *lines]) if lines else ""


class Skills(BaseToolParam):
    """The capability: the skill list, on SYSTEM_PROMPT, TOOL_CALL and COMMAND by default.

    Names must be unique (a duplicate is a ValueError naming it). Build one from files with
    :meth:`from_paths`.
    """

    expose: set[Channels] = {SYSTEM_PROMPT, TOOL_CALL, COMMAND}
    skills: list[SkillEntry] = Field(default_factory=list)

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

    ``SkillTool(skills=Skills(skills=[...]))`` serves all three channels;
    ``SkillTool(skills=False)`` removes the capability entirely.
    """

    skills: Skills | bool = True

    def _entries(self, channel: Channels) -> list[SkillEntry] | None:
        param = serve(self.skills, Skills, channel)
        return None if param is None else list(param.skills)

    def get_system_prompts(self) -> list[Callable[[], str]]:
        entries = self._entries(SYSTEM_PROMPT)
        if entries is None:
            return []
        menu = render_menu(entries)

        def skills_menu() -> str:
            return menu

        return [skills_menu]

    def get_tools(self) -> list[Callable[..., Any]]:
        entries = self._entries(TOOL_CALL)
        if entries is None:
            return []
        bodies = {entry.name: entry.content for entry in entries}

        def use_skill(name: str) -> str:
            """Load the full text of one skill from the skills menu in your instructions.

            Call it, with the name exactly as the menu shows it, before working on a task the
            skill covers: the skill's text is this call's result. If an earlier result has
            dropped out of your context, call it again.
            """
            key = name.strip()
            content = bodies.get(key)
            if content is None:
                known = ", ".join(bodies) or "(none: this agent has no skills)"
                raise RetriableError(
                    f"Unknown skill {excerpt(name)}. Available skills: {known}. Call use_skill "
                    f"with one of these names, exactly as listed."
                )
            return f"{key}\n\n{content}"

        return [use_skill]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        entries = self._entries(COMMAND)
        if entries is None:
            return {}
        menu = render_menu(entries)

        def skills() -> str:
            """Show the skills menu this agent was given."""
            return menu or NO_SKILLS

        return {Skills: skills}

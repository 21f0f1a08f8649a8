"""TeamTool's LLM_CONTEXT state: the roster and the role catalog, as diffable snapshots.

Both are persisted by the ContextUpdater as baselines (so they are read back off disk):
every optional field has a default, so a baseline stored before a field existed restores.

- :class:`TeamRosterState` — who is on the team: one :class:`TeamMemberRow` per running
  member (tool actors and the orchestrator excluded), in the order they joined.
- :class:`RoleCatalogState` — every role the team knows how to staff, each marked
  hireable or not by the agent reading it.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import ConfigDict, Field

from akgentic.core.serialization import SerializableModel
from akgentic.tool.core.context_state import ContextState

__all__ = ["RoleCatalogState", "RoleRow", "TeamMemberRow", "TeamRosterState"]


class TeamMemberRow(SerializableModel):
    """One running member: its address ``name``, its ``role``; a person, or the reader."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    name: str
    role: str = ""
    human: bool = False
    you: bool = False

    def render(self) -> str:
        notes = [self.role or "no role"]
        if self.human:
            notes.append("a person")
        if self.you:
            notes.append("you")
        return f"{self.name} ({', '.join(notes)})"


class TeamRosterState(ContextState):
    """The team's members, as the roster capability publishes them.

    - :meth:`render_full`: ``Team members:`` then ``- <name> (<role>[, a person][, you])``.
    - :meth:`render_delta`: ``Team changes:`` then ``+ <member>`` per arrival and
      ``- <member>`` per departure; None when nobody came or went.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    members: list[TeamMemberRow] = Field(default_factory=list)

    def render_full(self) -> str:
        if not self.members:
            return ""
        return "\n".join(["Team members:", *(f"- {m.render()}" for m in self.members)])

    def render_delta(self, previous: TeamRosterState) -> str | None:
        before = {m.name: m for m in previous.members}
        after = {m.name: m for m in self.members}
        joined = [m for name, m in after.items() if before.get(name) != m]
        left = [m for name, m in before.items() if after.get(name) != m]
        if not joined and not left:
            return None
        lines = ["Team changes:"]
        lines += [f"- {m.render()} left" for m in left]
        lines += [f"+ {m.render()} joined" for m in joined]
        return "\n".join(lines)


class RoleRow(SerializableModel):
    """One role of the catalog, and whether the reading agent may hire it."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    role: str
    description: str = ""
    hireable: bool = False

    def render(self) -> str:
        described = f"{self.role} — {self.description}" if self.description else self.role
        return f"{described} ({'hireable' if self.hireable else 'not hireable'})"


class RoleCatalogState(ContextState):
    """The team's role catalog.

    - :meth:`render_full`: ``Roles in this team's catalog:`` then ``- <role> — <description>
      (hireable|not hireable)``.
    - :meth:`render_delta`: ``Role catalog changes:`` then ``+ <row>`` for a new or changed
      role and ``- <role> removed`` for a role gone; None when nothing changed.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    roles: list[RoleRow] = Field(default_factory=list)

    def render_full(self) -> str:
        if not self.roles:
            return ""
        return "\n".join(
            ["Roles in this team's catalog:", *(f"- {r.render()}" for r in self.roles)]
        )

    def render_delta(self, previous: RoleCatalogState) -> str | None:
        before = {r.role: r for r in previous.roles}
        after = {r.role: r for r in self.roles}
        changed = [r for role, r in after.items() if before.get(role) != r]
        removed = [role for role in before if role not in after]
        if not changed and not removed:
            return None
        lines = ["Role catalog changes:"]
        lines += [f"- {role} removed" for role in removed]
        lines += [f"+ {r.render()}" for r in changed]
        return "\n".join(lines)

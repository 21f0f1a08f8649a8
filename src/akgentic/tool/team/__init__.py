"""akgentic.tool.team — TeamTool: hire, fire, roster, role profiles, team activity.

See README.md beside this file for the channel split, partial-success reporting, the
activity report, how "busy" is derived, and the ``#TeamActivity`` summarizer.
"""

from akgentic.tool.team.activity import (
    TEAM_ACTIVITY_ACTOR_NAME,
    ActivitySummarizer,
    GetTeamActivity,
    MemberActivity,
    SummarizerWorker,
    TeamActivityActor,
    TeamActivityConfig,
    derive_activity,
    render_activity,
    truncate,
)
from akgentic.tool.team.observer import TeamManagementToolObserver
from akgentic.tool.team.state import RoleCatalogState, RoleRow, TeamMemberRow, TeamRosterState
from akgentic.tool.team.team import (
    ASK_TIMEOUT,
    FireMember,
    HireMembers,
    RoleCatalog,
    RoleProfile,
    TeamRoster,
    TeamTool,
)

__all__ = [
    "ASK_TIMEOUT",
    "TEAM_ACTIVITY_ACTOR_NAME",
    "ActivitySummarizer",
    "FireMember",
    "GetTeamActivity",
    "HireMembers",
    "MemberActivity",
    "RoleCatalog",
    "RoleCatalogState",
    "RoleProfile",
    "RoleRow",
    "SummarizerWorker",
    "TeamActivityActor",
    "TeamActivityConfig",
    "TeamManagementToolObserver",
    "TeamMemberRow",
    "TeamRoster",
    "TeamRosterState",
    "TeamTool",
    "derive_activity",
    "render_activity",
    "truncate",
]

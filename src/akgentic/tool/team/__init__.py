"""akgentic.tool.team — TeamTool: hire, fire, roster, role profiles, team activity.

See README.md beside this file for the channel split, partial-success reporting, the
activity report and how "busy" is derived.
"""

from akgentic.tool.team.activity import (
    ActivitySummarizer,
    GetTeamActivity,
    MemberActivity,
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
    "ActivitySummarizer",
    "FireMember",
    "GetTeamActivity",
    "HireMembers",
    "MemberActivity",
    "RoleCatalog",
    "RoleCatalogState",
    "RoleProfile",
    "RoleRow",
    "TeamManagementToolObserver",
    "TeamMemberRow",
    "TeamRoster",
    "TeamRosterState",
    "TeamTool",
    "derive_activity",
    "render_activity",
    "truncate",
]

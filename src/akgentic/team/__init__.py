"""akgentic.team: teams that last — cards, the manager, runtimes, restore and replay."""

from akgentic.team.card import MemberSpec, TeamCard, TeamCardError, member_names, walk
from akgentic.team.manager import TeamManager, TeamNotRunningError
from akgentic.team.recorder import EventRecorder
from akgentic.team.replay import Gap, ReplayResult, register_reducer, replay_tool_states
from akgentic.team.restorer import RestorePlan, plan_restore
from akgentic.team.runtime import TeamRuntime

__all__ = [
    "EventRecorder",
    "Gap",
    "MemberSpec",
    "ReplayResult",
    "RestorePlan",
    "TeamCard",
    "TeamCardError",
    "TeamManager",
    "TeamNotRunningError",
    "TeamRuntime",
    "member_names",
    "plan_restore",
    "register_reducer",
    "replay_tool_states",
    "walk",
]

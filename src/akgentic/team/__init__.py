"""akgentic.team: teams that last — cards, the manager, runtimes, restore and replay.

Importing it defines every shipped card (and its states and deltas), so a stored team
and its event log decode in a fresh process.
"""

from akgentic.agent.config import load_shipped_cards
from akgentic.team.card import MemberSpec, TeamCard, TeamCardError, member_names, walk
from akgentic.team.manager import TeamManager, TeamNotRunningError
from akgentic.team.recorder import EventRecorder
from akgentic.team.replay import Gap, ReplayResult, register_reducer, replay_tool_states
from akgentic.team.restorer import RestorePlan, plan_restore
from akgentic.team.runtime import InterruptedTurnsDismissed, TeamRuntime, read_history, tool_state
from akgentic.team.usage import team_usage

load_shipped_cards()

__all__ = [
    "EventRecorder",
    "Gap",
    "InterruptedTurnsDismissed",
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
    "read_history",
    "register_reducer",
    "replay_tool_states",
    "team_usage",
    "tool_state",
    "walk",
]

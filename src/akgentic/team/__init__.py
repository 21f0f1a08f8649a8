"""akgentic.team: teams that last — cards, the manager, runtimes, restore and replay.

Importing it defines every shipped card (and its states and deltas), so a stored team
and its event log decode in a fresh process.
"""

from akgentic.agent.config import load_shipped_cards
from akgentic.team.ask import Answer, AskError, Exchange, NoReplyError, TurnFailedError
from akgentic.team.card import (
    MemberSpec,
    Suggestion,
    TeamCard,
    TeamCardError,
    member_names,
    team_card_errors,
    walk,
)
from akgentic.team.manager import (
    LEASE_TTL,
    STOP_GRACE,
    StopWait,
    TeamManager,
    TeamNotRunningError,
    TeamRunningElsewhereError,
    TeamStartError,
    TeamStillStoppingError,
    TeamStoppingError,
    still_stopping_words,
    team_resource,
)
from akgentic.team.mcp import give_mcp_servers
from akgentic.team.placement import HostedTeam, LocalPlacement, Placement
from akgentic.team.recorder import EventRecorder
from akgentic.team.replay import (
    Gap,
    ReplayResult,
    initial_state,
    register_reducer,
    replay_tool_states,
)
from akgentic.team.restorer import (
    RestorePlan,
    ResumedToolNameClashError,
    ResumeError,
    UnreadableLogError,
    plan_restore,
    unreadable_log,
)
from akgentic.team.runtime import (
    STOPPED_ELSEWHERE,
    InterruptedTurnsDismissed,
    NotCommittedError,
    TeamRuntime,
    UnknownToolError,
    UnreadableToolStateError,
    follow_log,
    read_history,
    tool_state,
)
from akgentic.team.usage import team_usage
from akgentic.team.workspaces import remove_team_workspaces, team_workspaces

load_shipped_cards()

__all__ = [
    "LEASE_TTL",
    "STOPPED_ELSEWHERE",
    "STOP_GRACE",
    "Answer",
    "AskError",
    "EventRecorder",
    "Exchange",
    "Gap",
    "HostedTeam",
    "InterruptedTurnsDismissed",
    "LocalPlacement",
    "MemberSpec",
    "NoReplyError",
    "NotCommittedError",
    "Placement",
    "ReplayResult",
    "RestorePlan",
    "ResumeError",
    "ResumedToolNameClashError",
    "StopWait",
    "Suggestion",
    "TeamCard",
    "TeamCardError",
    "TeamManager",
    "TeamNotRunningError",
    "TeamRunningElsewhereError",
    "TeamRuntime",
    "TeamStartError",
    "TeamStillStoppingError",
    "TeamStoppingError",
    "TurnFailedError",
    "UnknownToolError",
    "UnreadableLogError",
    "UnreadableToolStateError",
    "follow_log",
    "give_mcp_servers",
    "initial_state",
    "member_names",
    "plan_restore",
    "read_history",
    "register_reducer",
    "remove_team_workspaces",
    "replay_tool_states",
    "still_stopping_words",
    "team_card_errors",
    "team_resource",
    "team_usage",
    "team_workspaces",
    "tool_state",
    "unreadable_log",
    "walk",
]

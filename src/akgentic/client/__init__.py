"""akgentic.client: a server's teams with the verbs of ``TeamManager`` and ``TeamRuntime``.

``AkgenticClient(base_url, token=None)`` creates, lists, stops, resumes and deletes teams;
the ``RemoteTeam`` it hands out sends, asks (sends and waits for the answer), follows
(SSE, resumed after a dropped connection or a restart),
interrupts, pages the history and rebuilds tool state — so a script runs unchanged
against a local team or a server. Needs httpx only (the ``server`` extra has it).
"""

from akgentic.client.catalog import RemoteCatalog
from akgentic.client.client import (
    AkgenticClient,
    RemoteTeam,
    ServerError,
    TeamDeletedError,
    decode_event,
)
from akgentic.client.models import (
    TEAM_NOT_FOUND,
    TEAM_STOPPING,
    Accepted,
    CardInfo,
    ErrorBody,
    Health,
    MemberInfo,
    StopInProgress,
    TeamInfo,
    TeamNotice,
    TeamPage,
    WireEvent,
)
from akgentic.client.sse import SseEvent, parse_sse, sse_lines
from akgentic.team.ask import Answer, AskError, NoReplyError, TurnFailedError

__all__ = [
    "TEAM_NOT_FOUND",
    "TEAM_STOPPING",
    "Accepted",
    "AkgenticClient",
    "Answer",
    "AskError",
    "CardInfo",
    "ErrorBody",
    "Health",
    "MemberInfo",
    "NoReplyError",
    "RemoteCatalog",
    "RemoteTeam",
    "ServerError",
    "SseEvent",
    "StopInProgress",
    "TeamDeletedError",
    "TeamInfo",
    "TeamNotice",
    "TeamPage",
    "TurnFailedError",
    "WireEvent",
    "decode_event",
    "parse_sse",
    "sse_lines",
]

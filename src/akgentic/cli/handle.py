"""What the chat needs of a team and of whoever keeps it: a team running here
(``TeamRuntime``, ``TeamManager``) and one on a server (``RemoteTeam``,
``AkgenticClient``) both fit."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any, Protocol
from uuid import UUID

from akgentic.storage import EventRecord
from akgentic.team import TeamCard

__all__ = ["Named", "TeamHandle", "TeamKeeper"]


class Named(Protocol):
    @property
    def name(self) -> str: ...


class TeamHandle(Protocol):
    @property
    def team_id(self) -> UUID: ...

    @property
    def card(self) -> TeamCard: ...

    def members(self) -> Sequence[Named]: ...

    def send(self, content: str) -> UUID: ...

    def send_to(self, member: str, content: str) -> UUID: ...

    def is_running(self) -> bool: ...

    def follow(
        self,
        from_seq: int = 1,
        *,
        stop: threading.Event | None = None,
        idle_timeout: float | None = None,
    ) -> Iterator[EventRecord]: ...


class TeamKeeper(Protocol):
    def stop_team(self, team_id: UUID, grace_timeout: float = 30.0) -> Any: ...

"""A custom card whose ``#Board`` tool actor reads a directory when it starts: a card
whose shared tool actor cannot start (the directory is gone) for the team and CLI tests.

``BoardTool(directory=...)`` offers ``board_files()``; its ``#Board`` actor lists the
directory in ``on_start`` and refuses to start without it. ``BoardTool(directory=...,
misconfigured=True)`` hands the actor a config of the wrong class: its construction
fails. ``BoardTool(directory=..., slow=True)``: its ``on_start`` waits for
:data:`RELEASE` (a service that does not answer) before it reads the directory.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, Self

from pydantic import PrivateAttr

from akgentic.core import ActorAddress, Akgent, BaseConfig, BaseState
from akgentic.tool.core import ToolCard
from akgentic.tool.core.observer import ToolObserver
from akgentic.tool.core.team_actor import ask_tool_actor, bind_team_actor, require_team_observer

BOARD = "#Board"
RELEASE = threading.Event()
"""What a slow board's ``on_start`` waits for (a test sets it when it is done)."""

BOARD_TEAM = """\
name: board
entry_point: "@Lead"
imports: [tests.board_card]
members:
  - card:
      role: Lead
      config:
        name: "@Lead"
        role: Lead
        models: "scripted:default"
        tools:
          - {{type: tests.board_card.BoardTool, directory: "{directory}"}}
"""
"""A team of one ``@Lead`` with a ``BoardTool``: ``BOARD_TEAM.format(directory=...)``."""


class BoardConfig(BaseConfig):
    directory: str
    slow: bool = False


class BoardActor(Akgent[BoardConfig, BaseState]):
    """Holds the names of the files in its directory, read once when it starts."""

    def on_start(self) -> None:
        if self.config.slow:
            RELEASE.wait(60)
        self._files = sorted(os.listdir(self.config.directory))

    def files(self) -> list[str]:
        return self._files


class BoardTool(ToolCard):
    directory: str
    misconfigured: bool = False
    slow: bool = False
    _address: ActorAddress | None = PrivateAttr(default=None)

    def observer(self, observer: ToolObserver) -> Self:
        super().observer(observer)
        team = require_team_observer(observer, "BoardTool", BOARD)
        config = (
            BaseConfig(name=BOARD)
            if self.misconfigured
            else BoardConfig(name=BOARD, directory=self.directory, slow=self.slow)
        )
        self._address = bind_team_actor(team, BoardActor, config, 10.0)
        return self

    def get_tools(self) -> list[Callable[..., Any]]:
        card = self

        def board_files() -> str:
            """The names of the files on the team's board."""
            team = require_team_observer(card.get_observer(), "BoardTool", BOARD)
            assert card._address is not None
            files = ask_tool_actor(
                team,
                card._address,
                BoardActor,
                lambda board: board.files(),
                what="board_files",
                label=f"The board ({BOARD})",
                timeout=10.0,
            )
            return ", ".join(files) or "(none)"

        return [board_files]

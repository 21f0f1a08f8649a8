"""Running the app: :func:`serve` for ``akgentic serve``, :class:`BackgroundServer` for a
server in a thread (tests, benchmarks, a program that also drives teams itself)."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType

import uvicorn
from fastapi import FastAPI

from akgentic.core import ActorSystem
from akgentic.server.app import create_app
from akgentic.server.cards import CardRegistry
from akgentic.server.context import ServerContext
from akgentic.server.settings import ServerSettings
from akgentic.storage import StorageBundle
from akgentic.team import Placement, TeamManager

__all__ = ["BackgroundServer", "bound_url", "load_skills_into", "serve"]

logger = logging.getLogger("akgentic.server")

SHUTDOWN_GRACE = 3
"""Seconds open connections (event streams) get when the server stops."""


def _config(app: FastAPI, settings: ServerSettings) -> uvicorn.Config:
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level="warning",
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
        lifespan="on",
    )


def _close_streams(app: FastAPI) -> None:
    ctx: ServerContext = app.state.context
    if ctx.hub is not None:
        ctx.hub.loop.call_soon_threadsafe(ctx.hub.close)


def bound_url(server: uvicorn.Server) -> str:
    """``http://host:port`` of a started server (the port it really got, for port 0)."""
    sockets = [s for listener in server.servers for s in listener.sockets]
    host, port = sockets[0].getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def _announce(server: uvicorn.Server, on_ready: Callable[[str], None]) -> None:
    """Call ``on_ready(url)`` once ``server`` listens (it is run by another thread)."""
    pause = threading.Event()  # never set: a bounded wait between looks
    while not server.started and not server.should_exit:
        pause.wait(0.02)
    if server.started:
        on_ready(bound_url(server))


class BackgroundServer:
    """``app`` served by uvicorn on a thread of this process; ``url`` once started.

    Use it as a context manager: it starts on entry (port 0 picks a free port) and stops
    on exit, ending open event streams first.
    """

    def __init__(self, app: FastAPI, settings: ServerSettings | None = None) -> None:
        self.app = app
        self.settings = settings or app.state.settings
        self._server = uvicorn.Server(_config(app, self.settings))
        self._thread = threading.Thread(target=self._server.run, name="akgentic-server")
        self.url = ""

    def start(self, timeout: float = 30.0) -> BackgroundServer:
        self._thread.start()
        deadline = time.monotonic() + timeout
        pause = threading.Event()  # never set: a bounded wait between looks
        while not self._server.started and self._thread.is_alive():
            if time.monotonic() > deadline or pause.wait(0.01):
                break
        if not self._server.started:
            raise RuntimeError("the server did not start (see the log)")
        self.url = bound_url(self._server)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        if self._thread.is_alive():
            _close_streams(self.app)
            self._server.should_exit = True
            self._thread.join(timeout)

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def load_skills_into(storage: StorageBundle, folder: str | Path) -> list[str]:
    """Load the skills of ``folder`` (``SKILL.md``, ``*.yaml``) into the store's skill
    catalog; returns the problems (broken files, duplicates), which are not fatal."""
    from akgentic.storage import SkillRecord
    from akgentic.tool.skill import load_skills

    result = load_skills([folder])
    for entry in result.skills:
        storage.skills.upsert(
            SkillRecord(
                name=entry.name,
                description=entry.description,
                content=entry.content,
                source=str(folder),
            )
        )
    return [f"{e.path}: {e.reason}" for e in result.errors]


def serve(
    storage: StorageBundle,
    settings: ServerSettings,
    *,
    card_paths: Iterable[str | Path] = (),
    skills_dir: str | Path | None = None,
    mcp_config: str | Path | None = None,
    on_ready: Callable[[str], None] | None = None,
    placement: Placement | None = None,
) -> None:
    """Run the server in this thread until interrupted (``akgentic serve``); every team it
    runs in this process is stopped gracefully on the way out (teams a ``placement`` runs
    on a cluster keep running there). ``on_ready(url)`` is called once it listens."""
    cards = CardRegistry()
    cards.load(card_paths)
    for problem in cards.errors:
        logger.warning("team card: %s", problem)
    if skills_dir is not None:
        for problem in load_skills_into(storage, skills_dir):
            logger.warning("skill: %s", problem)
    if mcp_config is not None:  # read by the MCP tool cards of the teams this server runs
        os.environ["AKGENTIC_MCP_CONFIG"] = str(Path(mcp_config).resolve())
    system = ActorSystem()
    manager = TeamManager(system, storage, placement=placement)
    app = create_app(manager, settings, cards=cards)
    server = uvicorn.Server(_config(app, settings))
    if on_ready is not None:
        threading.Thread(target=_announce, args=(server, on_ready), daemon=True).start()
    try:
        server.run()
    finally:
        try:
            manager.shutdown()
        finally:
            system.shutdown()

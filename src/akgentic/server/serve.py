"""Running the app: :func:`serve` for ``akgentic serve``, :class:`BackgroundServer` for a
server in a thread (tests, benchmarks, a program that also drives teams itself)."""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
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
    on_ready: Callable[[str], None] | None = None,
    on_problem: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
    on_stopping: Callable[[], None] | None = None,
    placement: Placement | None = None,
) -> None:
    """Run the server in this thread until interrupted (``akgentic serve``); every team it
    runs in this process is stopped gracefully on the way out (teams a ``placement`` runs
    on a cluster keep running there).

    ``on_ready(url)`` is called once it listens; ``on_problem(line)`` once for each card or
    skill skipped (they are logged as warnings without it). With ``stop``, the caller owns
    Ctrl-C: the server stops gracefully once ``stop`` is set (``on_stopping()`` says it
    began), and SIGTERM stops it the same way; without it, uvicorn handles the signals.
    A ``settings.mcp_config`` that cannot be used raises ``MCPConfigError`` before the
    server listens.
    """
    report = on_problem or (lambda line: logger.warning("%s", line))
    cards = CardRegistry()
    cards.load(card_paths)
    for problem in cards.problems:
        report(problem)
    system = ActorSystem()
    try:
        manager = TeamManager(system, storage, placement=placement)
        try:
            app = create_app(manager, settings, cards=cards)
            if skills_dir is not None:
                for problem in load_skills_into(storage, skills_dir):
                    report(f"skill skipped: {problem}")
            server = _Server(_config(app, settings), app, stop, on_stopping)
            if on_ready is not None:
                threading.Thread(target=_announce, args=(server, on_ready), daemon=True).start()
            server.run()
        finally:
            manager.shutdown()
    finally:
        system.shutdown()


class _Server(uvicorn.Server):
    """uvicorn that ends the event streams first when it stops (so no stream waits out the
    grace), and that, given ``stop``, leaves SIGINT to its caller: it stops once ``stop``
    is set or on SIGTERM, and raises no signal again on its way out (uvicorn re-raises
    what it caught, which would land in the caller's handler as a second Ctrl-C)."""

    def __init__(
        self,
        config: uvicorn.Config,
        app: FastAPI,
        stop: threading.Event | None,
        on_stopping: Callable[[], None] | None,
    ) -> None:
        super().__init__(config)
        self._app = app
        self._stop = stop
        self._on_stopping = on_stopping
        self._closing = False

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        stop = self._stop
        if stop is None:
            with super().capture_signals():
                yield
            return
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, previous)

    async def on_tick(self, counter: int) -> bool:
        if self._stop is not None and self._stop.is_set():
            self.should_exit = True
        if self.should_exit and not self._closing:
            self._closing = True
            if self._on_stopping is not None:
                self._on_stopping()
            _close_streams(self._app)
        return await super().on_tick(counter)

"""Running the app: :func:`serve` for ``akgentic serve``, :class:`BackgroundServer` for a
server in a thread (tests, benchmarks, a program that also drives teams itself)."""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from os import PathLike
from pathlib import Path
from types import FrameType, TracebackType

import uvicorn
from fastapi import FastAPI

from akgentic.core import ActorSystem, left_behind
from akgentic.server.app import create_app
from akgentic.server.cards import CardRegistry
from akgentic.server.context import ServerContext
from akgentic.server.errors import JsonErrorsH11
from akgentic.server.settings import ServerSettings
from akgentic.storage import StorageBundle
from akgentic.team import Placement, TeamManager

__all__ = ["BackgroundServer", "bound_url", "load_skills_into", "serve"]

logger = logging.getLogger("akgentic.server")

_LEFT_WAIT = 1.0
"""Seconds the actor system waits for what is left once the teams have stopped."""

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
        http=JsonErrorsH11,  # a request it cannot parse is answered in JSON too
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


def load_skills_into(
    storage: StorageBundle, folders: str | PathLike[str] | Iterable[str | PathLike[str]]
) -> list[str]:
    """Load the skills of ``folders`` (one folder, or several: ``SKILL.md``, ``*.yaml``)
    into the store's skill catalog; returns the problems, which are not fatal, one line each
    saying what became of the skill: a broken file or a duplicate is skipped (of two folders
    holding a skill of one name, the first is kept). A skill's ``toolset`` is stored with
    it, so an agent given it from the store sets it aside while that toolset is active."""
    from akgentic.storage import SkillRecord
    from akgentic.tool.skill import load_skills

    named = [folders] if isinstance(folders, (str, PathLike)) else list(folders)
    problems: list[str] = []
    kept: dict[str, str] = {}  # name -> the folder it was loaded from
    for folder in named:
        result = load_skills([folder])
        problems += [f"skill skipped: {e.path}: {e.reason}" for e in result.errors]
        for entry in result.skills:
            if entry.name in kept:
                problems.append(
                    f"skill skipped: {folder}: skill {entry.name!r} is in {kept[entry.name]} "
                    "too; kept that one (its folder comes first) — rename one of them"
                )
                continue
            kept[entry.name] = str(folder)
            storage.skills.upsert(
                SkillRecord(
                    name=entry.name,
                    description=entry.description,
                    content=entry.content,
                    source=str(folder),
                    toolset=entry.toolset,
                )
            )
    return problems


def serve(
    storage: StorageBundle,
    settings: ServerSettings,
    *,
    card_paths: Iterable[str | Path] = (),
    skills_dir: str | Path | Sequence[str | Path] | None = None,
    on_ready: Callable[[str], None] | None = None,
    on_problem: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
    on_stopping: Callable[[], None] | None = None,
    placement: Placement | None = None,
    sigterm_handled: bool = False,
    on_manager: Callable[[TeamManager], None] | None = None,
) -> None:
    """Run the server in this thread until interrupted (``akgentic serve``); every team it
    runs in this process is stopped gracefully on the way out (teams a ``placement`` runs
    on a cluster keep running there).

    The way out drains: the server goes on listening while its teams stop —
    ``/health`` answers 503 ``draining``, requests that would start work (create or
    resume a team, a message, a command) get 503 saying the server is shutting down,
    reads are answered — and it exits once they have stopped (its event streams end
    then).

    ``on_ready(url)`` is called once it listens; ``on_problem(line)`` once for each card or
    skill skipped (they are logged as warnings without it). With ``stop``, the caller owns
    Ctrl-C: the server drains and stops once ``stop`` is set (``on_stopping()`` says it
    began: the server is draining by then), and SIGTERM does the same unless
    ``sigterm_handled`` says the caller's own handler sets ``stop`` on SIGTERM
    (``akgentic serve``'s, which keeps the signal for its exit code, 143); without it, the
    first SIGINT or SIGTERM drains and a second SIGINT ends the serving at once (the teams
    still stop before this returns). A ``settings.mcp_config`` that cannot be used raises
    ``MCPConfigError`` before the server listens, and a card file named in ``card_paths``
    that cannot be read (or a path that is not there) ``TeamCardError``: the operator
    asked for it by name (a folder's broken card is skipped, through ``on_problem``).
    ``on_manager(manager)`` is handed the manager that runs the teams once it exists (the
    CLI's second Ctrl-C reads its teams to say what it cut).
    """
    report = on_problem or (lambda line: logger.warning("%s", line))
    cards = CardRegistry()
    cards.load(card_paths)
    for problem in cards.problems:
        report(problem)
    system = ActorSystem()
    graced = False  # the teams have had their grace: drained, or shut down here
    try:
        manager = TeamManager(system, storage, placement=placement)
        if on_manager is not None:
            on_manager(manager)
        server: _Server | None = None
        try:
            app = create_app(manager, settings, cards=cards)
            if skills_dir is not None:
                for problem in load_skills_into(storage, skills_dir):
                    report(problem)
            server = _Server(
                _config(app, settings),
                app,
                stop,
                on_stopping,
                manager.shutdown,
                sigterm_handled=sigterm_handled,
            )
            if on_ready is not None:
                threading.Thread(target=_announce, args=(server, on_ready), daemon=True).start()
            server.run()
        finally:
            if server is None or not server.drained():  # no drain: a failed start, an error
                manager.shutdown()
            graced = True
    finally:
        # once the teams have had their grace, an actor still running is inside a call
        # that never returns, and waiting longer only delays the exit
        left = system.shutdown(_LEFT_WAIT) if graced else system.shutdown()
        if left:
            logger.warning("%s", left_behind(left))


class _Server(uvicorn.Server):
    """uvicorn that drains before it stops, and ends the event streams first when it stops
    (so no stream waits out the grace).

    Asked to stop (``stop`` set, SIGTERM, or — without ``stop`` — the first SIGINT), it
    marks the app draining (``ServerContext.draining``), says so (``on_stopping``) and runs
    ``drain`` (stopping the teams) on a thread, still listening; once ``drain`` returns it
    stops as uvicorn does. Given ``stop``, it leaves SIGINT (and a SIGTERM the caller
    handles) to its caller and raises no signal again on its way out (uvicorn re-raises
    what it caught, which would land in the caller's handler as a second Ctrl-C); without
    it, a second SIGINT stops it at once."""

    def __init__(
        self,
        config: uvicorn.Config,
        app: FastAPI,
        stop: threading.Event | None,
        on_stopping: Callable[[], None] | None,
        drain: Callable[[], None],
        *,
        sigterm_handled: bool = False,
    ) -> None:
        super().__init__(config)
        self._sigterm_handled = sigterm_handled
        self._app = app
        self._stop = stop
        self._on_stopping = on_stopping
        self._drain = drain
        self._asked = False  # a signal asked it to stop (without ``stop``)
        self._draining: threading.Thread | None = None
        self._closing = False

    def drained(self) -> bool:
        """Whether it drained (the teams are stopped); waits for a drain under way."""
        if self._draining is None:
            return False
        self._draining.join()
        return True

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """uvicorn's signal handler (without ``stop``): the first signal drains, a second
        SIGINT stops serving at once."""
        if self._asked and sig == signal.SIGINT:
            self.should_exit = self.force_exit = True
        self._captured_signals.append(sig)
        self._asked = True

    def _drain_then_exit(self) -> None:
        try:
            self._drain()
        except Exception:
            logger.exception("stopping the teams failed")
        finally:
            self.should_exit = True

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
        if self._sigterm_handled:
            yield  # the caller's own handler sets ``stop`` (akgentic serve's keeps the signal)
            return
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, previous)

    async def on_tick(self, counter: int) -> bool:
        asked = self._asked or (self._stop is not None and self._stop.is_set())
        if (asked or self.should_exit) and self._draining is None:
            ctx: ServerContext = self._app.state.context
            ctx.draining = True  # before it says so: whoever reads the line finds it draining
            if self._on_stopping is not None:
                self._on_stopping()
            self._draining = threading.Thread(
                target=self._drain_then_exit, name="akgentic-server-drain"
            )
            self._draining.start()
        if self.should_exit and not self._closing:
            self._closing = True
            _close_streams(self._app)
        return await super().on_tick(counter)

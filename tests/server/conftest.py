"""Fixtures of the server tests: the real app served by uvicorn on a real socket (a thread
of this process), over SQLite, with the real client. Nothing sleeps: tests wait on events
of the stream, with bounds."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi import FastAPI

from akgentic.client import AkgenticClient, RemoteTeam
from akgentic.core import ActorSystem
from akgentic.server import BackgroundServer, CardRegistry, ServerSettings, create_app
from akgentic.storage import EventRecord, LeaseHolder, StorageBundle, open_storage, sqlite_url
from akgentic.team import TeamCard, TeamManager
from tests.server import gate_tool

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"
RESEARCH = REPO / "examples" / "teams" / "research.yaml"
ANALYST = REPO / "examples" / "teams" / "analyst.yaml"
TURNS = DATA / "turns.yaml"


@dataclass
class Served:
    url: str
    storage: StorageBundle
    manager: TeamManager
    system: ActorSystem
    client: AkgenticClient
    app: FastAPI


def serve_cards(
    folder: Path,
    settings: ServerSettings,
    cards: tuple[Path, ...] | CardRegistry = (RESEARCH, ANALYST, TURNS),
) -> Iterator[Served]:
    """The app over SQLite in ``folder``, knowing ``cards`` (card files given as cards, or
    a registry as ``akgentic serve --cards`` loads it), served until closed."""
    storage = open_storage(sqlite_url(folder / "server.db"))
    system = ActorSystem()
    manager = TeamManager(system, storage)
    known = cards if isinstance(cards, CardRegistry) else [TeamCard.from_yaml(p) for p in cards]
    app = create_app(manager, settings, cards=known)
    server = BackgroundServer(app).start()
    client = AkgenticClient(server.url, token=settings.token)
    try:
        yield Served(server.url, storage, manager, system, client, app)
    finally:
        client.close()
        server.stop()
        manager.shutdown(5)
        system.shutdown()
        storage.close()


def manager_elsewhere(folder: Path) -> Iterator[TeamManager]:
    """Another process's manager over the store ``serve_cards(folder, ...)`` serves: its
    own connection and lease holder, so the server sees its teams run elsewhere."""
    storage, system = open_storage(sqlite_url(folder / "server.db")), ActorSystem()
    manager = TeamManager(system, storage, holder=LeaseHolder.here(owner="the-other-server"))
    try:
        yield manager
    finally:
        manager.shutdown(5)
        system.shutdown()
        storage.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    yield from serve_cards(tmp_path, ServerSettings(port=0, heartbeat=0.5))


@pytest.fixture
def serve_with(tmp_path: Path) -> Iterator[Callable[[ServerSettings], Served]]:
    """Serve with other settings (a token, CORS, a small body limit)."""
    stack: list[Iterator[Served]] = []

    def start(settings: ServerSettings) -> Served:
        it = serve_cards(tmp_path, settings)
        stack.append(it)
        return next(it)

    yield start
    for it in stack:
        for _ in it:
            pass


@pytest.fixture(autouse=True)
def _gate() -> Iterator[None]:
    gate_tool.ENTERED.clear()
    gate_tool.OPEN.clear()
    yield
    gate_tool.OPEN.set()  # never leave a turn waiting


def kind(record: EventRecord) -> str:
    """The protocol type of a record."""
    from akgentic.server.protocol import protocol_of

    assert record.message is not None, record.error
    return protocol_of(record.message)[0]


def until(
    team: RemoteTeam, done: Callable[[EventRecord], bool], from_seq: int = 1, timeout: float = 60.0
) -> list[EventRecord]:
    """Follow ``team`` until a record satisfies ``done`` (bounded); the records read."""
    seen: list[EventRecord] = []
    for record in team.follow(from_seq, idle_timeout=timeout):
        seen.append(record)
        if done(record):
            return seen
    raise AssertionError(f"not seen within {timeout}s; got {[kind(r) for r in seen]}")

"""Fixtures of the catalog tests: a key, a catalog over a real store, a team manager over
both, a loopback HTTP service standing in for a cluster's REST API, and a port nothing
listens on."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from akgentic.catalog import CatalogService, Principal, SecretBox, discover
from akgentic.core import ActorSystem
from akgentic.storage import SqliteStorage
from akgentic.team import TeamManager
from tests.catalog.loopback import Service, free_port, serving
from tests.catalog.tooltypes import (
    PROBING,
    PROCEED,
    RELEASE,
    HangingService,
    LeakyService,
    VaultTool,
)

ADMIN = Principal(name="ann", via="python")


@pytest.fixture
def box() -> SecretBox:
    return SecretBox(os.urandom(32))


@pytest.fixture
def storage(tmp_path: Path) -> Iterator[SqliteStorage]:
    store = SqliteStorage(tmp_path / "catalog.db")
    yield store
    store.close()


@pytest.fixture
def catalog(storage: SqliteStorage, box: SecretBox) -> CatalogService:
    registry = discover(entry_point_group=None, extra=[VaultTool, HangingService, LeakyService])
    return CatalogService(storage, registry=registry, secrets=box)


@pytest.fixture(autouse=True)
def _release_hanging_probes() -> Iterator[None]:
    for event in (RELEASE, PROBING, PROCEED):
        event.clear()
    yield
    RELEASE.set()
    PROCEED.set()


@pytest.fixture
def service() -> Iterator[Service]:
    with serving() as running:
        yield running


@pytest.fixture
def closed_port() -> int:
    return free_port()


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    actor_system = ActorSystem()
    yield actor_system
    actor_system.shutdown(timeout=10)


@pytest.fixture
def manager(
    system: ActorSystem, storage: SqliteStorage, catalog: CatalogService
) -> Iterator[TeamManager]:
    teams = TeamManager(system, storage, catalog=catalog)
    yield teams
    teams.shutdown()  # before the storage closes


def stored_bytes(folder: Path) -> bytes:
    """Every byte SQLite keeps under ``folder``: the database, its WAL, its shared memory."""
    return b"".join(p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file())

"""akgentic's errors between processes: every public error pickles as itself (class,
message, fields), and :func:`load_error` rebuilds only akgentic's own, from modules
already loaded — never a class or a function a pickle merely names."""

from __future__ import annotations

import os
import pickle
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

from akgentic.core import ActorNameTakenError, ActorStartError, AddressError
from akgentic.core._proxy import AskTimeoutError
from akgentic.core.error_pickle import dump_error, load_error
from akgentic.core.serialization import SerializationError
from akgentic.llm.config import ModelConfig, UnknownModelError
from akgentic.llm.providers import MissingApiKeyError, MissingProviderError
from akgentic.llm.registry import UnknownRegisteredModelError
from akgentic.storage import Lease, LeaseHolder
from akgentic.storage.errors import (
    CorruptRecordError,
    StorageNotFoundError,
    TeamExistsError,
    TeamNotFoundError,
)
from akgentic.storage.lease import LeaseHeldError, LeaseLostError
from akgentic.team import ResumeError, TeamRunningElsewhereError, TeamStartError
from akgentic.team.card import TeamCardError
from akgentic.team.manager import TeamNotRunningError
from akgentic.tool.errors import ToolActorStartError


def a_lease() -> Lease:
    now = datetime.now(UTC)
    holder = LeaseHolder(owner="ray:node:team-x", host="box", pid=42)
    return Lease(
        resource="team/x", holder=holder, since=now, renewed_at=now, expires_at=now, expired=False
    )


CONFIG = ModelConfig(provider="anthropic", model="claude-x")

ERRORS: list[BaseException] = [
    TeamExistsError("team 1f0c already exists"),
    TeamNotFoundError("no team 1f0c"),
    StorageNotFoundError("no store at /tmp/x"),
    CorruptRecordError("team 1f0c, event 3: the payload cannot be decoded: bad JSON"),
    SerializationError("unknown model marker 'x.Y': import its module first"),
    TeamCardError("team.yaml, line 3, members.0.card: field required"),
    UnknownModelError("openai:gpt-9", ["scripted:default", "openai:gpt-4o"]),
    UnknownRegisteredModelError("mine", []),
    MissingProviderError(CONFIG, "anthropic", ImportError("No module named 'anthropic'")),
    MissingApiKeyError(CONFIG, "ANTHROPIC_API_KEY"),
    AskTimeoutError("@Writer did not answer in 5s"),
    AddressError("@Nobody is not a member"),
    ActorStartError("#Board", "OSError: [Errno 2] No such file or directory: '/x'"),
    ActorNameTakenError("#Board", "#Board is already a Shelf, not a Drawer"),
    ToolActorStartError("Board", ActorStartError("#Board", "OSError: no /x")),
    ResumeError("@Writer could not start: OSError: no /x", member="@Writer"),
    TeamStartError("writers", "@Writer", "OSError: no /x"),
    TeamNotRunningError("team 1f0c is not running here"),
    TeamRunningElsewhereError(uuid4(), a_lease()),
    LeaseHeldError(a_lease()),
    LeaseLostError("team/x", "me", a_lease()),
]


def fields(exc: BaseException) -> tuple[type, tuple[Any, ...], str, dict[str, Any]]:
    return type(exc), exc.args, str(exc), vars(exc)


@pytest.mark.parametrize("raised", ERRORS, ids=lambda e: type(e).__name__)
def test_every_error_pickles_as_itself(raised: BaseException) -> None:
    assert fields(pickle.loads(pickle.dumps(raised))) == fields(raised)


@pytest.mark.parametrize("raised", ERRORS, ids=lambda e: type(e).__name__)
def test_every_error_is_rebuilt_from_its_dump_as_itself(raised: BaseException) -> None:
    data = dump_error(raised)
    assert data is not None
    back = load_error(data)
    assert back is not None
    assert fields(back) == fields(raised)


class OwnLookupError(LookupError):
    """An error of a module of the user's (a card's tool), not akgentic's."""


def test_an_error_not_akgentics_is_not_dumped() -> None:
    assert dump_error(OwnLookupError("no such row")) is None
    assert dump_error(KeyError("x")) is None


def test_an_akgentic_error_holding_what_does_not_cross_is_not_dumped() -> None:
    """A field that does not pickle, or that pickles as a class ``load_error`` refuses:
    the caller falls back on the base type instead of a half-rebuilt error."""
    locked = TeamNotFoundError("no team")
    locked.lock = threading.Lock()  # type: ignore[attr-defined]
    foreign = TeamNotFoundError("no team")
    foreign.cause = OwnLookupError("x")  # type: ignore[attr-defined]
    assert dump_error(locked) is None
    assert dump_error(foreign) is None


class Planted:
    """What a hostile pickle carries: a call run while it loads."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return os.mkdir, (str(self.path),)


def test_a_pickle_naming_a_function_or_another_class_is_refused_without_running_it(
    tmp_path: Path,
) -> None:
    planted = tmp_path / "planted"
    error = TeamNotFoundError("no team")
    error.payload = Planted(planted)  # type: ignore[attr-defined]
    assert load_error(pickle.dumps(error)) is None
    assert load_error(pickle.dumps(Planted(planted))) is None
    assert not planted.exists()
    assert load_error(pickle.dumps(OwnLookupError("x"))) is None
    assert load_error(pickle.dumps(ValueError("x"))) is None
    assert load_error(b"not a pickle") is None


def test_a_class_of_an_akgentic_module_not_loaded_here_is_refused() -> None:
    """Loading never imports: a module named by the bytes must already be loaded."""
    data = pickle.dumps(TeamNotFoundError("no team"))
    renamed = data.replace(b"akgentic.storage.errors", b"akgentic.storage.errorz")
    assert renamed != data
    assert load_error(renamed) is None

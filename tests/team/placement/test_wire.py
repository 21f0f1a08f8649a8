"""What crosses between a driver and a team's Ray actor: a failure in the actor becomes,
on the driver, the very error a local TeamManager raises (no cluster needed)."""

from __future__ import annotations

import pickle
import threading
from datetime import UTC, datetime
from uuid import uuid4

import pytest

from akgentic.core import AddressError
from akgentic.storage import Lease, LeaseHolder, TeamNotFoundError
from akgentic.team import ResumeError, TeamRunningElsewhereError, TeamStartError
from akgentic.team.placement import PlacementError
from tests.core.test_error_pickle import ERRORS, OwnLookupError, fields
from tests.team.placement.conftest import HAS_RAY

pytestmark = pytest.mark.skipif(not HAS_RAY, reason="ray is not installed: pip install -e '.[dev]'")


def crossed(exc: BaseException) -> Exception:
    from akgentic.team.placement.ray.wire import HostError

    team_id = uuid4()
    return pickle.loads(pickle.dumps(HostError.of(exc, team_id))).local()


def test_a_team_held_elsewhere_names_its_holder_on_the_driver() -> None:
    now = datetime.now(UTC)
    holder = LeaseHolder(owner="ray:node:team-x", host="box", pid=42)
    lease = Lease(
        resource="team/x", holder=holder, since=now, renewed_at=now, expires_at=now, expired=False
    )
    team_id = uuid4()
    from akgentic.team.placement.ray.wire import HostError

    error = pickle.loads(
        pickle.dumps(HostError.of(TeamRunningElsewhereError(team_id, lease), team_id))
    )
    local = error.local()
    assert isinstance(local, TeamRunningElsewhereError)
    assert local.lease == lease
    assert str(local).startswith(
        f"team {team_id} is running in another process: pid 42 on host box"
    )


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (ResumeError("@Boss: set OPENAI_API_KEY"), ResumeError),
        (AddressError("@Nobody is not a member"), AddressError),
        (ValueError("bad card"), ValueError),
        (ImportError("pip install 'akgentic[anthropic]'"), ImportError),
        (ModuleNotFoundError("no module named 'mytools'"), ImportError),
        (LookupError("no team"), LookupError),
        (TimeoutError("not committed"), TimeoutError),
    ],
)
def test_errors_cross_as_the_local_manager_raises_them(
    raised: Exception, expected: type[Exception]
) -> None:
    local = crossed(raised)
    assert type(local) is expected
    assert str(local) == str(raised)


@pytest.mark.parametrize("raised", ERRORS, ids=lambda e: type(e).__name__)
def test_akgentics_errors_cross_as_themselves(raised: Exception) -> None:
    """``except TeamNotFoundError`` (or CorruptRecordError, UnknownModelError...) works on
    the driver as in process: same class, message and fields."""
    assert fields(crossed(raised)) == fields(raised)


@pytest.mark.parametrize(
    ("raised", "expected"),
    [
        (OwnLookupError("no such row"), LookupError),
        (KeyError("row"), LookupError),
        (FileNotFoundError("/x"), PlacementError),
    ],
)
def test_an_error_not_akgentics_falls_back_on_its_base_type(
    raised: Exception, expected: type[Exception]
) -> None:
    """A class of a card's own module is never rebuilt on the driver: its base type."""
    local = crossed(raised)
    assert type(local) is expected
    assert str(raised) in str(local)


def test_an_akgentic_error_that_does_not_pickle_falls_back_on_its_base_type() -> None:
    raised = TeamNotFoundError("no team 1f0c")
    raised.lock = threading.Lock()  # type: ignore[attr-defined]
    local = crossed(raised)
    assert type(local) is LookupError
    assert str(local) == "no team 1f0c"


@pytest.mark.parametrize("member", ["@Writer", "#Board", None])
def test_a_failed_resume_names_its_member_on_the_driver(member: str | None) -> None:
    """The member that could not start crosses with the message: a client tells it from
    a resume another model would fix (``member`` None)."""
    raised = ResumeError(f"{member} could not start: FileNotFoundError: /x", member=member)
    local = crossed(raised)
    assert type(local) is ResumeError
    assert str(local) == str(raised)
    assert local.member == member


def test_a_failed_create_names_its_member_on_the_driver() -> None:
    """A member that could not start fails a create on the driver as it does locally: a
    TeamStartError, with its message, member, card and reason."""
    raised = TeamStartError("writers", "@Writer", "FileNotFoundError: /x")
    local = crossed(raised)
    assert type(local) is TeamStartError
    assert (
        str(local) == str(raised) == "team writers: @Writer could not start: FileNotFoundError: /x"
    )
    assert (local.card, local.member, local.reason) == (
        "writers",
        "@Writer",
        "FileNotFoundError: /x",
    )


def test_a_team_start_error_pickles_as_itself() -> None:
    """Ray may pickle an exception itself: it comes back whole."""
    raised = TeamStartError("writers", "#Board", "no such board")
    back = pickle.loads(pickle.dumps(raised))
    assert type(back) is TeamStartError
    assert str(back) == str(raised)
    assert (back.card, back.member, back.reason) == ("writers", "#Board", "no such board")


def test_an_unexpected_error_is_a_placement_error_naming_it() -> None:
    local = crossed(RuntimeError("disk on fire"))
    assert isinstance(local, PlacementError)
    assert "RuntimeError: disk on fire" in str(local)


def test_a_host_owner_names_its_node_and_actor() -> None:
    from akgentic.team.placement.ray.wire import host_owner, parse_owner

    owner = host_owner("n0de", "team-1-abc")
    assert parse_owner(owner) == ("n0de", "team-1-abc")
    assert parse_owner("3f2a9c") is None  # a local process's owner id
    assert parse_owner("ray:") is None

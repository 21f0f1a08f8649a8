"""What crosses between a driver and a team's Ray actor: plain data and one error type.

Ray pickles arguments, results and exceptions. Messages and addresses cross as
akgentic's own serialized form (what the store holds), so a live address never leaves
its actor system; an error crosses as a :class:`HostError` and the driver raises the
error the local ``TeamManager`` would have raised (:meth:`HostError.local`): one of
akgentic's own comes back as itself, class, message and fields (pickled, and rebuilt
only as akgentic's: :mod:`akgentic.core.error_pickle`); any other as its base type
(``LookupError``, ``ValueError``...) with its message, or a ``PlacementError`` naming it.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import ray
from ray import ObjectRef
from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

from akgentic.core import AddressError
from akgentic.core.error_pickle import dump_error, load_error
from akgentic.team.manager import TeamNotRunningError
from akgentic.team.placement.protocol import PlacementError

__all__ = [
    "HostError",
    "TeamUnreachableError",
    "actor_name",
    "answer",
    "host_owner",
    "live_nodes",
    "node_resources",
    "parse_owner",
]

OWNER_PREFIX = "ray:"


def actor_name(team_id: UUID, incarnation: str) -> str:
    """The Ray actor name of one incarnation of a team's host: ``team-<id>-<incarnation>``."""
    return f"team-{team_id}-{incarnation}"


def host_owner(node_id: str, name: str) -> str:
    """The lease owner id of a host: ``ray:<node id>:<actor name>``."""
    return f"{OWNER_PREFIX}{node_id}:{name}"


def parse_owner(owner: str) -> tuple[str, str] | None:
    """``(node id, actor name)`` of a host's owner id; None for any other holder."""
    if not owner.startswith(OWNER_PREFIX):
        return None
    node, _, name = owner[len(OWNER_PREFIX) :].partition(":")
    return (node, name) if node and name else None


class HostError(Exception):
    """An error raised in a team's actor, in a form that pickles (see the module doc).

    ``error`` is the error itself, pickled, when it is one of akgentic's
    (:func:`~akgentic.core.error_pickle.dump_error`): the driver rebuilds it whole, with
    its class and fields. ``kind`` names the base type it falls back on otherwise (an
    error of a card's own module, say), raised with ``message``. Every field is in
    ``args``, which is what pickling an exception rebuilds it from.
    """

    def __init__(
        self, kind: str, message: str, team_id: str = "", error: bytes | None = None
    ) -> None:
        super().__init__(kind, message, team_id, error)
        self.kind = kind
        self.message = message
        self.team_id = team_id
        self.error = error

    def __str__(self) -> str:
        return self.message

    @classmethod
    def of(cls, exc: BaseException, team_id: UUID) -> HostError:
        """``exc`` as it crosses back to the driver."""
        error = dump_error(exc)
        for kind, types in _KINDS:
            if isinstance(exc, types):
                return cls(kind, str(exc), str(team_id), error)
        return cls("error", f"{type(exc).__name__}: {exc}", str(team_id), error)

    def local(self) -> Exception:
        """The exception the local ``TeamManager`` raises for the same failure: the error
        itself when it is akgentic's, else its base type with its message."""
        rebuilt = load_error(self.error) if self.error is not None else None
        if isinstance(rebuilt, Exception):
            return rebuilt
        for kind, error in _KINDS:
            if kind == self.kind:
                return error(self.message)
        return PlacementError(f"team {self.team_id}: {self.message}")


# What an error that is not akgentic's (or does not pickle) falls back on; the order
# matters: the first kind an exception is an instance of names it.
_KINDS: list[tuple[str, type[Exception]]] = [
    ("address", AddressError),
    ("not-running", TeamNotRunningError),
    ("lookup", LookupError),
    ("invalid", ValueError),
    ("import", ImportError),  # a provider's SDK not installed on the worker, say
    ("timeout", TimeoutError),
]


def answer(ref: ObjectRef[Any], timeout: float, *, gone: str, late: str) -> Any:
    """The result of a call to a team's actor, or the local error of its failure.

    A :class:`HostError` becomes the error the local manager raises; an actor that
    died (or never started) is a :class:`TeamUnreachableError` saying ``gone``, and no
    answer within ``timeout`` seconds one saying ``late``.
    """
    try:
        return ray.get(ref, timeout=timeout)
    except RayTaskError as exc:
        if isinstance(exc.cause, HostError):
            raise exc.cause.local() from None
        raise PlacementError(f"{gone}: {exc}") from None
    except RayActorError as exc:
        raise TeamUnreachableError(f"{gone} ({_first_line(exc)})") from None
    except GetTimeoutError:
        raise TeamUnreachableError(late) from None


def live_nodes() -> list[str]:
    """The ids of the nodes Ray reports alive."""
    return list(node_resources())


def node_resources() -> dict[str, dict[str, float]]:
    """The resources of each node Ray reports alive, by node id."""
    nodes: list[dict[str, Any]] = ray.nodes()  # type: ignore[no-untyped-call]
    return {str(n["NodeID"]): dict(n.get("Resources", {})) for n in nodes if n.get("Alive")}


class TeamUnreachableError(PlacementError):
    """The team's actor is gone (its worker was lost, or it could not start), or did not
    answer: nothing was done; the message says when to try again."""


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__

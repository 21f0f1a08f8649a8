"""akgentic.team.placement: where a team runs — this process, or a Ray cluster.

``TeamManager(system, storage)`` runs its teams here (:class:`LocalPlacement`);
``TeamManager(system, storage, placement=RayPlacement(url, RayOptions(...)))`` runs each
team in a Ray actor of its own on a cluster sharing a Postgres store, and resumes it on
another worker when its worker dies. See README.md beside this file.

``RayPlacement``, ``RayOptions``, ``RayTeam`` and ``NoWorkerError`` need the ``ray`` extra
and are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from akgentic.team.placement.local import LocalPlacement
from akgentic.team.placement.protocol import HostedTeam, Placement, PlacementError

if TYPE_CHECKING:
    from akgentic.team.placement.ray import NoWorkerError, RayOptions, RayPlacement, RayTeam

__all__ = [
    "HostedTeam",
    "LocalPlacement",
    "NoWorkerError",
    "Placement",
    "PlacementError",
    "RayOptions",
    "RayPlacement",
    "RayTeam",
]

_RAY = ("NoWorkerError", "RayOptions", "RayPlacement", "RayTeam")


def __getattr__(name: str) -> Any:
    if name in _RAY:
        from akgentic.team.placement import ray

        return getattr(ray, name)
    raise AttributeError(f"module 'akgentic.team.placement' has no attribute {name!r}")

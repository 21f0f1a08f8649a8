"""akgentic.team.placement.ray: each team in a Ray actor of its own (the ``ray`` extra).

:class:`RayPlacement` places teams on a Ray cluster whose workers share a Postgres store;
:class:`RayOptions` says what each team gets there; :class:`RayTeam` drives a team placed
there from any process; a lost worker's teams are resumed elsewhere (:mod:`.revive`).
See the README beside the placement package.
"""

from akgentic.team.placement.ray.options import RayOptions
from akgentic.team.placement.ray.placement import NoWorkerError, RayPlacement
from akgentic.team.placement.ray.team import RayTeam
from akgentic.team.placement.ray.wire import TeamUnreachableError

__all__ = ["NoWorkerError", "RayOptions", "RayPlacement", "RayTeam", "TeamUnreachableError"]

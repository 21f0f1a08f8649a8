"""``--placement local|ray`` and the Ray options of ``akgentic serve``.

``local`` (the default) runs every team in the server's process. ``ray`` runs each team
in a Ray actor of its own on the cluster ``--ray-address`` names, over the Postgres store
``--storage`` names (every worker must reach it); the server creates, drives and follows
them there, and a team whose worker dies is resumed on another. The modules the command
imported with ``--import`` are imported by every team's actor too.
"""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import ValidationError

from akgentic.cli.errors import CliError, invalid_options
from akgentic.team import Placement

__all__ = [
    "MaxTeamsOption",
    "PlacementOption",
    "RayAddressOption",
    "TeamCpusOption",
    "TeamGpusOption",
    "TeamResourceOption",
    "placement_of",
]

PANEL = "Placement"

PlacementOption = Annotated[
    str,
    typer.Option(
        "--placement",
        envvar="AKGENTIC_PLACEMENT",
        metavar="local|ray",
        rich_help_panel=PANEL,
        help="Where teams run: in this process (local), or each in an actor of a Ray "
        "cluster (ray: needs the 'ray' extra and a postgresql:// --storage).",
    ),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        envvar="AKGENTIC_RAY_ADDRESS",
        metavar="ADDRESS",
        show_default=False,
        rich_help_panel=PANEL,
        help="The Ray cluster (host:6379, ray://host:10001, auto) [default: RAY_ADDRESS, "
        "else a new local cluster]",
    ),
]
TeamCpusOption = Annotated[
    float,
    typer.Option(
        "--team-cpus", min=0, metavar="N", rich_help_panel=PANEL, help="CPUs each team holds."
    ),
]
TeamGpusOption = Annotated[
    float,
    typer.Option(
        "--team-gpus", min=0, metavar="N", rich_help_panel=PANEL, help="GPUs each team holds."
    ),
]
TeamResourceOption = Annotated[
    list[str] | None,
    typer.Option(
        "--team-resource",
        metavar="NAME=AMOUNT",
        show_default=False,
        rich_help_panel=PANEL,
        help="A custom Ray resource each team holds (repeatable), e.g. tools=1.",
    ),
]
MaxTeamsOption = Annotated[
    int | None,
    typer.Option(
        "--max-teams-per-worker",
        min=1,
        metavar="N",
        show_default=False,
        rich_help_panel=PANEL,
        help="Teams one Ray worker node hosts at most [default: no cap]",
    ),
]

_OPTIONS = {
    "address": "--ray-address",
    "num_cpus": "--team-cpus",
    "num_gpus": "--team-gpus",
    "resources": "--team-resource",
    "max_teams_per_worker": "--max-teams-per-worker",
    "imports": "--import",
}
"""The option each field of ``RayOptions`` comes from, as an error names it."""


def placement_of(
    kind: str,
    storage_url: str,
    *,
    address: str | None = None,
    cpus: float = 0.0,
    gpus: float = 0.0,
    resources: list[str] | None = None,
    max_teams: int | None = None,
    imports: list[str] | None = None,
) -> Placement | None:
    """The placement ``--placement`` names (None: local), or a :class:`CliError` saying
    what to change. ``imports`` are the modules the command imported (``--import``): a
    local team has them already; every Ray actor imports them too (they must be
    importable on the workers)."""
    choice = kind.strip().lower()
    if choice == "local":
        if address or cpus or gpus or resources or max_teams:
            raise CliError(
                "--ray-address, --team-cpus, --team-gpus, --team-resource and "
                "--max-teams-per-worker apply to --placement ray only"
            )
        return None
    if choice != "ray":
        raise CliError(f"--placement {kind}: choose local or ray")
    try:
        from akgentic.team.placement.ray import RayOptions, RayPlacement
    except ImportError as exc:
        raise CliError(
            f"--placement ray needs the 'ray' extra ({exc.name} is missing): "
            f"pip install 'akgentic[ray]'"
        ) from None
    if not storage_url.startswith(("postgresql://", "postgres://")):
        raise CliError(
            "--placement ray needs a store every worker reaches: "
            "--storage postgresql://user@host:port/db (or AKGENTIC_STORAGE)"
        )
    try:
        options = RayOptions(
            address=address,
            num_cpus=cpus,
            num_gpus=gpus,
            resources=_resources(resources or []),
            max_teams_per_worker=max_teams,
            imports=tuple(imports or ()),
        )
    except ValidationError as exc:
        raise invalid_options(exc, _OPTIONS) from None
    try:
        return RayPlacement(storage_url, options)
    except ConnectionError as exc:
        where = address or "RAY_ADDRESS"
        raise CliError(f"cannot reach the Ray cluster at {where}: {exc}") from None


def _resources(items: list[str]) -> dict[str, float]:
    found: dict[str, float] = {}
    for item in items:
        name, sep, amount = item.partition("=")
        try:
            found[name.strip()] = float(amount) if sep else 1.0
        except ValueError:
            raise CliError(f"--team-resource {item}: write NAME=AMOUNT, e.g. tools=1") from None
    return found

"""RayOptions: how a Ray placement reaches its cluster and what each team gets there."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from akgentic.team.manager import LEASE_TTL

__all__ = ["RayOptions"]


class RayOptions(BaseModel):
    """The options of a :class:`~akgentic.team.placement.ray.RayPlacement`.

    A team's resources are asked of Ray for the actor that hosts it (one actor, one
    process, per team): ``num_cpus``, ``num_gpus``, ``memory`` and custom ``resources``
    (``{"tools": 1}`` puts the team on a node started with ``--resources '{"tools": 8}'``).
    ``max_teams_per_worker`` caps the teams one worker node hosts, whoever places them
    (a slot lease per team in the store). ``imports`` are the modules every team's actor
    imports besides its card's ``imports`` (``akgentic serve --import``).
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    address: str | None = Field(
        default=None,
        description="The Ray cluster: 'auto', 'host:6379', 'ray://host:10001'; None: "
        "RAY_ADDRESS, else a cluster this process is already connected to, else a new "
        "local one.",
    )
    namespace: str = Field(
        default="akgentic", min_length=1, description="The Ray namespace of the teams' actors."
    )
    num_cpus: float = Field(default=0.0, ge=0, description="CPUs each team holds on its node.")
    num_gpus: float = Field(default=0.0, ge=0, description="GPUs each team holds on its node.")
    memory: int | None = Field(
        default=None, ge=1, description="Bytes of Ray's 'memory' resource each team holds."
    )
    resources: dict[str, float] = Field(
        default_factory=dict, description="Custom Ray resources each team holds."
    )
    max_teams_per_worker: int | None = Field(
        default=None, ge=1, description="Teams one worker node hosts at most; None: no cap."
    )
    lease_ttl: float = Field(
        default=LEASE_TTL,
        gt=0,
        description="Seconds a team's lease lasts without a heartbeat: a worker that stops "
        "renewing loses its teams after this long.",
    )
    revive: bool = Field(
        default=True,
        description="Resume on another worker the teams whose worker was lost (their lease "
        "lapsed, or Ray reports their node or actor dead).",
    )
    revive_interval: float = Field(
        default=2.0, gt=0, description="Seconds between two looks for teams to revive."
    )
    retry_interrupted: bool = Field(
        default=False,
        description="When a team is revived, deliver again the turns the lost worker had "
        "in progress, first, before the messages queued behind them (a turn may repeat its "
        "side effects); else they are listed as interrupted, as after a local crash.",
    )
    start_timeout: float = Field(
        default=120.0,
        gt=0,
        description="Seconds a team's actor gets to start (a process, and its imports).",
    )
    call_timeout: float = Field(
        default=60.0, gt=0, description="Seconds a call to a team's actor may take."
    )
    max_concurrency: int = Field(
        default=16, ge=4, description="Calls a team's actor serves at once (threads)."
    )
    imports: tuple[str, ...] = Field(
        default=(),
        description="Modules every team's actor imports before its team starts, besides its "
        "card's 'imports' (the operator's, as 'akgentic serve --import' names them: a posted "
        "card may use their classes without listing them). As for a card's, only those the "
        "placing process has imported are passed on (it vouches for them); each must be "
        "importable on the workers.",
    )
    runtime_env: dict[str, Any] | None = Field(
        default=None,
        description="Ray runtime_env of the teams' actors (env_vars such as API keys, "
        "py_modules, pip...).",
    )

    @field_validator("resources")
    @classmethod
    def _positive(cls, value: dict[str, float]) -> dict[str, float]:
        for name, amount in value.items():
            if not name or amount <= 0:
                raise ValueError(f"a custom resource needs a name and an amount > 0: {name!r}")
        return value

"""TeamManager: create, find, stop, resume and delete teams.

Creating a team records it, starts its orchestrator with an ``EventRecorder``
subscribed, hires the card's profiles, and creates the human proxy and the members
(parents first; a member's ``members`` are created as its children). Models are built
once before any actor starts, so a missing API key or a broken scenario is an error at
team creation naming what to fix.

Resuming rebuilds the team from its event log (see ``restorer``).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

from pydantic import BaseModel

from akgentic.agent import AgentConfig, HumanProxy, HumanProxyConfig
from akgentic.catalog import (
    CatalogError,
    CatalogService,
    bind_catalog,
    catalog_tools,
    named_services,
)
from akgentic.core import (
    ActorAddress,
    ActorSystem,
    Akgent,
    Orchestrator,
    OrchestratorConfig,
    serialize,
)
from akgentic.core.serialization import SerializationError, deserialize
from akgentic.llm import ModelRoster, build_roster_model
from akgentic.storage import StorageBundle, TeamRecord, TeamStatus
from akgentic.team.card import TeamCard, walk
from akgentic.team.mcp import attach_mcp_servers
from akgentic.team.recorder import EventRecorder
from akgentic.team.runtime import TeamRuntime
from akgentic.team.skills import give_stored_skills, stored_skill_rows

__all__ = ["TeamManager", "TeamNotRunningError"]

logger = logging.getLogger("akgentic.team")


class TeamNotRunningError(LookupError):
    """The team is not running in this process (resume it first)."""


class TeamManager:
    """Teams of one ``ActorSystem`` over one storage bundle."""

    def __init__(
        self,
        actor_system: ActorSystem,
        storage: StorageBundle,
        *,
        watch_interval: float = 1.0,
        catalog: CatalogService | None = None,
    ) -> None:
        self.system = actor_system
        self.storage = storage
        # The tool catalog its agents resolve CatalogTool instances from (akgentic.catalog).
        self.catalog = catalog if catalog is not None else CatalogService(storage)
        bind_catalog(actor_system, self.catalog)
        self._running: dict[UUID, TeamRuntime] = {}
        self._watch_interval = watch_interval
        self._watcher: threading.Thread | None = None
        self._closed = threading.Event()

    def _adopt(self, runtime: TeamRuntime) -> TeamRuntime:
        """Run ``runtime`` here, and watch its stored status (see :meth:`_watch`)."""
        self._running[runtime.team_id] = runtime
        if self._watcher is None or not self._watcher.is_alive():
            self._watcher = threading.Thread(
                target=self._watch, name="akgentic-team-watch", daemon=True
            )
            self._watcher.start()
        return runtime

    def _watch(self) -> None:
        """Stop the teams whose stored status another process set to STOPPED or DELETED.

        The store is what processes share, so ``akgentic teams stop`` in one terminal
        stops a team that ``akgentic run`` runs in another, within ``watch_interval``.
        """
        while not self._closed.wait(self._watch_interval):
            for team_id, runtime in list(self._running.items()):
                if not runtime.orchestrator.is_alive():
                    continue
                try:
                    record = self.storage.teams.get(team_id)
                except Exception:
                    logger.exception("team %s: could not read its status", team_id)
                    continue
                if record is not None and record.status != TeamStatus.RUNNING:
                    logger.info("team %s is %s in storage: stopping it", team_id, record.status)
                    runtime.stop()

    # -- creating ---------------------------------------------------------------------------
    def create_team(
        self,
        card: TeamCard,
        *,
        team_id: UUID | None = None,
        model: str | None = None,
        metadata: BaseModel | None = None,
    ) -> TeamRuntime:
        """Start a new team from ``card``.

        ``model`` (a roster spec) overrides every member's; ``metadata`` is the team's
        business context (``Orchestrator.set_metadata``), set before any member starts so
        MetadataTool renders it into every prompt.
        """
        card = card.model_copy(deep=True)
        if model is not None:
            override_models(card, model)
        attach_mcp_servers(card)
        check_models(card)
        check_catalog_tools(card, self.catalog)
        team_id = team_id or uuid4()
        self.storage.teams.create(card.name, card=serialize(card), team_id=team_id)
        orchestrator, recorder = self._start_orchestrator(card, team_id, None)
        if metadata is not None:
            self.system.proxy_ask(orchestrator, Orchestrator, timeout=30).set_metadata(metadata)
        human = None
        if card.human:
            human = self.system.createActor(
                HumanProxy,
                config=HumanProxyConfig(name=card.human, default_recipient=card.entry_point),
                team_id=team_id,
            )
        created: dict[str, ActorAddress] = {}
        skills = stored_skill_rows(self.storage.skills)
        for name, spec, parent in walk(card.members):
            config = spec.card.get_config_copy()
            config.name = name
            give_stored_skills(config, skills)
            if not config.role:
                config.role = spec.card.role
            actor_class = spec.card.get_agent_class()
            if parent is None:
                created[name] = self.system.createActor(actor_class, config=config, team_id=team_id)
            else:
                creator = self.system.proxy_ask(created[parent], Akgent, timeout=30)
                created[name] = creator.createActor(actor_class, config=config)
        runtime = TeamRuntime(
            team_id, card, self.system, self.storage, orchestrator, recorder, human
        )
        return self._adopt(runtime)

    def _start_orchestrator(
        self, card: TeamCard, team_id: UUID, agent_id: UUID | None
    ) -> tuple[ActorAddress, EventRecorder]:
        orchestrator = self.system.createActor(
            Orchestrator,
            config=OrchestratorConfig(),
            team_id=team_id,
            agent_id=agent_id,
            restoring=agent_id is not None,
        )
        recorder = EventRecorder(self.storage, team_id)
        proxy = self.system.proxy_ask(orchestrator, Orchestrator, timeout=30)
        proxy.subscribe(recorder)
        profiles = [profile.model_copy(deep=True) for profile in card.profiles]
        skills = stored_skill_rows(self.storage.skills)
        for profile in profiles:
            give_stored_skills(profile.config, skills)
        proxy.register_agent_profiles(profiles)
        return orchestrator, recorder

    # -- finding ------------------------------------------------------------------------------
    def get_team(self, team_id: UUID) -> TeamRuntime | None:
        """The team if it runs in this process."""
        runtime = self._running.get(team_id)
        if runtime is not None and not runtime.orchestrator.is_alive():
            del self._running[team_id]
            return None
        return runtime

    def running(self) -> list[TeamRuntime]:
        """The teams running in this process."""
        return [r for r in list(self._running.values()) if self.get_team(r.team_id) is r]

    def list_teams(self, status: TeamStatus | None = None) -> list[TeamRecord]:
        return self.storage.teams.list(status)

    def record(self, team_id: UUID) -> TeamRecord:
        record = self.storage.teams.get(team_id)
        if record is None:
            raise LookupError(f"no team {team_id} in this storage")
        return record

    # -- stopping, resuming, deleting ------------------------------------------------------------
    def stop_team(self, team_id: UUID, grace_timeout: float = 30.0) -> None:
        """Stop a running team gracefully (status STOPPED). A team not running here is
        marked STOPPED, which the process running it (if any) notices and obeys."""
        runtime = self.get_team(team_id)
        if runtime is not None:
            runtime.stop(grace_timeout)
            self._running.pop(team_id, None)
        record = self.record(team_id)
        if record.status in (TeamStatus.RUNNING, None):  # None: unreadable, rewritten here
            self.storage.teams.set_status(team_id, TeamStatus.STOPPED)

    def resume_team(self, team_id: UUID) -> TeamRuntime:
        """Rebuild a stopped (or crashed) team from its event log; see ``restorer``."""
        from akgentic.team.restorer import restore

        if self.get_team(team_id) is not None:
            raise ValueError(f"team {team_id} is already running in this process")
        record = self.record(team_id).require()  # a damaged row: CorruptRecordError
        if record.status == TeamStatus.DELETED:
            raise ValueError(f"team {team_id} was deleted and cannot be resumed")
        try:
            card = deserialize(record.card)
        except SerializationError as exc:
            raise SerializationError(f"team {team_id}: its stored team card: {exc}") from exc
        if not isinstance(card, TeamCard):
            raise ValueError(f"team {team_id} has no readable team card")
        runtime = restore(self, card, team_id)
        self.storage.teams.set_status(team_id, TeamStatus.RUNNING)
        return self._adopt(runtime)

    def delete_team(self, team_id: UUID, *, purge: bool = False) -> None:
        """Stop the team if it runs, then mark it DELETED (``purge`` removes its rows)."""
        if self.get_team(team_id) is not None:
            self.stop_team(team_id)
        self.record(team_id)
        if purge:
            self.storage.teams.purge(team_id)
        else:
            self.storage.teams.delete(team_id)

    def shutdown(self, grace_timeout: float = 30.0) -> None:
        """Stop every team this manager runs, and its status watcher."""
        self._closed.set()
        for team_id in list(self._running):
            self.stop_team(team_id, grace_timeout)


def override_models(card: TeamCard, spec: str) -> None:
    """Give every agent member and profile the roster ``spec`` (``--model``)."""
    roster = ModelRoster.from_spec(spec)
    configs: list[Any] = [s.card.config for _, s, _ in walk(card.members)]
    configs += [p.config for p in card.profiles]
    for config in configs:
        if isinstance(config, AgentConfig):
            config.models = roster.model_copy(deep=True)


def check_models(card: TeamCard) -> None:
    """Build every member's models once: a missing key or scenario fails here, clearly."""
    for name, spec, _ in walk(card.members):
        config = spec.card.config
        if isinstance(config, AgentConfig):
            base = Path(config.scenario_dir) if config.scenario_dir else None
            role = config.role or spec.card.role
            try:
                build_roster_model(config.models, role=role, base_dir=base)
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from exc


def check_catalog_tools(card: TeamCard, catalog: CatalogService) -> None:
    """Resolve every catalog instance the card names — tools, and the services a card's
    vector store names (a cluster, an embeddings endpoint): an unknown, disabled or
    orphaned instance, a missing key or credential fails here, naming the member and what
    to do."""
    configs: list[Any] = [(name, s.card.config) for name, s, _ in walk(card.members)]
    configs += [(p.config.name or p.role, p.config) for p in card.profiles]
    for name, config in configs:
        tools = getattr(config, "tools", ())
        try:
            for tool in catalog_tools(tools):
                catalog.resolve_card(tool.instance)
            for service in named_services(tools):
                catalog.resolve(service, "agents")
        except CatalogError as exc:
            raise ValueError(f"{name}: {exc}") from exc

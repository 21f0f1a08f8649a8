"""TeamTool: hire, fire, roster, role catalog, role profiles, and who is busy right now.

Capabilities, one param each (all on by default):

=================  ====================  ===================================================
field              channels              what it serves
=================  ====================  ===================================================
hire_members       TOOL_CALL, COMMAND    ``hire_members(roles)`` — the only way to hire
fire_member        TOOL_CALL, COMMAND    ``fire_member(name)``
team_roster        LLM_CONTEXT, COMMAND  :class:`TeamRosterState` deltas; ``/team_roster``
role_catalog       LLM_CONTEXT, COMMAND  :class:`RoleCatalogState` deltas; ``/role_catalog``
role_profile       TOOL_CALL, COMMAND    ``role_profile(role)`` — one AgentCard in full
get_team_activity  TOOL_CALL, COMMAND    ``team_activity()`` — who is busy, on what; with an
                                         ``ActivitySummarizer``, ``team_activity(summarize_over)``
=================  ====================  ===================================================

The channel split: acts (hire, fire, a profile lookup, the activity report) are pulled by
the model or pushed by a human, through one builder per capability shared by both hooks;
awareness (who is on the team, which roles exist and which are hireable) is state,
published per turn as deltas — never a re-rendered prefix.

Everything about the team is read from the orchestrator, bound through the observer on
every call (``observer.proxy_ask(observer.orchestrator, Orchestrator)``, with a bounded
timeout); members are created through ``observer.createActor`` and announced with
``on_hire`` / ``on_fire``. Requires a :class:`TeamManagementToolObserver` in a team.

With a summarizer configured, wiring binds the team's ``#TeamActivity`` cache actor
(get-or-create, one step); ``team_activity`` asks it for summaries of long messages and
waits a bounded time, quoting truncated text for whatever is not ready. Without one, no
actor exists and the report is truncation-only.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any, ClassVar, Self, TypeVar, cast
from uuid import UUID

from pydantic import Field, PrivateAttr, field_validator

from akgentic.core.address import ActorAddress, ActorAddressImpl, ActorStartError
from akgentic.core.agent_card import AgentCard
from akgentic.core.excerpt import clip, excerpt
from akgentic.core.orchestrator import Orchestrator, is_tool_actor
from akgentic.tool.core.card import ToolCard
from akgentic.tool.core.channels import COMMAND, LLM_CONTEXT, TOOL_CALL, Channels
from akgentic.tool.core.context_state import ContextState
from akgentic.tool.core.observer import ToolObserver
from akgentic.tool.core.params import (
    BaseToolParam,
    attach_param,
    normalize_system_prompt_to_llm_context,
    resolve_param,
    serve,
)
from akgentic.tool.core.team_actor import bind_team_actor
from akgentic.tool.errors import RetriableError, ToolObserverGone
from akgentic.tool.team.activity import (
    ActivitySummarizer,
    GetTeamActivity,
    TeamActivityActor,
    TeamActivityConfig,
    collect_summaries,
    derive_activity,
    render_activity,
    summary_candidates,
)
from akgentic.tool.team.observer import TeamManagementToolObserver
from akgentic.tool.team.state import RoleCatalogState, RoleRow, TeamMemberRow, TeamRosterState

__all__ = [
    "ASK_TIMEOUT",
    "FireMember",
    "HireMembers",
    "RoleCatalog",
    "RoleProfile",
    "TeamRoster",
    "TeamTool",
]

logger = logging.getLogger(__name__)

ASK_TIMEOUT = 10.0
"""Seconds to wait for the orchestrator; past it a tool fails retriably, a provider skips."""

HIRE_START_TIMEOUT = 45.0
"""Seconds a hire waits for its member's ``on_start``: longer than the member's own wait
for a ``#`` tool actor it wires (``START_TIMEOUT``), so that a slow tool actor is the
cause named, as a team's creation waits for its members."""

T = TypeVar("T")
S = TypeVar("S", bound=ContextState)

_TeamView = tuple[tuple[UUID, int] | None, list[ActorAddress], list[AgentCard]]
"""TeamTool's last answer from the orchestrator: (orchestrator id and team revision when it
was asked, the members, the role catalog)."""


class HireMembers(BaseToolParam):
    """Hiring. ``roles`` restricts what this agent may hire (None: every role in the catalog
    whose agent class is defined in this process); a YAML card listing a role none of its
    profiles has is refused at that role.

    ``max_members`` bounds the team's regular members (the hiring agent among them; tools
    and persons not counted): each member is a thread and a model of its own, and a model
    hiring in a loop would otherwise start them until the machine gave out. A hire past it
    is refused, saying to fire a member first; None removes the bound. A place is taken
    with the member's name, in one step on the orchestrator (``Orchestrator.reserve_name``):
    two agents hiring at the same moment never both take the last place.
    """

    expose: set[Channels] = {TOOL_CALL, COMMAND}
    roles: list[str] | None = None
    max_members: int | None = Field(default=50, ge=1)


class FireMember(BaseToolParam):
    """Firing a regular member by name."""

    expose: set[Channels] = {TOOL_CALL, COMMAND}


class TeamRoster(BaseToolParam):
    """The roster as LLM_CONTEXT state, and ``/team_roster``. A payload persisted with
    ``expose: ["system_prompt", ...]`` (where the roster used to be) reads back on
    LLM_CONTEXT: the card serves no SYSTEM_PROMPT, so it would otherwise vanish silently."""

    expose: set[Channels] = {LLM_CONTEXT, COMMAND}
    _moved = field_validator("expose", mode="before")(normalize_system_prompt_to_llm_context)


class RoleCatalog(BaseToolParam):
    """The role catalog, every role marked hireable or not, as LLM_CONTEXT state (a
    persisted SYSTEM_PROMPT exposure reads back on LLM_CONTEXT, as for ``TeamRoster``)."""

    expose: set[Channels] = {LLM_CONTEXT, COMMAND}
    _moved = field_validator("expose", mode="before")(normalize_system_prompt_to_llm_context)


class RoleProfile(BaseToolParam):
    """One role's profile in full: ``role_profile(role)``."""

    expose: set[Channels] = {TOOL_CALL, COMMAND}


class TeamTool(ToolCard):
    """Team management for agents that extend the team at runtime.

    ``TeamTool()`` serves everything; ``TeamTool(get_team_activity=False)`` is management
    only; ``TeamTool(fire_member=FireMember(expose={COMMAND}))`` leaves firing to humans.
    """

    _CAPABILITIES: ClassVar[tuple[tuple[str, type[BaseToolParam]], ...]] = (
        ("hire_members", HireMembers),
        ("fire_member", FireMember),
        ("team_roster", TeamRoster),
        ("role_catalog", RoleCatalog),
        ("role_profile", RoleProfile),
        ("get_team_activity", GetTeamActivity),
    )

    hire_members: HireMembers | bool = True
    fire_member: FireMember | bool = True
    team_roster: TeamRoster | bool = True
    role_catalog: RoleCatalog | bool = True
    role_profile: RoleProfile | bool = True
    get_team_activity: GetTeamActivity | bool = True

    _activity: ActorAddress | None = PrivateAttr(default=None)
    _view: _TeamView | None = PrivateAttr(default=None)
    _built: dict[tuple[str, UUID], tuple[object, ContextState]] = PrivateAttr(default_factory=dict)

    # -- wiring -----------------------------------------------------------------------
    def observer(self, observer: ToolObserver) -> Self:
        """Attach the agent; with any capability on it must be a TeamManagementToolObserver
        in a team (TypeError / ValueError otherwise). With a summarizer configured, bind the
        team's ``#TeamActivity`` (get-or-create; an unreachable orchestrator fails here)."""
        if any(resolve_param(getattr(self, f), cls) for f, cls in self._CAPABILITIES):
            if not isinstance(observer, TeamManagementToolObserver):
                raise TypeError(
                    f"TeamTool needs an observer satisfying TeamManagementToolObserver "
                    f"(createActor, on_hire, on_fire, team_revision, on an ActorToolObserver); "
                    f"{type(observer).__name__} is not one"
                )
            if observer.orchestrator is None:
                raise ValueError("TeamTool needs an agent in a team: its orchestrator is None")
        super().observer(observer)
        self._activity = self._bind_activity(observer)
        return self

    def _bind_activity(self, observer: ToolObserver) -> ActorAddress | None:
        """The team's ``#TeamActivity``, bound when a served ``team_activity`` has a
        summarizer; None otherwise (no actor is created)."""
        param = resolve_param(self.get_team_activity, GetTeamActivity)
        if param is None or param.summarizer is None or not param.expose & {TOOL_CALL, COMMAND}:
            return None
        config = TeamActivityConfig(summarizer=param.summarizer)
        team = cast(TeamManagementToolObserver, observer)  # checked above: the param is on
        return bind_team_actor(team, TeamActivityActor, config, ASK_TIMEOUT)

    def _team_observer(self) -> TeamManagementToolObserver:
        return cast(TeamManagementToolObserver, self.get_observer())

    def _orchestrator(self, observer: TeamManagementToolObserver | None = None) -> Orchestrator:
        """An ask proxy to the team's orchestrator, bound now through the observer."""
        obs = observer if observer is not None else self._team_observer()
        if obs.orchestrator is None:
            raise RetriableError("You are not in a team: there is no team to manage.")
        proxy = obs.proxy_ask(obs.orchestrator, Orchestrator, timeout=ASK_TIMEOUT)
        return cast(Orchestrator, proxy)

    def _ask(self, call: Callable[[Orchestrator], T]) -> T:
        """``call(orchestrator)``; any failure to reach it becomes a RetriableError."""
        return self._retriable(lambda: call(self._orchestrator()))

    @staticmethod
    def _retriable(call: Callable[[], T]) -> T:
        try:
            return call()
        except (RetriableError, ToolObserverGone):
            raise
        except Exception as exc:
            raise RetriableError(
                f"The team's orchestrator did not answer ({type(exc).__name__}: {clip(str(exc))}). "
                f"Try again in a moment."
            ) from exc

    # -- hooks ------------------------------------------------------------------------
    _TOOL_FIELDS: ClassVar[tuple[str, ...]] = (
        "hire_members",
        "fire_member",
        "role_profile",
        "get_team_activity",
    )
    _COMMAND_FIELDS: ClassVar[tuple[str, ...]] = (*_TOOL_FIELDS, "team_roster", "role_catalog")

    def _build(self, field: str, param: Any, channel: Channels) -> Callable[..., Any]:
        """The one builder of a capability, shared by every hook that serves it
        (``channel``: the one it is built for, for a text that names a call)."""
        builders: dict[str, Callable[[Any], Callable[..., Any]]] = {
            "hire_members": lambda p: self._build_hire(p, channel),
            "fire_member": self._build_fire,
            "role_profile": self._build_role_profile,
            "get_team_activity": self._build_activity,
            "team_roster": self._build_roster_command,
            "role_catalog": self._build_catalog_command,
        }
        return attach_param(builders[field](param), param)

    def _served(
        self, channel: Channels, fields: tuple[str, ...]
    ) -> list[tuple[type[BaseToolParam], Callable[..., Any]]]:
        served: list[tuple[type[BaseToolParam], Callable[..., Any]]] = []
        for field, cls in self._CAPABILITIES:
            if field in fields and (param := serve(getattr(self, field), cls, channel)):
                served.append((cls, self._build(field, param, channel)))
        return served

    def get_tools(self) -> list[Callable[..., Any]]:
        return [fn for _, fn in self._served(TOOL_CALL, self._TOOL_FIELDS)]

    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        return dict(self._served(COMMAND, self._COMMAND_FIELDS))

    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        providers: list[Callable[[], ContextState | None]] = []
        if serve(self.team_roster, TeamRoster, LLM_CONTEXT) is not None:
            providers.append(self._roster_provider())
        if serve(self.role_catalog, RoleCatalog, LLM_CONTEXT) is not None:
            providers.append(self._catalog_provider())
        return providers

    # -- hire / fire ------------------------------------------------------------------
    def _hireable(self, catalog: list[AgentCard]) -> list[str]:
        """The roles this agent may hire: allowed by the param, class defined here."""
        param = resolve_param(self.hire_members, HireMembers)
        if param is None:
            return []
        allowed = None if param.roles is None else set(param.roles)
        hireable: list[str] = []
        for profile in catalog:
            if allowed is not None and profile.role not in allowed:
                continue
            try:
                profile.get_agent_class()
            except LookupError:
                continue
            hireable.append(profile.role)
        return hireable

    def _build_hire(self, param: HireMembers, channel: Channels) -> Callable[[list[str]], str]:
        def hire_members(roles: list[str]) -> str:
            """Hire new team members: one per role listed (repeat a role to hire several).

            Use roles exactly as the role catalog names them; only roles marked hireable can
            be hired. Each new member gets a unique name, reported back — address it by that
            name. The result says who was hired and which roles could not be.
            """
            observer = self._team_observer()
            catalog = self._ask(lambda o: o.get_agent_catalog())
            profiles = {p.role: p for p in catalog}
            hireable = self._hireable(catalog)
            hint = f"Hireable roles: {', '.join(hireable) or 'none'}."
            if not roles:
                raise RetriableError(f"List at least one role to hire. {hint}")
            limit = param.max_members
            hired: list[ActorAddress] = []
            failed: list[str] = []
            full = 0  # roles not hired for want of a place (none asked once the team is full)
            for requested in roles:
                role = requested.strip()
                if role not in hireable:
                    why = "not hireable by you" if role in profiles else "not in the catalog"
                    failed.append(f"{excerpt(requested)} — {why}")
                    continue
                outcome = None if full else self._hire_one(observer, profiles[role], limit)
                if outcome is None:
                    full += 1
                elif isinstance(outcome, str):
                    failed.append(f"{excerpt(requested)} — {outcome}")
                else:
                    hired.append(outcome)
            if full and not hired:
                raise RetriableError(
                    f"The team is full: it has {limit} members, the most hire_members "
                    f"allows. Fire a member you no longer need, then hire again."
                )
            if full:
                failed.append(
                    f"{full} more — the team is full ({limit} members, the most "
                    f"hire_members allows)"
                )
            report = _hire_report(hired, failed, len(roles), hint)
            if not hired:
                again = self.invocation("hire_members", channel)
                raise RetriableError(f"{report} Try {again} again with roles from that list.")
            return report

        return hire_members

    def _hire_one(
        self, observer: TeamManagementToolObserver, profile: AgentCard, limit: int | None
    ) -> ActorAddress | str | None:
        """Create one member from ``profile``; its address once it has run its ``on_start``,
        or why it failed — a member whose ``on_start`` raised (a tool its factory refuses, a
        model that cannot be built) has stopped, and is reported not hired, with its reason,
        never as a hire that is not there; None when the team has ``limit`` regular members.

        The place is taken with the name, in one step on the orchestrator's thread
        (``reserve_name``): two agents hiring at once never both take the last one."""
        config = profile.get_config_copy()
        base = config.name or f"@{profile.role}"
        reserved = self._ask(lambda orchestrator: orchestrator.reserve_name(base, limit))
        if reserved is None:
            return None
        config.name = reserved
        config.role = config.role or profile.role
        name = config.name
        try:
            address = observer.createActor(profile.get_agent_class(), config=config)
        except Exception as exc:
            try:  # never started: its name is free again
                self._ask(lambda orchestrator: orchestrator.release_name(name))
            except RetriableError:
                logger.warning("TeamTool: could not release the name %s", name)
            return f"could not be created ({type(exc).__name__}: {clip(str(exc))})"
        if isinstance(address, ActorAddressImpl):  # a live member: its start can be awaited
            try:
                address.wait_started(HIRE_START_TIMEOUT)
            except ActorStartError as exc:
                if address.is_alive():  # still starting past the bound: not hired after all
                    with contextlib.suppress(Exception):
                        observer.on_fire(address)
                return f"could not start ({clip(exc.reason)})"
        try:
            observer.on_hire(address)
        except Exception as exc:
            try:
                observer.on_fire(address)
            except Exception:
                logger.exception("TeamTool: could not undo the hire of %s", address.name)
            return f"was created but the hire was refused ({type(exc).__name__}: {clip(str(exc))})"
        return address

    def _build_fire(self, param: FireMember) -> Callable[[str], str]:
        def fire_member(name: str) -> str:
            """Remove one member from the team, by name exactly as the roster shows it.

            The member stops at once and leaves the roster; work it had not finished is
            lost, and whoever waits for its answer is told it was fired. You
            cannot fire yourself, the member that hired you (nor whoever hired it), the
            team's entry point (the member the person talks to), a person, or the team's
            tools.
            """
            observer = self._team_observer()
            members = self._ask(lambda o: o.get_team())
            entry = self._ask(lambda o: o.get_entry_point())
            above = _hired_by_chain(observer)
            firable = [
                m
                for m in members
                if _other_member(m, observer) and m not in above and m.name != entry
            ]
            wanted = name.strip()
            target = next((m for m in firable if m.name == wanted), None)
            if target is None:
                listing = ", ".join(m.name for m in firable) or "nobody"
                if wanted == entry and any(m.name == wanted for m in members):
                    raise RetriableError(
                        f"{entry} is the team's entry point, the member the person talks to: "
                        f"firing it would leave the person nobody to answer them, so it cannot "
                        f"be fired. If its work should change, write to {entry} and say so. "
                        f"Members you can fire: {listing}."
                    )
                why = (
                    "cannot be fired"
                    if any(m.name == wanted for m in members)
                    else "is not on the team"
                )
                raise RetriableError(f"{excerpt(name)} {why}. Members you can fire: {listing}.")
            try:
                observer.on_fire(target)
            except Exception as exc:
                raise RetriableError(
                    f"Could not fire {target.name} ({type(exc).__name__}: {clip(str(exc))}); it "
                    f"is still on the team."
                ) from exc
            return f"Fired {target.name} ({target.role}): it is stopping and leaves the roster."

        return fire_member

    # -- roster and catalog -----------------------------------------------------------
    def _team_view(self, observer: TeamManagementToolObserver) -> _TeamView:
        """``(key, the team's members, its role catalog)``, for the roster and catalog
        states.

        Asked of the orchestrator only when the team's revision has moved since the last
        ask (read first: ``Akgent.team_revision``). The context block reads both on every
        turn; while the team stays the same, two round trips to the orchestrator per turn
        would bring back the same answers.
        """
        orchestrator = observer.orchestrator
        key = None if orchestrator is None else (orchestrator.agent_id, observer.team_revision)
        view = self._view
        if key is not None and view is not None and view[0] == key:
            return view
        proxy = self._orchestrator(observer)  # outside a team: the RetriableError
        view = (key, proxy.get_team(), proxy.get_agent_catalog())
        self._view = view
        return view

    def _remembered(
        self,
        kind: str,
        observer: TeamManagementToolObserver,
        build: Callable[[list[ActorAddress], list[AgentCard]], S],
    ) -> S:
        """The state ``build`` makes of the team's view for this agent — the very object
        of last time while the view is the same one, so the context block sees its
        baseline handed back and renders nothing."""
        view = self._team_view(observer)
        key = (kind, observer.myAddress.agent_id)
        found = self._built.get(key)
        if found is not None and found[0] is view:
            return cast(S, found[1])
        state = build(view[1], view[2])
        self._built[key] = (view, state)
        return state

    def _roster(self, observer: TeamManagementToolObserver) -> TeamRosterState:
        me = observer.myAddress

        def build(members: list[ActorAddress], _: list[AgentCard]) -> TeamRosterState:
            rows = [
                TeamMemberRow(name=m.name, role=m.role, human=m.is_user_proxy, you=m == me)
                for m in members
                if not is_tool_actor(m) and m != observer.orchestrator
            ]
            return TeamRosterState(members=rows)

        return self._remembered("roster", observer, build)

    def _catalog(self, observer: TeamManagementToolObserver) -> RoleCatalogState:
        def build(_: list[ActorAddress], catalog: list[AgentCard]) -> RoleCatalogState:
            hireable = set(self._hireable(catalog))
            return RoleCatalogState(
                roles=[
                    RoleRow(role=p.role, description=p.description, hireable=p.role in hireable)
                    for p in catalog
                ]
            )

        return self._remembered("catalog", observer, build)

    def _roster_provider(self) -> Callable[[], ContextState | None]:
        def team_roster() -> TeamRosterState | None:
            observer = self.observer_or_none()
            if observer is None:
                return None
            try:
                return self._roster(cast(TeamManagementToolObserver, observer))
            except Exception:
                logger.warning("team_roster: the roster could not be read", exc_info=True)
                return None

        return team_roster

    def _catalog_provider(self) -> Callable[[], ContextState | None]:
        def role_catalog() -> RoleCatalogState | None:
            observer = self.observer_or_none()
            if observer is None:
                return None
            try:
                return self._catalog(cast(TeamManagementToolObserver, observer))
            except Exception:
                logger.warning("role_catalog: the catalog could not be read", exc_info=True)
                return None

        return role_catalog

    def _build_roster_command(self, param: TeamRoster) -> Callable[[], str]:
        def team_roster() -> str:
            """Show who is on the team."""
            state = self._retriable(lambda: self._roster(self._team_observer()))
            return state.render_full() or "Nobody is on the team."

        return team_roster

    def _build_catalog_command(self, param: RoleCatalog) -> Callable[[], str]:
        def role_catalog() -> str:
            """Show the team's roles, each marked hireable or not."""
            state = self._retriable(lambda: self._catalog(self._team_observer()))
            return state.render_full() or "The team's role catalog is empty."

        return role_catalog

    def _build_role_profile(self, param: RoleProfile) -> Callable[[str], str]:
        def role_profile(role: str) -> str:
            """Describe one role of the team's catalog in full: what it does, its skills,
            whom it routes work to, and whether you can hire it."""
            catalog = self._ask(lambda o: o.get_agent_catalog())
            wanted = role.strip()
            profile = next((p for p in catalog if p.role == wanted), None)
            if profile is None:
                listing = ", ".join(p.role for p in catalog) or "none"
                raise RetriableError(f"No role {excerpt(role)} in the catalog. Roles: {listing}.")
            hireable = profile.role in self._hireable(catalog)
            return "\n".join(
                [
                    f"Role: {profile.role}",
                    f"Description: {profile.description or '(none)'}",
                    f"Skills: {', '.join(profile.skills) or '(none)'}",
                    f"Routes to: {', '.join(profile.routes_to) or '(none)'}",
                    f"Hireable by you: {'yes' if hireable else 'no'}",
                ]
            )

        return role_profile

    # -- activity ---------------------------------------------------------------------
    def _build_activity(self, param: GetTeamActivity) -> Callable[..., str]:
        """``team_activity()``, or ``team_activity(summarize_over)`` with a summarizer: the
        signature offers only what can be produced."""
        if param.summarizer is None:
            return self._build_activity_quoted(param)
        return self._build_activity_summarized(param, param.summarizer)

    def _build_activity_quoted(self, param: GetTeamActivity) -> Callable[[], str]:
        max_chars, window = param.max_chars, param.window

        def team_activity() -> str:
            """Report what each team member is doing right now: busy (it has a message it
            has not answered yet) or idle, what it is working on and what it last said,
            quoted and truncated."""
            return self._activity_report(window, max_chars, None)

        return team_activity

    def _build_activity_summarized(
        self, param: GetTeamActivity, summarizer: ActivitySummarizer
    ) -> Callable[[int], str]:
        max_chars, window = param.max_chars, param.window

        def team_activity(summarize_over: int = max_chars) -> str:
            """Report what each team member is doing right now: busy (it has a message it
            has not answered yet) or idle, what it is working on and what it last said.
            A message longer than summarize_over characters is given as a summary, marked
            "(summary)", when one is ready in time; otherwise it is quoted and truncated.
            Raise summarize_over for quotes only."""
            return self._activity_report(window, max_chars, (summarize_over, summarizer))

        return team_activity

    def _activity_report(
        self, window: int, max_chars: int, summarize: tuple[int, ActivitySummarizer] | None
    ) -> str:
        """The report; ``summarize`` is ``(summarize_over, summarizer)`` or None."""
        observer = self._team_observer()
        members = self._ask(lambda o: o.get_team())
        messages = self._ask(lambda o: o.get_messages(window))
        others = [m for m in members if _other_member(m, observer)]
        summaries: dict[UUID, str] = {}
        if summarize is not None:
            over, summarizer = summarize
            texts = summary_candidates(others, messages, over)
            summaries = self._summaries(observer, texts, summarizer)
        return render_activity(derive_activity(others, messages, max_chars, summaries))

    def _summaries(
        self,
        observer: TeamManagementToolObserver,
        texts: dict[UUID, str],
        summarizer: ActivitySummarizer,
    ) -> dict[UUID, str]:
        """What ``#TeamActivity`` can summarise of ``texts`` within the summarizer's wait;
        never raises (the report degrades to truncated text)."""
        if not texts or self._activity is None:
            return {}
        try:
            proxy = observer.proxy_ask(self._activity, TeamActivityActor, ASK_TIMEOUT)
        except Exception:
            logger.warning("team_activity: #TeamActivity unreachable", exc_info=True)
            return {}
        cache = cast(TeamActivityActor, proxy)
        return collect_summaries(cache, texts, summarizer.poll_attempts())


def _other_member(member: ActorAddress, observer: TeamManagementToolObserver) -> bool:
    """A member the agent works beside: not itself, a tool, a person or the orchestrator."""
    return not (
        is_tool_actor(member)
        or member.is_user_proxy
        or member == observer.myAddress
        or member == observer.orchestrator
    )


def _hired_by_chain(observer: TeamManagementToolObserver) -> set[ActorAddress]:
    """The member that hired the agent, the one that hired that one, and so on up: firing
    any of them stops the agent with the branch (a research team's @Worker firing @Manager
    left nobody to talk to)."""
    system = getattr(observer, "system", None)
    chain: set[ActorAddress] = set()
    parent = getattr(observer, "parent", None)
    while parent is not None and parent not in chain:
        chain.add(parent)
        parent = system.parent_of(parent) if system is not None else None
    return chain


_FAILURES_SHOWN = 10
"""Roles a hire report names as not hired; the rest are counted (a list of a thousand
unknown roles would otherwise come back as a thousand lines for the model to read)."""


def _hire_report(hired: list[ActorAddress], failed: list[str], asked: int, hint: str) -> str:
    parts: list[str] = []
    if hired:
        names = ", ".join(f"{a.name} ({a.role})" for a in hired)
        parts.append(f"Hired {len(hired)} of {asked}: {names}.")
    else:
        parts.append(f"Hired nobody of {asked}.")
    if failed:
        shown = failed[:_FAILURES_SHOWN]
        more = len(failed) - len(shown)
        listing = "; ".join(shown) + (f"; and {more} more" if more else "")
        parts.append(f"Not hired: {listing}. {hint}")
    return " ".join(parts)

"""PlanningTool: the card that gives an agent the team plan.

Four capabilities, each a ``Param | bool`` served through the routing rule (``serve``):

============================  ===========================  ==================================
capability                    channels (default)           callable
============================  ===========================  ==================================
``get_planning``              LLM_CONTEXT, COMMAND         provider ``get_planning``;
                                                           command ``/planning``
``get_planning_task``         TOOL_CALL, COMMAND           ``get_planning_task``;
                                                           command ``/planning_task``
``update_planning``           TOOL_CALL, COMMAND           ``update_planning`` (both)
``search_planning``           TOOL_CALL, COMMAND           ``search_planning`` (both)
============================  ===========================  ==================================

Wiring: :meth:`PlanningTool.observer` binds the team's one ``#PlanningTool`` through
``Orchestrator.getChildrenOrCreate`` — get-or-create in one step on the orchestrator's
thread, never check-then-create — and keeps only its address. Closures capture the
card, never the agent; the observer is read (weakly) on every call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Self, TypeVar, cast

from pydantic import Field, PrivateAttr, TypeAdapter, ValidationError, field_validator

from akgentic.core import ActorAddress
from akgentic.core.excerpt import excerpt, validation_words
from akgentic.core.orchestrator import Orchestrator, is_tool_actor
from akgentic.tool.core import (
    COMMAND,
    LLM_CONTEXT,
    TOOL_CALL,
    ActorToolObserver,
    BaseToolParam,
    Channels,
    ContextState,
    ToolCard,
    ToolObserver,
    normalize_system_prompt_to_llm_context,
    serve,
)
from akgentic.tool.core.arguments import SearchLimit
from akgentic.tool.core.team_actor import (
    ask_tool_actor,
    bind_team_actor,
    require_team_observer,
)
from akgentic.tool.errors import RetriableError, ToolNotWiredError
from akgentic.tool.planning.models import CreateTask, PlanningItem, TaskView, UpdateTask
from akgentic.tool.planning.planning_actor import PLANNING_COLLECTION, PlanActor, PlanConfig
from akgentic.tool.planning.state import PlanningState, TaskRow
from akgentic.tool.vector_store import SemanticIndex, VectorStoreParam

__all__ = [
    "ASK_TIMEOUT",
    "CONTEXT_TIMEOUT",
    "GetPlanning",
    "GetPlanningTask",
    "PlanningTool",
    "SearchPlanning",
    "UpdatePlanning",
]

logger = logging.getLogger("akgentic.tool.planning")

T = TypeVar("T")

ASK_TIMEOUT = 30.0
"""Seconds a tool call or command waits for ``#PlanningTool``. Every call it serves is
in-memory work; hitting this means the actor is wedged, and the model is told so."""

CONTEXT_TIMEOUT = 5.0
"""Seconds the context provider waits; past it the provider returns None (never raises)."""

_ITEMS: TypeAdapter[list[PlanningItem]] = TypeAdapter(list[PlanningItem])


class GetPlanning(BaseToolParam):
    """The plan as LLM_CONTEXT state (and the ``/planning`` command).

    ``filter_by_agent`` — True: the agent sees its own tasks; False: every task.
    """

    expose: set[Channels] = {LLM_CONTEXT, COMMAND}
    filter_by_agent: bool = True
    _moved = field_validator("expose", mode="before")(normalize_system_prompt_to_llm_context)


class GetPlanningTask(BaseToolParam):
    """One task in full: ``get_planning_task`` / ``/planning_task <id>``."""

    expose: set[Channels] = {TOOL_CALL, COMMAND}


class UpdatePlanning(BaseToolParam):
    """Create / update / delete tasks in one call: ``update_planning``."""

    expose: set[Channels] = {TOOL_CALL, COMMAND}


class SearchPlanning(BaseToolParam):
    """Find tasks by words (hybrid with embeddings): ``search_planning``.

    ``limit`` — the default number of results of the callable: 1 to 100, as the
    callable's own ``limit`` is.
    """

    expose: set[Channels] = {TOOL_CALL, COMMAND}
    limit: SearchLimit = 10


class PlanningTool(ToolCard):
    """The team's shared task board, backed by the ``#PlanningTool`` actor."""

    get_planning: GetPlanning | bool = True
    get_planning_task: GetPlanningTask | bool = True
    update_planning: UpdatePlanning | bool = True
    search_planning: SearchPlanning | bool = True
    vector_store: VectorStoreParam = Field(default_factory=VectorStoreParam)

    _plan: ActorAddress | None = PrivateAttr(default=None)
    _index: SemanticIndex | None = PrivateAttr(default=None)

    # -- wiring ----------------------------------------------------------------------
    def observer(self, observer: ToolObserver) -> Self:
        """Attach the agent and bind the team's ``#PlanningTool`` (get-or-create, one step).

        Raises TypeError when the observer is not an ``ActorToolObserver`` and
        ValueError when it belongs to no team — at team creation, not at first use.
        """
        super().observer(observer)
        team = require_team_observer(observer, "PlanningTool", "#PlanningTool")
        # The query side first: it validates the store (a cluster backend without its
        # URL raises here, at team creation, before any actor exists), and it embeds on
        # the agent's thread, so the bounded wait of similar() never holds the shared actor.
        self._index = SemanticIndex.bind(self.vector_store, team, PLANNING_COLLECTION)
        config = PlanConfig(vector_store=self.vector_store)
        self._plan = bind_team_actor(team, PlanActor, config, ASK_TIMEOUT)
        return self

    def _actor_observer(self) -> ActorToolObserver:
        return cast(ActorToolObserver, self.get_observer())

    def _ask(self, what: str, call: Callable[[PlanActor], T]) -> T:
        """Run ``call`` on an ask proxy of the actor; every failure becomes RetriableError."""
        observer = self._actor_observer()
        if self._plan is None:
            raise ToolNotWiredError("PlanningTool is not wired: build it through ToolFactory")
        return ask_tool_actor(
            observer,
            self._plan,
            PlanActor,
            call,
            what=what,
            label="The team plan (#PlanningTool)",
            timeout=ASK_TIMEOUT,
        )

    def _view(self, mine_only: bool) -> PlanningState:
        scope = self._actor_observer().myAddress.name if mine_only else ""
        tasks = self._ask("planning", lambda plan: plan.list_tasks(scope or None))
        return PlanningState(scope=scope, rows=tuple(TaskRow.of(t) for t in tasks))

    # -- LLM_CONTEXT -----------------------------------------------------------------
    def get_context_states(self) -> list[Callable[[], ContextState | None]]:
        param = serve(self.get_planning, GetPlanning, LLM_CONTEXT)
        if param is None:
            return []
        card, mine_only = self, param.filter_by_agent

        def get_planning() -> PlanningState | None:
            """The plan in this agent's view; None when unavailable. Never raises."""
            observer = card.observer_or_none()
            address = card._plan
            if observer is None or address is None:
                return None
            try:
                actor = cast(ActorToolObserver, observer)
                scope = actor.myAddress.name if mine_only else ""
                plan = actor.proxy_ask(address, PlanActor, CONTEXT_TIMEOUT)
                tasks = plan.list_tasks(scope or None)
                return PlanningState(scope=scope, rows=tuple(TaskRow.of(t) for t in tasks))
            except Exception as exc:
                logger.warning("planning context unavailable: %r", exc)
                return None

        return [get_planning]

    # -- TOOL_CALL -------------------------------------------------------------------
    def get_tools(self) -> list[Callable[..., Any]]:
        tools: list[Callable[..., Any]] = []
        if serve(self.get_planning_task, GetPlanningTask, TOOL_CALL) is not None:
            tools.append(self._task_fn("get_planning_task", TOOL_CALL))
        if serve(self.update_planning, UpdatePlanning, TOOL_CALL) is not None:
            tools.append(self._update_fn(TOOL_CALL))
        if (search := serve(self.search_planning, SearchPlanning, TOOL_CALL)) is not None:
            tools.append(self._search_fn(search.limit, TOOL_CALL))
        return tools

    # -- COMMAND ---------------------------------------------------------------------
    def get_commands(self) -> dict[type[BaseToolParam], Callable[..., Any]]:
        commands: dict[type[BaseToolParam], Callable[..., Any]] = {}
        if (view := serve(self.get_planning, GetPlanning, COMMAND)) is not None:
            commands[GetPlanning] = self._planning_fn(view.filter_by_agent)
        if serve(self.get_planning_task, GetPlanningTask, COMMAND) is not None:
            commands[GetPlanningTask] = self._task_fn("planning_task", COMMAND)
        if serve(self.update_planning, UpdatePlanning, COMMAND) is not None:
            commands[UpdatePlanning] = self._update_fn(COMMAND)
        if (search := serve(self.search_planning, SearchPlanning, COMMAND)) is not None:
            commands[SearchPlanning] = self._search_fn(search.limit, COMMAND)
        return commands

    # -- the callables (one builder each: tool and command forms behave identically; the
    # channel a builder takes is its reader's, for the words naming a call: ``/x`` or x) -
    def _planning_fn(self, filter_by_agent: bool) -> Callable[..., str]:
        card = self

        def planning(mine_only: bool = filter_by_agent) -> str:
            """Show the team plan: your own tasks (mine_only=true) or every task."""
            state = card._view(mine_only)
            if state.render_full():
                return state.render_full()
            return "You own no task on the team plan." if mine_only else "The plan has no tasks."

        return planning

    def _task_fn(self, name: str, channel: Channels) -> Callable[..., str]:
        card, called = self, self.invocation(name, channel)
        search = self.invocation("search_planning", channel)

        def get_planning_task(task_id: int) -> str:
            """Show one task of the team plan in full.

            Its description, owner, status and output, the tasks it waits on and the
            tasks waiting on it.
            """
            view = card._ask(called, lambda plan: plan.get_task(task_id))
            if view is None:
                raise RetriableError(
                    f"There is no task #{task_id}. Your context lists the plan's ids; "
                    f"{search} finds tasks by words."
                )
            return render_task_view(view)

        get_planning_task.__name__ = get_planning_task.__qualname__ = name
        return get_planning_task

    def _update_fn(self, channel: Channels) -> Callable[..., str]:
        card, called = self, self.invocation("update_planning", channel)

        def update_planning(items: list[PlanningItem]) -> str:
            """Create, update and delete tasks of the team plan, in one call.

            Each item has an ``op``: ``create`` (title, description, owner — a team
            member; omitted means you —, status, dependencies), ``update`` (task_id and
            only the fields to change; ``output`` records the result) or ``delete``
            (task_id).
            Statuses: todo, in_progress, done, blocked. Dependencies are ids of existing
            tasks and may not form a cycle. Items apply in order; those that fail are
            reported while the others stay applied.
            """
            try:
                parsed = _ITEMS.validate_python(items)
            except ValidationError as exc:
                problems = validation_words(exc)
                raise RetriableError(
                    f"{called}: invalid items ({problems}). Each item needs op = "
                    f"create | update | delete and that op's fields."
                ) from None
            caller = card._actor_observer().myAddress.name
            named = any(isinstance(item, CreateTask | UpdateTask) and item.owner for item in parsed)
            members = card._member_names(called) if named else None
            return card._ask(
                called, lambda plan: plan.update_planning(parsed, caller, members, called)
            )

        return update_planning

    def _member_names(self, what: str) -> list[str]:
        """The names a task may be owned by: the team's members now (people included;
        not its tool actors or its orchestrator), asked of the orchestrator for ``what``
        (the call that needs them, as its reader makes it)."""
        observer = self._actor_observer()
        orchestrator = observer.orchestrator
        if orchestrator is None:  # wiring refused an observer in no team
            raise ToolNotWiredError("PlanningTool is not wired: build it through ToolFactory")
        team = ask_tool_actor(
            observer,
            orchestrator,
            Orchestrator,
            lambda o: o.get_team(),
            what=what,
            label="The team's orchestrator",
            timeout=ASK_TIMEOUT,
        )
        return [a.name for a in team if not is_tool_actor(a) and a != orchestrator]

    def _search_fn(self, default_limit: int, channel: Channels) -> Callable[..., str]:
        card, called = self, self.invocation("search_planning", channel)

        def search_planning(query: str, limit: SearchLimit = default_limit) -> str:
            """Find tasks of the team plan by words (and by meaning when embeddings are on)."""
            if not query.strip():
                raise RetriableError(f"{called} needs a query: words the task is about.")
            index = card._index
            semantic: dict[str, float] = {}
            if index is not None and index.available:
                semantic = index.similar(query, max(3 * limit, 20))
            alpha = card.vector_store.hybrid_alpha
            hits = card._ask(called, lambda plan: plan.search(query, limit, semantic, alpha))
            if not hits:
                return f"No task matches {excerpt(query)}."
            return "\n".join(f"- {TaskRow.of(h.task).render()} ({h.score:.2f})" for h in hits)

        return search_planning


def render_task_view(view: TaskView) -> str:
    """One task in full, as the model and a person read it."""
    task = view.task
    lines = [
        f"#{task.id} {task.title} [{task.status.value}]",
        f"owner: {task.owner or 'unassigned'} · created by {task.created_by or 'unknown'}",
    ]
    if view.dependencies:
        deps = ", ".join(f"#{t.id} [{t.status.value}]" for t in view.dependencies)
        lines.append(f"waits on: {deps}")
    if view.dependents:
        lines.append("waited on by: " + ", ".join(f"#{t.id}" for t in view.dependents))
    if task.description:
        lines.append(f"description: {task.description}")
    if task.output:
        lines.append(f"output: {task.output}")
    return "\n".join(lines)

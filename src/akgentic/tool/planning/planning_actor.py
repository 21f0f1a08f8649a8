"""``#PlanningTool``: the team's one plan, held by one actor.

Ten agents carrying ``PlanningTool`` get ten proxies to this one actor, bound with
``Orchestrator.getChildrenOrCreate`` — never check-then-create. The mailbox serialises
every call, so the read-modify-write below needs no lock.

The emit-before-return contract: :meth:`PlanActor.update_planning` applies what it can,
records the delta (a ``ToolStateEvent`` through its ``StateJournal``, which also
publishes a snapshot of the plan when one is due) — and only then returns, or raises
``RetriableError`` listing what failed. An empty delta emits nothing and does not
advance ``seq``, so the stream is gap-free. What an update writes is its delta: O(change),
however large the plan.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from akgentic.core import Akgent, BaseConfig
from akgentic.core.excerpt import clip
from akgentic.core.words import counted
from akgentic.tool.core.journal import StateJournal
from akgentic.tool.errors import RetriableError
from akgentic.tool.planning.event import PlanningStateEvent
from akgentic.tool.planning.models import (
    CreateTask,
    DeleteTask,
    Plan,
    Task,
    TaskHit,
    TaskView,
    UpdateTask,
    same_agent,
)
from akgentic.tool.vector_store import SemanticIndex, VectorStoreParam, hybrid_rank, keyword_scores

__all__ = [
    "PLANNING_ACTOR_NAME",
    "PLANNING_COLLECTION",
    "CreateTask",
    "DeleteTask",
    "Plan",
    "PlanActor",
    "PlanConfig",
    "Task",
    "TaskHit",
    "TaskView",
    "UpdateTask",
    "task_text",
]

logger = logging.getLogger("akgentic.tool.planning")

PLANNING_ACTOR_NAME = "#PlanningTool"
"""The actor's name: ``#``-prefixed (a tool actor, stopped after the regular members)."""

PLANNING_COLLECTION = "planning"
"""The vector-store collection tasks are embedded in (``vector_store.collection`` overrides)."""


class PlanConfig(BaseConfig):
    """The ``#PlanningTool`` actor's configuration (the first card to bind it decides).

    ``vector_store`` — where tasks are embedded; the card passes its own.
    """

    name: str = PLANNING_ACTOR_NAME
    role: str = "PlanningTool"
    vector_store: VectorStoreParam = Field(default_factory=VectorStoreParam)


def task_text(task: Task) -> str:
    """The text a task is searched by (keyword and semantic alike)."""
    return "\n".join(part for part in (task.title, task.description, task.output) if part)


def _indexed(task: Task) -> tuple[str, dict[str, Any]]:
    """A task's row in the semantic index: its text and metadata."""
    return task_text(task), {"owner": task.owner, "status": task.status.value}


class _Refused(Exception):  # noqa: N818 — internal: one item refused, with the reason
    """One edit cannot be applied; the message says why and what to do."""


_REASON_CHARS = 400
"""The longest reason quoted for one refused item: room for the ids it names and the
advice after them (at 80 characters, a cycle's or an unknown dependency's advice was cut
off), while a reason naming thousands of ids stays bounded."""


class PlanActor(Akgent[PlanConfig, Plan]):
    """Holds the plan. Every public method runs on the actor's own thread, one at a time."""

    def on_start(self) -> None:
        self._journal = StateJournal(self)
        # Indexing side only: upsert/delete are fire-and-forget (a worker embeds), so
        # the plan never waits on an embedder. Queries embed on the caller's thread.
        # The rows persist with the store (#VectorStore state, or the cluster): a
        # restored plan embeds only the tasks the store lacks (a write whose embedding a
        # stop or a crash dropped) and drops the rows of tasks gone meanwhile.
        self._index: SemanticIndex | None = None
        try:
            self._index = SemanticIndex.bind(self.config.vector_store, self, PLANNING_COLLECTION)
        except Exception:  # the shared actor degrades to keyword-only, it never dies of it
            logger.exception("%s: no semantic index; keyword search only", self.myAddress.name)
        if self._index is not None and (self.restoring or self.state.tasks):
            self._index.reconcile({str(t.id): _indexed(t) for t in self.state.tasks.values()})

    # -- queries ---------------------------------------------------------------------
    def get_task(self, task_id: int) -> TaskView | None:
        """The task with the tasks it waits on and the tasks waiting on it; None if unknown."""
        tasks = self.state.tasks
        task = tasks.get(task_id)
        if task is None:
            return None
        return TaskView(
            task=task,
            dependencies=[tasks[d] for d in task.dependencies if d in tasks],
            dependents=[t for t in tasks.values() if task_id in t.dependencies],
        )

    def list_tasks(self, owner: str | None = None) -> list[Task]:
        """Every task in id order, or only those owned by ``owner``."""
        tasks = sorted(self.state.tasks.values(), key=lambda t: t.id)
        if owner is None:
            return tasks
        return [t for t in tasks if same_agent(t.owner, owner)]

    def search(
        self,
        query: str,
        limit: int = 10,
        semantic: dict[str, float] | None = None,
        alpha: float = 0.7,
    ) -> list[TaskHit]:
        """The best ``limit`` tasks for ``query``, best first.

        Keyword (BM25 over title, description and output) alone, or fused with
        ``semantic`` (task id as text -> cosine) by ``hybrid_rank`` with ``alpha`` when
        cosines are given. Never waits on an embedder: the cosines come from the caller.
        """
        if limit < 1:
            return []
        tasks = self.state.tasks
        keyword = keyword_scores(query, {str(i): task_text(t) for i, t in tasks.items()})
        cosines = {
            ref: v for ref, v in (semantic or {}).items() if ref.isdigit() and int(ref) in tasks
        }
        if cosines:
            # a fused 0 with no keyword match is the bottom of the cosine set: no signal
            fused = hybrid_rank(keyword, cosines, alpha, len(tasks))
            ranked = [(ref, v) for ref, v in fused if v > 0 or ref in keyword][:limit]
        else:
            top = max(keyword.values(), default=1.0) or 1.0
            ranked = sorted(
                ((r, v / top) for r, v in keyword.items()), key=lambda kv: (-kv[1], int(kv[0]))
            )[:limit]
        return [TaskHit(task=tasks[int(ref)], score=score) for ref, score in ranked]

    # -- the mutation ----------------------------------------------------------------
    def update_planning(
        self,
        items: Sequence[CreateTask | UpdateTask | DeleteTask],
        caller: str,
        members: Sequence[str] | None = None,
        called: str = "update_planning",
    ) -> str:
        """Apply ``items`` in order, as ``caller``; return what was done.

        ``members`` are the names an owner an item names may take (the card asks the
        team's orchestrator); an item naming anyone else is refused. None: not checked.
        ``called`` is the call as the caller makes it (``docs_update_planning`` in a
        toolset, ``/update_planning`` for a person), for the words of a partial failure.
        An update repeating the owner its task already has is not checked: that owner may
        have left since, and the item changes only the status or output of their task.
        Applies every item it can. Before returning — or raising ``RetriableError``
        naming each refused item — it publishes the state and emits the delta.
        """
        created: dict[int, Task] = {}
        updated: dict[int, Task] = {}
        deleted: list[int] = []
        done: list[str] = []
        errors: list[str] = []
        for number, item in enumerate(items, 1):
            try:
                owner = self._new_owner(item)
                if owner and members is not None:
                    _on_the_team(owner, members)
                if isinstance(item, CreateTask):
                    task = self._create(item, caller)
                    created[task.id] = task
                    done.append(f"created #{task.id} '{task.title}' ({task.owner or 'unassigned'})")
                elif isinstance(item, UpdateTask):
                    changed = self._update(item)
                    if changed is None:
                        done.append(f"#{item.task_id} unchanged")
                    else:
                        (created if changed.id in created else updated)[changed.id] = changed
                        done.append(f"updated #{changed.id}")
                else:
                    self._delete(item)
                    updated.pop(item.task_id, None)
                    deleted.append(item.task_id)
                    done.append(f"deleted #{item.task_id}")
            except _Refused as exc:
                errors.append(f"item {number} ({_label(item)}): {clip(str(exc), _REASON_CHARS)}")
        delta = PlanningStateEvent(
            tasks_created=list(created.values()),
            tasks_updated=list(updated.values()),
            tasks_deleted=deleted,
        )
        self._publish(delta)
        self._reindex(delta)
        summary = "; ".join(done) if done else "nothing applied"
        if errors:
            raise RetriableError(
                f"{called} applied {len(items) - len(errors)} of "
                f"{counted(len(items), 'item')} ({summary}). Failed: "
                + "; ".join(errors)
                + ". Fix the failed items and send only those again."
            )
        return f"Done: {summary}."

    def _new_owner(self, item: CreateTask | UpdateTask | DeleteTask) -> str | None:
        """The owner ``item`` names when its task does not have it yet, else None ("" too)."""
        if isinstance(item, DeleteTask) or not item.owner:
            return None
        task = self.state.tasks.get(item.task_id) if isinstance(item, UpdateTask) else None
        return None if task and same_agent(task.owner, item.owner) else item.owner

    def _publish(self, delta: PlanningStateEvent) -> None:
        """Record the delta (and a snapshot when due) before the caller hears back."""
        self._journal.record(delta, empty=delta.is_empty())

    def on_stop(self) -> None:
        self._journal.close()

    def _reindex(self, delta: PlanningStateEvent) -> None:
        """Keep the semantic index in step with the delta (never blocks, never raises)."""
        if self._index is None:
            return
        for task in [*delta.tasks_created, *delta.tasks_updated]:
            if task.id not in delta.tasks_deleted:
                self._index.upsert(str(task.id), *_indexed(task))
        for task_id in delta.tasks_deleted:
            self._index.delete(str(task_id))

    def _create(self, item: CreateTask, caller: str) -> Task:
        dependencies = self._known(item.dependencies)
        plan = self.state
        task = Task(
            id=plan.next_id,
            title=item.title,
            description=item.description,
            owner=caller if item.owner is None else item.owner,
            status=item.status,
            dependencies=dependencies,
            created_by=caller,
        )
        plan.tasks[task.id] = task
        plan.next_id += 1
        return task

    def _update(self, item: UpdateTask) -> Task | None:
        """The new row, or None when the item changes nothing."""
        tasks = self.state.tasks
        task = tasks.get(item.task_id)
        if task is None:
            raise _Refused(f"there is no task #{item.task_id}")
        changes = item.model_dump(exclude={"op", "task_id"}, exclude_none=True)
        if item.owner and self._new_owner(item) is None:  # the same owner, spelled any way
            changes.pop("owner", None)
        if item.dependencies is not None:
            changes["dependencies"] = self._known(item.dependencies)
            cycle = self._cycle(task.id, changes["dependencies"])
            if cycle:
                raise _Refused(
                    "those dependencies would make a cycle ("
                    + " -> ".join(f"#{i}" for i in cycle)
                    + "): a task cannot wait on itself, directly or through others"
                )
        new = task.model_copy(update=changes)
        if new == task:
            return None
        tasks[task.id] = new
        return new

    def _delete(self, item: DeleteTask) -> None:
        tasks = self.state.tasks
        if item.task_id not in tasks:
            raise _Refused(f"there is no task #{item.task_id}")
        waiting = [f"#{t.id}" for t in tasks.values() if item.task_id in t.dependencies]
        if waiting:
            raise _Refused(
                f"{', '.join(waiting)} depend on #{item.task_id}: remove it from their "
                f"dependencies (or delete them) first"
            )
        del tasks[item.task_id]

    def _known(self, dependencies: list[int]) -> tuple[int, ...]:
        """The dependencies, de-duplicated in order; refused if one names no task."""
        unknown = [d for d in dependencies if d not in self.state.tasks]
        if unknown:
            raise _Refused(
                "unknown dependencies " + ", ".join(f"#{d}" for d in unknown) + ": depend "
                "only on existing tasks (create them first, then update the dependencies)"
            )
        return tuple(dict.fromkeys(dependencies))

    def _cycle(self, task_id: int, dependencies: tuple[int, ...]) -> list[int]:
        """A path task_id -> … -> task_id through ``dependencies``, or [] if none.

        The plan is kept acyclic, so a new cycle must pass through ``task_id``.
        """
        tasks = self.state.tasks
        stack: list[tuple[int, list[int]]] = [(d, [task_id, d]) for d in dependencies]
        seen: set[int] = set()
        while stack:
            current, path = stack.pop()
            if current == task_id:
                return path
            if current in seen:
                continue
            seen.add(current)
            for nxt in tasks[current].dependencies:
                stack.append((nxt, [*path, nxt]))
        return []


def _on_the_team(owner: str, members: Sequence[str]) -> None:
    """Refuse an owner who is none of ``members`` (matched as the plan matches owners)."""
    if not any(same_agent(owner, member) for member in members):
        raise _Refused(
            f"owner {clip(owner, 80)!r} is not on the team: name one of "
            f'{", ".join(members) or "no one"}, or "" to leave the task unassigned'
        )


def _label(item: CreateTask | UpdateTask | DeleteTask) -> str:
    if isinstance(item, CreateTask):
        return f"create '{item.title}'"
    return f"{item.op} #{item.task_id}"

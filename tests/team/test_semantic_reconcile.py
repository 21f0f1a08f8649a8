"""A resumed plan or graph indexes what its vector store lacks, and only that.

A write made while the embedding model loads waits for the load without a worker; a
team stopped meanwhile drops it (so does a crash between a write and its embedding).
The row is in the restored state but not in the store, so the consumer (``#PlanningTool``,
``#KnowledgeGraphTool``) reconciles on start: it lists the ref ids the store holds, embeds
the missing rows, deletes the rows held for nothing — and embeds nothing else. A
workspace's start pass does the same over its tree's chunks (a chunk's id carries its
text's digest): an unchanged tree embeds nothing, a changed file only its changed chunks.

Real teams, stopped and resumed from a real (SQLite) store; the in-memory vector store
is restored with the team. The embedders are fakes: one whose load is held on an Event
for the first team's whole life, a ready one (counting what it embeds) for the resume —
as a new process would have.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from akgentic.core import ActorAddress, ActorSystem, Orchestrator
from akgentic.storage import open_storage, sqlite_url
from akgentic.team import TeamCard, TeamManager, TeamRuntime
from akgentic.tool.knowledge_graph import (
    KG_ACTOR_NAME,
    KnowledgeGraphActor,
    KnowledgeGraphConfig,
)
from akgentic.tool.knowledge_graph.kg_actor import KG_COLLECTION
from akgentic.tool.knowledge_graph.models import (
    Entity,
    EntityUpdate,
    GraphQuery,
    GraphUpdate,
    SearchMode,
)
from akgentic.tool.planning import (
    PLANNING_ACTOR_NAME,
    CreateTask,
    DeleteTask,
    PlanActor,
    PlanConfig,
    UpdateTask,
)
from akgentic.tool.planning.planning_actor import PLANNING_COLLECTION
from akgentic.tool.vector_store import STORE_ACTOR_NAME, SemanticIndex, VectorEntry
from akgentic.tool.vector_store import semantic as semantic_module
from akgentic.tool.vector_store.actor import VectorStoreActor
from akgentic.tool.workspace import WORKSPACE_COLLECTION, WorkspaceTool
from akgentic.tool.workspace import readers as readers_module
from akgentic.tool.workspace.actor import WorkspaceActor
from akgentic.tool.workspace.actor.indexer import IndexWorker
from akgentic.tool.workspace.journal import Identity
from akgentic.tool.workspace.models import WriteFile, content_sha
from akgentic.tool.workspace.search import DocumentIndex, chunk_ref, chunk_text
from akgentic.tool.workspace.workspace import Filesystem, WorkspacePath
from tests.core.conftest import eventually
from tests.tool.members import ConceptEmbedder, LoadingEmbedder
from tests.tool.workspace.conftest import workspaces_root  # noqa: F401  (autouse: the trees' root)
from tests.tool.workspace.test_search import docx_bytes

from .crash_cards import crash_card

CONCEPTS = {"greeting": ("hello", "hi", "greet"), "money": ("budget", "cost", "spend")}


class CountingEmbedder(ConceptEmbedder):
    """A ready :class:`ConceptEmbedder` that records every text it embeds."""

    def __init__(self) -> None:
        super().__init__(CONCEPTS)
        self.embedded: list[str] = []
        self._record = threading.Lock()

    def embed(self, texts: Sequence[str], timeout: float | None = None) -> list[list[float]]:
        with self._record:
            self.embedded.extend(texts)
        return super().embed(texts, timeout)


class Embedders:
    """What ``get_embedding_service`` answers: the embedder last installed."""

    def __init__(self) -> None:
        self.current: Any = None
        self.loading = LoadingEmbedder(CONCEPTS)

    def use(self, embedder: Any) -> Any:
        self.current = embedder
        return embedder


@pytest.fixture
def embedders(monkeypatch: pytest.MonkeyPatch) -> Iterator[Embedders]:
    found = Embedders()
    monkeypatch.setattr(semantic_module, "get_embedding_service", lambda config=None: found.current)
    yield found
    found.loading.gate.set()  # only now, the system shut down: the held load ends


@pytest.fixture
def system(embedders: Embedders) -> Iterator[ActorSystem]:
    """Shut down before ``embedders`` lets the held load end (and drop its jobs)."""
    actor_system = ActorSystem()
    yield actor_system
    actor_system.shutdown(timeout=10)


@pytest.fixture
def manager(system: ActorSystem, tmp_path: Path) -> TeamManager:
    return TeamManager(system, open_storage(sqlite_url(tmp_path / "team.db")))


def tool_actor(runtime: TeamRuntime, actor_class: type, config: Any) -> ActorAddress:
    orchestrator = runtime.system.proxy_ask(runtime.orchestrator, Orchestrator, timeout=30)
    address: ActorAddress = orchestrator.getChildrenOrCreate(actor_class, config)
    return address


def held(
    runtime: TeamRuntime, collection: str, *, team: str | None = None, tenant: str = ""
) -> set[str]:
    """The ref ids the team's #VectorStore holds in ``collection`` (for the team's rows,
    unless ``team`` says otherwise, and ``tenant``)."""
    address = runtime.member(STORE_ACTOR_NAME)
    if address is None:
        return set()
    store: Any = runtime.system.proxy_ask(address, VectorStoreActor, timeout=30)
    scope = str(runtime.team_id) if team is None else team
    ids: set[str] = store.ref_ids(collection, scope, tenant)
    return ids


def similar(runtime: TeamRuntime, consumer: str, collection: str, query: str) -> dict[str, float]:
    """``query``'s nearest rows, through a SemanticIndex as a card binds one."""
    address = runtime.member(consumer)
    assert address is not None
    index = SemanticIndex.bind(None, runtime.system.get_actor(address), collection)
    return index.similar(query, 5)


def stop_while_loading(
    manager: TeamManager, runtime: TeamRuntime, embedders: Embedders, collection: str
) -> None:
    """Stop the team with the model load still held: the writes' embeddings are dropped."""
    assert held(runtime, collection) == set()  # nothing indexed yet
    manager.stop_team(runtime.team_id)
    assert not embedders.loading.ready


# -- the plan ----------------------------------------------------------------------------------


def test_a_plan_written_while_the_model_loaded_is_indexed_on_resume(
    manager: TeamManager, system: ActorSystem, embedders: Embedders
) -> None:
    embedders.use(embedders.loading)
    runtime = manager.create_team(crash_card())
    plan: Any = system.proxy_ask(
        tool_actor(runtime, PlanActor, PlanConfig()), PlanActor, timeout=30
    )
    assert embedders.loading.loading.wait(30)  # bind started the load, and it is held
    plan.update_planning(
        [
            CreateTask(title="Say hello to the new client"),
            CreateTask(title="Review the budget"),
            CreateTask(title="Greet the visitors"),
        ],
        "@Boss",
    )
    plan.update_planning([DeleteTask(task_id=3)], "@Boss")  # deleted, never indexed
    stop_while_loading(manager, runtime, embedders, PLANNING_COLLECTION)

    ready = embedders.use(CountingEmbedder())
    resumed = manager.resume_team(runtime.team_id)
    eventually(lambda: held(resumed, PLANNING_COLLECTION) == {"1", "2"})

    assert sorted(ready.embedded) == ["Review the budget", "Say hello to the new client"]
    semantic = similar(resumed, PLANNING_ACTOR_NAME, PLANNING_COLLECTION, "hi")
    assert next(iter(semantic)) == "1"  # by meaning: no word in common
    address = resumed.member(PLANNING_ACTOR_NAME)
    assert address is not None
    plan = system.proxy_ask(address, PlanActor, timeout=30)
    assert [hit.task.id for hit in plan.search("hi", 1, semantic)] == [1]


def test_a_resumed_plan_with_nothing_missing_embeds_nothing_and_drops_a_stale_row(
    manager: TeamManager, system: ActorSystem, embedders: Embedders
) -> None:
    """A row held for no task (its delete was lost) is removed; no task is embedded again
    — the stale row's removal shows the reconcile ran before the count is read."""
    first = embedders.use(CountingEmbedder())
    runtime = manager.create_team(crash_card())
    plan: Any = system.proxy_ask(
        tool_actor(runtime, PlanActor, PlanConfig()), PlanActor, timeout=30
    )
    plan.update_planning([CreateTask(title="Say hello"), CreateTask(title="Cut costs")], "@Boss")
    eventually(lambda: held(runtime, PLANNING_COLLECTION) == {"1", "2"})
    assert len(first.embedded) == 2
    store_address = runtime.member(STORE_ACTOR_NAME)
    assert store_address is not None
    store: Any = system.proxy_ask(store_address, VectorStoreActor, timeout=30)
    stale = VectorEntry(ref_id="9", text="a task deleted since", vector=[0.05, 1.0, 0.0])
    store.upsert(PLANNING_COLLECTION, str(runtime.team_id), [stale], "")
    manager.stop_team(runtime.team_id)

    again = embedders.use(CountingEmbedder())
    resumed = manager.resume_team(runtime.team_id)
    eventually(lambda: held(resumed, PLANNING_COLLECTION) == {"1", "2"})

    assert again.embedded == []


# -- the knowledge graph -----------------------------------------------------------------------


def test_a_graph_written_while_the_model_loaded_is_indexed_on_resume(
    manager: TeamManager, system: ActorSystem, embedders: Embedders
) -> None:
    embedders.use(embedders.loading)
    runtime = manager.create_team(crash_card())
    address = tool_actor(runtime, KnowledgeGraphActor, KnowledgeGraphConfig())
    graph: Any = system.proxy_ask(address, KnowledgeGraphActor, timeout=30)
    assert embedders.loading.loading.wait(30)
    graph.update_graph(
        GraphUpdate(
            entities_to_create=[
                Entity(name="Welcome", entity_type="ritual", description="say hello"),
                Entity(name="Ledger", entity_type="file", description="the budget"),
                Entity(name="Gone", entity_type="file", description="greet"),
            ]
        )
    )
    graph.update_graph(GraphUpdate(entities_to_delete=["Gone"]))  # deleted, never indexed
    stop_while_loading(manager, runtime, embedders, KG_COLLECTION)

    ready = embedders.use(CountingEmbedder())
    resumed = manager.resume_team(runtime.team_id)
    eventually(lambda: held(resumed, KG_COLLECTION) == {"Welcome", "Ledger"})

    assert len(ready.embedded) == 2
    semantic = similar(resumed, KG_ACTOR_NAME, KG_COLLECTION, "hi")
    assert next(iter(semantic)) == "Welcome"
    graph_address = resumed.member(KG_ACTOR_NAME)
    assert graph_address is not None
    graph = system.proxy_ask(graph_address, KnowledgeGraphActor, timeout=30)
    view = graph.search(GraphQuery(query="hi", mode=SearchMode.SEMANTIC), semantic)
    assert view.entities[0].name == "Welcome"


# -- the restore of the tool actors ------------------------------------------------------------


def test_a_consumer_restored_before_its_store_binds_the_restored_store(
    manager: TeamManager,
    system: ActorSystem,
    embedders: Embedders,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``#PlanningTool``'s ``on_start`` binds ``#VectorStore`` (``getChildrenOrCreate``).
    Restored one message at a time, ``#PlanningTool`` could start before ``#VectorStore``
    was restored: its bind created a fresh, empty one, the restore then a second, and the
    plan wrote to the first while the team's rows lived in the second. Here the restorer
    is held after a restored consumer has started, for as long as that start takes."""
    from akgentic.team import restorer

    embedders.use(CountingEmbedder())
    runtime = manager.create_team(crash_card())
    plan: Any = system.proxy_ask(
        tool_actor(runtime, PlanActor, PlanConfig()), PlanActor, timeout=30
    )
    plan.update_planning([CreateTask(title="Say hello")], "@Boss")
    eventually(lambda: held(runtime, PLANNING_COLLECTION) == {"1"})
    manager.stop_team(runtime.team_id)

    started: list[ActorAddress] = []
    restore_child = Orchestrator.restore_child

    def restore_and_note(self: Orchestrator, actor_class: type, *args: Any) -> ActorAddress:
        address = restore_child(self, actor_class, *args)
        if actor_class is PlanActor:
            started.append(address)
        return address

    give = restorer.give_stored_skills

    def give_once_the_plan_started(config: Any, rows: Any) -> None:
        for address in started:  # restored already: let its on_start bind what it binds
            address.wait_started(30)  # type: ignore[attr-defined]
        give(config, rows)

    monkeypatch.setattr(Orchestrator, "restore_child", restore_and_note)
    monkeypatch.setattr(restorer, "give_stored_skills", give_once_the_plan_started)
    resumed = manager.resume_team(runtime.team_id)

    stores = [m for m in resumed.members() if m.name == STORE_ACTOR_NAME]
    assert len(stores) == 1
    assert held(resumed, PLANNING_COLLECTION) == {"1"}  # the restored store, bound by the plan
    address = resumed.member(PLANNING_ACTOR_NAME)
    assert address is not None
    index = system.get_actor(address)._index
    assert index is not None and index.store_address == stores[0]


# -- the workspace -----------------------------------------------------------------------------


def workspace_card() -> TeamCard:
    """:func:`crash_card` whose @Boss also carries a WorkspaceTool (its ``#Workspace-…``)."""
    card = crash_card()
    config = card.members[0].card.config
    config.tools = [*config.tools, WorkspaceTool()]
    return card


def workspace_of(runtime: TeamRuntime) -> WorkspacePath:
    (address,) = [m for m in runtime.members() if m.name.startswith("#Workspace-")]
    workspace: WorkspacePath = runtime.system.get_actor(address).config.workspace
    return workspace


def workspace_held(runtime: TeamRuntime, workspace: WorkspacePath) -> set[str]:
    """The chunk ids the team's #VectorStore holds for the tree (team "", tenant the tree)."""
    return held(runtime, WORKSPACE_COLLECTION, team="", tenant=workspace.name)


def refs_of(rel: str, content: str) -> set[str]:
    return {chunk_ref(rel, i, c.text) for i, c in enumerate(chunk_text(content))}


DOCS = {
    "hello.md": "Say hello to the new client.\n",
    "budget.md": "\n".join(f"The budget line {i}" for i in range(60)) + "\n",  # two chunks
    "old.md": "Greet the visitors.\n",
}
STALE = "gone.md#0-000000000000"
"""A row held for no chunk: its removal shows the start's reconcile ran."""


def indexed_team(
    manager: TeamManager, embedders: Embedders
) -> tuple[TeamRuntime, WorkspacePath, CountingEmbedder]:
    """A workspace team whose tree holds :data:`DOCS`, all indexed, then a stale row
    added to the store, and stopped."""
    first = embedders.use(CountingEmbedder())
    runtime = manager.create_team(workspace_card())
    workspace = workspace_of(runtime)
    for rel, content in DOCS.items():
        (workspace.tree / rel).write_text(content)
    manager.stop_team(runtime.team_id)  # the next start's pass indexes them
    runtime = manager.resume_team(runtime.team_id)
    every = set().union(*(refs_of(rel, content) for rel, content in DOCS.items()))
    eventually(lambda: workspace_held(runtime, workspace) == every)
    assert len(first.embedded) == len(every)
    store_address = runtime.member(STORE_ACTOR_NAME)
    assert store_address is not None
    store: Any = runtime.system.proxy_ask(store_address, VectorStoreActor, timeout=30)
    stale = VectorEntry(ref_id=STALE, text="a chunk removed since", vector=[0.05, 1.0, 0.0])
    store.upsert(WORKSPACE_COLLECTION, "", [stale], workspace.name)
    manager.stop_team(runtime.team_id)
    return runtime, workspace, first


class Reconciles:
    """What the start pass hands ``SemanticIndex.reconcile_ids`` (the ids), and which
    chunks' text the reconcile then reads back from the tree's records
    (``DocumentIndex.read_chunk_rows``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ids: list[set[str]] = []
        self.read: list[list[str]] = []
        reconcile_ids = SemanticIndex.reconcile_ids
        read_chunk_rows = DocumentIndex.read_chunk_rows

        def record_ids(index: SemanticIndex, ids: Any, fetch: Any, **kwargs: Any) -> None:
            self.ids.append(set(ids))
            reconcile_ids(index, ids, fetch, **kwargs)

        def record_reads(docs: DocumentIndex, refs: Any) -> Any:
            self.read.append(list(refs))
            return read_chunk_rows(docs, refs)

        monkeypatch.setattr(SemanticIndex, "reconcile_ids", record_ids)
        monkeypatch.setattr(DocumentIndex, "read_chunk_rows", record_reads)


def test_a_resumed_workspace_embeds_no_unchanged_document(
    manager: TeamManager, embedders: Embedders, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime, workspace, _ = indexed_team(manager, embedders)
    reconciles = Reconciles(monkeypatch)

    again = embedders.use(CountingEmbedder())
    resumed = manager.resume_team(runtime.team_id)
    # Until the stale row is gone (the reconcile ran) — or anything was embedded again.
    eventually(lambda: STALE not in workspace_held(resumed, workspace) or bool(again.embedded))

    assert again.embedded == []
    every = set().union(*(refs_of(rel, content) for rel, content in DOCS.items()))
    assert reconciles.ids == [every]  # the pass hands over ids, and reads no chunk's text
    assert reconciles.read == []
    every = set().union(*(refs_of(rel, content) for rel, content in DOCS.items()))
    assert workspace_held(resumed, workspace) == every


def test_a_resumed_workspace_embeds_a_changed_file_only_and_drops_a_removed_one(
    manager: TeamManager, embedders: Embedders
) -> None:
    """While the team was stopped, one chunk of ``budget.md`` changed (its other chunk
    did not) and ``old.md`` was removed: only the changed chunk is embedded, and the rows
    of the old text and of the removed file are deleted."""
    runtime, workspace, _ = indexed_team(manager, embedders)
    changed = DOCS["budget.md"].replace("The budget line 59", "The cost line 59")
    (workspace.tree / "budget.md").write_text(changed)
    (workspace.tree / "old.md").unlink()

    again = embedders.use(CountingEmbedder())
    resumed = manager.resume_team(runtime.team_id)
    expected = refs_of("hello.md", DOCS["hello.md"]) | refs_of("budget.md", changed)
    # Until the store is in step — or more than the one changed chunk was embedded.
    eventually(lambda: workspace_held(resumed, workspace) == expected or len(again.embedded) > 1)

    (text,) = [c.text for c in chunk_text(changed) if "The cost line 59" in c.text]
    assert again.embedded == [text]
    (new_chunk,) = refs_of("budget.md", changed) - refs_of("budget.md", DOCS["budget.md"])
    assert new_chunk in workspace_held(resumed, workspace)


def test_a_resumed_workspace_rereads_a_file_its_record_was_read_too_soon_after(
    manager: TeamManager, embedders: Embedders
) -> None:
    """The indexer read ``hello.md`` and a second write of one size followed in that tick
    (its size, mtime and ctime as the record says): the start pass does not take the record
    for the file — it re-reads it, stores it, and embeds its chunk."""
    runtime, workspace, _ = indexed_team(manager, embedders)
    path = workspace.tree / "hello.md"
    changed = DOCS["hello.md"].replace("hello", "howdy")
    path.write_text(changed)
    stat = path.stat()
    docs = DocumentIndex(workspace, Filesystem(workspace.tree))
    record = docs.load("hello.md")
    assert record is not None
    read_in_the_tick = {
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "ctime_ns": stat.st_ctime_ns,
        "indexed_at": stat.st_mtime_ns / 1e9,
    }
    docs.save(record.model_copy(update=read_in_the_tick))  # still the old text's chunks

    embedders.use(CountingEmbedder())
    resumed = manager.resume_team(runtime.team_id)
    eventually(lambda: refs_of("hello.md", changed) <= workspace_held(resumed, workspace))
    stored = docs.load("hello.md")
    assert stored is not None and [c.text for c in stored.chunks] == [changed.strip()]


def test_a_resumed_copy_of_a_workspace_converts_no_document_again(
    manager: TeamManager, embedders: Embedders, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copied or restored tree has new ctimes, so no record describes its file: the start
    pass reads every file again and stores its record anew, but converts no document whose
    bytes are the ones its record was converted from, and embeds nothing."""
    runtime, workspace, _ = indexed_team(manager, embedders)
    (workspace.tree / "memo.docx").write_bytes(docx_bytes("The quarterly invoice is late"))
    resumed = manager.resume_team(runtime.team_id)  # its pass converts and embeds the memo
    docs = DocumentIndex(workspace, Filesystem(workspace.tree))
    eventually(lambda: docs.load("memo.docx") is not None)
    manager.stop_team(resumed.team_id)
    ctimes = {}
    for rel in [*DOCS, "memo.docx"]:  # as a copy made with its mtimes kept (cp -a, rsync -a)
        path = workspace.tree / rel
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        ctimes[rel] = path.stat().st_ctime_ns
    memo = docs.load("memo.docx")
    assert memo is not None and memo.converted and memo.ctime_ns != ctimes["memo.docx"]
    converted: list[str] = []
    convert = readers_module._convert
    monkeypatch.setattr(
        readers_module, "_convert", lambda name, data: converted.append(name) or convert(name, data)
    )

    again = embedders.use(CountingEmbedder())
    manager.resume_team(runtime.team_id)

    def stored_again() -> bool:  # every record stored anew by the pass, at the new ctime
        return all(
            getattr(docs.load(rel), "ctime_ns", None) == ctime for rel, ctime in ctimes.items()
        )

    eventually(stored_again)
    assert converted == []
    again_memo = docs.load("memo.docx")
    assert again_memo is not None and again_memo.chunks == memo.chunks
    assert again_memo.sha == memo.sha
    assert again.embedded == []


def test_a_resumed_workspace_embeds_an_unchanged_chunk_the_store_lost(
    manager: TeamManager,
    system: ActorSystem,
    embedders: Embedders,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A chunk whose embedding a stop or a crash dropped (its file unchanged, its record
    on the tree) is missing from the store: the next start embeds it, and only it — and
    reads back from the tree the text of that chunk alone."""
    runtime, workspace, _ = indexed_team(manager, embedders)
    (lost,) = refs_of("hello.md", DOCS["hello.md"])
    resumed = manager.resume_team(runtime.team_id)
    eventually(lambda: STALE not in workspace_held(resumed, workspace))
    store_address = resumed.member(STORE_ACTOR_NAME)
    assert store_address is not None
    store: Any = system.proxy_ask(store_address, VectorStoreActor, timeout=30)
    store.delete(WORKSPACE_COLLECTION, "", [lost], workspace.name)
    manager.stop_team(resumed.team_id)
    reconciles = Reconciles(monkeypatch)

    again = embedders.use(CountingEmbedder())
    resumed = manager.resume_team(runtime.team_id)
    eventually(lambda: lost in workspace_held(resumed, workspace))

    assert again.embedded == [DOCS["hello.md"].rstrip("\n")]
    assert reconciles.read == [[lost]]


def hold_the_pass_at(monkeypatch: pytest.MonkeyPatch, rel: str) -> threading.Event:
    """Hold every indexing worker reading ``rel`` until the returned event is set (the
    start pass walks the tree in order: what comes before ``rel`` is done by then)."""
    held = threading.Event()
    produce = IndexWorker.produce

    def held_at(self: IndexWorker, key: str, payload: Any, timeout: float) -> Any:
        if key == rel:
            held.wait(60)
        return produce(self, key, payload, timeout)

    monkeypatch.setattr(IndexWorker, "produce", held_at)
    return held


def test_a_mutation_during_the_start_pass_wins_over_what_the_pass_read(
    manager: TeamManager, system: ActorSystem, embedders: Embedders, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pass reads ``hello.md`` (unchanged), then is held converting ``slow.md``; an
    agent rewrites ``hello.md`` meanwhile. The pass's report, at its end, must not bring
    back the old text's row nor delete the new one."""
    runtime, workspace, _ = indexed_team(manager, embedders)
    (workspace.tree / "slow.md").write_text("Review the spending.\n")
    held_pass = hold_the_pass_at(monkeypatch, "slow.md")
    embedders.use(CountingEmbedder())
    try:
        resumed = manager.resume_team(runtime.team_id)
        (address,) = [m for m in resumed.members() if m.name.startswith("#Workspace-")]
        actor: Any = system.proxy_ask(address, WorkspaceActor, timeout=30)
        identity = Identity(name="@Boss", team=str(resumed.team_id))
        actor.observe(identity, "hello.md", content_sha(DOCS["hello.md"].encode()))
        rewritten = "Say hi to the new client.\n"
        actor.mutate(identity, WriteFile(path="hello.md", content=rewritten))
        eventually(lambda: refs_of("hello.md", rewritten) <= workspace_held(resumed, workspace))
    finally:
        held_pass.set()
    eventually(lambda: STALE not in workspace_held(resumed, workspace))  # the pass reported

    expected = set().union(
        refs_of("hello.md", rewritten),
        refs_of("budget.md", DOCS["budget.md"]),
        refs_of("old.md", DOCS["old.md"]),
        refs_of("slow.md", "Review the spending.\n"),
    )
    eventually(lambda: workspace_held(resumed, workspace) == expected)


def test_a_changed_document_is_found_by_meaning_before_the_start_pass_ends(
    manager: TeamManager, system: ActorSystem, embedders: Embedders, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pass walks the tree in order: ``budget.md`` changed while the team was stopped,
    and the pass is then held converting ``zz.md``. The changed chunk is embedded and found
    by meaning while the pass is held (its end — the stale row's removal — has not come),
    and the end embeds nothing more."""
    runtime, workspace, _ = indexed_team(manager, embedders)
    changed = DOCS["budget.md"].replace("The budget line 59", "The cost line 59")
    (workspace.tree / "budget.md").write_text(changed)
    (workspace.tree / "zz.md").write_text("The last file of the walk.\n")
    (new_chunk,) = refs_of("budget.md", changed) - refs_of("budget.md", DOCS["budget.md"])
    held_pass = hold_the_pass_at(monkeypatch, "zz.md")
    again = embedders.use(CountingEmbedder())
    try:
        resumed = manager.resume_team(runtime.team_id)
        eventually(lambda: new_chunk in workspace_held(resumed, workspace))
        (address,) = [m for m in resumed.members() if m.name.startswith("#Workspace-")]
        index = SemanticIndex.bind(
            None,
            system.get_actor(address),
            WORKSPACE_COLLECTION,
            tenant=workspace.name,
            team_id="",
        )
        assert new_chunk in index.similar("spend", 10)  # by meaning: no word in common
        assert STALE in workspace_held(resumed, workspace)  # the pass has not ended
    finally:
        held_pass.set()
    expected = set().union(
        refs_of("hello.md", DOCS["hello.md"]),
        refs_of("budget.md", changed),
        refs_of("old.md", DOCS["old.md"]),
        refs_of("zz.md", "The last file of the walk.\n"),
    )
    eventually(lambda: workspace_held(resumed, workspace) == expected)

    (text,) = [c.text for c in chunk_text(changed) if "The cost line 59" in c.text]
    chunks = [t for t in again.embedded if t != "spend"]  # the query's embedding aside
    assert sorted(chunks) == sorted([text, "The last file of the walk."])


def test_a_failed_start_pass_is_forgotten_and_leaves_the_store_as_it_is(
    manager: TeamManager, system: ActorSystem, embedders: Embedders, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pass fails reading the tree's records: it says so, the actor stops noting
    writes for it, and nothing is embedded or deleted (the next start reconciles)."""
    runtime, workspace, _ = indexed_team(manager, embedders)

    def unreadable(docs: DocumentIndex) -> Any:
        raise OSError("the records are unreadable")

    monkeypatch.setattr(DocumentIndex, "records", unreadable)
    again = embedders.use(CountingEmbedder())
    resumed = manager.resume_team(runtime.team_id)
    (address,) = [m for m in resumed.members() if m.name.startswith("#Workspace-")]
    actor = system.get_actor(address)
    eventually(lambda: actor._since_pass is None)  # the pass reported that it failed

    assert actor._watch is None
    assert STALE in workspace_held(resumed, workspace)
    assert again.embedded == []


# -- an embedding that fails -------------------------------------------------------------------


class FailingEmbedder(CountingEmbedder):
    """A :class:`CountingEmbedder` whose first ``failures`` calls raise (every call, with
    None): an embedder down for a while, or for good."""

    def __init__(self, failures: int | None) -> None:
        super().__init__()
        self.failures = failures
        self.calls = 0

    def embed(self, texts: Sequence[str], timeout: float | None = None) -> list[list[float]]:
        with self._record:
            self.calls += 1
            failing = self.failures is None or self.calls <= self.failures
        if failing:
            raise RuntimeError("the embeddings endpoint is down")
        return super().embed(texts, timeout)


def workspace_actor(runtime: TeamRuntime) -> Any:
    (address,) = [m for m in runtime.members() if m.name.startswith("#Workspace-")]
    return runtime.system.get_actor(address)


def asked(runtime: TeamRuntime) -> Any:
    """The tree's actor, asked (an answer comes after every message it had before)."""
    (address,) = [m for m in runtime.members() if m.name.startswith("#Workspace-")]
    return runtime.system.proxy_ask(address, WorkspaceActor, timeout=30)


def write(runtime: TeamRuntime, rel: str, content: str) -> None:
    """``rel`` written by @Boss through the tree's actor (a new file: nothing to read first)."""
    identity = Identity(name="@Boss", team=str(runtime.team_id))
    asked(runtime).mutate(identity, WriteFile(path=rel, content=content))


def test_a_failed_early_embedding_is_retried_at_the_next_write(
    manager: TeamManager, embedders: Embedders, caplog: pytest.LogCaptureFixture
) -> None:
    """The start pass embeds a changed chunk early and the embedder fails: the pass's end
    leaves that row to that (failed) write. It is said once, and the next write's report
    reconciles the tree: the missing chunk is embedded, with the written file's."""
    runtime, workspace, _ = indexed_team(manager, embedders)
    changed = DOCS["budget.md"].replace("The budget line 59", "The cost line 59")
    (workspace.tree / "budget.md").write_text(changed)
    (new_chunk,) = refs_of("budget.md", changed) - refs_of("budget.md", DOCS["budget.md"])
    embedders.use(FailingEmbedder(failures=1))
    caplog.set_level("INFO", logger="akgentic.tool.workspace")

    def said() -> int:
        return sum("embedding passages of workspace" in r.getMessage() for r in caplog.records)

    resumed = manager.resume_team(runtime.team_id)
    eventually(lambda: STALE not in workspace_held(resumed, workspace))  # the pass reported
    eventually(lambda: said() == 1)  # the failure was told, and said
    assert new_chunk not in workspace_held(resumed, workspace)

    write(resumed, "notes.md", "Spend less.\n")
    expected = set().union(
        refs_of("hello.md", DOCS["hello.md"]),
        refs_of("budget.md", changed),
        refs_of("old.md", DOCS["old.md"]),
        refs_of("notes.md", "Spend less.\n"),
    )
    eventually(lambda: workspace_held(resumed, workspace) == expected)
    assert said() == 1


def test_a_failing_embedder_is_retried_once_per_backoff_delay(
    manager: TeamManager, embedders: Embedders, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An embedder that always fails: the first write after the failure retries (one
    reconcile), the retry fails, and the writes within the backoff delay do not retry —
    then, the delay passed (0 here), the next one does."""
    runtime, _, _ = indexed_team(manager, embedders)
    reconciles = Reconciles(monkeypatch)
    broken = embedders.use(FailingEmbedder(failures=None))
    resumed = manager.resume_team(runtime.team_id)
    actor = workspace_actor(resumed)
    eventually(lambda: len(reconciles.ids) == 1)  # the start pass's reconcile

    write(resumed, "a.md", "First.\n")  # its embedding fails: a retry is due at once
    eventually(lambda: actor._retry_at is not None)
    write(resumed, "b.md", "Second.\n")  # reported: the retry runs, and fails
    eventually(lambda: len(reconciles.ids) == 2 and not actor._retrying)
    assert actor._retry_delay == 2 * WorkspaceActor.retry_first  # the next wait doubled

    calls = broken.calls
    write(resumed, "c.md", "Third.\n")  # within the delay: its own embedding only
    eventually(lambda: broken.calls > calls)
    write(resumed, "d.md", "Fourth.\n")
    eventually(lambda: broken.calls > calls + 1)
    asked(resumed).catch_up()  # after the report that embedded d.md: it did not retry
    assert len(reconciles.ids) == 2

    actor._retry_at = 0.0  # the delay has passed
    write(resumed, "e.md", "Fifth.\n")
    eventually(lambda: len(reconciles.ids) == 3)


def stored_texts(runtime: TeamRuntime, collection: str) -> dict[str, str]:
    """``ref_id -> text`` of the team's rows in ``collection``, as the #VectorStore holds them."""
    address = runtime.member(STORE_ACTOR_NAME)
    assert address is not None
    actor: Any = runtime.system.get_actor(address)
    team = str(runtime.team_id)
    rows = actor.state.collections.get(collection, {})
    return {row.ref_id: row.text for row in rows.values() if row.team_id == team}


def test_a_plan_update_whose_embedding_was_dropped_is_indexed_again_on_resume(
    manager: TeamManager, system: ActorSystem, embedders: Embedders
) -> None:
    """A task indexed, then changed while the model loads and the team stops: the store
    still holds the task's old text under its id. The resume must embed the new text —
    the id being held is not enough — or the task is found by what it no longer says."""
    embedders.use(CountingEmbedder())
    runtime = manager.create_team(crash_card())
    plan: Any = system.proxy_ask(
        tool_actor(runtime, PlanActor, PlanConfig()), PlanActor, timeout=30
    )
    plan.update_planning([CreateTask(title="Say hello to the client")], "@Boss")
    eventually(
        lambda: stored_texts(runtime, PLANNING_COLLECTION) == {"1": "Say hello to the client"}
    )
    manager.stop_team(runtime.team_id)

    embedders.use(embedders.loading)  # the next run's model never loads: its writes drop
    second = manager.resume_team(runtime.team_id)
    address = second.member(PLANNING_ACTOR_NAME)
    assert address is not None
    plan = system.proxy_ask(address, PlanActor, timeout=30)
    plan.update_planning([UpdateTask(task_id=1, title="Review the budget")], "@Boss")
    assert embedders.loading.loading.wait(30)
    manager.stop_team(runtime.team_id)

    ready = embedders.use(CountingEmbedder())
    resumed = manager.resume_team(runtime.team_id)
    eventually(lambda: stored_texts(resumed, PLANNING_COLLECTION) == {"1": "Review the budget"})
    assert ready.embedded == ["Review the budget"]  # that row only


def test_a_graph_entity_changed_while_its_embedding_was_dropped_is_indexed_again_on_resume(
    manager: TeamManager, system: ActorSystem, embedders: Embedders
) -> None:
    embedders.use(CountingEmbedder())
    runtime = manager.create_team(crash_card())
    graph: Any = system.proxy_ask(
        tool_actor(runtime, KnowledgeGraphActor, KnowledgeGraphConfig()),
        KnowledgeGraphActor,
        timeout=30,
    )
    graph.update_graph(GraphUpdate(entities_to_create=[Entity(name="Welcome", entity_type="r")]))
    eventually(lambda: set(stored_texts(runtime, KG_COLLECTION)) == {"Welcome"})
    manager.stop_team(runtime.team_id)

    embedders.use(embedders.loading)
    second = manager.resume_team(runtime.team_id)
    address = second.member(KG_ACTOR_NAME)
    assert address is not None
    graph = system.proxy_ask(address, KnowledgeGraphActor, timeout=30)
    graph.update_graph(
        GraphUpdate(entities_to_modify=[EntityUpdate(name="Welcome", description="the budget")])
    )
    assert embedders.loading.loading.wait(30)
    manager.stop_team(runtime.team_id)

    embedders.use(CountingEmbedder())
    resumed = manager.resume_team(runtime.team_id)
    eventually(
        lambda: stored_texts(resumed, KG_COLLECTION) == {"Welcome": "Welcome (r)\nthe budget"}
    )


# -- an embedding model that changed between runs ----------------------------------------------


class WiderEmbedder(CountingEmbedder):
    """Another model: its own name, and one dimension more (a third concept)."""

    name = "concept-wider"

    def __init__(self) -> None:
        super().__init__()
        self.concepts = {**CONCEPTS, "travel": ("trip", "flight")}
        self.dimension = len(self.concepts) + 1


def stored_models(
    runtime: TeamRuntime, collection: str, *, team: str | None = None, tenant: str = ""
) -> dict[str, str]:
    """``ref_id -> model`` of the rows in ``collection`` the #VectorStore holds for the
    team (unless ``team`` says otherwise) and ``tenant``."""
    address = runtime.member(STORE_ACTOR_NAME)
    assert address is not None
    store: Any = runtime.system.proxy_ask(address, VectorStoreActor, timeout=30)
    scope = str(runtime.team_id) if team is None else team
    rows = store.ref_rows(collection, scope, tenant, texts=False)
    return {ref: row.model for ref, row in rows.items()}


def test_a_graph_whose_embedding_model_changed_is_embedded_again_on_resume(
    manager: TeamManager,
    system: ActorSystem,
    embedders: Embedders,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The graph was indexed by one model; the team resumes with another, of another
    dimension (the automatic choice found the local model installed, say). The resume
    embeds every entity again with the new model, says so once, and search by meaning
    works — instead of refusing every write and every query for good."""
    embedders.use(CountingEmbedder())
    runtime = manager.create_team(crash_card())
    graph: Any = system.proxy_ask(
        tool_actor(runtime, KnowledgeGraphActor, KnowledgeGraphConfig()),
        KnowledgeGraphActor,
        timeout=30,
    )
    welcome = Entity(name="Welcome", entity_type="ritual", description="say hello")
    ledger = Entity(name="Ledger", entity_type="file", description="the budget")
    graph.update_graph(GraphUpdate(entities_to_create=[welcome, ledger]))
    both = {"Welcome": "concept-test", "Ledger": "concept-test"}
    eventually(lambda: stored_models(runtime, KG_COLLECTION) == both)
    manager.stop_team(runtime.team_id)

    wider = embedders.use(WiderEmbedder())
    caplog.set_level("WARNING", logger="akgentic.tool.vector_store")
    resumed = manager.resume_team(runtime.team_id)
    again = {"Welcome": "concept-wider", "Ledger": "concept-wider"}
    eventually(lambda: stored_models(resumed, KG_COLLECTION) == again)

    assert sorted(wider.embedded) == ["Ledger (file)\nthe budget", "Welcome (ritual)\nsay hello"]
    said = [r.getMessage() for r in caplog.records if "embedded again" in r.getMessage()]
    assert said == [
        f"{KG_ACTOR_NAME}: 2 rows embedded with concept-test are embedded again with concept-wider"
    ]
    eventually(
        lambda: next(iter(similar(resumed, KG_ACTOR_NAME, KG_COLLECTION, "hi")), "") == "Welcome"
    )


def test_a_workspace_whose_embedding_model_changed_is_embedded_again_on_resume(
    manager: TeamManager, embedders: Embedders, caplog: pytest.LogCaptureFixture
) -> None:
    """The tree's chunks (ids only in the reconcile: their text is read back from the
    records) were embedded by one model; the resume, with another, embeds each again."""
    runtime, workspace, _ = indexed_team(manager, embedders)
    every = set().union(*(refs_of(rel, content) for rel, content in DOCS.items()))
    wider = embedders.use(WiderEmbedder())
    caplog.set_level("WARNING", logger="akgentic.tool.vector_store")
    resumed = manager.resume_team(runtime.team_id)

    def models() -> dict[str, str]:
        return stored_models(resumed, WORKSPACE_COLLECTION, team="", tenant=workspace.name)

    eventually(lambda: models() == dict.fromkeys(every, "concept-wider"))
    assert len(wider.embedded) == len(every)
    (line,) = [r.getMessage() for r in caplog.records if "embedded again" in r.getMessage()]
    assert line.startswith("#Workspace-")
    assert line.endswith(
        f": {len(every)} rows embedded with concept-test are embedded again with concept-wider"
    )

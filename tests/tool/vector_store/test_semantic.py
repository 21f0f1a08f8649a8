"""SemanticIndex on real actors: workers do the slow work, the consumer stays free."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from akgentic.core import (
    ActorAddress,
    Akgent,
    BaseConfig,
    BaseState,
    EventMessage,
    Orchestrator,
    StartMessage,
    StateChangedMessage,
    StopMessage,
)
from akgentic.tool.core import ToolStateEvent, fold_deltas
from akgentic.tool.vector_store import (
    STORE_ACTOR_NAME,
    EmbeddingJob,
    EmbeddingService,
    EmbeddingWorker,
    QdrantBackend,
    SemanticIndex,
    VectorStoreActor,
    VectorStoreConfig,
    VectorStoreConfigError,
    VectorStoreParam,
    WeaviateBackend,
    close_client,
    ensure_store_actor,
)
from akgentic.tool.vector_store.backends.inmemory import VectorStoreState

from ..conftest import FakeAgent, Team
from ..members import LoadingEmbedder
from .conftest import FailingEmbedder, FakeEmbedder, GatedEmbedder


class Setup:
    """What a test hands the consumer actor before it starts (read in on_start)."""

    embedder: EmbeddingService | None = None
    # the longest query wait allowed: a loaded machine must not turn a query whose worker
    # is merely slow into a degraded answer (the timeout test sets its own short one)
    param: VectorStoreParam = VectorStoreParam(backend="inmemory", query_timeout=30.0)
    config: VectorStoreConfig | None = None


setup = Setup()


class NotesActor(Akgent[BaseConfig, BaseState]):
    """A consumer tool actor: binds its index on its own thread, as a real card's actor does."""

    def on_start(self) -> None:
        self.index = SemanticIndex.bind(
            setup.param, self, collection="notes", embedder=setup.embedder, config=setup.config
        )

    def add(self, ref_id: str, text: str) -> str:
        self.index.upsert(ref_id, text, {"len": len(text)})
        return "queued"

    def remove(self, ref_id: str) -> None:
        self.index.delete(ref_id)

    def search(self, query: str, k: int) -> dict[str, float]:
        return self.index.similar(query, k)

    def reconcile(self, rows: dict[str, str]) -> None:
        self.index.reconcile({ref: (text, None) for ref, text in rows.items()})

    def reconcile_ids(self, ids: list[str], fetch: Any) -> None:
        self.index.reconcile_ids(ids, fetch)

    def ping(self) -> str:
        return "pong"


@pytest.fixture(autouse=True)
def fresh_setup() -> None:
    global setup
    setup = Setup()


def start_notes(team: Team, **overrides: Any) -> tuple[NotesActor, ActorAddress]:
    for key, value in overrides.items():
        setattr(setup, key, value)
    address = team.proxy.getChildrenOrCreate(NotesActor, BaseConfig(name="#Notes"))
    proxy: NotesActor = team.system.proxy_ask(address, NotesActor, timeout=30)
    assert proxy.ping() == "pong"  # a round trip: on_start (the bind) has run
    return proxy, address


def worker_stops(team: Team) -> Callable[[], int]:
    def count() -> int:
        return sum(
            1
            for m in list(team.recorder.log)
            if isinstance(m, StopMessage) and m.sender and m.sender.name.startswith("#embed-notes-")
        )

    return count


def wait_workers_stopped(team: Team, n: int) -> None:
    stops = worker_stops(team)
    team.recorder.wait_for(lambda: stops() >= n)


def store_of(team: Team) -> VectorStoreActor:
    address = team.proxy.get_team_member(STORE_ACTOR_NAME)
    assert address is not None
    proxy: VectorStoreActor = team.system.proxy_ask(address, VectorStoreActor, timeout=30)
    return proxy


def texts_in_store(team: Team) -> dict[str, str]:
    """The store's rows, once every tell sent to it so far is applied (a round trip)."""
    store_of(team).count()
    state = team.system.get_actor(store_of_address(team)).state
    assert isinstance(state, VectorStoreState)
    return {row.ref_id: row.text for row in state.collections.get("notes", {}).values()}


def persisted_store(team: Team) -> VectorStoreState | None:
    """The #VectorStore state as the team's log persists it: its last snapshot with the
    deltas after it folded on (None before its first change)."""
    snapshot: VectorStoreState | None = None
    events: list[ToolStateEvent] = []
    for m in list(team.recorder.log):
        if m.sender is None or m.sender.name != STORE_ACTOR_NAME:
            continue
        if isinstance(m, StateChangedMessage) and isinstance(m.state, VectorStoreState):
            snapshot = m.state
        elif isinstance(m, EventMessage) and isinstance(m.event, ToolStateEvent):
            events.append(m.event)
    if snapshot is None:
        return None
    return fold_deltas(snapshot, events)


def persisted_rows(team: Team, collection: str = "notes") -> int:
    state = persisted_store(team)
    return 0 if state is None else len(state.collections.get(collection, {}))


def store_of_address(team: Team) -> ActorAddress:
    address = team.proxy.get_team_member(STORE_ACTOR_NAME)
    assert address is not None
    return address


# -- the consumer's thread stays free --------------------------------------------------------


def test_upsert_never_blocks_the_tool_actor_on_the_embedder(team: Team) -> None:
    embedder = GatedEmbedder()
    notes, _ = start_notes(team, embedder=embedder)
    assert notes.add("n1", "hello vector world") == "queued"
    embedder.wait_entered("hello vector world")  # the embedding is in flight, held
    assert notes.ping() == "pong"  # … and the consumer answers meanwhile
    assert notes.add("n2", "another row") == "queued"

    def workers() -> list[str]:
        return [
            m.sender.name
            for m in list(team.recorder.log)
            if isinstance(m, StartMessage) and m.sender and m.sender.name.startswith("#embed-")
        ]

    team.recorder.wait_for(lambda: len(workers()) == 2)  # telemetry reaches it asynchronously
    assert all(w.startswith("#embed-notes-") for w in workers())
    assert texts_in_store(team) == {}

    embedder.gate.set()
    wait_workers_stopped(team, 2)  # each worker stops itself once its row is written
    team.recorder.wait_for(lambda: persisted_rows(team) == 2)
    assert texts_in_store(team) == {"n1": "hello vector world", "n2": "another row"}
    assert {timeout for _, timeout in embedder.calls} == {EmbeddingWorker.timeout}
    assert notes.search("hello vector world", 5)["n1"] == pytest.approx(1.0, abs=1e-5)


def test_workers_spawned_on_the_consumers_thread_are_its_children(team: Team) -> None:
    notes, address = start_notes(team, embedder=FakeEmbedder())
    notes.add("a", "alpha")
    wait_workers_stopped(team, 1)
    actor = team.system.get_actor(address)
    assert isinstance(actor, NotesActor)
    actor.index.upsert("b", "beta")  # from this (foreign) thread: the orchestrator spawns
    wait_workers_stopped(team, 2)
    parents = [
        m.parent
        for m in team.recorder.log
        if isinstance(m, StartMessage) and m.sender and m.sender.name.startswith("#embed-")
    ]
    assert parents == [address, team.orchestrator]
    assert set(texts_in_store(team)) == {"a", "b"}


def test_rows_are_stamped_with_the_observers_team(team: Team) -> None:
    notes, address = start_notes(team, embedder=FakeEmbedder())
    notes.add("a", "alpha")
    wait_workers_stopped(team, 1)
    store_of(team).count()
    state = team.system.get_actor(store_of_address(team)).state
    (row,) = state.collections["notes"].values()
    assert row.team_id == str(team.orchestrator.team_id)
    actor = team.system.get_actor(address)
    assert actor.index.team_id == str(team.orchestrator.team_id)


# -- ordering ---------------------------------------------------------------------------------


def test_a_slow_upsert_overtaken_by_a_later_one_is_dropped(team: Team) -> None:
    embedder = GatedEmbedder(hold={"old text"})
    notes, _ = start_notes(team, embedder=embedder)
    notes.add("r", "old text")
    embedder.wait_entered("old text")
    notes.add("r", "new text")
    wait_workers_stopped(team, 1)  # the fast one wrote
    assert texts_in_store(team) == {"r": "new text"}
    embedder.gate.set()
    wait_workers_stopped(team, 2)  # the slow one finished, and wrote nothing
    store_of(team).count()  # a round trip: every tell sent before it is applied
    assert texts_in_store(team) == {"r": "new text"}


def test_a_delete_while_the_upsert_is_in_flight_wins(team: Team) -> None:
    embedder = GatedEmbedder(hold={"doomed"})
    notes, _ = start_notes(team, embedder=embedder)
    notes.add("r", "doomed")
    embedder.wait_entered("doomed")
    notes.remove("r")
    embedder.gate.set()
    wait_workers_stopped(team, 1)
    store_of(team).count()
    assert texts_in_store(team) == {}


# -- queries ------------------------------------------------------------------------------------


def test_similar_gives_the_degraded_answer_on_timeout_then_uses_the_late_vector(
    team: Team,
) -> None:
    embedder = GatedEmbedder(hold={"find me"})
    notes, _ = start_notes(
        team, embedder=embedder, param=VectorStoreParam(backend="inmemory", query_timeout=0.2)
    )
    notes.add("x", "find me please")
    notes.add("y", "unrelated words")
    wait_workers_stopped(team, 2)
    assert notes.search("find me", 2) == {}  # bounded wait ran out: degraded, not stuck
    assert notes.ping() == "pong"
    embedder.gate.set()
    wait_workers_stopped(team, 3)  # the late query vector was delivered and cached
    found = notes.search("find me", 2)
    assert next(iter(found)) == "x"
    assert sum(1 for texts, _ in embedder.calls if texts == ["find me"]) == 1


def test_concurrent_identical_queries_share_one_worker(team: Team) -> None:
    embedder = GatedEmbedder(hold={"same question"})
    _, address = start_notes(team, embedder=embedder)
    actor = team.system.get_actor(address)
    assert isinstance(actor, NotesActor)
    results: list[dict[str, float]] = []

    def ask() -> None:
        results.append(actor.index.similar("same question", 3))

    threads = [threading.Thread(target=ask) for _ in range(3)]
    for thread in threads:
        thread.start()
    embedder.wait_entered("same question")
    embedder.gate.set()
    for thread in threads:
        thread.join(60)
    assert len(results) == 3
    assert sum(1 for texts, _ in embedder.calls if texts == ["same question"]) == 1


def test_a_failing_embedder_is_not_retried_on_every_call(team: Team) -> None:
    embedder = FailingEmbedder()
    notes, _ = start_notes(team, embedder=embedder)
    assert notes.search("anything", 3) == {}
    assert notes.search("something else", 3) == {}  # negative entry: no second worker
    assert len(embedder.calls) == 1


def test_without_an_embedder_the_index_is_keyword_only(team: Team) -> None:
    notes, address = start_notes(team, embedder=None)
    actor = team.system.get_actor(address)
    assert isinstance(actor, NotesActor)
    assert actor.index.available is False
    assert notes.add("a", "alpha") == "queued"
    assert notes.search("alpha", 3) == {}
    notes.remove("a")  # still reaches the store: rows written before stay deletable
    team.drain()  # a worker spawned by the calls above would be on the stream by now
    assert not any(
        isinstance(m, StartMessage) and m.sender and m.sender.name.startswith("#embed-")
        for m in team.recorder.log
    )


def test_bind_resolves_the_automatic_embedder(team: Team, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeEmbedder()
    import akgentic.tool.vector_store.semantic as semantic

    monkeypatch.setattr(semantic, "get_embedding_service", lambda config: fake)
    agent = FakeAgent()
    agent.orchestrator = team.orchestrator
    agent.team_id = team.orchestrator.team_id  # type: ignore[assignment]
    agent.proxy_ask = team.system.proxy_ask  # type: ignore[method-assign]
    agent.proxy_tell = team.system.proxy_tell  # type: ignore[method-assign]
    index = SemanticIndex.bind(None, agent, collection="planning")  # type: ignore[arg-type]
    assert index.embedder is fake and index.available
    assert index.alpha == 0.7 and index.collection == "planning"
    overridden = SemanticIndex.bind(
        VectorStoreParam(collection="tasks", hybrid_alpha=0.4),
        agent,  # type: ignore[arg-type]
        collection="planning",
    )
    assert (overridden.collection, overridden.alpha) == ("tasks", 0.4)
    assert overridden.store_address == index.store_address  # one #VectorStore per team


# -- wiring failures --------------------------------------------------------------------------


def test_weaviate_named_without_its_url_fails_at_wiring(
    agent: FakeAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AKGENTIC_WEAVIATE_URL", raising=False)
    param = VectorStoreParam(backend="weaviate")
    with pytest.raises(VectorStoreConfigError, match="AKGENTIC_WEAVIATE_URL"):
        SemanticIndex.bind(param, agent, collection="notes")  # type: ignore[arg-type]
    monkeypatch.setenv("AKGENTIC_WEAVIATE_URL", "")  # exported but empty: still unset
    with pytest.raises(VectorStoreConfigError, match="never falls back"):
        SemanticIndex.bind(param, agent, collection="notes")  # type: ignore[arg-type]


def test_a_configured_weaviate_becomes_the_default_without_connecting(
    agent: FakeAgent, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AKGENTIC_WEAVIATE_URL", "http://127.0.0.1:1")
    index = SemanticIndex.bind(None, agent, "notes", embedder=FakeEmbedder())  # type: ignore[arg-type]
    assert index.spec.name == "weaviate" and index.store_address is None
    assert isinstance(index._store, WeaviateBackend)


def test_an_unknown_collection_fails_at_wiring(agent: FakeAgent) -> None:
    # (an unknown backend is refused as the param is built: test_config)
    with pytest.raises(VectorStoreConfigError, match="collection"):
        SemanticIndex.bind(None, agent, "not valid!")  # type: ignore[arg-type]


# -- the store actor ---------------------------------------------------------------------------


class Member(Akgent[BaseConfig, BaseState]):
    pass


def test_ensure_store_actor_is_get_or_create_in_one_step(team: Team) -> None:
    members = [
        team.system.get_actor(
            team.system.createActor(
                Member, BaseConfig(name=f"@m{i}"), team_id=team.orchestrator.team_id
            )
        )
        for i in range(6)
    ]
    barrier = threading.Barrier(len(members))
    found: list[ActorAddress] = []
    lock = threading.Lock()

    def bind(member: Any) -> None:
        barrier.wait(30)
        address = ensure_store_actor(member)
        with lock:
            found.append(address)

    threads = [threading.Thread(target=bind, args=(m,)) for m in members]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(found) == 6 and len(set(found)) == 1
    stores = [m for m in team.proxy.get_team() if m.name == STORE_ACTOR_NAME]
    assert len(stores) == 1


def test_ensure_store_actor_needs_a_team(agent: FakeAgent) -> None:
    with pytest.raises(RuntimeError, match="no team"):
        ensure_store_actor(agent)  # type: ignore[arg-type]


def test_the_store_persists_its_changes_as_deltas_and_restores(team: Team) -> None:
    notes, _ = start_notes(team, embedder=FakeEmbedder())
    for i in range(5):
        notes.add(f"r{i}", f"row number {i}")
    wait_workers_stopped(team, 5)
    store_of(team).count()

    def snapshots() -> list[Any]:
        return [
            m.state
            for m in team.recorder.log
            if isinstance(m, StateChangedMessage) and m.sender and m.sender.name == STORE_ACTOR_NAME
        ]

    def deltas() -> list[Any]:
        return [
            m.event.payload
            for m in team.recorder.log
            if isinstance(m, EventMessage)
            and isinstance(m.event, ToolStateEvent)
            and m.event.tool_id == STORE_ACTOR_NAME
        ]

    team.recorder.wait_for(lambda: persisted_rows(team) == 5)
    assert len(snapshots()) == 1  # at the first change; every change is its own delta
    assert [len(d.upserted) for d in deltas()] == [1, 1, 1, 1, 1]  # O(change): its own row
    snapshot = persisted_store(team)
    assert snapshot == team.system.get_actor(store_of_address(team)).state

    restored = team.system.createActor(
        VectorStoreActor, BaseConfig(name="#Restored"), restoring=True, state=snapshot
    )
    proxy: Any = team.system.proxy_ask(restored, VectorStoreActor, timeout=30)
    from .conftest import bag_of_words

    hits = proxy.query("notes", str(team.orchestrator.team_id), bag_of_words("row number 3"), 1)
    assert [h.ref_id for h in hits] == ["r3"]
    assert proxy.delete_by_team(str(team.orchestrator.team_id)) == 5
    assert proxy.list_collections() == ["notes"]


# -- a cluster backend: no actor, the workers call it -------------------------------------------


def test_a_cluster_backend_needs_no_actor(team: Team, tmp_path: Any) -> None:
    config = VectorStoreConfig(backend="qdrant", path=str(tmp_path / "q"))
    notes, address = start_notes(
        team,
        embedder=FakeEmbedder(),
        param=VectorStoreParam(backend="qdrant", query_timeout=30.0),
        config=config,
    )
    try:
        notes.add("a", "alpha beta")
        notes.add("b", "gamma delta")
        wait_workers_stopped(team, 2)
        assert next(iter(notes.search("alpha beta", 2))) == "a"
        notes.remove("a")
        wait_workers_stopped(team, 4)  # the query had its worker; deletes run in one too
        assert list(notes.search("alpha beta", 2)) == ["b"]
        assert team.proxy.get_team_member(STORE_ACTOR_NAME) is None
        actor = team.system.get_actor(address)
        assert isinstance(actor, NotesActor) and isinstance(actor.index._store, QdrantBackend)
    finally:
        close_client(QdrantBackend(config).key)


def test_orchestrator_is_the_spawner_for_a_plain_observer(team: Team) -> None:
    agent = FakeAgent()
    agent.orchestrator = team.orchestrator
    agent.team_id = team.orchestrator.team_id  # type: ignore[assignment]
    agent.proxy_ask = team.system.proxy_ask  # type: ignore[method-assign]
    agent.proxy_tell = team.system.proxy_tell  # type: ignore[method-assign]
    slow_ok = VectorStoreParam(query_timeout=30.0)  # see Setup.param
    index = SemanticIndex.bind(slow_ok, agent, "notes", embedder=FakeEmbedder())  # type: ignore[arg-type]
    index.upsert("a", "alpha")
    wait_workers_stopped(team, 1)
    orchestrator: Any = team.system.proxy_ask(team.orchestrator, Orchestrator, timeout=30)
    assert orchestrator is not None
    assert list(index.similar("alpha", 1)) == ["a"]


def test_a_row_in_flight_at_teardown_lands_before_the_store_stops(team: Team) -> None:
    """The embedding worker reports to #VectorStore: the store stops only after it, while
    a tool actor it has nothing to do with is released at once."""
    embedder = GatedEmbedder(hold={"late"})
    proxy, _ = start_notes(team, embedder=embedder)
    idle = team.proxy.getChildrenOrCreate(Akgent, BaseConfig(name="#Idle"))
    store = store_of_address(team)
    proxy.add("late", "late")
    embedder.wait_entered("late", timeout=30)
    team.system.proxy_tell(team.orchestrator, Orchestrator).stop(60.0)
    assert team.system.wait_stopped(idle, 30)  # not held by the worker
    assert store.is_alive()  # held: the worker writes to it
    embedder.gate.set()
    assert team.system.wait_stopped(team.orchestrator, 60)
    published = [
        m.state
        for m in list(team.recorder.log)
        if isinstance(m, StateChangedMessage)
        and m.sender is not None
        and m.sender.name == "#VectorStore"
    ]
    assert isinstance(published[-1], VectorStoreState)
    assert [row.ref_id for row in published[-1].collections["notes"].values()] == ["late"]


# -- a model still loading -------------------------------------------------------------------


@pytest.fixture
def loading() -> Iterator[LoadingEmbedder]:
    """An embedder whose model load (started by ``bind``) is held until ``gate`` is set."""
    embedder = LoadingEmbedder({"greeting": ("hello", "hi")})
    yield embedder
    embedder.gate.set()  # a load the test left held ends


def test_a_row_written_while_the_model_loads_is_indexed_once_it_loaded(
    team: Team, loading: LoadingEmbedder
) -> None:
    notes, _ = start_notes(team, embedder=loading)
    assert loading.loading.wait(30)  # bind started the load, and it is held
    assert notes.add("n1", "hello world") == "queued"
    loading.gate.set()
    wait_workers_stopped(team, 1)
    team.recorder.wait_for(lambda: persisted_rows(team) == 1)
    assert texts_in_store(team) == {"n1": "hello world"}
    assert list(notes.search("hi", 1)) == ["n1"]  # by meaning: no word in common
    assert loading.warm_ups == 1


def test_a_stop_is_never_held_by_a_write_or_a_query_waiting_for_the_load(
    team: Team, loading: LoadingEmbedder
) -> None:
    """Their workers (children of the consumer; a write's reports to ``#VectorStore``)
    used to wait for the load in ``embed``, and every stop on the way with them, for the
    team's grace. Here the grace outlasts the wait: the stop must end while the load is
    still held."""
    quick = VectorStoreParam(backend="inmemory", query_timeout=0.1)
    notes, _ = start_notes(team, embedder=loading, param=quick)
    assert loading.loading.wait(30)
    assert notes.add("n1", "hello world") == "queued"
    assert notes.search("hello", 3) == {}  # the degraded answer while the model loads

    team.system.proxy_tell(team.orchestrator, Orchestrator).stop(300.0)
    assert team.system.wait_stopped(team.orchestrator, 30)
    left = team.system.shutdown(1.0)

    assert not loading.ready  # the team stopped while the load was still held
    assert left == []


# -- reconcile: what a consumer with restored rows does on start -------------------------------


def embedded(embedder: FakeEmbedder) -> list[str]:
    return [text for texts, _ in embedder.calls for text in texts]


def on_disk(team: Team, tmp_path: Any) -> tuple[Any, FakeEmbedder, QdrantBackend]:
    """Notes indexed in Qdrant's local mode on disk, their embedder, and a second look at
    the same store (closed by the caller: ``close_client(store.key)``)."""
    config = VectorStoreConfig(backend="qdrant", path=str(tmp_path / "q"))
    embedder = FakeEmbedder()
    notes, _ = start_notes(
        team,
        embedder=embedder,
        param=VectorStoreParam(backend="qdrant", query_timeout=30.0),
        config=config,
    )
    return notes, embedder, QdrantBackend(config)


def test_reconcile_indexes_what_the_store_lacks_and_deletes_what_it_holds_for_nothing(
    team: Team, tmp_path: Any
) -> None:
    notes, embedder, store = on_disk(team, tmp_path)
    try:
        notes.add("kept", "alpha beta")
        notes.add("stale", "a row whose delete was lost")
        wait_workers_stopped(team, 2)
        before = len(embedded(embedder))

        notes.reconcile({"kept": "alpha beta", "missing": "gamma delta"})
        team.recorder.wait_for(
            lambda: (
                store.ref_ids("notes", str(team.orchestrator.team_id))
                == {
                    "kept",
                    "missing",
                }
            )
        )

        assert embedded(embedder)[before:] == ["gamma delta"]  # only the missing row
        assert next(iter(notes.search("gamma delta", 2))) == "missing"
    finally:
        close_client(store.key)


def test_reconcile_with_nothing_missing_lists_once_and_embeds_nothing(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = FakeEmbedder()
    notes, _ = start_notes(team, embedder=embedder)
    notes.add("a", "alpha")
    wait_workers_stopped(team, 1)
    jobs: list[EmbeddingJob] = []
    spawn = SemanticIndex._spawn

    def spy(self: SemanticIndex, job: EmbeddingJob, *args: Any, **kwargs: Any) -> None:
        jobs.append(job)
        spawn(self, job, *args, **kwargs)

    monkeypatch.setattr(SemanticIndex, "_spawn", spy)
    notes.reconcile({"a": "alpha"})
    wait_workers_stopped(team, 2)  # the listing worker: an embedding job starts before it stops
    assert [job.texts for job in jobs] == [()]  # the listing only: nothing to embed
    assert embedded(embedder) == ["alpha"]


def test_a_write_after_reconcile_began_wins_over_its_older_text(team: Team) -> None:
    embedder = GatedEmbedder(hold={"old text"})
    notes, _ = start_notes(team, embedder=embedder)
    notes.reconcile({"r": "old text"})  # the text the restored state held
    embedder.wait_entered("old text")  # listed, found missing, embedding: held
    notes.add("r", "new text")
    wait_workers_stopped(team, 2)  # the listing worker, then the write's
    assert texts_in_store(team) == {"r": "new text"}
    embedder.gate.set()
    wait_workers_stopped(team, 3)  # the reconcile's embedding ended, and wrote nothing
    assert texts_in_store(team) == {"r": "new text"}


class RecordingRows:
    """A consumer's rows kept out of the reconcile: it asks for them by id; every ask is
    recorded (and ``fail`` makes one raise)."""

    def __init__(self, rows: dict[str, str], fail: bool = False) -> None:
        self.rows = rows
        self.fail = fail
        self.asked: list[list[str]] = []
        self._lock = threading.Lock()

    def __call__(self, refs: Any) -> dict[str, tuple[str, dict[str, Any] | None]]:
        with self._lock:
            self.asked.append(list(refs))
        if self.fail:
            raise OSError("the rows are unreadable")
        return {ref: (self.rows[ref], None) for ref in refs if ref in self.rows}


def test_reconcile_ids_reads_only_the_missing_rows_a_batch_at_a_time(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Handed ids, the reconcile asks for the text of the rows the store lacks alone — never
    a held row's — two at a time, the next batch only once the previous one is embedded; an
    id the rows no longer hold is skipped."""
    monkeypatch.setattr(SemanticIndex, "reconcile_batch", 2)
    embedder = GatedEmbedder(hold={"gamma"})
    notes, _ = start_notes(team, embedder=embedder)
    embedder.gate.set()
    notes.add("a", "alpha")
    notes.add("b", "beta")
    wait_workers_stopped(team, 2)
    embedder.gate.clear()
    rows = RecordingRows({"a": "alpha", "b": "beta", "c": "gamma", "d": "delta", "f": "phi"})

    notes.reconcile_ids(["a", "b", "c", "d", "e", "f"], rows)
    embedder.wait_entered("gamma")  # the first batch is embedding: held
    assert rows.asked == [["c", "d"]]  # not the held rows, and no second batch yet
    embedder.gate.set()
    wait_workers_stopped(team, 5)  # the two writes, the listing and the two batches

    assert texts_in_store(team) == {
        "a": "alpha",
        "b": "beta",
        "c": "gamma",
        "d": "delta",
        "f": "phi",
    }
    assert rows.asked == [["c", "d"], ["e", "f"]]
    assert [texts for texts, _ in embedder.calls[2:]] == [["gamma", "delta"], ["phi"]]


def test_reconcile_ids_whose_rows_cannot_be_read_embeds_nothing_and_frees_them(
    team: Team,
) -> None:
    """A failed read leaves the missing rows unindexed (the next start tries again) and
    their ids free: a later write of one is applied."""
    embedder = FakeEmbedder()
    notes, _ = start_notes(team, embedder=embedder)
    rows = RecordingRows({"c": "gamma"}, fail=True)
    notes.reconcile_ids(["c"], rows)
    wait_workers_stopped(team, 1)  # the listing worker, which asked for the rows
    assert rows.asked == [["c"]]
    notes.add("c", "gamma again")
    wait_workers_stopped(team, 2)
    assert texts_in_store(team) == {"c": "gamma again"}
    assert embedded(embedder) == ["gamma again"]


def test_reconcile_does_nothing_without_a_semantic_index(
    team: Team, monkeypatch: pytest.MonkeyPatch
) -> None:
    spawned: list[Any] = []
    monkeypatch.setattr(SemanticIndex, "_spawn", lambda self, *a, **k: spawned.append(a))
    notes, _ = start_notes(team, embedder=None)
    notes.reconcile({"a": "alpha"})
    assert spawned == []


def test_reconcile_embeds_again_a_row_the_store_holds_with_an_older_text(
    team: Team, tmp_path: Any
) -> None:
    """An update whose embedding a crash dropped leaves the old text under the row's id
    (Qdrant local mode on disk): the id is held, the text is not the consumer's."""
    notes, embedder, store = on_disk(team, tmp_path)
    team_id = str(team.orchestrator.team_id)
    try:
        notes.add("kept", "alpha beta")
        notes.add("old", "alpha beta")
        wait_workers_stopped(team, 2)
        before = len(embedded(embedder))

        notes.reconcile({"kept": "alpha beta", "old": "gamma delta"})
        team.recorder.wait_for(
            lambda: (
                store.ref_texts("notes", team_id) == {"kept": "alpha beta", "old": "gamma delta"}
            )
        )

        assert embedded(embedder)[before:] == ["gamma delta"]  # the stale row only
        assert next(iter(notes.search("gamma delta", 2))) == "old"
    finally:
        close_client(store.key)


# -- what an embedder answers is checked before any store sees it -----------------------------


class PoisonEmbedder(FakeEmbedder):
    """The hashed bag of words, but infinity in the vector of a text saying "poison", and
    the zero vector for one saying "void" — what a broken embedding endpoint may answer."""

    def embed(self, texts: Sequence[str], timeout: float | None = None) -> list[list[float]]:
        vectors = super().embed(texts, timeout)
        return [
            [math.inf, *v[1:]] if "poison" in t else [0.0] * len(v) if "void" in t else v
            for t, v in zip(texts, vectors, strict=True)
        ]


@pytest.mark.parametrize("backend", ["inmemory", "qdrant"])
def test_a_vector_not_finite_or_zero_never_reaches_the_store(
    team: Team, tmp_path: Any, backend: str
) -> None:
    """Qdrant took ``[inf, …]`` (and the zero vector) as a row, and then answered every
    query with it first, scored NaN; in memory it became a NaN row."""
    config = (
        VectorStoreConfig(backend="qdrant", path=str(tmp_path / "q"))
        if backend == "qdrant"
        else None
    )
    notes, _ = start_notes(
        team,
        embedder=PoisonEmbedder(),
        param=VectorStoreParam(backend=backend, query_timeout=30.0),
        config=config,
    )
    try:
        notes.add("good", "alpha beta")
        notes.add("bad", "alpha poison")
        notes.add("empty", "alpha void")
        wait_workers_stopped(team, 3)
        found = notes.search("alpha beta", 5)
        assert list(found) == ["good"] and all(math.isfinite(s) for s in found.values())
        assert notes.search("poison", 5) == {}  # a query vector like it: the degraded answer
    finally:
        if config is not None:
            close_client(QdrantBackend(config).key)

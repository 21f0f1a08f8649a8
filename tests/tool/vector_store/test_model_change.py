"""A team whose embedding model changes between runs: its start embeds the stored rows
again with the model in force, once.

Every row records the embedder that made its vector. A consumer's start (``reconcile``)
embeds again the rows of another model — the store re-created first where the dimension
changed — with one warning line; a row that recorded no model (a store written before
rows recorded it) counts as another model, once; the rows of the model in force cost no
embedding. Queries answer ``{}`` (keyword ranking) while it runs.

Each "run" is a consumer actor bound to the same collection of the same store: the
team's ``#VectorStore`` in memory, or a Qdrant local folder on disk whose client is
closed between the runs (as a new process would open it).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from akgentic.core import Akgent, BaseConfig, BaseState
from akgentic.tool.vector_store import (
    STORE_ACTOR_NAME,
    EmbeddingService,
    HeldRow,
    InMemoryBackend,
    QdrantBackend,
    SemanticIndex,
    VectorEntry,
    VectorStoreActor,
    VectorStoreConfig,
    VectorStoreConfigError,
    VectorStoreParam,
    WeaviateBackend,
    close_client,
    get_client,
    point_id,
)
from akgentic.tool.vector_store.backends.inmemory import decode_vector
from tests.core.conftest import eventually

from ..conftest import Team
from .conftest import DIM, FakeEmbedder, bag_of_words
from .test_semantic import persisted_store
from .weaviate_fake import OLD_PROPERTIES, Collection, FakeWeaviate

COLLECTION = "notes"
ROWS = {
    "r1": "write the quarterly revenue report",
    "r2": "fix the login bug in the web app",
    "r3": "book travel to the Paris conference",
}


class ModelEmbedder(FakeEmbedder):
    """The hashed bag of words of ``dim`` dimensions, under the model name ``name``;
    ``fail`` and ``hold`` act on the calls embedding a stored row (never a query)."""

    def __init__(self, name: str, dim: int = DIM, *, fail: bool = False) -> None:
        super().__init__()
        self.name = name  # type: ignore[misc]
        self.dimension = dim
        self.fail = fail
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()

    def embed(self, texts: Sequence[str], timeout: float | None = None) -> list[list[float]]:
        with self._lock:
            self.calls.append((list(texts), timeout))
        if set(texts) & set(ROWS.values()):
            self.entered.set()
            if not self.gate.wait(60):
                raise TimeoutError("gate never opened")
            if self.fail:
                raise ConnectionError("embedder down")
        return [bag_of_words(t, self.dimension or DIM) for t in texts]

    def embedded(self) -> list[str]:
        return [text for texts, _ in self.calls for text in texts]


@dataclass
class Wiring:
    """What each run's consumer binds with (read in its on_start)."""

    embedders: dict[str, EmbeddingService] = field(default_factory=dict)
    param: VectorStoreParam = field(
        default_factory=lambda: VectorStoreParam(backend="inmemory", query_timeout=30.0)
    )
    config: VectorStoreConfig | None = None


wiring = Wiring()


class Run(Akgent[BaseConfig, BaseState]):
    """A consumer tool actor, bound on its own thread as a card's actor is."""

    def on_start(self) -> None:
        self.index = SemanticIndex.bind(
            wiring.param,
            self,
            collection=COLLECTION,
            embedder=wiring.embedders[self.myAddress.name],
            config=wiring.config,
        )

    def add(self, ref_id: str, text: str) -> None:
        self.index.upsert(ref_id, text)

    def reconcile(self, rows: dict[str, str], done: Callable[[bool], None]) -> None:
        self.index.reconcile({ref: (text, None) for ref, text in rows.items()}, done=done)

    def search(self, query: str, k: int) -> dict[str, float]:
        return self.index.similar(query, k)

    def renewing(self) -> int:
        return self.index._sequencer.renewing

    def watch(self) -> None:
        """Begin a start pass that gathers its ids before it reconciles (the workspace's)."""
        self.pass_watch = self.index.watch()

    def reconcile_since(self, rows: dict[str, str], done: Callable[[bool], None]) -> None:
        source = {ref: (text, None) for ref, text in rows.items()}
        self.index.reconcile_ids(
            source, lambda refs: {r: source[r] for r in refs}, since=self.pass_watch, done=done
        )

    def settled(self, ref_id: str) -> bool:
        """Whether no write of ``ref_id`` is on its way (applied, refused or dropped)."""
        return ref_id not in self.index._sequencer._latest

    def parked(self) -> int:
        """How many writes wait behind a reconcile for the store to take their dimension."""
        return len(self.index._sequencer._parked)


class Store:
    """The store under test, seen from outside: its rows' models and vector lengths."""

    def __init__(self, team: Team, backend: str, tmp_path: Any) -> None:
        self.team = team
        self.backend = backend
        self.team_id = str(team.orchestrator.team_id)
        self.config = (
            VectorStoreConfig(backend="qdrant", path=str(tmp_path / "qdrant"))
            if backend == "qdrant"
            else None
        )

    def qdrant(self) -> QdrantBackend:
        assert self.config is not None
        return QdrantBackend(self.config)

    def actor(self) -> Any:
        """The team's ``#VectorStore`` (created if no run bound it yet)."""
        address = self.team.proxy.getChildrenOrCreate(
            VectorStoreActor, BaseConfig(name=STORE_ACTOR_NAME)
        )
        return self.team.system.proxy_ask(address, VectorStoreActor, timeout=30)

    def models(self) -> dict[str, str]:
        """``ref_id -> model`` of the team's rows."""
        store = self.qdrant() if self.backend == "qdrant" else self.actor()
        rows = store.ref_rows(COLLECTION, self.team_id)
        return {ref: row.model for ref, row in rows.items()}

    def dimensions(self) -> set[int]:
        """The lengths of the vectors the store holds for the team (Qdrant: the
        collection's, which fixes them)."""
        if self.backend == "qdrant":
            backend = self.qdrant()
            with backend._handle as client:
                info = client.get_collection("akgentic_" + COLLECTION)
            return {int(info.config.params.vectors.size)}
        self.actor().count()  # a round trip: every tell sent to it before is applied
        address = self.team.proxy.get_team_member(STORE_ACTOR_NAME)
        rows = self.team.system.get_actor(address).state.collections.get(COLLECTION, {})
        return {len(decode_vector(row.vector)) for row in rows.values()}

    def seed_unrecorded(self) -> None:
        """The rows as a store written before rows recorded their model holds them."""
        entries = [
            VectorEntry(ref_id=ref, text=text, vector=bag_of_words(text))
            for ref, text in ROWS.items()
        ]
        if self.backend == "qdrant":
            self.qdrant().upsert(COLLECTION, self.team_id, entries)
            self.next_process()
        else:
            self.actor().upsert(COLLECTION, self.team_id, entries)

    def next_process(self) -> None:
        """Qdrant: close the folder's client, so the next run opens it from disk."""
        if self.config is not None:
            close_client(self.qdrant().key)


@pytest.fixture(autouse=True)
def fresh_wiring() -> None:
    global wiring
    wiring = Wiring()


@pytest.fixture(params=["inmemory", "qdrant"])
def store(request: pytest.FixtureRequest, team: Team, tmp_path: Any) -> Iterator[Store]:
    found = Store(team, request.param, tmp_path)
    if found.config is not None:
        wiring.param = VectorStoreParam(backend="qdrant", query_timeout=30.0)
        wiring.config = found.config
    yield found
    found.next_process()


def start(team: Team, name: str, embedder: EmbeddingService) -> Run:
    wiring.embedders[name] = embedder
    address = team.proxy.getChildrenOrCreate(Run, BaseConfig(name=name))
    proxy: Run = team.system.proxy_ask(address, Run, timeout=30)
    proxy.renewing()  # a round trip: on_start (the bind) has run
    return proxy


def first_run(team: Team, store: Store, embedder: EmbeddingService) -> None:
    """``#Run1`` indexes :data:`ROWS` with ``embedder``; its process ends."""
    run = start(team, "#Run1", embedder)
    for ref, text in ROWS.items():
        run.add(ref, text)
    eventually(lambda: set(store.models()) == set(ROWS))
    store.next_process()


class Outcome:
    """A reconcile's ``done``: what it was told, and an event to wait on."""

    def __init__(self) -> None:
        self.told: list[bool] = []
        self.finished = threading.Event()

    def __call__(self, ok: bool) -> None:
        self.told.append(ok)
        self.finished.set()

    def wait(self) -> list[bool]:
        assert self.finished.wait(30), "the reconcile never ended"
        return self.told


def reconciled(run: Run) -> list[bool]:
    """Reconcile :data:`ROWS` through ``run``, and wait for its end: what it told."""
    outcome = Outcome()
    run.reconcile(ROWS, outcome)
    return outcome.wait()


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "embedded again" in r.getMessage()]


@pytest.fixture
def caplog_warnings(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="akgentic.tool.vector_store")
    return caplog


# -- what a start does to the rows of another model ---------------------------------------------


def test_the_same_model_again_embeds_no_stored_row(
    team: Team, store: Store, caplog_warnings: pytest.LogCaptureFixture
) -> None:
    first_run(team, store, ModelEmbedder("fake:a"))
    again = ModelEmbedder("fake:a")  # the same model, in a new process
    run = start(team, "#Run2", again)
    assert reconciled(run) == [True]

    assert again.embedded() == []
    assert store.models() == dict.fromkeys(ROWS, "fake:a")
    assert said(caplog_warnings) == []
    assert next(iter(run.search("login bug", 3))) == "r2"


def test_another_model_of_the_same_dimension_embeds_every_row_again(
    team: Team, store: Store, caplog_warnings: pytest.LogCaptureFixture
) -> None:
    """Same dimension: nothing refuses the old vectors, their cosines to a query of the
    new model are merely meaningless — the start replaces them."""
    first_run(team, store, ModelEmbedder("fake:a"))
    other = ModelEmbedder("fake:b")
    run = start(team, "#Run2", other)
    assert reconciled(run) == [True]

    assert sorted(other.embedded()) == sorted(ROWS.values())
    assert store.models() == dict.fromkeys(ROWS, "fake:b")
    assert store.dimensions() == {DIM}
    assert said(caplog_warnings) == [
        "#Run2: 3 rows embedded with fake:a are embedded again with fake:b"
    ]
    assert next(iter(run.search("login bug", 3))) == "r2"


def test_another_dimension_re_creates_the_store_and_embeds_every_row_again(
    team: Team, store: Store, caplog_warnings: pytest.LogCaptureFixture
) -> None:
    """A vector of another length was refused by every write, and every query fell back
    to keyword ranking, for good: the start makes the store take the new dimension."""
    first_run(team, store, ModelEmbedder("fake:a", DIM))
    other = ModelEmbedder("fake:small", 16)
    run = start(team, "#Run2", other)
    assert reconciled(run) == [True]

    assert sorted(other.embedded()) == sorted(ROWS.values())
    assert store.models() == dict.fromkeys(ROWS, "fake:small")
    assert store.dimensions() == {16}
    assert said(caplog_warnings) == [
        "#Run2: 3 rows embedded with fake:a are embedded again with fake:small"
    ]
    assert next(iter(run.search("login bug", 3))) == "r2"
    run.add("r4", "plan the login redesign")  # a write of the new model is taken
    eventually(lambda: store.models().get("r4") == "fake:small")


def test_a_store_that_recorded_no_model_is_embedded_again_once(
    team: Team, store: Store, caplog_warnings: pytest.LogCaptureFixture
) -> None:
    """Rows written before rows recorded their model are of a model nobody can name: the
    first start embeds them again, and no later one does."""
    store.seed_unrecorded()
    assert store.models() == dict.fromkeys(ROWS, "")
    embedder = ModelEmbedder("fake:a")
    assert reconciled(start(team, "#Run2", embedder)) == [True]

    assert sorted(embedder.embedded()) == sorted(ROWS.values())
    assert store.models() == dict.fromkeys(ROWS, "fake:a")
    assert said(caplog_warnings) == [
        "#Run2: 3 rows embedded with an unrecorded model are embedded again with fake:a"
    ]

    store.next_process()
    later = ModelEmbedder("fake:a")
    assert reconciled(start(team, "#Run3", later)) == [True]
    assert later.embedded() == []
    assert len(said(caplog_warnings)) == 1


# -- queries while it runs, and when it fails ---------------------------------------------------


def test_queries_rank_by_keyword_while_the_rows_are_embedded_again(
    team: Team, store: Store
) -> None:
    first_run(team, store, ModelEmbedder("fake:a"))
    other = ModelEmbedder("fake:b")
    other.gate.clear()
    run = start(team, "#Run2", other)
    outcome = Outcome()
    run.reconcile(ROWS, outcome)
    assert other.entered.wait(30)  # listed, found of another model, embedding: held

    assert run.search("login bug", 3) == {}  # the degraded answer: keyword ranking
    assert "login bug" not in other.embedded()  # not even embedded
    other.gate.set()
    assert outcome.wait() == [True]
    assert next(iter(run.search("login bug", 3))) == "r2"


def test_a_failed_embedding_again_leaves_no_answer_mixing_two_models(
    team: Team, store: Store
) -> None:
    """The new model's endpoint fails: the rows stay of the old model, and a query of the
    new one answers ``{}`` rather than cosines between two models' vectors; the next start
    tries again."""
    first_run(team, store, ModelEmbedder("fake:a"))
    down = ModelEmbedder("fake:b", fail=True)
    run = start(team, "#Run2", down)
    assert reconciled(run) == [False]

    assert store.models() == dict.fromkeys(ROWS, "fake:a")
    assert run.renewing() == 0
    assert run.search("login bug", 3) == {}
    assert "login bug" in down.embedded()  # it was asked: the old rows refused its answer

    store.next_process()
    up = ModelEmbedder("fake:b")
    assert reconciled(start(team, "#Run3", up)) == [True]
    assert store.models() == dict.fromkeys(ROWS, "fake:b")


def test_a_write_while_the_store_takes_a_new_dimension_waits_and_is_then_written(
    team: Team, store: Store
) -> None:
    """An agent's write of the new model, made before the store took the new dimension,
    waits behind the re-embedding (the store holding the old dimension would refuse it)
    and is written once the dimension is taken — in this run, found by its vector."""
    first_run(team, store, ModelEmbedder("fake:a", DIM))
    other = ModelEmbedder("fake:small", 16)
    other.gate.clear()
    run = start(team, "#Run2", other)
    outcome = Outcome()
    run.reconcile(ROWS, outcome)
    assert other.entered.wait(30)  # the re-embedding is held: the store is still of DIM

    run.add("r4", "plan the login redesign")
    eventually(lambda: run.parked() == 1)
    assert "r4" not in store.models()
    other.gate.set()
    assert outcome.wait() == [True]

    eventually(lambda: store.models().get("r4") == "fake:small")
    assert run.parked() == 0
    assert store.models() == dict.fromkeys([*ROWS, "r4"], "fake:small")
    assert store.dimensions() == {16}
    assert next(iter(run.search("plan the login redesign", 4))) == "r4"


def test_a_write_the_old_dimension_refused_while_a_start_pass_gathered_its_ids_is_embedded_again(
    team: Team, store: Store, caplog_warnings: pytest.LogCaptureFixture
) -> None:
    """A pass that gathers its ids before it reconciles (``watch``, then ``reconcile_ids(
    since=...)``: the workspace's) leaves the rows written meanwhile to those writes — and
    does not hold them, so a changed document is found before the pass ends. One the
    store refused for its old dimension is no write to leave it to: the reconcile, which
    makes the store take the new dimension, embeds it again, in this run."""
    first_run(team, store, ModelEmbedder("fake:a", DIM))
    run = start(team, "#Run2", ModelEmbedder("fake:small", 16))
    run.watch()
    run.add("r4", "plan the login redesign")
    eventually(lambda: run.settled("r4"))  # the store refused it: 16 into 32 dimensions
    assert "r4" not in store.models()

    outcome = Outcome()
    run.reconcile_since(ROWS | {"r4": "plan the login redesign"}, outcome)
    assert outcome.wait() == [True]

    assert store.models() == dict.fromkeys([*ROWS, "r4"], "fake:small")
    assert next(iter(run.search("plan the login redesign", 4))) == "r4"
    assert said(caplog_warnings) == [
        "#Run2: 3 rows embedded with fake:a are embedded again with fake:small"
    ]


@pytest.mark.parametrize("dim", [DIM, 16], ids=["same-dimension", "new-dimension"])
def test_a_write_held_behind_a_failed_re_embedding_is_still_written(
    team: Team, store: Store, dim: int
) -> None:
    """The pass fails (the endpoint refuses the old rows): the write it held is written
    all the same when it ends, never left parked — the store taking its dimension first
    (the old rows, of no use to this model, go: the next start embeds them again)."""
    first_run(team, store, ModelEmbedder("fake:a", DIM))
    down = ModelEmbedder("fake:b", dim, fail=True)
    down.gate.clear()
    run = start(team, "#Run2", down)
    outcome = Outcome()
    run.reconcile(ROWS, outcome)
    assert down.entered.wait(30)

    run.add("r4", "plan the login redesign")
    eventually(lambda: run.parked() == 1)
    down.gate.set()
    assert outcome.wait() == [False]

    eventually(lambda: store.models().get("r4") == "fake:b")
    assert run.parked() == 0
    kept = {ref: "fake:a" for ref in ROWS} if dim == DIM else {}
    assert store.models() == kept | {"r4": "fake:b"}
    assert store.dimensions() == {dim}
    if dim != DIM:  # only rows of this model: the search is by vector again
        assert next(iter(run.search("plan the login redesign", 4))) == "r4"

    store.next_process()
    outcome = Outcome()
    start(team, "#Run3", ModelEmbedder("fake:b", dim)).reconcile(
        ROWS | {"r4": "plan the login redesign"}, outcome
    )
    assert outcome.wait() == [True]
    assert store.models() == dict.fromkeys([*ROWS, "r4"], "fake:b")


def test_the_dimension_change_is_persisted_with_the_team(team: Team, tmp_path: Any) -> None:
    """In memory the rows are the ``#VectorStore``'s state, persisted as deltas: the rows
    dropped for the new dimension are in the team's log too, so a restore holds the new
    model's rows alone."""
    found = Store(team, "inmemory", tmp_path)
    first_run(team, found, ModelEmbedder("fake:a", DIM))
    assert reconciled(start(team, "#Run2", ModelEmbedder("fake:small", 16))) == [True]
    found.dimensions()  # a round trip: the store applied every write

    def persisted() -> dict[str, tuple[str, int]]:
        state = persisted_store(team)
        assert state is not None
        rows = state.collections[COLLECTION].values()
        return {r.ref_id: (r.model, len(decode_vector(r.vector))) for r in rows}

    team.recorder.wait_for(lambda: persisted() == dict.fromkeys(ROWS, ("fake:small", 16)))
    address = team.proxy.get_team_member(STORE_ACTOR_NAME)
    assert persisted_store(team) == team.system.get_actor(address).state


# -- what each backend drops for a new dimension -------------------------------------------------


def test_in_memory_a_new_dimension_drops_that_scope_s_rows_alone() -> None:
    """In memory each (collection, team, tenant) is an index of its own: the others keep
    their rows and their dimension."""
    backend = InMemoryBackend()
    backend.upsert(COLLECTION, "t1", [VectorEntry(ref_id="a", text="a", vector=[1.0, 0.0])])
    backend.upsert(COLLECTION, "t2", [VectorEntry(ref_id="b", text="b", vector=[1.0, 0.0])])
    backend.upsert(COLLECTION, "t1", [VectorEntry(ref_id="c", text="c", vector=[0.0, 1.0])], "x")

    assert backend.adopt_dimension(COLLECTION, "t1", 3) == 1
    assert backend.ref_ids(COLLECTION, "t1") == set()
    assert backend.ref_ids(COLLECTION, "t2") == {"b"}
    assert backend.ref_ids(COLLECTION, "t1", "x") == {"c"}
    backend.upsert(COLLECTION, "t1", [VectorEntry(ref_id="a", text="a", vector=[1.0, 0, 0])])
    assert [h.ref_id for h in backend.query(COLLECTION, "t2", [1.0, 0.0], 5)] == ["b"]


def test_qdrant_a_new_dimension_re_creates_a_collection_only_the_scope_s_rows_live_in(
    tmp_path: Any,
) -> None:
    """Qdrant fixes a collection's dimension: a new one re-creates it, dropping its points
    — never while another team's (or tenant's) points live in it, which that would drop
    too: refused, in one line saying what to do, and nothing goes. Another collection is
    left alone."""
    backend = QdrantBackend(VectorStoreConfig(backend="qdrant", path=str(tmp_path / "q")))
    try:
        backend.upsert(COLLECTION, "t1", [VectorEntry(ref_id="a", text="a", vector=[1.0, 0.0])])
        backend.upsert(COLLECTION, "t2", [VectorEntry(ref_id="b", text="b", vector=[1.0, 0.0])])
        backend.upsert("other", "t1", [VectorEntry(ref_id="c", text="c", vector=[1.0, 0.0])])

        with pytest.raises(VectorStoreConfigError) as refused:
            backend.adopt_dimension(COLLECTION, "t1", 3)
        assert str(refused.value) == (
            "the Qdrant collection akgentic_notes holds 1 row of other teams (or tenants) in "
            "2 dimensions, and this team's embedding model makes 3: it is not re-created for "
            "one team, as that would drop theirs. Give this team its own collection "
            "(vector_store: {collection: <a name of its own>} in its card), embed with the "
            "model those teams use, or — every team moving to this model — delete "
            "akgentic_notes once: each team's next start embeds its rows again"
        )
        assert backend.ref_ids(COLLECTION, "t1") == {"a"}
        assert backend.ref_ids(COLLECTION, "t2") == {"b"}
        backend.upsert(COLLECTION, "t1", [VectorEntry(ref_id="d", text="d", vector=[1, 0.0])], "x")
        backend.delete(COLLECTION, "t2", ["b"])  # that team moved to its own collection
        with pytest.raises(VectorStoreConfigError, match="1 row of other teams"):
            backend.adopt_dimension(COLLECTION, "t1", 3)  # t1's rows of tenant x live there
        backend.delete(COLLECTION, "t1", ["d"], "x")

        assert backend.adopt_dimension(COLLECTION, "t1", 3) == 1
        assert backend.ref_ids(COLLECTION, "t1") == set()
        assert backend.ref_ids("other", "t1") == {"c"}
        backend.upsert(COLLECTION, "t1", [VectorEntry(ref_id="a", text="a", vector=[1.0, 0, 0])])
        assert [h.ref_id for h in backend.query(COLLECTION, "t1", [1.0, 0.0, 0.0], 5)] == ["a"]
        assert backend.adopt_dimension(COLLECTION, "t2", 3) == 0  # it holds 3 now
    finally:
        close_client(backend.key)


def test_an_old_in_memory_state_opens_with_no_model_recorded() -> None:
    """A ``#VectorStore`` snapshot written before rows recorded their model decodes: its
    rows are of an unrecorded model (``""``), which a start embeds again once."""
    from akgentic.tool.vector_store.backends.inmemory import VectorStoreState, encode_vector

    row = {"ref_id": "a", "text": "alpha", "team_id": "t1", "vector": encode_vector([1.0, 0.0])}
    state = VectorStoreState.model_validate({"collections": {COLLECTION: {"pid": row}}})
    assert InMemoryBackend(state).ref_rows(COLLECTION, "t1") == {"a": HeldRow("alpha", "")}


# -- Weaviate: the same path, on a stand-in for its client (no server here) -----------------------

WEAVIATE = VectorStoreConfig(backend="weaviate", url="http://weaviate.test:8080")
OLD_COLLECTION = "Akgentic_" + COLLECTION


@pytest.fixture
def weaviate() -> Iterator[FakeWeaviate]:
    """The stand-in, cached as the client of :data:`WEAVIATE`; the runs bind that store."""
    fake = FakeWeaviate()
    key = WeaviateBackend(WEAVIATE).key
    assert get_client(key, lambda: fake) is fake
    wiring.param = VectorStoreParam(backend="weaviate", query_timeout=30.0)
    wiring.config = WEAVIATE
    yield fake
    close_client(key)


def old_collection(
    fake: FakeWeaviate, team_id: str, dim: int = DIM, *, others: bool = True
) -> Collection:
    """``Akgentic_notes`` as a cluster holds it from before rows recorded their model:
    no ``model`` property, :data:`ROWS` of ``dim`` dimensions, and (``others``) another
    team's row."""
    properties = [SimpleNamespace(name=p) for p in OLD_PROPERTIES]
    old = fake.collections.create(OLD_COLLECTION, properties)
    rows = {(team_id, ref): text for ref, text in ROWS.items()}
    rows |= {("other", "o1"): "theirs"} if others else {}
    for (team, ref), text in rows.items():
        props = {"ref_id": ref, "text": text, "metadata": "{}", "team_id": "=" + team}
        old.put(point_id(team, "", ref), props | {"tenant": "="}, bag_of_words(text, dim))
    return old


def weaviate_models(team_id: str) -> dict[str, str]:
    rows = WeaviateBackend(WEAVIATE).ref_rows(COLLECTION, team_id)
    return {ref: row.model for ref, row in rows.items()}


def test_weaviate_an_old_collection_of_another_dimension_is_re_created_and_embedded_again(
    team: Team, weaviate: FakeWeaviate, caplog_warnings: pytest.LogCaptureFixture
) -> None:
    team_id = str(team.orchestrator.team_id)
    old_collection(weaviate, team_id, others=False)
    embedder = ModelEmbedder("fake:small", 16)
    run = start(team, "#Run2", embedder)
    assert reconciled(run) == [True]

    assert sorted(embedder.embedded()) == sorted(ROWS.values())
    assert weaviate_models(team_id) == dict.fromkeys(ROWS, "fake:small")
    renewed = weaviate.collections.get(OLD_COLLECTION)
    assert renewed.dimension == 16 and "model" in renewed.properties
    assert weaviate.collections.created == [OLD_COLLECTION, OLD_COLLECTION]  # re-created
    assert said(caplog_warnings) == [
        "#Run2: 3 rows embedded with an unrecorded model are embedded again with fake:small"
    ]
    assert next(iter(run.search("login bug", 3))) == "r2"

    later = ModelEmbedder("fake:small", 16)
    assert reconciled(start(team, "#Run3", later)) == [True]
    assert later.embedded() == []


def test_weaviate_a_collection_other_teams_rows_live_in_is_not_re_created_for_one(
    team: Team, weaviate: FakeWeaviate, caplog_warnings: pytest.LogCaptureFixture
) -> None:
    """Another team's row lives in the collection: a new dimension for this team would
    drop it. The pass is refused in one line saying what to do; nothing goes — the other
    team's row, this team's rows (of the old model, so its queries rank by keyword) — and
    the next start, the card unchanged, is refused the same way."""
    team_id = str(team.orchestrator.team_id)
    old = old_collection(weaviate, team_id)
    embedder = ModelEmbedder("fake:small", 16)
    run = start(team, "#Run2", embedder)
    assert reconciled(run) == [False]

    refusals = [r.getMessage() for r in caplog_warnings.records if "not re-created" in r.message]
    assert refusals == [
        "embedding 3 rows of notes failed: the Weaviate collection Akgentic_notes holds 1 row "
        f"of other teams (or tenants) in {DIM} dimensions, and this team's embedding model "
        "makes 16: it is not re-created for one team, as that would drop theirs. Give this "
        "team its own collection (vector_store: {collection: <a name of its own>} in its "
        "card), embed with the model those teams use, or — every team moving to this model "
        "— delete Akgentic_notes once: each team's next start embeds its rows again"
    ]
    assert weaviate.collections.get(OLD_COLLECTION) is old
    assert weaviate.collections.created == [OLD_COLLECTION]  # never re-created
    assert weaviate_models("other") == {"o1": ""}
    assert weaviate_models(team_id) == dict.fromkeys(ROWS, "")
    assert run.renewing() == 0
    assert run.search("login bug", 3) == {}

    assert reconciled(start(team, "#Run3", ModelEmbedder("fake:small", 16))) == [False]
    assert weaviate_models("other") == {"o1": ""}


def test_weaviate_an_old_collection_of_the_same_dimension_gains_the_model_property(
    team: Team, weaviate: FakeWeaviate
) -> None:
    """Same dimension: the collection stays (the other team's row too); it gains the
    ``model`` property, which the listing asks for, and the team's rows are embedded again
    in place."""
    team_id = str(team.orchestrator.team_id)
    old = old_collection(weaviate, team_id)
    embedder = ModelEmbedder("fake:a")
    assert reconciled(start(team, "#Run2", embedder)) == [True]

    assert sorted(embedder.embedded()) == sorted(ROWS.values())
    assert weaviate_models(team_id) == dict.fromkeys(ROWS, "fake:a")
    assert weaviate.collections.get(OLD_COLLECTION) is old and "model" in old.properties
    assert weaviate_models("other") == {"o1": ""}


def test_a_store_refusing_the_new_rows_ends_the_pass_and_lets_queries_back(
    team: Team, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cluster that refuses a write while the rows are embedded again (down, or a
    timeout) ends the pass as failed — its ``done`` is told, the rest of the batch is not
    written — rather than leaving it running, and semantic search off, for good."""
    found = Store(team, "qdrant", tmp_path)
    wiring.param = VectorStoreParam(backend="qdrant", query_timeout=30.0)
    wiring.config = found.config
    try:
        first_run(team, found, ModelEmbedder("fake:a"))
        run = start(team, "#Run2", ModelEmbedder("fake:b"))

        def refused(*args: Any, **kwargs: Any) -> None:
            raise ConnectionError("the cluster is down")

        monkeypatch.setattr(QdrantBackend, "upsert", refused)
        assert reconciled(run) == [False]
        assert run.renewing() == 0
        assert found.models() == dict.fromkeys(ROWS, "fake:a")
    finally:
        found.next_process()

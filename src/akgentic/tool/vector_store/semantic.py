"""SemanticIndex: the consumer facade over one collection of the team's vector store.

A consumer (PlanningTool's ``#PlanningTool``, KnowledgeGraphTool's
``#KnowledgeGraphTool``, …) binds one index per collection when it is wired, and
then indexes and queries its own rows by ``ref_id``::

    from akgentic.tool.vector_store import SemanticIndex, VectorStoreParam, hybrid_rank
    from akgentic.tool.vector_store.hybrid import keyword_scores

    # once, at wiring time (the observer is the consumer actor — an ActorToolObserver):
    index = SemanticIndex.bind(card.vector_store, observer, collection="planning")

    index.available                      # False when no embedder: keyword-only
    index.upsert("task-7", "Write the report", {"owner": "@writer"})  # fire-and-forget
    index.delete("task-7")                                            # fire-and-forget
    semantic = index.similar("draft the summary", k=10)  # ref_id -> cosine; {} degraded
    keyword = keyword_scores("draft the summary", {row.id: row.text for row in rows})
    ranked = hybrid_rank(keyword, semantic, index.alpha, k=10)

The contract:

- ``bind`` resolves the backend (``param.backend``, else ``"weaviate"`` when
  ``AKGENTIC_WEAVIATE_URL`` is set, else ``"inmemory"``) and validates it *now*: an
  unknown backend, ``"weaviate"`` without its URL, or a cluster client that is not
  installed raises :class:`VectorStoreConfigError` / ``ImportError`` at wiring — never
  a silent fall-back to a process-local index. When the backend keeps its data in
  actor state (``BackendSpec.persists_in_actor_state``: in memory) it binds the team's
  ``#VectorStore`` through :func:`ensure_store_actor` — get-or-create on the
  orchestrator, never check-then-create. Otherwise the index holds the backend object
  itself, over the process-wide shared client.
- The team is the observer's (``observer.team_id``), never a card's: every row is
  stamped with it, and queries only see that team's rows (and ``tenant``'s).
- ``upsert`` and ``delete`` never block the caller on the embedder or a cluster: an
  ``EmbeddingWorker`` named ``#embed-<collection>-<request_id>`` is spawned for the
  consumer — as the consumer's child when called on the consumer's own thread, else
  by the orchestrator on its thread (an actor's children are only touched by that
  actor) — and does the slow work under its own timeout, handed to the I/O client.
  Safe from any thread. Writes to one ``ref_id`` are
  applied in call order: a slow upsert overtaken by a later upsert or delete is
  dropped, never resurrected. Failures are logged, never raised.
- ``similar`` embeds the query in a worker and polls for it with a bounded budget
  (``param.query_timeout``) on the *caller's* thread — call it from the tool closure
  (the agent's thread) rather than inside a tool-actor method, or accept that bounded
  wait there. It returns ``ref_id -> cosine`` for the ``k`` nearest rows, and ``{}``
  — the degraded answer — when unavailable, on timeout or on any failure. Query
  vectors are cached (LRU), concurrent identical queries share one worker, and an
  embedder failure switches semantic search off for ``negative_ttl`` seconds instead
  of respawning a worker per call.
- ``available`` is False when no embedder could be resolved (or the in-memory backend
  lacks numpy): the consumer is keyword-only, ``upsert`` and ``similar`` do nothing.
- ``bind`` starts loading a model that is not loaded yet on a daemon thread, once per
  embedder at a time (:func:`start_warm_up`); no stop waits for it. A job that needs an
  embedding while the model loads waits for the load *without a worker*: it is started
  when the load ends (by the orchestrator, off the consumer's thread), so no actor —
  and no stop waiting for its children — is held by a load. A team stopped meanwhile
  drops the job, as it drops any write it abandons; the next start reconciles.
- ``reconcile(rows)`` — called by a consumer starting with restored rows — indexes the
  rows the store lacks or holds with an older text, and deletes the ones it holds for
  nothing (a write or a delete a stop or a crash dropped), without embedding a row
  already indexed: one listing (``ref_rows``, else ``ref_texts``, else
  ``VectorStore.ref_ids``) in a worker when nothing is missing. Every row records the
  embedder that made its vector; rows of another model (the model changed between
  runs, or an older store recorded none) are embedded again, the store re-created for a
  new dimension first, and queries answer ``{}`` meanwhile. From the call until the
  store can take the model's vectors, the scope's other writes are parked, then written
  — never refused by a store still holding the old dimension. ``reconcile_ids(ids,
  fetch)`` is the same for a consumer whose rows are not in memory: it holds the ids,
  and reads only the missing rows' text, a bounded batch at a time.
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final, NamedTuple
from uuid import uuid4

from akgentic.core import ActorAddress, Orchestrator, current_actor
from akgentic.core.words import counted
from akgentic.tool.core.deferred import poll_deferred
from akgentic.tool.core.observer import ActorToolObserver
from akgentic.tool.core.services import services_for
from akgentic.tool.vector_store.actor import VectorStoreActor, ensure_store_actor
from akgentic.tool.vector_store.embedding_actor import (
    EmbeddingJob,
    EmbeddingWorker,
    EmbeddingWorkerConfig,
)
from akgentic.tool.vector_store.params import VectorStoreParam
from akgentic.tool.vector_store.protocol import (
    HeldRow,
    VectorStore,
    VectorStoreConfig,
    VectorStoreConfigError,
    check_collection_name,
)
from akgentic.tool.vector_store.registry import BackendSpec, get_backend
from akgentic.tool.vector_store.vector import (
    EmbeddingService,
    VectorEntry,
    get_embedding_service,
    start_warm_up,
)

if TYPE_CHECKING:
    from akgentic.tool.vector_store.protocol import SearchHit

__all__ = ["AUTO", "Fetch", "Row", "SemanticIndex", "WriteWatch"]

logger = logging.getLogger("akgentic.tool.vector_store")


class _Auto:
    def __repr__(self) -> str:
        return "AUTO"


Prepare = Callable[[EmbeddingWorker | None, int], None]
"""What runs before parked writes are written: ``(worker, their dimension)``."""

Row = tuple[str, dict[str, Any] | None]
"""A row as a consumer gives it: ``(text, metadata)``."""

Fetch = Callable[[Sequence[str]], Mapping[str, Row]]
"""``ref_ids -> {ref_id: row}``: the rows :meth:`SemanticIndex.reconcile_ids` must embed,
read when it needs them (an id left out is skipped)."""

AUTO: Final = _Auto()
"""``bind(embedder=AUTO)``: resolve the embedder from ``param.embedding``."""


class _Slot:
    """Where a query worker leaves its vector; the caller waits on it, bounded."""

    __slots__ = ("_event", "error", "vector")

    def __init__(self) -> None:
        self._event = threading.Event()
        self.vector: list[float] | None = None
        self.error: str | None = None

    def fill(self, vector: list[float] | None, error: str | None) -> None:
        self.vector, self.error = vector, error
        self._event.set()

    def wait(self, seconds: float) -> list[float] | None:
        """The vector once delivered (waits at most ``seconds``); None otherwise."""
        self._event.wait(seconds)
        return self.vector


class _Listed(NamedTuple):
    """A held row as a listing gave it: its text and model, None where the store's
    listing does not say (never compared)."""

    text: str | None
    model: str | None


class _Hold:
    """One reconcile's hold on its scope's writes, from its call until the store can take
    the vectors of the model in force: lifted once its listing found no row of another
    model, once the store took the new dimension, or when the pass ends however it ends —
    at most once, so a lift on every exit path is safe."""

    def __init__(self, sequencer: _Sequencer) -> None:
        self._sequencer = sequencer
        self._lifted = False
        self._lock = threading.Lock()
        self.prepare: Prepare | None = None
        """Run before the parked writes, with their dimension: the renewing reconcile's
        adoption, so a pass that failed before the store took the new dimension still
        makes it take theirs (the old model's rows were of no use to this embedder; the
        next start embeds them again)."""
        sequencer.hold()

    def lift(self, worker: EmbeddingWorker | None) -> None:
        """Lift it; the writes it parked are written on this thread (``worker``'s, or
        through the consumer when None)."""
        with self._lock:
            if self._lifted:
                return
            self._lifted = True
        self._sequencer.lift(worker, self.prepare)


class _Adoption:
    """Once, before a reconcile's first write of rows of a new model: the store takes
    that model's dimension (:meth:`SemanticIndex._adopt_dimension`), then the writes the
    reconcile's hold parked go through. Its batches run one after the other, so a flag is
    enough."""

    def __init__(self, index: SemanticIndex, hold: _Hold) -> None:
        self._index = index
        self._hold = hold
        self._done = False

    def __call__(self, worker: EmbeddingWorker, dimension: int) -> None:
        self.take(worker, dimension)
        self._hold.lift(worker)

    def take(self, worker: EmbeddingWorker | None, dimension: int) -> None:
        """The store takes ``dimension``, once (without lifting the hold)."""
        if not self._done:
            self._index._adopt_dimension(worker, dimension)
            self._done = True


class _Sequencer:
    """Per-ref write ordering for one (store, collection, team, tenant) scope.

    ``next`` stamps a mutation on the caller's thread (a dict write under a short
    lock); ``apply`` runs the write only if that stamp is still the latest for the ref,
    holding the write lock so a check and its write are never split by another write.
    """

    def __init__(self) -> None:
        self._seq_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._latest: dict[str, int] = {}
        self._counter = itertools.count(1)
        self._watches: list[set[str]] = []
        self.renewing = 0
        """How many reconciles of this scope are embedding again rows of another model:
        while any is, every index of the scope answers queries ``{}`` (keyword ranking),
        its rows' vectors being of two models. Changed under ``_seq_lock``."""
        self._holds = 0
        self._parked: list[tuple[int, Callable[[EmbeddingWorker | None], None]]] = []

    def hold(self) -> None:
        """Count a reconcile in that may make the store take another dimension: until it
        is lifted, a write of the scope is parked (:meth:`park_or_run`), not refused by a
        store still holding the old dimension."""
        with self._seq_lock:
            self._holds += 1

    def lift(self, worker: EmbeddingWorker | None, prepare: Prepare | None = None) -> None:
        """Count a hold out; the last one lifted runs the parked writes, in the order they
        were parked, on this thread (outside every lock: each takes the write lock) —
        after ``prepare(worker, dimension)`` with the first one's dimension, if given."""
        with self._seq_lock:
            self._holds -= 1
            parked, self._parked = (self._parked, []) if not self._holds else ([], self._parked)
        if parked and prepare is not None:
            try:
                prepare(worker, parked[0][0])
            except Exception as exc:  # the writes then meet the store's own refusal
                logger.warning("the store could not take %d dimensions: %s", parked[0][0], exc)
        for _, write in parked:
            write(worker)

    def park_or_run(
        self,
        write: Callable[[EmbeddingWorker | None], None],
        worker: EmbeddingWorker,
        dimension: int,
    ) -> None:
        """Run ``write(worker)`` now, or — a reconcile holding the scope's writes — park it
        (with its vectors' ``dimension``) for the thread that lifts the last hold. One
        step, under the lock: a write is never parked after the last lift."""
        with self._seq_lock:
            if self._holds:
                self._parked.append((dimension, write))
                return
        write(worker)

    def renew(self, step: int) -> None:
        """Count a re-embedding of rows of another model in (1) or out (-1)."""
        with self._seq_lock:
            self.renewing += step

    def exclusive(self, action: Callable[[], object]) -> None:
        """Run ``action`` with no write of this scope in progress (under the write lock)."""
        with self._write_lock:
            action()

    def next(self, ref_id: str) -> int:
        with self._seq_lock:
            return self._stamp(ref_id)

    def _stamp(self, ref_id: str) -> int:
        seq = next(self._counter)
        self._latest[ref_id] = seq
        for touched in self._watches:
            touched.add(ref_id)
        return seq

    def watch(self) -> set[str]:
        """A set every ref stamped from now on is added to, until :meth:`unwatch`."""
        touched: set[str] = set()
        with self._seq_lock:
            self._watches.append(touched)
        return touched

    def unwatch(self, touched: set[str]) -> None:
        with self._seq_lock:
            self._watches = [w for w in self._watches if w is not touched]

    def next_untouched(self, ref_id: str, touched: set[str]) -> int | None:
        """Stamp ``ref_id`` unless a write stamped it since ``touched`` was watched (that
        write is newer than what the watcher saw); None then. One step, under the lock."""
        with self._seq_lock:
            return None if ref_id in touched else self._stamp(ref_id)

    def next_if_settled(self, ref_id: str) -> int | None:
        """Stamp ``ref_id`` unless a write of it is still on its way (stamped, not yet
        applied or dropped); None then. One step, under the lock."""
        with self._seq_lock:
            return None if ref_id in self._latest else self._stamp(ref_id)

    def _is_latest(self, ref_id: str, seq: int) -> bool:
        with self._seq_lock:
            return self._latest.get(ref_id) == seq

    def done(self, ref_id: str, seq: int) -> None:
        with self._seq_lock:
            if self._latest.get(ref_id) == seq:
                del self._latest[ref_id]

    def apply(self, ref_id: str, seq: int, write: Callable[[], None]) -> bool:
        """Run ``write`` if ``seq`` is still the latest stamp of ``ref_id``; say if it ran."""
        with self._write_lock:
            if not self._is_latest(ref_id, seq):
                return False
            try:
                write()
            finally:
                self.done(ref_id, seq)
            return True


_sequencers: weakref.WeakValueDictionary[tuple[str, ...], _Sequencer] = (
    weakref.WeakValueDictionary()
)
"""Shared by the indexes of one scope while any is alive; gone with the last one."""
_sequencers_lock = threading.Lock()


def _sequencer(scope: tuple[str, ...]) -> _Sequencer:
    with _sequencers_lock:
        found = _sequencers.get(scope)
        if found is None:
            found = _sequencers[scope] = _Sequencer()
        return found


class WriteWatch:
    """The rows written from the moment :meth:`SemanticIndex.watch` was called: a later
    ``reconcile_ids(..., since=watch)`` leaves them to those writes. ``close`` ends it
    (the reconcile does, after its listing); closing twice is harmless."""

    def __init__(self, sequencer: _Sequencer) -> None:
        self._sequencer = sequencer
        self.touched = sequencer.watch()

    def close(self) -> None:
        self._sequencer.unwatch(self.touched)


class SemanticIndex:
    """One collection of the team's vector store, seen by one consumer.

    See the module docstring for the contract. Build it with :meth:`bind`.
    """

    query_cache_size: ClassVar[int] = 256
    """LRU cap on cached query vectors."""

    negative_ttl: ClassVar[float] = 30.0
    """Seconds semantic search stays off after the embedder failed."""

    poll_step: ClassVar[float] = 0.05
    """Granularity of the bounded wait in :meth:`similar`."""

    reconcile_batch: ClassVar[int] = 64
    """Most rows :meth:`reconcile_ids` fetches and embeds at once (one worker each)."""

    def __init__(
        self,
        *,
        observer: ActorToolObserver,
        collection: str,
        spec: BackendSpec,
        embedder: EmbeddingService | None,
        alpha: float,
        query_timeout: float,
        store: VectorStore | None,
        store_address: ActorAddress | None,
        tenant: str = "",
        team_id: str | None = None,
    ) -> None:
        """Use :meth:`bind`; this constructor does no validation or wiring of its own."""
        self._observer_ref: Callable[[], ActorToolObserver | None] = _weak(observer)
        self.collection = collection
        self.spec = spec
        self.tenant = tenant
        if team_id is None:
            team_id = str(observer.team_id) if observer.team_id is not None else ""
        self.team_id = team_id
        self.alpha = alpha
        self.query_timeout = query_timeout
        self._embedder = embedder
        self._store = store
        self._store_address = store_address
        # one store, one key: the indexes of a scope on one cluster client (a card's query
        # side, its actor's writing side) share its sequencer, and so its renewing count
        store_key = (
            str(store_address.agent_id)
            if store_address is not None
            else str(getattr(store, "key", None) or id(store))
        )
        self._sequencer = _sequencer(
            (spec.name, store_key, collection, self.team_id, tenant),
        )
        self._lock = threading.Lock()
        self._vectors: OrderedDict[str, list[float]] = OrderedDict()
        self._in_flight: dict[str, _Slot] = {}
        self._failed_until = 0.0

    # -- wiring ----------------------------------------------------------------------
    @classmethod
    def bind(
        cls,
        param: VectorStoreParam | None,
        observer: ActorToolObserver,
        collection: str,
        *,
        tenant: str = "",
        embedder: EmbeddingService | _Auto | None = AUTO,
        config: VectorStoreConfig | None = None,
        team_id: str | None = None,
    ) -> SemanticIndex:
        """Resolve ``param`` and bind the index for ``observer``'s team (see the contract).

        ``collection`` is the consumer's default name; ``param.collection`` overrides
        it. ``embedder`` overrides ``param.embedding`` (None forces keyword-only);
        ``config`` overrides the connection settings read from the environment or from
        the catalog instance ``param.cluster`` names. A named instance (a cluster, an
        embeddings endpoint) is resolved through the service directory of the observer's
        actor system (the catalog ``TeamManager`` binds): its URL and key are the
        catalog's, never the card's.
        ``team_id`` overrides the observer's team for a collection that is not
        team-scoped: the shared ``workspace_chunks`` rows carry ``""`` and are bounded by
        their mandatory ``tenant`` (the tree) instead — never reaped by team.

        Raises :class:`VectorStoreConfigError` for a missing cluster URL, a named
        instance the catalog refuses, or a ``config`` naming an unknown backend (a
        param naming one was refused when it was built), and ``ImportError`` (with
        the install command) for a cluster backend whose client is not installed.
        """
        param = param if param is not None else VectorStoreParam()
        name = check_collection_name(param.collection or collection)
        if config is None and param.cluster is not None:
            config = _named(observer, param.cluster, "vector cluster", "vector_store_config")
            backend = param.backend or config.backend
        else:
            backend = param.resolved_backend()
        spec = get_backend(backend)
        store_config = config if config is not None else VectorStoreConfig.from_env(backend)
        if store_config.backend != backend:
            raise VectorStoreConfigError(
                f"the store config is for backend {store_config.backend!r}, but the card "
                f"resolves to {backend!r}"
            )
        in_actor = spec.persists_in_actor_state
        missing = spec.missing_modules() if in_actor else []
        if not missing:
            spec.validate(store_config)  # a named cluster backend fails loudly, here
        named = param.embedding.instance if param.embedding is not None else None
        if isinstance(embedder, _Auto) and named is not None:
            resolved = _named(observer, named, "embeddings endpoint", "embedding_service")
        elif isinstance(embedder, _Auto):
            resolved = get_embedding_service(param.embedding)
        else:
            resolved = embedder

        store: VectorStore | None = None
        address: ActorAddress | None = None
        if missing:  # the default, in-memory store degrades instead: keyword-only
            logger.warning(
                "vector store %r needs %s (pip install 'akgentic[%s]'); collection %r is "
                "keyword-only",
                backend,
                ", ".join(missing),
                spec.extra,
                name,
            )
            resolved = None
        elif in_actor:
            address = ensure_store_actor(observer)
        else:
            store = spec.factory(store_config)
        index = cls(
            observer=observer,
            collection=name,
            spec=spec,
            embedder=resolved,
            alpha=param.hybrid_alpha,
            query_timeout=param.query_timeout,
            store=store,
            store_address=address,
            tenant=tenant,
            team_id=team_id,
        )
        index._warm_up()
        return index

    # -- the surface -----------------------------------------------------------------
    @property
    def available(self) -> bool:
        """Whether semantic search works here; False means keyword-only."""
        return self._embedder is not None and (
            self._store is not None or self._store_address is not None
        )

    @property
    def embedder(self) -> EmbeddingService | None:
        """The embedder in use (None when keyword-only)."""
        return self._embedder

    @property
    def store_address(self) -> ActorAddress | None:
        """The ``#VectorStore`` actor, for a backend that keeps data in actor state."""
        return self._store_address

    def upsert(self, ref_id: str, text: str, metadata: dict[str, Any] | None = None) -> None:
        """Index (or re-index) ``ref_id``; returns at once, the worker does the rest."""
        self.upsert_many([(ref_id, text, metadata)])

    def upsert_many(
        self,
        rows: Sequence[tuple[str, str, dict[str, Any] | None]],
        *,
        done: Callable[[bool], None] | None = None,
    ) -> None:
        """Index several ``(ref_id, text, metadata)`` rows with one embedding call (one
        worker); the same per-ref ordering rule as :meth:`upsert`. Returns at once.

        ``done(ok)`` is called once, on a worker's thread, when the rows were embedded
        (True) or were not (False: the embedder failed, the store refused a write — the
        rest of the batch is then not written — or no worker could start) — for a consumer
        that retries what a failure left unindexed (it must not block)."""
        if not self.available or not rows:
            return
        stamped = [
            (ref, self._sequencer.next(ref), text, dict(meta or {})) for ref, text, meta in rows
        ]
        self._embed_rows(stamped, done)

    def reconcile(
        self, rows: Mapping[str, Row], *, done: Callable[[bool], None] | None = None
    ) -> None:
        """Bring the store in step with ``rows`` (``ref_id -> (text, metadata)``, every
        row the consumer holds): :meth:`reconcile_ids` over rows already in memory (its
        ``done`` too)."""
        source = dict(rows)
        texts = {ref: text for ref, (text, _) in source.items()}
        self.reconcile_ids(
            source, lambda refs: {ref: source[ref] for ref in refs}, texts=texts, done=done
        )

    def watch(self) -> WriteWatch:
        """Start noting the rows written from now on, for a later :meth:`reconcile_ids`
        whose ids were gathered meanwhile (a consumer's start pass): those writes win."""
        return WriteWatch(self._sequencer)

    def reconcile_ids(
        self,
        ids: Iterable[str],
        fetch: Fetch,
        *,
        since: WriteWatch | None = None,
        done: Callable[[bool], None] | None = None,
        texts: Mapping[str, str] | None = None,
    ) -> None:
        """Bring the store in step with ``ids`` (every row id the consumer holds): index
        the ones it lacks, delete the ones it holds for nothing. Returns at once; a worker
        lists the store's ref ids.

        What a consumer calls when it starts with restored (or seeded) state: a write
        whose embedding a stop, a crash or a model still loading dropped left its row
        unindexed, and a lost delete left a row for nothing — the rows persist with the
        state, the index with the store. Only ids are held until the listing: ``fetch``
        is asked for the ``(text, metadata)`` of the missing rows alone, at most
        :attr:`reconcile_batch` ids a call, one batch after the previous one is embedded
        — so a consumer whose rows live elsewhere (a tree's records) never holds them all.
        An id ``fetch`` leaves out is skipped (its row changed since: a newer write covers
        it). Rows already indexed are not embedded again: when nothing is missing this
        costs one id listing and no embedding. A write made after this call — or after
        ``since`` was taken, which this call closes — wins: that row is left to that
        write. A stop during the embeddings may drop them again; the next start reconciles.
        ``texts`` (``ref_id -> text``, every row's, for a consumer that holds them) also
        embeds again a row the store holds with another text — an update whose embedding
        a stop or a crash dropped, which left the old text (and vector) under its id —
        when the store can list its texts (``ref_rows``, ``ref_texts``); ids alone cannot
        tell it. A row the store holds embedded by another model than this index's
        embedder — the model changed between runs, or the row recorded none (written
        before rows recorded it) — is embedded again too, said in one warning line; before
        the first of those writes the store takes the new vectors' dimension
        (``adopt_dimension``: it drops what held another), and until the last one every
        index of the scope answers :meth:`similar` with ``{}`` (keyword ranking).
        ``done(ok)`` is called once at the end, on a worker's thread: True when every
        missing row was embedded, False when the listing, a read or an embedding failed
        (or no worker started) and rows may still be missing — never when unavailable.
        """
        if not self.available:
            if since is not None:
                since.close()
            return
        finish = done if done is not None else _ignore
        wanted = frozenset(ids)
        watch = since if since is not None else self.watch()
        touched = watch.touched
        hold = _Hold(self._sequencer)

        def apply(
            worker: EmbeddingWorker, vectors: list[list[float]] | None, error: str | None
        ) -> None:
            try:
                listed = self._held_rows(worker, with_texts=texts is not None)
            except Exception as exc:
                watch.close()
                hold.lift(worker)
                logger.warning("listing %s to reconcile it failed: %r", self.collection, exc)
                finish(False)
                return
            held = set(listed)
            missing: list[tuple[str, int]] = []
            try:
                for ref in sorted(held - wanted):
                    seq = self._sequencer.next_untouched(ref, touched)
                    if seq is not None:
                        remove = functools.partial(self._remove, worker, ref)
                        self._sequencer.apply(ref, seq, remove)
                known = texts if texts is not None else {}
                stale = {
                    ref
                    for ref, (text, _) in listed.items()
                    if ref in wanted and text is not None and known.get(ref) != text
                }
                foreign = self._foreign(listed, wanted)
                for ref in sorted((wanted - held) | stale | set(foreign)):
                    seq = self._sequencer.next_untouched(ref, touched)
                    if seq is not None:
                        missing.append((ref, seq))
                if foreign and since is not None:
                    missing += self._stranded(listed, wanted & touched)
            finally:
                watch.close()
            if not foreign:
                hold.lift(worker)  # no new dimension to take: the parked writes go through
                if missing:
                    logger.info(
                        "indexing %d rows %s lacked or held stale", len(missing), self.collection
                    )
                self._embed_missing(missing, fetch, finish)
                return
            self._say_renewed(foreign)
            self._sequencer.renew(1)

            def renewed(ok: bool) -> None:
                self._sequencer.renew(-1)
                hold.lift(None)  # a pass that failed before the store took the dimension
                finish(ok)

            adoption = _Adoption(self, hold)
            hold.prepare = adoption.take
            self._embed_missing(missing, fetch, renewed, adoption)

        def not_started() -> None:
            watch.close()
            hold.lift(None)
            finish(False)

        job = EmbeddingJob(texts=(), embedder=None, apply=apply)
        self._spawn(job, not_started, writes=True)

    def _embed_missing(
        self,
        pending: list[tuple[str, int]],
        fetch: Fetch,
        done: Callable[[bool], None],
        adopt: _Adoption | None = None,
    ) -> None:
        """Fetch and embed the next :attr:`reconcile_batch` of ``pending`` (stamped ids),
        the rest once it is embedded; every stamp not written is released. ``done(ok)``
        once at the end. ``adopt`` goes with each batch (it acts once)."""
        while pending:
            batch, pending = pending[: self.reconcile_batch], pending[self.reconcile_batch :]
            try:
                found = fetch([ref for ref, _ in batch])
            except Exception as exc:
                logger.warning("reading rows of %s to index failed: %r", self.collection, exc)
                self._release([*batch, *pending])
                done(False)
                return
            stamped: list[tuple[str, int, str, dict[str, Any]]] = []
            for ref, seq in batch:
                row = found.get(ref)
                if row is None:  # changed since the listing: a newer write covers it
                    self._sequencer.done(ref, seq)
                else:
                    stamped.append((ref, seq, row[0], dict(row[1] or {})))
            if stamped:
                then = functools.partial(self._embed_next, pending, fetch, done, adopt)
                self._embed_rows(stamped, then, adopt)
                return
        done(True)

    def _embed_next(
        self,
        pending: list[tuple[str, int]],
        fetch: Fetch,
        done: Callable[[bool], None],
        adopt: _Adoption | None,
        ok: bool,
    ) -> None:
        """After a batch: the next one, or — its embedding failed — none (released, left to
        ``done(False)``'s caller or the next start, rather than failing once a batch)."""
        if ok:
            self._embed_missing(pending, fetch, done, adopt)
        else:
            if pending:
                logger.warning("%d rows of %s left unindexed", len(pending), self.collection)
            self._release(pending)
            done(False)

    def _release(self, pending: list[tuple[str, int]]) -> None:
        """Release the stamps of ``pending`` rows that will not be written."""
        for ref, seq in pending:
            self._sequencer.done(ref, seq)

    def _embed_rows(
        self,
        stamped: list[tuple[str, int, str, dict[str, Any]]],
        then: Callable[[bool], None] | None = None,
        adopt: _Adoption | None = None,
    ) -> None:
        """Embed ``(ref_id, seq, text, metadata)`` rows in one worker and write each one
        whose stamp is still its ref's latest; then ``then(ok)`` (ok: they were embedded).
        ``adopt``: before the first write, have the store take the vectors' dimension."""
        embedder = self._embedder
        model = embedder.name if embedder is not None else ""

        def after(ok: bool) -> None:
            if then is not None:
                then(ok)

        def apply(
            worker: EmbeddingWorker, vectors: list[list[float]] | None, error: str | None
        ) -> None:
            if error is None and vectors and len(vectors) == len(stamped) and adopt is not None:
                try:
                    adopt(worker, len(vectors[0]))
                except VectorStoreConfigError as exc:  # a deployment to change: its one line
                    error = str(exc)
                except Exception as exc:
                    error = f"the store could not take {len(vectors[0])} dimensions: {exc!r}"
            if error is not None or not vectors or len(vectors) != len(stamped):
                for ref, seq, _, _ in stamped:
                    self._sequencer.done(ref, seq)
                logger.warning(
                    "embedding %d rows of %s failed: %s", len(stamped), self.collection, error
                )
                after(False)
                return
            entries = [
                VectorEntry(
                    ref_id=ref,
                    text=text,
                    vector=vector,
                    metadata=meta,
                    team_id=self.team_id,
                    tenant=self.tenant,
                    model=model,
                )
                for (ref, _, text, meta), vector in zip(stamped, vectors, strict=True)
            ]
            seqs = [seq for _, seq, _, _ in stamped]
            write = functools.partial(self._write_rows, entries, seqs, after)
            self._sequencer.park_or_run(write, worker, len(vectors[0]))

        def release() -> None:
            for ref, seq, _, _ in stamped:
                self._sequencer.done(ref, seq)
            after(False)

        job = EmbeddingJob(
            texts=tuple(t for _, _, t, _ in stamped), embedder=self._embedder, apply=apply
        )
        self._spawn(job, release, writes=True)

    def delete(self, ref_id: str) -> None:
        """Remove ``ref_id``; returns at once (a tell, or a worker for a cluster)."""
        if self._store is None and self._store_address is None:
            return
        seq = self._sequencer.next(ref_id)
        if self._store_address is not None:
            observer = self._observer_ref()
            if observer is None:
                self._sequencer.done(ref_id, seq)
                return
            address = self._store_address

            def tell_delete() -> None:
                observer.proxy_tell(address, VectorStoreActor).delete(
                    self.collection, self.team_id, [ref_id], self.tenant
                )

            try:
                self._sequencer.apply(ref_id, seq, tell_delete)
            except Exception as exc:
                logger.warning("deleting %s/%s failed: %r", self.collection, ref_id, exc)
            return

        store = self._store
        assert store is not None

        def apply(
            worker: EmbeddingWorker, vectors: list[list[float]] | None, error: str | None
        ) -> None:
            self._sequencer.apply(
                ref_id,
                seq,
                lambda: store.delete(self.collection, self.team_id, [ref_id], self.tenant),
            )

        job = EmbeddingJob(texts=(), embedder=None, apply=apply)
        self._spawn(job, lambda: self._sequencer.done(ref_id, seq))

    def similar(self, query: str, k: int) -> dict[str, float]:
        """``ref_id -> cosine`` of the ``k`` rows nearest ``query``; ``{}`` when degraded."""
        if not self.available or k <= 0 or not query.strip() or self._sequencer.renewing:
            return {}
        vector = self._query_vector(query)
        if vector is None:
            return {}
        try:
            hits = self._query(vector, k)
        except Exception as exc:
            logger.warning("querying %s failed: %r; degraded to {}", self.collection, exc)
            return {}
        model = self._embedder.name if self._embedder is not None else ""
        if any(hit.model not in ("", model) for hit in hits):
            # a row of another model: its cosine to this query means nothing
            return {}
        return {hit.ref_id: hit.score for hit in hits}

    # -- internals -------------------------------------------------------------------
    def _held(self, worker: EmbeddingWorker) -> set[str]:
        """The ref ids the store holds for this scope; on the worker's thread."""
        if self._store_address is not None:
            store: Any = worker.proxy_ask(
                self._store_address, VectorStoreActor, timeout=worker.timeout
            )
            held: set[str] = store.ref_ids(self.collection, self.team_id, self.tenant)
            return held
        assert self._store is not None
        return self._store.ref_ids(self.collection, self.team_id, self.tenant)

    def _held_rows(self, worker: EmbeddingWorker, *, with_texts: bool) -> dict[str, _Listed]:
        """What the store holds for this scope, on the worker's thread: each ref id's text
        (when ``with_texts``) and model, in one listing (``ref_rows``); a store without it
        says less — ``ref_texts`` (texts alone), else ``ref_ids`` — and what it does not
        say is None (never compared)."""
        if self._store_address is not None:
            actor: Any = worker.proxy_ask(
                self._store_address, VectorStoreActor, timeout=worker.timeout
            )
            rows: dict[str, HeldRow] = actor.ref_rows(
                self.collection, self.team_id, self.tenant, texts=with_texts
            )
        else:
            store: Any = self._store
            ref_rows = getattr(store, "ref_rows", None)
            ref_texts = getattr(store, "ref_texts", None)
            if callable(ref_rows):
                rows = ref_rows(self.collection, self.team_id, self.tenant, texts=with_texts)
            elif with_texts and callable(ref_texts):
                found: dict[str, str] = ref_texts(self.collection, self.team_id, self.tenant)
                return {ref: _Listed(text, None) for ref, text in found.items()}
            else:
                return {ref: _Listed(None, None) for ref in self._held(worker)}
        return {
            ref: _Listed(row.text if with_texts else None, row.model) for ref, row in rows.items()
        }

    def _foreign(self, listed: Mapping[str, _Listed], wanted: frozenset[str]) -> dict[str, str]:
        """``ref_id -> model`` of the wanted rows the store holds embedded by another model
        than this index's embedder (``""``: a row that recorded none)."""
        embedder = self._embedder
        current = embedder.name if embedder is not None else ""
        return {
            ref: row.model
            for ref, row in listed.items()
            if ref in wanted and row.model is not None and row.model != current
        }

    def _stranded(
        self, listed: Mapping[str, _Listed], written: Iterable[str]
    ) -> list[tuple[str, int]]:
        """The rows of ``written`` — written while a start pass gathered its ids, before its
        reconcile held the scope's writes — that the store lacks, or holds of another model,
        though no write of theirs is still on its way: the store refused their write for
        its old dimension. Stamped for the reconcile to embed again (its ``fetch`` reads
        them as they are now). Only a renewing reconcile asks: no other refuses a write."""
        embedder = self._embedder
        current = embedder.name if embedder is not None else ""
        found: list[tuple[str, int]] = []
        for ref in sorted(written):
            row = listed.get(ref)
            if row is not None and row.model in (None, current):
                continue
            seq = self._sequencer.next_if_settled(ref)
            if seq is not None:
                found.append((ref, seq))
        return found

    def _say_renewed(self, foreign: Mapping[str, str]) -> None:
        """The one warning line of a start that embeds again rows of another model."""
        address = getattr(self._observer_ref(), "myAddress", None)  # a plain observer has none
        who = getattr(address, "name", None) or self.collection
        models = sorted(set(foreign.values()))
        named = ", ".join(m or "an unrecorded model" for m in models)
        embedder = self._embedder
        logger.warning(
            "%s: %s embedded with %s %s embedded again with %s",
            who,
            counted(len(foreign), "row"),
            named,
            "is" if len(foreign) == 1 else "are",
            embedder.name if embedder is not None else "nothing",
        )

    def _adopt_dimension(self, worker: EmbeddingWorker | None, dimension: int) -> None:
        """Have the store take vectors of ``dimension`` (on the worker's thread — see
        :meth:`_teller` — with no write of the scope in progress): one that holds another
        drops what held it."""
        if self._store_address is not None:
            address = self._store_address
            teller = self._teller(worker)
            self._sequencer.exclusive(
                lambda: teller.proxy_tell(address, VectorStoreActor).adopt_dimension(
                    self.collection, self.team_id, dimension, self.tenant
                )
            )
            return
        adopt = getattr(self._store, "adopt_dimension", None)
        if callable(adopt):
            self._sequencer.exclusive(
                lambda: adopt(self.collection, self.team_id, dimension, self.tenant)
            )

    def _write_rows(
        self,
        entries: list[VectorEntry],
        seqs: list[int],
        after: Callable[[bool], None],
        worker: EmbeddingWorker | None,
    ) -> None:
        """Write each embedded row whose stamp is still its ref's latest, then ``after(ok)``;
        the first the store refuses ends it (the rest released, unwritten). On the thread
        of ``worker`` — the one that embedded them, or the one that lifted the hold they
        were parked behind (None: through the consumer)."""
        for number, (entry, seq) in enumerate(zip(entries, seqs, strict=True)):
            try:
                write = functools.partial(self._write, worker, [entry])
                self._sequencer.apply(entry.ref_id, seq, write)
            except Exception as exc:  # the store refused: the rest is not written either
                for later, later_seq in zip(entries[number + 1 :], seqs[number + 1 :], strict=True):
                    self._sequencer.done(later.ref_id, later_seq)
                logger.warning(
                    "writing %s of %s failed: %s",
                    counted(len(entries) - number, "row"),
                    self.collection,
                    str(exc) if isinstance(exc, VectorStoreConfigError) else repr(exc),
                )
                after(False)
                return
        after(True)

    def _teller(self, worker: EmbeddingWorker | None) -> Any:
        """Who tells the ``#VectorStore``: the worker on whose thread this runs, else the
        consumer (a hold lifted off any worker); RuntimeError when the consumer is gone."""
        if worker is not None:
            return worker
        observer = self._observer_ref()
        if observer is None:
            raise RuntimeError(f"the consumer of {self.collection} is gone")
        return observer

    def _remove(self, worker: EmbeddingWorker, ref_id: str) -> None:
        """Delete ``ref_id``'s row; on the worker's thread, under the sequencer's write lock."""
        if self._store_address is not None:
            worker.proxy_tell(self._store_address, VectorStoreActor).delete(
                self.collection, self.team_id, [ref_id], self.tenant
            )
        elif self._store is not None:
            self._store.delete(self.collection, self.team_id, [ref_id], self.tenant)

    def _write(self, worker: EmbeddingWorker | None, entries: list[VectorEntry]) -> None:
        """On the worker's thread (see :meth:`_teller`), under the sequencer's write lock."""
        if self._store_address is not None:
            self._teller(worker).proxy_tell(self._store_address, VectorStoreActor).upsert(
                self.collection, self.team_id, entries, self.tenant
            )
        elif self._store is not None:
            self._store.upsert(self.collection, self.team_id, entries, self.tenant)

    def _query(self, vector: list[float], k: int) -> list[SearchHit]:
        if self._store_address is not None:
            observer = self._observer_ref()
            if observer is None:
                return []
            store: Any = observer.proxy_ask(
                self._store_address, VectorStoreActor, timeout=self.query_timeout
            )
            hits: list[SearchHit] = store.query(
                self.collection, self.team_id, vector, k, self.tenant
            )
            return hits
        assert self._store is not None
        return self._store.query(self.collection, self.team_id, vector, k, self.tenant)

    def _query_vector(self, query: str) -> list[float] | None:
        with self._lock:
            cached = self._vectors.get(query)
            if cached is not None:
                self._vectors.move_to_end(query)
                return cached
            if time.monotonic() < self._failed_until:
                return None
            slot = self._in_flight.get(query)
            spawn = slot is None
            if slot is None:
                slot = self._in_flight[query] = _Slot()
        if spawn:
            job = EmbeddingJob(
                texts=(query,),
                embedder=self._embedder,
                apply=lambda _w, vectors, error: self._query_done(query, slot, vectors, error),
            )
            self._spawn(
                job, lambda: self._query_done(query, slot, None, "no embedding worker started")
            )
        attempts = max(1, math.ceil(self.query_timeout / self.poll_step))
        return poll_deferred(lambda: slot.wait(self.poll_step), attempts=attempts, delay=0.0)

    def _query_done(
        self, query: str, slot: _Slot, vectors: list[list[float]] | None, error: str | None
    ) -> None:
        vector = vectors[0] if vectors and error is None else None
        with self._lock:
            self._in_flight.pop(query, None)
            if vector is not None:
                self._vectors[query] = vector
                self._vectors.move_to_end(query)
                while len(self._vectors) > self.query_cache_size:
                    self._vectors.popitem(last=False)
            else:
                self._failed_until = time.monotonic() + self.negative_ttl
                logger.warning(
                    "query embedding for %s failed (%s); semantic search off for %ss",
                    self.collection,
                    error,
                    self.negative_ttl,
                )
        slot.fill(vector, error)

    def _warm_up(self) -> None:
        """Load a local model now, so the first ``similar`` is not the one paying.

        On a daemon thread, once per embedder at a time (see :func:`start_warm_up`):
        never an actor, which its consumer's stop would wait for.
        """
        if self._embedder is not None:
            start_warm_up(self._embedder)

    def _spawn(
        self, job: EmbeddingJob, failed: Callable[[], None], *, writes: bool = False
    ) -> None:
        """Start ``#embed-<collection>-<request_id>`` and tell it ``job``, or ``failed()``.

        A job to embed with a model still loading waits for the load on the loading
        thread, not in a worker: a worker is an actor whose stop (and its parent's) would
        wait for the load; it is started once the load ends. ``writes``: the job writes to
        the ``#VectorStore``, which then stops after it.
        """

        def start() -> None:
            if not self._start_worker(job, writes):
                failed()

        embedder = job.embedder
        if embedder is not None and job.texts and not getattr(embedder, "ready", True):
            start_warm_up(embedder, then=start)
        else:
            start()

    def _start_worker(self, job: EmbeddingJob, writes: bool) -> bool:
        """Start the worker and tell it ``job``; False, with a warning, when it cannot."""
        observer = self._observer_ref()
        if observer is None:
            logger.info("the consumer of %s is gone; dropping a job", self.collection)
            return False
        request_id = uuid4().hex[:12]
        config = EmbeddingWorkerConfig(
            name=f"#embed-{self.collection}-{request_id}",
            role="EmbeddingWorker",
            store=self._store_address if writes else None,
        )
        try:
            if _on_own_thread(observer):
                address: ActorAddress = observer.createActor(  # type: ignore[attr-defined]
                    EmbeddingWorker, config=config
                )
            else:
                orchestrator = observer.orchestrator
                if orchestrator is None:
                    raise RuntimeError("the observer can neither create actors nor reach a team")
                orch: Any = observer.proxy_ask(orchestrator, Orchestrator, timeout=10.0)
                address = orch.createActor(EmbeddingWorker, config=config)
            observer.proxy_tell(address, EmbeddingWorker).run(job)
        except Exception as exc:
            logger.warning("could not start an embedding worker for %s: %r", self.collection, exc)
            return False
        return True

    def __repr__(self) -> str:
        state = "available" if self.available else "keyword-only"
        return f"<SemanticIndex {self.spec.name}:{self.collection} team={self.team_id!r} {state}>"


def _ignore(ok: bool) -> None:
    """The ``done`` of a caller that does not ask how its rows fared."""


def _on_own_thread(observer: ActorToolObserver) -> bool:
    """Whether this thread is the observer actor's own (so it may create its children).

    Any other thread (an agent's tool closure, a test) spawns through the orchestrator
    instead, on the orchestrator's own thread.
    """
    return current_actor() is observer


def _named(observer: Any, name: str, what: str, hook: str) -> Any:
    """What the catalog instance ``name`` gives through ``hook`` (its store config, its
    embedder); :class:`VectorStoreConfigError` saying why when it cannot."""
    directory = services_for(observer)
    if directory is None:
        raise VectorStoreConfigError(
            f"{what} {name!r} is a catalog instance, but no tool catalog is bound to this "
            f"actor system: create the team with TeamManager, or call "
            f"akgentic.catalog.bind_catalog(system, CatalogService(storage))"
        )
    try:
        built = directory.resolve(name, "agents")
    except Exception as exc:  # the catalog's refusal says what to do, never a secret
        raise VectorStoreConfigError(f"{what} {name!r}: {exc}") from None
    give = getattr(built, hook, None)
    if not callable(give):
        raise VectorStoreConfigError(
            f"catalog instance {name!r} ({type(built).__name__}) is not a {what}"
        )
    return give()


def _weak(observer: ActorToolObserver) -> Callable[[], ActorToolObserver | None]:
    """A weak reference to the consumer: an index must never keep a stopped actor alive."""
    try:
        return weakref.ref(observer)
    except TypeError:
        raise TypeError(
            f"{type(observer).__name__} cannot be held weakly: a SemanticIndex observer "
            f"must support weak references (an index must never keep its consumer alive)"
        ) from None

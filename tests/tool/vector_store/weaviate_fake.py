"""An in-process stand-in for the few weaviate-client v4 calls ``WeaviateBackend`` makes.

No server runs here (the Weaviate contract needs ``AKGENTIC_WEAVIATE_URL``), so this
fake lets the backend's own code run — collections, objects, the cursor, a sample with
its vector, counts, filters — as strict as a cluster on what matters to a model change:
a collection takes one vector length (the first it is given), and an object or a listing
naming a property the collection lacks is refused (auto-schema off). Put it in the
client cache under the backend's key (``get_client(backend.key, lambda: fake)``) and
every ``WeaviateBackend`` of that config talks to it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from types import SimpleNamespace
from typing import Any

import httpx
from weaviate.exceptions import UnexpectedStatusCodeError

OLD_PROPERTIES = ("ref_id", "team_id", "tenant", "text", "metadata")
"""The properties of a collection created before rows recorded their model."""


class FakeWeaviate:
    """The client: ``collections`` and ``close``."""

    def __init__(self) -> None:
        self.collections = Collections()
        self.closed = False

    def close(self) -> None:
        self.closed = True


class Collections:
    def __init__(self) -> None:
        self.held: dict[str, Collection] = {}
        self.created: list[str] = []
        self.rival: Callable[[str], None] | None = None
        """Another process sharing the cluster: called (once) with a collection's name
        right after this client deleted it — what that process does meanwhile."""

    def exists(self, name: str) -> bool:
        return name in self.held

    def get(self, name: str) -> Collection:
        return self.held[name]

    def create(self, name: str, properties: Sequence[Any], **_: Any) -> Collection:
        if name in self.held:  # what weaviate-client raises for the server's answer
            body = {"error": [{"message": f'class name "{name}" already exists'}]}
            raise UnexpectedStatusCodeError(
                "Collection may not have been created properly", httpx.Response(422, json=body)
            )
        self.created.append(name)
        found = self.held[name] = Collection(name, [p.name for p in properties])
        return found

    def delete(self, name: str) -> None:
        self.held.pop(name, None)
        rival, self.rival = self.rival, None
        if rival is not None:
            rival(name)

    def list_all(self, simple: bool = True) -> dict[str, Any]:
        return dict.fromkeys(self.held)


class Collection:
    """One collection: objects by uuid, one vector length, a property list."""

    def __init__(self, name: str, properties: list[str]) -> None:
        self.name = name
        self.properties = properties
        self.objects: dict[str, tuple[dict[str, Any], dict[str, list[float]]]] = {}
        self.dimension: int | None = None
        self.config = SimpleNamespace(get=self._config, add_property=self._add_property)
        self.data = SimpleNamespace(insert_many=self._insert_many, delete_many=self._delete_many)
        self.query = SimpleNamespace(fetch_objects=self._fetch, near_vector=self._near)
        self.aggregate = SimpleNamespace(over_all=self._over_all)

    def put(self, uuid: str, properties: dict[str, Any], vector: list[float]) -> None:
        """An object as an older writer left it (no check but its vector's length)."""
        self._take(len(vector))
        self.objects[uuid] = (dict(properties), {"default": list(vector)})

    def _take(self, length: int) -> bool:
        if self.dimension is None:
            self.dimension = length
        return self.dimension == length

    def _config(self) -> Any:
        return SimpleNamespace(properties=[SimpleNamespace(name=p) for p in self.properties])

    def _add_property(self, prop: Any) -> None:
        if prop.name in self.properties:
            raise RuntimeError(f"property {prop.name} exists")
        self.properties.append(prop.name)

    def _insert_many(self, objects: Sequence[Any]) -> Any:
        errors: dict[int, str] = {}
        for number, obj in enumerate(objects):
            vector = obj.vector["default"] if isinstance(obj.vector, dict) else obj.vector
            unknown = set(obj.properties) - set(self.properties)
            if unknown:
                errors[number] = f"no such prop with name {sorted(unknown)[0]!r}"
            elif not self._take(len(vector)):
                errors[number] = f"new node has a vector with length {len(vector)}"
            else:
                self.objects[str(obj.uuid)] = (dict(obj.properties), {"default": list(vector)})
        return SimpleNamespace(errors=errors)

    def _delete_many(self, where: Any) -> Any:
        doomed = [u for u, (props, _) in self.objects.items() if matches(where, u, props)]
        for uuid in doomed:
            del self.objects[uuid]
        return SimpleNamespace(successful=len(doomed))

    def iterator(self, include_vector: bool, return_properties: Sequence[str]) -> Iterator[Any]:
        unknown = set(return_properties) - set(self.properties)
        if unknown:
            raise RuntimeError(f"no such prop with name {sorted(unknown)[0]!r}")
        for props, _ in list(self.objects.values()):
            yield SimpleNamespace(properties={k: props.get(k) for k in return_properties})

    def _fetch(self, limit: int, include_vector: bool = False) -> Any:
        found = [
            SimpleNamespace(properties=dict(props), vector=dict(vectors) if include_vector else {})
            for props, vectors in list(self.objects.values())[:limit]
        ]
        return SimpleNamespace(objects=found)

    def _near(self, near_vector: list[float], limit: int, filters: Any, **_: Any) -> Any:
        hits = []
        for uuid, (props, vectors) in self.objects.items():
            if matches(filters, uuid, props):
                distance = 1.0 - cosine(near_vector, vectors["default"])
                hits.append(
                    SimpleNamespace(
                        properties=dict(props), metadata=SimpleNamespace(distance=distance)
                    )
                )
        hits.sort(key=lambda h: h.metadata.distance)
        return SimpleNamespace(objects=hits[:limit])

    def _over_all(self, total_count: bool = True, filters: Any = None) -> Any:
        held = self.objects.items()
        found = [u for u, (props, _) in held if filters is None or matches(filters, u, props)]
        return SimpleNamespace(total_count=len(found))


def matches(where: Any, uuid: str, props: dict[str, Any]) -> bool:
    """Whether an object passes a filter the backend builds (an AND of equalities, or a
    set of ids)."""
    if hasattr(where, "filters"):
        return all(matches(f, uuid, props) for f in where.filters)
    actual = uuid if where.target == "_id" else props.get(where.target)
    operator = where.operator.value
    if operator == "ContainsAny":
        return actual in [str(v) for v in where.value]
    if operator == "Equal":
        return bool(actual == where.value)
    raise NotImplementedError(operator)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b):
        raise ValueError(f"vector lengths differ: {len(a)} and {len(b)}")
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))

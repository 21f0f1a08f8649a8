"""Serialization of framework objects to JSON-compatible data and back.

The contract:

- ``serialize(value)`` turns a value into plain JSON-compatible data. Every pydantic
  model becomes a dict carrying a ``__model__`` marker that names its class, and its
  fields are serialized recursively by their *runtime* values, so a field declared as
  a base class keeps the subclass it actually holds.
- ``deserialize(data)`` rebuilds the objects. A marker resolves **only** to a class
  registered as serializable: every subclass of :class:`SerializableModel` registers
  itself when it is defined, any other model can be registered explicitly with
  :func:`register_serializable`, and a model that this process serializes is
  registered on the way (it is code this program is running, not data).
  Decoding never imports a module: an unknown marker raises
  :class:`SerializationError` naming the path and what to do about it.
- A class that is not a pydantic model serializes itself with
  ``__akgentic_serialize__()`` (a dict with the marker) and decodes with the classmethod
  ``__akgentic_deserialize__(fields)``; ``ActorAddress`` is one.

Moving a serializable class changes its marker; keep the old path readable with
``register_serializable(cls, aliases=["old.module.Name"])``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import Enum
from pathlib import PurePath
from typing import Any, ClassVar, TypeVar
from uuid import UUID

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = [
    "MODEL_MARKER",
    "SerializableModel",
    "SerializationError",
    "deserialize",
    "is_registered",
    "model_path",
    "register_serializable",
    "registered_class",
    "serialize",
]

MODEL_MARKER = "__model__"
"""The key under which a serialized model names its class."""

T = TypeVar("T", bound=type)


class SerializationError(ValueError):
    """A value cannot be serialized, or serialized data cannot be decoded."""


_registry: dict[str, type] = {}
_registry_lock = threading.Lock()


def model_path(cls: type) -> str:
    """The marker written for ``cls``: its module and qualified name."""
    return f"{cls.__module__}.{cls.__qualname__}"


def register_serializable(cls: T, *, aliases: Iterable[str] = ()) -> T:
    """Allow ``cls`` to be decoded from data naming it (or any of ``aliases``).

    Usable as a decorator. Registering again replaces the earlier class under the
    same path (a module reloaded in a test, a class redefined in a notebook).
    """
    with _registry_lock:
        _registry[model_path(cls)] = cls
        for alias in aliases:
            _registry[alias] = cls
    return cls


def is_registered(cls: type) -> bool:
    """Whether ``cls`` is decodable under its own path."""
    return _registry.get(model_path(cls)) is cls


def registered_class(path: str) -> type:
    """The class registered under ``path``; never imports anything.

    Raises :class:`SerializationError` when nothing is registered there.
    """
    cls = _registry.get(path)
    if cls is None:
        module = path.rpartition(".")[0] or path
        raise SerializationError(
            f"unknown {MODEL_MARKER} {path!r}: no serializable class is registered under "
            f"that path. Import the module that defines it ({module}) before decoding, "
            f"or register the class with akgentic.core.register_serializable(). "
            f"Decoding never imports modules named by data."
        )
    return cls


class SerializableModel(BaseModel):
    """Base of every model the framework stores, sends or replays.

    Subclasses register themselves for decoding when they are defined.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        register_serializable(cls)


def _serialize_key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, Enum):
        return str(key.value)
    if isinstance(key, int | float | UUID | Decimal):
        return str(key)
    raise SerializationError(
        f"cannot serialize a dict key of type {type(key).__name__}: keys must be "
        f"str, int, float, UUID or an Enum"
    )


Serializer = Callable[[Any], Any]

_serializers: dict[type, Serializer] = {}
"""One serializer per concrete type, resolved on first sight: no isinstance chain per value."""


def serialize(value: Any) -> Any:
    """Return JSON-compatible data for ``value`` (see the module docstring)."""
    cls = type(value)
    serializer = _serializers.get(cls)
    if serializer is None:
        serializer = _serializer_for(cls)
        _serializers[cls] = serializer
    return serializer(value)


def _identity(value: Any) -> Any:
    return value


def _model_serializer(cls: type[BaseModel]) -> Serializer:
    path = model_path(cls)
    if _registry.get(path) is not cls:
        register_serializable(cls)
    names = [name for name, field in cls.model_fields.items() if field.exclude is not True]

    def serialize_model(model: Any) -> dict[str, Any]:
        fields = model.__dict__
        out: dict[str, Any] = {MODEL_MARKER: path}
        for name in names:
            out[name] = serialize(fields[name])
        extra = model.__pydantic_extra__
        if extra:
            for name, value in extra.items():
                out[name] = serialize(value)
        return out

    return serialize_model


def _serialize_set(value: Any) -> list[Any]:
    items = [serialize(item) for item in value]
    with contextlib.suppress(TypeError):  # sorted when possible: equal sets, equal data
        items.sort()
    return items


def _refuse(cls: type) -> Serializer:
    def refuse(value: Any) -> Any:
        raise SerializationError(
            f"cannot serialize a value of type {cls.__module__}.{cls.__qualname__}: use a "
            f"pydantic model (subclass akgentic.core.SerializableModel), a primitive, or a "
            f"container of those"
        )

    return refuse


def _serializer_for(cls: type) -> Serializer:
    """The serializer for values of exactly ``cls``."""
    if cls in (str, int, float, bool, type(None)):
        return _identity
    if issubclass(cls, BaseModel):
        return _model_serializer(cls)
    if hasattr(cls, "__akgentic_serialize__"):
        return lambda value: value.__akgentic_serialize__()
    if issubclass(cls, Enum):
        return lambda value: serialize(value.value)
    if issubclass(cls, str):
        return str
    if issubclass(cls, int):
        return int
    if issubclass(cls, float):
        return float
    if issubclass(cls, UUID | Decimal | PurePath):
        return str
    if issubclass(cls, datetime | date | time):
        return lambda value: value.isoformat()
    if issubclass(cls, timedelta):
        return lambda value: value.total_seconds()
    if issubclass(cls, dict):
        return lambda value: {_serialize_key(k): serialize(v) for k, v in value.items()}
    if issubclass(cls, list | tuple):
        return lambda value: [serialize(item) for item in value]
    if issubclass(cls, set | frozenset):
        return _serialize_set
    return _refuse(cls)


def _decode_model(path: str, fields: dict[str, Any]) -> Any:
    cls = registered_class(path)
    custom: Callable[[dict[str, Any]], Any] | None = getattr(cls, "__akgentic_deserialize__", None)
    if custom is not None:
        return custom(fields)
    if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
        raise SerializationError(f"{path!r} is registered but is not a pydantic model")
    try:
        return cls.model_validate(fields, by_name=True)
    except ValidationError as exc:
        raise SerializationError(f"stored {path} does not validate: {exc}") from exc


def deserialize(data: Any) -> Any:
    """Rebuild the objects that :func:`serialize` produced.

    Raises :class:`SerializationError` for a marker naming no registered class or a
    payload that does not validate against its class.
    """
    if isinstance(data, dict):
        decoded = {k: deserialize(v) for k, v in data.items() if k != MODEL_MARKER}
        path = data.get(MODEL_MARKER)
        if path is None:
            return decoded
        if not isinstance(path, str):
            raise SerializationError(f"{MODEL_MARKER} must be a string, got {path!r}")
        return _decode_model(path, decoded)
    if isinstance(data, list):
        return [deserialize(item) for item in data]
    return data

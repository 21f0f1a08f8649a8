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
from typing import Any, ClassVar, Protocol, TypeVar, runtime_checkable
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


@runtime_checkable
class CustomSerializable(Protocol):
    """A non-pydantic class that serializes itself (``ActorAddress`` is one).

    ``__akgentic_serialize__`` returns a dict with the ``__model__`` marker, and the
    class' ``__akgentic_deserialize__`` classmethod rebuilds an object from the other
    keys. Such a class must still be registered to be decodable.
    """

    def __akgentic_serialize__(self) -> dict[str, Any]: ...


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


def _serialize_model(model: BaseModel) -> dict[str, Any]:
    cls = type(model)
    if _registry.get(model_path(cls)) is not cls:
        register_serializable(cls)
    out: dict[str, Any] = {MODEL_MARKER: model_path(cls)}
    for name, field in cls.model_fields.items():
        if field.exclude is True:
            continue
        out[name] = serialize(getattr(model, name))
    extra = model.__pydantic_extra__
    if extra:
        for name, value in extra.items():
            out[name] = serialize(value)
    return out


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


_SCALARS = (str, int, float, bool, type(None))


def serialize(value: Any) -> Any:
    """Return JSON-compatible data for ``value`` (see the module docstring)."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, BaseModel):
        return _serialize_model(value)
    if isinstance(value, CustomSerializable):
        return value.__akgentic_serialize__()
    if isinstance(value, Enum):
        return serialize(value.value)
    if isinstance(value, UUID | Decimal | PurePath):
        return str(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, dict):
        return {_serialize_key(k): serialize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [serialize(item) for item in value]
    if isinstance(value, set | frozenset):
        items = [serialize(item) for item in value]
        with contextlib.suppress(TypeError):  # sorted when possible: equal sets, equal data
            items.sort()
        return items
    raise SerializationError(
        f"cannot serialize a value of type {type(value).__module__}.{type(value).__qualname__}: "
        f"use a pydantic model (subclass akgentic.core.SerializableModel), a primitive, "
        f"or a container of those"
    )


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

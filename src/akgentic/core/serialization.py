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

Both directions refuse data nested deeper than :data:`MAX_DEPTH` levels of dicts, lists
and models with a :class:`SerializationError` — a bound that keeps what is written
readable and a hostile payload from exhausting the stack. Any failure to decode —
a class's own validator or custom decoder raising whatever it raises — is a
``SerializationError`` too, quoting at most an excerpt of the data.
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading
from collections.abc import Callable, Iterable
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import Enum
from pathlib import PurePath
from typing import Any, ClassVar, TypeVar
from uuid import UUID

from pydantic import BaseModel, ConfigDict, ValidationError

from akgentic.core.excerpt import clip, excerpt, validation_words

__all__ = [
    "MAX_DEPTH",
    "MAX_VALUES",
    "MODEL_MARKER",
    "SerializableModel",
    "SerializationError",
    "check_shape",
    "deserialize",
    "is_registered",
    "model_path",
    "non_finite",
    "register_serializable",
    "registered_class",
    "serialize",
]

MODEL_MARKER = "__model__"
"""The key under which a serialized model names its class."""

MAX_DEPTH = 100
"""The deepest nesting of dicts, lists and models serialized or decoded."""

MAX_VALUES = 1_000_000
"""The most values data read from a file may expand to (see :func:`check_shape`)."""

T = TypeVar("T", bound=type)


class SerializationError(ValueError):
    """A value cannot be serialized, or serialized data cannot be decoded.

    When a class's validation refused the data, the error's cause is that
    ``ValidationError``, and ``model`` and ``data`` are the class and what it was given
    (None when a class's own decoder refused it): :meth:`refusal_words` says it."""

    def __init__(self, message: str, *, model: type[BaseModel] | None = None, data: Any = None):
        super().__init__(message)
        self.model = model
        self.data = data

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (across processes: Ray) as its message alone: its cause does not travel,
        and the data it refused may hold classes the other side cannot rebuild."""
        return (type(self), self.args)

    def refusal_words(self, top: str = "(top)") -> str | None:
        """The validation that refused the data, on one line (``validation_words``: a
        misspelt key with the field it was likely meant to be, when the class is known);
        None when no validation refused it."""
        cause = self.__cause__
        if not isinstance(cause, ValidationError):
            return None
        return validation_words(cause, top=top, model=self.model, data=self.data)


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
            f"unknown {MODEL_MARKER} {excerpt(path)}: no serializable class is registered "
            f"under that path. Import the module that defines it ({clip(module)}) before "
            f"decoding, "
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


def _too_deep() -> SerializationError:
    return SerializationError(
        f"the data is nested deeper than {MAX_DEPTH} levels (dicts, lists and models); "
        f"akgentic refuses it rather than exhaust the stack: flatten it"
    )


def non_finite(data: Any) -> tuple[str, str] | None:
    """The first number in JSON-like ``data`` (dicts, lists, scalars) that JSON does not
    hold — NaN or an infinity — as (its dotted path, how JSON text spells it: ``NaN``,
    ``Infinity``, ``-Infinity``); None when every number is finite.

    Python's ``json`` reads ``NaN`` and ``Infinity`` (and YAML ``.nan``, ``.inf``), and a
    bound such as ``gt=0`` lets infinity through; kept, such data is no longer JSON (a
    Postgres ``jsonb`` column refuses it) and reads back as null. Without recursion:
    data as deep as a parser gives is walked. Bound the data's shape first
    (:func:`check_shape`) when it may hold one value in many places."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            said = "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
            return where or "(the value itself)", said
        if isinstance(value, dict):
            items: Iterable[tuple[Any, Any]] = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        stack.extend(
            (item, f"{where}.{key}" if where else str(key)) for key, item in reversed(list(items))
        )
    return None


def check_shape(data: Any) -> None:
    """:class:`SerializationError` when JSON-like ``data`` (dicts and lists) nests deeper
    than :data:`MAX_DEPTH`, holds itself, or expands to more than :data:`MAX_VALUES`
    values, a value held in several places counted in each (what YAML aliases nested in
    aliases build: a few hundred bytes that expand to millions of values).

    Linear in the distinct dicts and lists, without recursion: each is measured once,
    its depth and expanded size kept by identity, so neither deep nor shared data makes
    the check itself the cost it guards against."""
    measured: dict[int, tuple[int, int]] = {}  # id -> (levels, values), while data holds it
    open_: set[int] = set()  # expanded, not yet measured: the path from the root
    stack: list[tuple[Iterable[Any], Any, bool]] = []
    if (top := _children(data)) is not None:
        stack.append((top, data, False))
    while stack:
        children, value, children_done = stack.pop()
        key = id(value)
        if children_done:
            open_.discard(key)
            levels, values = 1, 1
            for child in children:
                child_levels, child_values = measured.get(id(child), (0, 1))
                levels = max(levels, child_levels + 1)
                values += child_values
            if levels > MAX_DEPTH:
                raise _too_deep()
            if values > MAX_VALUES:
                raise SerializationError(
                    f"the data expands to more than {MAX_VALUES:,} values (YAML aliases "
                    f"used inside aliases, over and over?); akgentic refuses it rather "
                    f"than exhaust memory: write the values out, or use fewer aliases"
                )
            measured[key] = (levels, values)
        elif key not in measured:
            if key in open_:
                raise SerializationError(
                    "the data contains itself (a YAML alias inside its own anchor); "
                    "akgentic refuses it: write the value out instead"
                )
            open_.add(key)
            stack.append((children, value, True))
            for child in children:
                if (grand := _children(child)) is not None:
                    stack.append((grand, child, False))


def _children(value: Any) -> Iterable[Any] | None:
    if isinstance(value, dict):
        return value.values()
    if isinstance(value, list):
        return value
    return None


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


Serializer = Callable[[Any, int], Any]
"""Serializes one value found ``depth`` containers deep."""

_serializers: dict[type, Serializer] = {}
"""One serializer per concrete type, resolved on first sight: no isinstance chain per value."""


def serialize(value: Any) -> Any:
    """Return JSON-compatible data for ``value`` (see the module docstring)."""
    return _serialize(value, 0)


def _serialize(value: Any, depth: int) -> Any:
    cls = type(value)
    serializer = _serializers.get(cls)
    if serializer is None:
        serializer = _serializer_for(cls)
        _serializers[cls] = serializer
    return serializer(value, depth)


def _identity(value: Any, depth: int) -> Any:
    return value


def _model_serializer(cls: type[BaseModel]) -> Serializer:
    path = model_path(cls)
    if _registry.get(path) is not cls:
        register_serializable(cls)
    names = [name for name, field in cls.model_fields.items() if field.exclude is not True]

    def serialize_model(model: Any, depth: int) -> dict[str, Any]:
        if depth >= MAX_DEPTH:
            raise _too_deep()
        depth += 1
        fields = model.__dict__
        out: dict[str, Any] = {MODEL_MARKER: path}
        for name in names:
            out[name] = _serialize(fields[name], depth)
        extra = model.__pydantic_extra__
        if extra:
            for name, value in extra.items():
                out[name] = _serialize(value, depth)
        return out

    return serialize_model


def _serialize_dict(value: Any, depth: int) -> dict[str, Any]:
    if depth >= MAX_DEPTH:
        raise _too_deep()
    return {_serialize_key(k): _serialize(v, depth + 1) for k, v in value.items()}


def _serialize_list(value: Any, depth: int) -> list[Any]:
    if depth >= MAX_DEPTH:
        raise _too_deep()
    return [_serialize(item, depth + 1) for item in value]


def _serialize_set(value: Any, depth: int) -> list[Any]:
    items = _serialize_list(value, depth)
    with contextlib.suppress(TypeError):  # sorted when possible: equal sets, equal data
        items.sort()
    return items


def _refuse(cls: type) -> Serializer:
    def refuse(value: Any, depth: int) -> Any:
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
        return lambda value, depth: value.__akgentic_serialize__()
    if issubclass(cls, Enum):
        return lambda value, depth: _serialize(value.value, depth)
    if issubclass(cls, str):
        return lambda value, depth: str(value)
    if issubclass(cls, int):
        return lambda value, depth: int(value)
    if issubclass(cls, float):
        return lambda value, depth: float(value)
    if issubclass(cls, UUID | Decimal | PurePath):
        return lambda value, depth: str(value)
    if issubclass(cls, datetime | date | time):
        return lambda value, depth: value.isoformat()
    if issubclass(cls, timedelta):
        return lambda value, depth: value.total_seconds()
    if issubclass(cls, dict):
        return _serialize_dict
    if issubclass(cls, list | tuple):
        return _serialize_list
    if issubclass(cls, set | frozenset):
        return _serialize_set
    return _refuse(cls)


def _decode_model(path: str, fields: dict[str, Any]) -> Any:
    cls = registered_class(path)
    custom: Callable[[dict[str, Any]], Any] | None = getattr(cls, "__akgentic_deserialize__", None)
    if custom is None:
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
            raise SerializationError(f"{path!r} is registered but is not a pydantic model")
        custom = functools.partial(cls.model_validate, by_name=True)
    try:
        return custom(fields)
    except SerializationError:
        raise
    except ValidationError as exc:
        model = cls if isinstance(custom, functools.partial) else None  # its own fields
        reason = clip(validation_words(exc, model=model, data=fields), 2000)  # one line
        raise SerializationError(
            f"stored {path} does not validate: {reason}", model=model, data=fields
        ) from exc
    except Exception as exc:  # a class's own decoder or validator: anything, but reported
        reason = clip(str(exc) or type(exc).__name__, 400)
        raise SerializationError(f"stored {path} cannot be decoded: {reason}") from exc


def deserialize(data: Any) -> Any:
    """Rebuild the objects that :func:`serialize` produced.

    Raises :class:`SerializationError` for a marker naming no registered class, a
    payload that does not validate against its class (or that its class's own decoder
    refuses), and data nested deeper than :data:`MAX_DEPTH`.
    """
    return _deserialize(data, 0)


def _deserialize(data: Any, depth: int) -> Any:
    if isinstance(data, dict):
        if depth >= MAX_DEPTH:
            raise _too_deep()
        decoded = {k: _deserialize(v, depth + 1) for k, v in data.items() if k != MODEL_MARKER}
        path = data.get(MODEL_MARKER)
        if path is None:
            return decoded
        if not isinstance(path, str):
            raise SerializationError(f"{MODEL_MARKER} must be a string, got {excerpt(path)}")
        return _decode_model(path, decoded)
    if isinstance(data, list):
        if depth >= MAX_DEPTH:
            raise _too_deep()
        return [_deserialize(item, depth + 1) for item in data]
    return data

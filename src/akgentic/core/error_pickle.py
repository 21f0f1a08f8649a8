"""akgentic's errors between processes: pickled whole, rebuilt only as akgentic's own.

A process that runs a team elsewhere (a Ray actor) carries an error back as
:func:`dump_error`'s bytes, and the caller rebuilds it with :func:`load_error`: the same
class, message and fields, so ``except TeamNotFoundError`` works as it does in process.

Loading never trusts the bytes to name what they like. A class resolves only from a
module of ``akgentic`` this process has already imported (read from its namespace, so a
module's ``__getattr__`` never runs, and nothing is imported), and only if it is an
exception, a pydantic model or an enum defined there; besides those, a few value types
of the standard library (:data:`VALUE_TYPES`). Anything else — an error of a card's own
module, a field holding a live object — makes :func:`dump_error` answer None, and the
caller falls back on a base type with the message.

An error whose ``__init__`` does not take its ``args`` (it builds its message from
fields) pickles with :func:`reduce_by_fields` as its ``__reduce__``.
"""

from __future__ import annotations

import copyreg
import io
import pickle
import sys
from datetime import date, datetime, time, timedelta, timezone
from enum import Enum
from pathlib import PurePath
from types import ModuleType
from typing import Any
from uuid import UUID

from pydantic import BaseModel

__all__ = ["VALUE_TYPES", "dump_error", "load_error", "reduce_by_fields"]

VALUE_TYPES: frozenset[type] = frozenset({UUID, datetime, date, time, timedelta, timezone})
"""The standard library's types an error's fields may hold besides akgentic's models and
plain data (paths too: :class:`pathlib.PurePath` and its subclasses)."""

_PACKAGE = "akgentic"
_ROOTS: tuple[type, ...] = (BaseException, BaseModel, Enum)
"""What an akgentic class must be to be rebuilt: an error, a model of its fields, an enum."""


def reduce_by_fields(exc: BaseException) -> tuple[Any, ...]:
    """``exc`` pickled as its class, ``args`` and attributes, without calling ``__init__``.

    The ``__reduce__`` of an error whose constructor takes other parameters than its
    ``args`` (``UnknownModelError(key, known)`` keeps only the message it built):
    unpickling makes the instance with ``BaseException.__new__`` (which sets ``args``)
    and restores its attributes, so it comes back with the same message and fields.
    """
    return copyreg.__newobj__, (type(exc), *exc.args), dict(vars(exc))  # type: ignore[attr-defined]


def dump_error(exc: BaseException) -> bytes | None:
    """``exc`` pickled, when it is an akgentic error that :func:`load_error` rebuilds as
    itself (checked here, where it was raised); None for any other error."""
    if not _is_own(type(exc), BaseException):
        return None
    try:
        data = pickle.dumps(exc, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a field that does not pickle (a lock, a live connection)
        return None
    back = load_error(data)
    return data if back is not None and type(back) is type(exc) else None


def load_error(data: bytes) -> BaseException | None:
    """The akgentic error pickled in ``data``; None if it names anything else (see the
    module doc) or does not load."""
    try:
        value = _OwnUnpickler(io.BytesIO(data)).load()
    except Exception:
        return None
    return (
        value if isinstance(value, BaseException) and _is_own(type(value), BaseException) else None
    )


class _OwnUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        found = _own_class(module, name)
        if found is None:
            raise pickle.UnpicklingError(f"{module}.{name} is not an akgentic error or value")
        return found


def _own_class(module_name: str, qualname: str) -> type | None:
    """The class ``module_name``.``qualname`` if it is one :func:`load_error` may rebuild."""
    module = sys.modules.get(module_name)
    if not isinstance(module, ModuleType):
        return None
    value: Any = module
    for part in qualname.split("."):
        namespace = vars(value) if isinstance(value, ModuleType | type) else {}
        value = namespace.get(part)
    if not isinstance(value, type) or f"{value.__module__}.{value.__qualname__}" != (
        f"{module_name}.{qualname}"
    ):
        return None
    if value in VALUE_TYPES or (
        issubclass(value, PurePath) and module_name in ("pathlib", "pathlib._local")
    ):
        return value
    return value if _is_own(value, *_ROOTS) else None


def _is_own(cls: type, *roots: type) -> bool:
    module = cls.__module__
    return (module == _PACKAGE or module.startswith(_PACKAGE + ".")) and issubclass(cls, roots)

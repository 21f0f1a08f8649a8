"""How an error message quotes a value it was given: enough to recognise it, never all.

A model can send a tool a megabyte, a person can paste one, a damaged row can hold one;
an error that echoes it whole floods the model's context, the terminal and the log.
Every message that quotes input quotes it through :func:`excerpt` (a value, as its
``repr``) or :func:`clip` (text that is already a message, e.g. a nested error's). An
answer too long for a model's context (a page, a server's result) is :func:`cut`, with a
note saying how much was left out and how to get less.

A pydantic ``ValidationError`` is worded here too, once for every surface (the CLI's
``error:`` line, a server's ``detail``, a tool's refusal): :func:`validation_words`,
``field.path: message`` on one line, a validator's own words without pydantic's
``Value error, `` (:func:`validator_words`), never its title, ``[type=…]`` or link.
A value that may take several shapes (a card's ``Param | bool`` capability, an MCP
connection) fails in every shape it was tried as; :func:`union_errors` keeps the errors
of the shape it was written in. Given the model and the data it refused, a key that is no
field of its model also says which field it was likely meant to be (:func:`field_errors`:
``did you mean 'max_results'?``), the same in a YAML file, a posted card and the catalog.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from akgentic.core.words import did_you_mean

__all__ = [
    "EXCERPT_CHARS",
    "clip",
    "cut",
    "errors_words",
    "exception_line",
    "exception_words",
    "excerpt",
    "field_errors",
    "union_errors",
    "validation_words",
    "validator_words",
]

EXCERPT_CHARS = 80
"""The longest quotation of a value in an error message, in characters."""


def clip(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` cut at ``limit`` characters with ``…`` and its full length when longer."""
    if len(text) <= limit:
        return text
    return f"{text[: limit - 1]}… ({len(text)} characters)"


def excerpt(value: object, limit: int = EXCERPT_CHARS) -> str:
    """``repr(value)`` through :func:`clip`: ``'mmmm…' (1000002 characters)``."""
    try:
        text = repr(value)
    except Exception:  # a value whose repr fails (or recurses too deep) is still named
        text = f"<{type(value).__name__}>"
    return clip(text, limit)


_PYDANTIC_PREFIXES = ("Value error, ", "Assertion failed, ")
"""What pydantic puts before the words of a validator that raised ``ValueError`` (or
failed an ``assert``)."""


def validator_words(msg: str) -> str:
    """A pydantic error's ``msg`` as people read it: a validator's own words, without
    pydantic's ``Value error, `` (or ``Assertion failed, ``) in front of them."""
    for prefix in _PYDANTIC_PREFIXES:
        if msg.startswith(prefix):
            return msg[len(prefix) :]
    return msg


def validation_words(
    exc: ValidationError,
    limit: int = 5,
    top: str = "(top)",
    *,
    model: type[BaseModel] | None = None,
    data: Any = None,
) -> str:
    """A pydantic ``ValidationError`` on one line: ``field.path: message`` parts (the
    first ``limit``, and how many more), ``top`` for an error of the whole object, the
    messages through :func:`validator_words`; never pydantic's title line, ``[type=…,
    input_value=…]`` or link to its site. Given the ``model`` that refused ``data``, the
    errors are :func:`field_errors`: each union's in the shape it was written in, and a
    misspelt key with the field it was likely meant to be."""
    found = (
        [(tuple(e["loc"]), str(e["msg"])) for e in exc.errors(include_url=False)]
        if model is None
        else field_errors(model, exc, data)
    )
    return errors_words(found, limit, top)


def errors_words(
    found: Iterable[tuple[tuple[Any, ...], str]], limit: int = 5, top: str = "(top)"
) -> str:
    """``(loc, msg)`` errors (:func:`field_errors`' or another walk's) on one line, as
    :func:`validation_words` says them."""
    parts = [
        f"{'.'.join(map(str, loc)) or top}: {validator_words(' '.join(msg.split()))}"
        for loc, msg in found
    ]
    more = f" (and {len(parts) - limit} more)" if len(parts) > limit else ""
    return "; ".join(parts[:limit]) + more


def exception_words(exc: BaseException) -> str:
    """``exc``'s words on one line: a pydantic ``ValidationError`` as
    :func:`validation_words` says it, any other with its whitespace runs (a database
    driver's message spans several lines) made single spaces; empty when its ``str()``
    raises. Not clipped: for a message that already names what failed."""
    try:
        if isinstance(exc, ValidationError):
            return validation_words(exc)
        return " ".join(str(exc).split())
    except Exception:
        return ""


def exception_line(exc: BaseException, limit: int = 400) -> str:
    """``exc`` on one line for a message: its class and its words
    (:func:`exception_words`), through :func:`clip`; a ``ValidationError`` also names the
    model that refused (``ValidationError for Settings: port: …``). An exception whose
    ``str()`` raises is named by its class."""
    words = exception_words(exc)
    name = type(exc).__name__
    if isinstance(exc, ValidationError):
        name = f"{name} for {exc.title}"
    return clip(f"{name}: {words}" if words else name, limit)


def cut(text: str, budget: int, hint: str) -> str:
    """``text`` stripped, or its first ``budget`` characters and a note naming how many
    more there were and ``hint`` (how to get less)."""
    text = text.strip()
    if len(text) <= budget:
        return text
    return f"{text[:budget].rstrip()}\n[cut: {len(text) - budget:,} more characters; {hint}]"


_TAG = re.compile(r"[A-Z]\w*|bool|int|float|str|bytes|none|\w[\w-]*\[.*\]")
"""How pydantic labels the branch of a union in an error's ``loc``: a model's class name
(``GetPlanning``), a scalar type (``bool``) or a wrapped one
(``function-after[check(), MCPHTTPConnectionConfig]``). A card's fields are snake_case."""

_KINDS = {
    "bool": "true or false",
    "int": "a whole number",
    "float": "a number",
    "str": "a string",
    "bytes": "a string",
    "none": "null",
}


def _kind(tag: str) -> str:
    """What a union branch's tag says the value should be, in words."""
    if tag in _KINDS:
        return _KINDS[tag]
    if "[" in tag:
        head, _, inner = tag.partition("[")
        if head in ("list", "set", "frozenset", "tuple"):
            return "a list"
        if head == "dict":
            return "a mapping"
        return _kind(inner.rstrip("]").split(",")[-1].strip())
    return f"a mapping of {tag}'s fields"


def _mapping_last(kind: str) -> bool:
    """Scalars first: ``true or false, or a mapping of GetPlanning's fields``."""
    return kind.startswith("a mapping")


def _tags(loc: tuple[Any, ...], data: Any, kind: str) -> tuple[bool, ...]:
    """Which parts of ``loc`` are union tags rather than keys and indexes of ``data``: a
    part that looks like a tag and is not a key where it stands (the last part of a
    ``missing`` or ``extra_forbidden`` error is always a key: the field it names)."""
    found: list[bool] = []
    value: Any = data
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        in_map = isinstance(value, Mapping) and part in value
        in_list = isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value)
        if in_map or in_list:
            value, tag = value[part], False
        else:
            tag = (
                isinstance(part, str)
                and _TAG.fullmatch(part) is not None
                and not (last and kind in ("missing", "extra_forbidden"))
            )
            if not tag:
                value = None
        found.append(tag)
    return tuple(found)


def union_errors(
    errors: Iterable[Mapping[str, Any]], data: Any
) -> list[tuple[tuple[Any, ...], str]]:
    """``(loc, msg)`` of pydantic ``errors`` (of validating ``data``), each union's
    errors narrowed to the shape the value was written in, and the union's tags taken out
    of ``loc`` (they are no field a person wrote).

    A union reports an error for each branch: ``get_planning: {bogus: 1}`` is refused as
    a ``GetPlanning`` (``bogus`` is not a field) and as a ``bool`` (a mapping is not a
    boolean). A branch that refused the value's very kind (a mapping for a ``bool``) is
    left out when another got further; of those that got further, the ones with the
    fewest errors stay. When every branch refused its kind, one error says every kind the
    value may have: ``Input should be true or false, or a mapping of GetPlanning's
    fields``."""
    pending = [
        (tuple(e["loc"]), _tags(tuple(e["loc"]), data, str(e.get("type", ""))), e) for e in errors
    ]
    return _narrow(pending)


def _narrow(
    pending: list[tuple[tuple[Any, ...], tuple[bool, ...], Mapping[str, Any]]],
) -> list[tuple[tuple[Any, ...], str]]:
    """:func:`union_errors` on errors whose tags are known: the outermost union of each
    site first, then (its tag taken out) the unions inside the branches kept."""
    out: list[tuple[tuple[Any, ...], str]] = []
    groups: dict[tuple[Any, ...], dict[str, list[Any]]] = {}
    order: list[tuple[str, Any]] = []  # errors and union sites, in pydantic's order
    for loc, tags, error in pending:
        if True not in tags:
            order.append(("error", (loc, str(error["msg"]))))
            continue
        at = tags.index(True)
        prefix = loc[:at]
        if prefix not in groups:
            groups[prefix] = {}
            order.append(("union", prefix))
        groups[prefix].setdefault(str(loc[at]), []).append((loc, tags, error))
    for what, item in order:
        if what == "error":
            out.append(item)
            continue
        prefix = item
        branches = groups[prefix]
        at = len(prefix)

        def refused_kind(found: list[Any], at: int = at) -> bool:
            return all(
                len(loc) == at + 1 and str(e.get("type", "")).endswith(("_type", "_parsing"))
                for loc, _, e in found
            )

        further = {tag: found for tag, found in branches.items() if not refused_kind(found)}
        if not further:
            kinds = sorted(dict.fromkeys(_kind(tag) for tag in branches), key=_mapping_last)
            shown = ", or ".join(kinds)
            out.append((prefix, f"Input should be {shown}"))
            continue
        fewest = min(len(found) for found in further.values())
        kept = [
            (loc[:at] + loc[at + 1 :], tags[:at] + tags[at + 1 :], e)
            for found in further.values()
            if len(found) == fewest
            for loc, tags, e in found
        ]
        out.extend(_narrow(kept))
    return out


_EXTRA = "Extra inputs are not permitted"
"""What pydantic says of a key that is no field of a model that forbids extra keys."""


def field_errors(
    model: type[BaseModel], exc: ValidationError, data: Any
) -> list[tuple[tuple[Any, ...], str]]:
    """``(loc, msg)`` of ``exc`` (``model`` validating ``data``) through
    :func:`union_errors`; a key that is no field of its model also says which field it
    was likely meant to be (``did you mean 'max_results'?``)."""
    errors = exc.errors(include_url=False)
    extra = {e["loc"][-1] for e in errors if e["type"] == "extra_forbidden" and e["loc"]}
    said: list[tuple[tuple[Any, ...], str]] = []
    for loc, msg in union_errors(errors, data):
        if loc and loc[-1] in extra and msg == _EXTRA and len(said) < _NEAR_LIMIT:
            try:
                near = did_you_mean(str(loc[-1]), _field_names(model, data, loc[:-1]))
            except Exception:  # a model the walk cannot follow: the plain words stand
                near = ""
            msg = f"{msg}; {near}" if near else msg
        said.append((loc, msg))
    return said


_NEAR_LIMIT = 20
"""How many errors :func:`field_errors` looks for a nearby field for (a message shows
the first few; a card of thousands of misspelt keys must not cost a walk for each)."""


def _field_names(model: type[BaseModel], data: Any, loc: tuple[Any, ...]) -> list[str]:
    """The field names and aliases of the model(s) at ``loc`` inside ``data``, walked from
    ``model`` through the annotations (lists, mappings, unions such as ``Param | bool``;
    a value a model says is written for another of its own, :func:`_models`); empty when
    the walk is lost."""
    annotation: Any = model
    value = data
    for part in loc:
        steps: list[Any] = []
        for found in _models(annotation, value):
            field = next((f for n, f in found.model_fields.items() if part in (n, f.alias)), None)
            if field is not None:
                steps.append(field.annotation)
        for arg in _members(annotation):
            origin, args = typing.get_origin(arg), typing.get_args(arg)
            if isinstance(part, int) and origin in (list, set, tuple, frozenset) and args:
                steps.append(args[0])
            elif origin is dict and len(args) == 2:
                steps.append(args[1])
        if not steps:
            return []
        annotation = typing.Union[tuple(steps)] if len(steps) > 1 else steps[0]  # noqa: UP007
        inside = (isinstance(value, dict) and part in value) or (
            isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value)
        )
        value = value[part] if inside else None
    names: list[str] = []
    for found in _models(annotation, value):
        for name, field in found.model_fields.items():
            names += [name] + ([field.alias] if field.alias else [])
    return names


def _members(annotation: Any) -> list[Any]:
    """``annotation`` with ``Annotated`` and unions taken apart."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _members(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _members(arg)]
    return [annotation]


def _models(annotation: Any, value: Any) -> list[type[BaseModel]]:
    """The models ``annotation`` allows for ``value``. A model with a ``written_model``
    class method says which model a value written for it really is: a tool card written
    ``{type: PlanningTool, ...}`` is its own card class, not the ``ToolCard`` it is listed
    as (``ToolCard.written_model``); None from it: the walk is lost there."""
    found: list[type[BaseModel]] = []
    for member in _members(annotation):
        if not (isinstance(member, type) and issubclass(member, BaseModel)):
            continue
        written = getattr(member, "written_model", None)
        if callable(written):
            member = written(value)
            if member is None:
                continue
        found.append(member)
    return found

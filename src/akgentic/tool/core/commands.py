"""CommandRegistry: commands by name, their schema, and the ``/``-text grammar.

A command is registered by its callable's ``__name__`` and described by its signature
— the registry derives the schema from the callable, so there is no second contract to
keep in step. Dispatch replies only: a command is not an enforcement point.

The grammar of :meth:`CommandRegistry.dispatch`, exactly:

- The text is ``[/]name [token ...]``; the leading ``/`` is optional. ``name`` is the
  first whitespace-separated word. A name nobody registered raises
  :class:`CommandNotRecognized` — the only case that does.
- The rest is split like a shell line (``shlex``): quotes group, backslash escapes.
- A token is a *keyword* only when the text before its first ``=`` is a known parameter
  name of the callable (one that may be passed by keyword). Every other token is
  *positional*, ``=`` and all — a value containing ``=`` is never silently swallowed.
  So ``/switch_model key=openai:gpt-5.2`` binds the whole token to ``model``.
- Positional tokens bind in signature order, then keywords, with Python's rules:
  missing, extra or doubly bound arguments are errors.
- Each value converts to its parameter's annotation (unannotated and ``str`` stay
  text; other types through pydantic, lax, then as JSON: ``3``, ``true``, ``[1, 2]``).

Bad arguments to a known command raise :class:`CommandArgumentError` — a
``RetriableError`` whose message names the command, the problem and the usage line,
readable as is by whoever typed it. Raising, not returning, keeps a command's return
value its own. Errors raised by the command itself propagate untouched, and an async
command's coroutine is returned for the caller to await.
"""

from __future__ import annotations

import inspect
import shlex
import typing
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter, ValidationError

from akgentic.tool.core.event import CommandArg, CommandDescriptor, CommandsAnnouncedEvent
from akgentic.tool.errors import CommandArgumentError, CommandNotRecognized

__all__ = ["CommandRegistry"]

_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_VARIADIC_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
_TEXT_TYPES: tuple[Any, ...] = (str, Any, inspect.Parameter.empty)
_JSON_SCALARS = (str, int, float, bool, type(None))


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """Resolved annotations; unresolvable string annotations are treated as text."""
    try:
        return typing.get_type_hints(fn)
    except Exception:  # a forward reference to a closure-local type, for one
        raw: dict[str, Any] = dict(getattr(fn, "__annotations__", {}))
        return {name: hint for name, hint in raw.items() if not isinstance(hint, str)}


def _type_name(hint: Any) -> str:
    if hint in _TEXT_TYPES:
        return "str"
    if isinstance(hint, type):
        return hint.__name__
    return str(hint).replace("typing.", "")


def _first_paragraph(fn: Callable[..., Any]) -> str:
    doc = inspect.getdoc(fn) or ""
    return doc.split("\n\n", 1)[0].strip()


class _Command:
    """One registered callable with its signature, hints and descriptor."""

    def __init__(self, name: str, fn: Callable[..., Any], owner: str) -> None:
        self.name = name
        self.fn = fn
        self.owner = owner
        self.signature = inspect.signature(fn)
        self.hints = _type_hints(fn)
        self.keywords = {
            p.name for p in self.signature.parameters.values() if p.kind in _KEYWORD_KINDS
        }
        self._adapters: dict[str, TypeAdapter[Any]] = {}
        self.descriptor = CommandDescriptor(
            name=name, description=_first_paragraph(fn), args=self._args()
        )

    def _args(self) -> list[CommandArg]:
        args: list[CommandArg] = []
        for param in self.signature.parameters.values():
            if param.kind in _VARIADIC_KINDS:
                continue
            required = param.default is inspect.Parameter.empty
            default = None
            if not required:
                value = param.default
                default = value if isinstance(value, _JSON_SCALARS) else repr(value)
            hint = self.hints.get(param.name, param.annotation)
            args.append(
                CommandArg(
                    name=param.name, type=_type_name(hint), required=required, default=default
                )
            )
        return args

    def fail(self, problem: str) -> CommandArgumentError:
        return CommandArgumentError(f"/{self.name}: {problem}. Usage: {self.descriptor.usage}")

    def convert(self, name: str, raw: str) -> Any:
        hint = self.hints.get(name, inspect.Parameter.empty)
        if hint in _TEXT_TYPES:
            return raw
        adapter = self._adapters.get(name)
        if adapter is None:
            adapter = self._adapters[name] = TypeAdapter(hint)
        try:
            return adapter.validate_python(raw)
        except ValidationError as exc:
            try:
                return adapter.validate_json(raw)
            except ValidationError:
                reason = exc.errors()[0]["msg"] if exc.errors() else str(exc)
                raise self.fail(
                    f"argument {name}={raw!r} is not a valid {_type_name(hint)} ({reason})"
                ) from None

    def bind(self, tokens: list[str]) -> inspect.BoundArguments:
        positional: list[str] = []
        keywords: dict[str, str] = {}
        for token in tokens:
            key, sep, value = token.partition("=")
            if sep and key in self.keywords:
                if key in keywords:
                    raise self.fail(f"argument {key!r} given twice")
                keywords[key] = value
            else:
                positional.append(token)
        try:
            bound = self.signature.bind(*positional, **keywords)
        except TypeError as exc:
            raise self.fail(str(exc)) from None
        for name, value in list(bound.arguments.items()):
            kind = self.signature.parameters[name].kind
            if kind is inspect.Parameter.VAR_POSITIONAL:
                bound.arguments[name] = tuple(self.convert(name, item) for item in value)
            elif kind is not inspect.Parameter.VAR_KEYWORD:
                bound.arguments[name] = self.convert(name, value)
        return bound


class CommandRegistry:
    """Commands by name: registration, discovery, programmatic calls and ``/``-text."""

    def __init__(self) -> None:
        self._commands: dict[str, _Command] = {}

    def register(self, fn: Callable[..., Any], *, name: str | None = None, owner: str = "") -> None:
        """Register ``fn`` under ``name`` (default: its ``__name__``).

        A second registration under one name raises ValueError naming both owners —
        never silent shadowing.
        """
        key = name if name is not None else getattr(fn, "__name__", None)
        if not key:
            raise ValueError(f"{fn!r} has no __name__; pass name= to register it")
        existing = self._commands.get(key)
        if existing is not None:
            raise ValueError(
                f"command /{key} is registered twice: by {existing.owner or '?'} "
                f"and by {owner or '?'}"
            )
        self._commands[key] = _Command(key, fn, owner)

    def __contains__(self, name: object) -> bool:
        return name in self._commands

    def __len__(self) -> int:
        return len(self._commands)

    def names(self) -> list[str]:
        """Registered command names, in registration order."""
        return list(self._commands)

    def get(self, name: str) -> Callable[..., Any] | None:
        """The callable registered under ``name``, or None."""
        command = self._commands.get(name)
        return command.fn if command is not None else None

    def descriptors(self) -> list[CommandDescriptor]:
        """Every command's schema, derived from its signature."""
        return [command.descriptor for command in self._commands.values()]

    def announcement(self) -> CommandsAnnouncedEvent:
        """The event that announces these commands to every frontend."""
        return CommandsAnnouncedEvent(commands=self.descriptors())

    def call(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """Call a command programmatically, with Python arguments."""
        command = self._commands.get(name)
        if command is None:
            raise CommandNotRecognized(name, self.names())
        return command.fn(*args, **kwargs)

    def dispatch(self, text: str) -> Any:
        """Parse ``text`` with the module's grammar, call the command, return its reply."""
        body = text.strip()
        if body.startswith("/"):
            body = body[1:]
        head, *rest = body.split(None, 1) or [""]
        command = self._commands.get(head)
        if command is None:
            raise CommandNotRecognized(head, self.names())
        try:
            tokens = shlex.split(rest[0]) if rest else []
        except ValueError as exc:  # an unbalanced quote, a trailing backslash
            raise command.fail(str(exc)) from None
        bound = command.bind(tokens)
        return command.fn(*bound.args, **bound.kwargs)

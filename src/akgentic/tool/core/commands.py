"""CommandRegistry: commands by name, their schema, and the ``/``-text grammar.

A command is registered by its callable's ``__name__`` and described by its signature
— the registry derives the schema from the callable, so there is no second contract to
keep in step. Dispatch replies only: a command is not an enforcement point.

The grammar of :meth:`CommandRegistry.dispatch`, exactly:

- The text is ``[/]name [token ...]``; the leading ``/`` is optional. ``name`` is the
  first whitespace-separated word. A name nobody registered raises
  :class:`CommandNotRecognized` — the only case that does.
- The rest is split like a shell line (``shlex``): quotes group, backslash escapes —
  except that a JSON array or object, alone or after ``name=``, is one token as typed,
  its quotes and spaces kept (``/update_planning [{"op": "create", "title": "x"}]`` needs
  no shell quoting). A text longer than :data:`MAX_COMMAND_CHARS` is refused before it
  is parsed.
- A token is a *keyword* only when the text before its first ``=`` is a known parameter
  name of the callable (one that may be passed by keyword). Every other token is
  *positional*, ``=`` and all — a value containing ``=`` is never silently swallowed.
  So ``/switch_model key=openai:gpt-5.2`` binds the whole token to ``model``.
- A last parameter annotated :data:`RestOfLine` takes the rest of the line: after as
  many tokens as there are parameters before it, the text that remains is that argument
  as typed — quotes, apostrophes and spacing kept (``/notify_me_in 60 check the build``).
  A remainder that is one quoted token is unquoted (``"check the build"``), and one
  starting ``name=`` binds by name, as any keyword does.
- Positional tokens bind in signature order, then keywords, with Python's rules:
  missing, extra or doubly bound arguments are errors.
- Each value converts to its parameter's annotation (unannotated and ``str`` stay
  text; other types through pydantic, lax, then as JSON: ``3``, ``true``, ``[1, 2]``).
  A value that is no JSON array, where a list is expected, is a list of that one item
  (``/hire_members Reviewer`` hires one Reviewer; ``/update_planning {"op": ...}`` makes
  one change).

Bad arguments to a known command raise :class:`CommandArgumentError` — a
``RetriableError`` whose message names the command, the problem and the usage line,
readable as is by whoever typed it. Raising, not returning, keeps a command's return
value its own. Errors raised by the command itself propagate untouched, and an async
command's coroutine is returned for the caller to await.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import re
import shlex
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import ValidationError

from akgentic.core.excerpt import clip, excerpt
from akgentic.core.words import plain_literals
from akgentic.tool.core.arguments import Parameters, explain_validation, type_name
from akgentic.tool.core.event import CommandArg, CommandDescriptor, CommandsAnnouncedEvent
from akgentic.tool.errors import CommandArgumentError, CommandNotRecognized, RetriableError

__all__ = ["MAX_COMMAND_CHARS", "CommandRegistry", "RestOfLine"]

_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_VARIADIC_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
_JSON_SCALARS = (str, int, float, bool, type(None))
_QUOTING = ("'", '"', "\\")

MAX_COMMAND_CHARS = 100_000
"""The longest command text parsed (shell-like splitting is slow on megabytes)."""

_SHLEX_WORDING = {
    "No closing quotation": "No closing quotation: a quote opened is never closed",
    "No escaped character": "No escaped character: the text ends with a backslash",
}
"""shlex's two errors, said so that whoever typed the command sees what to fix."""

_JSON_START = re.compile(r"(?:[A-Za-z_]\w*=)?[\[{]")
_JSON = json.JSONDecoder()
_JSON_MISSES = 32
"""Tokens that look like JSON but are not, after which the rest is read as shell words
only (each failed attempt may scan to the end: a text of many costs quadratic time)."""


class _RestOfLineMark:
    """The mark :data:`RestOfLine` carries; one instance, compared by identity."""

    def __repr__(self) -> str:
        return "REST_OF_LINE"


_REST_OF_LINE = _RestOfLineMark()

RestOfLine = Annotated[str, _REST_OF_LINE]
"""A command's last ``str`` parameter that takes the rest of the typed line, so a person
types ``/notify_me_in 60 check the build`` without quotes (see the module docstring).
To a tool call it is a plain ``str``."""


def _json_end(text: str, at: int) -> int | None:
    """Where the JSON array or object starting at ``at`` (after an optional ``name=``)
    ends, when it is valid and a whole token (whitespace or the end follows); else None."""
    start = _JSON_START.match(text, at)
    if start is None:
        return None
    try:
        _, end = _JSON.raw_decode(text, start.end() - 1)
    except (ValueError, RecursionError):  # not JSON; nested too deep to be meant as JSON
        return None
    return end if end == len(text) or text[end].isspace() else None


def _json_mistake(text: str, at: int = 0) -> str | None:
    """What is wrong with the JSON array or object typed at ``at`` (after an optional
    ``name=``), said as whoever typed it can fix it — ``Expecting property name enclosed
    in double quotes at character 9, near ',}'`` — or None when nothing there starts a
    JSON array or object, or it decodes."""
    start = _JSON_START.match(text, at)
    if start is None:
        return None
    begin = start.end() - 1
    try:
        _JSON.raw_decode(text, begin)
    except json.JSONDecodeError as exc:
        near = text[max(exc.pos - 10, begin) : exc.pos + 10]
        return f"{exc.msg} at character {exc.pos - begin + 1} (near {near!r})"
    except (ValueError, RecursionError):  # nested too deep: not said better than as is
        return None
    return None


def _json_or_text(raw: str) -> Any:
    """``raw`` decoded as JSON, or ``raw`` itself when it is not JSON."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def split_arguments(text: str) -> list[str]:
    """The tokens of a command's arguments: shell words (quotes group, backslash
    escapes), a JSON array or object as typed. ValueError for an unbalanced quote or a
    trailing backslash."""
    return _split(text, None)[0]


def _split(text: str, head: int | None) -> tuple[list[str], str]:
    """:func:`split_arguments`, stopping after ``head`` tokens (None: never): the tokens,
    and the text after them as typed, stripped (what a :data:`RestOfLine` receives)."""
    if not any(mark in text for mark in (*_QUOTING, "[", "{")):
        # what shlex would give, without its per-character cost
        if head is None:
            return text.split(), ""
        parts = text.split(None, head)
        return parts[:head], (parts[head].strip() if len(parts) > head else "")
    stream = io.StringIO(text)
    lexer = shlex.shlex(stream, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    tokens: list[str] = []
    misses = 0  # JSON-looking tokens that were not: past a few, a text is not meant as JSON
    while True:
        at = stream.tell()
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return tokens, ""
        if head is not None and len(tokens) == head:
            return tokens, text[at:].rstrip()
        end = _json_end(text, at) if misses < _JSON_MISSES else None
        if end is not None:
            tokens.append(text[at:end])
            stream.seek(end)
            continue
        if _JSON_START.match(text, at) is not None:
            misses += 1
        stream.seek(at)
        token = lexer.get_token()
        if token is None:
            return tokens, ""
        tokens.append(token)


def _unquoted(text: str) -> str:
    """``text`` without its quotes when it is one quoted shell token, else as typed."""
    if not text.startswith(("'", '"')):
        return text
    try:
        tokens = split_arguments(text)
    except ValueError:  # an apostrophe that opens no quotation: words as typed
        return text
    return tokens[0] if len(tokens) == 1 else text


def _help_text(fn: Callable[..., Any]) -> str:
    """``fn``'s docstring as a person reads it (``/help``, a frontend's command list):
    single backquotes where the docstring, written for Sphinx, doubles them."""
    return plain_literals(inspect.getdoc(fn) or "")


def _first_paragraph(fn: Callable[..., Any]) -> str:
    return _help_text(fn).split("\n\n", 1)[0].strip()


class _Command:
    """One registered callable with its signature, hints and descriptor."""

    def __init__(self, name: str, fn: Callable[..., Any], owner: str) -> None:
        self.name = name
        self.fn = fn
        self.owner = owner
        self.parameters = Parameters(fn)
        self.signature = self.parameters.signature
        self.keywords = {
            p.name for p in self.signature.parameters.values() if p.kind in _KEYWORD_KINDS
        }
        self.rest = self._rest_of_line()
        self.descriptor = CommandDescriptor(
            name=name, description=_first_paragraph(fn), args=self._args()
        )

    def _rest_of_line(self) -> tuple[int, str] | None:
        """(how many parameters come before it, its name) of the :data:`RestOfLine`
        parameter; None when there is none. ValueError when one is not last."""
        params = list(self.signature.parameters.values())
        marked = [
            i
            for i, p in enumerate(params)
            if _REST_OF_LINE in getattr(self.parameters.hint(p.name), "__metadata__", ())
        ]
        if not marked:
            return None
        index = marked[0]
        by_either = params[index].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        if marked != [len(params) - 1] or not by_either:
            raise ValueError(
                f"command /{self.name}: only its last parameter, taken by position or by "
                f"name, may be RestOfLine"
            )
        return index, params[index].name

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
            hint = self.parameters.hint(param.name)
            args.append(
                CommandArg(
                    name=param.name,
                    type=type_name(hint),
                    required=required,
                    default=default,
                    rest_of_line=self.rest is not None and self.rest[1] == param.name,
                )
            )
        return args

    def fail(self, problem: str) -> CommandArgumentError:
        return CommandArgumentError(f"/{self.name}: {problem}. Usage: {self.descriptor.usage}")

    def convert(self, name: str, raw: str) -> Any:
        """``raw`` as the parameter's type: text as is for ``str``, else pydantic (lax),
        then JSON, then — when ``raw`` is no JSON array — as a list of that one item.
        A failure names the item that is wrong when ``raw`` is JSON."""
        adapter = self.parameters.adapter(name)
        if adapter is None or self.parameters.hint(name) is str:
            return raw
        try:
            return adapter.validate_python(raw)
        except ValidationError as exc:
            try:
                value = adapter.validate_json(raw)
            except ValidationError as json_exc:
                if not raw.lstrip().startswith("["):
                    with contextlib.suppress(ValidationError):
                        return adapter.validate_python([_json_or_text(raw)])
                is_json = not any(e["type"] == "json_invalid" for e in json_exc.errors())
                mistake = None if is_json else _json_mistake(raw.strip())
                if mistake is not None:
                    raise self.fail(self._json_problem(name, mistake)) from None
                reason = explain_validation(json_exc if is_json else exc, name)
                hint = type_name(self.parameters.hint(name))
                raise self.fail(
                    f"argument {name}={excerpt(raw)} is not a valid {hint} ({reason})"
                ) from None
            if raw.strip() in ("true", "false") and not isinstance(value, bool):
                # lax pydantic reads JSON true as 1: '/planning_task true' showed task #1
                hint = type_name(self.parameters.hint(name))
                raise self.fail(f"argument {name}={excerpt(raw)} is not a valid {hint}") from None
            return value

    def _json_problem(self, name: str, mistake: str) -> str:
        hint = type_name(self.parameters.hint(name))
        return (
            f"argument {name} is not valid JSON: {mistake}; write a {hint} as JSON, names "
            f"and strings in double quotes, no comma before a closing }} or ]"
        )

    def parse(self, text: str) -> inspect.BoundArguments:
        """The arguments typed after the command's name, split and bound (the grammar).
        When they do not bind and one of them was meant as JSON but is not (the splitter
        then read it as shell words), the JSON mistake is what is reported."""
        try:
            try:
                tokens, tail = _split(text, None if self.rest is None else self.rest[0])
            except ValueError as exc:  # an unbalanced quote, a trailing backslash
                raise self.fail(_SHLEX_WORDING.get(str(exc), str(exc))) from None
            return self.bind(tokens, tail)
        except CommandArgumentError:
            self._bad_json(text)
            raise

    def _bad_json(self, text: str) -> None:
        """Raise the first JSON mistake among the arguments typed as ``text``, naming the
        parameter it was meant for (by ``name=``, else by its position); nothing when
        there is none. Only JSON-looking words are tried, at most :data:`_JSON_MISSES`."""
        tried = 0
        for at in range(len(text)):
            if tried >= _JSON_MISSES:
                return
            if (at and not text[at - 1].isspace()) or _JSON_START.match(text, at) is None:
                continue
            tried += 1
            mistake = _json_mistake(text, at)
            if mistake is None:
                continue
            key, sep, _ = text[at:].partition("=")
            if sep and key in self.keywords:
                name: str | None = key
            else:
                try:
                    before = _split(text[:at], None)[0]
                except ValueError:
                    return
                place = sum(1 for t in before if t.partition("=")[0] not in self.keywords)
                names = [
                    p.name
                    for p in self.signature.parameters.values()
                    if p.kind is not inspect.Parameter.VAR_KEYWORD
                ]
                name = names[min(place, len(names) - 1)] if names else None
            if name is not None and self.parameters.hint(name) is not str:
                raise self.fail(self._json_problem(name, mistake)) from None
            return

    def bind(self, tokens: list[str], tail: str = "") -> inspect.BoundArguments:
        positional: list[str] = []
        keywords: dict[str, str] = {}
        if tail and self.rest is not None:
            name = self.rest[1]
            keywords[name] = _unquoted(tail.removeprefix(f"{name}="))
        for token in tokens:
            key, sep, value = token.partition("=")
            if sep and key in self.keywords:
                if key in keywords:
                    raise self.fail(f"argument {key!r} given twice")
                keywords[key] = value
            else:
                positional.append(token)
        try:
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
        except CommandArgumentError:
            self._unknown_keyword(positional)
            raise
        return bound

    def _unknown_keyword(self, positional: list[str]) -> None:
        """When the arguments did not bind, a ``name=value`` among those taken by
        position whose name is no argument is the mistake to name: ``/pending_notification
        bogus=1`` said ``all='bogus=1' is not a valid bool``. (Such a token binds by
        position when it fits: ``/search_planning a=b`` searches for ``a=b``.)"""
        for token in positional:
            key, sep, _ = token.partition("=")
            if sep and key.isidentifier() and key not in self.keywords:
                names = [n for n in self.signature.parameters if n in self.keywords]
                takes = f"its arguments: {', '.join(names)}" if names else "it takes none"
                raise self.fail(f"unknown argument {key!r} ({takes})") from None


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
                f"and by {owner or '?'}; rename the command on one of them"
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

    def describe(self, name: str | None = None) -> str:
        """What ``/help`` answers: with no ``name``, one line per command (its usage and the
        first paragraph of its description); with one, that command's usage and docstring.
        A name nobody registered (``/`` and all) raises :class:`CommandNotRecognized`."""
        if name:
            command = self._commands.get(name.removeprefix("/"))
            if command is None:
                raise CommandNotRecognized(clip(name.removeprefix("/")), self.names())
            return "\n".join(filter(None, [command.descriptor.usage, _help_text(command.fn)]))
        if not self._commands:
            return "No commands."
        lines = ["Commands (/help NAME describes one):"]
        for described in self.descriptors():
            summary = " ".join(described.description.split())
            lines.append(f"  {described.usage}" + (f" — {summary}" if summary else ""))
        return "\n".join(lines)

    def announcement(self) -> CommandsAnnouncedEvent:
        """The event that announces these commands to every frontend."""
        return CommandsAnnouncedEvent(commands=self.descriptors())

    def call(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """Call a command programmatically, with Python arguments, each checked against
        its annotation (a bad one is a :class:`CommandArgumentError`, as in dispatch)."""
        command = self._commands.get(name)
        if command is None:
            raise CommandNotRecognized(clip(str(name)), self.names())
        try:
            bound = command.parameters.check(args, kwargs)
        except RetriableError as exc:
            raise CommandArgumentError(f"/{exc}") from None
        return command.fn(*bound.args, **bound.kwargs)

    def dispatch(self, text: str) -> Any:
        """Parse ``text`` with the module's grammar, call the command, return its reply."""
        body = text.strip()
        if body.startswith("/"):
            body = body[1:]
        head, *rest = body.split(None, 1) or [""]
        command = self._commands.get(head)
        if command is None:
            raise CommandNotRecognized(clip(head), self.names())
        if len(body) > MAX_COMMAND_CHARS:
            raise command.fail(
                f"the command is {len(body)} characters long; at most {MAX_COMMAND_CHARS} "
                f"are read: pass less at a time"
            )
        bound = command.parse(rest[0] if rest else "")
        return command.fn(*bound.args, **bound.kwargs)

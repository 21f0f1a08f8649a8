"""Subcommands imported when they are used: ``akgentic --version`` does not import the agents.

A command's module imports what it runs — the team, agent and tool layers, pydantic-ai —
about a second of imports. A :class:`LazyGroup` names its subcommands in a table,
``name → Lazy("module:attr", short help)``, and imports a subcommand's module only when
that subcommand is looked up (to run it, or to print its own ``--help``): its
``commands`` is that table (:class:`_Commands`), each command made on first read, so
typer's look-up, its "did you mean" and a walk over every command work as on a plain
group. A command registered the ordinary way (``@app.command``) works beside them, after
them; one under a name of the table is refused (``TypeError``), never silently dropped.
The group's own ``--help`` lists every subcommand with the short help of the table,
importing none of them (:meth:`LazyGroup.format_commands`).

A table's ``attr`` is a command function (typer makes it a command, with the table's name
and short help, as ``app.command(name, short_help=...)`` would) or a ``typer.Typer``
(a group, as ``app.add_typer(..., name=name)`` would make it; it may itself be built with
``cls=`` a :class:`LazyGroup`).

When a group resolves a command that is not lazy itself — the command about to run, or a
group whose commands are all imported — the imports are over: the hooks given to
:func:`after_imports` run then, once each, before the command starts (the console
script's: freeze the heap, :func:`akgentic.core.freeze_import_heap`, and set up the log
handler, :mod:`akgentic.cli.logs`; neither is needed by ``--help``). A Ctrl-C
during a command's imports ends it as one before any command started: ``interrupted
before the command started: nothing was done``, exit 130 (the console script's handler
ends the process there; elsewhere, :func:`akgentic.cli.interrupt.report_and_exit`), never
a traceback — nor a C extension's error that quotes the interrupt.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from gettext import gettext as _
from typing import Any, ClassVar

import typer
from typer.core import TyperGroup
from typer.main import get_command_from_info, get_group_from_info
from typer.models import CommandInfo, TyperInfo

from akgentic.cli import interrupt

__all__ = ["Lazy", "LazyGroup", "after_imports"]

Command = Any  # typer's own copy of click's Command (not exported under a stable name)

_hooks: list[Callable[[], object]] = []
_given: set[Callable[[], object]] = set()


def after_imports(hook: Callable[[], object]) -> None:
    """Run ``hook`` once the command about to run is imported (see the module docstring).
    The console script's, not a test's in-process runner's: it is set for the process, and
    runs once in it — given again (the console script's ``main`` called twice in one
    process), it is not added again."""
    if hook not in _given:
        _given.add(hook)
        _hooks.append(hook)


@dataclass(frozen=True)
class Lazy:
    """A subcommand of a :class:`LazyGroup`: where it is (``"module:attr"``) and the short
    help the group's ``--help`` lists it with (the command gets it too)."""

    target: str
    short_help: str

    def load(self, name: str, group: TyperGroup) -> Command:
        """Import the target and make it a click command named ``name``, with the settings
        a typer group passes down to the commands registered on it."""
        module, attr = self.target.split(":")
        try:
            found = getattr(importlib.import_module(module), attr)
        except KeyboardInterrupt:  # as before any command started: never a traceback
            interrupt.report_and_exit()
        except Exception:
            # a Ctrl-C that lands inside a C extension's work comes out as that
            # extension's own error (pydantic-core building a validator: a SchemaError
            # that quotes the KeyboardInterrupt): it is still the interrupt
            if interrupt.pressed():
                interrupt.report_and_exit()
            raise
        # pretty_exceptions_short: typer's default, the app's (its pretty exceptions are off)
        if isinstance(found, typer.Typer):
            return get_group_from_info(
                TyperInfo(found, name=name, short_help=self.short_help),
                pretty_exceptions_short=True,
                suggest_commands=group.suggest_commands,
                rich_markup_mode=group.rich_markup_mode,
            )
        return get_command_from_info(
            CommandInfo(name=name, short_help=self.short_help, callback=found),
            pretty_exceptions_short=True,
            rich_markup_mode=group.rich_markup_mode,
        )


class LazyGroup(TyperGroup):
    """A typer group whose subcommands are :data:`lazy`, imported on first look-up.

    A subclass sets :data:`lazy` and is given to ``typer.Typer(cls=...)``."""

    lazy: ClassVar[dict[str, Lazy]] = {}

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _Commands(self, self.commands)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The ``Commands:`` section: the table's, then the commands registered the
        ordinary way (their short help as typer's group says it); no lazy one is imported
        to print it."""
        assert isinstance(self.commands, _Commands)
        plain = [(name, c) for name, c in self.commands.plain.items() if not c.hidden]
        rows = [(name, entry.short_help) for name, entry in self.lazy.items()]
        if plain:  # typer's width for a short help: 3 times the spacing past the names
            limit = formatter.width - 6 - max(map(len, [*self.lazy, *self.commands.plain]))
            rows += [(name, c.get_short_help_str(limit)) for name, c in plain]
        if rows:
            with formatter.section(_("Commands")):
                formatter.write_dl(rows)

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        """As typer's; a command that is not a :class:`LazyGroup` ends the imports (the
        :func:`after_imports` hooks run, once)."""
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None and not isinstance(command, LazyGroup):
            while _hooks:
                _hooks.pop(0)()
        return name, command, rest


class _Commands(MutableMapping[str, Command]):
    """A :class:`LazyGroup`'s ``commands``: the names of its table, each command imported
    the first time it is read, then the commands registered the ordinary way
    (``@app.command``, ``add_command``: :attr:`plain`). A name both claim is refused
    (``TypeError``) when the group is made or the command added: one of them would never
    run."""

    def __init__(self, group: LazyGroup, plain: MutableMapping[str, Command]) -> None:
        self._group = group
        self._loaded: dict[str, Command] = {}
        self.plain: dict[str, Command] = {}
        for name, command in plain.items():
            self[name] = command

    def __getitem__(self, name: str) -> Command:
        if name in self.plain:
            return self.plain[name]
        if name not in self._loaded:
            self._loaded[name] = self._group.lazy[name].load(name, self._group)
        return self._loaded[name]

    def __setitem__(self, name: str, command: Command) -> None:
        if name in self._group.lazy:
            raise TypeError(
                f"{type(self._group).__name__}: {name!r} is in its lazy table already; "
                f"a command registered under that name too would never run"
            )
        self.plain[name] = command

    def __delitem__(self, name: str) -> None:
        if name in self._group.lazy:
            raise TypeError(f"{type(self._group).__name__}: its lazy table's commands are fixed")
        del self.plain[name]

    def __iter__(self) -> Iterator[str]:
        yield from self._group.lazy
        yield from self.plain

    def __len__(self) -> int:
        return len(self._group.lazy) + len(self.plain)

"""A lazy group beside commands registered the ordinary way, and the console script's
``main`` called twice in one process (akgentic.cli.lazy)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from akgentic.cli import lazy, logs
from akgentic.cli.lazy import Lazy, LazyGroup
from akgentic.cli.main import main


def lazy_command() -> None:
    """The table's command."""
    typer.echo("lazy ran")


class _Group(LazyGroup):
    lazy = {"lazy": Lazy("tests.cli.test_lazy:lazy_command", "Run the lazy one.")}


def _app() -> typer.Typer:
    app = typer.Typer(cls=_Group, rich_markup_mode=None, add_completion=False)

    @app.callback()
    def _root() -> None:
        """A group."""

    return app


def test_a_command_registered_the_ordinary_way_runs_beside_the_lazy_ones() -> None:
    app = _app()

    @app.command("plain")
    def plain() -> None:
        """Run the plain one."""
        typer.echo("plain ran")

    runner = CliRunner()
    assert runner.invoke(app, ["plain"]).stdout == "plain ran\n"
    assert runner.invoke(app, ["lazy"]).stdout == "lazy ran\n"
    listing = runner.invoke(app, ["--help"]).stdout.split("Commands:\n", 1)[1]
    assert listing.split("\n")[:2] == ["  lazy   Run the lazy one.", "  plain  Run the plain one."]
    assert list(typer.main.get_command(app).commands) == ["lazy", "plain"]  # type: ignore[attr-defined]


def test_a_command_registered_under_a_lazy_name_is_refused() -> None:
    app = _app()

    @app.command("lazy")
    def other() -> None:
        typer.echo("never")

    with pytest.raises(TypeError, match="'lazy' is in its lazy table already"):
        typer.main.get_command(app)


def test_main_called_twice_in_one_process_configures_the_logs_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    configured: list[None] = []
    monkeypatch.setattr(logs, "configure", lambda: configured.append(None))
    monkeypatch.setattr(lazy, "_hooks", [])  # as in a fresh process
    monkeypatch.setattr(lazy, "_given", set())
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(tmp_path)
    for argv in (["akgentic", "--version"], ["akgentic", "teams", "list", "--help"]):
        monkeypatch.setattr(sys, "argv", argv)
        with pytest.raises(SystemExit) as ended:
            main()
        assert ended.value.code == 0
    assert configured == [None]  # ``teams list`` resolved: the hook ran, once

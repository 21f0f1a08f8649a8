"""A lazy group beside commands registered the ordinary way, and the console script's
``main`` called twice in one process (akgentic.cli.lazy)."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from akgentic.cli import interrupt, lazy, logs
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
    # main() ends by ``interrupt.leave``, which ends the process itself (os._exit) when a
    # thread that is not a daemon still runs: in a test process there may be such threads
    # that are not the command's (pytest -n's own), so it is only recorded here
    left: list[int] = []
    monkeypatch.setattr(interrupt, "leave", left.append)
    monkeypatch.chdir(tmp_path)
    for argv in (["akgentic", "--version"], ["akgentic", "teams", "list", "--help"]):
        monkeypatch.setattr(sys, "argv", argv)
        with pytest.raises(SystemExit) as ended:
            main()
        assert ended.value.code == 0
    assert configured == [None]  # ``teams list`` resolved: the hook ran, once
    assert left == [0, 0]  # each command left with its code


@pytest.fixture
def installed() -> Iterator[None]:
    """The console script's signal handlers, for this test (its count of Ctrl-C at 0)."""
    taken = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {signum: signal.getsignal(signum) for signum in taken}
    interrupt.install()
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _load_with(monkeypatch: pytest.MonkeyPatch, import_module: Callable[[str], None]) -> None:
    monkeypatch.setattr(lazy.importlib, "import_module", import_module)
    group = typer.main.get_command(_app())
    Lazy("tests.cli.test_lazy:lazy_command", "Run it.").load("lazy", group)  # type: ignore[arg-type]


@pytest.mark.usefixtures("installed")
def test_ctrl_c_that_an_import_turned_into_its_own_error_is_still_an_interrupt(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    # pydantic-core, building a model's validator while the framework is imported, turns
    # a KeyboardInterrupt raised inside its work into its own SchemaError: the command
    # must still end as interrupted (130), not with that error's traceback
    def import_module(name: str) -> None:
        try:
            signal.raise_signal(signal.SIGINT)  # the installed handler raises, as on Ctrl-C
        except KeyboardInterrupt:
            raise RuntimeError("Error building 'model' validator: KeyboardInterrupt") from None

    with pytest.raises(SystemExit) as exited:
        _load_with(monkeypatch, import_module)
    assert exited.value.code == 130
    assert capfd.readouterr().err == "interrupted before the command started: nothing was done\n"


@pytest.mark.usefixtures("installed")
def test_an_import_that_fails_with_no_interrupt_fails_as_it_did(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def import_module(name: str) -> None:
        raise RuntimeError("a broken module")

    with pytest.raises(RuntimeError, match="a broken module"):
        _load_with(monkeypatch, import_module)

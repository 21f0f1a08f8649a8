"""``akgentic catalog list | show | enable | disable | configure | set-credential | probe |
audit | remove``: the tool catalog of a storage (see ``akgentic.catalog``).

NAME is a type (its instance is called like it) or a named instance (``--type`` on its
first change). Every command acts as the operating-system user (``cli:<user>`` in the
audit trail). A secret is never an argument (it would stay in the shell's history and in
``ps``): ``set-credential`` reads it from a hidden prompt, from standard input, or from an
environment variable named with ``--from-env``.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from akgentic.catalog import CatalogError, CatalogService, Principal, ToolView
from akgentic.cli.errors import CliError, reporting
from akgentic.cli.options import DebugOption, StorageOption
from akgentic.cli.output import SafeText, error_console, local_time, out_console, print_table
from akgentic.cli.store import opened_storage, unmade_on_failure
from akgentic.storage import CATALOG_SURFACES

__all__ = ["catalog_app"]

catalog_app = typer.Typer(
    help="The tool catalog: which tools may be used, and where.",
    rich_markup_mode=None,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

NameArgument = Annotated[
    str,
    typer.Argument(metavar="NAME", show_default=False, help="A tool type or catalog instance."),
]
TypeOption = Annotated[
    str | None,
    typer.Option(
        "--type",
        metavar="TYPE",
        show_default=False,
        help="The type of a new instance whose NAME is not a type name.",
    ),
]
SurfaceOption = Annotated[
    list[str] | None,
    typer.Option(
        "--surface",
        "-s",
        metavar="SURFACE",
        show_default=False,
        help=f"{', '.join(CATALOG_SURFACES)} or all (repeatable).",
    ),
]


def _principal() -> Principal:
    try:
        user = getpass.getuser()
    except Exception:  # no login name in this environment
        user = "unknown"
    return Principal(name=user or "unknown", via="cli")


@contextmanager
def _catalog(storage: str | None, debug: bool, *, create: bool = True) -> Iterator[CatalogService]:
    """The catalog of the storage; catalog refusals become ``error:`` lines. ``create=False``
    for the commands that only read: a store that does not exist is not created (nor is
    it by a command that fails: ``enable nosuch``), and one they may not write is opened
    read-only."""
    with (
        reporting(debug),
        unmade_on_failure(storage) if create else contextlib.nullcontext(),
        opened_storage(storage, create=create, read_only=not create) as (bundle, _),
    ):
        try:
            yield CatalogService(bundle)
        except CatalogError as exc:
            raise CliError(str(exc)) from None


def _surfaces(chosen: list[str] | None, default: tuple[str, ...]) -> tuple[str, ...]:
    if not chosen:
        return default
    if "all" in chosen:
        return CATALOG_SURFACES
    return tuple(chosen)


def _credential(view: ToolView) -> str:
    if view.credential_kind is None:  # none taken, or unknown: an orphaned row's may be set
        return "set" if view.credential_set else "-"
    return "set" if view.credential_set else "not set"


def _checked(view: ToolView) -> str:
    if view.last_check_at is None:
        return view.status if view.probe else "-"
    return f"{view.status} {local_time(view.last_check_at)}"


def _print_view(view: ToolView) -> None:
    console = out_console()
    fields = [
        ("name", view.name),
        ("type", f"{view.type_name} ({view.kind})"),
        ("about", view.description),
        ("access", view.access or "-"),
        ("enabled", ", ".join(view.enabled) or "off"),
        (
            "credential",
            f"{_credential(view)}" + (f" ({view.credential_kind})" if view.credential_kind else ""),
        ),
        ("config", json.dumps(view.config, sort_keys=True) if view.config else "{}"),
        (
            "probe",
            (_checked(view) + (f": {view.status_detail}" if view.status_detail else ""))
            if view.probe
            else ("-" if view.kind == "orphaned" else "no outside exit"),
        ),
        ("source", view.source),
    ]
    for key, value in fields:
        console.print(SafeText(f"{key + ':':<12}{value}"))


@catalog_app.command("list", short_help="List the tool types and instances.")
def list_catalog(storage: StorageOption = None, debug: DebugOption = False) -> None:
    """List every tool type and instance: kind, surfaces enabled, credential, last probe."""
    with _catalog(storage, debug, create=False) as catalog:
        listing = catalog.list(_principal())
        rows = [("NAME", "TYPE", "KIND", "ENABLED", "CREDENTIAL", "STATUS")]
        for view in listing.tools:
            rows.append(
                (
                    view.name,
                    view.type_name,
                    view.kind,
                    ",".join(view.enabled) or "off",
                    _credential(view),
                    _checked(view),
                )
            )
        print_table(out_console(), rows)
        console = out_console()
        for view in listing.orphaned:
            console.print(
                SafeText(
                    f"orphaned: {view.name} (type {view.type_name} is not installed; ignored)",
                    style="yellow",
                )
            )
        logged = set(catalog.registry.problems)  # discovery's: said by its log already
        for problem in listing.problems:
            if problem not in logged:
                error_console().print(SafeText(f"warning: {problem}", style="yellow"))


@catalog_app.command("show", short_help="Show a type or instance.")
def show(name: NameArgument, storage: StorageOption = None, debug: DebugOption = False) -> None:
    """Show a type or instance: its state, its config schema, the tools the model sees."""
    with _catalog(storage, debug, create=False) as catalog:
        detail = catalog.show(_principal(), name)
        _print_view(detail)
        console = out_console()
        properties = detail.config_schema.get("properties", {})
        if properties:
            console.print(SafeText(f"{'settings:':<12}{', '.join(sorted(properties))}"))
        for tool, schema in sorted(detail.params.items()):
            args = ", ".join(schema.get("properties", {}))
            console.print(SafeText(f"{'tool:':<12}{tool}({args})"))


def _say_enabled(view: ToolView) -> None:
    out_console().print(SafeText(f"{view.name}: enabled for {', '.join(view.enabled) or 'none'}"))


@catalog_app.command("enable")
def enable(
    name: NameArgument,
    surface: SurfaceOption = None,
    type_name: TypeOption = None,
    storage: StorageOption = None,
    debug: DebugOption = False,
) -> None:
    """Enable a tool on surfaces (default: agents). Audited."""
    with _catalog(storage, debug) as catalog:
        view = catalog.enable(
            _principal(), name, _surfaces(surface, ("agents",)), type_name=type_name
        )
        _say_enabled(view)


@catalog_app.command("disable")
def disable(
    name: NameArgument,
    surface: SurfaceOption = None,
    storage: StorageOption = None,
    debug: DebugOption = False,
) -> None:
    """Disable a tool on surfaces (default: all). Audited."""
    with _catalog(storage, debug) as catalog:
        view = catalog.disable(_principal(), name, _surfaces(surface, CATALOG_SURFACES))
        _say_enabled(view)


def _parse_settings(settings: list[str], raw: str | None) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if raw is not None:
        try:
            loaded = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise CliError(f"--json is not valid JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise CliError('--json must be a JSON object, e.g. \'{"url": "http://..."}\'')
        config.update(loaded)
    for item in settings:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise CliError(f"--set {item!r}: write KEY=VALUE")
        try:
            value: Any = json.loads(text)
        except json.JSONDecodeError:
            value = text  # a bare word is a string
        config[key.strip()] = value
    return config


@catalog_app.command("configure", short_help="Set a tool's non-secret config (merged).")
def configure(
    name: NameArgument,
    settings: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="KEY=VALUE",
            show_default=False,
            help="A setting (repeatable); VALUE is JSON or a bare string.",
        ),
    ] = None,
    raw: Annotated[
        str | None,
        typer.Option(
            "--json", metavar="OBJECT", show_default=False, help="Settings as a JSON object."
        ),
    ] = None,
    unset: Annotated[
        list[str] | None,
        typer.Option("--unset", metavar="KEY", show_default=False, help="Remove a stored setting."),
    ] = None,
    replace: Annotated[
        bool,
        typer.Option("--replace", help="Replace the whole stored config with these settings."),
    ] = False,
    type_name: TypeOption = None,
    storage: StorageOption = None,
    debug: DebugOption = False,
) -> None:
    """Change a tool's non-secret config, validated against its type: the settings given
    are merged into the stored ones (--replace for a whole new config). Audited."""
    with _catalog(storage, debug) as catalog:
        config = _parse_settings(settings or [], raw)
        if replace and unset:
            raise CliError("--unset removes one stored setting; with --replace, leave it out")
        view = catalog.configure(
            _principal(),
            name,
            config,
            type_name=type_name,
            merge=not replace,
            unset=unset or (),
        )
        out_console().print(
            SafeText(f"{view.name}: config {json.dumps(view.config, sort_keys=True)}")
        )


def _read_secret(from_env: str | None, stdin: bool) -> str:
    if from_env is not None:
        value = os.environ.get(from_env, "")
        if not value.strip():
            raise CliError(f"--from-env {from_env}: the variable is not set or is empty")
        return value.strip()
    if stdin or not sys.stdin.isatty():
        value = sys.stdin.readline().rstrip("\r\n")
        if not value.strip():
            raise CliError("no credential on standard input (one line is read)")
        return value
    return str(typer.prompt("credential", hide_input=True))


@catalog_app.command("set-credential", short_help="Store a tool's credential, encrypted.")
def set_credential(
    name: NameArgument,
    from_env: Annotated[
        str | None,
        typer.Option("--from-env", metavar="VAR", help="Read the secret from this variable."),
    ] = None,
    stdin: Annotated[
        bool, typer.Option("--stdin", help="Read the secret from one line of standard input.")
    ] = False,
    clear: Annotated[bool, typer.Option("--clear", help="Remove the stored credential.")] = False,
    type_name: TypeOption = None,
    storage: StorageOption = None,
    debug: DebugOption = False,
) -> None:
    """Store a tool's credential, encrypted with AKGENTIC_SECRET_KEY (prompted, hidden;
    never an argument). Audited, without the secret."""
    with _catalog(storage, debug) as catalog:
        secret = None if clear else _read_secret(from_env, stdin)
        view = catalog.set_credential(_principal(), name, secret, type_name=type_name)
        out_console().print(SafeText(f"{view.name}: credential {_credential(view)}"))


@catalog_app.command("probe", short_help="Check that a tool's outside service answers.")
def probe(
    name: NameArgument,
    timeout: Annotated[
        float,
        typer.Option("--timeout", min=0.1, max=120, metavar="SECONDS", help="Bound of the check."),
    ] = 10.0,
    storage: StorageOption = None,
    debug: DebugOption = False,
) -> None:
    """Check that a tool's outside service answers; keeps the status and time. Exit code 1
    when the status is error."""
    with _catalog(storage, debug) as catalog:
        view, result = catalog.probe(_principal(), name, timeout)
        style = "green" if result.status == "active" else "red"
        out_console().print(
            SafeText(f"{view.name}: {result.status} — {result.detail}", style=style)
        )
    if result.status != "active":
        raise typer.Exit(1)


@catalog_app.command("audit", short_help="The catalog's audit trail, oldest first.")
def audit(
    name: Annotated[
        str | None,
        typer.Argument(metavar="NAME", show_default=False, help="Only this instance."),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", "-n", min=0, metavar="N", help="Only the last N lines."),
    ] = None,
    storage: StorageOption = None,
    debug: DebugOption = False,
) -> None:
    """The catalog's audit trail, oldest first: when, who, what, on which tool."""
    with _catalog(storage, debug, create=False) as catalog:
        lines = catalog.audit(_principal(), name, limit)
        if not lines:
            # named: say of what, so a misspelt name does not read as "nothing changed"
            of = f" for {name!r} (akgentic catalog list names the tools)" if name else ""
            out_console().print(SafeText(f"no catalog changes recorded{of}", style="dim"))
            return
        rows = [("SEQ", "WHEN", "WHO", "ACTION", "TOOL", "DETAIL")]
        for line in lines:
            detail = json.dumps(line.detail, sort_keys=True) if line.detail else ""
            if line.error is not None:
                detail = f"{detail} (unreadable: {line.error})".lstrip()
            tool = (
                line.instance
                if line.instance == line.type_name
                else f"{line.instance} ({line.type_name})"
            )
            rows.append((str(line.seq), local_time(line.at), line.actor, line.action, tool, detail))
        print_table(out_console(), rows)


@catalog_app.command("remove", short_help="Remove an orphaned instance's row.")
def remove(
    name: NameArgument,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Remove the row of an installed type too (config and credential)."
        ),
    ] = False,
    storage: StorageOption = None,
    debug: DebugOption = False,
) -> None:
    """Remove an orphaned instance's row (its type is not installed); an installed type's
    row only with --force. Audited."""
    with _catalog(storage, debug) as catalog:
        if not catalog.remove(_principal(), name, force=force):
            raise CliError(f"no catalog instance {name!r} is stored; see: akgentic catalog list")
        out_console().print(SafeText(f"{name}: removed"))

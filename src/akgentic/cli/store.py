"""Which storage a command uses, and finding a team in it.

The storage URL is ``--storage`` or ``AKGENTIC_STORAGE``; by default it is the SQLite
file ``akgentic.db`` in the user's akgentic data folder (``~/.local/share/akgentic`` on
Linux; see :func:`akgentic.core.user_data_dir`), one store per user whatever the
working directory. Commands that only read (``teams list``, ``events``...) never create
a store: where none exists yet they see an empty one; one they may not write (a backup,
a read-only mount) they open read-only.

A team is named on the command line by its full id, a unique prefix of its id, or its
name when only one team has it. When a name or prefix matches several teams and only one
of them is not DELETED, that one is meant. Anything else is a :class:`CliError` that says
what matched and what to type instead.
"""

from __future__ import annotations

import contextlib
import importlib
import sqlite3
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit
from uuid import UUID

from akgentic.cli.errors import CliError
from akgentic.cli.output import command_line, short_id, team_name
from akgentic.core import user_data_dir
from akgentic.core.excerpt import exception_line, exception_words, validation_words
from akgentic.core.serialization import MODEL_MARKER, SerializationError
from akgentic.core.words import module_name_problem
from akgentic.storage import (
    MemoryStorage,
    SqliteStorage,
    StorageBundle,
    StorageNotFoundError,
    TeamRecord,
    TeamStatus,
    open_storage,
    sqlite_path,
    sqlite_url,
)

if TYPE_CHECKING:
    from akgentic.team import TeamCard

__all__ = [
    "LEGACY_STORE",
    "DamagedCardError",
    "card_problem",
    "default_store",
    "default_url",
    "find_team",
    "import_flags",
    "import_modules",
    "match_team",
    "missing_imports",
    "opened_storage",
    "read_only",
    "read_only_words",
    "resolve_url",
    "resume_imports",
    "status_label",
    "storage_option",
    "store_name",
    "stored_card",
    "unmade_on_failure",
]

STORE_FILE = "akgentic.db"
LEGACY_STORE = Path(".akgentic") / STORE_FILE
"""Where earlier versions kept the default store: under the working directory."""


def default_store() -> Path:
    """The default store's file: ``akgentic.db`` in the user's data folder (not created
    here); :class:`CliError` when there is no home folder to find it in."""
    try:
        return user_data_dir() / STORE_FILE
    except RuntimeError as exc:
        raise CliError(str(exc)) from None


def default_url() -> str:
    """``sqlite:////<the user's data folder>/akgentic.db``."""
    return sqlite_url(default_store())


def storage_option(url: str) -> list[str]:
    """``["--storage", url]`` for a suggested command line, or nothing when ``url`` is the
    default storage (found from anywhere without it)."""
    return [] if url == default_url() else ["--storage", url]


def resolve_url(option: str | None) -> str:
    """The URL to open: ``option`` (from ``--storage`` or ``AKGENTIC_STORAGE``) when set,
    else :func:`default_url`."""
    if option and option.strip():
        return option.strip()
    return default_url()


@contextmanager
def opened_storage(
    option: str | None, *, create: bool = True, read_only: bool = False
) -> Iterator[tuple[StorageBundle, str]]:
    """The storage bundle named by ``option`` (see :func:`resolve_url`) and its URL; closed
    on exit. A URL that cannot be opened is a :class:`CliError` naming it.

    ``create=False`` is for commands that only read (or act on teams that must already
    exist): a SQLite file that does not exist is neither created nor its folder made —
    the command sees an empty store (no teams yet).

    ``read_only=True`` is for commands that only read (it implies ``create=False``): a
    SQLite store this process may not write (a backup, a read-only mount) is opened
    read-only rather than refused (see :func:`~akgentic.storage.open_storage`).
    """
    url = resolve_url(option)
    storage: StorageBundle
    try:
        storage = open_storage(url, create=create, read_only=read_only)
    except StorageNotFoundError:
        storage = MemoryStorage()  # nothing stored there yet, and nothing is created
    except ValueError as exc:
        raise CliError(str(exc)) from None
    except Exception as exc:  # a driver's words may span lines: one line here
        raise CliError(
            _file_in_the_way(url) or f"cannot open storage {shown_url(url)}: {exception_words(exc)}"
        ) from exc
    try:
        yield storage, url
    finally:
        storage.close()


def read_only(storage: StorageBundle) -> bool:
    """Whether ``storage`` was opened read-only (``opened_storage(read_only=True)`` of a
    store this process may not write: a backup, a read-only mount). A command that reads
    it then suggests no command that writes it (``teams resume``, ``stop``, ``delete``,
    ``run``): that command would be refused (see :func:`read_only_words`)."""
    return isinstance(storage, SqliteStorage) and storage.read_only


def read_only_words(url: str, doing: str) -> str:
    """What a read command says instead of a command that writes the read-only store
    ``url`` names: ``doing`` (``resuming the team``) needs a writable copy of it."""
    return f"{doing} needs a writable copy of the store {store_name(url)} (it is read-only here)"


def store_name(url: str) -> str:
    """The store as the person knows it: a SQLite file's path, else its URL
    (:func:`shown_url`)."""
    return str(sqlite_path(url)) if url.startswith("sqlite") else shown_url(url)


def shown_url(url: str) -> str:
    """``url`` with the password in it, if any, shown as ``***``: a line on a terminal or
    in a service's log must not hand out the database's password
    (``postgresql://app:***@db/akgentic``)."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:  # not a URL urllib reads (a bad port): nothing to hide in it
        return url
    if password is None:
        return url
    user, _, host = parts.netloc.rpartition("@")
    name = user.partition(":")[0]
    return urlunsplit(parts._replace(netloc=f"{name}:***@{host}"))


@contextmanager
def unmade_on_failure(option: str | None) -> Iterator[None]:
    """Around a command that may create the SQLite store ``option`` names (see
    :func:`resolve_url`): when the command fails, the store file and the folders it made
    for it are removed again, so a refused command leaves nothing behind. A store that
    existed before is never touched, nor is a link at its path (one to a place not there
    now: a mount not mounted yet); a URL that names no file changes nothing."""
    url = resolve_url(option)
    try:
        path = sqlite_path(url) if url.lower().startswith("sqlite:") else None
    except ValueError:
        path = None
    if path is None or path.exists() or path.is_symlink():  # a link is the person's
        yield
        return
    folders = [folder for folder in path.parents if not folder.exists()]
    try:
        yield
    except BaseException:
        if _holds_rows(path):  # another process made the store meanwhile and wrote to it
            raise
        for made in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal"))):
            made.unlink(missing_ok=True)
        for folder in folders:  # deepest first
            with contextlib.suppress(OSError):  # not empty: something else is in it now
                folder.rmdir()
        raise


def _holds_rows(path: Path) -> bool:
    """Whether the SQLite file at ``path`` holds a row in any table (its WAL read too), or
    cannot be read: either way it is not an empty store this command may remove."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            tables = [
                row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            return any(db.execute(f'SELECT 1 FROM "{t}" LIMIT 1').fetchone() for t in tables)
    except sqlite3.Error:
        return path.exists()


def _file_in_the_way(url: str) -> str | None:
    """Why a SQLite store cannot be made where ``url`` says when a folder on its path is a
    file (``sqlite:////tmp/notes.yaml/x.db``), and what to do; None otherwise."""
    if not url.lower().startswith("sqlite:"):
        return None
    try:
        path = sqlite_path(url)
    except ValueError:
        return None
    file = next((p for p in reversed(path.parents) if p.is_file()), None)
    if file is None:
        return None
    return (
        f"cannot open storage {url}: {file} is a file, not a folder, so no store can go "
        f"under it: give the store a path in a folder (for instance "
        f"{sqlite_url(file.parent / path.name)})"
    )


def find_team(storage: StorageBundle, ref: str, url: str | None = None) -> TeamRecord:
    """The team ``ref`` names (full id, unique id prefix, or unique name); see the module
    docstring. Raises :class:`CliError` when none or several match, saying how to list
    the teams of the store at ``url`` (the default store's when None)."""
    try:
        exact = storage.teams.get(UUID(ref.strip()))
    except ValueError:
        exact = None
    where = storage_option(url or default_url())
    listing = command_line("teams", "list", *where)
    start = command_line("run", "TEAM.yaml", *where)
    no_teams = f"there are no teams yet in this storage; start one with: {start}" + (
        "" if where else " (--storage URL names another storage)"
    )
    return match_team(ref, exact or storage.teams.list(), listing, no_teams=no_teams)


def match_team(
    ref: str,
    teams: TeamRecord | list[TeamRecord],
    listing: str = "akgentic teams list",
    label: Callable[[TeamRecord], str] | None = None,
    *,
    no_teams: str | None = None,
) -> TeamRecord:
    """The one of ``teams`` that ``ref`` names (or ``teams`` itself: an exact match);
    ``listing`` is how the user lists them; ``label`` how a team's status is shown among
    several that match (a store's: :func:`status_label`; a server's records carry no card,
    so it says their status as the server does); ``no_teams`` what to say when there are
    none at all (how to start one there)."""
    label = label or status_label
    ref = ref.strip()
    if not ref:
        raise CliError("name a team: its id, a prefix of its id, or its name")
    if isinstance(teams, TeamRecord):
        return teams
    exact = [t for t in teams if str(t.team_id) == ref.lower()]
    if exact:
        return exact[0]
    by_prefix = [t for t in teams if str(t.team_id).startswith(ref.lower())]
    by_name = [t for t in teams if t.name == ref]
    for matches, what in ((by_prefix, "ids start with"), (by_name, "teams are named")):
        if len(matches) == 1:
            return matches[0]
        live = [t for t in matches if t.status != TeamStatus.DELETED]
        if len(live) == 1:
            return live[0]
        if matches:
            shown = ", ".join(
                f"{short_id(t.team_id)} ({team_name(t.name)}, {label(t)})" for t in matches[:5]
            )
            more = f" and {len(matches) - 5} more" if len(matches) > 5 else ""
            raise CliError(f"{len(matches)} {what} {ref!r}: {shown}{more}; give more of the id")
    if not teams and no_teams is not None:
        raise CliError(f"no team matches {ref!r}: {no_teams}")
    raise CliError(f"no team matches {ref!r}; list the teams with: {listing}")


def import_modules(modules: list[str] | None) -> None:
    """Import the modules the user named with ``--import`` (stored data never imports
    anything: a team whose card lists ``imports`` needs them named again to decode). A
    module that is not found, or fails while it is imported, is a :class:`CliError` naming
    it (its traceback with ``--debug``)."""
    for module in modules or ():
        if (problem := module_name_problem(module)) is not None:
            raise CliError(f"--import: {problem}")
        try:
            importlib.import_module(module)
        except ImportError as exc:
            from akgentic.team.card import import_hint  # the error's path only: it is heavy

            raise CliError(
                f"--import {module}: cannot import it: {exception_words(exc)}"
                f"{import_hint(module, exc)}"
            ) from None
        except SystemExit as exc:  # a script, not a module of cards (Ctrl-C: interrupted)
            raise CliError(
                f"--import {module}: the module ended the program while imported "
                f"({exception_line(exc)}): is it a script? --import names a module of cards, "
                f"agents or models"
            ) from exc
        except Exception as exc:  # the module's own code failed: say which module
            raise CliError(
                f"--import {module}: importing it failed: {exception_line(exc)} "
                f"(rerun with --debug to see the traceback)"
            ) from exc


def resume_imports(card_imports: Iterable[str], imported: Iterable[str] | None) -> list[str]:
    """The modules a later session of a team imports: its card's, then the others this
    session was told to import (``--import``), each once, in that order."""
    return list(dict.fromkeys([*card_imports, *(imported or ())]))


def import_flags(modules: Iterable[str]) -> list[str]:
    """``--import M`` for each of ``modules``: the words a printed command carries."""
    return [word for module in modules for word in ("--import", module)]


def missing_imports(card_name: str, modules: Iterable[str]) -> None:
    """A :class:`CliError` when a server's card is built from classes of modules this
    session has not imported: it could not read its team's messages, so nothing is
    started. Never imported here on the card's word: what is imported is the person's
    choice (``--import``)."""
    missing = [m for m in modules if m not in sys.modules]
    if missing:
        raise CliError(
            f"the server's card {card_name!r} is built from classes of {', '.join(missing)}, "
            f"which this session needs to read its team's messages: add "
            f"{' '.join(import_flags(missing))} (the module must be installed here too)"
        )


DAMAGED = "DAMAGED"
"""The status shown for a record the store could not read whole (:func:`status_label`)."""


TEAM_CARD_MODEL = "akgentic.team.card.TeamCard"
"""The ``__model__`` marker of a stored team card."""
CARD_REQUIRES = ("name", "entry_point", "members")
"""The fields a team card cannot go without (``TeamCard``'s required ones), checked on the
stored JSON so that ``teams list`` tells a broken card without the agent layer."""


class DamagedCardError(CliError):
    """A stored team card that decodes to no valid team card: no card at all (the record
    must be restored from a backup to resume the team), or one that fails this version's
    card checks (``outdated``: stored by an earlier version, whose checks were looser; a
    backup holds the same card; the message names what fails them)."""

    def __init__(self, message: str, *, outdated: bool = False) -> None:
        super().__init__(message)
        self.outdated = outdated


def card_problem(record: TeamRecord) -> str | None:
    """What makes the stored card plainly no team card — no ``TeamCard`` marker, or a
    required field missing or empty — or None. A shape check of the JSON only (the full
    checks need the agent layer, which ``teams list`` does not import): a card that passes
    it may still fail them, which ``show`` and ``resume`` say."""
    card = record.card
    if not card and record.error is not None:
        return None  # unreadable: record.error says why
    if card.get(MODEL_MARKER) != TEAM_CARD_MODEL:
        return f"team {short_id(record.team_id)} has no team card"
    missing = [field for field in CARD_REQUIRES if not card.get(field)]
    if missing:
        return f"team {short_id(record.team_id)}'s team card has no {', '.join(missing)}"
    return None


def status_label(record: TeamRecord) -> str:
    """The team's status, or ``DAMAGED`` when the store could not read its record whole
    (its status, card, metadata or a time) or its card is plainly no team card
    (:func:`card_problem`): a resume refuses it until it is repaired or restored;
    ``record.error`` or the card problem says what."""
    if record.error is not None or record.status is None or card_problem(record) is not None:
        return DAMAGED
    return record.status.value


def stored_card(record: TeamRecord) -> TeamCard:
    """The team card stored with ``record``; :class:`CliError` when it cannot be decoded,
    or fails the checks while a module the card imports is not imported (the checks of a
    class it defines: a ``message_types`` entry, a ``message_class``) — naming the card's
    ``imports`` to pass with ``--import`` —, :class:`DamagedCardError` when it decodes to
    no valid team card. (The team and tool layers are imported here, by the commands that
    read a card: ``teams list`` does not.)"""
    from pydantic import ValidationError

    from akgentic.team import TeamCard
    from akgentic.tool.core.installed import deserialize_installed

    if not record.card and record.error is not None:
        raise CliError(f"{record.error}; the record is kept as stored")
    if (problem := card_problem(record)) is not None:
        raise DamagedCardError(problem)
    try:
        card = deserialize_installed(record.card)
    except Exception as exc:
        imports = record.card.get("imports") or []
        hint = (
            f"; its card imports {', '.join(map(str, imports))}: rerun with "
            + " ".join(f"--import {m}" for m in imports)
            if imports
            else ""
        )
        if isinstance(exc.__cause__, ValidationError):  # decoded, and refused by the checks
            refusal = exc.refusal_words(top="card") if isinstance(exc, SerializationError) else None
            checks = refusal or validation_words(exc.__cause__, top="card")
            if any(str(m) not in sys.modules for m in imports):  # checks of what they define
                raise CliError(
                    f"team {short_id(record.team_id)}'s team card fails its checks without "
                    f"the modules it imports: {checks}{hint}"
                ) from None
            raise DamagedCardError(
                f"team {short_id(record.team_id)}'s team card fails this version's card "
                f"checks: {checks}",
                outdated=True,
            ) from None
        raise CliError(
            f"team {short_id(record.team_id)} has an unreadable team card: "
            f"{exception_words(exc)}{hint}"
        ) from None
    if not isinstance(card, TeamCard):
        raise DamagedCardError(f"team {short_id(record.team_id)} has no team card")
    return card

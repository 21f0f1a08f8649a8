"""``open_storage(url)``: one string picks the backend and its options.

SQLite URLs follow SQLAlchemy's convention, the one the Python ecosystem reads:
``sqlite:///teams.db`` (three slashes, then a path relative to the working directory)
and ``sqlite:////var/lib/akgentic/teams.db`` (four: an absolute path). Earlier versions
read three slashes as absolute and two as relative; a URL that would now silently mean
another file is refused with the spelling of each reading (see :func:`sqlite_path`).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from pydantic import ValidationError

from akgentic.core.excerpt import validator_words
from akgentic.storage.errors import StorageNotFoundError
from akgentic.storage.memory import MemoryStorage
from akgentic.storage.sqlite import SqliteOptions, SqliteStorage, may_write

if TYPE_CHECKING:
    from akgentic.storage.protocols import StorageBundle

__all__ = ["ACCEPTED_URLS", "open_storage", "sqlite_path", "sqlite_url"]

ACCEPTED_URLS = (
    "memory:// (in-process, for tests), "
    "sqlite:///relative/path/teams.db or sqlite:////absolute/path/teams.db "
    "(SQLAlchemy's convention; options: ?synchronous=FULL|NORMAL&busy_timeout=SECONDS), "
    "postgresql://user:password@host:port/dbname (or postgres://; option: ?schema=NAME, "
    "other query parameters go to libpq)"
)

_PREFIX = "sqlite:///"


def sqlite_url(path: str | Path) -> str:
    """The URL of the SQLite file ``path``: ``sqlite:////abs/teams.db`` for an absolute
    path, ``sqlite:///rel/teams.db`` for a relative one (characters a URL cannot hold are
    %-escaped; :func:`open_storage` reads them back)."""
    text = Path(path).as_posix()
    return _PREFIX + quote(text, safe="/:._-~")


def _query(raw: str, where: str) -> dict[str, str]:
    pairs = parse_qsl(raw, keep_blank_values=True, strict_parsing=False)
    options: dict[str, str] = {}
    for key, value in pairs:
        if key in options:
            raise ValueError(f"{where}: option {key!r} is given twice")
        options[key] = value
    return options


def sqlite_path(url: str, *, cwd: Path | None = None) -> Path:
    """The file a ``sqlite:`` URL names, by SQLAlchemy's convention; ``ValueError`` when
    it names none, or when it is written the way earlier versions read differently and
    the other reading is the file the user most likely means:

    - ``sqlite://rel/teams.db`` (two slashes: a host, which SQLite has none of);
    - ``sqlite:///X`` whose ``X`` does not exist under the working directory while
      ``/X`` — or the folder ``X`` starts with — exists at the root (``sqlite:///tmp/x.db``,
      ``sqlite:///var/lib/akgentic/teams.db``): the old absolute form. ``sqlite:///./X``
      says "relative" explicitly and is never refused.
    """
    rest = url.partition(":")[2].partition("?")[0]
    if not rest.startswith("///"):
        body = rest.removeprefix("//")
        if body:
            raise ValueError(
                f"{url!r} has two slashes, which name a host: write "
                f"sqlite:///{body} for a file relative to the working directory, or "
                f"sqlite:////{body} for the absolute path /{body}"
            )
        raise ValueError(
            f"{url!r} names no file: use sqlite:///relative/teams.db or "
            f"sqlite:////absolute/teams.db (memory:// keeps nothing)"
        )
    raw = unquote(rest[3:])
    if not raw or raw == "/":
        raise ValueError(
            f"{url!r} names no file: use sqlite:///relative/teams.db or "
            f"sqlite:////absolute/teams.db"
        )
    path = Path(raw)
    if path.is_absolute():
        return path
    here = (cwd or Path.cwd()).resolve()
    _refuse_old_absolute(url, raw, here)
    return path


def _refuse_old_absolute(url: str, raw: str, here: Path) -> None:
    """Refuse ``sqlite:///X`` when it most likely means ``/X`` (see :func:`sqlite_path`)."""
    parts = PurePosixPath(raw).parts
    if not parts or raw.startswith(("./", ".\\")) or here == Path(here.anchor):
        return
    relative = here / raw
    absolute = Path(here.anchor) / raw
    if relative.exists():
        return
    first = Path(here.anchor) / parts[0]
    old_target = absolute.exists() or (len(parts) > 1 and first.is_dir())
    if old_target and not (here / parts[0]).exists():
        raise ValueError(
            f"{url!r} names {relative} (relative to the working directory: three slashes, "
            f"SQLAlchemy's convention), but {absolute if absolute.exists() else first} "
            f"exists: for the absolute path write sqlite:////{raw}; for a new file here "
            f"write sqlite:///./{raw}"
        )


def _open_sqlite(url: str, create: bool, read_only: bool) -> SqliteStorage:
    path = sqlite_path(url)
    raw = _query(url.partition("?")[2], "sqlite URL")
    if "synchronous" in raw:
        raw["synchronous"] = raw["synchronous"].upper()
    try:
        options = SqliteOptions.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: "
            + ("unknown option" if e["type"] == "extra_forbidden" else validator_words(e["msg"]))
            for e in exc.errors()
        )
        raise ValueError(
            f"bad options in sqlite URL {url!r}: {problems}; "
            f"accepted: synchronous=FULL|NORMAL, busy_timeout=SECONDS"
        ) from None
    if not create and not path.exists():
        raise StorageNotFoundError(f"{path} does not exist (nothing is stored there yet)")
    return SqliteStorage(
        path,
        synchronous=options.synchronous,
        busy_timeout=options.busy_timeout,
        read_only=read_only and not may_write(path),
    )


def _open_postgres(url: str) -> StorageBundle:
    try:
        from akgentic.storage.postgres import PostgresOptions, PostgresStorage
    except ImportError as exc:  # psycopg is an optional dependency
        raise ValueError(
            f"a postgresql:// URL needs psycopg 3: pip install 'akgentic[postgres]' ({exc})"
        ) from exc
    parts = urlsplit(url)
    query = _query(parts.query, "postgresql URL")
    schema = query.pop("schema", "public")
    try:  # said here in one line, not as pydantic's error over four
        PostgresOptions(schema_name=schema)
    except ValidationError:
        raise ValueError(
            f"bad schema in postgresql URL: {schema!r} is not a schema name akgentic can "
            f"use; give letters, digits and _ (not a digit first), at most 63 of them, "
            f"for instance ?schema=akgentic"
        ) from None
    conninfo = urlunsplit(parts._replace(query=urlencode(query)))
    return PostgresStorage(conninfo, schema=schema)


def open_storage(url: str, *, create: bool = True, read_only: bool = False) -> StorageBundle:
    """Open the storage bundle a URL names; the schema is created when missing.

    Accepted: ``memory://``, ``sqlite:///rel/path.db`` (three slashes: relative to the
    working directory), ``sqlite:////abs/path.db`` (four: absolute) and
    ``postgresql://...`` / ``postgres://...``. Anything else is a ``ValueError`` that
    lists what is accepted; so is a SQLite URL in the old spelling that would now name
    another file (see :func:`sqlite_path`).

    ``create=False`` is for readers: a SQLite file that does not exist raises
    :class:`~akgentic.storage.StorageNotFoundError` instead of being created, with its
    folders. ``read_only=True`` is for callers that only read (it implies
    ``create=False``): a SQLite file this process may not write, or in a folder it may
    not write (a backup, a read-only mount), is opened read-only instead of refused — a
    write through it raises :class:`~akgentic.storage.StorageError` saying what to do,
    having written nothing; one it may write opens as usual.
    """
    if not isinstance(url, str):
        raise TypeError(f"a storage URL is a string, got {type(url).__name__}")
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme == "memory":
        if url[len("memory://") :]:
            raise ValueError(f"memory:// takes no path or options, got {url!r}")
        return MemoryStorage()
    if scheme == "sqlite":
        return _open_sqlite(url, create and not read_only, read_only)
    if scheme in ("postgresql", "postgres"):
        return _open_postgres(url)
    if not scheme:  # a file's path, the likeliest slip: the URL that names that file
        raise ValueError(
            f"storage {url!r} is a path, not a URL: for a SQLite file there, give "
            f"{sqlite_url(Path(url).expanduser())} (accepted: {ACCEPTED_URLS})"
        )
    raise ValueError(f"unsupported storage URL (scheme {scheme!r}); accepted: {ACCEPTED_URLS}")

"""``open_storage(url)``: one string picks the backend and its options."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from pydantic import ValidationError

from akgentic.storage.memory import MemoryStorage
from akgentic.storage.sqlite import SqliteOptions, SqliteStorage

if TYPE_CHECKING:
    from akgentic.storage.protocols import StorageBundle

__all__ = ["ACCEPTED_URLS", "open_storage"]

ACCEPTED_URLS = (
    "memory:// (in-process, for tests), "
    "sqlite:///absolute/path/teams.db or sqlite://relative/path/teams.db "
    "(options: ?synchronous=FULL|NORMAL&busy_timeout=SECONDS), "
    "postgresql://user:password@host:port/dbname (or postgres://; option: ?schema=NAME, "
    "other query parameters go to libpq)"
)


def _query(raw: str, where: str) -> dict[str, str]:
    pairs = parse_qsl(raw, keep_blank_values=True, strict_parsing=False)
    options: dict[str, str] = {}
    for key, value in pairs:
        if key in options:
            raise ValueError(f"{where}: option {key!r} is given twice")
        options[key] = value
    return options


def _open_sqlite(url: str) -> SqliteStorage:
    rest = url[len("sqlite://") :]
    path, _, query = rest.partition("?")
    path = unquote(path)
    if not path or path == "/":
        raise ValueError(
            f"{url!r} names no file: use sqlite:///absolute/path/teams.db or "
            f"sqlite://relative/path/teams.db"
        )
    raw = _query(query, "sqlite URL")
    if "synchronous" in raw:
        raw["synchronous"] = raw["synchronous"].upper()
    try:
        options = SqliteOptions.model_validate(raw)
    except ValidationError as exc:
        raise ValueError(
            f"bad options in sqlite URL {url!r}: {exc.errors(include_url=False)}; "
            f"accepted: synchronous=FULL|NORMAL, busy_timeout=SECONDS"
        ) from None
    return SqliteStorage(path, synchronous=options.synchronous, busy_timeout=options.busy_timeout)


def _open_postgres(url: str) -> StorageBundle:
    try:
        from akgentic.storage.postgres import PostgresStorage
    except ImportError as exc:  # psycopg is an optional dependency
        raise ValueError(
            f"a postgresql:// URL needs psycopg 3: pip install 'akgentic[postgres]' ({exc})"
        ) from exc
    parts = urlsplit(url)
    query = _query(parts.query, "postgresql URL")
    schema = query.pop("schema", "public")
    conninfo = urlunsplit(parts._replace(query=urlencode(query)))
    return PostgresStorage(conninfo, schema=schema)


def open_storage(url: str) -> StorageBundle:
    """Open the storage bundle a URL names; the schema is created when missing.

    Accepted: ``memory://``, ``sqlite:///abs/path.db`` (three slashes: absolute),
    ``sqlite://rel/path.db`` (two: relative to the working directory) and
    ``postgresql://...`` / ``postgres://...``. Anything else is a ``ValueError`` that
    lists what is accepted.
    """
    if not isinstance(url, str):
        raise TypeError(f"a storage URL is a string, got {type(url).__name__}")
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme == "memory":
        if url[len("memory://") :]:
            raise ValueError(f"memory:// takes no path or options, got {url!r}")
        return MemoryStorage()
    if scheme == "sqlite":
        return _open_sqlite(url)
    if scheme in ("postgresql", "postgres"):
        return _open_postgres(url)
    shown: Any = f"scheme {scheme!r}" if scheme else "no scheme"
    raise ValueError(f"unsupported storage URL ({shown}); accepted: {ACCEPTED_URLS}")

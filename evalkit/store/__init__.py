"""Where answers are stored: one interface (:class:`Store`), two backends, chosen by a URL.

- a path or ``sqlite:///path``: :class:`~evalkit.store.sqlite.SQLiteStore`, the embedded default
  (local runs, a VM or one machine with a real disk);
- ``postgresql://user:password@host:port/dbname``: :class:`~evalkit.store.postgres.PostgresStore`,
  for hosted deployments whose disk does not survive a reboot.

:func:`open_store` picks the backend. Nothing outside this package writes SQL:
the analysis asks for columns (:meth:`Store.read_tables`), the results page
keys its cache on :meth:`Store.data_version`, and ``evalkit copy`` moves a
whole study between backends (:meth:`Store.import_from`).

The store is the bottom layer of evalkit: no module of this package imports anything from evalkit outside
it. May import: the standard library and the store's own modules; :mod:`.postgres` (and with it psycopg)
only when a PostgreSQL database is opened or checked.
"""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path
from typing import Any

from .base import (
    COLUMNS,
    INVITED_META,
    SCHEMA_VERSION,
    SESSION_STATUSES,
    SURVEY_STATES,
    TABLES,
    Answer,
    AnswerConflict,
    ColumnSpec,
    ForKinds,
    FormAnswer,
    JsonField,
    Participant,
    ParticipantHasSession,
    Progress,
    QueueStatus,
    Rating,
    Sampled,
    Session,
    Store,
    StoreError,
    Unavailable,
    UnknownSession,
    is_valid_token,
    mask_url,
    new_completion_code,
    now_iso,
)
from .sqlite import SQLiteStore, check_sqlite

__all__ = [
    "COLUMNS",
    "INVITED_META",
    "SCHEMA_VERSION",
    "SESSION_STATUSES",
    "SURVEY_STATES",
    "TABLES",
    "Answer",
    "AnswerConflict",
    "ColumnSpec",
    "Database",
    "ForKinds",
    "FormAnswer",
    "JsonField",
    "Participant",
    "ParticipantHasSession",
    "Progress",
    "QueueStatus",
    "Rating",
    "SQLiteStore",
    "Sampled",
    "Session",
    "Store",
    "StoreError",
    "Unavailable",
    "UnknownSession",
    "check_database",
    "describe",
    "is_postgres",
    "is_valid_token",
    "mask_url",
    "new_completion_code",
    "now_iso",
    "open_store",
    "resolve_database",
]

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
SQLITE_URL_PREFIX = "sqlite:///"
POSTGRES_SCHEMES = ("postgresql", "postgres")
#: A database location: a SQLite file's path, or a PostgreSQL URL (a str).
Database = Path | str


def is_postgres(location: Database) -> bool:
    """True when ``location`` is a PostgreSQL URL."""
    return isinstance(location, str) and location.split("://", 1)[0].lower() in POSTGRES_SCHEMES \
        and "://" in location


def resolve_database(value: str | Path, base: Path | None = None) -> Database:
    """The database a config value names: a SQLite :class:`~pathlib.Path`, or a PostgreSQL URL (str).

    Accepted: a path (relative to ``base``), ``sqlite:///path`` (``sqlite:///data/x.sqlite`` relative,
    ``sqlite:////srv/x.sqlite`` absolute, SQLAlchemy's convention) and ``postgresql://`` or
    ``postgres://`` URLs. Any other URL raises :class:`StoreError`, password masked: a URL must never
    silently become a file name.
    """
    text = str(value).strip()
    if isinstance(value, str) and _URL.match(text):
        scheme = text.split("://", 1)[0].lower()
        if scheme in POSTGRES_SCHEMES:
            encode = ("write the characters @ : / ? # % of a user name or password percent-encoded (%40 for @, %3A "
                      "for :, %2F for /)")
            if text.split("://", 1)[1].split("?", 1)[0].count("@") > 1:  # "user:p@ss@host": the driver would
                raise StoreError(  # connect to host "ss" and print part of the password in its error
                    f"database {mask_url(text)!r}: more than one '@' before the database name; {encode}")
            try:  # "user:pa/ss@host": the address ends at the "/", so "pa" is read as the port of host "user"
                _ = urllib.parse.urlsplit(text).port
            except ValueError:
                raise StoreError(f"database {mask_url(text)!r}: its port is not a number (a password holding / ? "
                                 f"or # ends the address early); {encode}") from None
            return text
        if not text.startswith(SQLITE_URL_PREFIX):
            raise StoreError(f"database {mask_url(text)!r}: {scheme!r} databases are not supported; give a "
                             "file path, sqlite:///path or postgresql://user:password@host:port/dbname")
        text = text[len(SQLITE_URL_PREFIX):]
    if not text:
        raise StoreError("database: the path is empty")
    path = Path(text)
    if not path.is_absolute() and base is not None:
        path = base / path
    return path


def describe(location: Database, *, short: bool = False) -> str:
    """The database for a message or a page: the path (with ``short``, its file name only), or the URL
    with its password masked."""
    if isinstance(location, str):
        return mask_url(location)
    return Path(location).name if short else str(location)


def open_store(location: str | Path, *, base: Path | None = None, writable: bool = True, **options: Any) -> Store:
    """Open the store at ``location`` (a path, ``sqlite:///path`` or ``postgresql://...``; see
    :func:`resolve_database`). ``writable=False`` opens it for reading only and creates nothing.
    ``options`` go to the backend (e.g. ``max_size`` of the PostgreSQL pool, ``synchronous`` of SQLite).
    """
    database = resolve_database(location, base)
    if is_postgres(database):
        from .postgres import PostgresStore  # imported on demand: a SQLite study needs no psycopg

        return PostgresStore(str(database), writable=writable, **options)
    path = Path(database)
    if not writable and not path.exists():
        raise StoreError(f"cannot open the database {path}: it does not exist")
    return SQLiteStore(path, writable=writable, **options)


def check_database(location: Database) -> str:
    """Check, without changing anything, that the app could open ``location``; a one-line status.

    Raises :class:`StoreError` with the message the app would show (password masked).
    """
    if not is_postgres(location):
        return check_sqlite(Path(location))
    from .postgres import check_postgres

    return check_postgres(str(location))

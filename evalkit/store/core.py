"""The plumbing every part of the store stands on: the hooks a backend provides, and the helpers they share.

:class:`StoreCore` declares, once, everything the SQL dialects differ in (connections, how a transaction
starts, statement execution, the driver's errors, the locks PostgreSQL takes and SQLite's ``BEGIN IMMEDIATE``
makes unnecessary, bulk import, streaming, the columnar reader) and holds the small helpers several concerns
use inside a transaction (a setting, an admin log entry, a session that must exist, rows of one session or
task, the schema migration). The concerns (:mod:`.sessions`, :mod:`.answers`, :mod:`.ratings`,
:mod:`.claims`, :mod:`.progress`, :mod:`.settings`, :mod:`.copying`) are mixins on it; :class:`.base.Store`
composes them. :func:`retried` marks the methods that are safe to run twice.

May import: the standard library and sibling store modules (:mod:`.records`, :mod:`.schema`, :mod:`.columns`);
no driver (the backends import theirs) and no other evalkit module.
"""

from __future__ import annotations

import abc
import contextlib
import functools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self, TypeVar

from .columns import ColumnSpec
from .records import Unavailable, UnknownSession, now_iso
from .schema import COLUMNS, MIGRATIONS, SCHEMA_VERSION, TABLE_ORDER, refuse_newer

if TYPE_CHECKING:
    import pyarrow as pa

T = TypeVar("T")


def retried(method: Callable[..., T]) -> Callable[..., T]:
    """Retry an idempotent store method once when the connection dropped (a server restart, a failover).

    Only for methods that are safe to run twice: every write they make is exactly once, so a retry after
    a commit whose acknowledgement was lost finds the row and returns it.
    """
    @functools.wraps(method)
    def wrapper(self: StoreCore, *args: Any, **kwargs: Any) -> T:
        for attempt in range(self.retries + 1):
            try:
                return method(self, *args, **kwargs)
            except Unavailable as exc:
                if attempt == self.retries or not exc.retry:
                    raise
        raise AssertionError("unreachable")
    return wrapper


class StoreCore(abc.ABC):
    """What every part of the store needs: the backend's hooks (abstract, or a default most backends keep)
    and the helpers shared by the concerns. Not used on its own: see :class:`evalkit.store.base.Store`."""

    #: Times an idempotent method is retried after a dropped connection (0: SQLite has no connections to drop).
    retries = 0
    #: Text naming the database in messages (a path, or a URL with its password masked).
    where: str = ""

    # ------------------------------------------------------------------ what a backend provides

    @abc.abstractmethod
    def _conn(self) -> contextlib.AbstractContextManager[Any]:
        """A connection in autocommit mode (each statement its own transaction)."""

    @abc.abstractmethod
    def _write(self) -> contextlib.AbstractContextManager[Any]:
        """A connection inside a write transaction, committed on exit (rolled back on an exception)."""

    @abc.abstractmethod
    def _read(self) -> contextlib.AbstractContextManager[Any]:
        """A connection inside a read-only transaction: every query sees one snapshot."""

    @abc.abstractmethod
    def _exec(self, conn: Any, sql: str, args: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        """Run one statement (``?`` placeholders); returns a cursor whose rows are mappings."""

    @abc.abstractmethod
    def _exec_many(self, conn: Any, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement for each row of parameters."""

    @abc.abstractmethod
    def _is_foreign_key_error(self, exc: BaseException) -> bool:
        """True when ``exc`` is the driver's foreign-key violation (an unknown session)."""

    @property
    @abc.abstractmethod
    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        """The driver's exception classes (turned into :class:`StoreError` by the copy)."""

    @abc.abstractmethod
    def read_tables(self, requests: Mapping[str, tuple[str, Sequence[ColumnSpec]]], *,
                    threads: int = 2) -> dict[str, pa.Table]:
        """Columns of several tables as Arrow tables, for the analysis of large studies.

        ``requests`` maps a name to ``(table, columns)``; each column is ``(name, source, kind)``
        (:data:`ColumnSpec`) with kind ``int``, ``real``, ``text`` or ``category`` (text,
        dictionary-encoded). Every value is cast to its kind (NULL stays NULL). Rows come in the
        backend's scan order; callers that need an order sort by a column.
        """

    @abc.abstractmethod
    def close(self) -> None:
        """Release every connection (the store cannot be used afterwards)."""

    def read_columns(self, table: str, columns: Sequence[ColumnSpec], **options: Any) -> pa.Table:
        """Some columns of one table as an Arrow table (see :meth:`read_tables`; ``options`` go to it)."""
        return self.read_tables({table: (table, columns)}, **options)[table]

    # ------------------------------------------------------------------ what a backend may change

    def _import_rows(self, conn: Any, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        """Insert rows as they are (ids included), inside ``conn``'s transaction (``evalkit copy``)."""
        marks = ", ".join("?" * len(columns))
        self._exec_many(conn, f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)

    def _after_import(self, conn: Any) -> None:  # noqa: B027 - a hook: nothing to do unless a backend says so
        """After rows were imported with their ids (PostgreSQL moves its id sequences past them)."""

    def _stream(self, table: str) -> Iterator[tuple[Any, ...]]:
        """Every row of ``table`` as tuples of :data:`COLUMNS` order, in :data:`TABLE_ORDER`."""
        with self._read() as conn:
            cur = self._exec(conn, f"SELECT {', '.join(COLUMNS[table])} FROM {table} ORDER BY {TABLE_ORDER[table]}")
            while batch := cur.fetchmany(5000):
                for row in batch:
                    yield tuple(row[c] for c in COLUMNS[table])

    def _lock_participant(self, conn: Any, external_id: str) -> None:  # noqa: B027 - SQLite's BEGIN IMMEDIATE does it
        """Inside a write transaction: make concurrent starts of one participant take turns."""

    def _lock_arrivals(self, conn: Any) -> None:  # noqa: B027 - SQLite's BEGIN IMMEDIATE does it
        """Inside a write transaction: make session starts take turns from counting the sessions to the commit,
        so that no two sessions get the same arrival."""

    def _lock_session(self, conn: Any, session_id: str) -> None:  # noqa: B027 - SQLite's BEGIN IMMEDIATE does it
        """Inside a write transaction: make concurrent multi-row writes of one session take turns."""

    def _lock_queue(self, conn: Any, task: str) -> None:  # noqa: B027 - SQLite's BEGIN IMMEDIATE does it
        """Inside a write transaction: wait for ``task``'s queue lock (adding units, releasing claims, deleting
        a session; a claim's expiry sweep only tries it, :meth:`_try_lock_queue`)."""

    def _try_lock_queue(self, conn: Any, task: str) -> bool:
        """Inside a write transaction: take ``task``'s queue lock unless another transaction holds it; True
        when taken (SQLite: always, its write transactions take turns)."""
        return True

    def _claim_transaction(self) -> contextlib.AbstractContextManager[Any]:
        """The write transaction of a claim (PostgreSQL: in pipeline mode, statements whose results are not
        read go out with the next one that is)."""
        return self._write()

    #: What makes the pick of a unit lock the row it picks (PostgreSQL: ``FOR UPDATE OF q SKIP LOCKED``).
    _pick_lock = ""
    #: What makes reading a session's row lock it against the session's other writes (PostgreSQL: a row lock).
    _session_lock = ""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ helpers inside a transaction

    def _migrate(self, conn: Any, *, fresh_ok: bool = True) -> None:
        """Inside the schema transaction: record or check the version, run the migrations, prove a write."""
        row = self._exec(conn, "SELECT value FROM settings WHERE key = 'schema_version'").fetchone()
        version = int(row["value"]) if row else 1
        refuse_newer(self.where, version)
        for target in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[target]:
                self._exec(conn, statement)
        self._put_setting(conn, "schema_version", str(SCHEMA_VERSION))
        # prove that a commit works now (a read-only database would otherwise fail only at the first answer)
        self._put_setting(conn, "opened_at", now_iso())

    def _put_setting(self, conn: Any, key: str, value: str) -> None:
        """Set a setting inside ``conn``'s transaction (not logged: see :meth:`set_setting` for that)."""
        self._exec(conn, "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO "
                         "UPDATE SET value = excluded.value, updated_at = excluded.updated_at", (key, value, now_iso()))

    def _log(self, conn: Any, actor: str, action: str, detail: Mapping[str, Any]) -> None:
        """Append to the admin log inside ``conn``'s transaction."""
        self._exec(conn, "INSERT INTO admin_log (at, actor, action, detail) VALUES (?, ?, ?, ?)",
                   (now_iso(), actor, action, json.dumps(dict(detail), sort_keys=True)))

    def _finish(self, conn: Any, session_id: str, task: str, at: str) -> None:
        """Mark the session's block ``task`` finished at ``at`` (once: a later mark keeps the first time)."""
        self._exec(conn, "INSERT INTO task_status (session_id, task, finished_at) VALUES (?, ?, ?) "
                         "ON CONFLICT (session_id, task) DO NOTHING", (session_id, task, at))

    def _require(self, conn: Any, session_id: str) -> Mapping[str, Any]:
        """The session's row; UnknownSession when there is none."""
        row = self._exec(conn, "SELECT * FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
        if row is None:
            raise UnknownSession(f"no session with token {session_id!r}")
        return row

    def _require_locked(self, conn: Any, session_id: str, then: tuple[str, Sequence[Any]] | None = None) -> Any:
        """UnknownSession unless the session exists; its row locked for the rest of the transaction (PostgreSQL).
        ``then``: a statement (SQL, arguments) sent with the lock, before its answer is read (one round trip in
        PostgreSQL's pipeline mode); its cursor is returned."""
        session = self._exec(conn, f"SELECT session_id FROM sessions WHERE session_id = ?{self._session_lock}",
                             (session_id,))
        after = None if then is None else self._exec(conn, *then)
        if session.fetchone() is None:
            raise UnknownSession(f"no session with token {session_id!r}")
        return after

    def _rows(self, table: str, session_id: str | None, task: str | None, order: str = "id"
              ) -> list[Mapping[str, Any]]:
        """The rows of ``table`` (optionally of one session and/or task) in ``order``."""
        where = {k: v for k, v in {"session_id": session_id, "task": task}.items() if v is not None}
        sql = f"SELECT * FROM {table}"
        if where:
            sql += " WHERE " + " AND ".join(f"{k} = ?" for k in where)
        with self._conn() as conn:
            return self._exec(conn, sql + f" ORDER BY {order}", list(where.values())).fetchall()

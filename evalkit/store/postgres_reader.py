"""The columnar reads of :class:`~.postgres.PostgresStore`: ADBC's PostgreSQL driver, straight into Arrow.

Each query is read with binary ``COPY`` into Arrow arrays (no Python object per cell); a large table is split
into id ranges read on several connections at once. The driver's connections are kept between reads (a new
one costs an authentication and a type catalog query) for as long as they are fresh. Kept apart from the
pool and transactions of :mod:`.postgres` because it shares nothing with them but the URL.

May import: the standard library, pyarrow and adbc_driver_postgresql (both only inside a read) and sibling
store modules; no other evalkit module (and no psycopg: the driver is ADBC's own).
"""

from __future__ import annotations

import abc
import contextlib
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from .columns import ColumnSpec, cast_select, check_columns, id_ranges
from .core import StoreCore, retried
from .records import StoreError
from .schema import ID_TABLES

if TYPE_CHECKING:
    import pyarrow as pa

log = logging.getLogger("evalkit.store")

#: The SQL type of each column kind.
_TYPES = {"int": "BIGINT", "real": "DOUBLE PRECISION", "text": "TEXT", "category": "TEXT"}


def _json_sql(column: str, key: str) -> str:
    """A key of a JSON text column, NULL where absent (most rows hold '{}': checked before parsing).

    ``json``, not ``jsonb``: ``->>`` reads the text without building a binary document (0.2 s less server
    time for 250,000 slider answers); both take the last of duplicate keys, as Python's ``json`` does.
    """
    return f"CASE WHEN {column} <> '{{}}' AND strpos({column}, '\"{key}\"') > 0 THEN ({column}::json ->> '{key}') END"


class PostgresReads(StoreCore):
    """:meth:`read_tables` for :class:`~.postgres.PostgresStore`, which gives it :attr:`url`, :attr:`where`,
    :meth:`_message` (a driver error as one line, password masked) and :meth:`_is_closed`, and calls
    :meth:`_keep_reads` when it opens and :meth:`_close_reads` when it closes."""

    url: str
    #: A columnar read splits a table into id ranges of at least this many rows, one per reader thread.
    rows_per_part = 200_000

    def _keep_reads(self) -> None:
        """Start with no kept ADBC connection."""
        self._arrow_idle: list[tuple[Any, float]] = []  # ADBC connections kept between reads, since when
        self._arrow_lock = threading.Lock()

    def _close_reads(self) -> None:
        """Close the kept ADBC connections."""
        with self._arrow_lock:
            idle, self._arrow_idle = self._arrow_idle, []
        for conn, _ in idle:
            _close_quietly(conn)

    @abc.abstractmethod
    def _message(self, exc: BaseException) -> str:
        """A driver error as one line, without the password (the backend's wording)."""

    @abc.abstractmethod
    def _is_closed(self) -> bool:
        """Whether the store was closed (a connection is then closed after a read, not kept)."""

    def read_tables(self, requests: Mapping[str, tuple[str, Sequence[ColumnSpec]]], *,
                    threads: int = 2) -> dict[str, pa.Table]:
        """Columns of several tables as Arrow tables (see :meth:`Store.read_tables`).

        Through ADBC's PostgreSQL driver, which reads each query with binary
        ``COPY`` into Arrow arrays (no Python object per cell); a large table is
        split into id ranges read on ``threads`` connections at once, stopping
        at the largest id seen when the read starts. The driver's connections
        are kept for the next queries and the next read (see :attr:`arrow_keep`).
        """
        import pyarrow as pa

        jobs: list[tuple[str, str]] = []
        for name, (table, columns) in requests.items():
            check_columns(table, columns)
            low, high = self._id_range(table)
            select = cast_select(columns, high, _json_sql, _TYPES)
            if table not in ID_TABLES:
                jobs.append((name, f"SELECT {select} FROM {table}"))
                continue
            jobs += [(name, f"SELECT {select} FROM {table} WHERE id > {lo} AND id <= {hi}")
                     for lo, hi in id_ranges(low, high, threads, self.rows_per_part)]

        def run(job: tuple[str, str]) -> pa.Table:
            name, sql = job
            conn, kept = self._arrow_take()
            try:
                part = _fetch_arrow(conn, sql)
            except Exception as exc:
                _close_quietly(conn)
                if not kept:
                    raise
                # a kept connection the server dropped meanwhile (a restart, an idle timeout): once more, anew
                log.debug("a columnar read failed on a kept connection (%s); trying a new one",
                           self._message(exc))
                conn = self._arrow_connect()
                try:
                    part = _fetch_arrow(conn, sql)
                except Exception:
                    _close_quietly(conn)
                    raise
            self._arrow_give(conn)
            for col in categories[name]:  # encoded here, in parallel (pyarrow releases the GIL)
                k = part.schema.get_field_index(col)
                part = part.set_column(k, col, part[col].combine_chunks().dictionary_encode())
            return part

        categories = {name: [col for col, _, kind in columns if kind == "category"]
                      for name, (_, columns) in requests.items()}
        try:
            with ThreadPoolExecutor(max(1, min(threads, len(jobs)))) as pool:
                parts_read = list(pool.map(run, jobs))
        except Exception as exc:  # the driver's errors are its own classes: name them, without the password
            raise StoreError(f"reading {', '.join(requests)} from {self.where} failed: {self._message(exc)}") from None
        # the parts' dictionaries differ: unify_dictionaries gives every chunk of a column the same one
        return {name: pa.concat_tables([t for (owner, _), t in zip(jobs, parts_read, strict=True) if owner == name])
                .unify_dictionaries() for name in requests}

    @retried  # (a read: a pooled connection a restart cut is replaced, as for the other calls)
    def _id_range(self, table: str) -> tuple[int, int]:
        if table not in ID_TABLES:
            return 0, 0
        with self._conn() as conn:
            row = self._exec(conn, f"SELECT coalesce(min(id), 1) - 1 AS lo, coalesce(max(id), 0) AS hi FROM {table}"
                             ).fetchone()
        return int(row["lo"]), int(row["hi"])

    def _arrow_connect(self) -> Any:
        """A new ADBC connection, in autocommit mode (a kept one must not sit idle inside a transaction, which
        would hold back VACUUM and trip a host's ``idle_in_transaction_session_timeout``)."""
        import adbc_driver_postgresql.dbapi

        return adbc_driver_postgresql.dbapi.connect(self.url, autocommit=True)

    #: ADBC connections kept between reads, at most this many: a new one costs an authentication and the driver's
    #: type catalog query (55-95 ms here, in every read before 2026-11-24: each update of the results page after
    #: new answers paid it). A kept one the server dropped is replaced when a read fails on it.
    arrow_keep = 2
    #: Seconds a kept ADBC connection may sit idle before it is closed instead of reused: a connection that a NAT
    #: or a load balancer dropped without a word would make the next query wait for TCP to give up (minutes);
    #: the results page re-reads every few seconds while answers come in, well within this.
    arrow_idle_seconds = 30.0

    def _arrow_take(self) -> tuple[Any, bool]:
        """A kept ADBC connection idle for less than :attr:`arrow_idle_seconds` (and True), or a new one (and
        False); older kept ones are closed."""
        stale = []
        try:
            with self._arrow_lock:
                while self._arrow_idle:
                    conn, since = self._arrow_idle.pop()
                    if time.monotonic() - since < self.arrow_idle_seconds:
                        return conn, True
                    stale.append(conn)
        finally:
            for old in stale:
                _close_quietly(old)
        return self._arrow_connect(), False

    def _arrow_give(self, conn: Any) -> None:
        """Keep ``conn`` for the next read, or close it (enough kept, or the store closed)."""
        with self._arrow_lock:
            if not self._is_closed() and len(self._arrow_idle) < self.arrow_keep:
                self._arrow_idle.append((conn, time.monotonic()))
                return
        _close_quietly(conn)


def _close_quietly(conn: Any) -> None:
    """Close an ADBC connection, whatever state it is in (a dropped one may fail to close)."""
    with contextlib.suppress(Exception):
        conn.close()


def _fetch_arrow(conn: Any, sql: str) -> pa.Table:
    """One query's rows as an Arrow table, on an ADBC connection."""
    with conn.cursor() as cur:
        cur.execute(sql)
        return cur.fetch_arrow_table()

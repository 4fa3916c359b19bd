"""The embedded backend: one SQLite file through sqlite-utils, WAL mode, ``synchronous=FULL``.

Connections come from a small pool (one connection per concurrent caller,
reused), so one :class:`SQLiteStore` can be shared by every Streamlit script
thread of a process. Several processes may open the same file: SQLite's
locking and ``busy_timeout`` serialise their writes, and every write
transaction starts with ``BEGIN IMMEDIATE`` (no lock-upgrade deadlocks).

Only what SQLite does differently lives here (connections, transactions, the version-1 DDL, the columnar
reader through a child process); the behaviour is :class:`~.base.Store`'s.

May import: the standard library, sqlite-utils (only when a database is created: it imports pandas), pyarrow
(only in a columnar read) and sibling store modules; no other evalkit module.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import sqlite3
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import sqlite_reader
from .base import Store
from .columns import ColumnSpec, cast_select, check_columns, id_ranges
from .records import StoreError
from .schema import check_schema

if TYPE_CHECKING:
    import pyarrow as pa

#: The SQL type of each column kind, and a literal of that type (see :meth:`SQLiteStore._range_queries`).
_SQL_TYPES = {"text": "TEXT", "category": "TEXT", "int": "INTEGER", "real": "REAL"}
_LITERALS = {"text": "''", "category": "''", "int": "0", "real": "0.0"}
#: A table's rowid range (before the first, the last) for splitting a read. Two subqueries: SQLite finds a lone
#: min() or max() at one end of the B-tree, but scans the whole table for both in one SELECT (0.2 s a million rows).
ROWID_RANGE = ("SELECT coalesce((SELECT min(rowid) FROM {table}), 1) - 1, "
               "coalesce((SELECT max(rowid) FROM {table}), 0)")


def _json_sql(column: str, key: str) -> str:
    """A key of a JSON text column, NULL where absent (most rows hold '{}': checked before parsing)."""
    return (f"CASE WHEN {column} <> '{{}}' AND instr({column}, '\"{key}\"') > 0 AND json_valid({column})"
            f" THEN json_extract({column}, '$.{key}') END")


class _ReaderServer:
    """The process's one reader server (:func:`evalkit.store.sqlite_reader.serve`), started on first use and
    started again if it died; jobs take turns (each uses every core it is given).

    The server runs in a process group of its own, so stopping it also stops a child busy with a job. A job
    has no deadline, as a read in a new interpreter had none: a read of a database on a stalled disk waits,
    and the reads queued behind it with it. A process forked from this one (see :meth:`forget`) starts its
    own server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None

    def run(self, job: dict[str, Any]) -> str | None:
        """"" when done, the error message when the job failed, None when the server cannot be had."""
        with self._lock:
            for _ in range(2):  # a server that died (killed, out of memory) is started again once
                try:
                    process = self._started()
                    if process is None:
                        return None
                    assert process.stdin is not None and process.stdout is not None
                    process.stdin.write(json.dumps(job) + "\n")
                    process.stdin.flush()
                    answer = process.stdout.readline().strip()
                    if answer == "0":
                        return ""
                    if answer:
                        _, message = json.loads(answer)
                        return str(message)
                except (OSError, ValueError, TypeError):
                    pass  # a broken pipe or an answer out of step: that server is done with
                except BaseException:  # (KeyboardInterrupt) the job's answer would be read by the next job
                    self._stop()
                    raise
                self._stop()
            return None

    def _started(self) -> subprocess.Popen[str] | None:
        if self._process is not None and self._process.poll() is None:
            return self._process
        if not hasattr(os, "fork"):
            return None
        process = subprocess.Popen([sys.executable, "-I", sqlite_reader.__file__, "--serve"], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1,
                                   start_new_session=True)
        assert process.stdout is not None
        if process.stdout.readline().strip() != "ready":
            self._process = process
            self._stop()
            return None
        self._process = process
        return process

    def _stop(self) -> None:
        """Stop the server and any child of it still at work (its process group)."""
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(OSError):
            os.killpg(process.pid, 9)
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            process.wait(timeout=5)
        _close_pipes(process)

    def forget(self) -> None:
        """In a process just forked from this one: let go of the parent's server (close this copy of its pipes,
        so the server still sees the end of its input when the parent ends) and start afresh."""
        self._lock = threading.Lock()
        process, self._process = self._process, None
        if process is not None:
            _close_pipes(process)


def _close_pipes(process: subprocess.Popen[str]) -> None:
    """Close this process's ends of a reader server's stdin and stdout."""
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


_READER = _ReaderServer()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _READER.forget())


def _run_reader(job: dict[str, Any]) -> str:
    """Run a read job (:mod:`evalkit.store.sqlite_reader`) in a child process; "" or what went wrong."""
    said = _READER.run(job)
    if said is not None:
        return said
    done = subprocess.run([sys.executable, "-I", sqlite_reader.__file__], input=json.dumps(job), capture_output=True,
                          text=True, check=False)
    return "" if done.returncode == 0 else (done.stderr.strip() or f"exit status {done.returncode}")


def open_problem(path: Path, exc: BaseException | None = None) -> StoreError:
    """The one wording of every "cannot open this database" error (the app, ``evalkit check``, the CLI)."""
    if path.is_dir():
        why = "it is a folder, not a database file"
    elif path.exists() and not os.access(path, os.R_OK):
        why = "the file cannot be read (permissions)"
    elif path.exists() and not os.access(path, os.W_OK):
        why = "the file is read-only; evalkit must be able to write every answer to it"
    elif not os.access(_existing_parent(path), os.W_OK):
        why = (f"its folder {_existing_parent(path)} is not writable; SQLite needs to create the database and "
               "its journal files there")
    elif isinstance(exc, sqlite3.DatabaseError) and "not a database" in str(exc):
        why = "the file is not an SQLite database (is it another kind of file, or damaged?)"
    elif exc is not None:
        why = f"{type(exc).__name__}: {exc}"
    else:
        why = "unknown problem"
    return StoreError(f"cannot open the database {path}: {why}")


def _existing_parent(path: Path) -> Path:
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return parent


def check_sqlite(path: str | Path) -> str:
    """Check, without changing anything, that the app could open ``path``; returns a one-line status.

    Raises :class:`StoreError` with the same message the app shows when it cannot open the database: a
    folder, a file that is not SQLite, a read-only file or folder, or a schema newer than this evalkit.
    """
    path = Path(path)
    if not path.exists():
        if path.is_symlink() or not os.access(_existing_parent(path), os.W_OK):
            raise open_problem(path)
        return "does not exist yet; it will be created on first use"
    if path.is_dir() or not os.access(path, os.R_OK) or not os.access(path, os.W_OK):
        raise open_problem(path)
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            names, version = _schema_of(conn)
            sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0] if "sessions" in names else 0
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise open_problem(path, exc) from None
    check_schema(str(path), names, version, empty_ok=True)
    return f"ok, {sessions} session(s) stored" if names else "ok, empty"


def _schema_of(conn: sqlite3.Connection) -> tuple[set[str], int | None]:
    """The tables of a database and its evalkit schema version (None when it has none)."""
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    version = None
    if "settings" in names:
        row = conn.execute("SELECT value FROM settings WHERE key = 'schema_version'").fetchone()
        version = int(row[0]) if row else None
    return names, version


def create_v1_tables(conn: sqlite3.Connection) -> None:
    """The version-1 tables and indexes (a migration takes them to :data:`SCHEMA_VERSION`)."""
    import sqlite_utils  # (here, not at the top: it imports pandas, 100 MB that `evalkit check` need not hold)

    db = sqlite_utils.Database(conn, execute_plugins=False)
    db["sessions"].create(
        {"session_id": str, "evaluator_name": str, "external_id": str, "seed": int,
         "study_version": str, "started_at": str, "completed_at": str, "user_agent": str,
         "status": str, "completion_code": str, "meta": str},
        pk="session_id", not_null=["seed", "study_version", "started_at", "status"],
        defaults={"status": "active", "evaluator_name": "", "external_id": "", "user_agent": ""},
        if_not_exists=True,
    )
    db["evaluations"].create(
        {"id": int, "session_id": str, "task": str, "kind": str, "question_index": int, "slot": int,
         "response": str, "review_source": str, "domain": str, "time_spent_ms": int,
         "left_source": str, "right_source": str, "sources": str, "item_ids": str, "matched": int,
         "detail": str, "created_at": str},
        pk="id", not_null=["session_id", "task", "question_index", "response", "created_at"],
        foreign_keys=[("session_id", "sessions", "session_id")], if_not_exists=True,
    )
    db["evaluations"].create_index(["session_id", "task", "question_index"], unique=True,
                                   if_not_exists=True, index_name="evaluations_answer_once")
    db["evaluations"].create_index(["task"], if_not_exists=True, index_name="evaluations_task")
    db["ratings"].create(
        {"id": int, "session_id": str, "task": str, "question_index": int, "item_id": str,
         "metric": str, "score": int, "comment": str, "time_spent_ms": int, "created_at": str},
        pk="id", not_null=["session_id", "task", "question_index", "item_id", "metric", "created_at"],
        foreign_keys=[("session_id", "sessions", "session_id")], if_not_exists=True,
    )
    db["ratings"].create_index(["session_id", "task", "question_index", "metric"], unique=True,
                               if_not_exists=True, index_name="ratings_score_once")
    db["task_status"].create(
        {"session_id": str, "task": str, "finished_at": str}, pk=("session_id", "task"),
        not_null=["finished_at"], foreign_keys=[("session_id", "sessions", "session_id")],
        if_not_exists=True,
    )
    db["sessions"].create_index(["external_id"], if_not_exists=True, index_name="sessions_external_id")
    db["settings"].create({"key": str, "value": str, "updated_at": str}, pk="key", if_not_exists=True)
    db["admin_log"].create({"id": int, "at": str, "actor": str, "action": str, "detail": str},
                           pk="id", if_not_exists=True)


class SQLiteStore(Store):
    """The store in one SQLite file."""

    def __init__(self, path: str | Path, *, synchronous: str = "FULL", busy_timeout_ms: int = 30_000,
                 writable: bool = True) -> None:
        """Open (and on first use create) the database at ``path``.

        A database that cannot be opened (a folder, not SQLite, read-only, a newer schema) raises
        :class:`StoreError` naming the file and the problem. With ``writable`` (the default, as the survey
        needs) opening also proves that a write can be committed, so a read-only file fails here, at set-up,
        not at an evaluator's first click; ``writable=False`` is for reading (reports, exports).

        ``synchronous="FULL"`` (default) makes each commit durable against power
        loss as well as crashes; ``"NORMAL"`` survives a crash of the process but
        may lose the last commits on power loss, and is faster.
        """
        if synchronous.upper() not in ("FULL", "NORMAL", "EXTRA"):
            raise ValueError("synchronous must be FULL, NORMAL or EXTRA")
        self.path = Path(path)
        self.where = str(self.path)
        self._synchronous = synchronous.upper()
        self._busy = int(busy_timeout_ms)
        self._pool: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._writable = writable
        try:
            if self.path.is_dir():
                raise open_problem(self.path)
            if not writable:
                if not self.path.is_file():
                    raise StoreError(f"cannot open the database {self.path}: it does not exist")
                with self._conn() as conn:
                    names, version = _schema_of(conn)
                check_schema(str(self.path), names, version, empty_ok=False)
            else:
                if str(self.path) != ":memory:":
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                with self._write() as conn:
                    create_v1_tables(conn)
                    self._migrate(conn)
        except StoreError:
            self.close()
            raise
        except (sqlite3.Error, OSError) as exc:  # not SQLite, read-only, a folder in the way...: say which and why
            self.close()
            raise open_problem(self.path, exc) from None

    # ------------------------------------------------------------------ connections

    def _connect(self) -> sqlite3.Connection:
        if self._writable:
            conn = sqlite3.connect(str(self.path), timeout=self._busy / 1000, isolation_level=None,
                                   check_same_thread=False)
        else:  # reading only (reports, exports): SQLite refuses every write, nothing is created
            conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=self._busy / 1000,
                                   isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {self._busy}")
        if self._writable:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA synchronous = {self._synchronous}")
        conn.execute("PRAGMA foreign_keys = ON")
        with self._lock:
            self._all.append(conn)
        return conn

    @contextlib.contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        if self._closed:
            raise StoreError("the store is closed")
        try:
            conn = self._pool.get_nowait()
        except queue.Empty:
            conn = self._connect()
        try:
            yield conn
        finally:
            if conn.in_transaction:  # an exception left a transaction open: roll it back
                conn.rollback()
            self._pool.put(conn)

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction taken with BEGIN IMMEDIATE (no lock upgrade deadlocks)."""
        with self._conn() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.rollback()
                raise
            conn.commit()

    @contextlib.contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._conn() as conn:
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                conn.rollback()

    def _exec(self, conn: sqlite3.Connection, sql: str, args: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        return conn.execute(sql, args)

    def _exec_many(self, conn: sqlite3.Connection, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        conn.executemany(sql, rows)

    def _is_foreign_key_error(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.IntegrityError) and "FOREIGN KEY" in str(exc)

    @property
    def _driver_errors(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.Error,)

    def close(self) -> None:
        """Close every pooled connection (the store cannot be used afterwards)."""
        self._closed = True
        with self._lock:
            for conn in self._all:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._all.clear()

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` result (``"ok"`` when healthy)."""
        with self._conn() as conn:
            return conn.execute("PRAGMA integrity_check").fetchone()[0]

    # ------------------------------------------------------------------ columnar reads

    def read_tables(self, requests: Mapping[str, tuple[str, Sequence[ColumnSpec]]], *, threads: int = 2,
                    min_rows_per_part: int = 100_000) -> dict[str, pa.Table]:
        """Columns of several tables as Arrow tables (see :meth:`Store.read_tables`).

        The rows go from SQLite straight into Arrow arrays through ADBC's SQLite
        driver, with no Python object per cell (1M rows x 15 columns: about 3 s
        through :mod:`sqlite3`, about 1.3 s this way, the child process's start
        included). The driver runs in a child process (:mod:`evalkit.store.sqlite_reader`
        says why) on ``threads`` threads, a large table split into rowid ranges;
        the ranges stop at the largest rowid seen when the read starts, so rows
        added meanwhile wait for the next read. Row order is rowid order.
        """
        import pyarrow as pa  # imported here: only the analysis reads Arrow
        import pyarrow.ipc  # pa.ipc

        reads, names = [], []
        with tempfile.TemporaryDirectory(prefix="evalkit-read-") as tmp:
            for k, (name, (table, columns)) in enumerate(requests.items()):
                queries = self._range_queries(table, columns, threads, min_rows_per_part)
                reads.append({"queries": queries, "output": str(Path(tmp) / f"{k}.arrow"),
                              "dictionary": [c for c, _, kind in columns if kind == "category"]})
                names.append(name)
            job = {"database": str(self.path), "busy_timeout_ms": self._busy, "threads": threads, "reads": reads}
            problem = _run_reader(job)
            if problem:
                raise StoreError(f"reading {', '.join(names)} from {self.path} failed: {problem}")
            # memory-mapped: no copy; the mapping outlives the file's name, removed with the folder
            return {name: pa.ipc.open_file(pa.memory_map(spec["output"])).read_all()
                    for name, spec in zip(names, reads, strict=True)}

    def _range_queries(self, table: str, columns: Sequence[ColumnSpec], threads: int,
                       min_rows_per_part: int) -> list[str]:
        check_columns(table, columns)
        with self._conn() as conn:
            low, high = conn.execute(ROWID_RANGE.format(table=table)).fetchone()
        select = cast_select(columns, high, _json_sql, _SQL_TYPES)  # (rowid is id in the tables that have one)
        # The driver infers each column's Arrow type from the first rows it sees and fails on a later value of
        # another type (a text column NULL for its first rows is taken to be int64). The casts make every
        # column one type, and a first row of literals of those types (marked _first = 1) fixes the inference.
        first = ", ".join(f"{_LITERALS[kind]} AS {name}" for name, _, kind in columns)
        return [f"SELECT 1 AS _first, {first} UNION ALL SELECT 0, {select} FROM {table}"
                f" WHERE rowid > {lo} AND rowid <= {hi}" for lo, hi in id_ranges(low, high, threads, min_rows_per_part)]

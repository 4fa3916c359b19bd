"""The response store: SQLite through sqlite-utils, WAL mode, idempotent writes.

Every answer is committed the moment it is given, in its own transaction, and
exactly once: ``UNIQUE(session_id, task, question_index)`` plus ``INSERT OR
IGNORE`` make a repeated write (double-click, rerun, second tab) return the
row already stored; a *different* answer to an answered question is refused
with :class:`AnswerConflict`, never overwritten.

Connections come from a small pool (one connection per concurrent caller,
reused), so the same :class:`Store` can be shared by every Streamlit script
thread of a process. Several processes may open the same file: SQLite's
locking and ``busy_timeout`` serialise their writes.

``Store`` is the interface the app and the analysis use; a server-backed
implementation (e.g. PostgreSQL) would provide the same methods.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import re
import secrets
import sqlite3
import subprocess
import sys
import tempfile
import threading
import urllib.parse
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlite_utils

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "SESSION_STATUSES",
    "SURVEY_STATES",
    "Answer",
    "AnswerConflict",
    "ParticipantHasSession",
    "Progress",
    "Rating",
    "Session",
    "Store",
    "StoreError",
    "UnknownSession",
    "check_database",
    "is_valid_token",
    "mask_url",
    "new_completion_code",
    "resolve_database",
]

SCHEMA_VERSION = 1
TABLES = ("sessions", "evaluations", "ratings", "task_status", "settings", "admin_log")
#: Column types :meth:`Store.read_columns` can return (SQLite type name, a value that fixes the Arrow type).
_COLUMN_TYPES = {"text": ("TEXT", "''"), "category": ("TEXT", "''"), "int": ("INTEGER", "0"),
                 "real": ("REAL", "0.0")}
_COLUMN_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
SESSION_STATUSES = ("active", "completed", "excluded", "trashed")
SURVEY_STATES = ("open", "paused", "ended")
_TOKEN = re.compile(r"^[0-9a-f]{32}$")
_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: codes are typed by hand


class StoreError(Exception):
    """A storage operation was refused; the message says why."""


class AnswerConflict(StoreError):
    """A different answer to an already answered question."""


class UnknownSession(StoreError):
    """No session has this token."""


class ParticipantHasSession(StoreError):
    """This participant (external id) already has a session; it is in ``session``."""

    def __init__(self, session: Session) -> None:
        super().__init__(f"participant {session.external_id!r} already has a session")
        self.session = session


def now_iso() -> str:
    """UTC timestamp with milliseconds, ISO 8601 (sorts as text)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def is_valid_token(token: object) -> bool:
    """True for a well-formed session token (32 lowercase hex characters, a uuid4 hex)."""
    return isinstance(token, str) and bool(_TOKEN.match(token))


def new_completion_code(length: int = 10) -> str:
    """An unguessable completion code (about 5 bits per character), easy to type."""
    return "".join(secrets.choice(_CODE_ALPHABET) for _ in range(length))


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
SQLITE_URL_PREFIX = "sqlite:///"


def mask_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages and logs)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "<a database URL that cannot be parsed>"
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def resolve_database(value: str | Path, base: Path | None = None) -> Path:
    """The SQLite file named by a config value: a path (relative to ``base``) or ``sqlite:///path``.

    ``sqlite:///data/x.sqlite`` is relative, ``sqlite:////srv/x.sqlite`` absolute (SQLAlchemy's
    convention). Any other URL (``postgresql://...``) raises :class:`StoreError`: this version stores
    answers in SQLite only, and a URL must never silently become a file name. Passwords are masked.
    """
    text = str(value).strip()
    if isinstance(value, str) and _URL.match(text):
        if not text.startswith(SQLITE_URL_PREFIX):
            scheme = text.split("://", 1)[0]
            raise StoreError(f"database {mask_url(text)!r}: {scheme!r} databases are not supported yet; "
                             "evalkit stores answers in SQLite: give a file path or sqlite:///path")
        text = text[len(SQLITE_URL_PREFIX):]
    if not text:
        raise StoreError("database: the path is empty")
    path = Path(text)
    if not path.is_absolute() and base is not None:
        path = base / path
    return path


def _open_problem(path: Path, exc: BaseException | None = None) -> StoreError:
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


def check_database(path: str | Path) -> str:
    """Check, without changing anything, that the app could open ``path``; returns a one-line status.

    Raises :class:`StoreError` with the same message the app shows when it cannot open the database: a
    folder, a file that is not SQLite, a read-only file or folder, or a schema newer than this evalkit.
    """
    path = Path(path)
    if not path.exists():
        if path.is_symlink() or not os.access(_existing_parent(path), os.W_OK):
            raise _open_problem(path)
        return "does not exist yet; it will be created on first use"
    if path.is_dir() or not os.access(path, os.R_OK) or not os.access(path, os.W_OK):
        raise _open_problem(path)
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            names, version = _schema_of(conn)
            sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0] if "sessions" in names else 0
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise _open_problem(path, exc) from None
    _refuse_schema(path, names, version, empty_ok=True)
    return f"ok, {sessions} session(s) stored" if names else "ok, empty"


def _schema_of(conn: sqlite3.Connection) -> tuple[set[str], int | None]:
    """The tables of a database and its evalkit schema version (None when it has none)."""
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    version = None
    if "settings" in names:
        row = conn.execute("SELECT value FROM settings WHERE key = 'schema_version'").fetchone()
        version = int(row[0]) if row else None
    return names, version


def _refuse_schema(path: Path, names: set[str], version: int | None, *, empty_ok: bool) -> None:
    """StoreError when the tables are not an evalkit database this version can use."""
    if version is not None and version > SCHEMA_VERSION:
        raise StoreError(f"cannot open the database {path}: its schema version {version} is newer than this "
                         f"evalkit ({SCHEMA_VERSION}); upgrade evalkit")
    if not names and empty_ok:
        return
    if "sessions" not in names:
        what = f"tables: {', '.join(sorted(names)[:5])}" if names else "it has no tables"
        raise StoreError(f"cannot open the database {path}: it is not an evalkit database ({what})")


@dataclass(frozen=True)
class Session:
    """One evaluator's session (row of ``sessions``)."""

    session_id: str
    evaluator_name: str
    external_id: str
    seed: int
    study_version: str
    started_at: str
    completed_at: str | None
    user_agent: str
    status: str
    completion_code: str | None
    meta: dict[str, Any]

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Session:
        return cls(
            session_id=row["session_id"], evaluator_name=row["evaluator_name"] or "",
            external_id=row["external_id"] or "", seed=int(row["seed"]), study_version=row["study_version"],
            started_at=row["started_at"], completed_at=row["completed_at"], user_agent=row["user_agent"] or "",
            status=row["status"], completion_code=row["completion_code"],
            meta=json.loads(row["meta"]) if row["meta"] else {},
        )


@dataclass(frozen=True)
class Answer:
    """One stored answer (row of ``evaluations``). ``created`` is False when it was already stored."""

    id: int
    session_id: str
    task: str
    kind: str
    question_index: int
    slot: int | None
    response: str
    review_source: str | None
    domain: str | None
    time_spent_ms: int | None
    left_source: str | None
    right_source: str | None
    sources: tuple[str, ...]
    item_ids: tuple[str, ...]
    matched: bool | None
    detail: dict[str, Any]
    created_at: str
    created: bool = True

    @classmethod
    def from_row(cls, row: Mapping[str, Any], created: bool = True) -> Answer:
        return cls(
            id=row["id"], session_id=row["session_id"], task=row["task"], kind=row["kind"] or "",
            question_index=row["question_index"], slot=row["slot"], response=row["response"],
            review_source=row["review_source"], domain=row["domain"], time_spent_ms=row["time_spent_ms"],
            left_source=row["left_source"], right_source=row["right_source"],
            sources=tuple(json.loads(row["sources"] or "[]")), item_ids=tuple(json.loads(row["item_ids"] or "[]")),
            matched=None if row["matched"] is None else bool(row["matched"]),
            detail=json.loads(row["detail"]) if row["detail"] else {}, created_at=row["created_at"], created=created,
        )


@dataclass(frozen=True)
class Rating:
    """One stored rubric score (row of ``ratings``); ``score`` is None for a free-text-only row."""

    id: int
    session_id: str
    task: str
    question_index: int
    item_id: str
    metric: str
    score: int | None
    comment: str
    time_spent_ms: int | None
    created_at: str


@dataclass(frozen=True)
class Progress:
    """Where a session stands: answered question indexes, rated items and finished blocks, per task."""

    answered: dict[str, set[int]]
    rated: dict[str, dict[int, str]]
    finished: set[str]


class Store:
    """SQLite-backed storage of sessions, answers, ratings, settings and the admin log."""

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
        self._synchronous = synchronous.upper()
        self._busy = int(busy_timeout_ms)
        self._pool: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._writable = writable
        try:
            if self.path.is_dir():
                raise _open_problem(self.path)
            if not writable:
                if not self.path.is_file():
                    raise StoreError(f"cannot open the database {self.path}: it does not exist")
                self._check_read_only_schema()
            else:
                if str(self.path) != ":memory:":
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                self._init_schema()
        except StoreError:
            self.close()
            raise
        except (sqlite3.Error, OSError) as exc:  # not SQLite, read-only, a folder in the way...: say which and why
            self.close()
            raise _open_problem(self.path, exc) from None

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

    def close(self) -> None:
        """Close every pooled connection (the store cannot be used afterwards)."""
        self._closed = True
        with self._lock:
            for conn in self._all:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
            self._all.clear()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ schema

    def _check_read_only_schema(self) -> None:
        """For a read-only store: the file must be an evalkit database this version can read."""
        with self._conn() as conn:
            names, version = _schema_of(conn)
        _refuse_schema(self.path, names, version, empty_ok=False)

    def _init_schema(self) -> None:
        with self._conn() as conn:
            db = sqlite_utils.Database(conn, execute_plugins=False)
            conn.execute("BEGIN IMMEDIATE")
            try:
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
                row = conn.execute("SELECT value FROM settings WHERE key = 'schema_version'").fetchone()
                if row is None:
                    conn.execute("INSERT INTO settings (key, value, updated_at) VALUES ('schema_version', ?, ?)",
                                 (str(SCHEMA_VERSION), now_iso()))
                elif int(row["value"]) > SCHEMA_VERSION:
                    raise StoreError(
                        f"cannot open the database {self.path}: its schema version {row['value']} is newer than "
                        f"this evalkit ({SCHEMA_VERSION}); upgrade evalkit"
                    )
                # prove that a commit works now (a read-only file would otherwise fail only at the first answer)
                conn.execute("INSERT INTO settings (key, value, updated_at) VALUES ('opened_at', ?, ?) "
                             "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = "
                             "excluded.updated_at", (now_iso(), now_iso()))
                conn.commit()
            except BaseException:
                conn.rollback()
                raise

    # ------------------------------------------------------------------ sessions

    def create_session(self, *, study_version: str, evaluator_name: str = "", external_id: str = "",
                       seed: int | None = None, user_agent: str = "", meta: Mapping[str, Any] | None = None,
                       one_per_participant: bool = False) -> Session:
        """Create a session with a fresh uuid4 hex token and (unless given) a random 32-bit seed.

        With ``one_per_participant`` and an ``external_id``, looking for that participant's session and
        creating the new one happen in one write transaction, so two tabs clicking "start" at the same
        moment cannot create two: the second gets :class:`ParticipantHasSession` with the first session.
        """
        if seed is None:
            seed = secrets.randbits(32)
        if not 0 <= int(seed) <= 0xFFFFFFFF:
            raise ValueError("seed must be in 0..2**32-1")
        row = {
            "session_id": uuid.uuid4().hex, "evaluator_name": evaluator_name.strip(),
            "external_id": external_id.strip(), "seed": int(seed), "study_version": study_version,
            "started_at": now_iso(), "completed_at": None, "user_agent": user_agent[:500], "status": "active",
            "completion_code": None, "meta": json.dumps(dict(meta or {}), sort_keys=True),
        }
        with self._write() as conn:
            if one_per_participant and row["external_id"]:
                earlier = self._find(conn, row["external_id"])
                if earlier is not None:
                    raise ParticipantHasSession(earlier)
            conn.execute(
                "INSERT INTO sessions (session_id, evaluator_name, external_id, seed, study_version, started_at,"
                " completed_at, user_agent, status, completion_code, meta) VALUES (:session_id, :evaluator_name,"
                " :external_id, :seed, :study_version, :started_at, :completed_at, :user_agent, :status,"
                " :completion_code, :meta)", row)
        return Session.from_row(row)

    def get_session(self, session_id: object) -> Session | None:
        """The session with this token, or None (also for a malformed token)."""
        if not is_valid_token(session_id):
            return None
        with self._conn() as conn:
            row = conn.execute("SELECT * FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
        return Session.from_row(row) if row else None

    def _require(self, conn: sqlite3.Connection, session_id: str) -> sqlite3.Row:
        row = conn.execute("SELECT * FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
        if row is None:
            raise UnknownSession(f"no session with token {session_id!r}")
        return row

    def complete_session(self, session_id: str) -> Session:
        """Mark a session completed and give it a completion code; idempotent (same code every time)."""
        with self._write() as conn:
            row = self._require(conn, session_id)
            if row["completed_at"] is None:
                status = "completed" if row["status"] == "active" else row["status"]
                conn.execute(
                    "UPDATE sessions SET completed_at = ?, completion_code = ?, status = ? WHERE session_id = ?",
                    (now_iso(), row["completion_code"] or new_completion_code(), status, session_id))
            row = self._require(conn, session_id)
        return Session.from_row(row)

    def set_session_status(self, session_id: str, status: str, *, actor: str = "system") -> Session:
        """Set a session's status (active / completed / excluded / trashed) and log who did it."""
        if status not in SESSION_STATUSES:
            raise ValueError(f"status must be one of {SESSION_STATUSES}, got {status!r}")
        with self._write() as conn:
            old = self._require(conn, session_id)
            conn.execute("UPDATE sessions SET status = ? WHERE session_id = ?", (status, session_id))
            self._log(conn, actor, "session_status", {"session_id": session_id, "from": old["status"], "to": status})
            row = self._require(conn, session_id)
        return Session.from_row(row)

    def find_session(self, external_id: str) -> Session | None:
        """The newest non-trashed session with this external id (e.g. a Prolific PID), or None."""
        if not external_id.strip():
            return None
        with self._conn() as conn:
            return self._find(conn, external_id.strip())

    @staticmethod
    def _find(conn: sqlite3.Connection, external_id: str) -> Session | None:
        row = conn.execute(
            "SELECT * FROM sessions WHERE external_id = ? AND status != 'trashed' ORDER BY rowid DESC LIMIT 1",
            (external_id,)).fetchone()
        return Session.from_row(row) if row else None

    def sessions(self, status: str | Sequence[str] | None = None) -> list[Session]:
        """Sessions, oldest first, optionally only those with the given status(es)."""
        sql, args = "SELECT * FROM sessions", []
        if status is not None:
            wanted = [status] if isinstance(status, str) else list(status)
            sql += f" WHERE status IN ({', '.join('?' * len(wanted))})"
            args = wanted
        with self._conn() as conn:
            rows = conn.execute(sql + " ORDER BY rowid", args).fetchall()
        return [Session.from_row(r) for r in rows]

    # ------------------------------------------------------------------ answers

    def record_answer(
        self,
        session_id: str,
        task: str,
        question_index: int,
        response: str,
        *,
        kind: str = "",
        slot: int | None = None,
        review_source: str | None = None,
        domain: str | None = None,
        time_spent_ms: int | None = None,
        left_source: str | None = None,
        right_source: str | None = None,
        sources: Sequence[str] = (),
        item_ids: Sequence[str] = (),
        matched: bool | None = None,
        detail: Mapping[str, Any] | None = None,
    ) -> Answer:
        """Store one answer, exactly once; returns the stored row.

        Writing the same (session, task, question_index) again returns the row
        already stored (``created=False``) when the response and detail are the
        same, and raises :class:`AnswerConflict` when they differ.
        """
        if not isinstance(question_index, int) or isinstance(question_index, bool) or question_index < 0:
            raise ValueError("question_index must be a non-negative int")
        if not isinstance(response, str) or not response:
            raise ValueError("response must be a non-empty string")
        detail_json = json.dumps(dict(detail or {}), sort_keys=True)
        row = {
            "session_id": session_id, "task": task, "kind": kind, "question_index": question_index, "slot": slot,
            "response": response, "review_source": review_source, "domain": domain,
            "time_spent_ms": None if time_spent_ms is None else int(time_spent_ms),
            "left_source": left_source, "right_source": right_source, "sources": json.dumps(list(sources)),
            "item_ids": json.dumps(list(item_ids)), "matched": None if matched is None else int(bool(matched)),
            "detail": detail_json, "created_at": now_iso(),
        }
        with self._conn() as conn:
            try:
                cur = conn.execute(
                    "INSERT OR IGNORE INTO evaluations (session_id, task, kind, question_index, slot, response,"
                    " review_source, domain, time_spent_ms, left_source, right_source, sources, item_ids, matched,"
                    " detail, created_at) VALUES (:session_id, :task, :kind, :question_index, :slot, :response,"
                    " :review_source, :domain, :time_spent_ms, :left_source, :right_source, :sources, :item_ids,"
                    " :matched, :detail, :created_at)", row)
            except sqlite3.IntegrityError as exc:  # foreign key: unknown session
                raise UnknownSession(f"no session with token {session_id!r}") from exc
            created = cur.rowcount == 1
            stored = conn.execute(
                "SELECT * FROM evaluations WHERE session_id = ? AND task = ? AND question_index = ?",
                (session_id, task, question_index)).fetchone()
        answer = Answer.from_row(stored, created=created)
        if not created and (stored["response"] != response or (stored["detail"] or "{}") != detail_json):
            raise AnswerConflict(
                f"question {question_index} of task {task!r} was already answered with {stored['response']!r}; "
                f"refusing to overwrite it with {response!r}"
            )
        return answer

    def answers(self, session_id: str | None = None, task: str | None = None) -> list[Answer]:
        """Stored answers in insertion order, optionally for one session and/or task."""
        return [Answer.from_row(r) for r in self._rows("evaluations", session_id, task)]

    def answered(self, session_id: str, task: str) -> set[int]:
        """Question indexes of ``task`` this session has answered (the source of truth for progress)."""
        with self._conn() as conn:
            rows = conn.execute("SELECT question_index FROM evaluations WHERE session_id = ? AND task = ?",
                                (session_id, task)).fetchall()
        return {r[0] for r in rows}

    # ------------------------------------------------------------------ ratings

    def record_rating(
        self,
        session_id: str,
        task: str,
        question_index: int,
        item_id: str,
        scores: Mapping[str, int],
        *,
        comments: Mapping[str, str] | None = None,
        comment: str = "",
        time_spent_ms: int | None = None,
        finish: bool = False,
    ) -> list[Rating]:
        """Store the rubric scores for one rated item (one row per metric), all or nothing, exactly once.

        ``comments`` holds optional per-metric comments; ``comment`` a general
        one, stored as a row with metric ``"comment"`` and no score. Repeating
        the identical call returns the stored rows; different scores or a
        different item for an already rated ``question_index`` raise
        :class:`AnswerConflict`. With ``finish`` the block is also marked
        finished (as :meth:`finish_task`) in the same transaction: a crash
        leaves either both or neither.
        """
        if not scores:
            raise ValueError("at least one score is needed")
        comments = dict(comments or {})
        wanted: dict[str, tuple[int | None, str]] = {}
        for metric, score in scores.items():
            if metric == "comment":
                raise ValueError("'comment' is reserved for the general comment")
            if isinstance(score, bool) or not isinstance(score, int):
                raise ValueError(f"score for {metric!r} must be an int, got {score!r}")
            wanted[metric] = (score, comments.get(metric, "").strip())
        if comment.strip():
            wanted["comment"] = (None, comment.strip())
        created_at = now_iso()
        with self._write() as conn:
            self._require(conn, session_id)
            existing = conn.execute(
                "SELECT * FROM ratings WHERE session_id = ? AND task = ? AND question_index = ? ORDER BY id",
                (session_id, task, question_index)).fetchall()
            if existing:
                have = {r["metric"]: (r["score"], r["comment"] or "") for r in existing}
                items = {r["item_id"] for r in existing}
                if have != wanted or items != {item_id}:
                    raise AnswerConflict(
                        f"rating {question_index} of task {task!r} is already stored (item {sorted(items)[0]!r}); "
                        "refusing to overwrite it"
                    )
                rows = existing
            else:
                conn.executemany(
                    "INSERT INTO ratings (session_id, task, question_index, item_id, metric, score, comment,"
                    " time_spent_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(session_id, task, question_index, item_id, m, s, c, time_spent_ms, created_at)
                     for m, (s, c) in wanted.items()])
                rows = conn.execute(
                    "SELECT * FROM ratings WHERE session_id = ? AND task = ? AND question_index = ? ORDER BY id",
                    (session_id, task, question_index)).fetchall()
            if finish:
                conn.execute("INSERT OR IGNORE INTO task_status (session_id, task, finished_at) VALUES (?, ?, ?)",
                             (session_id, task, created_at))
        return [Rating(**dict(r)) for r in rows]

    def ratings(self, session_id: str | None = None, task: str | None = None) -> list[Rating]:
        """Stored rubric rows in insertion order, optionally for one session and/or task."""
        return [Rating(**dict(r)) for r in self._rows("ratings", session_id, task)]

    def _rows(self, table: str, session_id: str | None, task: str | None) -> list[sqlite3.Row]:
        where = {"session_id": session_id, "task": task}
        where = {k: v for k, v in where.items() if v is not None}
        sql = f"SELECT * FROM {table}"
        if where:
            sql += " WHERE " + " AND ".join(f"{k} = ?" for k in where)
        with self._conn() as conn:
            return conn.execute(sql + " ORDER BY id", list(where.values())).fetchall()

    def rated_items(self, session_id: str, task: str) -> dict[int, str]:
        """question_index -> item_id of the items this session has rated in ``task``."""
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT DISTINCT question_index, item_id FROM ratings WHERE session_id = ? AND task = ?",
                (session_id, task)).fetchall()
        return {r[0]: r[1] for r in rows}

    # ------------------------------------------------------------------ progress

    def finish_task(self, session_id: str, task: str) -> None:
        """Record that the evaluator finished an open-ended block (e.g. chose "finish" after ratings)."""
        with self._conn() as conn:
            try:
                conn.execute("INSERT OR IGNORE INTO task_status (session_id, task, finished_at) VALUES (?, ?, ?)",
                             (session_id, task, now_iso()))
            except sqlite3.IntegrityError as exc:
                raise UnknownSession(f"no session with token {session_id!r}") from exc

    def snapshot(self, session_id: object) -> tuple[str, Session | None, Progress | None]:
        """Survey state, the session and its progress, in one read transaction (one per page run)."""
        with self._conn() as conn:
            conn.execute("BEGIN")
            try:
                row = conn.execute("SELECT value FROM settings WHERE key = 'survey_state'").fetchone()
                state = row[0] if row and row[0] in SURVEY_STATES else "open"
                session = None
                if is_valid_token(session_id):
                    found = conn.execute("SELECT * FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
                    session = Session.from_row(found) if found else None
                progress = self._progress(conn, session.session_id) if session else None
            finally:
                conn.rollback()
        return state, session, progress

    def progress(self, session_id: str) -> Progress:
        """Everything the flow needs to know where this session stands, read in one snapshot."""
        with self._conn() as conn:
            conn.execute("BEGIN")
            try:
                return self._progress(conn, session_id)
            finally:
                conn.rollback()

    @staticmethod
    def _progress(conn: sqlite3.Connection, session_id: str) -> Progress:
        answered: dict[str, set[int]] = {}
        for task, index in conn.execute(
                "SELECT task, question_index FROM evaluations WHERE session_id = ?", (session_id,)):
            answered.setdefault(task, set()).add(index)
        rated: dict[str, dict[int, str]] = {}
        for task, index, item in conn.execute(
                "SELECT DISTINCT task, question_index, item_id FROM ratings WHERE session_id = ?",
                (session_id,)):
            rated.setdefault(task, {})[index] = item
        finished = {r[0] for r in conn.execute("SELECT task FROM task_status WHERE session_id = ?",
                                               (session_id,))}
        return Progress(answered=answered, rated=rated, finished=finished)

    # ------------------------------------------------------------------ settings and admin log

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        """A setting's value, or ``default``."""
        with self._conn() as conn:
            row = conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def set_setting(self, key: str, value: str, *, actor: str = "system") -> None:
        """Set a setting and log the change."""
        with self._write() as conn:
            old = conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
            conn.execute(
                "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (key, value, now_iso()))
            self._log(conn, actor, "setting", {"key": key, "from": old[0] if old else None, "to": value})

    def survey_state(self) -> str:
        """``open`` (default), ``paused`` (no new evaluators) or ``ended`` (nobody)."""
        state = self.get_setting("survey_state", "open")
        return state if state in SURVEY_STATES else "open"

    def set_survey_state(self, state: str, *, actor: str = "system") -> None:
        """Open, pause or end the survey (takes effect on every page's next run)."""
        if state not in SURVEY_STATES:
            raise ValueError(f"survey state must be one of {SURVEY_STATES}, got {state!r}")
        self.set_setting("survey_state", state, actor=actor)

    @staticmethod
    def _log(conn: sqlite3.Connection, actor: str, action: str, detail: Mapping[str, Any]) -> None:
        conn.execute("INSERT INTO admin_log (at, actor, action, detail) VALUES (?, ?, ?, ?)",
                     (now_iso(), actor, action, json.dumps(dict(detail), sort_keys=True)))

    def log(self, actor: str, action: str, detail: Mapping[str, Any] | None = None) -> None:
        """Append to the admin log."""
        with self._write() as conn:
            self._log(conn, actor, action, detail or {})

    def admin_log(self) -> list[dict[str, Any]]:
        """The admin log, oldest first."""
        with self._conn() as conn:
            rows = conn.execute("SELECT * FROM admin_log ORDER BY id").fetchall()
        return [{**dict(r), "detail": json.loads(r["detail"] or "{}")} for r in rows]

    # ------------------------------------------------------------------ study descriptions and data version

    def register_study(self, version: str, summary: Mapping[str, Any]) -> None:
        """Keep a description of the study's tasks (per version), so the database describes itself."""
        value = json.dumps(dict(summary), sort_keys=True)
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE settings.value != excluded.value",
                (f"study:{version}", value, now_iso()))

    def studies(self) -> dict[str, dict[str, Any]]:
        """Registered study descriptions by version, oldest registration first."""
        with self._conn() as conn:
            rows = conn.execute("SELECT key, value FROM settings WHERE key LIKE 'study:%' ORDER BY updated_at, key"
                                ).fetchall()
        return {r[0][len("study:"):]: json.loads(r[1]) for r in rows}

    def data_version(self) -> tuple[int, ...]:
        """Changes whenever an answer, rating, session, completion or admin action is written.

        Cheap (primary-key maxima and one count over the small sessions table), so
        a live page can poll it and recompute only when it changes.
        """
        with self._conn() as conn:
            row = conn.execute(
                "SELECT (SELECT coalesce(max(id), 0) FROM evaluations), (SELECT coalesce(max(id), 0) FROM ratings),"
                " (SELECT coalesce(max(rowid), 0) FROM sessions), (SELECT count(*) FROM sessions),"
                " (SELECT count(*) FROM sessions WHERE completed_at IS NOT NULL),"
                " (SELECT coalesce(max(id), 0) FROM admin_log), (SELECT count(*) FROM task_status)").fetchone()
        return tuple(int(v) for v in row)

    def delete_session(self, session_id: str, *, actor: str) -> dict[str, int]:
        """Delete a session and everything it wrote, permanently; logged. Returns the rows deleted."""
        with self._write() as conn:
            self._require(conn, session_id)
            counts = {}
            for table in ("evaluations", "ratings", "task_status", "sessions"):
                cur = conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
                counts[table] = cur.rowcount
            self._log(conn, actor, "delete_session", {"session_id": session_id, **counts})
        return counts

    # ------------------------------------------------------------------ whole tables

    def table(self, name: str) -> list[dict[str, Any]]:
        """Every row of one table as dicts (for export)."""
        if name not in TABLES:
            raise ValueError(f"unknown table {name!r}")
        with self._conn() as conn:
            db = sqlite_utils.Database(conn, execute_plugins=False)
            return list(db[name].rows_where(order_by="rowid"))

    def read_columns(self, table: str, columns: Sequence[tuple[str, str, str]], *, threads: int = 2,
                     min_rows_per_part: int = 100_000) -> pa.Table:
        """Some columns of one table as an Arrow table (see :meth:`read_tables`)."""
        return self.read_tables({table: (table, columns)}, threads=threads,
                                min_rows_per_part=min_rows_per_part)[table]

    def read_tables(self, requests: Mapping[str, tuple[str, Sequence[tuple[str, str, str]]]], *, threads: int = 2,
                    min_rows_per_part: int = 100_000) -> dict[str, pa.Table]:
        """Columns of several tables as Arrow tables, for the analysis of large studies.

        ``requests`` maps a name to ``(table, columns)``; ``columns`` are
        ``(name, SQL expression, type)`` with type ``int``, ``real``, ``text`` or
        ``category`` (text, dictionary-encoded: integer codes plus the distinct
        values). Every value is cast to its type (NULL stays NULL).

        The rows go from SQLite straight into Arrow arrays through ADBC's SQLite
        driver, with no Python object per cell (1M rows x 15 columns: about 3 s
        through :mod:`sqlite3`, about 1.3 s this way, the child process's start
        included). The driver runs in a child
        process (:mod:`evalkit.arrow_reader` says why) on ``threads`` threads, a
        large table split into rowid ranges; the ranges stop at the largest rowid
        seen when the read starts, so rows added meanwhile wait for the next
        read. Row order is SQLite's scan order (rowid order); callers that need
        an order sort by a column.
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
            reader = Path(__file__).with_name("arrow_reader.py")
            done = subprocess.run([sys.executable, "-I", str(reader)], input=json.dumps(job), capture_output=True,
                                  text=True, check=False)
            if done.returncode != 0:
                raise StoreError(f"reading {', '.join(names)} from {self.path} failed: "
                                 f"{done.stderr.strip() or f'exit status {done.returncode}'}")
            # memory-mapped: no copy; the mapping outlives the file's name, removed with the folder
            return {name: pa.ipc.open_file(pa.memory_map(spec["output"])).read_all()
                    for name, spec in zip(names, reads, strict=True)}

    def _range_queries(self, table: str, columns: Sequence[tuple[str, str, str]], threads: int,
                       min_rows_per_part: int) -> list[str]:
        if table not in TABLES:
            raise ValueError(f"unknown table {table!r}")
        for name, _, kind in columns:
            if kind not in _COLUMN_TYPES or not _COLUMN_NAME.match(name):
                raise ValueError(f"bad column spec {name!r} ({kind!r})")
        with self._conn() as conn:
            low, high = conn.execute(f"SELECT coalesce(min(rowid), 1) - 1, coalesce(max(rowid), 0) FROM {table}"
                                     ).fetchone()
        select = ", ".join(f"CAST({expr} AS {_COLUMN_TYPES[kind][0]}) AS {name}" for name, expr, kind in columns)
        # The driver infers each column's Arrow type from the first rows it sees and fails on a later value of
        # another type (a text column NULL for its first rows is taken to be int64). The casts make every
        # column one type, and a first row of literals of those types (marked _first = 1) fixes the inference.
        first = ", ".join(f"{_COLUMN_TYPES[kind][1]} AS {name}" for name, _, kind in columns)
        parts = max(1, min(threads, (high - low) // max(1, min_rows_per_part)))
        edges = [low + (high - low) * k // parts for k in range(parts + 1)]
        return [f"SELECT 1 AS _first, {first} UNION ALL SELECT 0, {select} FROM {table}"
                f" WHERE rowid > {lo} AND rowid <= {hi}" for lo, hi in itertools.pairwise(edges)]

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` result (``"ok"`` when healthy)."""
        with self._conn() as conn:
            return conn.execute("PRAGMA integrity_check").fetchone()[0]

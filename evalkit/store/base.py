"""The storage interface, written once: records, errors, and every rule of what is stored.

:class:`Store` holds the whole behaviour of the response store in SQL that
SQLite and PostgreSQL both run (``?`` placeholders, ``INSERT ... ON CONFLICT
DO NOTHING RETURNING``, ``ON CONFLICT (key) DO UPDATE``). A backend supplies
only what differs: how connections are made and pooled, how a write
transaction starts, the schema's DDL, the errors its driver raises, and the
columnar reader. So the exactly-once and conflict rules cannot drift apart
between backends: there is one copy of them.

Exactly once: ``UNIQUE(session_id, task, question_index)`` on answers and
``UNIQUE(session_id, task, question_index, metric)`` on ratings. Writing the
same answer again returns the stored row (``created=False``); a *different*
answer to an answered question raises :class:`AnswerConflict` and is never
overwritten. Multi-row writes (a rating with all its metrics, finishing a
block, deleting a session) are one transaction.
"""

from __future__ import annotations

import abc
import contextlib
import dataclasses
import functools
import hashlib
import json
import math
import re
import secrets
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import pyarrow as pa

#: The schema version this evalkit writes; :data:`MIGRATIONS` bring an older database up to it.
SCHEMA_VERSION = 8
#: Forward migrations in SQL both backends run: version -> statements that turn version-1 into it.
#: A new database is created at version 1 and migrated like any other, so every migration runs in every test.
MIGRATIONS: dict[int, tuple[str, ...]] = {
    # sessions are listed in start order on every backend (SQLite's rowid order does not exist elsewhere)
    2: ("CREATE INDEX IF NOT EXISTS sessions_started ON sessions (started_at, session_id)",),
    # background forms (kind "form"): one row per (session, form task, field); value NULL = optional, left empty
    3: ("""CREATE TABLE IF NOT EXISTS form_answers (
        session_id TEXT NOT NULL REFERENCES sessions (session_id), task TEXT NOT NULL, field TEXT NOT NULL,
        value TEXT, time_spent_ms BIGINT, created_at TEXT NOT NULL, PRIMARY KEY (session_id, task, field))""",),
    # invited (predefined) participants: ``python -m evalkit invite``; only a hash of each private link's key
    4: ("CREATE TABLE IF NOT EXISTS participants (participant_id TEXT PRIMARY KEY, key_hash TEXT NOT NULL, "
        "note TEXT DEFAULT '', created_at TEXT NOT NULL)",),
    # tutorials and attention checks: which check an answer was and whether its first try was right (``check``
    # is an SQL keyword, so the column is ``check_type``; the export calls it ``check``), and every try at a
    # check question
    5: ("ALTER TABLE evaluations ADD COLUMN check_type TEXT",
        "ALTER TABLE evaluations ADD COLUMN check_passed INTEGER",
        """CREATE TABLE IF NOT EXISTS check_tries (
        session_id TEXT NOT NULL REFERENCES sessions (session_id), task TEXT NOT NULL,
        question_index INTEGER NOT NULL, attempt INTEGER NOT NULL, response TEXT NOT NULL,
        correct INTEGER NOT NULL, detail TEXT, time_spent_ms BIGINT, created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, task, question_index, attempt))"""),
    # the k-judgments-per-item queue (``judgments_per_item``): a task's units, each with its count of claims
    # that are live or answered (``taken``), and every claim ever made (an expired one kept, for the record);
    # ``answered`` is set by the expiry sweep when it finds a claim answered (the answer itself is in
    # ``evaluations``), which takes the claim out of the sweep's partial index for good
    6: ("""CREATE TABLE IF NOT EXISTS queue_units (
        task TEXT NOT NULL, unit TEXT NOT NULL, position BIGINT NOT NULL, taken INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (task, unit))""",
        "CREATE INDEX IF NOT EXISTS queue_units_pick ON queue_units (task, taken, position)",
        """CREATE TABLE IF NOT EXISTS claims (
        session_id TEXT NOT NULL REFERENCES sessions (session_id), task TEXT NOT NULL, unit TEXT NOT NULL,
        question_index INTEGER NOT NULL, claimed_at DOUBLE PRECISION NOT NULL, expired_at DOUBLE PRECISION,
        answered INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (session_id, task, unit))""",
        "CREATE UNIQUE INDEX IF NOT EXISTS claims_question ON claims (session_id, task, question_index)",
        "CREATE INDEX IF NOT EXISTS claims_sweep ON claims (task, claimed_at) WHERE expired_at IS NULL "
        "AND answered = 0"),
    # the answers to check questions, for :meth:`Store.check_answers` (the analysis): a partial index holds only
    # them, so finding them is a lookup instead of a scan of every answer (0.15 s per million answers)
    7: ("CREATE INDEX IF NOT EXISTS evaluations_checks ON evaluations (id) WHERE check_type IS NOT NULL",),
    # a unit's claims (retiring a unit, taking a retired one back): a lookup instead of a scan of every claim
    8: ("CREATE INDEX IF NOT EXISTS claims_unit ON claims (task, unit)",),
}
TABLES = ("sessions", "evaluations", "ratings", "task_status", "settings", "admin_log", "form_answers",
          "participants", "check_tries", "queue_units", "claims")
#: The order rows are listed and exported in, the same on every backend.
TABLE_ORDER = {"sessions": "started_at, session_id", "evaluations": "id", "ratings": "id",
               "task_status": "finished_at, session_id, task", "settings": "key", "admin_log": "id",
               "form_answers": "created_at, session_id, task, field", "participants": "created_at, participant_id",
               "check_tries": "created_at, session_id, task, question_index, attempt",
               "queue_units": "task, position, unit", "claims": "claimed_at, session_id, task, unit"}
#: Every table's columns, in order (the same on every backend: a researcher's SQL and the exports do not change).
COLUMNS = {
    "sessions": ("session_id", "evaluator_name", "external_id", "seed", "study_version", "started_at",
                 "completed_at", "user_agent", "status", "completion_code", "meta"),
    "evaluations": ("id", "session_id", "task", "kind", "question_index", "slot", "response", "review_source",
                    "domain", "time_spent_ms", "left_source", "right_source", "sources", "item_ids", "matched",
                    "detail", "created_at", "check_type", "check_passed"),
    "ratings": ("id", "session_id", "task", "question_index", "item_id", "metric", "score", "comment",
                "time_spent_ms", "created_at"),
    "task_status": ("session_id", "task", "finished_at"),
    "settings": ("key", "value", "updated_at"),
    "admin_log": ("id", "at", "actor", "action", "detail"),
    "form_answers": ("session_id", "task", "field", "value", "time_spent_ms", "created_at"),
    "participants": ("participant_id", "key_hash", "note", "created_at"),
    "check_tries": ("session_id", "task", "question_index", "attempt", "response", "correct", "detail",
                    "time_spent_ms", "created_at"),
    "queue_units": ("task", "unit", "position", "taken"),
    "claims": ("session_id", "task", "unit", "question_index", "claimed_at", "expired_at", "answered"),
}
#: Tables whose rows belong to one session (deleted with it), children first.
SESSION_TABLES = ("evaluations", "ratings", "task_status", "form_answers", "check_tries", "claims")
#: Settings a fresh database already has; a database holding only these counts as empty (``evalkit copy``).
HOUSEKEEPING_SETTINGS = ("schema_version", "opened_at")
#: ``abandoned``: nothing was recorded for a long time after the session started (:meth:`Store.abandon_idle`)
SESSION_STATUSES = ("active", "completed", "excluded", "trashed", "abandoned")
#: the tables whose rows mean "something was recorded for this session" (an answer, a rating, a form's answers, a
#: try of a check, a finished block); a session with none of them can be abandoned
RECORDED = ("evaluations", "ratings", "form_answers", "check_tries", "task_status")
#: ``queue_units.taken`` of a retired unit (:meth:`Store.retire_queue_unit`): never below any k, never counted
RETIRED = 1 << 30
SURVEY_STATES = ("open", "paused", "ended")
COLUMN_KINDS = ("int", "real", "text", "category")
_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
_TOKEN = re.compile(r"^[0-9a-f]{32}$")
_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: codes are typed by hand


class StoreError(Exception):
    """A storage operation was refused or failed; the message says why (passwords masked)."""


class AnswerConflict(StoreError):
    """A different answer to an already answered question."""


class UnknownSession(StoreError):
    """No session has this token."""


class Unavailable(StoreError):
    """The database could not be reached, or dropped the connection during a call. Trying again later is
    safe: every write is exactly once. ``retry`` says whether an immediate retry may help (a dropped
    connection: yes; a server that cannot be reached within the pool's timeout: no, it would only wait again).
    """

    def __init__(self, message: str, *, retry: bool = True) -> None:
        super().__init__(message)
        self.retry = retry


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


def mask_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages and logs)."""
    try:
        parts = urllib.parse.urlsplit(url)
        password = parts.password
    except ValueError:
        return "<a database URL that cannot be parsed>"
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    if any(k.lower() == "password" for k, _ in query):  # libpq also takes ?password=...
        masked = [(k, "***" if k.lower() == "password" else v) for k, v in query]
        parts = parts._replace(query=urllib.parse.urlencode(masked, safe="*"))
    if password is None:
        return urllib.parse.urlunsplit(parts)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def scrub(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` (a password) replaced by ``***``."""
    return text.replace(secret, "***") if secret else text


# ----------------------------------------------------------------------------- records


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
        """A session from a stored row (any mapping with the table's columns)."""
        return cls(
            session_id=row["session_id"], evaluator_name=row["evaluator_name"] or "",
            external_id=row["external_id"] or "", seed=int(row["seed"]), study_version=row["study_version"],
            started_at=row["started_at"], completed_at=row["completed_at"], user_agent=row["user_agent"] or "",
            status=row["status"], completion_code=row["completion_code"],
            meta=json.loads(row["meta"]) if row["meta"] else {},
        )


@dataclass(frozen=True)
class Participant:
    """An invited participant (row of ``participants``): the id, a hash of the private link's key, a note."""

    participant_id: str
    key_hash: str
    note: str
    created_at: str


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
    check: str | None = None  # "tutorial" or "attention" for a check question (column check_type)
    check_passed: bool | None = None  # a check question: was the first try right

    @classmethod
    def from_row(cls, row: Mapping[str, Any], created: bool = True) -> Answer:
        """An answer from a stored row."""
        return cls(
            id=row["id"], session_id=row["session_id"], task=row["task"], kind=row["kind"] or "",
            question_index=row["question_index"], slot=row["slot"], response=row["response"],
            review_source=row["review_source"], domain=row["domain"], time_spent_ms=row["time_spent_ms"],
            left_source=row["left_source"], right_source=row["right_source"],
            sources=tuple(json.loads(row["sources"] or "[]")), item_ids=tuple(json.loads(row["item_ids"] or "[]")),
            matched=None if row["matched"] is None else bool(row["matched"]),
            detail=json.loads(row["detail"]) if row["detail"] else {}, created_at=row["created_at"], created=created,
            check=row["check_type"], check_passed=None if row["check_passed"] is None else bool(row["check_passed"]),
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
class FormAnswer:
    """One stored field of a form (row of ``form_answers``); ``value`` None: an optional field left empty."""

    session_id: str
    task: str
    field: str
    value: str | None
    time_spent_ms: int | None
    created_at: str


@dataclass(frozen=True)
class Progress:
    """Where a session stands: answered question indexes, rated items and finished blocks, per task, and the
    units it holds in k-per-item queues (task -> question_index -> unit, claims that have not expired)."""

    answered: dict[str, set[int]]
    rated: dict[str, dict[int, str]]
    finished: set[str]
    claims: dict[str, dict[int, str]] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class QueueStatus:
    """Where a k-judgments-per-item queue stands (:meth:`Store.queue_status`).

    ``judged``: claims with a stored answer; ``live``: claims not expired and not answered yet;
    ``open_slots``: judgments still to hand out (``units * k - judged - live``, each unit counted up to
    ``k``, so never below 0); ``full``: no slot left; ``judgments``: how many units have 0, 1, ... answered
    judgments (every count from 0 to ``k`` is a key; a unit judged more than ``k`` times, which only an
    evaluator who came back after a claim expired can cause, adds its count as a key).
    """

    units: int
    judged: int
    live: int
    open_slots: int
    full: bool
    judgments: dict[int, int]


# ----------------------------------------------------------------------------- columnar read requests


@dataclass(frozen=True)
class JsonField:
    """The value of ``key`` in a JSON text column (NULL where the row has no such key)."""

    column: str
    key: str


@dataclass(frozen=True)
class Sampled:
    """A column's value on about ``samples`` rows evenly spaced by ``id`` and on the newest row; NULL elsewhere.

    (The results page's timeline draws a few hundred points: reading every timestamp of a million answers
    would cost more than the rest of the analysis.)
    """

    column: str
    samples: int


@dataclass(frozen=True)
class ForKinds:
    """A column's value on the rows whose ``kind`` is one of ``kinds``; NULL elsewhere.

    (The item ids of a question drawn from the review pools are its reviews' keys, nearly one distinct value
    per answer: read as a dictionary-encoded column they would cost more than they tell. The analysis needs
    the item ids of the kinds that show items from an items file only.)
    """

    column: str
    kinds: tuple[str, ...]


#: Where a read column comes from: a column name, a key of a JSON column, a sampled column, or a column
#: restricted to some kinds of answers.
Source = str | JsonField | Sampled | ForKinds
#: One column of a columnar read: (name in the result, source, kind); kind is int, real, text or category
#: (text, dictionary-encoded).
ColumnSpec = tuple[str, Source, str]


def sampled_sql(source: Sampled, newest: int) -> str:
    """SQL (both backends) for a :class:`Sampled` column of a table whose largest ``id`` is ``newest``."""
    step = max(1, newest // max(1, source.samples))
    return f"CASE WHEN id % {step} = 0 OR id >= {newest} THEN {source.column} END"


def source_sql(source: Source, newest: int, json_sql: Callable[[str, str], str]) -> str:
    """SQL for a column's source: a column name as it is, a :class:`Sampled` column by :func:`sampled_sql`,
    a :class:`JsonField` by the backend's ``json_sql(column, key)``."""
    if isinstance(source, JsonField):
        return json_sql(source.column, source.key)
    if isinstance(source, Sampled):
        return sampled_sql(source, newest)
    if isinstance(source, ForKinds):
        kinds = ", ".join(f"'{k}'" for k in source.kinds)
        return f"CASE WHEN kind IN ({kinds}) THEN {source.column} END"
    return source


def check_columns(table: str, columns: Sequence[ColumnSpec]) -> None:
    """ValueError unless ``table`` is a store table and every column spec is well formed (no SQL gets in)."""
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}")
    for name, source, kind in columns:
        names = [name, source] if isinstance(source, str) else [name, source.column]
        if isinstance(source, JsonField):
            names.append(source.key)
        if isinstance(source, ForKinds):
            names += list(source.kinds) if isinstance(source.kinds, tuple) and source.kinds else [""]
        if kind not in COLUMN_KINDS or not all(isinstance(n, str) and _NAME.match(n) for n in names):
            raise ValueError(f"bad column spec {name!r} ({source!r}, {kind!r})")


T = TypeVar("T")

_ANSWER_COLUMNS = [c for c in COLUMNS["evaluations"] if c != "id"]


def _answered(claim: str = "c") -> str:
    """SQL: the claim (table or alias ``claim``) has an answer: its session, task and question index in
    ``evaluations`` (one lookup in that table's unique index)."""
    return (f"EXISTS (SELECT 1 FROM evaluations e WHERE e.session_id = {claim}.session_id AND e.task = {claim}.task "
            f"AND e.question_index = {claim}.question_index)")


_INSERT_ANSWER = (f"INSERT INTO evaluations ({', '.join(_ANSWER_COLUMNS)}) "
                  f"VALUES ({', '.join('?' * len(_ANSWER_COLUMNS))})"
                  " ON CONFLICT (session_id, task, question_index) DO NOTHING RETURNING *")


def retried(method: Callable[..., T]) -> Callable[..., T]:
    """Retry an idempotent store method once when the connection dropped (a server restart, a failover).

    Only for methods that are safe to run twice: every write they make is exactly once, so a retry after
    a commit whose acknowledgement was lost finds the row and returns it.
    """
    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> T:
        for attempt in range(self.retries + 1):
            try:
                return method(self, *args, **kwargs)
            except Unavailable as exc:
                if attempt == self.retries or not exc.retry:
                    raise
        raise AssertionError("unreachable")
    return wrapper


class Store(abc.ABC):
    """Storage of sessions, answers, ratings, settings and the admin log (the interface the app uses).

    Open one with :func:`evalkit.store.open_store`. One store is shared by every
    Streamlit script thread of a process; several processes may use the same
    database. Every write is committed before the method returns.
    """

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

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ schema (shared part)

    def _migrate(self, conn: Any, *, fresh_ok: bool = True) -> None:
        """Inside the schema transaction: record or check the version, run the migrations, prove a write."""
        row = self._exec(conn, "SELECT value FROM settings WHERE key = 'schema_version'").fetchone()
        version = int(row["value"]) if row else 1
        if version > SCHEMA_VERSION:
            raise StoreError(f"cannot open the database {self.where}: its schema version {version} is newer than "
                             f"this evalkit ({SCHEMA_VERSION}); upgrade evalkit")
        for target in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[target]:
                self._exec(conn, statement)
        self._put_setting(conn, "schema_version", str(SCHEMA_VERSION))
        # prove that a commit works now (a read-only database would otherwise fail only at the first answer)
        self._put_setting(conn, "opened_at", now_iso())

    def _put_setting(self, conn: Any, key: str, value: str) -> None:
        self._exec(conn, "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO "
                         "UPDATE SET value = excluded.value, updated_at = excluded.updated_at", (key, value, now_iso()))

    def schema_version(self) -> int:
        """The schema version stored in the database."""
        return int(self.get_setting("schema_version", "1") or 1)

    # ------------------------------------------------------------------ sessions

    def create_session(self, *, study_version: str, evaluator_name: str = "", external_id: str = "",
                       seed: int | None = None, user_agent: str = "", meta: Mapping[str, Any] | None = None,
                       one_per_participant: bool = False) -> Session:
        """Create a session with a fresh uuid4 hex token and (unless given) a random 32-bit seed.

        With ``one_per_participant`` and an ``external_id``, looking for that participant's session and
        creating the new one happen in one write transaction, so two tabs clicking "start" at the same
        moment cannot create two: the second gets :class:`ParticipantHasSession` with the first session.
        Not retried after a dropped connection (a retry would make a second session).

        ``meta`` gets ``arrival``: 0, 1, 2, ... in the order sessions start (the setting ``next_arrival``; a
        database from before it counts its sessions, trashed ones included), taken inside the same write
        transaction, which keys the balanced display orders of
        :mod:`evalkit.balance` and the deal of the k-per-item queue (:func:`evalkit.queue.deal`). Starts take
        turns on the count (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: an advisory lock held to the commit,
        :meth:`_lock_arrivals`), so sessions started at the same instant get distinct, consecutive arrivals.
        The arrival of an abandoned session (:meth:`abandon_idle`) is given to the next session that starts, so
        the deal misses no slot. (An abandoned session that comes back, :meth:`revive_abandoned`, may then share
        its arrival with that one: the balance and the deal are a little less exact; nothing breaks.)
        """
        if seed is None:
            seed = secrets.randbits(32)
        if not 0 <= int(seed) <= 0xFFFFFFFF:
            raise ValueError("seed must be in 0..2**32-1")
        row = {
            "session_id": uuid.uuid4().hex, "evaluator_name": evaluator_name.strip(),
            "external_id": external_id.strip(), "seed": int(seed), "study_version": study_version,
            "started_at": now_iso(), "completed_at": None, "user_agent": user_agent[:500], "status": "active",
            "completion_code": None,
        }
        with self._write() as conn:
            if one_per_participant and row["external_id"]:
                self._lock_participant(conn, row["external_id"])
                earlier = self._find(conn, row["external_id"])
                if earlier is not None:
                    raise ParticipantHasSession(earlier)
            self._lock_arrivals(conn)
            arrival = self._next_arrival(conn)
            row["meta"] = json.dumps({**dict(meta or {}), "arrival": arrival}, sort_keys=True)
            self._exec(conn, f"INSERT INTO sessions ({', '.join(COLUMNS['sessions'])}) VALUES "
                             f"({', '.join('?' * len(COLUMNS['sessions']))})",
                       [row[c] for c in COLUMNS["sessions"]])
        return Session.from_row(row)

    def _next_arrival(self, conn: Any) -> int:
        """Inside a write transaction, arrivals locked: a new session's arrival: the lowest one an abandoned session
        gave back (setting ``free_arrivals``), else the next one never given (setting ``next_arrival``, kept apart
        from the sessions' count, so trashing, restoring or deleting sessions never repeats or skips one)."""
        rows = {r["key"]: r["value"] for r in self._exec(
            conn, "SELECT key, value FROM settings WHERE key IN ('free_arrivals', 'next_arrival')")}
        free = sorted(json.loads(rows.get("free_arrivals") or "[]"))
        if free:
            self._put_setting(conn, "free_arrivals", json.dumps(free[1:]))
            return int(free[0])
        given = rows.get("next_arrival")
        arrival = int(given) if given is not None else int(
            self._exec(conn, "SELECT COUNT(*) AS n FROM sessions").fetchone()["n"])  # (a database from before)
        self._put_setting(conn, "next_arrival", str(arrival + 1))
        return arrival

    def _free_arrivals(self, conn: Any) -> set[int]:
        row = self._exec(conn, "SELECT value FROM settings WHERE key = 'free_arrivals'").fetchone()
        return set(json.loads(row["value"])) if row and row["value"] else set()

    def _recorded(self, conn: Any, session_id: str) -> bool:
        """Whether anything is recorded for the session (:data:`RECORDED`)."""
        return any(self._exec(conn, f"SELECT 1 FROM {t} WHERE session_id = ? LIMIT 1", (session_id,)).fetchone()
                   for t in RECORDED)

    @retried
    def revive_abandoned(self, session_id: str) -> Session | None:
        """An abandoned session for which something was recorded after all (an evaluator who kept a question open
        longer than the idle time, then answered it; or an answer that raced the sweep) becomes ``active`` again,
        its arrival taken back from the free list if no other session took it meanwhile, and the admin log says
        so; returns it. None when it is abandoned with nothing recorded (it stays abandoned). A session that is
        not abandoned is returned as it is."""
        with self._write() as conn:
            self._lock_arrivals(conn)
            self._require_locked(conn, session_id)
            row = self._require(conn, session_id)
            if row["status"] != "abandoned":
                return Session.from_row(row)
            if not self._recorded(conn, session_id):
                return None
            self._exec(conn, "UPDATE sessions SET status = 'active' WHERE session_id = ?", (session_id,))
            arrival = (json.loads(row["meta"]) if row["meta"] else {}).get("arrival")
            free = self._free_arrivals(conn)
            if arrival in free:
                self._put_setting(conn, "free_arrivals", json.dumps(sorted(free - {arrival})))
            self._log(conn, "system", "session_status", {"session_id": session_id, "from": "abandoned",
                                                          "to": "active"})
            return Session.from_row(self._require(conn, session_id))

    @retried
    def abandon_idle(self, idle_seconds: float, *, now: datetime | None = None) -> list[str]:
        """Mark ``abandoned`` every active session that started more than ``idle_seconds`` before ``now`` and has
        nothing recorded (:data:`RECORDED`): a browser that never received its token (the server was killed
        between creating the session and sending it), or an evaluator who left before their first answer.

        In one transaction each gives its claims back to the queues and its arrival number to the next session
        that starts (:meth:`create_session`), and the admin log says so. An abandoned session's token no longer
        opens the survey and its participant id may start again (nothing of it is lost: it has nothing). Returns
        the abandoned sessions' tokens."""
        cutoff = (now or datetime.now(UTC)) - timedelta(seconds=float(idle_seconds))
        cutoff_iso = cutoff.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        nothing = " ".join(f"AND NOT EXISTS (SELECT 1 FROM {t} x WHERE x.session_id = s.session_id)"
                           for t in RECORDED)
        idle_sql = ("SELECT session_id, meta FROM sessions s WHERE status = 'active' AND completed_at IS NULL "
                    f"AND started_at < ? {nothing}")
        with self._read() as conn:
            if not self._exec(conn, idle_sql + " LIMIT 1", (cutoff_iso,)).fetchall():
                return []  # the usual case: one cheap read
        gone: list[str] = []
        with self._write() as conn:
            self._lock_arrivals(conn)  # (arrivals, then each session's row, then the queues: the order of a claim)
            free = self._free_arrivals(conn)
            for idle in self._exec(conn, idle_sql + " ORDER BY started_at, session_id", (cutoff_iso,)).fetchall():
                sid = idle["session_id"]
                self._require_locked(conn, sid)
                still = self._exec(conn, idle_sql + " AND s.session_id = ?",
                                   (cutoff_iso, sid)).fetchone()  # (an answer may have come meanwhile)
                if still is None:
                    continue
                self._exec(conn, "UPDATE sessions SET status = 'abandoned' WHERE session_id = ?", (sid,))
                self._release(conn, sid, answered_too=True)
                arrival = (json.loads(still["meta"]) if still["meta"] else {}).get("arrival")
                if isinstance(arrival, int) and not isinstance(arrival, bool) and arrival >= 0:
                    free.add(arrival)
                self._log(conn, "system", "session_status", {"session_id": sid, "from": "active", "to": "abandoned"})
                gone.append(sid)
            if gone:
                self._put_setting(conn, "free_arrivals", json.dumps(sorted(free)))
        return gone

    def _lock_participant(self, conn: Any, external_id: str) -> None:  # noqa: B027 - SQLite's BEGIN IMMEDIATE does it
        """Inside a write transaction: make concurrent starts of one participant take turns."""

    def _lock_arrivals(self, conn: Any) -> None:  # noqa: B027 - SQLite's BEGIN IMMEDIATE does it
        """Inside a write transaction: make session starts take turns from counting the sessions to the commit,
        so that no two sessions get the same arrival."""

    @retried
    def get_session(self, session_id: object) -> Session | None:
        """The session with this token, or None (also for a malformed token)."""
        if not is_valid_token(session_id):
            return None
        with self._conn() as conn:
            row = self._exec(conn, "SELECT * FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
        return Session.from_row(row) if row else None

    def _require(self, conn: Any, session_id: str) -> Mapping[str, Any]:
        row = self._exec(conn, "SELECT * FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
        if row is None:
            raise UnknownSession(f"no session with token {session_id!r}")
        return row

    @retried
    def complete_session(self, session_id: str, code: str | None = None,
                         meta: Mapping[str, Any] | None = None) -> Session:
        """Mark a session completed and give it a completion code; idempotent (same code every time).

        ``code``: the code to give (a study-level pass or fail code, see :mod:`evalkit.checks`); None: a new
        per-session code; ``""``: no code (a session that could not get work, when the study has no
        ``completion_code_full``). ``meta``: keys added to the session's ``meta`` in the same transaction (e.g.
        ``{"limit": "time"}`` for a session ended by a limit). The first completion decides: a later call
        returns the stored code and meta and changes nothing."""
        with self._write() as conn:
            row = self._require(conn, session_id)
            if row["completed_at"] is None:
                status = "completed" if row["status"] == "active" else row["status"]
                given = code or row["completion_code"] or (None if code == "" else new_completion_code())
                merged = {**(json.loads(row["meta"]) if row["meta"] else {}), **dict(meta or {})}
                self._exec(conn, "UPDATE sessions SET completed_at = ?, completion_code = ?, status = ?, meta = ? "
                                 "WHERE session_id = ? AND completed_at IS NULL",
                           (now_iso(), given, status, json.dumps(merged, sort_keys=True), session_id))
                row = self._require(conn, session_id)
        return Session.from_row(row)

    def set_session_status(self, session_id: str, status: str, *, actor: str = "system") -> Session:
        """Set a session's status (active / completed / excluded / trashed) and log who did it."""
        if status not in SESSION_STATUSES:
            raise ValueError(f"status must be one of {SESSION_STATUSES}, got {status!r}")
        with self._write() as conn:
            self._require_locked(conn, session_id)
            old = self._require(conn, session_id)
            self._exec(conn, "UPDATE sessions SET status = ? WHERE session_id = ?", (status, session_id))
            self._log(conn, actor, "session_status", {"session_id": session_id, "from": old["status"], "to": status})
            # k-per-item queues count only judgments the statistics count: a session taken out (excluded,
            # trashed) gives its claims back, answered ones too; one brought back takes its answered ones again
            # (a unit can then have k + 1)
            left_out = ("excluded", "trashed", "abandoned")
            if status in left_out and old["status"] not in left_out:
                self._release(conn, session_id, answered_too=True)
            elif status not in left_out and old["status"] in left_out:
                self._revive_answered(conn, session_id, time.time())
            row = self._require(conn, session_id)
        return Session.from_row(row)

    @retried
    def find_session(self, external_id: str) -> Session | None:
        """The newest non-trashed session with this external id (e.g. a Prolific PID), or None."""
        if not external_id.strip():
            return None
        with self._conn() as conn:
            return self._find(conn, external_id.strip())

    def _find(self, conn: Any, external_id: str) -> Session | None:
        row = self._exec(conn, "SELECT * FROM sessions WHERE external_id = ? AND status NOT IN ('trashed', "
                               "'abandoned') "
                               "ORDER BY started_at DESC, session_id DESC LIMIT 1", (external_id,)).fetchone()
        return Session.from_row(row) if row else None

    @retried
    def sessions(self, status: str | Sequence[str] | None = None) -> list[Session]:
        """Sessions in the order they started (to the millisecond; ties by token), optionally only those with
        the given status(es)."""
        sql, args = "SELECT * FROM sessions", []
        if status is not None:
            wanted = [status] if isinstance(status, str) else list(status)
            sql += f" WHERE status IN ({', '.join('?' * len(wanted))})"
            args = wanted
        with self._conn() as conn:
            rows = self._exec(conn, sql + f" ORDER BY {TABLE_ORDER['sessions']}", args).fetchall()
        return [Session.from_row(r) for r in rows]

    # ------------------------------------------------------------------ invited participants

    def add_participants(self, participants: Iterable[tuple[str, str, str]]) -> list[str]:
        """Store invited participants, given as ``(participant_id, key_hash, note)``, in one transaction.

        An id that is already stored is left exactly as it is (its key hash and note unchanged: its link
        keeps working), also when another process invites it at the same moment. Returns the ids added, in
        the order given. Not retried after a dropped connection (a retry would report the ids it had just
        added as already there).
        """
        rows = [(str(pid), str(key_hash), str(note or "")) for pid, key_hash, note in participants]
        for pid, key_hash, _ in rows:
            if not pid or pid != pid.strip() or not key_hash:
                raise ValueError(f"a participant needs a non-empty id without surrounding spaces and a key hash, "
                                 f"got {pid!r}")
        added: list[str] = []
        created_at = now_iso()
        with self._write() as conn:
            for pid, key_hash, note in rows:
                got = self._exec(conn, "INSERT INTO participants (participant_id, key_hash, note, created_at) "
                                       "VALUES (?, ?, ?, ?) ON CONFLICT (participant_id) DO NOTHING "
                                       "RETURNING participant_id", (pid, key_hash, note, created_at)).fetchall()
                if got:
                    added.append(pid)
        return added

    def replace_participant_keys(self, keys: Mapping[str, str], *, actor: str = "cli") -> list[str]:
        """Give invited participants new key hashes (``{participant_id: key_hash}``), all in one transaction, and
        log each in the admin log (the id only): their old private links stop working at once.

        Returns the ids that are not invited; then nothing is changed. Not retried after a dropped connection
        (the new keys would be stored without the caller knowing)."""
        for pid, key_hash in keys.items():
            if not pid or not key_hash:
                raise ValueError(f"a participant needs a non-empty id and a key hash, got {pid!r}")
        with self._write() as conn:
            missing = [pid for pid in keys if self._exec(conn, "SELECT 1 FROM participants WHERE participant_id = ?",
                                                         (pid,)).fetchone() is None]
            if missing:
                return missing
            for pid, key_hash in keys.items():
                self._exec(conn, "UPDATE participants SET key_hash = ? WHERE participant_id = ?", (key_hash, pid))
                self._log(conn, actor, "reissue_key", {"participant_id": pid})
        return []

    @retried
    def participant(self, participant_id: str) -> Participant | None:
        """The invited participant with this id, or None."""
        if not isinstance(participant_id, str) or not participant_id:
            return None
        with self._conn() as conn:
            row = self._exec(conn, "SELECT * FROM participants WHERE participant_id = ?",
                             (participant_id,)).fetchone()
        return Participant(**{c: row[c] for c in COLUMNS["participants"]}) if row else None

    @retried
    def participants(self) -> list[Participant]:
        """Every invited participant, in the order they were invited (ties by id)."""
        with self._conn() as conn:
            rows = self._exec(conn, f"SELECT * FROM participants ORDER BY {TABLE_ORDER['participants']}").fetchall()
        return [Participant(**{c: r[c] for c in COLUMNS["participants"]}) for r in rows]

    # ------------------------------------------------------------------ answers

    @retried
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
        check: str | None = None,
        check_passed: bool | None = None,
    ) -> Answer:
        """Store one answer, exactly once; returns the stored row.

        ``check`` ("tutorial" / "attention") and ``check_passed`` mark the answer to a check question (decided
        by :mod:`evalkit.checks` from the plan, never by the browser).

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
            "detail": detail_json, "created_at": now_iso(), "check_type": check,
            "check_passed": None if check_passed is None else int(bool(check_passed)),
        }
        with self._conn() as conn:
            try:
                stored = self._exec(conn, _INSERT_ANSWER, [row[c] for c in _ANSWER_COLUMNS]).fetchall()
                # (all: SQLite finishes the statement only then)
            except Exception as exc:
                if self._is_foreign_key_error(exc):
                    raise UnknownSession(f"no session with token {session_id!r}") from None
                raise
            created = bool(stored)
            stored = stored[0] if stored else None
            if not created:
                stored = self._exec(conn, "SELECT * FROM evaluations WHERE session_id = ? AND task = ? AND "
                                          "question_index = ?", (session_id, task, question_index)).fetchone()
        answer = Answer.from_row(stored, created=created)
        if not created and (stored["response"] != response or (stored["detail"] or "{}") != detail_json):
            raise AnswerConflict(
                f"question {question_index} of task {task!r} was already answered with {stored['response']!r}; "
                f"refusing to overwrite it with {response!r}"
            )
        return answer

    @retried
    def answers(self, session_id: str | None = None, task: str | None = None) -> list[Answer]:
        """Stored answers in insertion order, optionally for one session and/or task."""
        return [Answer.from_row(r) for r in self._rows("evaluations", session_id, task)]

    @retried
    def answered(self, session_id: str, task: str) -> set[int]:
        """Question indexes of ``task`` this session has answered (the source of truth for progress)."""
        with self._conn() as conn:
            rows = self._exec(conn, "SELECT question_index FROM evaluations WHERE session_id = ? AND task = ?",
                              (session_id, task)).fetchall()
        return {r["question_index"] for r in rows}

    # ------------------------------------------------------------------ tries at check questions

    @retried
    def record_check_try(self, session_id: str, task: str, question_index: int, response: str, *,
                         correct: bool, detail: Mapping[str, Any] | None = None, time_spent_ms: int | None = None,
                         same_within_s: float = 2.0) -> dict[str, Any]:
        """Store one try at a check question (a tutorial or attention question); returns the stored try.

        Tries are numbered 1, 2, ... per question in one write transaction. A try identical to the previous one
        (same response and detail) made less than ``same_within_s`` seconds after it is that try again (a
        double click), not a new one; the stored try is returned.
        """
        detail_json = json.dumps(dict(detail or {}), sort_keys=True)
        at = now_iso()
        select = ("SELECT * FROM check_tries WHERE session_id = ? AND task = ? AND question_index = ? "
                  "ORDER BY attempt DESC LIMIT 1")
        with self._write() as conn:
            self._require(conn, session_id)
            self._lock_session(conn, session_id)
            last = self._exec(conn, select, (session_id, task, question_index)).fetchone()
            if last is not None and last["response"] == response and (last["detail"] or "{}") == detail_json:
                gap = (datetime.fromisoformat(at) - datetime.fromisoformat(last["created_at"])).total_seconds()
                if gap < same_within_s:
                    return dict(last)
            attempt = 1 if last is None else int(last["attempt"]) + 1
            self._exec(conn, "INSERT INTO check_tries (session_id, task, question_index, attempt, response, correct,"
                             " detail, time_spent_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT "
                             "(session_id, task, question_index, attempt) DO NOTHING",
                       (session_id, task, question_index, attempt, response, int(bool(correct)), detail_json,
                        None if time_spent_ms is None else int(time_spent_ms), at))
            row = self._exec(conn, select, (session_id, task, question_index)).fetchone()
        return dict(row)

    @retried
    def check_tries(self, session_id: str | None = None, task: str | None = None,
                    question_index: int | None = None) -> list[dict[str, Any]]:
        """Stored tries at check questions (first try first), optionally for one session, task and question."""
        where = {k: v for k, v in {"session_id": session_id, "task": task, "question_index": question_index}.items()
                 if v is not None}
        sql = "SELECT * FROM check_tries" + (" WHERE " + " AND ".join(f"{k} = ?" for k in where) if where else "")
        with self._conn() as conn:
            rows = self._exec(conn, sql + " ORDER BY session_id, task, question_index, attempt",
                              list(where.values())).fetchall()
        return [{c: r[c] for c in COLUMNS["check_tries"]} for r in rows]

    @retried
    def check_answers(self) -> list[tuple[int, str, int | None]]:
        """(id, check_type, check_passed) of every stored answer to a tutorial or attention-check question, by id.

        For the analysis: these columns are NULL on all other answers, so reading them this way costs one scan
        with a few rows out, where a columnar read of two more columns over every answer cost more than a
        second per million answers."""
        with self._read() as conn:
            rows = self._exec(conn, "SELECT id, check_type, check_passed FROM evaluations "
                                    "WHERE check_type IS NOT NULL ORDER BY id").fetchall()
        return [(int(r["id"]), r["check_type"], None if r["check_passed"] is None else int(r["check_passed"]))
                for r in rows]

    @retried
    def answer_tasks(self) -> set[str]:
        """The task ids that have stored answers (so the analysis knows which kinds' columns to read).

        A skip scan of the ``evaluations_task`` index written as a recursive query (each step asks for the
        next larger task id), which both backends run as one index probe per task: milliseconds at a million
        answers, where ``SELECT DISTINCT task`` reads the whole index (0.05-0.2 s)."""
        with self._read() as conn:
            rows = self._exec(conn, "WITH RECURSIVE t(task) AS (SELECT min(task) FROM evaluations UNION ALL "
                                    "SELECT (SELECT min(e.task) FROM evaluations e WHERE e.task > t.task) FROM t "
                                    "WHERE t.task IS NOT NULL) SELECT task FROM t WHERE task IS NOT NULL").fetchall()
        return {r["task"] for r in rows}

    # ------------------------------------------------------------------ ratings

    @retried
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
        select = "SELECT * FROM ratings WHERE session_id = ? AND task = ? AND question_index = ? ORDER BY id"
        with self._write() as conn:
            self._require(conn, session_id)
            self._lock_session(conn, session_id)
            existing = self._exec(conn, select, (session_id, task, question_index)).fetchall()
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
                self._exec_many(
                    conn, "INSERT INTO ratings (session_id, task, question_index, item_id, metric, score, comment,"
                          " time_spent_ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(session_id, task, question_index, item_id, m, s, c, time_spent_ms, created_at)
                     for m, (s, c) in wanted.items()])
                rows = self._exec(conn, select, (session_id, task, question_index)).fetchall()
            if finish:
                self._exec(conn, "INSERT INTO task_status (session_id, task, finished_at) VALUES (?, ?, ?) "
                                 "ON CONFLICT (session_id, task) DO NOTHING", (session_id, task, created_at))
        return [Rating(**{c: r[c] for c in COLUMNS["ratings"]}) for r in rows]

    def _lock_session(self, conn: Any, session_id: str) -> None:  # noqa: B027 - SQLite's BEGIN IMMEDIATE does it
        """Inside a write transaction: make concurrent multi-row writes of one session take turns."""

    @retried
    def ratings(self, session_id: str | None = None, task: str | None = None) -> list[Rating]:
        """Stored rubric rows in insertion order, optionally for one session and/or task."""
        return [Rating(**{c: r[c] for c in COLUMNS["ratings"]}) for r in self._rows("ratings", session_id, task)]

    def _rows(self, table: str, session_id: str | None, task: str | None) -> list[Mapping[str, Any]]:
        where = {k: v for k, v in {"session_id": session_id, "task": task}.items() if v is not None}
        sql = f"SELECT * FROM {table}"
        if where:
            sql += " WHERE " + " AND ".join(f"{k} = ?" for k in where)
        with self._conn() as conn:
            return self._exec(conn, sql + " ORDER BY id", list(where.values())).fetchall()

    @retried
    def rated_items(self, session_id: str, task: str) -> dict[int, str]:
        """question_index -> item_id of the items this session has rated in ``task``."""
        with self._conn() as conn:
            rows = self._exec(conn, "SELECT DISTINCT question_index, item_id FROM ratings WHERE session_id = ? "
                                    "AND task = ?", (session_id, task)).fetchall()
        return {r["question_index"]: r["item_id"] for r in rows}

    # ------------------------------------------------------------------ forms

    @retried
    def record_form(self, session_id: str, task: str, values: Mapping[str, str | None], *,
                    time_spent_ms: int | None = None) -> list[FormAnswer]:
        """Store a form's answers (field id -> value, None for an optional field left empty) and mark the task
        finished, all in one transaction, exactly once.

        Repeating the identical call returns the stored rows; different values (or fields) for a form this
        session already submitted raise :class:`AnswerConflict` and change nothing.
        """
        if not values:
            raise ValueError("a form needs at least one field")
        wanted: dict[str, str | None] = {}
        for field, value in values.items():
            if not isinstance(field, str) or not field:
                raise ValueError(f"field ids must be non-empty strings, got {field!r}")
            if value is not None and not isinstance(value, str):
                raise ValueError(f"the value of {field!r} must be a string or None, got {value!r}")
            wanted[field] = value
        select = f"SELECT * FROM form_answers WHERE session_id = ? AND task = ? ORDER BY {TABLE_ORDER['form_answers']}"
        created_at = now_iso()
        with self._write() as conn:
            self._require(conn, session_id)
            self._lock_session(conn, session_id)
            existing = self._exec(conn, select, (session_id, task)).fetchall()
            if existing:
                if {r["field"]: r["value"] for r in existing} != wanted:
                    raise AnswerConflict(f"the form {task!r} was already submitted with other answers; "
                                         "refusing to overwrite them")
                rows = existing
            else:
                ms = None if time_spent_ms is None else int(time_spent_ms)
                self._exec_many(conn, "INSERT INTO form_answers (session_id, task, field, value, time_spent_ms, "
                                      "created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, task, field) "
                                      "DO NOTHING",
                                [(session_id, task, f, v, ms, created_at) for f, v in wanted.items()])
                rows = self._exec(conn, select, (session_id, task)).fetchall()
            self._exec(conn, "INSERT INTO task_status (session_id, task, finished_at) VALUES (?, ?, ?) "
                             "ON CONFLICT (session_id, task) DO NOTHING", (session_id, task, created_at))
        order = {f: k for k, f in enumerate(wanted)}
        return sorted((FormAnswer(**{c: r[c] for c in COLUMNS["form_answers"]}) for r in rows),
                      key=lambda a: order.get(a.field, len(order)))

    @retried
    def form_answers(self, session_id: str | None = None, task: str | None = None) -> list[FormAnswer]:
        """Stored form answers (in :data:`TABLE_ORDER`), optionally of one session and/or task."""
        where = {k: v for k, v in {"session_id": session_id, "task": task}.items() if v is not None}
        sql = "SELECT * FROM form_answers"
        if where:
            sql += " WHERE " + " AND ".join(f"{k} = ?" for k in where)
        with self._conn() as conn:
            rows = self._exec(conn, sql + f" ORDER BY {TABLE_ORDER['form_answers']}", list(where.values())).fetchall()
        return [FormAnswer(**{c: r[c] for c in COLUMNS["form_answers"]}) for r in rows]

    # ------------------------------------------------------------------ the k-judgments-per-item queue

    def _lock_queue(self, conn: Any, task: str) -> None:  # noqa: B027 - SQLite's BEGIN IMMEDIATE does it
        """Inside a write transaction: wait for ``task``'s queue lock (adding units, releasing claims, deleting
        a session; a claim's expiry sweep only tries it, :meth:`_try_lock_queue`)."""

    def _try_lock_queue(self, conn: Any, task: str) -> bool:
        """Inside a write transaction: take ``task``'s queue lock unless another transaction holds it; True
        when taken (SQLite: always, its write transactions take turns)."""
        return True

    #: Seconds between two expiry sweeps of one task by one store object (see :meth:`claim`).
    sweep_every = 1.0

    def _claim_transaction(self) -> contextlib.AbstractContextManager[Any]:
        """The write transaction of a claim (PostgreSQL: in pipeline mode, statements whose results are not
        read go out with the next one that is)."""
        return self._write()

    #: What makes the pick of a unit lock the row it picks (PostgreSQL: ``FOR UPDATE OF q SKIP LOCKED``).
    _pick_lock = ""
    #: What makes reading a session's row lock it against the session's other writes (PostgreSQL: a row lock).
    _session_lock = ""

    def add_queue_units(self, task: str, units: Sequence[str], *, retire_missing: bool = False) -> int:
        """Register ``task``'s queue units (opaque keys), in the order given; returns how many were new.

        Idempotent: a unit already registered keeps its first position; a unit given twice counts once. One
        write transaction (PostgreSQL: ``COPY``). The app calls this once per process at start: a list found
        whole in the queue is remembered by its SHA-256 (setting ``queue:<task>``), so the next call with the
        same list reads one setting and writes nothing (100,000 units: a hash of the list, not a read of them).
        ``retire_missing`` (the app's call: ``units`` is the whole queue as the items file has it now): registered
        units not in ``units`` are retired in the same transaction (as :meth:`retire_queue_unit` does: their
        items left the file, or the task's systems changed), and retired units that are in ``units`` again are
        taken back, their count recomputed from their live and answered claims. So a file that was briefly
        wrong, or a config changed and changed back, loses nothing for good.
        """
        if not isinstance(task, str) or not task:
            raise ValueError("task must be a non-empty string")
        wanted = list(dict.fromkeys(units))
        if any(not isinstance(u, str) or not u for u in wanted):
            raise ValueError("queue units must be non-empty strings")
        if not wanted:
            return 0
        key = f"queue:{task}"
        digest = hashlib.sha256(json.dumps([retire_missing, wanted]).encode()).hexdigest()
        have = "SELECT unit, taken FROM queue_units WHERE task = ?"
        with self._conn() as conn:
            row = self._exec(conn, "SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
            if row is not None and row["value"] == digest:
                return 0
        with self._write() as conn:
            self._lock_queue(conn, task)
            stored = {r["unit"]: r["taken"] for r in self._exec(conn, have, (task,))}
            new = [u for u in wanted if u not in stored]
            if retire_missing:
                keep = set(wanted)
                for unit in sorted(u for u, taken in stored.items() if u not in keep and taken < RETIRED):
                    self._retire(conn, task, unit)
                back = sorted(u for u in keep if stored.get(u, 0) >= RETIRED)
                self._exec_many(conn, "UPDATE queue_units SET taken = (SELECT COUNT(*) FROM claims c WHERE c.task = "
                                      "queue_units.task AND c.unit = queue_units.unit AND c.expired_at IS NULL) "
                                      "WHERE task = ? AND unit = ?", [(task, u) for u in back])
            if new:
                top = self._exec(conn, "SELECT coalesce(max(position), -1) AS p FROM queue_units WHERE task = ?",
                                 (task,)).fetchone()["p"]
                self._import_rows(conn, "queue_units", COLUMNS["queue_units"],
                                  ((task, u, int(top) + 1 + i, 0) for i, u in enumerate(new)))
            self._put_setting(conn, key, digest)
        return len(new)

    @retried
    def claim(self, task: str, session_id: str, question_index: int, *, k: int, expire_seconds: float,
              now: float | None = None, prefer: str | None = None) -> str | None:
        """The unit of ``task``'s queue this session judges as its question ``question_index``, or None when no
        unit is left for it (every unit has ``k`` live or answered claims, or it has judged the others).

        One write transaction:

        1. The session's claim for this question, if it has one, is returned again (page reruns): if it
           expired meanwhile it is made live again, even when its unit has had its ``k`` claims since (the
           evaluator may have seen the unit already; the unit can then get ``k + 1`` judgments).
        2. The task's expired claims go back to the queue: claimed more than ``expire_seconds`` ago and not
           answered (no answer of that session, task and question index). The claim row stays, marked
           expired. An answered claim never expires. An answer stored after its claim expired (or, on
           PostgreSQL, committed while a sweep that did not see it yet ran) makes the claim live again at
           the session's next claim, or, if that sweep commits only after the session's last claim, at the
           session's end (:meth:`release_claims`, which the done screen calls); until then its unit can be
           handed out once more (k + 1 judgments).
        3. ``prefer`` (the unit the queue's deal gives this question, :func:`evalkit.queue.deal`) is claimed if
           it has fewer than ``k`` claims and this session never claimed it (even expired); otherwise the
           least-judged unit (fewest live and answered claims, ``queue_units.taken``; ties: registration
           order) that meets the same two conditions.

        Atomicity. SQLite: the transaction is ``BEGIN IMMEDIATE``, so claims take turns. PostgreSQL: claims
        run in parallel (their commits share the disk's flushes) on row locks. The session's row is locked
        first (its own claims take turns: a rerun gets the same unit); the pick locks the unit it picks
        (``FOR UPDATE SKIP LOCKED``: another claimer moves on to the next unit instead of waiting), and
        re-checks ``taken < k`` on the newest committed row, so two claimers racing for the last slot never
        both get it. When the pick finds nothing although a unit with room is there but locked (another
        claim or a release of it not committed yet), it looks again a few milliseconds later, for at most a
        second, so the study does not look full when it is not. The expiry sweep runs under a per-task
        advisory lock that it only *tries* (one sweeper at a time; the others skip it), as do releases and
        session deletes (they wait for it); every decrement goes in unit order. So no two transactions
        wait for each other in opposite orders. A task-wide lock around every claim (the first version)
        held it through each commit's disk flush: 16 threads queued behind it for 170-260 ms a claim.

        Cost: index lookups only, no scan over units or claims: the pick walks the index (task, taken,
        position) and skips at most the units this session claimed; the sweep reads only claims older than
        the cutoff that are neither expired nor known answered (a partial index), and each claim passes
        through it at most once; one store sweeps a task at most every :attr:`sweep_every` seconds (an expired
        claim goes back up to a second late; two statements fewer for most claims). So most claims are four
        statements (the session's row, its claims, the pick, the insert); on PostgreSQL they go in pipeline
        mode (:meth:`_claim_transaction`): three round trips (BEGIN with the session's row and its claims, the
        pick, the insert with COMMIT).
        ``now``: seconds since the epoch (tests); the clock's time by default.
        """
        if not isinstance(question_index, int) or isinstance(question_index, bool) or question_index < 0:
            raise ValueError("question_index must be a non-negative int")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError("k must be a positive int")
        if not expire_seconds > 0:
            raise ValueError("expire_seconds must be positive")
        at = time.time() if now is None else float(now)
        with self._claim_transaction() as conn:
            claims = self._require_locked(conn, session_id, (
                f"SELECT unit, question_index, expired_at, {_answered()} AS has_answer FROM claims c WHERE "
                "session_id = ? AND task = ? AND (question_index = ? OR expired_at IS NOT NULL)",
                (session_id, task, question_index)))
            mine = None
            late = []
            for r in claims.fetchall():
                if r["question_index"] == question_index:
                    mine = r
                elif r["has_answer"]:
                    late.append(r["unit"])
            if mine is not None:
                if mine["expired_at"] is not None:
                    self._revive(conn, session_id, task, [mine["unit"]], at)
                return mine["unit"]
            if late:
                self._revive(conn, session_id, task, late, at)
            swept = self.__dict__.setdefault("_swept", {})  # task -> the `at` of this store's last sweep
            if abs(at - swept.get(task, -math.inf)) >= self.sweep_every and self._try_lock_queue(conn, task):
                self._sweep(conn, task, at - float(expire_seconds), at)
                swept[task] = at
            unit = None if prefer is None else self._pick(conn, task, session_id, k, only=prefer)
            if unit is None:
                unit = self._pick(conn, task, session_id, k)
            if unit is not None:
                self._exec(conn, "INSERT INTO claims (session_id, task, unit, question_index, claimed_at, "
                                 "expired_at, answered) VALUES (?, ?, ?, ?, ?, NULL, 0)",
                           (session_id, task, unit, question_index, at))
        return unit

    def _pick(self, conn: Any, task: str, session_id: str, k: int, patience: float = 1.0,
              only: str | None = None) -> str | None:
        """Take one slot of the least-judged unit with room that the session never claimed (see :meth:`claim`);
        with ``only``, of that unit or none. A unit with room that another transaction holds is waited for (it
        is passed over while locked and looked at again a few milliseconds later, for at most ``patience``
        seconds): the pick itself never waits for a row lock inside the database."""
        never = ("NOT EXISTS (SELECT 1 FROM claims c WHERE c.session_id = ? AND c.task = q.task AND "
                 "c.unit = q.unit)")
        if only is None:  # (the index (task, taken, position) walked in order)
            which, args, order = "q.task = ?", (task,), " ORDER BY q.taken, q.position"
        else:  # (the primary key)
            which, args, order = "q.task = ? AND q.unit = ?", (task, only), ""
        pick = (f"UPDATE queue_units SET taken = taken + 1 WHERE task = ? AND unit = (SELECT q.unit FROM queue_units"
                f" q WHERE {which} AND q.taken < ? AND {never}{order} LIMIT 1{self._pick_lock}) RETURNING unit")
        deadline = time.monotonic() + patience
        while True:
            row = self._exec(conn, pick, (task, *args, k, session_id)).fetchone()
            if row is not None:
                return row["unit"]
            if not self._pick_lock or time.monotonic() > deadline:
                return None
            # nothing unlocked: is a unit with room there at all (locked by a transaction not committed yet)?
            if self._exec(conn, f"SELECT 1 AS x FROM queue_units q WHERE {which} AND q.taken < ? AND {never} "
                                "LIMIT 1", (*args, k, session_id)).fetchone() is None:
                return None
            time.sleep(0.003)

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

    def _revive(self, conn: Any, session_id: str, task: str, units: Sequence[str], at: float) -> None:
        """Make the session's expired claims of ``units`` live again (their units' counts go up)."""
        for unit in sorted(units):
            got = self._exec(conn, "UPDATE claims SET expired_at = NULL, claimed_at = ? WHERE session_id = ? AND "
                                   "task = ? AND unit = ? AND expired_at IS NOT NULL RETURNING unit",
                             (at, session_id, task, unit)).fetchall()
            if got:
                self._exec(conn, "UPDATE queue_units SET taken = taken + 1 WHERE task = ? AND unit = ?",
                           (task, unit))

    def _sweep(self, conn: Any, task: str, cutoff: float, at: float) -> None:
        """Expire ``task``'s unanswered claims made before ``cutoff``; mark the answered ones (they never
        expire) so the sweep's partial index forgets them. One statement when there is nothing to do."""
        old = "task = ? AND expired_at IS NULL AND answered = 0 AND claimed_at < ?"  # (literals: the partial index)
        done = self._exec(conn, f"UPDATE claims SET answered = CASE WHEN {_answered('claims')} THEN 1 ELSE 0 END, "
                                f"expired_at = CASE WHEN {_answered('claims')} THEN NULL ELSE ? END WHERE {old} "
                                "RETURNING unit, expired_at", (at, task, cutoff)).fetchall()
        self._give_back(conn, [(task, r["unit"]) for r in done if r["expired_at"] is not None])

    def _give_back(self, conn: Any, slots: Sequence[tuple[str, str]]) -> None:
        """Lower the count of each (task, unit) by one per occurrence, in (task, unit) order (no deadlocks)."""
        if slots:
            self._exec_many(conn, "UPDATE queue_units SET taken = taken - 1 WHERE task = ? AND unit = ?",
                            sorted(slots))

    @retried
    def release_claims(self, session_id: str, *, answered: bool = False, now: float | None = None) -> int:
        """Give the session's unanswered live claims back to their queues (marked expired, kept for the
        record); for a session that completed or ended early. Returns how many. Answered claims stay, unless
        ``answered``: a session that failed its attention checks gives every claim back, so that each unit
        still gets its k judgments from evaluators who passed (its answers stay stored; an expired claim does
        not count as a judgment in :meth:`queue_status`)."""
        with self._write() as conn:
            self._require_locked(conn, session_id)
            if not answered:  # an answer stored after its claim expired counts again (see claim, step 2)
                self._revive_answered(conn, session_id, time.time() if now is None else float(now))
            return self._release(conn, session_id, answered_too=answered, at=now)

    def _revive_answered(self, conn: Any, session_id: str, at: float) -> None:
        """Inside a write transaction: make the session's expired claims that have an answer live again (their
        units' counts go up), task by task under the queue's lock."""
        late = self._exec(conn, f"SELECT task, unit FROM claims c WHERE session_id = ? AND expired_at IS NOT NULL AND "
                                f"{_answered()}", (session_id,)).fetchall()
        by_task: dict[str, list[str]] = {}
        for r in late:
            by_task.setdefault(r["task"], []).append(r["unit"])
        for task in sorted(by_task):
            self._lock_queue(conn, task)
            self._revive(conn, session_id, task, by_task[task], at)

    @retried
    def retire_queue_unit(self, task: str, unit: str) -> None:
        """Take a unit out of ``task``'s queue (its item left the items file, or its systems the task): it is not
        handed out and not counted by :meth:`queue_status` until ``add_queue_units(..., retire_missing=True)``
        finds it in the list again; unanswered claims of it are
        dropped, so their sessions claim another unit for those questions. Answers to it stay stored."""
        with self._write() as conn:
            self._lock_queue(conn, task)
            self._retire(conn, task, unit)

    def _retire(self, conn: Any, task: str, unit: str) -> None:
        """Inside a write transaction, the task's queue locked: see :meth:`retire_queue_unit`. The claims go
        first, then the unit's row: the order in which a claim's revival locks them (no deadlock)."""
        self._exec(conn, f"DELETE FROM claims WHERE task = ? AND unit = ? AND NOT {_answered('claims')}",
                   (task, unit))
        self._exec(conn, "UPDATE queue_units SET taken = ? WHERE task = ? AND unit = ?", (RETIRED, task, unit))

    def _release(self, conn: Any, session_id: str, *, answered_too: bool = False, at: float | None = None) -> int:
        """Inside a write transaction, the session's row locked: expire the session's live claims (unanswered
        ones, or all of them with ``answered_too``: the session's answers are being deleted) and lower their
        units' counts."""
        tasks = sorted({r["task"] for r in self._exec(conn, "SELECT task FROM claims WHERE session_id = ? AND "
                                                            "expired_at IS NULL", (session_id,))})
        for task in tasks:  # (in one order everywhere)
            self._lock_queue(conn, task)
        if not tasks:
            return 0
        sql = "UPDATE claims SET expired_at = ? WHERE session_id = ? AND expired_at IS NULL"
        if not answered_too:
            sql += f" AND NOT {_answered('claims')}"
        gone = self._exec(conn, sql + " RETURNING task, unit",
                          (time.time() if at is None else float(at), session_id)).fetchall()
        self._give_back(conn, [(r["task"], r["unit"]) for r in gone])
        return len(gone)

    @retried
    def has_open_slot(self, task: str, k: int, expire_seconds: float, *, now: float | None = None) -> bool:
        """Whether a new evaluator's claim in ``task``'s queue could get a unit: a unit with fewer than ``k``
        live or answered claims, or a claim past its expiry (the next claim sweeps it back). Two index lookups,
        read only (the consent page asks on every visit; :meth:`queue_status` reads every claim)."""
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError("k must be a positive int")
        cutoff = (time.time() if now is None else float(now)) - float(expire_seconds)
        with self._read() as conn:
            if self._exec(conn, "SELECT 1 AS x FROM queue_units WHERE task = ? AND taken < ? LIMIT 1",
                          (task, k)).fetchone() is not None:
                return True
            stale = self._exec(conn, "SELECT 1 AS x FROM claims c WHERE task = ? AND expired_at IS NULL AND "
                                     f"answered = 0 AND claimed_at < ? AND NOT {_answered()} LIMIT 1",
                               (task, cutoff)).fetchone()
        return stale is not None

    @retried
    def queue_status(self, task: str, k: int) -> QueueStatus:
        """Where ``task``'s queue stands for ``k`` judgments per unit (see :class:`QueueStatus`), in one
        snapshot. Reads every claim of the task (for the results page, not for each claim). Claims that are
        past their expiry but not yet swept (the next claim of the task sweeps them) count as live."""
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError("k must be a positive int")
        with self._read() as conn:
            units = int(self._exec(conn, "SELECT count(*) AS n FROM queue_units WHERE task = ? AND taken < ?",
                                   (task, RETIRED // 2)).fetchone()["n"])
            retired = {r["unit"] for r in self._exec(conn, "SELECT unit FROM queue_units WHERE task = ? AND "
                                                           "taken >= ?", (task, RETIRED // 2))}
            answered = {r["unit"]: int(r["n"]) for r in self._exec(
                conn, f"SELECT unit, count(*) AS n FROM claims c WHERE task = ? AND expired_at IS NULL AND "
                      f"{_answered()} GROUP BY unit", (task,))}
            live = {r["unit"]: int(r["n"]) for r in self._exec(
                conn, f"SELECT unit, count(*) AS n FROM claims c WHERE task = ? AND expired_at IS NULL AND NOT "
                      f"{_answered()} GROUP BY unit", (task,))}
        for gone in retired:  # (a few, if any: units whose item left the items file)
            answered.pop(gone, None)
            live.pop(gone, None)
        judgments = dict.fromkeys(range(k + 1), 0)
        for n in answered.values():
            judgments[n] = judgments.get(n, 0) + 1
        judgments[0] = units - len(answered)
        taken = sum(min(k, answered.get(u, 0) + live.get(u, 0)) for u in answered.keys() | live.keys())
        open_slots = max(0, units * k - taken)
        return QueueStatus(units=units, judged=sum(answered.values()), live=sum(live.values()),
                           open_slots=open_slots, full=open_slots == 0, judgments=dict(sorted(judgments.items())))

    # ------------------------------------------------------------------ progress

    @retried
    def finish_task(self, session_id: str, task: str) -> None:
        """Record that the evaluator finished an open-ended block (e.g. chose "finish" after ratings)."""
        with self._conn() as conn:
            try:
                self._exec(conn, "INSERT INTO task_status (session_id, task, finished_at) VALUES (?, ?, ?) "
                                 "ON CONFLICT (session_id, task) DO NOTHING", (session_id, task, now_iso()))
            except Exception as exc:
                if self._is_foreign_key_error(exc):
                    raise UnknownSession(f"no session with token {session_id!r}") from None
                raise

    @retried
    def snapshot(self, session_id: object) -> tuple[str, Session | None, Progress | None]:
        """Survey state, the session and its progress, in one read transaction (one per page run)."""
        with self._read() as conn:
            row = self._exec(conn, "SELECT value FROM settings WHERE key = 'survey_state'").fetchone()
            state = row["value"] if row and row["value"] in SURVEY_STATES else "open"
            session = None
            if is_valid_token(session_id):
                found = self._exec(conn, "SELECT * FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
                session = Session.from_row(found) if found else None
            progress = self._progress(conn, session.session_id) if session else None
        return state, session, progress

    @retried
    def progress(self, session_id: str) -> Progress:
        """Everything the flow needs to know where this session stands, read in one snapshot."""
        with self._read() as conn:
            return self._progress(conn, session_id)

    def _progress(self, conn: Any, session_id: str) -> Progress:
        answered: dict[str, set[int]] = {}
        for r in self._exec(conn, "SELECT task, question_index FROM evaluations WHERE session_id = ?", (session_id,)):
            answered.setdefault(r["task"], set()).add(r["question_index"])
        rated: dict[str, dict[int, str]] = {}
        for r in self._exec(conn, "SELECT DISTINCT task, question_index, item_id FROM ratings WHERE session_id = ?",
                            (session_id,)):
            rated.setdefault(r["task"], {})[r["question_index"]] = r["item_id"]
        finished = {r["task"] for r in self._exec(conn, "SELECT task FROM task_status WHERE session_id = ?",
                                                  (session_id,))}
        claims: dict[str, dict[int, str]] = {}
        for r in self._exec(conn, "SELECT task, question_index, unit FROM claims WHERE session_id = ? "
                                  "AND expired_at IS NULL", (session_id,)):
            claims.setdefault(r["task"], {})[r["question_index"]] = r["unit"]
        return Progress(answered=answered, rated=rated, finished=finished, claims=claims)

    # ------------------------------------------------------------------ settings and admin log

    @retried
    def get_setting(self, key: str, default: str | None = None) -> str | None:
        """A setting's value, or ``default``."""
        with self._conn() as conn:
            row = self._exec(conn, "SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
        return row["value"] if row else default

    def set_setting(self, key: str, value: str, *, actor: str = "system") -> None:
        """Set a setting and log the change."""
        with self._write() as conn:
            old = self._exec(conn, "SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
            self._put_setting(conn, key, value)
            self._log(conn, actor, "setting", {"key": key, "from": old["value"] if old else None, "to": value})

    def survey_state(self) -> str:
        """``open`` (default), ``paused`` (no new evaluators) or ``ended`` (nobody)."""
        state = self.get_setting("survey_state", "open")
        return state if state in SURVEY_STATES else "open"

    def set_survey_state(self, state: str, *, actor: str = "system") -> None:
        """Open, pause or end the survey (takes effect on every page's next run)."""
        if state not in SURVEY_STATES:
            raise ValueError(f"survey state must be one of {SURVEY_STATES}, got {state!r}")
        self.set_setting("survey_state", state, actor=actor)

    def _log(self, conn: Any, actor: str, action: str, detail: Mapping[str, Any]) -> None:
        self._exec(conn, "INSERT INTO admin_log (at, actor, action, detail) VALUES (?, ?, ?, ?)",
                   (now_iso(), actor, action, json.dumps(dict(detail), sort_keys=True)))

    def log(self, actor: str, action: str, detail: Mapping[str, Any] | None = None) -> None:
        """Append to the admin log."""
        with self._write() as conn:
            self._log(conn, actor, action, detail or {})

    @retried
    def admin_log(self) -> list[dict[str, Any]]:
        """The admin log, oldest first."""
        with self._conn() as conn:
            rows = self._exec(conn, "SELECT * FROM admin_log ORDER BY id").fetchall()
        return [{**{c: r[c] for c in COLUMNS["admin_log"]}, "detail": json.loads(r["detail"] or "{}")} for r in rows]

    # ------------------------------------------------------------------ study descriptions and data version

    @retried
    def register_study(self, version: str, summary: Mapping[str, Any]) -> None:
        """Keep a description of the study's tasks (per version), so the database describes itself."""
        value = json.dumps(dict(summary), sort_keys=True)
        with self._conn() as conn:
            self._exec(conn, "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO "
                             "UPDATE SET value = excluded.value WHERE settings.value <> excluded.value",
                       (f"study:{version}", value, now_iso()))

    @retried
    def studies(self) -> dict[str, dict[str, Any]]:
        """Registered study descriptions by version, oldest registration first."""
        with self._conn() as conn:
            rows = self._exec(conn, "SELECT key, value FROM settings WHERE key LIKE 'study:%' "
                                    "ORDER BY updated_at, key").fetchall()
        return {r["key"][len("study:"):]: json.loads(r["value"]) for r in rows}

    @retried
    def data_version(self) -> tuple[int, ...]:
        """An opaque value that changes whenever an answer, rating, session, completion or admin action is
        written (compare it for equality; nothing else about it is promised).

        Cheap (primary-key maxima and counts over the small tables), so a live page can poll it and
        recompute only when it changes. Deleting or trashing a session is logged, so it changes too.
        """
        with self._conn() as conn:
            row = self._exec(
                conn, "SELECT (SELECT coalesce(max(id), 0) FROM evaluations) AS a, (SELECT coalesce(max(id), 0) "
                      "FROM ratings) AS b, (SELECT count(*) FROM sessions) AS c, (SELECT count(*) FROM sessions "
                      "WHERE completed_at IS NOT NULL) AS d, (SELECT coalesce(max(id), 0) FROM admin_log) AS e, "
                      "(SELECT count(*) FROM task_status) AS f").fetchone()
        return tuple(int(row[k]) for k in "abcdef")

    def delete_session(self, session_id: str, *, actor: str) -> dict[str, int]:
        """Delete a session and everything it wrote, permanently; logged. Returns the rows deleted."""
        with self._write() as conn:
            self._require_locked(conn, session_id)
            self._release(conn, session_id, answered_too=True)  # its live claims' slots go back to the queues
            counts = {}
            for table in (*SESSION_TABLES, "sessions"):
                counts[table] = self._exec(conn, f"DELETE FROM {table} WHERE session_id = ?", (session_id,)).rowcount
            self._log(conn, actor, "delete_session", {"session_id": session_id, **counts})
        return counts

    # ------------------------------------------------------------------ whole tables

    @retried
    def table(self, name: str) -> list[dict[str, Any]]:
        """Every row of one table as dicts (for export), in :data:`TABLE_ORDER`."""
        if name not in TABLES:
            raise ValueError(f"unknown table {name!r}")
        return [dict(zip(COLUMNS[name], row, strict=True)) for row in self._stream(name)]

    def read_columns(self, table: str, columns: Sequence[ColumnSpec], **options: Any) -> pa.Table:
        """Some columns of one table as an Arrow table (see :meth:`read_tables`; ``options`` go to it)."""
        return self.read_tables({table: (table, columns)}, **options)[table]

    @retried
    def counts(self) -> dict[str, int]:
        """Rows per table."""
        with self._read() as conn:
            return {t: int(self._exec(conn, f"SELECT count(*) AS n FROM {t}").fetchone()["n"]) for t in TABLES}

    def is_empty(self) -> bool:
        """True when the database holds no study data (only the settings every fresh database has)."""
        counts = self.counts()
        with self._conn() as conn:
            extra = self._exec(conn, f"SELECT count(*) AS n FROM settings WHERE key NOT LIKE 'queue:%' AND key NOT IN "
                                     f"({', '.join('?' * len(HOUSEKEEPING_SETTINGS))})",
                               HOUSEKEEPING_SETTINGS).fetchone()["n"]
        # (queue units alone are not study data: the app registers them from the config when it starts, and
        # remembers them in the settings as ``queue:<task>``)
        return extra == 0 and all(n == 0 for t, n in counts.items() if t not in ("settings", "queue_units"))

    def import_from(self, source: Store, *, replace: bool = False, batch: int = 10_000) -> dict[str, int]:
        """Copy every table of ``source`` into this store, ids included, in one transaction; returns row counts.

        Refuses (StoreError) when this store already holds study data, unless ``replace``: then its rows
        are deleted first, in the same transaction (so a failed copy leaves the destination as it was).
        After the commit the row counts of both stores are compared; a difference raises StoreError.
        """
        if not replace and not self.is_empty():
            raise StoreError(f"the destination {self.where} already holds study data; copy into an empty database, "
                             "or pass --replace to delete what it holds first")
        expected = source.counts()
        try:
            with self._write() as conn:
                for table in reversed(TABLES):  # children before the sessions they reference
                    self._exec(conn, f"DELETE FROM {table}")
                for table in TABLES:
                    rows = source._stream(table)
                    while chunk := [row for _, row in zip(range(batch), rows, strict=False)]:
                        self._import_rows(conn, table, COLUMNS[table], chunk)
                self._put_setting(conn, "schema_version", str(SCHEMA_VERSION))  # the destination's schema
                self._after_import(conn)
        except (*self._driver_errors, *source._driver_errors) as exc:
            raise StoreError(f"copying {source.where} to {self.where} failed, nothing was changed: "
                             f"{type(exc).__name__}: {exc}") from None
        got = self.counts()
        if got != expected:
            raise StoreError(f"copy check failed: {source.where} has {expected} rows, {self.where} has {got}")
        return got

"""The tables: their columns, order and migrations, and the checks of a database's schema, the same on every backend.

The DDL of the version-1 tables is the backends' own (types differ); every later change is a migration in
:data:`MIGRATIONS`, SQL that both backends run. :func:`check_schema` is the one wording of "this is not a
database this evalkit can use", for opening a store and for ``evalkit check``.

May import: the standard library and :mod:`.records` (no driver, no other evalkit module).
"""

from __future__ import annotations

from collections.abc import Collection

from .records import StoreError

#: The schema version this evalkit writes; :data:`MIGRATIONS` bring an older database up to it.
SCHEMA_VERSION = 10
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
    # error spans (kind "spans"): one row per span an answer ended with, and per suggested span deleted; written
    # in the answer's transaction. Offsets are code points of the output segment, ``end_char`` exclusive (``end``
    # is an SQL keyword); ``n`` orders the spans of one output segment
    9: ("""CREATE TABLE IF NOT EXISTS spans (
        session_id TEXT NOT NULL REFERENCES sessions (session_id), task TEXT NOT NULL,
        question_index INTEGER NOT NULL, item_id TEXT NOT NULL, segment INTEGER NOT NULL, system TEXT NOT NULL,
        n INTEGER NOT NULL, start_char INTEGER NOT NULL, end_char INTEGER NOT NULL, severity TEXT NOT NULL,
        category TEXT, text TEXT NOT NULL, origin TEXT NOT NULL, created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, task, question_index, system, segment, n))""",),
    # per-participant completion codes (a Pearmut campaign's ``token_pass`` / ``token_fail``): shown instead of
    # the study's codes to an invited participant who has them; NULL = the study's code
    10: ("ALTER TABLE participants ADD COLUMN code_pass TEXT",
         "ALTER TABLE participants ADD COLUMN code_fail TEXT"),
}
TABLES = ("sessions", "evaluations", "ratings", "task_status", "settings", "admin_log", "form_answers",
          "participants", "check_tries", "queue_units", "claims", "spans")
#: The order rows are listed and exported in, the same on every backend.
TABLE_ORDER = {"sessions": "started_at, session_id", "evaluations": "id", "ratings": "id",
               "task_status": "finished_at, session_id, task", "settings": "key", "admin_log": "id",
               "form_answers": "created_at, session_id, task, field", "participants": "created_at, participant_id",
               "check_tries": "created_at, session_id, task, question_index, attempt",
               "queue_units": "task, position, unit", "claims": "claimed_at, session_id, task, unit",
               "spans": "created_at, session_id, task, question_index, system, segment, n"}
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
    "participants": ("participant_id", "key_hash", "note", "created_at", "code_pass", "code_fail"),
    "check_tries": ("session_id", "task", "question_index", "attempt", "response", "correct", "detail",
                    "time_spent_ms", "created_at"),
    "queue_units": ("task", "unit", "position", "taken"),
    "claims": ("session_id", "task", "unit", "question_index", "claimed_at", "expired_at", "answered"),
    "spans": ("session_id", "task", "question_index", "item_id", "segment", "system", "n", "start_char", "end_char",
              "severity", "category", "text", "origin", "created_at"),
}
#: Tables whose rows belong to one session (deleted with it), children first.
SESSION_TABLES = ("spans", "evaluations", "ratings", "task_status", "form_answers", "check_tries", "claims")
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

#: Tables with an ``id`` column (an identity on PostgreSQL, the rowid on SQLite): read in id ranges, and
#: their id sequences moved past copied rows.
ID_TABLES = ("evaluations", "ratings", "admin_log")


def refuse_newer(where: str, version: int | None) -> None:
    """StoreError when the database at ``where`` has a schema ``version`` newer than this evalkit's."""
    if version is not None and version > SCHEMA_VERSION:
        raise StoreError(f"cannot open the database {where}: its schema version {version} is newer than this "
                         f"evalkit ({SCHEMA_VERSION}); upgrade evalkit")


def check_schema(where: str, names: Collection[str], version: int | None, *, empty_ok: bool) -> bool:
    """Whether the database at ``where``, holding the tables ``names`` at schema ``version`` (None: no version
    stored), is an evalkit database this version can use: True; False for one without tables when
    ``empty_ok``; otherwise StoreError (a newer schema, no tables, or another program's tables)."""
    refuse_newer(where, version)
    if not names and empty_ok:
        return False
    if "sessions" not in names:
        what = f"tables: {', '.join(sorted(names)[:5])}" if names else "it has no tables"
        raise StoreError(f"cannot open the database {where}: it is not an evalkit database ({what})")
    return True

"""The storage interface, written once: :class:`Store`, composed of one mixin per concern.

:class:`Store` holds the whole behaviour of the response store in SQL that
SQLite and PostgreSQL both run (``?`` placeholders, ``INSERT ... ON CONFLICT
DO NOTHING RETURNING``, ``ON CONFLICT (key) DO UPDATE``). A backend supplies
only what differs (the hooks declared in :class:`~.core.StoreCore`): how
connections are made and pooled, how a write transaction starts, the schema's
DDL, the errors its driver raises, and the columnar reader. So the
exactly-once and conflict rules cannot drift apart between backends: there is
one copy of them.

Exactly once: ``UNIQUE(session_id, task, question_index)`` on answers and
``UNIQUE(session_id, task, question_index, metric)`` on ratings. Writing the
same answer again returns the stored row (``created=False``); a *different*
answer to an answered question raises :class:`AnswerConflict` and is never
overwritten. Multi-row writes (a rating with all its metrics, finishing a
block, deleting a session) are one transaction.

Where each part is: :mod:`.records` (row types, errors, value helpers), :mod:`.schema` (tables, columns,
migrations), :mod:`.columns` (columnar read requests), :mod:`.core` (the backend's hooks and shared helpers),
:mod:`.sessions` (sessions and invited participants), :mod:`.answers` (answers and tries at check questions),
:mod:`.ratings` (ratings and forms), :mod:`.claims` (the k-judgments queue), :mod:`.progress` (where a session
stands), :mod:`.settings` (settings and the admin log), :mod:`.copying` (whole tables and ``evalkit copy``).
This module re-exports their public names, so ``from evalkit.store.base import ...`` keeps working.

May import: the standard library and sibling store modules; no driver and no other evalkit module.
"""

from __future__ import annotations

from .answers import AnswersMixin
from .claims import ClaimsMixin
from .columns import (
    COLUMN_KINDS,
    ColumnSpec,
    ForKinds,
    JsonField,
    Sampled,
    Source,
    cast_select,
    check_columns,
    id_ranges,
    sampled_sql,
    source_sql,
)
from .copying import CopyingMixin
from .core import StoreCore, retried
from .progress import ProgressMixin
from .ratings import RatingsMixin
from .records import (
    INVITED_META,
    Answer,
    AnswerConflict,
    FormAnswer,
    Participant,
    ParticipantHasSession,
    Progress,
    QueueStatus,
    Rating,
    Session,
    StoreError,
    Unavailable,
    UnknownSession,
    is_valid_token,
    mask_url,
    new_completion_code,
    now_iso,
    scrub,
)
from .schema import (
    COLUMNS,
    HOUSEKEEPING_SETTINGS,
    ID_TABLES,
    MIGRATIONS,
    RECORDED,
    RETIRED,
    SCHEMA_VERSION,
    SESSION_STATUSES,
    SESSION_TABLES,
    SURVEY_STATES,
    TABLE_ORDER,
    TABLES,
    check_schema,
    refuse_newer,
)
from .sessions import SessionsMixin
from .settings import SettingsMixin

__all__ = [
    "COLUMNS",
    "COLUMN_KINDS",
    "HOUSEKEEPING_SETTINGS",
    "ID_TABLES",
    "INVITED_META",
    "MIGRATIONS",
    "RECORDED",
    "RETIRED",
    "SCHEMA_VERSION",
    "SESSION_STATUSES",
    "SESSION_TABLES",
    "SURVEY_STATES",
    "TABLES",
    "TABLE_ORDER",
    "Answer",
    "AnswerConflict",
    "ColumnSpec",
    "ForKinds",
    "FormAnswer",
    "JsonField",
    "Participant",
    "ParticipantHasSession",
    "Progress",
    "QueueStatus",
    "Rating",
    "Sampled",
    "Session",
    "Source",
    "Store",
    "StoreCore",
    "StoreError",
    "Unavailable",
    "UnknownSession",
    "cast_select",
    "check_columns",
    "check_schema",
    "id_ranges",
    "is_valid_token",
    "mask_url",
    "new_completion_code",
    "now_iso",
    "refuse_newer",
    "retried",
    "sampled_sql",
    "scrub",
    "source_sql",
]


class Store(SessionsMixin, AnswersMixin, RatingsMixin, ClaimsMixin, ProgressMixin, SettingsMixin, CopyingMixin,
            StoreCore):
    """Storage of sessions, answers, ratings, settings and the admin log (the interface the app uses).

    Open one with :func:`evalkit.store.open_store`. One store is shared by every
    Streamlit script thread of a process; several processes may use the same
    database. Every write is committed before the method returns.

    Each concern is a mixin of its own module (see this module's docstring); a backend subclasses this class
    and implements the hooks :class:`~.core.StoreCore` declares.
    """

"""What the store hands out and raises: the row types, the errors, and the values they hold.

The row types (:class:`Session`, :class:`Participant`, :class:`Answer`, :class:`Rating`, :class:`FormAnswer`,
:class:`Progress`, :class:`QueueStatus`) are frozen dataclasses built from stored rows; the errors all derive
from :class:`StoreError`. Also the small value helpers every part of the store uses: timestamps
(:func:`now_iso`), session tokens, completion codes, and masking a password in a message.

May import: the standard library only (the bottom of the store package: every other store module imports it).
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

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


#: ``//user:password@`` anywhere in a text, up to the last ``@`` before a space: a second address pasted into the
#: first keeps no password either, nor does a password with an unencoded ``@`` or ``/`` (it hides a little more)
_USERINFO = re.compile(r"(//[^/@:\s]*):\S*@")


def mask_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages and logs): the address's own, a
    ``?password=`` parameter, and any ``//user:password@`` further on (two addresses pasted into one)."""
    try:
        parts = urllib.parse.urlsplit(url)
        password = parts.password
    except ValueError:
        return "<a database URL that cannot be parsed>"
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    if any(k.lower() == "password" for k, _ in query):  # libpq also takes ?password=...
        masked = [(k, "***" if k.lower() == "password" else v) for k, v in query]
        parts = parts._replace(query=urllib.parse.urlencode(masked, safe="*"))
    if password is not None:  # host and port kept as written (a port that is not a number is the server's to refuse)
        parts = parts._replace(netloc=f"{parts.username or ''}:***@{parts.netloc.rpartition('@')[2]}")
    return _USERINFO.sub(r"\1:***@", urllib.parse.urlunsplit(parts))


def scrub(text: str, secret: str | None) -> str:
    """``text`` (a driver's message) with every occurrence of ``secret`` (a password) replaced by ``***``, and any
    ``//user:password@`` in it masked (a driver may quote a part of the address it could not parse)."""
    return _USERINFO.sub(r"\1:***@", text.replace(secret, "***") if secret else text)


# ----------------------------------------------------------------------------- records


#: Stored in a session's ``meta`` (as true) when it was started from an invited participant's private link.
INVITED_META = "invited"


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

    @property
    def participant_id(self) -> str | None:
        """The invited participant's id when the session was started from a private link, else None."""
        return self.external_id or None if self.meta.get(INVITED_META) is True else None

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
    """An invited participant (row of ``participants``): the id, a hash of the private link's key, a note, and
    the participant's own completion codes (None: the study's)."""

    participant_id: str
    key_hash: str
    note: str
    created_at: str
    code_pass: str | None = None
    code_fail: str | None = None


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


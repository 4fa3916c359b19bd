"""Ratings and forms: a rated item's rubric scores, and a form's answers, each stored all or nothing, once.

``UNIQUE(session_id, task, question_index, metric)`` on ``ratings``: the identical call again returns the
stored rows; other scores (or another item) for a rated question raise :class:`~.records.AnswerConflict`.
A form's fields (``form_answers``) are stored with the task marked finished, in one transaction, the same way.

May import: the standard library and sibling store modules; no driver and no other evalkit module.
"""

from __future__ import annotations

from collections.abc import Mapping

from .core import StoreCore, retried
from .records import AnswerConflict, FormAnswer, Rating, now_iso
from .schema import COLUMNS, TABLE_ORDER


class RatingsMixin(StoreCore):
    """Ratings and forms (a part of :class:`evalkit.store.base.Store`)."""

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
                self._finish(conn, session_id, task, created_at)
        return [Rating(**{c: r[c] for c in COLUMNS["ratings"]}) for r in rows]

    @retried
    def ratings(self, session_id: str | None = None, task: str | None = None) -> list[Rating]:
        """Stored rubric rows in insertion order, optionally for one session and/or task."""
        return [Rating(**{c: r[c] for c in COLUMNS["ratings"]}) for r in self._rows("ratings", session_id, task)]

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
            self._finish(conn, session_id, task, created_at)
        order = {f: k for k, f in enumerate(wanted)}
        return sorted((FormAnswer(**{c: r[c] for c in COLUMNS["form_answers"]}) for r in rows),
                      key=lambda a: order.get(a.field, len(order)))

    @retried
    def form_answers(self, session_id: str | None = None, task: str | None = None) -> list[FormAnswer]:
        """Stored form answers (in :data:`TABLE_ORDER`), optionally of one session and/or task."""
        return [FormAnswer(**{c: r[c] for c in COLUMNS["form_answers"]})
                for r in self._rows("form_answers", session_id, task, TABLE_ORDER["form_answers"])]

"""Answers and the tries at check questions: storing each answer exactly once, and reading them back.

``UNIQUE(session_id, task, question_index)`` on ``evaluations``: writing the same answer again returns the
stored row (``created=False``); a *different* answer to an answered question raises
:class:`~.records.AnswerConflict` and is never overwritten. Every try at a tutorial or attention-check
question is kept in ``check_tries``.

May import: the standard library and sibling store modules; no driver and no other evalkit module.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from .core import StoreCore, retried
from .records import Answer, AnswerConflict, UnknownSession, now_iso
from .schema import COLUMNS, TABLE_ORDER

_ANSWER_COLUMNS = [c for c in COLUMNS["evaluations"] if c != "id"]
_INSERT_ANSWER = (f"INSERT INTO evaluations ({', '.join(_ANSWER_COLUMNS)}) "
                  f"VALUES ({', '.join('?' * len(_ANSWER_COLUMNS))})"
                  " ON CONFLICT (session_id, task, question_index) DO NOTHING RETURNING *")
_SPAN_COLUMNS = COLUMNS["spans"]
_INSERT_SPAN = f"INSERT INTO spans ({', '.join(_SPAN_COLUMNS)}) VALUES ({', '.join('?' * len(_SPAN_COLUMNS))})"


class AnswersMixin(StoreCore):
    """Answers and tries at check questions (a part of :class:`evalkit.store.base.Store`)."""

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
        spans: Sequence[Mapping[str, Any]] = (),
    ) -> Answer:
        """Store one answer, exactly once; returns the stored row.

        ``check`` ("tutorial" / "attention") and ``check_passed`` mark the answer to a check question (decided
        by :mod:`evalkit.checks` from the plan, never by the browser). ``spans`` (kind ``spans``): the answer's
        rows of the ``spans`` table (every column but the session, task, question and time, which are the
        answer's), written in the answer's transaction: both or neither.

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
        with self._write() if spans else self._conn() as conn:
            try:
                stored = self._exec(conn, _INSERT_ANSWER, [row[c] for c in _ANSWER_COLUMNS]).fetchall()
                # (all: SQLite finishes the statement only then)
            except Exception as exc:
                if self._is_foreign_key_error(exc):
                    raise UnknownSession(f"no session with token {session_id!r}") from None
                raise
            created = bool(stored)
            stored = stored[0] if stored else None
            if created and spans:
                fixed = {"session_id": session_id, "task": task, "question_index": question_index,
                         "created_at": row["created_at"]}
                self._exec_many(conn, _INSERT_SPAN, [[{**span, **fixed}[c] for c in _SPAN_COLUMNS] for span in spans])
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
    def spans(self, session_id: str | None = None, task: str | None = None) -> list[dict[str, Any]]:
        """Stored error spans (kind ``spans``) as dicts of the table's columns, in :data:`TABLE_ORDER`, optionally
        of one session and/or task."""
        return [dict(r) for r in self._rows("spans", session_id, task, TABLE_ORDER["spans"])]

    @retried
    def answered(self, session_id: str, task: str) -> set[int]:
        """Question indexes of ``task`` this session has answered (the source of truth for progress)."""
        with self._conn() as conn:
            rows = self._exec(conn, "SELECT question_index FROM evaluations WHERE session_id = ? AND task = ?",
                              (session_id, task)).fetchall()
        return {r["question_index"] for r in rows}

    @retried
    def answered_items(self, task: str) -> dict[str, set[str]]:
        """The item ids of the questions of ``task`` each session has answered, check questions included (one
        read: the progress of every participant through a fixed list)."""
        out: dict[str, set[str]] = {}
        with self._read() as conn:
            rows = self._exec(conn, "SELECT session_id, item_ids FROM evaluations WHERE task = ?", (task,)).fetchall()
        for r in rows:
            out.setdefault(r["session_id"], set()).update(json.loads(r["item_ids"] or "[]"))
        return out

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

"""Where a session stands: what it answered, rated, finished and holds in the queues, read in one snapshot.

The flow of the survey asks this on every page run (:meth:`ProgressMixin.snapshot`: the survey's state, the
session and its :class:`~.records.Progress` in one read transaction); finishing an open-ended block is
recorded here too.

May import: the standard library and sibling store modules; no driver and no other evalkit module.
"""

from __future__ import annotations

from typing import Any

from .core import StoreCore, retried
from .records import Progress, Session, UnknownSession, is_valid_token, now_iso
from .schema import SURVEY_STATES


class ProgressMixin(StoreCore):
    """Progress of a session (a part of :class:`evalkit.store.base.Store`)."""

    @retried
    def finish_task(self, session_id: str, task: str) -> None:
        """Record that the evaluator finished an open-ended block (e.g. chose "finish" after ratings)."""
        with self._conn() as conn:
            try:
                self._finish(conn, session_id, task, now_iso())
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

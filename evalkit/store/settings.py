"""Settings, the admin log and the study's own description: the survey's state, who changed what, the
registered study versions, the schema version and the data version a live page polls.

May import: the standard library and sibling store modules; no driver and no other evalkit module.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .core import StoreCore, retried
from .records import now_iso
from .schema import COLUMNS, SURVEY_STATES


class SettingsMixin(StoreCore):
    """Settings and the admin log (a part of :class:`evalkit.store.base.Store`)."""

    def schema_version(self) -> int:
        """The schema version stored in the database."""
        return int(self.get_setting("schema_version", "1") or 1)

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

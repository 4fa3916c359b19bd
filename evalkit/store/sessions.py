"""Sessions and invited participants: starting, finding, completing, abandoning and deleting sessions.

A session is one evaluator's run through the survey (its token is the URL's ``s``); its arrival number (the
order sessions start, kept in the settings) keys the balanced display orders and the queue's deal. A
session taken out (excluded, trashed, abandoned, deleted) gives its claims back to the k-judgments queues,
so :class:`SessionsMixin` builds on :class:`.claims.ClaimsMixin`. Invited participants are the ids and key
hashes of private links (``python -m evalkit invite``).

May import: the standard library and sibling store modules; no driver and no other evalkit module.
"""

from __future__ import annotations

import json
import secrets
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from .claims import ClaimsMixin
from .core import retried
from .records import Participant, ParticipantHasSession, Session, is_valid_token, new_completion_code, now_iso
from .schema import COLUMNS, RECORDED, SESSION_STATUSES, SESSION_TABLES, TABLE_ORDER


class SessionsMixin(ClaimsMixin):
    """Sessions and invited participants (a part of :class:`evalkit.store.base.Store`)."""

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

    @retried
    def get_session(self, session_id: object) -> Session | None:
        """The session with this token, or None (also for a malformed token)."""
        if not is_valid_token(session_id):
            return None
        with self._conn() as conn:
            row = self._exec(conn, "SELECT * FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
        return Session.from_row(row) if row else None

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

    # ------------------------------------------------------------------ invited participants

    def add_participants(self, participants: Iterable[Sequence[str | None]]) -> list[str]:
        """Store invited participants, given as ``(participant_id, key_hash, note)`` or ``(participant_id,
        key_hash, note, code_pass, code_fail)`` (the participant's own completion codes; None or "": the
        study's), in one transaction.

        An id that is already stored is left exactly as it is (its key hash and note unchanged: its link
        keeps working), also when another process invites it at the same moment. Returns the ids added, in
        the order given. Not retried after a dropped connection (a retry would report the ids it had just
        added as already there).
        """
        rows = [(str(p[0]), str(p[1]), str(p[2] or ""), *((p[3] or None, p[4] or None) if len(p) > 3 else (None, None)))
                for p in participants]
        for pid, key_hash, *_ in rows:
            if not pid or pid != pid.strip() or not key_hash:
                raise ValueError(f"a participant needs a non-empty id without surrounding spaces and a key hash, "
                                 f"got {pid!r}")
        added: list[str] = []
        created_at = now_iso()
        with self._write() as conn:
            for pid, key_hash, note, code_pass, code_fail in rows:
                got = self._exec(conn, "INSERT INTO participants (participant_id, key_hash, note, created_at, "
                                       "code_pass, code_fail) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (participant_id) "
                                       "DO NOTHING RETURNING participant_id",
                                 (pid, key_hash, note, created_at, code_pass, code_fail)).fetchall()
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

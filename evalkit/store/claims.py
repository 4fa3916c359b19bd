"""The k-judgments-per-item queue: registering a task's units, claiming them, expiring and giving back claims.

A task with ``judgments_per_item`` hands each unit (an item and its systems) to ``k`` evaluators: a session
claims a unit for a question (:meth:`ClaimsMixin.claim`), its claim expires if it is not answered in time,
and a session taken out gives its claims back (:meth:`ClaimsMixin.release_claims` and the helpers the
sessions' status changes use). ``queue_units.taken`` counts each unit's live and answered claims.

(Named ``claims``, not ``queue``: a module named like the standard library's :mod:`queue` in this folder would
shadow it for any script run from here, such as :mod:`.sqlite_reader`.)

May import: the standard library and sibling store modules; no driver and no other evalkit module.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Sequence
from typing import Any

from .core import StoreCore, retried
from .records import QueueStatus
from .schema import COLUMNS, RETIRED


def _answered(claim: str = "c") -> str:
    """SQL: the claim (table or alias ``claim``) has an answer: its session, task and question index in
    ``evaluations`` (one lookup in that table's unique index)."""
    return (f"EXISTS (SELECT 1 FROM evaluations e WHERE e.session_id = {claim}.session_id AND e.task = {claim}.task "
            f"AND e.question_index = {claim}.question_index)")


class ClaimsMixin(StoreCore):
    """The k-judgments-per-item queue (a part of :class:`evalkit.store.base.Store`)."""

    #: Seconds between two expiry sweeps of one task by one store object (see :meth:`claim`).
    sweep_every = 1.0

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
              now: float | None = None, prefer: str | None = None, only: bool = False) -> str | None:
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
        ``now``: seconds since the epoch (tests); the clock's time by default. ``only``: claim ``prefer`` or
        nothing (a moved campaign's history, :mod:`evalkit.pearmut_history`: the unit a user already judged).
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
            if unit is None and not only:
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

"""The k-judgments-per-item claim queue in the store, on both backends (SQLite file, real PostgreSQL server).

Semantics: a task registers its units once; each unit is claimed by k different sessions, least-judged first
(ties: registration order), never twice by one session; a claim is idempotent per question index; unanswered
claims expire and go back to the queue, answered ones never do. Races: threads with their own stores, two
processes, and many claimers for the last slot.
"""

from __future__ import annotations

import collections
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from evalkit.store import (
    SCHEMA_VERSION,
    Progress,
    QueueStatus,
    Store,
    UnknownSession,
    open_store,
)
from tests.test_store_contract import raw

ROOT = Path(__file__).resolve().parents[1]
HOUR = 3600.0


@pytest.fixture
def store(db_url: str) -> Store:
    s = open_store(db_url)
    yield s
    s.close()


def new_sessions(store: Store, n: int) -> list[str]:
    return [store.create_session(study_version="v").session_id for _ in range(n)]


def claims_per_unit(store: Store, task: str = "t") -> collections.Counter:
    """Live claims per unit, read from the table (not through the store's own counters)."""
    return collections.Counter(r["unit"] for r in store.table("claims") if r["task"] == task
                               and r["expired_at"] is None)


def test_add_queue_units_is_idempotent_and_keeps_the_first_order(store: Store) -> None:
    assert store.add_queue_units("t", ["c", "a", "b", "a"]) == 3  # a unit given twice counts once
    assert store.add_queue_units("t", ["a", "b", "c"]) == 0  # all there: remembered by its hash
    assert store.add_queue_units("t", ["a", "b", "c"]) == 0 and store.get_setting("queue:t")
    assert store.add_queue_units("t", ["d", "a"]) == 1
    assert store.add_queue_units("other", ["a"]) == 1  # another task's queue
    assert store.add_queue_units("t", []) == 0
    rows = [r for r in store.table("queue_units") if r["task"] == "t"]
    assert [r["unit"] for r in rows] == ["c", "a", "b", "d"] and {r["taken"] for r in rows} == {0}
    for bad in (["x", ""], ["x", 3], [None]):
        with pytest.raises(ValueError):
            store.add_queue_units("t", bad)
    with pytest.raises(ValueError):
        store.add_queue_units("", ["x"])
    assert store.queue_status("t", 2).units == 4
    assert store.is_empty()  # units alone are not study data (the app registers them when it starts)


def test_least_judged_first_in_registration_order(store: Store) -> None:
    store.add_queue_units("t", [f"u{i}" for i in range(4)])
    a, b, c, d, e = new_sessions(store, 5)
    assert [store.claim("t", s, 0, k=3, expire_seconds=HOUR) for s in (a, b, c, d)] == ["u0", "u1", "u2", "u3"]
    assert store.claim("t", e, 0, k=3, expire_seconds=HOUR) == "u0"  # all at 1 claim: the first registered
    assert store.claim("t", a, 1, k=3, expire_seconds=HOUR) == "u1"  # u0 has 2 now, and a has had it
    assert store.claim("t", b, 1, k=3, expire_seconds=HOUR) == "u2"  # never its own u1
    assert claims_per_unit(store) == {"u0": 2, "u1": 2, "u2": 2, "u3": 1}


def test_a_session_never_gets_a_unit_twice_and_the_k_limit_holds(store: Store) -> None:
    units = [f"u{i}" for i in range(5)]
    store.add_queue_units("t", units)
    sessions = new_sessions(store, 3)
    got: dict[str, list[str | None]] = {}
    for s in sessions:
        got[s] = [store.claim("t", s, i, k=2, expire_seconds=HOUR) for i in range(7)]
    first, second, third = (got[s] for s in sessions)
    assert sorted(first[:5]) == units and first[5:] == [None, None]  # every unit once, then none left for it
    assert sorted(second[:5]) == units and second[5:] == [None, None]
    assert third == [None] * 7  # every unit has its k = 2 claims
    assert claims_per_unit(store) == dict.fromkeys(units, 2)
    status = store.queue_status("t", 2)
    assert status == QueueStatus(units=5, judged=0, live=10, open_slots=0, full=True,
                                 judgments={0: 5, 1: 0, 2: 0})
    assert store.queue_status("t", 3).open_slots == 5 and not store.queue_status("t", 3).full


def test_a_preferred_unit_is_claimed_when_it_has_room_else_the_least_judged(store: Store) -> None:
    """``prefer`` (the queue's deal): that unit if it has fewer than k claims and the session never had it;
    otherwise the least-judged pick, as without it. A rerun returns the question's claim whatever is preferred."""
    store.add_queue_units("t", [f"u{i}" for i in range(4)])
    a, b, c = new_sessions(store, 3)
    assert store.claim("t", a, 0, k=2, expire_seconds=HOUR, prefer="u3") == "u3"  # not the least-judged u0
    assert store.claim("t", a, 0, k=2, expire_seconds=HOUR, prefer="u1") == "u3"  # (a rerun: the same claim)
    assert store.claim("t", b, 0, k=2, expire_seconds=HOUR, prefer="u3") == "u3"  # u3 now has its k = 2
    assert store.claim("t", c, 0, k=2, expire_seconds=HOUR, prefer="u3") == "u0"  # full: the least judged
    assert store.claim("t", a, 1, k=2, expire_seconds=HOUR, prefer="u3") == "u1"  # a had it (and it is full)
    assert store.claim("t", b, 1, k=2, expire_seconds=HOUR, prefer="nope") == "u2"  # not a unit: least judged
    assert claims_per_unit(store) == {"u3": 2, "u0": 1, "u1": 1, "u2": 1}
    assert {r["unit"]: r["taken"] for r in store.table("queue_units")} == {"u0": 1, "u1": 1, "u2": 1, "u3": 2}


def test_add_queue_units_can_retire_the_units_left_out(store: Store) -> None:
    store.add_queue_units("t", ["a", "b", "c"])
    (s,) = new_sessions(store, 1)
    assert store.claim("t", s, 0, k=1, expire_seconds=HOUR, prefer="b") == "b"  # an unanswered claim of b
    assert store.add_queue_units("t", ["a", "c", "d"]) == 1  # plain: b stays
    assert store.queue_status("t", 1).units == 4
    # the same list, now retiring: not skipped for the plain call's remembered hash; b retired, its claim dropped
    assert store.add_queue_units("t", ["a", "c", "d"], retire_missing=True) == 0
    status = store.queue_status("t", 1)
    assert (status.units, status.live) == (3, 0)
    assert store.add_queue_units("t", ["a", "c", "d"], retire_missing=True) == 0  # remembered: nothing changes
    assert store.add_queue_units("t", ["c", "d"], retire_missing=True) == 0
    assert store.queue_status("t", 1).units == 2  # a retired too
    assert store.progress(s).claims == {}
    assert store.claim("t", s, 0, k=1, expire_seconds=HOUR, prefer="b") == "c"  # not handed out while retired
    assert store.add_queue_units("t", ["a", "b", "c", "d"], retire_missing=True) == 0  # the file has them again:
    assert {r["unit"]: r["taken"] for r in store.table("queue_units")} == {"a": 0, "b": 0, "c": 1, "d": 0}  # back
    assert store.claim("t", s, 1, k=1, expire_seconds=HOUR, prefer="b") == "b"


def test_a_claim_is_idempotent_per_question(store: Store) -> None:
    store.add_queue_units("t", ["u0", "u1", "u2"])
    a, b = new_sessions(store, 2)
    assert store.claim("t", a, 4, k=1, expire_seconds=HOUR) == "u0"
    for _ in range(3):  # page reruns
        assert store.claim("t", a, 4, k=1, expire_seconds=HOUR) == "u0"
    assert store.claim("t", a, 5, k=1, expire_seconds=HOUR) == "u1"
    assert store.claim("t", b, 4, k=1, expire_seconds=HOUR) == "u2"  # another session's index 4 is its own
    assert claims_per_unit(store) == {"u0": 1, "u1": 1, "u2": 1}
    assert store.progress(a).claims == {"t": {4: "u0", 5: "u1"}}
    assert store.progress(b).claims == {"t": {4: "u2"}}
    state, _, progress = store.snapshot(a)
    assert state == "open" and progress.claims == {"t": {4: "u0", 5: "u1"}}


def test_tasks_have_separate_queues(store: Store) -> None:
    store.add_queue_units("t", ["x"])
    store.add_queue_units("s", ["x"])
    (a,) = new_sessions(store, 1)
    assert store.claim("t", a, 0, k=1, expire_seconds=HOUR) == "x"
    assert store.claim("s", a, 0, k=1, expire_seconds=HOUR) == "x"
    assert store.claim("nothing", a, 0, k=1, expire_seconds=HOUR) is None  # a task without units
    assert store.progress(a).claims == {"t": {0: "x"}, "s": {0: "x"}}


def test_unanswered_claims_expire_and_go_back_to_the_queue(store: Store) -> None:
    store.add_queue_units("t", ["u0", "u1"])
    a, b, c, d = new_sessions(store, 4)
    assert store.claim("t", a, 0, k=1, expire_seconds=60, now=1000.0) == "u0"
    assert store.claim("t", b, 0, k=1, expire_seconds=60, now=1030.0) == "u1"
    assert store.claim("t", c, 0, k=1, expire_seconds=60, now=1050.0) is None  # full, nothing expired yet
    assert store.claim("t", c, 0, k=1, expire_seconds=60, now=1070.0) == "u0"  # a's claim (70 s old) expired
    assert store.claim("t", d, 0, k=1, expire_seconds=60, now=1070.0) is None  # b's (40 s old) did not
    assert store.progress(a).claims == {} and store.progress(c).claims == {"t": {0: "u0"}}
    expired = [r for r in store.table("claims") if r["session_id"] == a]
    assert len(expired) == 1 and expired[0]["expired_at"] == 1070.0  # kept, marked, for the record
    assert store.queue_status("t", 1) == QueueStatus(units=2, judged=0, live=2, open_slots=0, full=True,
                                                     judgments={0: 2, 1: 0})
    # a comes back to its question after its claim was given away: it gets its unit again (it may have seen
    # it), which then has k + 1 claims; the pick never hands out such a unit
    assert store.claim("t", a, 0, k=1, expire_seconds=60, now=1080.0) == "u0"
    assert claims_per_unit(store) == {"u0": 2, "u1": 1} and store.progress(a).claims == {"t": {0: "u0"}}
    # a never gets a unit it claimed before, even an expired one: after b's claim expires, a gets u1
    assert store.claim("t", a, 1, k=1, expire_seconds=60, now=1200.0) == "u1"


def test_answered_claims_never_expire(store: Store) -> None:
    store.add_queue_units("t", ["u0"])
    a, b = new_sessions(store, 2)
    assert store.claim("t", a, 0, k=1, expire_seconds=60, now=0.0) == "u0"
    store.record_answer(a, "t", 0, "A")
    for at in (100.0, 10_000.0):  # the sweep marks it answered once, and never expires it
        assert store.claim("t", b, 0, k=1, expire_seconds=60, now=at) is None
    row = next(r for r in store.table("claims") if r["session_id"] == a)
    assert row["expired_at"] is None and row["answered"] == 1
    assert store.queue_status("t", 1) == QueueStatus(units=1, judged=1, live=0, open_slots=0, full=True,
                                                     judgments={0: 0, 1: 1})
    assert store.progress(a).claims == {"t": {0: "u0"}} and store.release_claims(a) == 0


def test_an_answer_stored_after_its_claim_expired_is_counted(store: Store) -> None:
    store.add_queue_units("t", ["u0", "u1"])
    a, b = new_sessions(store, 2)
    assert store.claim("t", a, 0, k=1, expire_seconds=60, now=0.0) == "u0"
    assert store.claim("t", b, 0, k=1, expire_seconds=60, now=100.0) == "u0"  # a's claim expired
    store.record_answer(a, "t", 0, "A")  # a answers anyway (its page still showed u0)
    assert store.claim("t", a, 1, k=1, expire_seconds=60, now=101.0) == "u1"  # a's claim counts again
    assert claims_per_unit(store) == {"u0": 2, "u1": 1}
    status = store.queue_status("t", 1)
    assert status.judged == 1 and status.live == 2 and status.full


def test_release_claims(store: Store) -> None:
    store.add_queue_units("t", ["u0", "u1", "u2"])
    store.add_queue_units("s", ["v0"])
    a, b = new_sessions(store, 2)
    for i in range(3):
        store.claim("t", a, i, k=1, expire_seconds=HOUR)
    store.claim("s", a, 0, k=1, expire_seconds=HOUR)
    store.record_answer(a, "t", 0, "A")
    assert store.claim("t", b, 0, k=1, expire_seconds=HOUR) is None
    assert store.release_claims(a) == 3  # u1, u2 and v0; the answered u0 stays
    assert store.release_claims(a) == 0
    assert store.progress(a).claims == {"t": {0: "u0"}}
    assert store.queue_status("t", 1) == QueueStatus(units=3, judged=1, live=0, open_slots=2, full=False,
                                                     judgments={0: 2, 1: 1})
    assert [store.claim("t", b, i, k=1, expire_seconds=HOUR) for i in range(3)] == ["u1", "u2", None]
    assert store.claim("s", b, 0, k=1, expire_seconds=HOUR) == "v0"
    with pytest.raises(UnknownSession):
        store.release_claims("f" * 32)


def test_delete_session_gives_its_slots_back(store: Store) -> None:
    store.add_queue_units("t", ["u0", "u1"])
    a, b = new_sessions(store, 2)
    assert store.claim("t", a, 0, k=1, expire_seconds=HOUR) == "u0"
    assert store.claim("t", a, 1, k=1, expire_seconds=HOUR) == "u1"
    store.record_answer(a, "t", 0, "A")
    store.release_claims(a)  # u1 released: an expired row, deleted with the session too
    counts = store.delete_session(a, actor="researcher")
    assert counts["claims"] == 2 and counts["evaluations"] == 1
    assert store.table("claims") == [] and store.queue_status("t", 1).open_slots == 2
    assert [store.claim("t", b, i, k=1, expire_seconds=HOUR) for i in range(3)] == ["u0", "u1", None]


def test_queue_status_figures(store: Store) -> None:
    store.add_queue_units("t", [f"u{i}" for i in range(4)])
    sessions = new_sessions(store, 3)
    for n, s in enumerate(sessions):  # session n claims n + 1 units and answers the first
        for i in range(n + 1):
            store.claim("t", s, i, k=2, expire_seconds=HOUR)
        store.record_answer(s, "t", 0, "A")
    # claims: s0 u0; s1 u1, u2; s2 u3, u0, u1 -> answered u0 (s0), u1 (s1), u3 (s2); live u2, u0, u1
    assert claims_per_unit(store) == {"u0": 2, "u1": 2, "u2": 1, "u3": 1}
    assert store.queue_status("t", 2) == QueueStatus(units=4, judged=3, live=3, open_slots=2, full=False,
                                                     judgments={0: 1, 1: 3, 2: 0})
    assert store.queue_status("none", 3) == QueueStatus(units=0, judged=0, live=0, open_slots=0, full=True,
                                                        judgments={0: 0, 1: 0, 2: 0, 3: 0})
    with pytest.raises(ValueError):
        store.queue_status("t", 0)


def test_bad_input_and_unknown_sessions(store: Store) -> None:
    store.add_queue_units("t", ["u0"])
    (a,) = new_sessions(store, 1)
    with pytest.raises(UnknownSession):
        store.claim("t", "f" * 32, 0, k=1, expire_seconds=HOUR)
    for bad in ({"question_index": -1}, {"question_index": True}, {"k": 0}, {"k": 1.5}, {"expire_seconds": 0}):
        args = {"question_index": 0, "k": 1, "expire_seconds": HOUR} | bad
        with pytest.raises(ValueError):
            store.claim("t", a, args["question_index"], k=args["k"], expire_seconds=args["expire_seconds"])
    assert store.table("claims") == []


def test_progress_without_claims_keeps_its_old_constructor() -> None:
    assert Progress(answered={}, rated={}, finished=set()).claims == {}


def test_a_version_5_database_gets_the_queue_tables(db_url: str) -> None:
    with open_store(db_url) as store:
        sid = store.create_session(study_version="v").session_id
    raw(db_url, "DROP TABLE claims")
    raw(db_url, "DROP TABLE queue_units")
    raw(db_url, "ALTER TABLE participants DROP COLUMN code_pass")  # (version 10)
    raw(db_url, "ALTER TABLE participants DROP COLUMN code_fail")
    raw(db_url, "UPDATE settings SET value = '5' WHERE key = 'schema_version'")
    with open_store(db_url) as store:
        assert store.schema_version() == SCHEMA_VERSION >= 6
        store.add_queue_units("t", ["u0"])
        assert store.claim("t", sid, 0, k=1, expire_seconds=HOUR) == "u0"


def test_copy_carries_the_queue(tmp_path: Path, db_url: str) -> None:
    with open_store(tmp_path / "pilot.sqlite") as src:
        src.add_queue_units("t", ["u0", "u1", "u2"])
        a, b = new_sessions(src, 2)
        src.claim("t", a, 0, k=1, expire_seconds=60, now=0.0)
        src.claim("t", b, 0, k=1, expire_seconds=60, now=1.0)  # u1
        src.record_answer(b, "t", 0, "A")
        assert src.claim("t", b, 1, k=1, expire_seconds=60, now=100.0) == "u0"  # a's claim expired
        with open_store(db_url) as dst:
            dst.import_from(src)
            for table in ("queue_units", "claims"):
                assert dst.table(table) == src.table(table), table
            assert dst.queue_status("t", 1) == src.queue_status("t", 1)
            c = dst.create_session(study_version="v").session_id
            assert dst.claim("t", c, 0, k=1, expire_seconds=60, now=101.0) == "u2"  # the counters came along
            assert dst.claim("t", c, 1, k=1, expire_seconds=60, now=101.0) is None


def test_sqlite_plans_use_the_indexes(tmp_path: Path) -> None:
    """The pick walks (task, taken, position) and the sweep the partial index of live, unanswered claims:
    no scan over a task's units or claims (what keeps a claim flat from 1k to 100k units)."""
    path = tmp_path / "db.sqlite"
    open_store(path).close()
    conn = sqlite3.connect(path)
    try:
        def plan(sql: str, args: tuple) -> str:
            return " | ".join(r[-1] for r in conn.execute("EXPLAIN QUERY PLAN " + sql, args))

        pick = plan("SELECT unit FROM queue_units q WHERE task = ? AND taken < ? AND NOT EXISTS (SELECT 1 FROM "
                    "claims c WHERE c.session_id = ? AND c.task = q.task AND c.unit = q.unit) ORDER BY taken, "
                    "position LIMIT 1", ("t", 3, "s"))
        assert "USING INDEX queue_units_pick" in pick and "TEMP B-TREE" not in pick, pick
        dealt = plan("SELECT unit FROM queue_units q WHERE q.task = ? AND q.unit = ? AND q.taken < ? AND NOT EXISTS "
                     "(SELECT 1 FROM claims c WHERE c.session_id = ? AND c.task = q.task AND c.unit = q.unit) "
                     "LIMIT 1", ("t", "u", 3, "s"))
        assert "SEARCH q USING INDEX sqlite_autoindex_queue_units_1 (task=? AND unit=?)" in dealt, dealt
        retire = plan("DELETE FROM claims WHERE task = ? AND unit = ? AND expired_at IS NULL", ("t", "u"))
        assert "USING INDEX claims_unit" in retire, retire
        sweep = plan("UPDATE claims SET expired_at = ? WHERE task = ? AND expired_at IS NULL AND answered = 0 "
                     "AND claimed_at < ?", (1.0, "t", 0.0))
        assert "USING INDEX claims_sweep" in sweep, sweep
    finally:
        conn.close()


# ----------------------------------------------------------------------------- races


def claim_until_none(location: str, sessions: list[str], task: str, k: int,
                     barrier: threading.Barrier | None = None) -> list[tuple[str, str]]:
    """Each session claims question after question until none is left for it; its own Store object."""
    got = []
    with open_store(location) as own:
        if barrier is not None:
            barrier.wait()
        for sid in sessions:
            i = 0
            while (unit := own.claim(task, sid, i, k=k, expire_seconds=HOUR)) is not None:
                got.append((sid, unit))
                i += 1
    return got


def check_exactly_k(store: Store, got: list[tuple[str, str]], units: list[str], k: int) -> None:
    assert len(got) == len(set(got)), "no session twice on one unit"
    per_unit = collections.Counter(unit for _, unit in got)
    assert per_unit == dict.fromkeys(units, k)
    assert claims_per_unit(store) == per_unit  # the table agrees with what the claimers were told
    assert {(r["session_id"], r["unit"]) for r in store.table("claims")} == set(got)
    assert {r["unit"]: r["taken"] for r in store.table("queue_units")} == dict.fromkeys(units, k)
    assert store.queue_status("t", k).full


def test_sixteen_threads_with_their_own_stores_fill_every_unit_exactly_k_times(store: Store, db_url: str) -> None:
    units = [f"u{i}" for i in range(25)]
    store.add_queue_units("t", units)
    sessions = new_sessions(store, 32)
    results: list[list[tuple[str, str]]] = [[] for _ in range(16)]
    barrier = threading.Barrier(16, timeout=60)

    def work(n: int) -> None:
        results[n] = claim_until_none(db_url, sessions[2 * n:2 * n + 2], "t", 3, barrier)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    check_exactly_k(store, [pair for part in results for pair in part], units, 3)


CLAIMER = """
import json, sys
sys.path.insert(0, sys.argv[3])
from tests.test_store_queue import claim_until_none
print(json.dumps(claim_until_none(sys.argv[1], sys.argv[2].split(","), "t", 3)))
"""


def test_two_processes_fill_every_unit_exactly_k_times(store: Store, db_url: str) -> None:
    units = [f"u{i}" for i in range(30)]
    store.add_queue_units("t", units)
    sessions = new_sessions(store, 8)
    procs = [subprocess.Popen([sys.executable, "-c", CLAIMER, db_url, ",".join(part), str(ROOT)], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for part in (sessions[0::2], sessions[1::2])]
    got = []
    import json

    for p in procs:
        out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
        got += [tuple(pair) for pair in json.loads(out)]
    check_exactly_k(store, got, units, 3)


def test_the_last_slot_goes_to_exactly_one_of_many(store: Store, db_url: str) -> None:
    store.add_queue_units("t", ["u0"])
    first, *racers = new_sessions(store, 13)
    assert store.claim("t", first, 0, k=2, expire_seconds=HOUR) == "u0"  # one slot left
    barrier = threading.Barrier(len(racers), timeout=60)
    won: list[str | None] = [None] * len(racers)

    def race(n: int) -> None:
        with open_store(db_url) as own:
            barrier.wait()
            won[n] = own.claim("t", racers[n], 0, k=2, expire_seconds=HOUR)

    threads = [threading.Thread(target=race, args=(n,)) for n in range(len(racers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert won.count("u0") == 1 and won.count(None) == len(racers) - 1
    assert claims_per_unit(store) == {"u0": 2}


def test_racers_preferring_one_unit_fill_it_to_k_and_the_rest_go_to_the_least_judged(store: Store,
                                                                                     db_url: str) -> None:
    """Twelve claimers at once, all preferring u0 with k = 3: on PostgreSQL they wait for the unit's row
    instead of skipping it (a deal's unit is meant for them), so u0 gets exactly 3 and the nine others each
    get a unit by the least-judged pick (3, 2, 2, 2 over the four others); nothing is over k."""
    store.add_queue_units("t", [f"u{i}" for i in range(5)])
    racers = new_sessions(store, 12)
    barrier = threading.Barrier(len(racers), timeout=60)
    won: list[str | None] = [None] * len(racers)

    def race(n: int) -> None:
        with open_store(db_url) as own:
            barrier.wait()
            won[n] = own.claim("t", racers[n], 0, k=3, expire_seconds=HOUR, prefer="u0")

    threads = [threading.Thread(target=race, args=(n,)) for n in range(len(racers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert None not in won and won.count("u0") == 3
    per_unit = claims_per_unit(store)
    assert per_unit["u0"] == 3 and sorted(per_unit[u] for u in ("u1", "u2", "u3", "u4")) == [2, 2, 2, 3]
    assert {r["unit"]: r["taken"] for r in store.table("queue_units")} == per_unit  # least judged first


def test_claims_releases_and_expiries_racing_keep_the_counts_true(store: Store, db_url: str) -> None:
    """Claimers, releasers and expiry sweeps at once (each thread its own store): nothing deadlocks, every
    unit's count equals its live claims, and once the sessions end (the done screen's ``release_claims``) every
    answer is counted. (A sweep may expire a claim between its claim and its answer; the session's next claim
    makes it live again if that sweep has committed by then, and its release does in any case; meanwhile its
    unit can be handed out once more, to k + 1.)"""
    units = [f"u{i}" for i in range(12)]
    store.add_queue_units("t", units)
    sessions = new_sessions(store, 24)
    errors: list[BaseException] = []
    barrier = threading.Barrier(8, timeout=60)

    def work(n: int) -> None:
        try:
            with open_store(db_url) as own:
                barrier.wait()
                for j, sid in enumerate(sessions[3 * n:3 * n + 3]):
                    for i in range(4):
                        # every other thread claims "later", so its sweep expires the others' older claims
                        at = 1000.0 + 100 * (n % 2) + j + i
                        if own.claim("t", sid, i, k=2, expire_seconds=50, now=at) is not None and i == 1:
                            own.record_answer(sid, "t", 1, "A")
                    if j == 1:
                        own.release_claims(sid, now=2000.0)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and not any(t.is_alive() for t in threads)
    def assert_counts_are_live_claims() -> None:
        live = claims_per_unit(store)
        assert {r["unit"]: r["taken"] for r in store.table("queue_units")} == {u: live.get(u, 0) for u in units}

    assert_counts_are_live_claims()
    # every answer is counted as a judgment once the sessions end, also one whose claim a sweep expired in the
    # moment between the claim and the answer (PostgreSQL: the sweep's snapshot did not see the answer yet, and
    # it committed after the session's last claim read its claims: about 1 run in 15 before the release here)
    for sid in sessions:
        store.release_claims(sid, now=3000.0)
    assert_counts_are_live_claims()
    assert store.queue_status("t", 2).judged == len(store.answers())


# ----------------------------------------------------------------------------- abandoned sessions (issue 25)


def test_sessions_with_nothing_recorded_are_abandoned_and_give_back_claims_and_arrivals(store: Store) -> None:
    """An orphan (its browser never got the token) holds a claim and an arrival: after the idle time it is marked
    abandoned in one transaction, its claim goes back to the queue, its arrival goes to the next session, and its
    participant id may start again; sessions with something recorded, completed ones and young ones stay."""
    from datetime import UTC, datetime, timedelta

    store.add_queue_units("t", ["u1", "u2"])
    worked = store.create_session(study_version="v", evaluator_name="worked")  # arrival 0
    orphan = store.create_session(study_version="v", external_id="PID7")  # arrival 1
    done = store.create_session(study_version="v")  # arrival 2
    assert store.claim("t", orphan.session_id, 0, k=1, expire_seconds=HOUR) == "u1"
    store.finish_task(worked.session_id, "form")  # something recorded
    store.complete_session(done.session_id)
    assert store.abandon_idle(3600) == []  # nobody is an hour old yet
    later = datetime.now(UTC) + timedelta(hours=2)
    young = store.create_session(study_version="v")  # arrival 3; started "now", an hour is not over at `later - 2h`
    assert store.abandon_idle(3600, now=later - timedelta(minutes=90)) == []
    assert sorted(store.abandon_idle(3600, now=later)) == sorted([orphan.session_id, young.session_id])
    assert store.get_session(orphan.session_id).status == "abandoned"
    assert store.get_session(worked.session_id).status == "active"
    assert store.get_session(done.session_id).status == "completed"
    assert store.queue_status("t", 1).live == 0  # the orphan's claim is back
    assert [e["detail"]["to"] for e in store.admin_log() if e["action"] == "session_status"] == ["abandoned"] * 2
    assert store.find_session("PID7") is None  # the participant may start again
    again = store.create_session(study_version="v", external_id="PID7", one_per_participant=True)
    assert again.meta["arrival"] == 1  # the lowest arrival given back first
    assert store.create_session(study_version="v").meta["arrival"] == 3  # then the young one's
    assert store.create_session(study_version="v").meta["arrival"] == 4  # then counting on, no gap, no repeat
    assert store.abandon_idle(3600, now=later - timedelta(minutes=90)) == []  # the new ones are young
    assert store.get_session(orphan.session_id).status == "abandoned"
    assert store.claim("t", again.session_id, 0, k=1, expire_seconds=HOUR) == "u1"


def test_an_abandoned_session_with_an_answer_after_all_is_revived_and_arrivals_stay_dense(store: Store) -> None:
    """An evaluator who kept a question open past the idle time, then answered: the answer is stored, and the next
    page run revives the session (active again, its arrival taken back when nobody took it). Trashing and restoring
    sessions never repeats or skips an arrival (they are counted apart from the sessions)."""
    from datetime import UTC, datetime, timedelta

    later = datetime.now(UTC) + timedelta(hours=2)
    kept, slow = (store.create_session(study_version="v") for _ in range(2))  # arrivals 0, 1
    store.finish_task(kept.session_id, "form")
    assert store.abandon_idle(3600, now=later) == [slow.session_id]
    assert store.revive_abandoned(slow.session_id) is None  # nothing recorded: it stays abandoned
    store.record_answer(slow.session_id, "t", 0, "A")  # the click on the question left open
    revived = store.revive_abandoned(slow.session_id)
    assert revived is not None and revived.status == "active" and revived.meta["arrival"] == 1
    assert store.revive_abandoned(kept.session_id).status == "active"  # (not abandoned: as it is)
    assert store.create_session(study_version="v").meta["arrival"] == 2  # 1 is held again: not given out
    assert [e["detail"]["to"] for e in store.admin_log() if e["action"] == "session_status"] == ["abandoned",
                                                                                                "active"]
    store.set_session_status(kept.session_id, "trashed", actor="test")
    assert store.create_session(study_version="v").meta["arrival"] == 3
    store.set_session_status(kept.session_id, "active", actor="test")
    assert store.create_session(study_version="v").meta["arrival"] == 4

"""The storage contract, run against both backends (SQLite file, real PostgreSQL server).

Every test takes ``db_url``: a fresh SQLite path, then a fresh database on the PostgreSQL server the tests
start themselves (tests/pg.py). The same behaviour is required of both: sessions, exactly-once answers and
ratings, conflicts, settings, the admin log, deletes, the data version, columnar reads, migrations,
concurrency (16 threads, two processes) and a writer killed with SIGKILL.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg
import pytest

from evalkit.store import (
    SCHEMA_VERSION,
    AnswerConflict,
    ForKinds,
    JsonField,
    ParticipantHasSession,
    Sampled,
    Store,
    StoreError,
    UnknownSession,
    is_postgres,
    is_valid_token,
    open_store,
)

ROOT = Path(__file__).resolve().parents[1]


def raw(db_url: str, sql: str) -> list[tuple]:
    """Run SQL on the database directly, outside evalkit (as a researcher or another tool would)."""
    if is_postgres(db_url):
        with psycopg.connect(db_url, autocommit=True) as conn:
            cur = conn.execute(sql)
            return cur.fetchall() if cur.description else []
    conn = sqlite3.connect(db_url, isolation_level=None)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


@pytest.fixture
def store(db_url: str) -> Store:
    s = open_store(db_url)
    yield s
    s.close()


def test_sessions(store: Store) -> None:
    a = store.create_session(study_version="v1", evaluator_name="  Ada ", user_agent="UA")
    time.sleep(0.002)  # start order is to the millisecond (ties: by token)
    b = store.create_session(study_version="v1", external_id="PID123", seed=0xFFFFFFFF)
    assert is_valid_token(a.session_id) and a.session_id != b.session_id
    assert a.evaluator_name == "Ada" and a.status == "active" and 0 <= a.seed < 2**32
    assert b.seed == 0xFFFFFFFF and b.external_id == "PID123"  # an unsigned 32-bit seed fits on both
    assert store.get_session(a.session_id) == a and store.get_session(b.session_id) == b
    for bad in ("", "nope", "0" * 31, "G" * 32, None, 42, a.session_id.upper(), "0" * 32):
        assert store.get_session(bad) is None
    done = store.complete_session(a.session_id)
    assert done.status == "completed" and done.completed_at and len(done.completion_code) == 10
    assert store.complete_session(a.session_id).completion_code == done.completion_code  # idempotent
    assert [s.session_id for s in store.sessions("completed")] == [a.session_id]
    assert [s.session_id for s in store.sessions()] == [a.session_id, b.session_id]  # start order
    assert store.find_session("PID123") == b and store.find_session("nobody") is None
    excluded = store.set_session_status(b.session_id, "excluded", actor="admin")
    assert excluded.status == "excluded"
    assert store.admin_log()[-1]["detail"] == {"session_id": b.session_id, "from": "active", "to": "excluded"}
    with pytest.raises(ValueError):
        store.set_session_status(b.session_id, "deleted")
    with pytest.raises(UnknownSession):
        store.complete_session("f" * 32)
    codes = {store.complete_session(store.create_session(study_version="v").session_id).completion_code
             for _ in range(30)}
    assert len(codes) == 30


def test_record_answer_is_idempotent_and_refuses_overwrites(store: Store) -> None:
    s = store.create_session(study_version="v")
    first = store.record_answer(s.session_id, "turing", 0, "B", kind="triplet", review_source="real",
                                domain="laptop", time_spent_ms=5120, sources=["cera", "real", "heuristic"],
                                item_ids=["c/1", "r/2", "h/3"], matched=True, slot=2)
    assert first.created and first.review_source == "real" and first.sources == ("cera", "real", "heuristic")
    assert first.matched is True and first.slot == 2 and first.item_ids == ("c/1", "r/2", "h/3")
    again = store.record_answer(s.session_id, "turing", 0, "B", time_spent_ms=9999)
    assert not again.created and again.id == first.id and again.time_spent_ms == 5120
    with pytest.raises(AnswerConflict, match="already answered with 'B'"):
        store.record_answer(s.session_id, "turing", 0, "C")
    assert [a.response for a in store.answers(s.session_id)] == ["B"]
    store.record_answer(s.session_id, "turing", 1, "A")
    store.record_answer(s.session_id, "pairwise", 0, "35", detail={"button": "accept"})
    with pytest.raises(AnswerConflict):
        store.record_answer(s.session_id, "pairwise", 0, "35", detail={"button": "reject"})
    assert store.answered(s.session_id, "turing") == {0, 1}
    assert store.answered(s.session_id, "pairwise") == {0}
    assert len(store.answers()) == 3 and len(store.answers(task="turing")) == 2
    assert store.progress(s.session_id).answered == {"turing": {0, 1}, "pairwise": {0}}


def test_record_answer_rejects_bad_input(store: Store) -> None:
    s = store.create_session(study_version="v")
    with pytest.raises(UnknownSession):
        store.record_answer("a" * 32, "turing", 0, "A")
    with pytest.raises(ValueError):
        store.record_answer(s.session_id, "turing", -1, "A")
    with pytest.raises(ValueError):
        store.record_answer(s.session_id, "turing", 0, "")
    with pytest.raises(UnknownSession):
        store.finish_task("a" * 32, "turing")
    assert store.answers() == []
    store.record_answer(s.session_id, "turing", 0, "A")  # the connection is still usable after the refusals
    assert len(store.answers()) == 1


def test_record_rating_all_or_nothing_and_once(store: Store) -> None:
    s = store.create_session(study_version="v")
    rows = store.record_rating(s.session_id, "novelty", 0, "paper1", {"familiarity": 4, "specificity": 3},
                               comments={"specificity": " vague "}, comment="nice", time_spent_ms=100)
    assert [(r.metric, r.score, r.comment) for r in rows] == [
        ("familiarity", 4, ""), ("specificity", 3, "vague"), ("comment", None, "nice")]
    again = store.record_rating(s.session_id, "novelty", 0, "paper1", {"familiarity": 4, "specificity": 3},
                                comments={"specificity": "vague"}, comment="nice")
    assert [r.id for r in again] == [r.id for r in rows]
    with pytest.raises(AnswerConflict):
        store.record_rating(s.session_id, "novelty", 0, "paper1", {"familiarity": 5, "specificity": 3})
    with pytest.raises(AnswerConflict):
        store.record_rating(s.session_id, "novelty", 0, "paper2", {"familiarity": 4, "specificity": 3},
                            comments={"specificity": "vague"}, comment="nice")
    with pytest.raises(ValueError):
        store.record_rating(s.session_id, "novelty", 1, "paper2", {"familiarity": "4"})  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        store.record_rating(s.session_id, "novelty", 1, "paper2", {})
    with pytest.raises(UnknownSession):
        store.record_rating("b" * 32, "novelty", 0, "paper1", {"x": 1})
    assert len(store.ratings()) == 3
    assert store.rated_items(s.session_id, "novelty") == {0: "paper1"}
    store.record_rating(s.session_id, "novelty", 1, "paper2", {"familiarity": 2}, finish=True)
    assert store.progress(s.session_id).finished == {"novelty"}
    assert store.progress(s.session_id).rated == {"novelty": {0: "paper1", 1: "paper2"}}


def test_save_and_finish_is_one_transaction(db_url: str, store: Store) -> None:
    sid = store.create_session(study_version="v").session_id
    if is_postgres(db_url):  # make the task_status insert fail, as a crash between two writes would
        raw(db_url, "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'boom'; "
                    "END $$; CREATE TRIGGER fail BEFORE INSERT ON task_status FOR EACH ROW EXECUTE FUNCTION boom()")
    else:
        raw(db_url, "CREATE TRIGGER fail BEFORE INSERT ON task_status BEGIN SELECT RAISE(ABORT, 'boom'); END")
    with pytest.raises(Exception, match="boom"):
        store.record_rating(sid, "novelty", 0, "p1", {"clarity": 4}, finish=True)
    assert store.ratings(sid) == []  # neither the rating ...
    assert store.progress(sid).finished == set()  # ... nor the finish
    raw(db_url, "DROP TRIGGER fail ON task_status" if is_postgres(db_url) else "DROP TRIGGER fail")
    store.record_rating(sid, "novelty", 0, "p1", {"clarity": 4}, finish=True)
    assert len(store.ratings(sid)) == 1 and store.progress(sid).finished == {"novelty"}


def test_settings_survey_state_admin_log_and_study_descriptions(db_url: str, store: Store) -> None:
    assert store.survey_state() == "open"
    store.set_survey_state("paused", actor="researcher")
    assert store.survey_state() == "paused"
    store.set_survey_state("ended", actor="researcher")
    assert store.survey_state() == "ended"
    with pytest.raises(ValueError):
        store.set_survey_state("closed")
    log = store.admin_log()
    assert [(e["actor"], e["detail"]["to"]) for e in log] == [("researcher", "paused"), ("researcher", "ended")]
    assert log[1]["detail"]["from"] == "paused"
    store.log("researcher", "export", {"format": "csv"})
    assert store.admin_log()[-1]["action"] == "export"
    store.register_study("abc", {"tasks": [{"id": "t", "kind": "triplet"}]})
    store.register_study("abc", {"tasks": [{"id": "t", "kind": "triplet"}]})
    store.register_study("def", {"tasks": []})
    assert store.studies() == {"abc": {"tasks": [{"id": "t", "kind": "triplet"}]}, "def": {"tasks": []}}
    with open_store(db_url) as other:  # another process's store sees the settings at once, no restart
        assert other.survey_state() == "ended"
        state, session, progress = other.snapshot("0" * 32)
        assert (state, session, progress) == ("ended", None, None)


def test_delete_session_and_the_data_version(store: Store) -> None:
    versions = [store.data_version()]

    def changed() -> None:
        versions.append(store.data_version())
        assert versions[-1] != versions[-2]

    a = store.create_session(study_version="v")
    changed()
    store.record_answer(a.session_id, "t", 0, "A")
    changed()
    store.record_rating(a.session_id, "r", 0, "p", {"m": 1})
    changed()
    store.finish_task(a.session_id, "r")
    changed()
    store.record_check_try(a.session_id, "t", 1, "B", correct=False)
    store.complete_session(a.session_id)
    changed()
    store.set_session_status(a.session_id, "excluded", actor="t")
    changed()
    assert store.data_version() == versions[-1]  # reading changes nothing
    b = store.create_session(study_version="v")
    store.record_answer(b.session_id, "t", 0, "B")
    counts = store.delete_session(a.session_id, actor="researcher")
    assert counts == {"evaluations": 1, "ratings": 1, "task_status": 1, "form_answers": 0, "check_tries": 1, "spans": 0,
                      "claims": 0, "sessions": 1}
    assert store.check_tries() == []
    assert store.get_session(a.session_id) is None and [x.session_id for x in store.sessions()] == [b.session_id]
    assert [x.session_id for x in store.answers()] == [b.session_id]
    assert store.admin_log()[-1]["action"] == "delete_session"
    with pytest.raises(UnknownSession):
        store.delete_session(a.session_id, actor="researcher")


def test_answer_tasks_lists_the_tasks_with_answers(store: Store) -> None:
    assert store.answer_tasks() == set()
    s = store.create_session(study_version="v")
    for index, task in enumerate(("b", "a", "c", "a", "a b")):
        store.record_answer(s.session_id, task, index, "A", kind="pairwise")
    assert store.answer_tasks() == {"a", "b", "c", "a b"}


def test_check_answers_and_tries(store: Store) -> None:
    s = store.create_session(study_version="v")
    first = store.record_check_try(s.session_id, "t", 3, "A", correct=False, detail={"c": 1}, time_spent_ms=900)
    again = store.record_check_try(s.session_id, "t", 3, "A", correct=False, detail={"c": 1})  # a double click
    assert first["attempt"] == again["attempt"] == 1 and again["time_spent_ms"] == 900
    other = store.record_check_try(s.session_id, "t", 3, "B", correct=True)
    assert other["attempt"] == 2 and other["correct"] == 1
    # the same answer again after the double-click window is a new try (an evaluator insisting on it)
    late = store.record_check_try(s.session_id, "t", 3, "B", correct=True, same_within_s=0)
    assert late["attempt"] == 3
    tries = store.check_tries(s.session_id, "t", 3)
    assert [(t["attempt"], t["response"], t["correct"]) for t in tries] == [(1, "A", 0), (2, "B", 1), (3, "B", 1)]
    assert store.check_tries(s.session_id, "t", 4) == [] and len(store.check_tries()) == 3
    answer = store.record_answer(s.session_id, "t", 3, "B", check="tutorial", check_passed=False)
    assert answer.check == "tutorial" and answer.check_passed is False
    assert store.answers(s.session_id)[0].check_passed is False
    plain = store.record_answer(s.session_id, "t", 4, "A")
    assert plain.check is None and plain.check_passed is None
    row = store.table("evaluations")[0]
    assert row["check_type"] == "tutorial" and row["check_passed"] == 0
    attention = store.record_answer(s.session_id, "t", 5, "C", check="attention", check_passed=True)
    # what the analysis reads of the check columns: the check answers only, by id
    assert store.check_answers() == [(answer.id, "tutorial", 0), (attention.id, "attention", 1)]
    with pytest.raises(UnknownSession):
        store.record_check_try("0" * 32, "t", 0, "A", correct=True)


def test_racing_tries_are_numbered_without_gaps(store: Store) -> None:
    s = store.create_session(study_version="v")
    barrier = threading.Barrier(8, timeout=60)

    def go(k: int) -> None:
        barrier.wait()
        store.record_check_try(s.session_id, "t", 0, f"R{k}", correct=False)

    threads = [threading.Thread(target=go, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    tries = store.check_tries(s.session_id)
    assert sorted(t["attempt"] for t in tries) == list(range(1, 9))
    assert sorted(t["response"] for t in tries) == sorted(f"R{k}" for k in range(8))


def test_completion_with_a_given_code(store: Store) -> None:
    s = store.create_session(study_version="v")
    assert store.complete_session(s.session_id, "C1A2B3").completion_code == "C1A2B3"
    assert store.complete_session(s.session_id, "OTHER").completion_code == "C1A2B3"  # the first decides
    t = store.create_session(study_version="v")
    code = store.complete_session(t.session_id).completion_code
    assert code and len(code) == 10 and store.complete_session(t.session_id).completion_code == code


def test_one_session_per_participant_even_when_started_at_the_same_moment(store: Store) -> None:
    barrier = threading.Barrier(8, timeout=60)
    created, refused = [], []

    def start() -> None:
        barrier.wait()
        try:
            created.append(store.create_session(study_version="v", external_id="pid-9", one_per_participant=True))
        except ParticipantHasSession as exc:
            refused.append(exc.session.session_id)

    threads = [threading.Thread(target=start) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    [session] = created
    assert refused == [session.session_id] * 7
    assert [s.session_id for s in store.sessions()] == [session.session_id]
    store.set_session_status(session.session_id, "trashed", actor="test")  # a trashed session frees the id
    assert store.create_session(study_version="v", external_id="pid-9", one_per_participant=True)


# ----------------------------------------------------------------------------- concurrency and crashes


def test_sixteen_threads_lose_nothing_and_duplicate_nothing(store: Store) -> None:
    n_threads, n_answers = 16, 40
    sessions = [store.create_session(study_version="v").session_id for _ in range(n_threads)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(n_threads, timeout=60)

    def writer(k: int) -> None:
        try:
            barrier.wait()
            for i in range(n_answers):
                store.record_answer(sessions[k], "turing", i, "ABC"[i % 3], time_spent_ms=i)
                if i % 5 == 0:  # a double-click: the same answer again
                    assert not store.record_answer(sessions[k], "turing", i, "ABC"[i % 3]).created
                if i % 10 == 0:
                    store.record_rating(sessions[k], "novelty", i, f"p{i}", {"m": i % 5}, finish=i == 30)
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    answers = store.answers()
    assert len(answers) == n_threads * n_answers
    assert len({(a.session_id, a.task, a.question_index) for a in answers}) == len(answers)
    assert len(store.ratings()) == n_threads * 4
    for k, sid in enumerate(sessions):
        assert store.answered(sid, "turing") == set(range(n_answers)), k
        assert store.progress(sid).finished == {"novelty"}


def test_racing_writers_of_the_same_question_store_it_once(store: Store) -> None:
    sid = store.create_session(study_version="v").session_id
    results: list[bool] = []
    ratings: list[int] = []
    lock = threading.Lock()
    barrier = threading.Barrier(16, timeout=60)

    def click() -> None:
        barrier.wait()
        answer = store.record_answer(sid, "turing", 0, "A")
        rows = store.record_rating(sid, "novelty", 0, "p1", {"a": 1, "b": 2})
        with lock:
            results.append(answer.created)
            ratings.append(rows[0].id)

    threads = [threading.Thread(target=click) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 15 + [True]
    assert len(store.answers()) == 1
    assert len(store.ratings()) == 2 and len(set(ratings)) == 1


WRITER = """
import sys
from evalkit.store import open_store
store = open_store(sys.argv[1])
sid = sys.argv[2]
i = 0
while True:
    store.record_answer(sid, "turing", i, "A", time_spent_ms=i)
    print(i, flush=True)  # printed only after the commit returned
    i += 1
"""


def test_sigkill_mid_run_keeps_every_confirmed_answer(db_url: str) -> None:
    with open_store(db_url) as store:
        sid = store.create_session(study_version="v").session_id
    proc = subprocess.Popen([sys.executable, "-c", WRITER, db_url, sid], stdout=subprocess.PIPE, text=True,
                            cwd=ROOT)
    confirmed: list[int] = []
    deadline = time.monotonic() + 60
    assert proc.stdout is not None
    while len(confirmed) < 300 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        confirmed.append(int(line))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert len(confirmed) >= 300, "the writer did not get going"
    with open_store(db_url) as store:
        stored = store.answered(sid, "turing")
        assert set(confirmed) <= stored
        assert stored == set(range(len(stored))), "no holes: answers are committed in order"
        assert len(store.answers()) == len(stored)  # nothing doubled
        store.record_answer(sid, "turing", len(stored), "A")  # the database is usable after the kill
        if not is_postgres(db_url):
            assert store.integrity_check() == "ok"


TWO_PROCS = """
import sys
from evalkit.store import open_store
store = open_store(sys.argv[1])
sids = sys.argv[2].split(",")
for i in range(60):
    for sid in sids:
        store.record_answer(sid, "pairwise", i, "B")
"""


def test_two_processes_writing_the_same_database(store: Store, db_url: str) -> None:
    sids = [store.create_session(study_version="v").session_id for _ in range(4)]
    arg = ",".join(sids)
    procs = [subprocess.Popen([sys.executable, "-c", TWO_PROCS, db_url, arg], cwd=ROOT) for _ in range(2)]
    for p in procs:
        assert p.wait(timeout=120) == 0
    answers = store.answers()
    assert len(answers) == 4 * 60
    assert {(a.session_id, a.question_index) for a in answers} == {(s, i) for s in sids for i in range(60)}


OPENER = """
import sys
from evalkit.store import open_store
open_store(sys.argv[1]).close()
"""


def test_two_processes_creating_the_schema_at_once_do_not_race(db_url: str) -> None:
    procs = [subprocess.Popen([sys.executable, "-c", OPENER, db_url], cwd=ROOT, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    with open_store(db_url) as store:
        assert store.schema_version() == SCHEMA_VERSION and store.is_empty()


# ----------------------------------------------------------------------------- schema versions


def test_an_older_schema_is_migrated_and_a_newer_one_refused(db_url: str) -> None:
    with open_store(db_url) as store:
        sid = store.create_session(study_version="v").session_id
        store.record_answer(sid, "t", 0, "A")
    # take the database back to version 1, as an evalkit of the previous release left it
    raw(db_url, "DROP INDEX sessions_started")
    raw(db_url, "DROP TABLE check_tries")
    raw(db_url, "DROP INDEX evaluations_checks")
    raw(db_url, "ALTER TABLE evaluations DROP COLUMN check_type")
    raw(db_url, "ALTER TABLE evaluations DROP COLUMN check_passed")
    raw(db_url, "ALTER TABLE participants DROP COLUMN code_pass")  # (version 10)
    raw(db_url, "ALTER TABLE participants DROP COLUMN code_fail")
    raw(db_url, "UPDATE settings SET value = '1' WHERE key = 'schema_version'")
    with open_store(db_url) as store:
        assert store.schema_version() == SCHEMA_VERSION
        assert [a.response for a in store.answers()] == ["A"]  # the data survived the migration
        assert store.answers()[0].check is None
        store.record_check_try(sid, "t", 1, "B", correct=True)  # the checks' table and columns are there
        assert store.record_answer(sid, "t", 1, "B", check="attention", check_passed=True).check_passed
    for name in ("sessions_started", "evaluations_checks"):
        index = (f"SELECT indexname FROM pg_indexes WHERE indexname = '{name}'" if is_postgres(db_url)
                 else f"SELECT name FROM sqlite_master WHERE name = '{name}'")
        assert raw(db_url, index), name
    assert store_checks(db_url) == [(2, "attention", 1)]
    raw(db_url, "UPDATE settings SET value = '99' WHERE key = 'schema_version'")
    for writable in (True, False):
        with pytest.raises(StoreError, match="schema version 99 is newer"):
            open_store(db_url, writable=writable)


def store_checks(db_url: str) -> list[tuple[int, str, int | None]]:
    with open_store(db_url) as store:
        return store.check_answers()


def test_table_export_and_closed_store(store: Store) -> None:
    s = store.create_session(study_version="v")
    store.record_answer(s.session_id, "turing", 0, "A")
    rows = store.table("evaluations")
    assert rows[0]["session_id"] == s.session_id and rows[0]["response"] == "A"
    assert [r["key"] for r in store.table("settings")] == sorted(r["key"] for r in store.table("settings"))
    with pytest.raises(ValueError):
        store.table("sqlite_master")
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.sessions()


# ----------------------------------------------------------------------------- columnar reads

READ_SPEC = [("id", "id", "int"), ("session_id", "session_id", "category"), ("slot", "slot", "int"),
             ("left_source", "left_source", "category"), ("response", "response", "text"),
             ("time_spent_ms", "time_spent_ms", "real"), ("button", JsonField("detail", "button"), "category"),
             ("sample", Sampled("created_at", 10), "text")]


def test_read_columns_match_the_rows_nulls_first_json_and_samples(store: Store) -> None:
    a, b = (store.create_session(study_version="v").session_id for _ in range(2))
    n = 120
    for i in range(n):  # the first 30 have no left_source and no slot: a NULL first must not fix the type
        store.record_answer((a, b)[i % 2], "t", i, str(i), slot=None if i < 30 else i % 7,
                            left_source=None if i < 30 else "xy"[i % 2], time_spent_ms=i * 10,
                            detail={"button": "accept"} if i % 5 == 0 else None)
    one = store.read_columns("evaluations", READ_SPEC, threads=1)
    two = store.read_columns("evaluations", READ_SPEC, threads=2)
    assert one.sort_by("id").equals(two.sort_by("id")) and one.num_rows == n
    assert str(one.schema.field("left_source").type).startswith("dictionary")
    assert str(one.schema.field("response").type) in ("string", "large_string")
    frame = one.to_pandas().sort_values("id")
    rows = store.table("evaluations")
    assert frame["id"].tolist() == [r["id"] for r in rows]
    assert frame["session_id"].astype(str).tolist() == [r["session_id"] for r in rows]
    assert frame["left_source"].isna().sum() == 30 and set(frame["left_source"].dropna()) == {"x", "y"}
    assert frame["slot"].isna().sum() == 30 and frame["slot"].max() == 6
    assert frame["response"].tolist() == [str(i) for i in range(n)]
    assert frame["time_spent_ms"].tolist() == [float(i * 10) for i in range(n)]
    assert (frame["button"] == "accept").sum() == n // 5 and frame["button"].isna().sum() == n * 4 // 5
    sampled = frame[frame["sample"].notna()]
    assert 10 <= len(sampled) <= 12 and sampled["id"].iloc[-1] == frame["id"].max()  # ~10, and the newest
    assert sampled["sample"].tolist() == [r["created_at"] for r in rows if r["id"] in set(sampled["id"])]


def test_read_columns_restricted_to_kinds(store: Store) -> None:
    """ForKinds: the column's value on rows of those kinds, NULL on the others; kinds are checked like names."""
    s = store.create_session(study_version="v").session_id
    for i, kind in enumerate(["triplet", "compare", "score", "compare", "pairwise"]):
        store.record_answer(s, "t", i, "A", kind=kind, item_ids=[f"it{i}"], sources=["x", "y"],
                            detail={"scores": {"q": [i, 2]}} if kind == "score" else None)
    spec = [("id", "id", "int"), ("item_ids", ForKinds("item_ids", ("compare", "score")), "category"),
            ("scores", JsonField("detail", "scores"), "text")]
    frame = store.read_columns("evaluations", spec).to_pandas().sort_values("id")
    assert frame["item_ids"].astype(object).where(frame["item_ids"].notna(), None).tolist() == [
        None, '["it1"]', '["it2"]', '["it3"]', None]
    import json

    scores = [json.loads(x) if isinstance(x, str) else None for x in frame["scores"]]
    assert scores == [None, None, {"q": [2, 2]}, None, None]
    for bad in (ForKinds("item_ids", ("compare') OR (1=1",)), ForKinds("item_ids", ())):
        with pytest.raises(ValueError, match="bad column spec"):
            store.read_columns("evaluations", [("x", bad, "text")])


def test_read_columns_of_an_empty_table_and_bad_requests(store: Store) -> None:
    empty = store.read_columns("evaluations", READ_SPEC)
    assert empty.num_rows == 0 and empty.column_names == [c[0] for c in READ_SPEC]
    with pytest.raises(ValueError, match="unknown table"):
        store.read_columns("sqlite_master", READ_SPEC)
    with pytest.raises(ValueError, match="bad column spec"):
        store.read_columns("evaluations", [("id; DROP TABLE x", "id", "int")])
    with pytest.raises(ValueError, match="bad column spec"):
        store.read_columns("evaluations", [("id", "id", "blob")])
    with pytest.raises(ValueError, match="bad column spec"):
        store.read_columns("evaluations", [("b", JsonField("detail", "x') OR 1=1 --"), "text")])
    with pytest.raises(StoreError, match="nope"):
        store.read_columns("evaluations", [("id", "nope", "int")])


# ----------------------------------------------------------------------------- copying between backends


def _fill(store: Store) -> None:
    a = store.create_session(study_version="v", external_id="P1", meta={"prolific": {"STUDY_ID": "x"}})
    b = store.create_session(study_version="v")
    for i in range(25):
        store.record_answer(a.session_id, "turing", i, "ABC"[i % 3], review_source="real", time_spent_ms=i,
                            detail={"button": "accept"} if i % 2 else None)
    store.record_answer(b.session_id, "turing", 0, "C")
    store.record_check_try(b.session_id, "turing", 1, "A", correct=False, detail={"x": 1}, time_spent_ms=5)
    store.record_answer(b.session_id, "turing", 1, "A", check="attention", check_passed=False)
    store.record_rating(a.session_id, "novelty", 0, "p1", {"clarity": 4}, comment="ok", finish=True)
    store.complete_session(a.session_id)
    store.set_survey_state("paused", actor="researcher")
    store.register_study("abc", {"tasks": []})


@pytest.mark.parametrize("direction", ["sqlite->postgres", "postgres->sqlite"])
def test_copy_between_backends_keeps_every_row_and_id(direction: str, tmp_path: Path, pg_url: str) -> None:
    sqlite_path = str(tmp_path / "pilot.sqlite")
    src_url, dst_url = (sqlite_path, pg_url) if direction == "sqlite->postgres" else (pg_url, sqlite_path)
    with open_store(src_url) as src:
        _fill(src)
        tables = {t: src.table(t) for t in ("sessions", "evaluations", "ratings", "task_status", "admin_log",
                                          "check_tries")}
        with open_store(dst_url) as dst:
            counts = dst.import_from(src)
            assert counts == src.counts() and counts["evaluations"] == 27
            for name, rows in tables.items():
                assert dst.table(name) == rows, name
            assert dst.survey_state() == "paused" and dst.studies() == {"abc": {"tasks": []}}
            # new rows continue after the copied ids (PostgreSQL's sequences were moved past them)
            sid = dst.create_session(study_version="v").session_id
            assert dst.record_answer(sid, "turing", 0, "A").id == max(r["id"] for r in tables["evaluations"]) + 1
            with pytest.raises(StoreError, match="already holds study data"):
                dst.import_from(src)
            assert dst.import_from(src, replace=True) == src.counts()  # the extra session is gone again
            assert dst.table("evaluations") == tables["evaluations"]

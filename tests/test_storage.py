"""evalkit.storage: exactly-once answers, sessions, settings, concurrency and crash safety."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evalkit.storage import (
    AnswerConflict,
    ParticipantHasSession,
    Store,
    StoreError,
    UnknownSession,
    check_database,
    is_valid_token,
    mask_url,
    resolve_database,
)
from tests.helpers import make_read_only

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "sub" / "db.sqlite")
    yield s
    s.close()


def test_database_is_created_on_first_use_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "new" / "folder" / "responses.sqlite"
    assert not path.exists()
    with Store(path):
        assert path.exists()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"sessions", "evaluations", "ratings", "settings", "admin_log"} <= tables
    cols = {r[1] for r in conn.execute("PRAGMA table_info(evaluations)")}
    assert {"session_id", "task", "question_index", "response", "review_source", "domain", "time_spent_ms",
            "left_source", "right_source", "item_ids", "created_at"} <= cols
    conn.close()
    with Store(path) as again:  # reopening keeps the data and the schema
        assert again.sessions() == []


def test_sessions(store: Store) -> None:
    a = store.create_session(study_version="v1", evaluator_name="  Ada ", user_agent="UA")
    b = store.create_session(study_version="v1", external_id="PID123", seed=7)
    assert is_valid_token(a.session_id) and a.session_id != b.session_id
    assert a.evaluator_name == "Ada" and a.status == "active" and 0 <= a.seed < 2**32
    assert b.seed == 7 and b.external_id == "PID123"
    assert store.get_session(a.session_id) == a
    for bad in ("", "nope", "0" * 31, "G" * 32, None, 42, a.session_id.upper(), "0" * 32):
        assert store.get_session(bad) is None
    done = store.complete_session(a.session_id)
    assert done.status == "completed" and done.completed_at and len(done.completion_code) == 10
    assert store.complete_session(a.session_id).completion_code == done.completion_code  # idempotent
    assert [s.session_id for s in store.sessions("completed")] == [a.session_id]
    assert [s.session_id for s in store.sessions()] == [a.session_id, b.session_id]
    excluded = store.set_session_status(b.session_id, "excluded", actor="admin")
    assert excluded.status == "excluded"
    assert store.admin_log()[-1]["detail"] == {"session_id": b.session_id, "from": "active", "to": "excluded"}
    with pytest.raises(ValueError):
        store.set_session_status(b.session_id, "deleted")
    with pytest.raises(UnknownSession):
        store.complete_session("f" * 32)
    codes = {store.complete_session(store.create_session(study_version="v").session_id).completion_code
             for _ in range(50)}
    assert len(codes) == 50


def test_record_answer_is_idempotent_and_refuses_overwrites(store: Store) -> None:
    s = store.create_session(study_version="v")
    first = store.record_answer(s.session_id, "turing", 0, "B", kind="triplet", review_source="real",
                                domain="laptop", time_spent_ms=5120, sources=["cera", "real", "heuristic"],
                                item_ids=["c/1", "r/2", "h/3"], matched=True)
    assert first.created and first.review_source == "real" and first.sources == ("cera", "real", "heuristic")
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


def test_record_answer_rejects_bad_input(store: Store) -> None:
    s = store.create_session(study_version="v")
    with pytest.raises(UnknownSession):
        store.record_answer("a" * 32, "turing", 0, "A")
    with pytest.raises(ValueError):
        store.record_answer(s.session_id, "turing", -1, "A")
    with pytest.raises(ValueError):
        store.record_answer(s.session_id, "turing", 0, "")
    assert store.answers() == []


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


def test_settings_survey_state_and_admin_log(store: Store) -> None:
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
    # settings take effect for another Store on the same file (another process) without a restart
    other = Store(store.path)
    assert other.survey_state() == "ended"
    other.close()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE settings SET value = '99' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="schema version 99 is newer"):
        Store(path)


def test_sixteen_threads_lose_nothing_and_duplicate_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite")
    n_threads, n_answers = 16, 40
    sessions = [store.create_session(study_version="v").session_id for _ in range(n_threads)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(n_threads)

    def writer(k: int) -> None:
        try:
            barrier.wait()
            for i in range(n_answers):
                store.record_answer(sessions[k], "turing", i, "ABC"[i % 3], time_spent_ms=i)
                if i % 5 == 0:  # a double-click: the same answer again
                    assert not store.record_answer(sessions[k], "turing", i, "ABC"[i % 3]).created
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
    for k, sid in enumerate(sessions):
        assert store.answered(sid, "turing") == set(range(n_answers)), k
    store.close()


def test_racing_writers_of_the_same_question_store_it_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite")
    sid = store.create_session(study_version="v").session_id
    results: list[bool] = []
    lock = threading.Lock()
    barrier = threading.Barrier(16)

    def click() -> None:
        barrier.wait()
        answer = store.record_answer(sid, "turing", 0, "A")
        with lock:
            results.append(answer.created)

    threads = [threading.Thread(target=click) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 15 + [True]
    assert len(store.answers()) == 1
    store.close()


WRITER = """
import sys
from evalkit.storage import Store
store = Store(sys.argv[1])
sid = sys.argv[2]
i = 0
while True:
    store.record_answer(sid, "turing", i, "A", time_spent_ms=i)
    print(i, flush=True)  # printed only after the commit returned
    i += 1
"""


def test_sigkill_mid_run_keeps_every_committed_answer(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    store = Store(path)
    sid = store.create_session(study_version="v").session_id
    store.close()
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), sid], stdout=subprocess.PIPE, text=True,
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
    store = Store(path)
    assert store.integrity_check() == "ok"
    stored = store.answered(sid, "turing")
    assert set(confirmed) <= stored
    assert stored == set(range(len(stored))), "no holes: answers are committed in order"
    store.close()


TWO_PROCS = """
import sys
from evalkit.storage import Store
store = Store(sys.argv[1])
sids = sys.argv[2].split(",")
for i in range(60):
    for sid in sids:
        store.record_answer(sid, "pairwise", i, "B")
"""


def test_two_processes_writing_the_same_database(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    store = Store(path)
    sids = [store.create_session(study_version="v").session_id for _ in range(4)]
    arg = ",".join(sids)
    procs = [subprocess.Popen([sys.executable, "-c", TWO_PROCS, str(path), arg], cwd=ROOT) for _ in range(2)]
    for p in procs:
        assert p.wait(timeout=120) == 0
    answers = store.answers()
    assert len(answers) == 4 * 60
    assert {(a.session_id, a.question_index) for a in answers} == {(s, i) for s in sids for i in range(60)}
    store.close()


def test_table_export_and_closed_store(store: Store) -> None:
    s = store.create_session(study_version="v")
    store.record_answer(s.session_id, "turing", 0, "A")
    rows = store.table("evaluations")
    assert rows[0]["session_id"] == s.session_id and rows[0]["response"] == "A"
    with pytest.raises(ValueError):
        store.table("sqlite_master")
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.sessions()


# ----------------------------------------------------------------------------- columnar reads (Arrow)

READ_SPEC = [("id", "id", "int"), ("session_id", "session_id", "category"), ("slot", "slot", "int"),
             ("left_source", "left_source", "category"), ("response", "response", "text"),
             ("button", "json_extract(detail, '$.button')", "category")]


def _bulk_answers(path: Path, n: int) -> list[tuple]:
    """n evaluation rows written with raw sqlite3: the first 3,000 have no left_source and no slot."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("INSERT INTO sessions (session_id, seed, study_version, started_at, status, meta)"
                 " VALUES ('s1', 1, 'v', 'now', 'active', '{}'), ('s2', 2, 'v', 'now', 'active', '{}')")
    rows = [(f"s{1 + i % 2}", "t", i, None if i < 3000 else i % 7, str(i),
             None if i < 3000 else ("x", "y")[i % 2], '{"button": "accept"}' if i % 5 == 0 else "{}")
            for i in range(n)]
    conn.executemany("INSERT INTO evaluations (session_id, task, question_index, slot, response, left_source, detail,"
                     " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'now')", rows)
    conn.close()
    return rows


def test_read_columns_matches_sqlite3_with_nulls_first_and_in_parallel_parts(store: Store) -> None:
    rows = _bulk_answers(store.path, 10_000)
    one = store.read_columns("evaluations", READ_SPEC, threads=1)
    parts = store.read_columns("evaluations", READ_SPEC, threads=3, min_rows_per_part=1000)
    assert one.equals(parts) and one.num_rows == len(rows)
    assert str(one.schema.field("left_source").type).startswith("dictionary")
    assert str(one.schema.field("response").type) in ("string", "large_string")
    frame = one.to_pandas()
    assert frame["id"].tolist() == list(range(1, len(rows) + 1))
    assert frame["session_id"].astype(str).tolist() == [r[0] for r in rows]
    # a text column NULL for its first 3,000 rows still comes back as text (the type-fixing first row)
    assert frame["left_source"].isna().sum() == 3000 and set(frame["left_source"].dropna()) == {"x", "y"}
    assert frame["slot"].isna().sum() == 3000 and frame["slot"].max() == 6
    assert frame["response"].tolist() == [r[4] for r in rows]
    assert (frame["button"] == "accept").sum() == len(rows) // 5 and frame["button"].isna().sum() == len(rows) * 4 // 5


def test_read_columns_of_an_empty_table_and_bad_requests(store: Store) -> None:
    empty = store.read_columns("evaluations", READ_SPEC)
    assert empty.num_rows == 0 and empty.column_names == [c[0] for c in READ_SPEC]
    with pytest.raises(ValueError, match="unknown table"):
        store.read_columns("sqlite_master", READ_SPEC)
    with pytest.raises(ValueError, match="bad column spec"):
        store.read_columns("evaluations", [("id; DROP TABLE x", "id", "int")])
    with pytest.raises(ValueError, match="bad column spec"):
        store.read_columns("evaluations", [("id", "id", "blob")])
    with pytest.raises(StoreError, match="no such column: nope"):
        store.read_columns("evaluations", [("id", "nope", "int")])


def test_columnar_reads_never_load_a_second_sqlite_into_this_process(store: Store) -> None:
    """ADBC's driver carries its own copy of SQLite; in the same process as this store's sqlite3 connections,
    closing one copy's file drops the other copy's POSIX locks (the SQLite docs' "how to corrupt": it showed
    up once as "disk I/O error"). The driver must only ever run in the child process."""
    s = store.create_session(study_version="v")
    for i in range(10):
        store.record_answer(s.session_id, "t", i, "A", review_source="x", slot=i)
        assert store.read_columns("evaluations", READ_SPEC).num_rows == i + 1
        assert store.get_session(s.session_id) is not None
    assert "adbc_driver_sqlite" not in sys.modules and "adbc_driver_manager" not in sys.modules
    assert store.integrity_check() == "ok" and len(store.answers()) == 10


# ----------------------------------------------------------------------------- opening problems, URLs


def test_a_file_that_is_not_sqlite_is_named_with_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    path.write_bytes(b"junk")
    with pytest.raises(StoreError, match=rf"cannot open the database {path}: the file is not an SQLite database"):
        Store(path)
    with pytest.raises(StoreError, match="is not an SQLite database"):
        check_database(path)
    assert path.read_bytes() == b"junk"  # nothing was overwritten


def test_a_folder_is_named_with_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    path.mkdir()
    for open_it in (Store, check_database):
        with pytest.raises(StoreError, match=rf"cannot open the database {path}: it is a folder"):
            open_it(path)


def test_a_read_only_database_fails_when_opened_not_at_the_first_answer(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    with Store(path) as s:
        s.create_session(study_version="v")
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    undo = make_read_only(path)
    try:
        with pytest.raises(StoreError, match=rf"cannot open the database {path}: the file is read-only"):
            Store(path)
        with pytest.raises(StoreError, match="the file is read-only"):
            check_database(path)
        with Store(path, writable=False) as s:  # reading (reports, exports) still works
            assert len(s.sessions()) == 1
    finally:
        undo()


def test_check_database_changes_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "new" / "x.sqlite"
    assert "will be created" in check_database(missing)
    assert not missing.exists() and not missing.parent.exists()
    path = tmp_path / "x.sqlite"
    with Store(path) as s:
        s.create_session(study_version="v")
    before = path.read_bytes()
    assert check_database(path) == "ok, 1 session(s) stored"
    assert path.read_bytes() == before
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE cats (name TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="it is not an evalkit database"):
        check_database(other)


@pytest.mark.parametrize("url", ["postgresql://alice:s3cret@db.example.org:5432/evalkit",
                                 "postgres://alice:s3cret@localhost/x", "mysql://alice:s3cret@h/db"])
def test_database_urls_other_than_sqlite_are_refused_and_the_password_masked(url: str) -> None:
    with pytest.raises(StoreError, match="not supported yet") as err:
        resolve_database(url, Path("/srv/study"))
    assert "s3cret" not in str(err.value) and "alice:***@" in str(err.value)


def test_sqlite_paths_and_urls_resolve(tmp_path: Path) -> None:
    assert resolve_database("data/x.sqlite", tmp_path) == tmp_path / "data" / "x.sqlite"
    assert resolve_database("sqlite:///data/x.sqlite", tmp_path) == tmp_path / "data" / "x.sqlite"
    assert resolve_database("sqlite:////srv/x.sqlite", tmp_path) == Path("/srv/x.sqlite")
    assert resolve_database(tmp_path / "y.sqlite") == tmp_path / "y.sqlite"
    assert mask_url("postgresql://u@h/db") == "postgresql://u@h/db"
    with pytest.raises(StoreError, match="empty"):
        resolve_database("sqlite:///", tmp_path)


def test_save_and_finish_is_one_transaction(store: Store) -> None:
    sid = store.create_session(study_version="v").session_id
    with store._conn() as conn:  # make the task_status insert fail, as a crash between two writes would
        conn.execute("CREATE TRIGGER fail BEFORE INSERT ON task_status BEGIN SELECT RAISE(ABORT, 'boom'); END")
    with pytest.raises(sqlite3.IntegrityError, match="boom"):
        store.record_rating(sid, "novelty", 0, "p1", {"clarity": 4}, finish=True)
    assert store.ratings(sid) == []  # neither the rating ...
    assert store.progress(sid).finished == set()  # ... nor the finish
    with store._conn() as conn:
        conn.execute("DROP TRIGGER fail")
    store.record_rating(sid, "novelty", 0, "p1", {"clarity": 4}, finish=True)
    assert len(store.ratings(sid)) == 1 and store.progress(sid).finished == {"novelty"}


def test_a_read_only_store_writes_nothing_and_refuses_foreign_files(tmp_path: Path) -> None:
    foreign = tmp_path / "notes.sqlite"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.commit()
    conn.close()
    before = foreign.read_bytes()
    with pytest.raises(StoreError, match="it is not an evalkit database"):
        Store(foreign, writable=False)
    assert foreign.read_bytes() == before  # no evalkit tables were created, no WAL switched on
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    with pytest.raises(StoreError, match="it has no tables"):
        Store(empty, writable=False)
    assert empty.stat().st_size == 0
    with pytest.raises(StoreError, match="does not exist"):
        Store(tmp_path / "missing.sqlite", writable=False)
    assert not (tmp_path / "missing.sqlite").exists()
    path = tmp_path / "db.sqlite"
    with Store(path) as s:
        sid = s.create_session(study_version="v").session_id
    with Store(path, writable=False) as reader:
        assert [x.session_id for x in reader.sessions()] == [sid]
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.create_session(study_version="v")


def test_one_session_per_participant_even_when_started_at_the_same_moment(store: Store) -> None:
    barrier = threading.Barrier(8)
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
    assert store.create_session(study_version="v", external_id="pid-9")  # without the flag: no check (tests, CLI)

"""evalkit.store: exactly-once answers, sessions, settings, concurrency and crash safety."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest

from evalkit.store import (
    JsonField,
    SQLiteStore,
    Store,
    StoreError,
    check_database,
    is_postgres,
    mask_url,
    resolve_database,
)
from evalkit.store.sqlite import ROWID_RANGE
from tests.helpers import make_read_only

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = SQLiteStore(tmp_path / "sub" / "db.sqlite")
    yield s
    s.close()


def test_database_is_created_on_first_use_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "new" / "folder" / "responses.sqlite"
    assert not path.exists()
    with SQLiteStore(path):
        assert path.exists()
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"sessions", "evaluations", "ratings", "settings", "admin_log"} <= tables
    cols = {r[1] for r in conn.execute("PRAGMA table_info(evaluations)")}
    assert {"session_id", "task", "question_index", "response", "review_source", "domain", "time_spent_ms",
            "left_source", "right_source", "item_ids", "created_at"} <= cols
    conn.close()
    with SQLiteStore(path) as again:  # reopening keeps the data and the schema
        assert again.sessions() == []














# ----------------------------------------------------------------------------- columnar reads (Arrow)

READ_SPEC = [("id", "id", "int"), ("session_id", "session_id", "category"), ("slot", "slot", "int"),
             ("left_source", "left_source", "category"), ("response", "response", "text"),
             ("button", JsonField("detail", "button"), "category")]


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



def test_the_rowid_range_of_a_read_is_two_lookups_not_a_scan(store: Store) -> None:
    """Splitting a read into rowid ranges asks for the table's first and last rowid: two B-tree lookups. (min()
    and max() in one SELECT made SQLite scan the whole table: 0.2 s before every read of a million answers.)"""
    rows = _bulk_answers(store.path, 1_000)
    conn = sqlite3.connect(store.path)
    try:
        sql = ROWID_RANGE.format(table="evaluations")
        plan = " | ".join(r[-1] for r in conn.execute("EXPLAIN QUERY PLAN " + sql))
        assert "SCAN evaluations" not in plan and "SEARCH evaluations" in plan, plan
        assert conn.execute(sql).fetchone() == (0, len(rows))
        assert conn.execute(ROWID_RANGE.format(table="ratings")).fetchone() == (0, 0)  # an empty table
    finally:
        conn.close()


def test_columnar_reads_never_load_a_second_sqlite_into_this_process(store: Store) -> None:
    """ADBC's driver carries its own copy of SQLite; in the same process as this store's sqlite3 connections,
    closing one copy's file drops the other copy's POSIX locks (the SQLite docs' "how to corrupt": it showed
    up once as "disk I/O error"). The driver must only ever run in the child process."""
    s = store.create_session(study_version="v")
    for i in range(10):
        store.record_answer(s.session_id, "t", i, "A", review_source="x", slot=i)
        assert store.read_columns("evaluations", READ_SPEC).num_rows == i + 1
        assert store.get_session(s.session_id) is not None
    assert "adbc_driver_sqlite" not in sys.modules  # (the PostgreSQL reader loads adbc_driver_manager: no SQLite)
    assert store.integrity_check() == "ok" and len(store.answers()) == 10


def test_the_reader_server_is_started_once_and_again_when_it_died(store: Store) -> None:
    """Reads go to one reader server per process (evalkit.store.sqlite_reader.serve), which forks a child per
    read; a server that was killed is started again at the next read, and nothing is lost."""
    from evalkit.store import sqlite as backend

    s = store.create_session(study_version="v")
    store.record_answer(s.session_id, "t", 0, "A", review_source="x", slot=0)
    assert store.read_columns("evaluations", READ_SPEC).num_rows == 1
    server = backend._READER._process
    assert server is not None and server.poll() is None
    store.record_answer(s.session_id, "t", 1, "B", review_source="y", slot=1)
    assert store.read_columns("evaluations", READ_SPEC)["response"].to_pylist() == ["A", "B"]
    assert backend._READER._process is server  # the same server, not a new one per read
    server.kill()
    server.wait()
    assert store.read_columns("evaluations", READ_SPEC).num_rows == 2  # started again
    assert backend._READER._process is not server and backend._READER._process.poll() is None


def test_a_failed_read_names_the_problem_and_the_server_goes_on(store: Store, tmp_path: Path) -> None:
    from evalkit.store import sqlite as backend

    job = {"database": str(tmp_path / "nope" / "x.sqlite"), "busy_timeout_ms": 100, "threads": 1,
           "reads": [{"queries": ["SELECT 1 AS _first, 0 AS x"], "dictionary": [], "output": str(tmp_path / "o")}]}
    said = backend._run_reader(job)
    assert said and "Error" in said  # the driver's message, one line
    job["database"] = str(store.path)
    job["reads"][0]["queries"] = ["SELECT 1 AS _first, 0 AS x UNION ALL SELECT 0, 7"]
    assert backend._run_reader(job) == ""  # the same server does the next job
    import pyarrow as pa
    import pyarrow.ipc

    assert pa.ipc.open_file(str(tmp_path / "o")).read_all()["x"].to_pylist() == [7]


def test_without_fork_each_read_starts_a_reader_of_its_own(store: Store, monkeypatch) -> None:
    """Where there is no os.fork (Windows) there is no server: the reader runs as a new interpreter per read."""
    from evalkit.store import sqlite as backend

    monkeypatch.setattr(backend, "_READER", backend._ReaderServer())
    monkeypatch.delattr(backend.os, "fork")
    s = store.create_session(study_version="v")
    store.record_answer(s.session_id, "t", 0, "A", review_source="x", slot=0)
    assert store.read_columns("evaluations", READ_SPEC)["response"].to_pylist() == ["A"]
    assert backend._READER._process is None


def test_a_forked_process_reads_through_a_server_of_its_own(store: Store, tmp_path: Path) -> None:
    """A process forked after this one started its server must not talk on this one's pipes."""
    import multiprocessing

    from evalkit.store import sqlite as backend

    s = store.create_session(study_version="v")
    store.record_answer(s.session_id, "t", 0, "A", review_source="x", slot=0)
    assert store.read_columns("evaluations", READ_SPEC).num_rows == 1
    parent_server = backend._READER._process
    child = multiprocessing.get_context("fork").Process(target=_read_in_child,
                                                        args=(store.path, tmp_path / "out", parent_server.pid))
    child.start()
    child.join(60)
    assert child.exitcode == 0 and (tmp_path / "out").read_text() == "1"
    assert backend._READER._process is parent_server and parent_server.poll() is None
    assert store.read_columns("evaluations", READ_SPEC).num_rows == 1  # this process's server still answers


def _read_in_child(path: Path, out: Path, parent_server: int) -> None:
    from evalkit.store import sqlite as backend

    assert backend._READER._process is None  # let go of at the fork
    with SQLiteStore(path) as store:
        rows = store.read_columns("evaluations", READ_SPEC).num_rows
    assert backend._READER._process is not None and backend._READER._process.pid != parent_server
    out.write_text(str(rows))


# ----------------------------------------------------------------------------- opening problems, URLs


def test_a_file_that_is_not_sqlite_is_named_with_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    path.write_bytes(b"junk")
    with pytest.raises(StoreError, match=rf"cannot open the database {path}: the file is not an SQLite database"):
        SQLiteStore(path)
    with pytest.raises(StoreError, match="is not an SQLite database"):
        check_database(path)
    assert path.read_bytes() == b"junk"  # nothing was overwritten


def test_a_folder_is_named_with_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    path.mkdir()
    for open_it in (SQLiteStore, check_database):
        with pytest.raises(StoreError, match=rf"cannot open the database {path}: it is a folder"):
            open_it(path)


def test_a_read_only_database_fails_when_opened_not_at_the_first_answer(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite"
    with SQLiteStore(path) as s:
        s.create_session(study_version="v")
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    undo = make_read_only(path)
    try:
        with pytest.raises(StoreError, match=rf"cannot open the database {path}: the file is read-only"):
            SQLiteStore(path)
        with pytest.raises(StoreError, match="the file is read-only"):
            check_database(path)
        with SQLiteStore(path, writable=False) as s:  # reading (reports, exports) still works
            assert len(s.sessions()) == 1
    finally:
        undo()


def test_check_database_changes_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "new" / "x.sqlite"
    assert "will be created" in check_database(missing)
    assert not missing.exists() and not missing.parent.exists()
    path = tmp_path / "x.sqlite"
    with SQLiteStore(path) as s:
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


@pytest.mark.parametrize("url", ["mysql://alice:s3cret@h/db", "mssql://alice:s3cret@h:1433/db"])
def test_database_urls_other_than_sqlite_and_postgresql_are_refused_and_the_password_masked(url: str) -> None:
    with pytest.raises(StoreError, match="databases are not supported") as err:
        resolve_database(url, Path("/srv/study"))
    assert "s3cret" not in str(err.value) and "alice:***@" in str(err.value)


def test_postgresql_urls_stay_urls_and_their_passwords_are_masked() -> None:
    url = "postgresql://alice:s3cret@db.example.org:5432/evalkit?sslmode=require"
    assert resolve_database(url, Path("/srv/study")) == url and is_postgres(url)
    assert resolve_database("postgres://u@h/db") == "postgres://u@h/db"
    assert mask_url(url) == "postgresql://alice:***@db.example.org:5432/evalkit?sslmode=require"
    assert "pw" not in mask_url("postgresql://h/db?user=a&password=pw") and "password=***" in mask_url(
        "postgresql://h/db?user=a&password=pw")
    assert mask_url("postgresql://alice:s3cret@[::1]:5432/db") == "postgresql://alice:***@[::1]:5432/db"
    # a second address pasted into the first, a port that is not a number, an @ in the password: nothing leaks
    two = "postgresql://u:pw1@h/db postgresql://v:pw2@k/db"
    assert mask_url(two) == "postgresql://u:***@h/db postgresql://v:***@k/db"
    assert "pw" not in mask_url("postgresql://u:pw1@h/db?host=postgresql://v:pw2@k/db")
    assert mask_url("postgresql://u:pw1@h:x/db") == "postgresql://u:***@h:x/db"
    assert mask_url("postgresql://u:p@ss@h/db") == "postgresql://u:***@h/db"
    # a password with an unencoded @ or /: nothing of it shows, and the address is refused with the remedy
    assert mask_url("postgresql://me:s3cr@t/pw@localhost:55432/db") == "postgresql://me:***@localhost:55432/db"
    assert mask_url("postgresql://u:p/w@host/db") == "postgresql://u:***@host/db"
    with pytest.raises(StoreError, match=r"more than one '@' .* percent-encoded \(%40 for @") as err:
        resolve_database("postgresql://me:s3cr@t/pw@localhost:55432/db")
    assert "s3cr" not in str(err.value) and "pw" not in str(err.value)
    for password in ("pa/zq", "pa#zq", "pa?zq"):  # one @, but the address ends inside the password
        with pytest.raises(StoreError, match=r"its port is not a number .* percent-encoded") as err:
            resolve_database(f"postgresql://me:{password}@localhost:5432/db")
        assert "zq" not in str(err.value) and "me:***@localhost" in str(err.value)
    assert resolve_database("postgresql://me:pa%2Fss@[::1]:5432/db?sslmode=require").endswith("sslmode=require")
    from evalkit.store import check_database, describe

    pasted = "postgresql://u:pw1@127.0.0.1:1/db postgresql://v:pw2@k/db"
    with pytest.raises(StoreError) as err:  # the driver quotes the part it cannot parse: masked too
        check_database(pasted)
    said = describe(pasted) + str(err.value)  # what `evalkit check` and the results page print
    assert "pw1" not in said and "pw2" not in said and said.count(":***@") >= 3


def test_sqlite_paths_and_urls_resolve(tmp_path: Path) -> None:
    assert resolve_database("data/x.sqlite", tmp_path) == tmp_path / "data" / "x.sqlite"
    assert resolve_database("sqlite:///data/x.sqlite", tmp_path) == tmp_path / "data" / "x.sqlite"
    assert resolve_database("sqlite:////srv/x.sqlite", tmp_path) == Path("/srv/x.sqlite")
    assert resolve_database(tmp_path / "y.sqlite") == tmp_path / "y.sqlite"
    assert mask_url("postgresql://u@h/db") == "postgresql://u@h/db"
    with pytest.raises(StoreError, match="empty"):
        resolve_database("sqlite:///", tmp_path)



def test_a_read_only_store_writes_nothing_and_refuses_foreign_files(tmp_path: Path) -> None:
    foreign = tmp_path / "notes.sqlite"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.commit()
    conn.close()
    before = foreign.read_bytes()
    with pytest.raises(StoreError, match="it is not an evalkit database"):
        SQLiteStore(foreign, writable=False)
    assert foreign.read_bytes() == before  # no evalkit tables were created, no WAL switched on
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    with pytest.raises(StoreError, match="it has no tables"):
        SQLiteStore(empty, writable=False)
    assert empty.stat().st_size == 0
    with pytest.raises(StoreError, match="does not exist"):
        SQLiteStore(tmp_path / "missing.sqlite", writable=False)
    assert not (tmp_path / "missing.sqlite").exists()
    path = tmp_path / "db.sqlite"
    with SQLiteStore(path) as s:
        sid = s.create_session(study_version="v").session_id
    with SQLiteStore(path, writable=False) as reader:
        assert [x.session_id for x in reader.sessions()] == [sid]
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.create_session(study_version="v")

"""The PostgreSQL backend's own behaviour on a real server: faults (restart, killed connections, a server
that is down), connection errors named without the password, and the read-only check.

What both backends must do is in test_store_contract.py.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import threading
import time

import psycopg
import pytest

from evalkit.store import StoreError, Unavailable, check_database, open_store, postgres
from evalkit.store.base import JsonField
from evalkit.store.postgres import check_connection
from tests.pg import PASSWORD


def _dbname(url: str) -> str:
    return url.rsplit("/", 1)[1]


def test_a_restarted_server_and_killed_connections_are_survived_without_reopening(pg_server, pg_url) -> None:
    with open_store(pg_url) as store:
        sid = store.create_session(study_version="v").session_id
        store.record_answer(sid, "t", 0, "A")
        pg_server.restart()  # every pooled connection is now dead
        assert store.record_answer(sid, "t", 1, "B").created
        assert pg_server.terminate(_dbname(pg_url)) >= 1  # pg_terminate_backend on the pool's connections
        assert store.record_answer(sid, "t", 2, "C").created
        assert store.answered(sid, "t") == {0, 1, 2}


def test_writers_through_a_server_restart_lose_nothing_and_double_nothing(pg_server, pg_url) -> None:
    """Evaluators clicking while the server restarts: each click either stores its answer or fails with
    Unavailable ("could not save, try again"); clicking again stores it once. Nothing confirmed is lost."""
    store = open_store(pg_url, pool_timeout=3)
    n_threads, n_answers = 8, 60
    sessions = [store.create_session(study_version="v").session_id for _ in range(n_threads)]
    confirmed: list[set[int]] = [set() for _ in range(n_threads)]
    failures = [0] * n_threads
    errors: list[BaseException] = []
    started = threading.Event()

    def evaluator(k: int) -> None:
        try:
            for i in range(n_answers):
                while True:  # the evaluator clicks again until the answer is saved
                    try:
                        store.record_answer(sessions[k], "t", i, "ABC"[i % 3], time_spent_ms=i)
                        break
                    except Unavailable as exc:
                        assert PASSWORD not in str(exc)
                        failures[k] += 1
                        time.sleep(0.05)
                confirmed[k].add(i)
                if i == 5:
                    started.set()
                time.sleep(0.01)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=evaluator, args=(k,)) for k in range(n_threads)]
    for t in threads:
        t.start()
    assert started.wait(60)
    pg_server.restart()
    for t in threads:
        t.join(timeout=180)
    assert errors == []
    for k, sid in enumerate(sessions):
        assert confirmed[k] == set(range(n_answers))
        assert store.answered(sid, "t") == confirmed[k]
    answers = store.answers()
    assert len(answers) == n_threads * n_answers  # nothing doubled
    assert len({(a.session_id, a.question_index) for a in answers}) == len(answers)
    store.close()


def test_a_server_that_is_down_gives_unavailable_then_recovers(pg_server, pg_url, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    store = open_store(pg_url, pool_timeout=2)
    sid = store.create_session(study_version="v").session_id
    pg_server.stop()
    try:
        with pytest.raises(Unavailable) as err:
            store.record_answer(sid, "t", 0, "A")
        message = str(err.value)
        assert "cannot be reached" in message or "failed" in message
        assert "evalkit:***@127.0.0.1" in message and PASSWORD not in message
        with pytest.raises(Unavailable) as opening:  # a process starting now: "cannot reach", not "set-up"
            open_store(pg_url)
        assert "cannot open the database postgresql://evalkit:***@" in str(opening.value)
        assert PASSWORD not in str(opening.value)
        # a longer outage: the pool's reconnection attempts back off (1, 2, 4 s...) meanwhile
        deadline = time.monotonic() + 7
        while time.monotonic() < deadline:
            with pytest.raises(Unavailable):
                store.get_session(sid)
            time.sleep(0.5)
    finally:
        pg_server.start()
    # the first call after the server is back works, whatever the pool's back-off (a direct connection bridges it)
    assert store.record_answer(sid, "t", 0, "A").created  # the same store, no restart of the app
    assert PASSWORD not in caplog.text  # nor in any log line of psycopg or the pool
    store.close()


def test_connection_problems_are_named_without_the_password(pg_server, pg_url) -> None:
    wrong = pg_url.replace(PASSWORD, "not-the-password")
    with pytest.raises(StoreError, match="password authentication failed") as err:
        open_store(wrong)
    assert "not-the-password" not in str(err.value) and "evalkit:***@" in str(err.value)
    missing = pg_url.rsplit("/", 1)[0] + "/no_such_db"
    with pytest.raises(StoreError, match='database "no_such_db" does not exist') as err:
        open_store(missing)
    assert PASSWORD not in str(err.value)
    with pytest.raises(StoreError, match=r"cannot open the database postgresql://evalkit:\*\*\*@127\.0\.0\.1:1/"):
        open_store(f"postgresql://evalkit:{PASSWORD}@127.0.0.1:1/evalkit")
    with pytest.raises(StoreError, match="password authentication failed") as err:
        check_database(wrong)
    assert "not-the-password" not in str(err.value)


def test_check_and_read_only_opening_change_nothing(pg_server, pg_url) -> None:
    tables = "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
    assert check_database(pg_url) == "ok, empty: the tables will be created on first use"
    with pytest.raises(StoreError, match="it is not an evalkit database"):
        open_store(pg_url, writable=False)
    assert pg_server.sql(_dbname(pg_url), tables) == "0"  # nothing was created
    with open_store(pg_url) as store:
        store.create_session(study_version="v")
    assert check_database(pg_url) == "ok, 1 session(s) stored"
    with open_store(pg_url, writable=False) as reader:
        assert len(reader.sessions()) == 1
        with pytest.raises(Exception, match=r"read-only|permission"):
            reader.create_session(study_version="v")
    pg_server.sql(_dbname(pg_url), "CREATE TABLE cats (name TEXT)")
    other = pg_server.new_database()
    pg_server.sql(_dbname(other), "CREATE TABLE cats (name TEXT)")
    for probe in (check_database, lambda u: open_store(u, writable=False)):
        with pytest.raises(StoreError, match=r"not an evalkit database \(tables: cats\)"):
            probe(other)


def test_a_transaction_pooler_in_front_works(pg_server, pg_url, caplog) -> None:
    """Managed hosts' pooled connection strings go through PgBouncer in transaction mode, which refuses
    startup options (evalkit's statement timeout) and breaks server-side prepared statements."""
    from tests.pg import PgBouncer, pgbouncer_binary

    if pgbouncer_binary() is None:
        if os.environ.get("EVALKIT_REQUIRE_POSTGRES") == "1":
            pytest.fail("pgbouncer is not installed (./scripts/test installs it)")
        pytest.skip("pgbouncer is not installed (apt-get install pgbouncer)")
    bouncer = PgBouncer(pg_server)
    try:
        url = bouncer.url(pg_url)
        with caplog.at_level(logging.WARNING, logger="evalkit.store"), open_store(url) as store:
            assert "refuses startup options" in caplog.text and PASSWORD not in caplog.text
            sessions = [store.create_session(study_version="v").session_id for _ in range(4)]
            errors: list[BaseException] = []

            def writer(sid: str) -> None:
                try:
                    for i in range(30):
                        store.record_answer(sid, "t", i, "A")
                        store.record_rating(sid, "r", i, f"p{i}", {"m": 1}, finish=i == 29)
                        assert store.progress(sid).answered["t"] == set(range(i + 1))
                except BaseException as exc:  # reported below
                    errors.append(exc)

            threads = [threading.Thread(target=writer, args=(sid,)) for sid in sessions]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert errors == []
            assert len(store.answers()) == 120 and len(store.ratings()) == 120
            assert store.read_columns("evaluations", [("id", "id", "int")]).num_rows == 120
    finally:
        bouncer.close()


def test_the_check_passes_a_live_connection_and_raises_on_a_dropped_or_closed_one(pg_server, pg_url: str) -> None:
    conn = psycopg.connect(pg_url, autocommit=True)
    check_connection(conn)
    assert pg_server.terminate(pg_url.rsplit("/", 1)[1]) == 1  # the server ends the connection under it
    with pytest.raises(psycopg.OperationalError):
        check_connection(conn)
    conn.close()
    with pytest.raises(psycopg.OperationalError):
        check_connection(conn)
    with psycopg.connect(pg_url) as not_autocommit:  # psycopg_pool's own check, which toggles autocommit
        check_connection(not_autocommit)
        assert not not_autocommit.autocommit


def test_connections_dropped_while_idle_in_the_pool_are_replaced_at_checkout(pg_server, pg_url: str) -> None:
    with open_store(pg_url, min_size=3, max_size=3, recheck_after=0.2) as store:
        store._pool.wait()  # three idle connections
        session = store.create_session(study_version="v").session_id
        assert pg_server.terminate(pg_url.rsplit("/", 1)[1]) >= 3
        time.sleep(0.3)  # idle for longer than recheck_after: checked at checkout
        # create_session is never retried: it works only because the check replaced the dropped connection
        assert store.create_session(study_version="v").session_id != session
        for i in range(5):
            store.record_answer(session, "t", i, "A")
        assert [a.question_index for a in store.answers(session)] == list(range(5))
        assert store._pool.get_stats().get("connections_lost", 0) >= 1


def test_a_connection_dropped_just_after_a_call_is_caught_by_the_retry(pg_server, pg_url: str, monkeypatch) -> None:
    """Within ``recheck_after`` of its last call a connection is not checked (no second round trip under
    load). If it was dropped in that window, an answer write still lands through the retry; only a call
    that is never retried (creating a session) says "try again", and the next one works."""
    checks = []
    monkeypatch.setattr(postgres, "check_connection", lambda conn: checks.append(conn) or check_connection(conn))
    database = pg_url.rsplit("/", 1)[1]
    with open_store(pg_url, min_size=1, max_size=1, recheck_after=60) as store:
        session = store.create_session(study_version="v").session_id
        store.record_answer(session, "t", 0, "A")
        checks.clear()
        store.record_answer(session, "t", 1, "A")
        assert checks == []  # used a moment ago: not checked again
        assert pg_server.terminate(database) >= 1
        assert store.record_answer(session, "t", 2, "A").created  # failed once, retried on a new connection
        assert pg_server.terminate(database) >= 1
        with pytest.raises(Unavailable):
            store.create_session(study_version="v")
        assert store.create_session(study_version="v").session_id != session
        assert checks  # after a failure every checkout is checked until one succeeds
        assert [a.question_index for a in store.answers(session)] == [0, 1, 2]
    with open_store(pg_url, min_size=1, max_size=1, recheck_after=0) as store:
        checks.clear()
        store.record_answer(session, "t", 3, "A")
        store.record_answer(session, "t", 4, "A")
        assert len(checks) >= 2  # recheck_after=0: every checkout is checked


def test_a_columnar_read_in_several_parts_gives_one_dictionary_per_column(pg_url: str, monkeypatch) -> None:
    """Each reader thread dictionary-encodes its own id range; the parts' dictionaries differ (the two
    halves hold different values) and must come back unified, values and missing cells intact."""
    with open_store(pg_url) as store:
        session = store.create_session(study_version="v").session_id
        for i in range(40):
            store.record_answer(session, "early" if i < 20 else "late", i, f"r{i % 3 if i < 20 else 3 + i % 2}",
                                domain=None if i % 4 == 0 else f"d{i // 20}", detail={"button": "accept"} if i % 5 == 0
                                else None)
        columns = [("id", "id", "int"), ("task", "task", "category"), ("response", "response", "category"),
                   ("domain", "domain", "category"), ("button", JsonField("detail", "button"), "category")]
        whole = store.read_columns("evaluations", columns).to_pandas()
        monkeypatch.setattr(type(store), "rows_per_part", 10)
        parts = store.read_tables({"e": ("evaluations", columns)}, threads=4)["e"]
        assert parts["task"].num_chunks == 4  # four id ranges
        assert all(chunk.dictionary.equals(parts["task"].chunk(0).dictionary) for chunk in parts["task"].chunks)
        split = parts.to_pandas()
    for frame in (whole, split):
        assert frame["task"].dtype == "category"
        assert frame["task"].tolist() == ["early"] * 20 + ["late"] * 20
        assert frame["response"].tolist() == [f"r{i % 3}" for i in range(20)] + [f"r{3 + i % 2}" for i in range(20, 40)]
        assert frame["domain"].isna().sum() == 10 and frame["domain"].dropna().str[0].eq("d").all()
        assert frame["button"].eq("accept").sum() == 8 and frame["button"].isna().sum() == 32
    assert split.astype(object).equals(whole.astype(object))


def test_columnar_reads_keep_their_connections_idle_and_survive_them_being_dropped(pg_server, pg_url: str,
                                                                                   monkeypatch) -> None:
    """The ADBC connections of a columnar read are kept for the next read (a new one costs 55-95 ms), outside
    any transaction; killed or cut by a restart meanwhile, the next read replaces them and still returns every
    row; closing the store closes them."""
    columns = [("id", "id", "int"), ("task", "task", "category"), ("response", "response", "category")]
    made = []
    connect = postgres.PostgresStore._arrow_connect

    def counted(self):
        made.append(1)
        return connect(self)

    monkeypatch.setattr(postgres.PostgresStore, "_arrow_connect", counted)
    monkeypatch.setattr(postgres.PostgresStore, "rows_per_part", 10)  # two parts, on two threads
    db = _dbname(pg_url)
    with open_store(pg_url) as store:
        sid = store.create_session(study_version="v").session_id
        for i in range(40):
            store.record_answer(sid, "t", i, f"r{i % 3}")

        def read() -> list[str]:
            table = store.read_tables({"e": ("evaluations", columns)}, threads=2)["e"]
            assert table["id"].to_pylist() == sorted(table["id"].to_pylist()) and table.num_rows == 40
            return table["response"].to_pylist()

        expected = [f"r{i % 3}" for i in range(40)]
        assert read() == expected
        first = len(made)
        assert 1 <= first <= 2 and len(store._arrow_idle) == first
        states = pg_server.sql(db, "SELECT state FROM pg_stat_activity WHERE datname = current_database() AND "
                                   "pid <> pg_backend_pid() AND query LIKE '%CAST(id AS BIGINT)%'").split()
        assert states and set(states) == {"idle"}  # not "idle in transaction"
        assert read() == expected and len(made) == first  # no new connection
        monkeypatch.setattr(store, "arrow_idle_seconds", 0.0)  # idle too long: closed, new ones made
        assert read() == expected and len(made) == 2 * first
        monkeypatch.setattr(store, "arrow_idle_seconds", 30.0)
        first = len(made)
        killed = pg_server.sql(db, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
                                   "current_database() AND pid <> pg_backend_pid() AND "
                                   "query LIKE '%CAST(id AS BIGINT)%'")
        assert int(killed) == len(store._arrow_idle)  # the kept ones
        assert read() == expected and len(made) > first
        pg_server.restart()
        again = len(made)
        assert read() == expected and len(made) > again
        kept = [conn for conn, _ in store._arrow_idle]
        assert kept
    assert store._arrow_idle == []
    with pytest.raises(Exception), kept[0].cursor() as cur:  # noqa: B017  (the driver's own class: closed)
        cur.execute("SELECT 1")


def test_a_claim_takes_three_round_trips(pg_url: str, tmp_path, monkeypatch) -> None:
    """A claim (no sweep due, the dealt unit free) waits for the server three times, counted in libpq's trace:
    BEGIN with the session's row and its claims, the pick, the INSERT with COMMIT (the pipeline's point; psycopg's
    own transaction block inside a pipeline waits six times)."""
    from psycopg import pq

    with open_store(pg_url) as store:
        store.add_queue_units("t", ["a", "b", "c"])
        sid = store.create_session(study_version="v").session_id
        assert store.claim("t", sid, 0, k=2, expire_seconds=60, prefer="a") == "a"  # (this one sweeps)
        trace = tmp_path / "trace.txt"
        checkout = store._checkout

        @contextlib.contextmanager
        def traced():
            with checkout() as conn, open(trace, "a") as out:
                conn.pgconn.trace(out.fileno())
                conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
                try:
                    yield conn
                finally:
                    conn.pgconn.untrace()

        monkeypatch.setattr(store, "_checkout", traced)
        assert store.claim("t", sid, 1, k=2, expire_seconds=60, prefer="b") == "b"
        directions = [line[0] for line in trace.read_text().splitlines() if line[:1] in ("F", "B")]
        assert "Query" in trace.read_text() or "Parse" in trace.read_text()  # the trace saw the statements
        waits = sum(1 for a, b in itertools.pairwise(directions) if a == "F" and b == "B")
        assert waits == 3
        monkeypatch.undo()
        assert sorted((r["question_index"], r["unit"]) for r in store.table("claims")) == [(0, "a"), (1, "b")]


@pytest.mark.parametrize("failure", ["python", "server"])
def test_a_claim_that_fails_midway_leaves_nothing_and_a_clean_connection(pg_url: str, monkeypatch,
                                                                          failure: str) -> None:
    """The claim's transaction (BEGIN and COMMIT sent by hand in a pipeline) is rolled back whole when the claim
    fails: after the pick (the unit's count raised) an error in the INSERT leaves the count as it was; an unknown
    session raises UnknownSession; the connections go back to the pool outside any transaction."""
    from evalkit.store import UnknownSession

    with open_store(pg_url, max_size=1) as store:  # one pooled connection: every call reuses it
        store.add_queue_units("t", ["a", "b"])
        sid = store.create_session(study_version="v").session_id
        with pytest.raises(UnknownSession):
            store.claim("t", "nobody", 0, k=2, expire_seconds=60)
        insert = "INSERT INTO claims"
        real = postgres.PostgresStore._exec

        def failing(self, conn, sql, args=()):
            if sql.startswith(insert):
                if failure == "python":
                    raise RuntimeError("the disk caught fire")
                sql = sql.replace("INTO claims", "INTO no_such_table")  # the server refuses it, in the pipeline
            return real(self, conn, sql, args)

        monkeypatch.setattr(postgres.PostgresStore, "_exec", failing)
        with pytest.raises(RuntimeError if failure == "python" else psycopg.errors.UndefinedTable):
            store.claim("t", sid, 0, k=2, expire_seconds=60, prefer="a")
        monkeypatch.undo()
        assert {r["unit"]: r["taken"] for r in store.table("queue_units")} == {"a": 0, "b": 0}
        assert store.table("claims") == []
        with store._pool.connection() as conn:
            assert conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert store.claim("t", sid, 0, k=2, expire_seconds=60, prefer="a") == "a"
        assert {r["unit"]: r["taken"] for r in store.table("queue_units")} == {"a": 1, "b": 0}

"""Benchmark 5: answers per second with 16 writer threads, and record_answer latency vs database size.

    python bench/bench_storage.py [--answers 4000] [--sizes 1000,100000,1000000] [--backend sqlite|postgres]

Floor, SQLite: raw sqlite3 inserts, one transaction each, same file settings (WAL, synchronous=FULL), one
thread (SQLite has one writer at a time). Floor, PostgreSQL (a throwaway server, durable commits): raw
psycopg inserts on the same server by the same 16 threads, each holding its own autocommit connection
for the whole run, with the statement record_answer sends (INSERT ... ON CONFLICT DO NOTHING RETURNING *,
same columns and values) into the same evalkit table (same unique index, same foreign key), psycopg's
defaults otherwise (prepared statements from the 6th execution). So the ratio is what evalkit adds: no
prepared statements (safe behind PgBouncer), the pool (10 connections for 16 threads), its health
check on every checkout, building the row and the Answer. A second floor, the same without prepared
statements, is printed beside it. Figures and floors run in alternation, each into a fresh database.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from common import BULK_EVALUATION_COLUMNS, HEADER, Databases, add_backend_option, bulk_insert, fmt_s, row

from evalkit.store import COLUMNS, Store, now_iso, open_store

THREADS = 16
EVALUATION_COLUMNS = list(BULK_EVALUATION_COLUMNS)


def raw_floor(path: Path, n: int) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, session_id TEXT, task TEXT, question_index INTEGER, "
                 "response TEXT, created_at TEXT, UNIQUE(session_id, task, question_index))")
    t0 = time.perf_counter()
    for i in range(n):
        conn.execute("INSERT INTO t (session_id, task, question_index, response, created_at) VALUES (?, ?, ?, ?, ?)",
                     (f"s{i % 100}", "turing", i, "A", now_iso()))
    elapsed = time.perf_counter() - t0
    conn.close()
    return n / elapsed


def in_threads(work: Callable[[int], None], threads: int, setup: Callable[[int], None] | None = None) -> float:
    """Run ``setup(k)`` then ``work(k)`` on ``threads`` threads; seconds from the moment every setup had
    finished (the clock starts when all threads are ready) to the end of the last work."""
    barrier = threading.Barrier(threads + 1)
    errors: list[BaseException] = []

    def run(k: int) -> None:
        try:
            if setup is not None:
                setup(k)
        finally:
            barrier.wait()
        try:
            work(k)
        except BaseException as exc:  # reported below, after every thread ended
            errors.append(exc)

    pool = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - t0
    if errors:
        raise errors[0]
    return elapsed


def pg_floor(url: str, n: int, threads: int = THREADS, prepare_threshold: int | None = 5) -> float:
    """Raw psycopg: each thread its own autocommit connection, record_answer's statement and row.
    ``prepare_threshold``: psycopg's default (5: prepared from the 6th execution), or None (never, as evalkit)."""
    import psycopg

    open_store(url).close()  # the schema
    per = n // threads
    sql = (f"INSERT INTO evaluations ({', '.join(EVALUATION_COLUMNS)}) VALUES ({', '.join(['%s'] * 16)}) "
           "ON CONFLICT (session_id, task, question_index) DO NOTHING RETURNING *")
    conns: dict[int, psycopg.Connection] = {}
    sessions = [""] * threads

    def setup(k: int) -> None:  # before the clock, as evalkit's run: a connection and a session per thread
        conns[k] = psycopg.connect(url, autocommit=True, prepare_threshold=prepare_threshold)
        sessions[k] = uuid.uuid4().hex
        conns[k].execute("INSERT INTO sessions (session_id, seed, study_version, started_at) VALUES (%s, 1, 'bench', "
                         "%s)", (sessions[k], now_iso()))

    def work(k: int) -> None:
        conn = conns[k]
        for i in range(per):
            stored = conn.execute(sql, (sessions[k], "turing", "triplet", i, None, "ABC"[i % 3], "real", "laptop",
                                        1000, None, None, '["a", "b", "c"]', '["x", "y", "z"]', 1, "{}",
                                        now_iso())).fetchall()
            assert stored

    elapsed = in_threads(work, threads, setup)
    for conn in conns.values():
        conn.close()
    return per * threads / elapsed


def threaded(location: Path | str, n: int, threads: int = THREADS, **options: object) -> tuple[float, int]:
    store = open_store(location, **options)
    sessions = [""] * threads
    per = n // threads

    def setup(k: int) -> None:  # before the clock: a session per thread (which also grows the pool)
        sessions[k] = store.create_session(study_version="bench").session_id

    def work(k: int) -> None:
        for i in range(per):
            store.record_answer(sessions[k], "turing", i, "ABC"[i % 3], kind="triplet", review_source="real",
                                domain="laptop", time_spent_ms=1000, sources=["a", "b", "c"],
                                item_ids=["x", "y", "z"], matched=True)

    elapsed = in_threads(work, threads, setup)
    stored = store.counts()["evaluations"]
    store.close()
    if stored != per * threads:
        raise AssertionError(f"{per * threads} answers written, {stored} stored")
    return per * threads / elapsed, stored


def fill(location: Path | str, n: int) -> Store:
    """A database already holding n answers (bulk-inserted: 10 answers per session)."""
    open_store(location).close()  # the schema
    now = now_iso()
    sessions = [(uuid.uuid4().hex, "", "", 1, "v", now, None, "", "completed", None, "{}")
                for _ in range(max(1, n // 10))]
    rows = ((sessions[i // 10][0], "turing", "triplet", i % 10, i % 10, "A", "real", "laptop", 1000, None, None,
             '["a","b","c"]', '["x","y","z"]', 1, "{}", now) for i in range(n))
    bulk_insert(location, [("sessions", COLUMNS["sessions"], sessions), ("evaluations", EVALUATION_COLUMNS, rows)])
    return open_store(location)


def latency(store: Store, samples: int = 300) -> float:
    sid = store.create_session(study_version="bench").session_id
    times = []
    for i in range(samples):
        t0 = time.perf_counter()
        store.record_answer(sid, "latency", i, "B", detail={"i": i})
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--answers", type=int, default=4000)
    ap.add_argument("--sizes", default="1000,100000,1000000")
    ap.add_argument("--repeat", type=int, default=3, help="runs of the figure and of the floor, alternated")
    add_backend_option(ap)
    args = ap.parse_args()
    postgres = args.backend == "postgres"
    with tempfile.TemporaryDirectory() as tmp, Databases(args.backend, Path(tmp)) as dbs:
        floors, unprepared, rates, stored = [], [], [], 0
        for k in range(args.repeat):  # alternated: the machine's drift falls on all of them
            if postgres:
                floors.append(pg_floor(dbs.new(f"raw{k}"), args.answers))
                unprepared.append(pg_floor(dbs.new(f"unprepared{k}"), args.answers, prepare_threshold=None))
            else:
                floors.append(raw_floor(dbs.new(f"raw{k}"), args.answers))
            rate, stored = threaded(dbs.new(f"threads{k}"), args.answers)
            rates.append(rate)
        floor, rate = statistics.median(floors), statistics.median(rates)
        if postgres:
            print(f"## Storage ({dbs.label}): {args.answers:,} answers, fsync on, synchronous_commit on\n")
            floor_label = f"raw psycopg INSERT ... ON CONFLICT DO NOTHING RETURNING *, {THREADS} threads (floor)"
            need = rate >= 1000 and rate >= 0.5 * floor
            target = ">= 1,000 /s and >= 0.5x floor"
        else:
            print(f"## Storage ({dbs.label}): {args.answers:,} answers, synchronous=FULL, WAL\n")
            floor_label = "raw sqlite3 inserts, one transaction each, 1 thread (floor)"
            need, target = rate >= 1000, ">= 1,000 /s"
        print(HEADER)
        print(row(floor_label, f"{floor:,.0f} /s (runs: {', '.join(f'{f:,.0f}' for f in floors)})"))
        if postgres:
            other = statistics.median(unprepared)
            print(row("the same without prepared statements (prepare_threshold=None, as evalkit)",
                      f"{other:,.0f} /s (runs: {', '.join(f'{f:,.0f}' for f in unprepared)})"))
        print(row(f"record_answer, {THREADS} threads ({stored:,} stored, none lost or doubled; runs: "
                  f"{', '.join(f'{r:,.0f}' for r in rates)})", f"{rate:,.0f} /s", f"{floor:,.0f} /s",
                  f"{rate / floor:.2f}x", target, need))
        if postgres:
            print(row("record_answer vs the floor without prepared statements", f"{rate:,.0f} /s", f"{other:,.0f} /s",
                      f"{rate / other:.2f}x"))
        lat = {}
        for size in [int(s) for s in args.sizes.split(",")]:
            t0 = time.perf_counter()
            store = fill(dbs.new(f"size{size}"), size)
            built = time.perf_counter() - t0
            lat[size] = latency(store)
            store.close()
            print(row(f"record_answer latency, {size:,} answers stored (built in {built:.1f} s)", fmt_s(lat[size])))
        sizes = sorted(lat)
        growth = lat[sizes[-1]] / lat[sizes[0]]
        print(row(f"latency at {sizes[-1]:,} / at {sizes[0]:,}", f"{growth:.2f}x", "", "", "flat (~1x)",
                  growth < 2))
        print()
        print(json.dumps({"backend": args.backend, "floor_per_s": floors, "unprepared_floor_per_s": unprepared,
                          "threads_per_s": rates, "latency_s": lat}))


if __name__ == "__main__":
    main()

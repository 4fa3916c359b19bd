"""Benchmark 9: claiming the next unit of the k-judgments-per-item queue, 1k / 10k / 100k units.

    python bench/bench_queue.py [--sizes 1000,10000,100000] [--sessions 1000] [--questions 4] [--k 5]
                                [--threads 16] [--backend sqlite|postgres]

For each size a fresh database holds the task's units, each already judged once (as in a study under way:
one answered claim per unit from earlier sessions, so the claims and answers tables grow with the size),
and ``--sessions`` new sessions. Then the sessions claim their questions: first question 0 of every
session one after another on one thread (uncontended latency), then questions 1.. on ``--threads``
threads sharing one Store (as Streamlit's script threads share the app's), every session's next question
interleaved with the others', so all sessions are claiming at once. Reported: p50 / p95 per claim.

Floor, measured in the same run on the same backend, the same way (1 thread, then the same threads): one
single-row INSERT transaction each (SQLite: raw sqlite3, BEGIN IMMEDIATE, WAL, synchronous=FULL, one
connection per thread; PostgreSQL: raw psycopg, one autocommit connection per thread, durable commits). A
claim is one write transaction of several statements, so its floor is that of one durable commit.

Also timed: ``add_queue_units`` of all units into an empty queue, and again when they are all there (the
app's start-up call).
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

from evalkit.store import COLUMNS, Store, is_postgres, now_iso, open_store

TASK = "compare"
EXPIRE = 1800.0


def pct(samples: list[float], q: float) -> float:
    """The q-quantile (0..1) of the samples."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def on_threads(threads: int, work: Callable[[int], list[float]]) -> list[float]:
    """``work(t)`` on ``threads`` threads, started together; every latency they return."""
    barrier = threading.Barrier(threads)
    out: list[list[float]] = [[] for _ in range(threads)]
    errors: list[BaseException] = []

    def run(t: int) -> None:
        barrier.wait()
        try:
            out[t] = work(t)
        except BaseException as exc:  # reported after every thread ended
            errors.append(exc)

    pool = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    if errors:
        raise errors[0]
    return [x for part in out for x in part]


def session_rows(n: int, status: str) -> list[tuple]:
    now = now_iso()
    return [(uuid.uuid4().hex, "", "", 1, "bench", now, None, "", status, None, "{}") for _ in range(n)]


def prepare(location: Path | str, units: int, sessions: int) -> list[str]:
    """A database with ``units`` units each judged once by earlier sessions, and ``sessions`` new sessions."""
    open_store(location).close()  # the schema
    names = [f"item{i:06d}|sysA|sysB" for i in range(units)]
    earlier = session_rows(max(1, units // 10), "completed")
    old = time.time() - 7200
    now = now_iso()
    evaluations, claims = [], []
    for i, unit in enumerate(names):
        sid = earlier[i // 10][0]
        evaluations.append((sid, TASK, "compare", i % 10, None, "A", None, None, 1000, None, None, "[]", "[]", None,
                            "{}", now))
        claims.append((sid, TASK, unit, i % 10, old + i * 0.01, None, 1))
    new = session_rows(sessions, "active")
    bulk_insert(location, [
        ("queue_units", COLUMNS["queue_units"], [(TASK, u, i, 1) for i, u in enumerate(names)]),
        ("sessions", COLUMNS["sessions"], earlier + new),
        ("evaluations", BULK_EVALUATION_COLUMNS, evaluations),
        ("claims", COLUMNS["claims"], claims),
    ])
    return [r[0] for r in new]


def claim_latencies(store: Store, sessions: list[str], questions: int, k: int, threads: int) -> tuple[list[float],
                                                                                                      list[float]]:
    """Question 0 of every session on one thread, then questions 1.. on ``threads`` threads."""
    def claim(sid: str, q: int) -> float:
        t0 = time.perf_counter()
        unit = store.claim(TASK, sid, q, k=k, expire_seconds=EXPIRE)
        elapsed = time.perf_counter() - t0
        if unit is None:
            raise AssertionError("the queue ran out: raise --k")
        return elapsed

    one = [claim(sid, 0) for sid in sessions]

    def work(t: int) -> list[float]:
        mine = sessions[t::threads]
        return [claim(sid, q) for q in range(1, questions) for sid in mine]  # every session's next, in turn

    return one, on_threads(threads, work)


def floor_latencies(location: Path | str, n: int, threads: int) -> tuple[list[float], list[float]]:
    """One single-row INSERT transaction each: ``n`` on one thread, then ``n * 3`` spread over ``threads``."""
    postgres = is_postgres(str(location))
    if postgres:
        import psycopg

        def connect() -> object:
            conn = psycopg.connect(str(location), autocommit=True)
            conn.execute("CREATE TABLE IF NOT EXISTS floor (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
                         " session_id TEXT, q INTEGER, at DOUBLE PRECISION)")
            return conn

        def insert(conn: object, i: int) -> None:
            conn.execute("INSERT INTO floor (session_id, q, at) VALUES (%s, %s, %s)", ("s", i, time.time()))
    else:
        def connect() -> object:
            conn = sqlite3.connect(location, isolation_level=None, check_same_thread=False, timeout=30)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA busy_timeout = 30000")
            conn.execute("CREATE TABLE IF NOT EXISTS floor (id INTEGER PRIMARY KEY, session_id TEXT, q INTEGER, "
                         "at REAL)")
            return conn

        def insert(conn: object, i: int) -> None:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO floor (session_id, q, at) VALUES (?, ?, ?)", ("s", i, time.time()))
            conn.execute("COMMIT")

    def timed_inserts(conn: object, count: int) -> list[float]:
        out = []
        for i in range(count):
            t0 = time.perf_counter()
            insert(conn, i)
            out.append(time.perf_counter() - t0)
        return out

    first = connect()
    one = timed_inserts(first, n)
    conns = [first] + [connect() for _ in range(threads - 1)]
    many = on_threads(threads, lambda t: timed_inserts(conns[t], 3 * n // threads))
    for conn in conns:
        conn.close()
    return one, many


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--questions", type=int, default=4, help="claims per session")
    ap.add_argument("--k", type=int, default=5, help="judgments per unit (the units already have one each)")
    ap.add_argument("--threads", type=int, default=16)
    add_backend_option(ap)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.sessions * args.questions > min(sizes) * (args.k - 1):
        raise SystemExit("not enough slots for every claim: raise --k or lower --sessions / --questions")
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp, Databases(args.backend, Path(tmp)) as dbs:
        print(f"## Claim queue ({dbs.label}): {args.sessions:,} sessions x {args.questions} claims, k = {args.k}, "
              f"{args.threads} threads\n")
        print(HEADER)
        for size in sizes:
            f1, fn = floor_latencies(dbs.new(f"floor{size}"), args.sessions, args.threads)
            reg = dbs.new(f"register{size}")
            with open_store(reg) as store:
                units = [f"item{i:06d}|sysA|sysB" for i in range(size)]
                t0 = time.perf_counter()
                assert store.add_queue_units(TASK, units) == size
                register = time.perf_counter() - t0
                t0 = time.perf_counter()
                assert store.add_queue_units(TASK, units) == 0
                again = time.perf_counter() - t0
            location = dbs.new(f"queue{size}")
            sessions = prepare(location, size, args.sessions)
            with open_store(location) as store:
                one, many = claim_latencies(store, sessions, args.questions, args.k, args.threads)
                status = store.queue_status(TASK, args.k)
            expected = size + args.sessions * args.questions
            if status.judged + status.live != expected:
                raise AssertionError(f"{expected} claims made, the queue counts {status.judged + status.live}")
            results[size] = {"claim_1": one, "claim_n": many, "floor_1": f1, "floor_n": fn, "register": register,
                             "register_again": again}
            print(row(f"{size:,} units: add_queue_units, new / all already there", f"{fmt_s(register)} / "
                      f"{fmt_s(again)}"))
            for label, claims, floors in (("1 thread", one, f1), (f"{args.threads} threads", many, fn)):
                p50, p95 = statistics.median(claims), pct(claims, 0.95)
                f50, f95 = statistics.median(floors), pct(floors, 0.95)
                print(row(f"{size:,} units: claim latency p50 / p95, {label} ({len(claims):,} claims)",
                          f"{fmt_s(p50)} / {fmt_s(p95)}", f"{fmt_s(f50)} / {fmt_s(f95)}",
                          f"{p50 / f50:.2f}x / {p95 / f95:.2f}x", "p50 <= 5 ms", p50 <= 0.005))
        first, last = sizes[0], sizes[-1]
        for key, label in (("claim_1", "1 thread"), ("claim_n", f"{args.threads} threads")):
            floor = key.replace("claim", "floor")
            growth = statistics.median(results[last][key]) / statistics.median(results[first][key])
            # (the floors' own drift between the sizes, on a shared machine, divided out)
            drift = statistics.median(results[last][floor]) / statistics.median(results[first][floor])
            print(row(f"claim latency p50 at {last:,} / at {first:,} units, {label}", f"{growth:.2f}x",
                      f"floor {drift:.2f}x", f"{growth / drift:.2f}x", "flat (~1x)", growth / drift < 1.5))
        print()
        print(json.dumps({"backend": args.backend, **{
            str(size): {"register_s": r["register"], "register_again_s": r["register_again"],
                        **{f"{key}_p50_s": statistics.median(r[key]) for key in ("claim_1", "claim_n", "floor_1",
                                                                                  "floor_n")},
                        **{f"{key}_p95_s": pct(r[key], 0.95) for key in ("claim_1", "claim_n", "floor_1", "floor_n")}}
            for size, r in results.items()}}))


if __name__ == "__main__":
    main()

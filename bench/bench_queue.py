"""Benchmark 9: claiming the next unit of the k-judgments-per-item queue, 1k / 10k / 100k units.

    python bench/bench_queue.py [--sizes 1000,10000,100000] [--sessions 1000] [--questions 4] [--k 6]
                                [--threads 16] [--rate 600] [--workers 48] [--backend sqlite|postgres]

For each size a fresh database holds the task's units, each already judged once (as in a study under way:
one answered claim per unit from earlier sessions, so the claims and answers tables grow with the size),
and ``--sessions`` new sessions. Then the sessions claim their questions: first question 0 of every
session one after another on one thread (uncontended latency), then questions 1.. on ``--threads``
threads sharing one Store (as Streamlit's script threads share the app's), every session's next question
interleaved with the others', so all sessions are claiming at once. Reported: p50 / p95 per claim.

Floor, measured in the same run on the same backend, the same way (1 thread, then the same threads): one
single-row INSERT transaction each (SQLite: raw sqlite3, BEGIN IMMEDIATE, WAL, synchronous=FULL, one
connection per thread; PostgreSQL: raw psycopg, one autocommit connection per thread, durable commits). A
claim is one write transaction of several statements, so its floor is that of one durable commit. The
sessions are split into rounds; each round runs the floor and every size in a rotating order, so the
machine's drift (a shared disk's fsync times vary several-fold) falls on all of them alike.

Paced (``--rate``, default 600 claims/s on 48 threads): the closed loop above has 16 threads claiming back to
back, as many claims a second as the machine can make (reported beside its latency), far beyond what 1,000
people produce (an evaluator claims once per question, every 5-30 s: 1,000 of them make 30-200 claims/s). Its
latency is the queue in front of the CPU (by Little's law, 16 claims in flight x the CPU one costs / the cores),
so it is a stress test and carries no target. The target, 5 ms a claim with 1,000 sessions claiming
concurrently, is checked on the paced phase: the sessions claim once more each at a fixed rate (an open loop:
claims start on a schedule, whatever the earlier ones took, on a pool of ``--workers`` threads), latency counted
from the scheduled start (waiting for a free worker included); the floor is paced the same way.

Every claim prefers the unit the queue's deal gives it (:func:`evalkit.queue.deal`), as the app's claims do, and
the study is sized as the app sizes its deal: one ``k`` throughout, each session dealt its ``--questions`` claims
plus the paced one, so at 1,000 units the queue ends exactly full (1,000 units x 5 open slots = 1,000 sessions x
5 claims with the defaults). Until 2026-11-24 the paced claim raised ``k`` by one while the deal gave every unit
to one session more than the closed loop's ``k`` had room for: at 1,000 units, 80 % of the paced claims then
found their dealt unit full and raced greedily for the last open slots (136 ms p50 at 600 claims/s; 5.3 ms at
300/s), a study whose deal does not match its ``k``, which the app never makes.

Also timed: ``add_queue_units`` of all units into an empty queue, and again when they are all there (the
app's start-up call).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import BULK_EVALUATION_COLUMNS, HEADER, Databases, add_backend_option, bulk_insert, fmt_s, row

from evalkit.queue import deal
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
    names = unit_names(units)
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


def dealer(units: int, sessions: list[str], per_session: int) -> Callable[[str, int], str]:
    """The unit the app's deal prefers for a session's question (:func:`evalkit.queue.deal`; the sessions' arrival:
    their place in ``sessions``; ``per_session``: the queued questions each session claims, the paced one
    included), over the units of :func:`prepare` in their registered order."""
    names = unit_names(units)
    arrival = {sid: n for n, sid in enumerate(sessions)}
    return lambda sid, q: deal(names, arrival[sid], q, per_session)


def unit_names(units: int) -> list[str]:
    return [f"item{i:06d}|sysA|sysB" for i in range(units)]


def claim_latencies(store: Store, sessions: list[str], questions: int, k: int, threads: int,
                    prefer: Callable[[str, int], str]) -> tuple[list[float], list[float]]:
    """Question 0 of every session on one thread, then questions 1.. on ``threads`` threads; each claim prefers
    the unit the deal gives it, as the app's claims do."""
    def claim(sid: str, q: int) -> float:
        t0 = time.perf_counter()
        unit = store.claim(TASK, sid, q, k=k, expire_seconds=EXPIRE, prefer=prefer(sid, q))
        elapsed = time.perf_counter() - t0
        if unit is None:
            raise AssertionError("the queue ran out: raise --k")
        return elapsed

    one = [claim(sid, 0) for sid in sessions]

    def work(t: int) -> list[float]:
        mine = sessions[t::threads]
        return [claim(sid, q) for q in range(1, questions) for sid in mine]  # every session's next, in turn

    return one, on_threads(threads, work)


def paced(calls: list[Callable[[], object]], rate: float, workers: int) -> list[float]:
    """Run ``calls`` starting at ``rate`` per second (an open loop) on ``workers`` threads; each one's latency
    from its scheduled start to its end (so a wait for a free worker counts)."""
    start = time.perf_counter() + 0.05
    lock = threading.Lock()
    todo = iter(enumerate(calls))
    out: list[float] = []

    def work(_t: int) -> list[float]:
        mine = []
        while True:
            with lock:
                nxt = next(todo, None)
            if nxt is None:
                return mine
            i, call = nxt
            due = start + i / rate
            wait = due - time.perf_counter()
            if wait > 0:
                time.sleep(wait)
            call()
            mine.append(time.perf_counter() - due)

    out = on_threads(workers, work)
    return out


def floor_connection(location: Path | str) -> Any:
    """A raw connection (no evalkit) to a database with a one-table schema for the floor."""
    if is_postgres(str(location)):
        import psycopg

        conn = psycopg.connect(str(location), autocommit=True)
        conn.execute("CREATE TABLE IF NOT EXISTS floor (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
                     "session_id TEXT, q INTEGER, at DOUBLE PRECISION)")
        return conn
    conn = sqlite3.connect(location, isolation_level=None, check_same_thread=False, timeout=30)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE IF NOT EXISTS floor (id INTEGER PRIMARY KEY, session_id TEXT, q INTEGER, at REAL)")
    return conn


def insert_floor_row(conn: Any, tag: str, i: int) -> None:
    """The floor's unit of work: one single-row INSERT transaction on a :func:`floor_connection`."""
    if isinstance(conn, sqlite3.Connection):
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO floor (session_id, q, at) VALUES (?, ?, ?)", (tag, i, time.time()))
        conn.execute("COMMIT")
    else:
        conn.execute("INSERT INTO floor (session_id, q, at) VALUES (%s, %s, %s)", (tag, i, time.time()))


def floor_latencies(conns: list[Any], n: int, threads: int) -> tuple[list[float], list[float]]:
    """One single-row INSERT transaction each: ``n`` on one thread, then ``n * 3`` spread over ``threads``
    (``conns``: one :func:`floor_connection` per thread), as the claims of ``n`` sessions are timed."""
    def timed_inserts(conn: Any, count: int) -> list[float]:
        out = []
        for i in range(count):
            t0 = time.perf_counter()
            insert_floor_row(conn, "s", i)
            out.append(time.perf_counter() - t0)
        return out

    one = timed_inserts(conns[0], n)
    many = on_threads(threads, lambda t: timed_inserts(conns[t], (threads - 1) * n // threads))
    return one, many


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--questions", type=int, default=4, help="claims per session")
    ap.add_argument("--k", type=int, default=6, help="judgments per unit (the units already have one each)")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--rate", type=float, default=600.0, help="paced phase: claims started per second (0: skip)")
    ap.add_argument("--workers", type=int, default=48, help="paced phase: threads the claims are started on")
    ap.add_argument("--rounds", type=int, default=4, help="the sessions are split into rounds; each round runs "
                                                          "the floor and every size, in a rotating order")
    add_backend_option(ap)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    per_session = args.questions + (args.rate > 0)  # the paced phase claims one more question per session
    if args.sessions * per_session > min(sizes) * (args.k - 1):
        raise SystemExit("not enough slots for every claim: raise --k or lower --sessions / --questions")
    keys = ("claim_1", "claim_n", "floor_1", "floor_n", "claim_paced", "floor_paced")
    results: dict[int, dict[str, Any]] = {size: {key: [] for key in keys} for size in sizes}
    with tempfile.TemporaryDirectory() as tmp, Databases(args.backend, Path(tmp)) as dbs:
        print(f"## Claim queue ({dbs.label}): {args.sessions:,} sessions x {args.questions} claims, k = {args.k}, "
              f"{args.threads} threads, {args.rounds} rounds\n")
        stores, sessions, prefers = {}, {}, {}
        for size in sizes:
            with open_store(dbs.new(f"register{size}")) as store:
                units = unit_names(size)
                t0 = time.perf_counter()
                assert store.add_queue_units(TASK, units) == size
                results[size]["register"] = time.perf_counter() - t0
                t0 = time.perf_counter()
                assert store.add_queue_units(TASK, units) == 0
                results[size]["register_again"] = time.perf_counter() - t0
            location = dbs.new(f"queue{size}")
            sessions[size] = prepare(location, size, args.sessions)
            prefers[size] = dealer(size, sessions[size], per_session)
            stores[size] = open_store(location)
        floor_db = dbs.new("floor")
        conns = [floor_connection(floor_db) for _ in range(args.threads)]
        os.sync()  # the bulk inserts' pages on disk now, not flushed while the claims' commits wait for the disk
        per = -(-args.sessions // args.rounds)
        for r in range(args.rounds):  # alternated: the machine's drift falls on every size and the floor alike
            order = ["floor", *sizes]
            order = order[r % len(order):] + order[:r % len(order)]
            for what in order:
                if what == "floor":
                    one, many = floor_latencies(conns, per, args.threads)
                    for size in sizes:  # the one floor, measured once per round, stands beside every size
                        results[size]["floor_1"] += one
                        results[size]["floor_n"] += many
                    continue
                t0 = time.perf_counter()
                one, many = claim_latencies(stores[what], sessions[what][r * per:(r + 1) * per], args.questions,
                                            args.k, args.threads, prefers[what])
                spent = time.perf_counter() - t0 - sum(one)  # the threads' phase (the one-thread claims are timed)
                results[what]["rate_n"] = results[what].get("rate_n", 0.0) + len(many) / spent / args.rounds
                results[what]["claim_1"] += one
                results[what]["claim_n"] += many
        if args.rate > 0:  # one more claim per session, on a schedule (see the module's docstring)
            import queue as queues

            free: queues.Queue[Any] = queues.Queue()
            for conn in conns:
                free.put(conn)

            def floor_insert(i: int) -> None:
                conn = free.get()
                try:
                    insert_floor_row(conn, "p", i)
                finally:
                    free.put(conn)

            def claimer(store: Store, sid: str) -> Callable[[], object]:
                return lambda: store.claim(TASK, sid, args.questions, k=args.k, expire_seconds=EXPIRE,
                                           prefer=prefers[what](sid, args.questions))

            for what in ["floor", *sizes]:
                if what == "floor":
                    lat = paced([lambda i=i: floor_insert(i) for i in range(args.sessions)], args.rate, args.workers)
                    for size in sizes:
                        results[size]["floor_paced"] = lat
                else:
                    results[what]["claim_paced"] = paced([claimer(stores[what], sid) for sid in sessions[what]],
                                                         args.rate, args.workers)
        for conn in conns:
            conn.close()
        print(HEADER)
        for size in sizes:
            status = stores[size].queue_status(TASK, args.k)
            stores[size].close()
            expected = size + args.sessions * (args.questions + (args.rate > 0))
            if status.judged + status.live != expected:
                raise AssertionError(f"{expected} claims made, the queue counts {status.judged + status.live}")
            res = results[size]
            print(row(f"{size:,} units: add_queue_units, new / the same list again", f"{fmt_s(res['register'])} / "
                      f"{fmt_s(res['register_again'])}"))
            labels = [("1 thread", "claim_1"), (f"{args.threads} threads back to back", "claim_n")]
            if args.rate > 0:
                labels.append((f"paced, {args.rate:g} claims/s on {args.workers} threads", "claim_paced"))
            for label, key in labels:
                claims, floors = res[key], res[key.replace("claim", "floor")]
                p50, p95 = statistics.median(claims), pct(claims, 0.95)
                f50, f95 = statistics.median(floors), pct(floors, 0.95)
                # back to back is a stress test (its rate is what the machine can do, see the docstring): its
                # latency is reported beside its throughput, with no target
                stress = key == "claim_n"
                print(row(f"{size:,} units: claim latency p50 / p95, {label} ({len(claims):,} claims"
                          + (f", {res['rate_n']:,.0f} claims/s)" if stress else ")"),
                          f"{fmt_s(p50)} / {fmt_s(p95)}", f"{fmt_s(f50)} / {fmt_s(f95)}",
                          f"{p50 / f50:.2f}x / {p95 / f95:.2f}x", "stress: none" if stress else "p50 <= 5 ms",
                          None if stress else p50 <= 0.005))
        first, last = sizes[0], sizes[-1]
        for key, label in (("claim_1", "1 thread"), ("claim_n", f"{args.threads} threads"),
                           *((("claim_paced", "paced"),) if args.rate > 0 else ())):
            growth = statistics.median(results[last][key]) / statistics.median(results[first][key])
            stress = key == "claim_n"  # (no target, see above)
            print(row(f"claim latency p50 at {last:,} / at {first:,} units, {label}", f"{growth:.2f}x", "", "",
                      "stress: none" if stress else "flat (< 1.5x)", None if stress else growth < 1.5))
        print()
        print(json.dumps({"backend": args.backend, **{
            str(size): {"register_s": r["register"], "register_again_s": r["register_again"],
                        **{f"{key}_p50_s": statistics.median(r[key]) for key in keys if r[key]},
                        **{f"{key}_p95_s": pct(r[key], 0.95) for key in keys if r[key]}}
            for size, r in results.items()}}))


if __name__ == "__main__":
    main()

"""Benchmark 5: answers per second with 16 writer threads, and record_answer latency vs database size.

    python bench/bench_storage.py [--answers 4000] [--sizes 1000,100000,1000000]

Floor: raw sqlite3 inserts, one transaction each, same file settings (WAL, synchronous=FULL), one thread.
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
from pathlib import Path

from common import HEADER, fmt_s, row

from evalkit.store import Store, now_iso, open_store


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


def threaded(path: Path, n: int, threads: int = 16) -> tuple[float, int]:
    store = open_store(path)
    sessions = [store.create_session(study_version="bench").session_id for _ in range(threads)]
    per = n // threads
    barrier = threading.Barrier(threads + 1)

    def work(k: int) -> None:
        barrier.wait()
        for i in range(per):
            store.record_answer(sessions[k], "turing", i, "ABC"[i % 3], kind="triplet", review_source="real",
                                domain="laptop", time_spent_ms=1000, sources=["a", "b", "c"],
                                item_ids=["x", "y", "z"], matched=True)

    pool = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - t0
    stored = len(store.answers())
    store.close()
    return per * threads / elapsed, stored


def fill(path: Path, n: int) -> Store:
    """A database already holding n answers (bulk-inserted: 10 answers per session)."""
    store = open_store(path, synchronous="NORMAL")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    now = now_iso()
    sessions = [(uuid.uuid4().hex, "", "", 1, "v", now, None, "", "completed", None, "{}")
                for _ in range(max(1, n // 10))]
    conn.executemany("INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", sessions)
    rows = ((sessions[i // 10][0], "turing", "triplet", i % 10, i % 10, "A", "real", "laptop", 1000, None, None,
             '["a","b","c"]', '["x","y","z"]', 1, "{}", now) for i in range(n))
    conn.executemany("INSERT INTO evaluations (session_id, task, kind, question_index, slot, response, review_source,"
                     " domain, time_spent_ms, left_source, right_source, sources, item_ids, matched, detail,"
                     " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    conn.execute("COMMIT")
    conn.close()
    store.close()
    return open_store(path)


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
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        floor = statistics.median(raw_floor(tmp / f"raw{k}.sqlite", args.answers) for k in range(3))
        rates, stored = [], 0
        for k in range(3):
            rate, stored = threaded(tmp / f"threads{k}.sqlite", args.answers)
            rates.append(rate)
        rate = statistics.median(rates)
        print(f"## Storage: {args.answers:,} answers, synchronous=FULL, WAL\n")
        print(HEADER)
        print(row("raw sqlite3 inserts, one transaction each, 1 thread (floor)", f"{floor:,.0f} /s"))
        print(row(f"record_answer, 16 threads ({stored:,} stored, none lost or doubled)", f"{rate:,.0f} /s",
                  f"{floor:,.0f} /s", f"{rate / floor:.2f}x", ">= 1,000 /s", rate >= 1000))
        lat = {}
        for size in [int(s) for s in args.sizes.split(",")]:
            t0 = time.perf_counter()
            store = fill(tmp / f"size{size}.sqlite", size)
            built = time.perf_counter() - t0
            lat[size] = latency(store)
            store.close()
            print(row(f"record_answer latency, {size:,} answers stored (built in {built:.1f} s)", fmt_s(lat[size])))
        sizes = sorted(lat)
        growth = lat[sizes[-1]] / lat[sizes[0]]
        print(row(f"latency at {sizes[-1]:,} / at {sizes[0]:,}", f"{growth:.2f}x", "", "", "flat (~1x)",
                  growth < 2))
        print()
        print(json.dumps({"floor_per_s": floor, "threads_per_s": rate, "latency_s": lat}))


if __name__ == "__main__":
    main()

"""Benchmark 6: the full analysis on 1,000,000 evaluation rows (20,000 sessions) plus 200,000 rating rows;
a refresh with no new answers; Bradley–Terry over 10 sources and 1,000,000 comparisons, and its bootstrap
intervals (1,000 resamples of 20,000 evaluators) next to one fit.

    python bench/bench_stats.py [--sessions 20000] [--answers 50] [--repeat 3] [--only bootstrap]
                                [--backend sqlite|postgres]

The floor of reading is one scan of the evaluations table by the database itself (a sum over one
column, no rows returned), timed in alternation with the cold analysis. With ``--backend postgres``
the rows are copied into a throwaway PostgreSQL server (COPY, then VACUUM ANALYZE) and the
Bradley–Terry parts, which do not read the database, are left out.

The results page checks for new answers every 3 s in a small fragment (pages/results.py, watch): with
no new answers a tick asks for the data version and renders nothing else, so the tick is measured as
that query. A tick that finds new answers renders the whole page again: that script run (cached
report) is measured in AppTest at 200 and at --sessions evaluators, next to a trivial one-button app
in the same harness.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import numpy as np
from bench_rerun import SCRIPT_TIMES, TRIVIAL
from common import (
    BULK_EVALUATION_COLUMNS,
    HEADER,
    ROOT,
    Databases,
    add_backend_option,
    bulk_insert,
    fmt_s,
    row,
    server_like_apptest,
)
from streamlit.testing.v1 import AppTest

from evalkit import stats
from evalkit.analysis import Options, analyse, load_frames
from evalkit.store import COLUMNS, is_postgres, now_iso, open_store

SOURCES = ["real", "cera", "heuristic"]
DOMAINS = ["laptop", "restaurant", "hotel"]
SUMMARY = {"title": "bench", "tasks": [
    {"id": "turing", "kind": "triplet", "title": "Spot", "sources": SOURCES, "target": "real",
     "selection": "per-evaluator"},
    {"id": "pairwise", "kind": "pairwise", "title": "Natural", "response": "choice"},
    {"id": "help", "kind": "pairwise", "title": "Helpful", "response": "slider"},
    {"id": "novelty", "kind": "rating", "title": "Rate", "familiarity": True,
     "metrics": [{"id": m, "label": m, "scale": 5} for m in ("specificity", "relevance", "factuality", "rating")]},
]}


def build(location: Path | str, sessions: int, answers: int) -> None:
    """A database with sessions x answers evaluation rows (half triplets, a quarter pairwise choices, a quarter
    slider answers) and 10 rating rows each."""
    open_store(location).close()  # the schema
    rng = random.Random(7)
    now = now_iso()
    ids = [uuid.uuid4().hex for _ in range(sessions)]
    half = answers // 2

    def evaluations():
        for sid in ids:
            for i in range(half):
                picked = rng.choices(SOURCES, weights=(5, 3, 2))[0]
                yield (sid, "turing", "triplet", i, i, "ABC"[rng.randrange(3)], picked, DOMAINS[i % 3],
                       rng.randint(800, 30000), None, None, '["real","cera","heuristic"]', '["x","y","z"]', 1, "{}",
                       now)
            for i in range((answers - half) // 2):
                left, right = rng.sample(SOURCES, 2)
                choice = "A" if rng.random() < 0.55 else "B"
                yield (sid, "pairwise", "pairwise", i, i, choice, left if choice == "A" else right,
                       DOMAINS[i % 3], rng.randint(800, 30000), left, right, "[]", "[]", 1, "{}", now)
            for i in range(answers - half - (answers - half) // 2):
                left, right = rng.sample(SOURCES, 2)
                value = rng.choice((-40, -10, 0, 0, 10, 25, 50))
                button = "accept" if rng.random() < 0.6 else "reject"
                picked = left if value < 0 else right if value > 0 else None
                yield (sid, "help", "pairwise", i, i, str(value), picked, DOMAINS[i % 3],
                       rng.randint(800, 30000), left, right, "[]", "[]", 1,
                       json.dumps({"button": button, "outcome": "x"}), now)

    def ratings():
        for sid in ids:
            for q in range(2):
                item = f"p{rng.randrange(40)}"
                for metric in ("familiarity", "specificity", "relevance", "factuality", "rating"):
                    yield (sid, "novelty", q, item, metric, rng.randint(1, 5), "", 5000, now)

    bulk_insert(location, [
        ("sessions", COLUMNS["sessions"],
         [(sid, f"e{k}", "", k, "v", now, now if k % 5 else None, "", "completed" if k % 5 else "active", None, "{}")
          for k, sid in enumerate(ids)]),
        ("evaluations", BULK_EVALUATION_COLUMNS, evaluations()),
        ("ratings", COLUMNS["ratings"][1:], ratings()),
        ("settings", COLUMNS["settings"], [("study:v", json.dumps(SUMMARY), now)]),
    ])


def scan_floor(location: Path | str) -> tuple[str, Callable[[], object], Callable[[], None]]:
    """(label, one scan of the evaluations table by the database itself, close)."""
    if is_postgres(location):
        import psycopg

        conn = psycopg.connect(str(location), autocommit=True)
        return ("one PostgreSQL scan", lambda: conn.execute("SELECT sum(time_spent_ms) FROM evaluations").fetchone(),
                conn.close)
    lite = sqlite3.connect(location)
    return "one SQLite scan", lambda: lite.execute("SELECT sum(time_spent_ms) FROM evaluations").fetchone(), lite.close


def page_refresh(db: Path | str, reruns: int = 8) -> tuple[float, float] | None:
    """(first view: unlock, read, analyse and render; median script run of a whole re-render with the
    report cached) of the results page in AppTest, on the database ``db``; None when the page fails
    (Streamlit has logged the traceback)."""
    os.environ["EVALKIT_CONFIG"] = str(ROOT / "config.toml")
    os.environ["EVALKIT_DATABASE"] = str(db)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.secrets["results_password"] = "bench"
    at.run()
    at.switch_page("pages/results.py").run()
    at.text_input(key="results_password_input").input("bench")
    [unlock] = [b for b in at.button if b.label == "Unlock"]
    SCRIPT_TIMES.clear()
    unlock.click().run()
    first = sum(SCRIPT_TIMES)
    if at.exception:
        return None
    runs = []
    for _ in range(reruns):
        SCRIPT_TIMES.clear()
        at.run()
        runs.append(sum(SCRIPT_TIMES))
    return first, statistics.median(runs)


def trivial_rerun(reruns: int = 20) -> float:
    """Median script run of a trivial one-button app in AppTest (the floor of any page rerun)."""
    at = AppTest.from_string(TRIVIAL, default_timeout=30).run()
    runs = []
    for _ in range(reruns):
        SCRIPT_TIMES.clear()
        at.run()
        runs.append(sum(SCRIPT_TIMES))
    return statistics.median(runs)


def bt_bootstrap(repeat: int, evaluators: int = 20_000, comparisons: int = 1_000_000) -> None:
    """Bradley–Terry intervals: 1,000 resamples of evaluators over 1,000,000 comparisons (10 sources,
    ``evaluators`` evaluators with 50 comparisons each), next to the floor of one Bradley–Terry fit of the
    same comparisons from its win matrix, timed in alternation."""
    rng = np.random.default_rng(2)
    names = [f"system{k}" for k in range(10)]
    a = rng.integers(0, 10, comparisons)
    b = (a + rng.integers(1, 10, comparisons)) % 10
    a_wins = rng.random(comparisons) < 0.5 + 0.04 * (a - b) / 10
    evaluator = np.arange(comparisons) % evaluators
    winner, loser = np.where(a_wins, a, b), np.where(a_wins, b, a)
    boot, fit = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        intervals = stats.bradley_terry_bootstrap(names, evaluator, winner, loser, resamples=1000, seed=0)
        boot.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        w = np.bincount(winner * 10 + loser, minlength=100).reshape(10, 10).astype(float)
        stats.bradley_terry_matrix(names, w)
        fit.append(time.perf_counter() - t0)
    assert intervals["low"].notna().all()
    b_med, f_med = statistics.median(boot), statistics.median(fit)
    print(row(f"Bradley–Terry 95% intervals, bootstrap over {evaluators:,} evaluators, 1,000 resamples, "
              f"{comparisons:,} comparisons, 10 sources", fmt_s(b_med), f"one Bradley–Terry fit {fmt_s(f_med)}",
              f"{b_med / f_med:.0f}x", "<= 2 s", b_med <= 2))


def pl_bootstrap(repeat: int, evaluators: int = 2_000, per_evaluator: int = 20) -> None:
    """Plackett–Luce intervals: 1,000 resamples of ``evaluators`` evaluators giving ``per_evaluator`` full rankings
    of 4 systems each, next to the floor of one Plackett–Luce fit of the same rankings, timed in alternation."""
    rng = np.random.default_rng(2)
    items = ["s0", "s1", "s2", "s3"]
    perms = [list(p) for p in itertools.permutations(items)]
    index = {tuple(p): i for i, p in enumerate(itertools.permutations(range(4)))}
    ev = np.repeat(np.arange(evaluators), per_evaluator)
    utility = np.array([0.6, 0.2, -0.2, -0.6]) + rng.gumbel(size=(len(ev), 4))
    code = np.array([index[tuple(o)] for o in np.argsort(-utility, axis=1)])
    cell, count = np.unique(ev * 24 + code, return_counts=True)
    evaluator, ranking = cell // 24, cell % 24
    totals = np.bincount(ranking, weights=count, minlength=24)
    boot, fit = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        intervals = stats.plackett_luce_bootstrap(perms, evaluator, ranking, count, items=items, resamples=1000)
        boot.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        stats.plackett_luce(perms, items, weights=totals)
        fit.append(time.perf_counter() - t0)
    assert intervals["low"].notna().all()
    b_med, f_med = statistics.median(boot), statistics.median(fit)
    print(row(f"Plackett–Luce 95% intervals, bootstrap over {evaluators:,} evaluators x {per_evaluator} rankings of 4 "
              "systems, 1,000 resamples", fmt_s(b_med), f"one Plackett–Luce fit {fmt_s(f_med)}",
              f"{b_med / f_med:.0f}x"))


def main() -> None:
    server_like_apptest()
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=20_000)
    ap.add_argument("--answers", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", choices=("bootstrap",),
                    help="run only this part (bootstrap: Bradley–Terry and Plackett–Luce intervals)")
    add_backend_option(ap)
    args = ap.parse_args()
    if args.only == "bootstrap":
        print(HEADER)
        bt_bootstrap(max(args.repeat, 5))
        pl_bootstrap(max(args.repeat, 5))
        return
    postgres = args.backend == "postgres"
    with tempfile.TemporaryDirectory() as tmp, Databases(args.backend, Path(tmp)) as dbs:
        path = dbs.new("big")
        t0 = time.perf_counter()
        build(path, args.sessions, args.answers)
        built = time.perf_counter() - t0
        store = open_store(path)
        store_count = len(store.table("sessions"))
        floor_label, scan, close_scan = scan_floor(path)
        floor_t, load_t, analyse_t = [], [], []
        for _ in range(args.repeat):  # the floor and the figure in alternation: drift falls on both
            t0 = time.perf_counter()
            scan()
            floor_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            frames = load_frames(store)
            t1 = time.perf_counter()
            report = analyse(frames, Options())
            t2 = time.perf_counter()
            load_t.append(t1 - t0)
            analyse_t.append(t2 - t1)
        close_scan()
        n_ev = len(frames.evaluations)
        cold = [a + b for a, b in zip(load_t, analyse_t, strict=True)]
        # a refresh tick with no new answers: the watcher asks for the data version, finds it unchanged
        cache = {store.data_version(): report}
        refresh = []
        for _ in range(50):
            t0 = time.perf_counter()
            hit = cache.get(store.data_version())
            refresh.append(time.perf_counter() - t0)
        assert hit is report
        bt = []
        if not postgres:
            rng = np.random.default_rng(1)
            names = [f"system{k}" for k in range(10)]
            a = rng.integers(0, 10, 1_000_000)
            b = (a + rng.integers(1, 10, 1_000_000)) % 10
            outcome = np.where(rng.random(1_000_000) < 0.5 + 0.04 * (a - b) / 10, "a", "b")
            records = (np.array(names)[a], np.array(names)[b], outcome)
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                stats.bradley_terry(records)
                bt.append(time.perf_counter() - t0)
        small = dbs.new("small")
        build(small, 200, args.answers)
        page_small = page_refresh(small)
        page_big = page_refresh(path)
        floor_page = trivial_rerun()
        med = statistics.median(cold)
        print(f"## Statistics ({dbs.label}): {n_ev:,} evaluation rows from {store_count:,} sessions, "
              f"{len(frames.ratings):,} rating rows (database built in {built:.0f} s)\n")
        print(HEADER)
        read, scan_floor_t = statistics.median(load_t), statistics.median(floor_t)
        print(row(f"read the tables (load_frames; runs: {', '.join(fmt_s(x) for x in load_t)})", fmt_s(read),
                  f"{floor_label} {fmt_s(scan_floor_t)}", f"{read / scan_floor_t:.1f}x"))
        print(row("compute every result table (analyse)", fmt_s(statistics.median(analyse_t))))
        print(row(f"full analysis, cold (read + compute; runs: {', '.join(fmt_s(x) for x in cold)})", fmt_s(med), "",
                  "", "<= 3 s", med <= 3))
        r = statistics.median(refresh)
        print(row("refresh tick with no new answers (data_version; nothing re-rendered)", fmt_s(r), "", "",
                  "<= 50 ms", r <= 0.05))
        for label, page in ((f"200 evaluators, {200 * args.answers:,} answers", page_small),
                            (f"{store_count:,} evaluators, {n_ev:,} answers", page_big)):
            if page is None:
                print(row(f"results page, {label}", "FAILED (the page raised; traceback above)"))
                continue
            first, rerun = page
            print(row(f"results page, first view (read, analyse, render), {label}", fmt_s(first)))
            print(row(f"results page re-render after new answers, report cached: script run, {label}",
                      fmt_s(rerun), f"one-button app {fmt_s(floor_page)}", f"{rerun / floor_page:.0f}x"))
        if bt:
            b_med = statistics.median(bt)
            print(row("Bradley–Terry, 10 sources, 1,000,000 comparisons", fmt_s(b_med), "", "", "<= 0.5 s",
                      b_med <= 0.5))
            bt_bootstrap(args.repeat)
            pl_bootstrap(args.repeat)
        store.close()


if __name__ == "__main__":
    main()

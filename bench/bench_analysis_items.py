"""Benchmark 8: the cold analysis of the items kinds, 1,000,000 judgments: 500,000 compare and 500,000 score
judgments (20,000 sessions of 25 + 25 answers, 4 systems, 10,000 items with automatic metrics), on SQLite. The
target names "1M compare / score judgments", as benchmark 6 has 1M answers; ``--answers 50`` doubles it (1M of
each kind, the default until 2026-11-24).

    python bench/bench_analysis_items.py [--sessions 20000] [--answers 25] [--repeat 3]

The rows are what the record functions store (``responses.record_choice`` with "no preference" for compare,
``score.record_scores`` with one output per question on a 1–5 Likert scale and a 0–100 slider), inserted in
bulk as the other benchmarks do. Cold = ``load_frames`` (the columnar read in the child process, the score
JSON included) + ``analyse`` with the items file's metrics (every table of both tasks: win rates, ties as
half, Bradley–Terry with 1,000 bootstrap resamples of 20,000 evaluators; means, medians, z-scores, paired
Wilcoxon tests, Krippendorff's alpha, distributions, correlations with the metrics). The floor is one scan of
the evaluations table by SQLite itself (a sum over one column), timed in alternation with the figure; the
parts are timed in the same runs (the read; the score JSON parse; each task's analysis).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from bench_stats import scan_floor
from common import BULK_EVALUATION_COLUMNS, HEADER, Databases, bulk_insert, fmt_s, row

from evalkit.analysis import EVALUATION_READ, Options, TaskContext, analyse, load_frames, score_values
from evalkit.items import load_items
from evalkit.store import COLUMNS, now_iso, open_store
from evalkit.tasks import KINDS, results

SYSTEMS = ["gpt4", "llama", "t5", "human"]
NEW_COLUMNS = ("sources", "item_ids", "confidence", "score_detail")
QUALITY = {"gpt4": 0.8, "llama": 0.4, "t5": -0.6, "human": 0.5}
SUMMARY = {"title": "bench items", "tasks": [
    {"id": "cmp", "kind": "compare", "title": "Which reply is better?", "systems": [], "response": "choice-tie",
     "questions": 50},
    {"id": "sc", "kind": "score", "title": "Score the reply", "systems": [], "questions": 50,
     "outputs_per_question": 1, "textfield": "none",
     "scales": [{"id": "fluency", "label": "Fluency", "type": "likert", "min": 1, "max": 5},
                {"id": "adequacy", "label": "Adequacy", "type": "slider", "min": 0, "max": 100}]},
]}


def write_items(path: Path, n: int) -> Path:
    """An items file of ``n`` items with an output and made-up bleu / bertscore figures per system."""
    rng = random.Random(3)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            metrics = {s: {"bleu": round(20 + 10 * QUALITY[s] + rng.gauss(0, 5), 2),
                           "bertscore": round(0.85 + 0.03 * QUALITY[s] + rng.gauss(0, 0.02), 4)} for s in SYSTEMS}
            fh.write(json.dumps({"id": f"r{i}", "input": "in", "outputs": {s: f"reply {s} {i}" for s in SYSTEMS},
                                 "metrics": metrics}) + "\n")
    return path


def build(location: Path, sessions: int, answers: int, n_items: int) -> None:
    """sessions x answers compare rows and as many score rows, as the record functions store them."""
    open_store(location).close()
    rng = random.Random(7)
    now = now_iso()
    ids = [uuid.uuid4().hex for _ in range(sessions)]
    pairs = [(a, b) for k, a in enumerate(SYSTEMS) for b in SYSTEMS[k + 1:]]

    def evaluations():
        for sid in ids:
            for i in range(answers):  # compare, choice-tie: A / B / tie
                left, right = rng.choice(pairs)
                if rng.random() < 0.5:
                    left, right = right, left
                item = f"r{rng.randrange(n_items)}"
                edge = QUALITY[left] - QUALITY[right]
                u = rng.random()
                response = "tie" if u < 0.15 else ("A" if rng.random() < 0.5 + 0.3 * edge else "B")
                chosen = None if response == "tie" else (left if response == "A" else right)
                yield (sid, "cmp", "compare", i, rng.randrange(n_items), response, chosen, None,
                       rng.randint(800, 30000), left, right, json.dumps([left, right]), json.dumps([item]), 1, "{}",
                       now)
            for i in range(answers):  # score, one output per question, two scales
                system = rng.choice(SYSTEMS)
                item = f"r{rng.randrange(n_items)}"
                fluency = max(1, min(5, round(3 + 1.2 * QUALITY[system] + rng.gauss(0, 1))))
                adequacy = max(0, min(100, round(55 + 25 * QUALITY[system] + rng.gauss(0, 20))))
                detail = json.dumps({"scores": {"fluency": [fluency], "adequacy": [adequacy]}})
                yield (sid, "sc", "score", i, rng.randrange(n_items), "scored", system, None,
                       rng.randint(800, 30000), None, None, json.dumps([system]), json.dumps([item]), 1, detail, now)

    bulk_insert(location, [
        ("sessions", COLUMNS["sessions"],
         [(sid, f"e{k}", "", k, "v", now, now if k % 5 else None, "", "completed" if k % 5 else "active", None, "{}")
          for k, sid in enumerate(ids)]),
        ("evaluations", BULK_EVALUATION_COLUMNS, evaluations()),
        ("settings", COLUMNS["settings"], [("study:v", json.dumps(SUMMARY), now)]),
    ])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=20_000)
    ap.add_argument("--answers", type=int, default=25, help="answers per session and task")
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, Databases("sqlite", Path(tmp)) as dbs:
        path = dbs.new("items")
        t0 = time.perf_counter()
        build(path, args.sessions, args.answers, args.items)
        built = time.perf_counter() - t0
        items = load_items(write_items(Path(tmp) / "items.jsonl", args.items))
        by_task = {"cmp": items, "sc": items}
        store = open_store(path)
        floor_label, scan, close_scan = scan_floor(path)
        before = [c for c in EVALUATION_READ if c[0] not in NEW_COLUMNS]
        floor_t, read_t, compute_t, parse_t, cmp_t, sc_t, old_t = [], [], [], [], [], [], []
        for _ in range(args.repeat):  # the floor and the figure in alternation: drift falls on both
            t0 = time.perf_counter()
            scan()
            floor_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            frames = load_frames(store)
            t1 = time.perf_counter()
            report = analyse(frames, Options(), by_task)
            t2 = time.perf_counter()
            read_t.append(t1 - t0)
            compute_t.append(t2 - t1)
            # the parts, on the same frames (not in the cold figure); the read of the columns read before the
            # items kinds (the pairwise / triplet / rating analysis) on the same rows
            t0 = time.perf_counter()
            store.read_tables({"evaluations": ("evaluations", before)})
            old_t.append(time.perf_counter() - t0)
            ev = frames.evaluations
            rows = ev.loc[(ev["task"] == "sc").to_numpy(), ["score_detail"]]
            t0 = time.perf_counter()
            score_values(rows, ["fluency", "adequacy"])
            parse_t.append(time.perf_counter() - t0)
            for task, times in ((SUMMARY["tasks"][0], cmp_t), (SUMMARY["tasks"][1], sc_t)):
                t0 = time.perf_counter()
                results(KINDS[task["kind"]], ev, task, TaskContext(Options(), items, ""))
                times.append(time.perf_counter() - t0)
        close_scan()
        store.close()
        n_ev = len(frames.evaluations)
        assert [r.task for r in report.item_tasks] == ["cmp", "sc"]
        assert not report.item_tasks[1].correlations.empty
        cold = [a + b for a, b in zip(read_t, compute_t, strict=True)]
        med, read, floor = statistics.median(cold), statistics.median(read_t), statistics.median(floor_t)
        print(f"## Items analysis (SQLite): {n_ev:,} evaluation rows ({args.sessions:,} sessions x {args.answers} "
              f"compare + {args.answers} score answers, {len(SYSTEMS)} systems, {args.items:,} items with metrics; "
              f"database built in {built:.0f} s)\n")
        print(HEADER)
        print(row(f"read the tables (load_frames; runs: {', '.join(fmt_s(x) for x in read_t)})", fmt_s(read),
                  f"{floor_label} {fmt_s(floor)}", f"{read / floor:.1f}x"))
        print(row(f"  of which: the evaluations columns read before the items kinds ({len(before)} of "
                  f"{len(EVALUATION_READ)}; the new ones: {', '.join(NEW_COLUMNS)})", fmt_s(statistics.median(old_t))))
        print(row("compute every result table (analyse)", fmt_s(statistics.median(compute_t))))
        print(row(f"  of which: parse the score JSON of {len(rows):,} answers (pyarrow.json)",
                  fmt_s(statistics.median(parse_t))))
        print(row("  compare task alone (win rates, Bradley–Terry + 1,000 bootstrap resamples, correlations)",
                  fmt_s(statistics.median(cmp_t))))
        print(row("  score task alone (means, medians, z, Wilcoxon, alpha, distributions, correlations)",
                  fmt_s(statistics.median(sc_t))))
        print(row(f"full analysis, cold (read + compute; runs: {', '.join(fmt_s(x) for x in cold)})", fmt_s(med),
                  "", "", "<= 3 s", med <= 3))


if __name__ == "__main__":
    main()

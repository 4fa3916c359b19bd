"""Benchmark 8: plan() for one evaluator over items files of 1k, 10k and 100k items.

    python bench/bench_plan_items.py [--seeds 200]

A study of the four items kinds (compare 10, score 10 with two scales, best-of-3 10, realfake 10: 40
questions) over a generated items file with three systems. The candidate lists are built once per file
when the study opens (as ``open_study`` does); the medians are over fresh seeds after that, the three file
sizes timed in alternation. Floor: the same number of questions built by the cheapest possible plan (one
Mulberry32 draw per question and a Question object), measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import HEADER, ROOT, fmt_s, row

sys.path.insert(0, str(ROOT))
from evalkit.config import open_study
from evalkit.rng import Mulberry32
from evalkit.sampling import Question, plan
from tests.item_study import STUDY, task_block

SYSTEMS = ("gpt4", "t5", "human")


def write_items(path: Path, n: int) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"i{i}", "input": f"input {i}",
                                 "outputs": {s: f"output {i} of {s}" for s in SYSTEMS}}) + "\n")


def floor_plan(items: list, questions: int, seed: int) -> list[Question]:
    rng = Mulberry32(seed)
    out = []
    for index in range(questions):
        item = items[rng.randbelow(len(items))]
        out.append(Question(task="t", kind="compare", index=index, slot=0, domain="", review_ids=(item.id,),
                            sources=("gpt4",), texts=(item.outputs["gpt4"],), matched=True, input=item.input))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=200)
    args = ap.parse_args()
    sizes = (1_000, 10_000, 100_000)
    blocks = (task_block("compare", questions=10) + task_block("score", questions=10)
              + task_block("rank", questions=10) + task_block("realfake", questions=10))
    studies = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            folder = Path(tmp) / str(n)
            (folder / "datasets").mkdir(parents=True)
            write_items(folder / "items.jsonl", n)
            (folder / "config.toml").write_text(STUDY + blocks)
            t0 = time.perf_counter()
            studies[n] = open_study(folder / "config.toml")
            print(f"open_study with {n:,} items (load + candidate lists): {fmt_s(time.perf_counter() - t0)}",
                  file=sys.stderr)
    print("## Planning: plan() for one evaluator over items files (compare, score, best-of-3, realfake: 40 "
          "questions)\n")
    print(HEADER)
    samples: dict[int, list[float]] = {n: [] for n in sizes}
    floors: list[float] = []
    items_1k = next(iter(studies[1_000].item_sets.values())).items
    for seed in range(1, args.seeds + 1):  # sizes in alternation, so all see the same machine load
        for n in sizes:
            s = studies[n]
            t0 = time.perf_counter()
            plan(s.study, s.pools, seed, s.item_sets)
            samples[n].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        floor_plan(items_1k, 40, seed)
        floors.append(time.perf_counter() - t0)
    floor = statistics.median(floors)
    medians = {}
    for n in sizes:
        med = medians[n] = statistics.median(samples[n])
        p95 = sorted(samples[n])[int(0.95 * len(samples[n])) - 1]
        print(row(f"plan(), {n:,} items (p95 {fmt_s(p95)})", fmt_s(med), fmt_s(floor), f"{med / floor:.1f}x",
                  "<= 20 ms", med <= 0.020))
    growth = medians[100_000] / medians[1_000]
    print(row("median at 100k / median at 1k", f"{growth:.2f}x", "", "", "~1 (flat from 1k items)", growth < 1.5))


if __name__ == "__main__":
    main()

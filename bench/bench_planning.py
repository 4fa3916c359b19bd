"""Benchmark 2: plan() for one evaluator over pools of 1k, 10k and 100k reviews per (source, domain).

    python bench/bench_planning.py [--seeds 200]

The demo study's tasks (5 triplets, 5 pairs over 3 domains) on generated pools. The pools' length
index is built once per process (first plan); the medians are over fresh seeds after that, the three
pool sizes timed in alternation.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from common import HEADER, ROOT, fmt_s, row

from evalkit.config import load_study
from evalkit.datasets import Pools, Review
from evalkit.sampling import plan


def make_pools(n: int, sources: list[str], domains: list[str]) -> Pools:
    rng = random.Random(n)
    pools = Pools()
    for s in sources:
        for d in domains:
            pools[(s, d)] = [Review(id=str(i), source=s, domain=d, text="x" * rng.randint(120, 600),
                                    n_sentences=rng.randint(2, 4)) for i in range(n)]
    return pools


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=200)
    args = ap.parse_args()
    study = load_study(ROOT / "config.toml")
    print("## Planning: plan() for one evaluator, demo study, generated pools\n")
    print(HEADER)
    sizes = (1_000, 10_000, 100_000)
    pools_of = {n: make_pools(n, study.sources, study.domains) for n in sizes}
    firsts = {}
    for n in sizes:
        t0 = time.perf_counter()
        plan(study, pools_of[n], 0)  # builds the per-pool length index once
        firsts[n] = time.perf_counter() - t0
    samples: dict[int, list[float]] = {n: [] for n in sizes}
    for seed in range(1, args.seeds + 1):  # sizes in alternation, so all see the same machine load
        for n in sizes:
            t0 = time.perf_counter()
            plan(study, pools_of[n], seed)
            samples[n].append(time.perf_counter() - t0)
    medians = {}
    for n in sizes:
        med = medians[n] = statistics.median(samples[n])
        p95 = sorted(samples[n])[int(0.95 * len(samples[n])) - 1]
        print(row(f"plan(), {n:,} per pool (p95 {fmt_s(p95)}; first call with index build {fmt_s(firsts[n])})",
                  fmt_s(med), "", "", "<= 20 ms", med <= 0.020))
    growth = medians[100_000] / medians[1_000]
    print(row("median at 100k / median at 1k", f"{growth:.2f}x", "", "", "~1 (independent of pool size)",
              growth < 1.5))


if __name__ == "__main__":
    main()

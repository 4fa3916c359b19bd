"""Benchmark 7: load_items on 100,000 items x 3 systems vs a bare json.loads of every line; with_all on them.

    python bench/bench_items.py [--items 100000] [--repeat 7]

The floor and load_items are timed in alternation; the ratio is the median of the pairs' ratios.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import tempfile
from pathlib import Path

from common import HEADER, fmt_s, row, sentence, timed

from evalkit.items import ItemSet, load_items

SYSTEMS = ("gpt4", "t5", "human")


def text(rng: random.Random, lo: int = 300, hi: int = 600) -> str:
    """Made-up sentences, lo..hi characters."""
    target, out = rng.randint(lo, hi), ""
    while len(out) < target:
        out = f"{out} {sentence(rng)}" if out else sentence(rng)
    return out[:target]


def write_items(path: Path, n: int, seed: int) -> Path:
    """``n`` items: an input and 3 outputs of 300-600 characters, metrics, meta; 5 % lack the "human" output.

    Texts are drawn from 5,000 made-up ones (writing the file takes seconds instead of minutes; parsing a
    text costs the same whether or not it was seen before).
    """
    rng = random.Random(seed)
    texts = [text(rng) for _ in range(5000)]
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            systems = SYSTEMS if rng.random() >= 0.05 else SYSTEMS[:2]
            obj = {"id": f"r{i}", "title": f"Review {i}", "input": rng.choice(texts),
                   "outputs": {s: rng.choice(texts) for s in systems},
                   "metrics": {s: {"bleu": round(rng.uniform(5, 40), 1), "bertscore": round(rng.uniform(0.7, 0.95), 3)}
                               for s in systems},
                   "meta": {"domain": rng.choice(("laptop", "restaurant")), "stars": rng.randint(1, 5)}}
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
    return path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_items(Path(tmp) / "items.jsonl", args.items, seed=0)
        size = path.stat().st_size / 1e6

        def bare() -> None:
            with open(path, encoding="utf-8") as fh:
                [json.loads(line) for line in fh]

        def bare_gc_paused() -> None:
            gc.disable()
            try:
                bare()
            finally:
                gc.enable()

        # interleaved (floor, load) pairs, so both see the same machine load; the ratio is the median of the
        # pairs' ratios
        pairs = [(timed(bare, 1, warmup=0)[0], timed(lambda: load_items(path), 1, warmup=0)[0])
                 for _ in range(args.repeat)]
        floor = statistics.median(f for f, _ in pairs)
        load = statistics.median(x for _, x in pairs)
        ratio = statistics.median(x / f for f, x in pairs)
        # the same with the floor's collector paused too (load_items pauses it): what the checks themselves cost
        paused = [(timed(bare_gc_paused, 1, warmup=0)[0], timed(lambda: load_items(path), 1, warmup=0)[0])
                  for _ in range(args.repeat)]
        floor_paused = statistics.median(f for f, _ in paused)
        ratio_paused = statistics.median(x / f for f, x in paused)

        items = load_items(path)
        both = ("gpt4", "human")

        def cold() -> None:  # a fresh set: by_system is built, then intersected
            ItemSet(items.path, items.items, items.index, items.systems).with_all(both)

        cold_s, _ = timed(cold, args.repeat)
        items.with_all(both)
        warm_s = timed(lambda: [items.with_all(both) for _ in range(10_000)], args.repeat)[0] / 10_000
        n_both = len(items.with_all(both))
        print(f"## Items loading: {args.items:,} items x {len(SYSTEMS)} systems ({size:.0f} MB of JSONL), "
              f"{n_both:,} with both {' and '.join(both)}\n")
        print(HEADER)
        print(row("json.loads of every line (floor)", fmt_s(floor)))
        print(row("load_items", fmt_s(load), fmt_s(floor), f"{ratio:.2f}x", "<= 2x", ratio <= 2))
        print(row("load_items vs json.loads with the collector paused", "", fmt_s(floor_paused),
                  f"{ratio_paused:.2f}x"))
        print(row(f"with_all({list(both)}), first call (builds by_system)", fmt_s(cold_s)))
        print(row(f"with_all({list(both)}), cached", f"{warm_s * 1e9:.0f} ns"))


if __name__ == "__main__":
    main()

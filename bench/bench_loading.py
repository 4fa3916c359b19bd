"""Benchmark 1: load_pools on 100,000 reviews per source vs a bare lxml parse of the same files.

    python bench/bench_loading.py [--reviews 100000] [--repeat 7]

The floor and load_pools are timed in alternation; the ratio is the median of the pairs' ratios.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from common import HEADER, fmt_s, row, timed, write_corpus
from lxml import etree

from evalkit.datasets import load_pools


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reviews", type=int, default=100_000, help="reviews per source")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for k, source in enumerate(("real", "cera", "heuristic")):
            write_corpus(folder / f"{source}-laptops.xml", args.reviews, seed=k)
        files = sorted(folder.glob("*.xml"))
        size = sum(f.stat().st_size for f in files) / 1e6

        def bare() -> None:
            for f in files:
                etree.fromstring(f.read_bytes(), etree.XMLParser(huge_tree=True))

        # interleaved (floor, load) pairs, so both see the same machine load; the ratio is the median of the
        # pairs' ratios (the floor alone varies by +-15 % between runs on this shared machine)
        pairs = [(timed(bare, 1, warmup=0)[0], timed(lambda: load_pools(folder), 1, warmup=0)[0])
                 for _ in range(args.repeat)]
        floor = statistics.median(f for f, _ in pairs)
        load = statistics.median(x for _, x in pairs)
        ratio = statistics.median(x / f for f, x in pairs)
        pools = load_pools(folder)
        eligible = sum(len(v) for v in pools.values())
        print(f"## Dataset loading: 3 sources x {args.reviews:,} reviews ({size:.0f} MB of XML), "
              f"{eligible:,} eligible\n")
        print(HEADER)
        print(row("bare lxml parse (floor)", fmt_s(floor)))
        print(row("load_pools", fmt_s(load), fmt_s(floor), f"{ratio:.2f}x", "<= 1.5x", ratio <= 1.5))


if __name__ == "__main__":
    main()

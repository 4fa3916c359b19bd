"""Benchmark 10: a large items file (issue 25, section 3): ``evalkit check``, a freshly started server's first
survey screen and one evaluator's plan, each beside its floor measured in the same run.

    python bench/bench_large_items.py [--lines 200000] [--repeat 3] [--no-server]

The floor is what the issue names: a fresh Python process that reads the file's lines into Python objects
with ``json.loads`` (wall time and peak memory, ``ru_maxrss``). ``check`` runs as ``python -m evalkit check``
in its own process (peak memory the same way). The first screen: ``streamlit run`` on the study and a new
SQLite database, timed from the server's start to the consent page drawn for a websocket client (no browser:
the browser's own start is not part of the target); then again with the database the first start filled (the
queue's units registered). The plan: one evaluator's plan at this size and at 1,000 lines (flat planning:
the same time). The study has one compare task with ``judgments_per_item = 3`` over every pair of 3 systems
(3 units per item), the heaviest start there is. Medians of ``--repeat`` runs, floor and measured alternated.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_concurrency import start_server
from bench_items import text
from common import HEADER, ROOT, fmt_s, row
from ws_client import Evaluator

SYSTEMS = ("gpt4", "t5", "human")
#: a child process's peak memory, printed at its exit (kB: Linux's VmHWM of the process's own memory since its
#: exec; ru_maxrss would also count the parent's pages the fork shared before the exec)
PEAK = ("import atexit; atexit.register(lambda: print('PEAK', [int(x.split()[1]) for x in open('/proc/self/status') "
        "if x.startswith('VmHWM:')][0]))")
FLOOR = (PEAK + "\nimport json, sys\nwith open(sys.argv[1], encoding='utf-8') as fh:\n"
         "    rows = [json.loads(x) for x in fh]")
CHECK = PEAK + "\nimport runpy, sys\nsys.argv = ['evalkit', 'check', sys.argv[1]]\n" \
               "try:\n    runpy.run_module('evalkit', run_name='__main__')\nexcept SystemExit as e:\n" \
               "    assert not e.code, e.code"
CONFIG = """[study]
title = "A large items file"
datasets = "."
database = "responses.sqlite"
consent = "consent.md"
seed = 1

[[tasks]]
kind = "compare"
id = "replies"
title = "Compare"
items = "items.jsonl"
systems = ["gpt4", "t5", "human"]
question = "Which reply is better?"
response = "choice"
questions = 6
judgments_per_item = 3
"""


def write_study(folder: Path, lines: int, seed: int = 0) -> Path:
    """A study folder with ``lines`` items of about 460 bytes (the issue's 92 MB per 200,000 lines)."""
    rng = random.Random(seed)
    texts = [text(rng, 60, 140) for _ in range(5000)]
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "items.jsonl", "w", encoding="utf-8") as fh:
        for i in range(lines):
            fh.write(json.dumps({"id": f"r{i}", "input": rng.choice(texts),
                                 "outputs": {s: rng.choice(texts) for s in SYSTEMS},
                                 "metrics": {s: {"bleu": round(rng.uniform(5, 40), 1)} for s in SYSTEMS}}) + "\n")
    (folder / "consent.md").write_text("A benchmark study.\n", encoding="utf-8")
    config = folder / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    return config


def child(code: str, arg: Path) -> tuple[float, float]:
    """Run ``code`` in a new Python with ``arg``: (wall seconds, peak memory in MB)."""
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, str(arg)], cwd=ROOT, capture_output=True, text=True,
                          check=False)
    wall = time.perf_counter() - t0
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    peak = [line for line in done.stdout.splitlines() if line.startswith("PEAK ")][-1]
    return wall, int(peak.split()[1]) / 1024


def first_screen(config: Path, database: Path, log: Path) -> float:
    """Seconds from starting a server to the consent page drawn for a client (its "Start the study" button)."""
    t0 = time.perf_counter()
    proc, url = start_server(config, database, log)
    try:
        async def visit() -> None:
            evaluator = Evaluator(url, "bench")
            async with evaluator.connected():
                if evaluator.find("button", "Start the study") is None:
                    raise RuntimeError(f"no consent page: {evaluator.texts[:3]} {evaluator.alerts}")
        asyncio.run(visit())
        return time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(30)


def plan_seconds(config: Path, evaluators: int = 50) -> float:
    """Median time of one evaluator's plan (the study loaded once)."""
    from evalkit.config import open_study
    from evalkit.sampling import plan

    loaded = open_study(config)
    samples = []
    for seed in range(evaluators):
        t0 = time.perf_counter()
        plan(loaded.study, loaded.pools, seed, loaded.item_sets, arrival=seed)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-server", action="store_true", help="leave out the first-screen measurement")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = write_study(Path(tmp) / "large", args.lines)
        small = write_study(Path(tmp) / "small", 1000)
        items = config.parent / "items.jsonl"
        size = items.stat().st_size / 1e6
        floors, checks, cold, warm = [], [], [], []
        for n in range(args.repeat):  # alternated: floor, check, floor, server...
            floors.append(child(FLOOR, items))
            checks.append(child(CHECK, config))
            if not args.no_server:
                database = Path(tmp) / f"db{n}.sqlite"
                floors.append(child(FLOOR, items))
                cold.append(first_screen(config, database, Path(tmp) / f"cold{n}.log"))
                warm.append(first_screen(config, database, Path(tmp) / f"warm{n}.log"))
        floor_s = statistics.median(f[0] for f in floors)
        floor_mb = statistics.median(f[1] for f in floors)
        check_s = statistics.median(c[0] for c in checks)
        check_mb = statistics.median(c[1] for c in checks)
        print(f"\n{args.lines:,} lines, {size:.0f} MB; medians of {args.repeat} (floor: {len(floors)} runs)\n")
        print(HEADER)
        print(row("floor: json.loads of every line (time)", fmt_s(floor_s), "", ""))
        print(row("floor: json.loads of every line (peak memory)", f"{floor_mb:.0f} MB", "", ""))
        print(row("evalkit check (time)", fmt_s(check_s), f"{check_s / floor_s:.2f}x",
                  "met" if check_s <= 1.5 * floor_s else "missed (<= 1.5x)"))
        print(row("evalkit check (peak memory)", f"{check_mb:.0f} MB", f"{check_mb / floor_mb:.2f}x",
                  "met" if check_mb <= 1.2 * floor_mb else "missed (<= 1.2x)"))
        if cold:
            for name, values in (("first screen, new database", cold), ("first screen, next start", warm)):
                value = statistics.median(values)
                print(row(name, fmt_s(value), f"{value / floor_s:.2f}x",
                          "met" if value <= 2 * floor_s else "missed (<= 2x)"))
        large, little = plan_seconds(config), plan_seconds(small)
        print(row("one evaluator's plan, this file / 1,000 lines", f"{large * 1000:.2f} ms / {little * 1000:.2f} ms",
                  f"{large / little:.2f}x", "flat" if large <= 2 * little else "not flat"))


if __name__ == "__main__":
    main()

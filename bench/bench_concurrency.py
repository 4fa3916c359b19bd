"""Benchmark 4: N evaluators going through the whole demo study at once against `streamlit run`.

    python bench/bench_concurrency.py [--n 1,10,25,50] [--think 0.5,1.5] [--two-servers 25]
                                      [--two-servers-think 0,0] [--backend sqlite|postgres]

Each evaluator is a client of Streamlit's websocket protocol (bench/ws_client.py): it sends the same
messages a browser sends when a button is clicked and waits until the next screen has been rendered.
Reported: click-to-next-screen latency p50 / p95 over every click, server memory (RSS) growth per
active session, and a check of the database afterwards (every answer stored exactly once).
Think time between clicks is drawn uniformly from --think seconds (0,0 for a stress test); the run with
two server processes on one database uses --two-servers-think. The database is a SQLite file, or with
``--backend postgres`` a database on a throwaway PostgreSQL server (tests/pg.py); it is checked through
``open_store``, so the same check runs on both.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from common import HEADER, ROOT, Databases, add_backend_option, fmt_s, row
from ws_client import Evaluator

from evalkit.store import open_store


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(config: Path, database: Path | str, log: Path, script: str | Path = "app.py"
                 ) -> tuple[subprocess.Popen, str]:
    """`streamlit run script` (from the project root, so with its .streamlit/config.toml) on a free port."""
    port = free_port()
    env = {**os.environ, "EVALKIT_CONFIG": str(config), "EVALKIT_DATABASE": str(database)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true", "--server.address",
         "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none", "--global.developmentMode", "false"],
        cwd=ROOT, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)  # noqa: SIM115
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return proc, url
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise RuntimeError(f"the server did not start, see {log}")


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


async def crowd(urls: list[str], n: int, think: tuple[float, float], pids: list[int],
                seed: int) -> tuple[list[str], list[float], float, float]:
    """Run n evaluators at once, spread over the servers; returns tokens, latencies, peak RSS, wall time."""
    evaluators = [Evaluator(urls[k % len(urls)], f"crowd {seed}-{k}", think=think, rng=random.Random(seed * 1000 + k))
                  for k in range(n)]
    peak = [sum(rss_mb(p) for p in pids)]
    done = asyncio.Event()

    async def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], sum(rss_mb(p) for p in pids))
            await asyncio.sleep(0.1)

    sampler = asyncio.create_task(sample())
    t0 = time.perf_counter()
    tokens = await asyncio.gather(*(e.run() for e in evaluators))
    wall = time.perf_counter() - t0
    done.set()
    await sampler
    return list(tokens), [x for e in evaluators for x in e.latencies], peak[0], wall


def check_database(database: Path | str, tokens: list[str]) -> tuple[int, int]:
    """(answers stored for these sessions, problems): 10 answers and one rated item per session, once each,
    and the session completed; read through the store, as the app reads it."""
    store = open_store(database, writable=False)
    problems = 0
    total = 0
    try:
        for token in tokens:
            keys = [(a.task, a.question_index) for a in store.answers(token)]
            total += len(keys)
            problems += (len(keys) != 10) + (len(set(keys)) != len(keys))
            rated = {r.question_index for r in store.ratings(token)}
            session = store.get_session(token)
            problems += (len(rated) != 1) + (session is None or session.status != "completed")
    finally:
        store.close()
    return total, problems


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="1,10,25,50")
    ap.add_argument("--think", default="0.5,1.5", help="seconds between clicks, low,high")
    ap.add_argument("--two-servers", type=int, default=25, help="evaluators split over two processes (0: skip)")
    ap.add_argument("--two-servers-think", default="0,0", help="think time of the two-server run, low,high")
    add_backend_option(ap)
    args = ap.parse_args()
    think = tuple(float(x) for x in args.think.split(","))
    think2 = tuple(float(x) for x in args.two_servers_think.split(","))
    tmp = Path(tempfile.mkdtemp())
    with Databases(args.backend, tmp) as dbs:
        run(args, dbs, tmp, think, think2)
    shutil.rmtree(tmp, ignore_errors=True)


def one_server(args: argparse.Namespace, config: Path, database: Path | str, tmp: Path,
               think: tuple[float, float]) -> None:
    proc, url = start_server(config, database, tmp / "server.log")
    try:
        asyncio.run(crowd([url], 1, (0, 0), [proc.pid], seed=0))  # warm-up: caches, first plan, imports
        baseline = rss_mb(proc.pid)
        print(row("server RSS after warm-up", f"{baseline:.0f} MB"))
        for seed, n in enumerate(int(x) for x in args.n.split(",")):
            before = rss_mb(proc.pid)
            tokens, lat, peak, wall = asyncio.run(crowd([url], n, think, [proc.pid], seed=seed + 1))
            stored, problems = check_database(database, tokens)
            lat.sort()
            p50, p95 = statistics.median(lat), lat[max(0, int(0.95 * len(lat)) - 1)]
            growth = (peak - before) / n
            print(row(f"N = {n}: click -> next screen p50 ({len(lat)} clicks, {wall:.0f} s)", fmt_s(p50)))
            print(row(f"N = {n}: p95", fmt_s(p95), "", "", "<= 1 s at N = 25" if n == 25 else "",
                      p95 <= 1 if n == 25 else None))
            print(row(f"N = {n}: RSS growth per active session (peak {peak:.0f} MB)", f"{growth:.2f} MB", "", "",
                      "<= 2 MB", growth <= 2))
            print(row(f"N = {n}: answers stored / expected, problems", f"{stored} / {10 * n}, {problems}", "", "",
                      "0 lost, 0 doubled", stored == 10 * n and problems == 0))
    finally:
        proc.terminate()
        proc.wait()


def run(args: argparse.Namespace, dbs: Databases, tmp: Path, think: tuple[float, float],
        think2: tuple[float, float]) -> None:
    for name in ("datasets", "consent.md", "config.toml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp / name)
    config, database = tmp / "config.toml", dbs.new("bench")
    print(f"## Concurrent evaluators ({dbs.label}): demo study (10 questions + 1 rating), `streamlit run` on "
          f"loopback, think time {think[0]:g}-{think[1]:g} s\n")
    print(HEADER)
    if args.n:  # --n "" skips the one-server runs
        one_server(args, config, database, tmp, think)
    if args.two_servers:
        database2 = dbs.new("two")
        a, url_a = start_server(config, database2, tmp / "server-a.log")
        b, url_b = start_server(config, database2, tmp / "server-b.log")
        try:
            asyncio.run(crowd([url_a, url_b], 2, (0, 0), [a.pid, b.pid], seed=90))  # warm both
            n = args.two_servers
            tokens, lat, peak, wall = asyncio.run(crowd([url_a, url_b], n, think2, [a.pid, b.pid], seed=91))
            stored, problems = check_database(database2, tokens)
            lat.sort()
            p95 = lat[max(0, int(0.95 * len(lat)) - 1)]
            pace = "without think time" if think2[1] <= 0 else f"think time {think2[0]:g}-{think2[1]:g} s"
            one = "one SQLite file" if dbs.server is None else f"one {dbs.label} database"
            print(row(f"two servers, {one}, N = {n} {pace}: answers/s ({len(lat)} clicks, {wall:.0f} s, "
                      f"peak RSS of both {peak:.0f} MB)",
                      f"{stored / wall:.1f} /s", "", "", "", None))
            print(row("two servers: p50 / p95", f"{fmt_s(statistics.median(lat))} / {fmt_s(p95)}", "", "",
                      "p95 <= 1 s" if think2[1] > 0 else "", p95 <= 1 if think2[1] > 0 else None))
            print(row("two servers: answers stored / expected, problems", f"{stored} / {10 * n}, {problems}", "", "",
                      "0 lost, 0 doubled", stored == 10 * n and problems == 0))
        finally:
            for p in (a, b):
                p.terminate()
                p.wait()


if __name__ == "__main__":
    main()

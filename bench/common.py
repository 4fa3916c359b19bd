"""Shared helpers for the benchmarks: timing with medians, a floor measured in the same run, output."""

from __future__ import annotations

import gc
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
# Streamlit reads .streamlit/config.toml from the working directory: run as `streamlit run` is run, from the
# project root, so AppTest benchmarks use the app's own settings (magic off, no gc.collect() after a run).
os.chdir(ROOT)


def server_like_apptest() -> None:
    """Make AppTest keep compiled scripts between runs, as a `streamlit run` server does.

    AppTest builds a new ScriptCache for every run, so each run recompiles the entry script and the page
    (a few milliseconds for a large page; a server compiles each script once). One shared cache, keyed by
    the script's path like the server's, removes that artefact from the measured script time.
    """
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test, local_script_runner

    shared = ScriptCache()
    app_test.ScriptCache = lambda: shared
    local_script_runner.ScriptCache = lambda: shared

WORDS = ("the battery screen keyboard service food staff room price quality fast slow great poor nice "
         "really quite very clean noisy warm friendly rude fresh cold comfortable bright dim loud quiet "
         "delivery value design performance portion breakfast location view bed shower waiter").split()


def timed(fn: Callable[[], object], repeat: int = 5, warmup: int = 1) -> tuple[float, list[float]]:
    """Median wall time of ``fn`` over ``repeat`` runs (after ``warmup`` runs), and all samples."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), samples


def fmt_s(seconds: float) -> str:
    """Seconds in a readable unit."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def row(name: str, value: str, floor: str = "", ratio: str = "", target: str = "", ok: bool | None = None) -> str:
    """One Markdown table row of a benchmark result."""
    verdict = "" if ok is None else ("met" if ok else "MISSED")
    return f"| {name} | {value} | {floor} | {ratio} | {target} | {verdict} |"


HEADER = "| measure | median | floor | ratio | target | |\n|---|---|---|---|---|---|"


def sentence(rng: random.Random) -> str:
    """A made-up review sentence of 6..18 words."""
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
    return " ".join(words).capitalize() + "."


def write_corpus(path: Path, n: int, seed: int) -> Path:
    """A SemEval-style XML file of ``n`` reviews of 1..6 sentences (some too short or too long to be eligible)."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Reviews>\n')
        for i in range(n):
            fh.write(f'    <Review rid="{i}">\n        <sentences>\n')
            for j in range(rng.randint(1, 6)):
                fh.write(f'            <sentence id="{i}:{j}">\n                <text>{sentence(rng)}</text>\n'
                         '                <Opinions><Opinion category="X#Y" polarity="positive"/></Opinions>\n'
                         '            </sentence>\n')
            fh.write("        </sentences>\n    </Review>\n")
        fh.write("</Reviews>\n")
    return path

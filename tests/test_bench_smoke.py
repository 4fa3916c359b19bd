"""The benchmarks still run against the current code and schema (at toy sizes; their figures are not checked:
speed is measured by running them in full, see docs/explanation/performance.md). A schema change once broke their
bulk inserts without any test noticing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import ROOT

SMALL = {
    "bench_analysis_items.py": ["--sessions", "20", "--answers", "5", "--items", "50", "--repeat", "1"],
    "bench_stats.py": ["--sessions", "40", "--answers", "5", "--repeat", "1"],
    "bench_large_items.py": ["--lines", "300", "--repeat", "1"],
    "bench_score_click.py": ["--questions", "2", "--rounds", "1", "--crowd", "3", "--crowd-questions", "1",
                             "--think", "0.05,0.1"],
    "bench_queue.py": ["--sizes", "50,100", "--sessions", "20", "--questions", "3", "--k", "4", "--threads", "4",
                       "--rate", "200", "--workers", "4"],
    "bench_spans_submit.py": ["--sets", "1", "--answers", "5", "--questions", "2", "--rounds", "1"],
    "bench_spans_widget.py": ["--rounds", "2", "--keys", "1"],  # (Chromium, as the browser tests)
}
#: The last table row each prints (when it is there, the benchmark ran to its end).
LAST_ROW = {"bench_queue.py": "| claim latency p50 at 100 / at 50 units, paced",
            "bench_large_items.py": "| one evaluator's plan, this file / 1,000 lines",
            "bench_score_click.py": "| score widget, p95 of every click",
            "bench_spans_submit.py": "| spans question: click -> next screen p50",
            "bench_spans_widget.py": "| span widget, one segment of 1,000 words: a caret or selection step"}


@pytest.mark.parametrize("script", sorted(SMALL))
def test_benchmark_runs_at_a_toy_size(script: str) -> None:
    done = subprocess.run([sys.executable, script, *SMALL[script]], cwd=ROOT / "bench", capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert LAST_ROW.get(script, "| full analysis, cold") in done.stdout  # the table was printed to the end

"""Run every benchmark and print its Markdown section (the figures quoted in docs/explanation/performance.md).

    python bench/run.py            # all of them (about 19 minutes on 2 cores)
    python bench/run.py loading    # one of: loading planning rerun concurrency storage stats items
                                   #         plan_items analysis_items queue large_items score_click
                                   #         spans_submit spans_widget
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCHMARKS = ["loading", "planning", "rerun", "concurrency", "storage", "stats", "items", "plan_items",
              "analysis_items", "queue", "large_items", "score_click", "spans_submit", "spans_widget"]


def main() -> int:
    chosen = sys.argv[1:] or BENCHMARKS
    unknown = set(chosen) - set(BENCHMARKS)
    if unknown:
        print(f"unknown benchmark(s): {', '.join(sorted(unknown))}; choose from {', '.join(BENCHMARKS)}")
        return 2
    status = 0
    for name in chosen:
        print(f"\n<!-- python bench/bench_{name}.py -->", flush=True)
        status |= subprocess.call([sys.executable, str(HERE / f"bench_{name}.py")], cwd=HERE.parent)
    return status


if __name__ == "__main__":
    sys.exit(main())

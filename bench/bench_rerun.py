"""Benchmark 3: the script time of answering one triplet and one pairwise question, in AppTest,
vs a trivial one-button app in the same harness.

    python bench/bench_rerun.py [--sessions 8] [--recompile]

Each sample is one click of "Next": the callback writes the answer, then the page reruns and renders
the next question. Two figures per click: the script run itself (Streamlit's ScriptRunner._run_script,
callbacks included, timed in the script thread) and the whole AppTest round trip (which also parses
every element the page sent, so it grows with the page's size, not with evalkit's work).

AppTest runs with the app's .streamlit/config.toml (from the project root) and, like a `streamlit run`
server, compiles each script once (common.server_like_apptest); --recompile keeps AppTest's default of
compiling the entry script and the page on every run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from common import HEADER, ROOT, fmt_s, row, server_like_apptest
from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
from streamlit.testing.v1 import AppTest

TRIVIAL = """
import streamlit as st
if st.button("Next"):
    st.write("clicked")
"""

# The same elements as a triplet question, static: what Streamlit itself costs to render that page.
SAME_ELEMENTS = """
import streamlit as st
st.set_page_config(layout="wide")
st.caption("Task 1 of 3 · Spot the real review")
st.progress(0.4, text="Question 2 of 5 · 40% of the study done")
st.subheader("Which review was written by a real person?")
st.caption("Topic: laptop")
for column, label in zip(st.columns(3), "ABC"):
    with column:
        with st.container(border=True):
            st.markdown(f"**Review {label}**")
            st.text("A review text of about two hundred characters. " * 4)
with st.form("q"):
    st.radio("Answer", ["A", "B", "C"], index=None, horizontal=True, key="choice")
    st.form_submit_button("Next")
"""

SCRIPT_TIMES: list[float] = []
_original = ScriptRunner._run_script


def _timed_run_script(self, rerun_data):  # the script thread's own time for one run
    t0 = time.perf_counter()
    try:
        return _original(self, rerun_data)
    finally:
        SCRIPT_TIMES.append(time.perf_counter() - t0)


ScriptRunner._run_script = _timed_run_script


def click(at: AppTest, label: str) -> tuple[float, float]:
    """(script time, round trip) of one click."""
    [button] = [b for b in at.button if b.label == label]
    SCRIPT_TIMES.clear()
    t0 = time.perf_counter()
    button.click().run()
    return sum(SCRIPT_TIMES), time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--recompile", action="store_true", help="AppTest's default: recompile scripts every run")
    args = ap.parse_args()
    if not args.recompile:
        server_like_apptest()
    tmp = Path(tempfile.mkdtemp())
    for name in ("datasets", "consent.md", "config.toml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp / name)
    os.environ["EVALKIT_CONFIG"] = str(tmp / "config.toml")
    os.environ["EVALKIT_DATABASE"] = str(tmp / "bench.sqlite")
    trivial = AppTest.from_string(TRIVIAL, default_timeout=30).run()
    same = AppTest.from_string(SAME_ELEMENTS, default_timeout=30).run()
    floor, static, triplet, pairwise = [], [], [], []
    for s in range(args.sessions):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
        at.secrets["results_password"] = "bench"
        at.run()
        at.checkbox(key="consent_agree").check()
        at.text_input(key="consent_name").input(f"bench {s}")
        click(at, "Start the study")
        click(at, "Begin")
        for i in range(5):
            at.radio(key=f"turing-{i}-choice").set_value("A")
            triplet.append(click(at, "Next"))
            floor.append(click(trivial, "Next"))  # interleaved, so both see the same machine load
            static.append(click(same, "Next"))
        click(at, "Begin")
        for i in range(4):  # the 5th answer leaves the page (a page switch), measured apart
            at.radio(key=f"pairwise-{i}-choice").set_value("B")
            pairwise.append(click(at, "Next"))
            floor.append(click(trivial, "Next"))
    shutil.rmtree(tmp)
    skip = 5  # first clicks warm caches

    def med(samples, k):
        return statistics.median(x[k] for x in samples[skip:])

    how = "scripts recompiled every run (AppTest's default)" if args.recompile else "scripts compiled once, as a server"
    print(f"## Page rerun: one click in AppTest (answer written in the callback, next question rendered; {how})\n")
    print(HEADER)
    f_script, f_trip = med(floor, 0), med(floor, 1)
    print(row("trivial one-button app: script run (floor)", fmt_s(f_script)))
    for name, samples in (("triplet", triplet), ("pairwise", pairwise)):
        s = med(samples, 0)
        print(row(f"answer a {name} question: script run", fmt_s(s), fmt_s(f_script), f"{s / f_script:.2f}x",
                  "<= 2x", s / f_script <= 2))
    s_script = med(static, 0)
    print(row("the same elements, static (no evalkit): script run", fmt_s(s_script), fmt_s(f_script),
              f"{s_script / f_script:.2f}x"))
    t_script = med(triplet, 0)
    print(row("answer a triplet question vs the same elements, static", fmt_s(t_script), fmt_s(s_script),
              f"{t_script / s_script:.2f}x"))
    print(row("trivial one-button app: AppTest round trip", fmt_s(f_trip)))
    for name, samples in (("triplet", triplet), ("pairwise", pairwise)):
        s = med(samples, 1)
        print(row(f"answer a {name} question: AppTest round trip", fmt_s(s), fmt_s(f_trip), f"{s / f_trip:.2f}x"))


if __name__ == "__main__":
    main()

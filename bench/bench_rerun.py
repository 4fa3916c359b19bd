"""Benchmark 3: the cost of answering one question (click "Next": the answer is written, the next question
drawn), vs a trivial one-button app measured in the same run.

    python bench/bench_rerun.py [--sessions 8] [--server-sessions 12] [--recompile] [--no-server] [--before DIR]

A click on a question reruns only the question's fragment (``ui.question``): a browser sends the fragment's
id with the click, the server runs the button's callback (the answer is stored) and then the fragment,
which draws the next question. The same clicks as whole-page reruns (what every click cost before the
questions were fragments, and what a refresh or a task's first question still costs) are measured in
alternation with them, at every question index, and the floor in alternation with both. The last answer of a
block (the fragment run, then the whole-page run that lands on the next task's instructions) is reported
apart.

Two harnesses:

* AppTest (the script's own time): Streamlit's ScriptRunner._run_script, callbacks included, timed in the
  script thread; also the whole AppTest round trip (which also parses every element the page sent).
  AppTest always asks for whole-page runs; a fragment run is asked for as a browser does, with the
  fragment's id in the rerun request (tests/apptest/fragments.py). AppTest runs with the app's
  .streamlit/config.toml (from the project root) and, like a `streamlit run` server, compiles each script
  once (common.server_like_apptest); --recompile keeps AppTest's default of compiling every run.
* `streamlit run` (what an evaluator waits for): click -> next screen over the websocket on loopback, with
  the client of bench/ws_client.py (the browser's protobuf messages, fragment ids included), p50; the floor
  is the same one-button app served by its own `streamlit run`. The browser's drawing is not included.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from bench_concurrency import start_server
from common import HEADER, ROOT, fmt_s, row, server_like_apptest
from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
from streamlit.testing.v1 import AppTest
from ws_client import Evaluator

from tests.apptest.fragments import fragment_run

TRIVIAL = """
import streamlit as st
from streamlit.runtime import runtime
runtime.MESSAGE_FLUSH_INTERVAL_SECS = 0.0  # as app.py sets it (ui.send_messages_promptly): both servers alike
if st.button("Next"):
    st.write("clicked")
"""

# The same elements as a triplet question (ui.progress_header, the subheader, ui.review_cards with the topic, the
# choice and its button in a form), static: what Streamlit itself costs to render that page.
SAME_ELEMENTS = """
import streamlit as st
st.set_page_config(layout="wide")
st.progress(0.4, text=":gray[Task 1 of 3 · Spot the real review]  \\nQuestion 2 of 5 · 40% of the study done")
st.subheader("Which review was written by a real person?")
with st.form("q"):
    st.html('<p>Topic: laptop</p>' + "".join(f'<div class="card"><p>Review {label}</p><div>'
            + "A review text of about two hundred characters. " * 4 + '</div></div>' for label in "ABC")
            + "<style>.card {border: 1px solid grey;}</style>")
    st.radio("Answer", ["A", "B", "C"], index=None, horizontal=True, key="choice")
    st.form_submit_button("Next")
"""

# The same, drawn by a fragment whose button reruns only it: Streamlit's own cost of a question fragment.
SAME_ELEMENTS_FRAGMENT = """
import streamlit as st
st.set_page_config(layout="wide")

@st.fragment
def question():
""" + "\n".join(f"    {line}" for line in SAME_ELEMENTS.splitlines()[3:]) + """

question()
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
Sample = tuple[float, float]


def click(at: AppTest, label: str, fragment: bool = False) -> Sample:
    """(script time, round trip) of one click: a whole-page rerun, or (``fragment``) the rerun of the fragment
    that holds the button, as a browser asks for it."""
    [button] = [b for b in at.button if b.label == label]
    SCRIPT_TIMES.clear()
    t0 = time.perf_counter()
    button.click()
    if fragment:
        fragment_run(at)
    else:
        at.run()
    return sum(SCRIPT_TIMES), time.perf_counter() - t0


def median(samples: list, k: int | None = None, skip: int = 2) -> float:
    """Median after the first ``skip`` samples (they warm caches), of element ``k`` of each if given."""
    samples = samples[min(skip, len(samples) - 1):]
    values = samples if k is None else [x[k] for x in samples]
    return statistics.median(values)


def apptest(args: argparse.Namespace) -> None:
    """Script time of each click in AppTest: fragment reruns and whole-page reruns, vs the floor."""
    if not args.recompile:
        server_like_apptest()
    trivial = AppTest.from_string(TRIVIAL, default_timeout=30).run()
    same = AppTest.from_string(SAME_ELEMENTS, default_timeout=30).run()
    same_fragment = AppTest.from_string(SAME_ELEMENTS_FRAGMENT, default_timeout=30).run()
    floor: list[Sample] = []
    static: list[Sample] = []
    static_fragment: list[Sample] = []
    clicks: dict[tuple[str, bool], list[Sample]] = {
        (kind, fragment): [] for kind in ("triplet", "pairwise") for fragment in (True, False)}
    block_end: list[Sample] = []
    for s in range(args.sessions):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
        at.secrets["results_password"] = "bench"
        at.run()
        at.checkbox(key="consent_agree").check()
        at.text_input(key="consent_name").input(f"bench {s}")
        click(at, "Start the study")
        click(at, "Begin")
        for task, kind, n in (("turing", "triplet", 5), ("pairwise", "pairwise", 5)):
            for i in range(n):
                at.radio(key=f"{task}-{i}-choice").set_value("A" if kind == "triplet" else "B")
                if i == n - 1:  # the block's last answer: the fragment run, then a whole-page run
                    sample = click(at, "Next", fragment=True)
                    if task == "turing":  # (after the pairwise block: the rating's instructions, not measured)
                        block_end.append(sample)
                    break
                fragment = (s + i) % 2 == 0  # both ways at every question index, in alternation
                clicks[kind, fragment].append(click(at, "Next", fragment=fragment))
                floor.append(click(trivial, "Next"))  # interleaved, so all see the same machine load
                if kind == "triplet":
                    static.append(click(same, "Next"))
                    static_fragment.append(click(same_fragment, "Next", fragment=True))
            if task == "turing":
                click(at, "Begin")

    how = "scripts recompiled every run (AppTest's default)" if args.recompile else "scripts compiled once, as a server"
    print(f"## Answering a question in AppTest: script time of one click (answer written in the callback, next "
          f"question drawn; {how}; medians of {len(floor) - 2} clicks each way)\n")
    print(HEADER)
    f_script, f_trip = median(floor, 0), median(floor, 1)
    print(row("trivial one-button app: script run (floor)", fmt_s(f_script)))
    for kind in ("triplet", "pairwise"):
        for fragment, how in ((True, "the question's fragment reruns (now)"),
                              (False, "the whole page reruns (before)")):
            s = median(clicks[kind, fragment], 0)
            print(row(f"answer a {kind} question, {how}: script run", fmt_s(s), fmt_s(f_script),
                      f"{s / f_script:.2f}x", "<= 2x", s / f_script <= 2))
    s = median(block_end, 0)
    print(row("last triplet of the block (fragment run, then the page: the next task's instructions)",
              fmt_s(s), fmt_s(f_script), f"{s / f_script:.2f}x"))
    for name, samples in (("the same elements, static, whole page (no evalkit)", static),
                          ("the same elements, static, as a fragment rerun (no evalkit)", static_fragment)):
        s = median(samples, 0)
        print(row(f"{name}: script run", fmt_s(s), fmt_s(f_script), f"{s / f_script:.2f}x"))
    t_script, s_script = median(clicks["triplet", True], 0), median(static_fragment, 0)
    print(row("answer a triplet question (fragment) vs the same elements as a fragment", fmt_s(t_script),
              fmt_s(s_script), f"{t_script / s_script:.2f}x"))
    print(row("trivial one-button app: AppTest round trip", fmt_s(f_trip)))
    for kind in ("triplet", "pairwise"):
        for fragment, how in ((True, "fragment"), (False, "whole page")):
            s = median(clicks[kind, fragment], 1)
            print(row(f"answer a {kind} question ({how}): AppTest round trip", fmt_s(s), fmt_s(f_trip),
                      f"{s / f_trip:.2f}x"))


QUESTION = re.compile(r"Question (\d+) of (\d+)")


async def answers(e: Evaluator, s: int) -> AsyncIterator[tuple[str, float]]:
    """One evaluator through consent and the demo study's triplet and pairwise (choice) blocks; yields
    (kind of click, latency) for each answer: inside a block alternately a fragment and a whole-page rerun
    (both at every question index over the sessions ``s``), and "block end" for a block's last answer."""
    agree, name = e.find("checkbox"), e.find("text_input")
    assert agree is not None and name is not None, e.texts[:3]
    await e.click("Start the study", e.state(agree, bool_value=True), e.state(name, string_value=e.name))
    for _block in range(2):
        await e.click("Begin")
        while True:
            i, n = map(int, QUESTION.search(e.progress[-1]).groups())
            choice = e.find("radio")
            assert choice is not None and e.find("button", "Next"), e.texts[:3]
            last = i == n
            e.fragments = last or (s + i) % 2 == 0
            await e.click("Next", e.state(choice, string_value=choice.proto.options[0]))
            yield ("block end" if last else "fragment" if e.fragments else "page"), e.latencies[-1]
            if last:
                break


async def server_clicks(app_url: str, floor_url: str, before_url: str | None, sessions: int,
                        think: tuple[float, float]) -> dict[str, list[float]]:
    """Click latencies over the websocket, every click after ``think`` seconds: each answer on the app, then
    (if given) the same answer on the app before this change, then a click on the floor app. (Without a pause
    between clicks, loopback TCP adds a 40 ms delayed-ACK stall to some responses, app and floor alike, which
    an evaluator's clicks do not produce.)"""
    out: dict[str, list[float]] = {"floor": [], "fragment": [], "page": [], "block end": [], "before": [],
                                   "before block end": []}
    floor = Evaluator(floor_url, "floor", think=think)
    async with floor.connected():
        for s in range(sessions):
            e = Evaluator(app_url, f"bench {s}", think=think)
            old = Evaluator(before_url or app_url, f"before {s}", think=think)
            async with e.connected(), (old.connected() if before_url else contextlib.nullcontext()):
                olds = answers(old, s) if before_url else None
                async for kind, latency in answers(e, s):
                    out[kind].append(latency)
                    if olds is not None:
                        old_kind, old_latency = await anext(olds)
                        out["before block end" if old_kind == "block end" else "before"].append(old_latency)
                    await floor.click("Next")
                    out["floor"].append(floor.latencies[-1])
    return out


def server(args: argparse.Namespace, tmp: Path) -> None:
    """Click -> next screen over the websocket against `streamlit run`, vs the one-button app served alike
    (and, with --before, vs the app of an older checkout served alike)."""
    trivial = tmp / "trivial.py"
    trivial.write_text(TRIVIAL)
    servers = [start_server(tmp / "config.toml", tmp / "server.sqlite", tmp / "app.log"),
               start_server(tmp / "config.toml", tmp / "unused.sqlite", tmp / "floor.log", script=trivial)]
    if args.before:
        servers.append(start_server(tmp / "config.toml", tmp / "before.sqlite", tmp / "before.log",
                                    script=Path(args.before).resolve() / "app.py"))
    (_, app_url), (_, floor_url), *rest = servers
    before_url = rest[0][1] if rest else None
    try:
        asyncio.run(server_clicks(app_url, floor_url, before_url, 1, (0, 0)))  # warm-up: imports, caches, plans
        lat = asyncio.run(server_clicks(app_url, floor_url, before_url, args.server_sessions, (0.25, 0.35)))
    finally:
        for proc, _ in servers:
            proc.terminate()
            proc.wait()
    print(f"\n## Answering a question on `streamlit run`: click -> next screen over the websocket, loopback, "
          f"0.25-0.35 s between clicks, p50 of {len(lat['fragment'])} / {len(lat['page'])} clicks\n")
    print(HEADER)
    f = statistics.median(lat["floor"])
    print(row("trivial one-button app (its own `streamlit run`): click -> response (floor)", fmt_s(f)))
    rows = [("fragment", "the question's fragment reruns (now)", True),
            ("page", "the whole page reruns (the same app, clicks sent without the fragment's id)", True)]
    if before_url:
        rows.append(("before", f"the app before this change ({args.before}), whole page", True))
    rows.append(("block end", "last question of a block (fragment run, then the page: next task's instructions)",
                 False))
    if before_url:
        rows.append(("before block end", "the same, the app before this change", False))
    for key, name, target in rows:
        s = statistics.median(lat[key])
        print(row(f"answer a question, {name}", fmt_s(s), fmt_s(f), f"{s / f:.2f}x", "<= 2x" if target else "",
                  s / f <= 2 if target else None))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=8, help="evaluators in AppTest")
    ap.add_argument("--server-sessions", type=int, default=12, help="evaluators against `streamlit run`")
    ap.add_argument("--recompile", action="store_true", help="AppTest's default: recompile scripts every run")
    ap.add_argument("--no-server", action="store_true", help="AppTest only")
    ap.add_argument("--before", metavar="DIR", help="an older checkout (e.g. `git archive` of the commit before "
                    "the question fragments) whose app is measured against `streamlit run` in the same alternation")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    for name in ("datasets", "consent.md", "config.toml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp / name)
    os.environ["EVALKIT_CONFIG"] = str(tmp / "config.toml")
    os.environ["EVALKIT_DATABASE"] = str(tmp / "bench.sqlite")
    try:
        apptest(args)
        if not args.no_server:
            server(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

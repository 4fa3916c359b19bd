"""Benchmark 11: a score question (the score widget, ``components/scores/``) against a choice question of the same
items, and against the score question's previous renderer (Streamlit sliders and radios, a rerun per change), on
`streamlit run`, in the same run and alternated.

    python bench/bench_score_click.py [--questions 12] [--rounds 3] [--crowd 25] [--crowd-questions 4]
                                      [--think 1.0,3.0]

Three servers on one study each, the same items (40 news texts, two systems' summaries of each):

* ``score``: a direct-assessment question (one summary; a 0-100 slider and two 5-level Likert scales, as
  ``examples/direct-assessment``) drawn with the score widget: the scores stay in the browser and "Next" sends
  them once (one trigger value, one fragment rerun);
* ``score before``: the same question with the previous renderer (``EVALKIT_SCORE_WIDGET=streamlit``): moving
  the slider and picking each level is a rerun of the question's fragment, then "Next" (4 reruns per answer;
  an evaluator who adjusts a score makes more);
* ``choice``: a compare question over the same items (two summaries, one choice in a form, "Next").

Measured per server: the server process's CPU time (user + system, from /proc/<pid>/stat) over the answers
divided by the answers stored, and click -> next screen (every message the server sends for a click until its
run ends; bench/ws_client.py speaks the browser's protocol, the widget's trigger included). At 1 evaluator
(0.25-0.35 s between clicks, see bench_rerun.py on loopback's delayed ACK) the servers take turns question by
question; with a crowd (``--crowd`` evaluators at once, ``--think`` seconds before every click) the servers take
turns crowd by crowd, the order changing every round. The browser's own work (drawing, the component's script)
is not included.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench_concurrency import start_server
from common import HEADER, fmt_s, row, sentence
from ws_client import Evaluator

KINDS = ("score", "score before", "choice")
CLOCK = os.sysconf("SC_CLK_TCK")
SCALES = """
[[tasks.scales]]
id = "overall"
label = "Overall quality"
type = "slider"

[[tasks.scales]]
id = "fluency"
label = "Fluency"
type = "likert"
anchors = ["Incomprehensible", "Hard to read", "Readable, with errors", "Fluent, minor slips", "Perfectly fluent"]

[[tasks.scales]]
id = "faithfulness"
label = "Faithfulness"
type = "likert"
anchors = ["Mostly invented", "Several errors", "One error", "Minor slips", "Fully faithful"]
"""


def write_study(folder: Path, kind: str, questions: int) -> Path:
    """A study of one task over ``folder/items.jsonl``: the score task, or a compare task of the same items."""
    task = (f'kind = "score"\nquestion = "How good is this summary?"\n{SCALES}' if kind == "score" else
            'kind = "compare"\nquestion = "Which summary is better?"\n')
    config = folder / f"{kind}.toml"
    config.write_text(f"""[study]
title = "Bench"
datasets = "."
database = "unused.sqlite"
seed = 11

[[tasks]]
id = "q"
title = "Summaries"
instructions = "Read, then answer."
items = "{folder / 'items.jsonl'}"
systems = ["sysA", "sysB"]
questions = {questions}
{task.replace("[[tasks.scales]]", "[[tasks.scales]]")}""", encoding="utf-8")
    return config


def write_items(path: Path, n: int = 40) -> None:
    rng = random.Random(5)
    with open(path, "w", encoding="utf-8") as fh:
        for k in range(n):
            fh.write(json.dumps({"id": f"i{k}", "input": " ".join(sentence(rng) for _ in range(8)),
                                 "outputs": {s: " ".join(sentence(rng) for _ in range(3)) for s in ("sysA", "sysB")}})
                     + "\n")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (all its threads) so far."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK  # utime, stime (fields 14 and 15 of stat)


async def begin(e: Evaluator) -> None:
    agree, name = e.find("checkbox"), e.find("text_input")
    assert agree is not None and name is not None, e.texts[:3]
    await e.click("Start the study", e.state(agree, bool_value=True), e.state(name, string_value=e.name))
    await e.click("Begin")


async def answer(e: Evaluator, kind: str, rng: random.Random) -> list[tuple[str, float]]:
    """Answer the question on screen as an evaluator of ``kind`` does; returns (click, latency) for every click."""
    out: list[tuple[str, float]] = []
    if kind == "choice":
        choice = e.find("radio")
        assert choice is not None, e.texts[:3]
        await e.click("Next", e.state(choice, string_value=choice.proto.options[rng.randrange(2)]))
        return [("next", e.latencies[-1])]
    levels = {"overall": rng.randint(0, 100), "fluency": rng.randint(1, 5), "faithfulness": rng.randint(1, 5)}
    if kind == "score":
        widget = e.find("bidi_component")
        assert widget is not None, e.texts[:3]
        await e.think_time()
        value = {"scores": {k: [v] for k, v in levels.items()}, "texts": None}
        await e.act([e.trigger(widget, "submit", value)], fragment=widget.fragment)
        return [("next", e.latencies[-1])]
    given = []  # widgets outside a form: a browser sends every value with every rerun
    slider = e.find("slider")
    assert slider is not None, e.texts[:3]
    given.append(e.state(slider, double_array_value=[levels["overall"]]))
    await e.think_time()
    await e.act(list(given), fragment=slider.fragment)
    out.append(("change", e.latencies[-1]))
    for scale in ("fluency", "faithfulness"):
        radio = next(w for w in e.widgets if w.kind == "radio" and w.id.endswith(f"-{scale}-0"))
        given.append(e.state(radio, string_value=radio.proto.options[levels[scale] - 1]))
        await e.think_time()
        await e.act(list(given), fragment=radio.fragment)
        out.append(("change", e.latencies[-1]))
    await e.click("Next", *given)
    out.append(("next", e.latencies[-1]))
    return out


class Server:
    def __init__(self, kind: str, tmp: Path, questions: int) -> None:
        self.kind = kind
        config = write_study(tmp, "score" if kind.startswith("score") else "choice", questions)
        name = kind.replace(" ", "-")
        old = os.environ.get("EVALKIT_SCORE_WIDGET")
        if kind == "score before":
            os.environ["EVALKIT_SCORE_WIDGET"] = "streamlit"
        try:
            self.proc, self.url = start_server(config, tmp / f"{name}.sqlite", tmp / f"{name}.log")
        finally:
            os.environ.pop("EVALKIT_SCORE_WIDGET", None)
            if old is not None:
                os.environ["EVALKIT_SCORE_WIDGET"] = old
        self.cpu: list[float] = []  # CPU seconds per answer, one figure per measured stretch
        self.clicks: dict[str, list[float]] = {"next": [], "change": []}
        self.crowd_cpu: list[float] = []
        self.crowd_clicks: dict[str, list[float]] = {"next": [], "change": []}


async def one_evaluator(servers: list[Server], questions: int, rounds: int, warm: bool = False) -> None:
    """Per round, one new evaluator on each server; the servers take turns question by question."""
    for r in range(rounds):
        order = servers if r % 2 == 0 else servers[::-1]
        evaluators = [Evaluator(s.url, f"e{r}-{s.kind}", think=(0.25, 0.35), rng=random.Random(r)) for s in order]
        ctxs = [e.connected() for e in evaluators]
        for c in ctxs:
            await c.__aenter__()
        try:
            for e in evaluators:
                await begin(e)
            spent = dict.fromkeys(KINDS, 0.0)  # summed over the round: the clock ticks are 10 ms
            for _ in range(questions):
                for s, e in zip(order, evaluators, strict=True):
                    before = cpu_seconds(s.proc.pid)
                    clicks = await answer(e, s.kind, e.rng)
                    spent[s.kind] += cpu_seconds(s.proc.pid) - before
                    if not warm:
                        for what, latency in clicks:
                            s.clicks[what].append(latency)
            if not warm:
                for s in servers:
                    s.cpu.append(spent[s.kind] / questions)
        finally:
            for c in ctxs:
                await c.__aexit__(None, None, None)


async def crowd(server: Server, n: int, questions: int, think: tuple[float, float], seed: int) -> None:
    """``n`` evaluators at once on one server, ``think`` seconds before every click; CPU over the answers only."""
    evaluators = [Evaluator(server.url, f"c{seed}-{k}", think=think, rng=random.Random(seed * 1000 + k))
                  for k in range(n)]
    ctxs = [e.connected() for e in evaluators]
    await asyncio.gather(*(c.__aenter__() for c in ctxs))
    try:
        await asyncio.gather(*(begin(e) for e in evaluators))
        before = cpu_seconds(server.proc.pid)

        async def walk(e: Evaluator) -> list[tuple[str, float]]:
            out = []
            for _ in range(questions):
                out += await answer(e, server.kind, e.rng)
            return out

        results = await asyncio.gather(*(walk(e) for e in evaluators))
        server.crowd_cpu.append((cpu_seconds(server.proc.pid) - before) / (n * questions))
        for clicks in results:
            for what, latency in clicks:
                server.crowd_clicks[what].append(latency)
    finally:
        await asyncio.gather(*(c.__aexit__(None, None, None) for c in ctxs))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=12, help="questions per evaluator at 1 evaluator")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (new evaluators) at 1 evaluator and of crowds")
    ap.add_argument("--crowd", type=int, default=25, help="evaluators at once (0: no crowd)")
    ap.add_argument("--crowd-questions", type=int, default=4, help="questions per evaluator of a crowd")
    ap.add_argument("--think", default="1.0,3.0", help="a crowd's think time before every click, seconds (low,high)")
    args = ap.parse_args()
    think = tuple(float(x) for x in args.think.split(","))
    tmp = Path(tempfile.mkdtemp())
    write_items(tmp / "items.jsonl")
    (tmp / "consent.md").write_text("Consent.")
    questions = max(args.questions, args.crowd_questions) + 1
    servers = [Server(kind, tmp, questions) for kind in KINDS]
    try:
        asyncio.run(one_evaluator(servers, 2, 1, warm=True))  # imports, caches, the first plans
        t0 = time.monotonic()
        asyncio.run(one_evaluator(servers, args.questions, args.rounds))
        for r in range(args.rounds if args.crowd else 0):
            for s in servers if r % 2 == 0 else servers[::-1]:
                asyncio.run(crowd(s, args.crowd, args.crowd_questions, think, r))
        took = time.monotonic() - t0
    finally:
        for s in servers:
            s.proc.terminate()
            s.proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    by = {s.kind: s for s in servers}
    print(f"\n## A score question vs a choice question of the same items on `streamlit run` ({took:.0f} s; "
          f"1 evaluator: {args.rounds} x {args.questions} answers per server, 0.25-0.35 s between clicks; "
          f"crowds of {args.crowd}, {args.crowd_questions} answers each, {think[0]}-{think[1]} s before every "
          f"click, {args.rounds} per server)\n")
    print(HEADER)
    for label, cpu, clicks, n in (("1 evaluator", "cpu", "clicks", 1), (f"{args.crowd} evaluators", "crowd_cpu",
                                                                          "crowd_clicks", args.crowd)):
        if n > 1 and not args.crowd:
            continue
        floor_cpu = statistics.median(getattr(by["choice"], cpu))
        floor_click = statistics.median(getattr(by["choice"], clicks)["next"])
        print(row(f"{label}: choice question, server CPU per answer (floor)", fmt_s(floor_cpu)))
        print(row(f"{label}: choice question, click p50 (\"Next\") (floor)", fmt_s(floor_click)))
        for kind in ("score", "score before"):
            s = by[kind]
            c = statistics.median(getattr(s, cpu))
            # (at a toy size the floor can be below the CPU clock's resolution: no ratio then)
            print(row(f"{label}: {kind}, server CPU per answer", fmt_s(c), fmt_s(floor_cpu),
                      f"{c / floor_cpu:.2f}x" if floor_cpu else "n/a (floor below the clock's resolution)",
                      "<= 1.5x" if kind == "score" else "",
                      c / floor_cpu <= 1.5 if kind == "score" and floor_cpu else None))
            every = getattr(s, clicks)["next"] + getattr(s, clicks)["change"]
            p50 = statistics.median(every)
            print(row(f"{label}: {kind}, click p50 (every click: {len(every)} clicks, "
                      f"{len(getattr(s, clicks)['change'])} of them slider / level changes)", fmt_s(p50),
                      fmt_s(floor_click), f"{p50 / floor_click:.2f}x" if floor_click else "n/a"))
    print(row("score widget, p95 of every click at the largest crowd",
              fmt_s(statistics.quantiles(by["score"].crowd_clicks["next"] or by["score"].clicks["next"],
                                         n=20)[-1])))


if __name__ == "__main__":
    main()

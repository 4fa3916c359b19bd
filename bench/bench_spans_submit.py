"""Benchmark 12: submitting an error-span answer (one segment with 20 spans, the offsets in UTF-16 as the widget
sends them, and its log of 60 actions) against submitting the same segment's score alone (a score task over the
same items, one 0-100 slider), in the same run and alternated.

    python bench/bench_spans_submit.py [--sets 5] [--answers 200] [--questions 12] [--rounds 3] [--no-server]

Two harnesses:

* in process (the server's own work for one answer, nothing else): ``record_spans`` (the answer checked by
  ``parse_answer``: every offset converted from UTF-16 and checked, overlaps, severities, the scores, the action
  log; then stored with its 20 ``spans`` rows in one transaction) against ``record_scores`` of the same segment's
  one score. Each repetition set opens a fresh SQLite store per kind (WAL, ``synchronous=FULL``, as the app's), its
  first answers not counted; the two are called in turn, answer by answer. Wall time and the thread's CPU time
  of every call, median and p95; ``parse_answer`` alone is timed beside them (the check without the store).
* `streamlit run` (the whole question: the trigger's callback stores the answer, then the fragment draws the next
  question; bench_score_click's approach): two servers, one on a spans study and one on a score study of the same
  items, one evaluator each (bench/ws_client.py as the browser, the spans read from the widget's DATA and sent as
  its "submit" trigger), taking turns question by question; the server process's CPU time over the answers
  (/proc/<pid>/stat) per answer stored, and click -> next screen p50. The browser's work is not included
  (bench_spans_widget.py measures it).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import re
import shutil
import sqlite3
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench_concurrency import start_server
from bench_score_click import begin, cpu_seconds
from common import HEADER, fmt_s, row, sentence
from ws_client import Evaluator

from evalkit.config import open_study
from evalkit.question import Question
from evalkit.spans import to_utf16
from evalkit.store import open_store
from evalkit.tasks.score import record_scores
from evalkit.tasks.spans import parse_answer, record_spans

SPANS, ACTIONS = 20, 60
SYSTEMS = ("sysA", "sysB")
SKIP = 5  # answers of each set not counted (the store's first statements, caches)
WORD = re.compile(r"\w+")


def write_items(path: Path, n: int = 40) -> None:
    """``n`` items of one segment: an input and two outputs of 8 sentences (about 100 words; an emoji in each, so
    that UTF-16 offsets differ from code points after it)."""
    rng = random.Random(12)
    with open(path, "w", encoding="utf-8") as fh:
        for k in range(n):
            outputs = {}
            for s in SYSTEMS:
                parts = [sentence(rng) for _ in range(8)]
                parts[1] = "😺 " + parts[1]
                outputs[s] = " ".join(parts)
            fh.write(json.dumps({"id": f"i{k}", "input": " ".join(sentence(rng) for _ in range(8)), "outputs": outputs},
                                ensure_ascii=False) + "\n")


def write_study(folder: Path, kind: str, questions: int) -> Path:
    """A study of one task over ``folder/items.jsonl``: ESA spans (its default scale: one 0-100 slider
    ``quality``), or a score task with that one slider."""
    task = ('kind = "spans"\nquestion = "Mark the errors, then score the translation."\n' if kind == "spans" else
            'kind = "score"\nquestion = "How good is this translation?"\n'
            '[[tasks.scales]]\nid = "quality"\nlabel = "Quality"\ntype = "slider"\n')
    config = folder / f"{kind}.toml"
    config.write_text(f"""[study]
title = "Bench"
datasets = "."
database = "unused.sqlite"
seed = 12

[[tasks]]
id = "q"
title = "Translations"
instructions = "Read, then answer."
items = "{folder / 'items.jsonl'}"
systems = {json.dumps(list(SYSTEMS))}
questions = {questions}
{task}""", encoding="utf-8")
    return config


def spans_value(text: str, rng: random.Random, score: int) -> dict[str, Any]:
    """What the widget sends on "Next" for ``text`` (one output, one segment): 20 spans on words spread over the
    text, in UTF-16 offsets, and a log of 60 actions (the 20 creations, 5 spans made and deleted again, 30 changes
    of severity, 5 moves of the slider; a few seconds apart)."""
    words = [(m.start(), m.end()) for m in WORD.finditer(text)]
    step = len(words) / SPANS
    chosen = [words[int(k * step)] for k in range(SPANS)]
    others = [w for w in words if w not in chosen]
    u16 = [(to_utf16(text, a), to_utf16(text, b)) for a, b in chosen]
    spans = [{"start": a, "end": b, "severity": ("minor", "major")[k % 2], "category": None, "origin": "added",
              "suggestion": None} for k, (a, b) in enumerate(u16)]
    log: list[tuple[str, int, int, str]] = [("create", a, b, "minor") for a, b in u16]
    for a, b in (others[int(k * len(others) / 5)] for k in range(5)):
        a, b = to_utf16(text, a), to_utf16(text, b)
        log += [("create", a, b, "minor"), ("delete", a, b, "minor")]
    for k in range(ACTIONS - len(log) - 5):
        a, b = u16[k % SPANS]
        log.append(("change", a, b, ("major", "minor")[k % 2]))
    t, actions = 0, []
    for action, a, b, severity in log:
        t += rng.randint(800, 9000)
        actions.append({"t": t, "action": action, "output": 0, "segment": 0, "start": a, "end": b,
                        "severity": severity, "category": None})
    for k in range(5):
        t += rng.randint(300, 2000)
        actions.append({"t": t, "action": "score", "output": 0, "segment": 0, "scale": "quality",
                        "value": score - 4 + k})
    assert len(actions) == ACTIONS
    return {"spans": [[spans]], "scores": {"quality": [score]}, "actions": actions, "confirmedNoSpans": False}


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1] if len(values) > 1 else values[0]


def timed_call(into: dict[str, list[float]] | None, fn: Any, *args: Any) -> Any:
    """Call ``fn(*args)``; append its wall time and this thread's CPU time to ``into`` (unless None)."""
    t0, c0 = time.perf_counter(), time.thread_time()
    out = fn(*args)
    cpu, wall = time.thread_time() - c0, time.perf_counter() - t0
    if into is not None:
        into["cpu"].append(cpu)
        into["wall"].append(wall)
    return out


def in_process(args: argparse.Namespace, tmp: Path) -> None:
    spans_loaded = open_study(write_study(tmp, "spans", 4))
    score_loaded = open_study(write_study(tmp, "score", 4))
    [spans_task], [score_task] = spans_loaded.study.tasks, score_loaded.study.tasks
    item = spans_loaded.item_sets[spans_task.source.items].by_id("i0")
    text = item.outputs["sysA"]

    def question(kind: str) -> Question:
        return Question(task="q", kind=kind, index=0, slot=0, domain="", review_ids=(item.id,), sources=("sysA",),
                        texts=(text,), matched=True, input=item.input)

    spans_q, score_q = question("spans"), question("score")
    value = spans_value(text, random.Random(1), 71)
    assert len(parse_answer(spans_task, spans_q, item, value).rows) == SPANS
    got: dict[str, dict[str, list[float]]] = {k: {"wall": [], "cpu": []} for k in ("spans", "score", "parse")}
    stored_spans = 0
    gc.collect()
    for s in range(args.sets):
        with open_store(tmp / f"spans-{s}.sqlite") as spans_store, open_store(tmp / f"score-{s}.sqlite") as score_store:
            spans_session = spans_store.create_session(study_version="bench")
            score_session = score_store.create_session(study_version="bench")
            for i in range(SKIP + args.answers):
                counted = i >= SKIP
                spans_call = (got["spans"] if counted else None, record_spans, spans_store, spans_session, spans_task,
                              replace(spans_q, index=i), item, value, 60_000)
                score_call = (got["score"] if counted else None, record_scores, score_store, score_session,
                              score_task, replace(score_q, index=i), {"quality": [71]}, None, 60_000)
                for call in (spans_call, score_call) if i % 2 == 0 else (score_call, spans_call):
                    timed_call(*call)
                timed_call(got["parse"] if counted else None, parse_answer, spans_task, spans_q, item, value)
        conn = sqlite3.connect(tmp / f"spans-{s}.sqlite")
        stored_spans += conn.execute("SELECT count(*) FROM spans").fetchone()[0]
        conn.close()
    n = args.sets * args.answers
    assert stored_spans == SPANS * args.sets * (SKIP + args.answers), stored_spans
    print(f"## Submitting one segment with {SPANS} spans vs its score alone, in process ({args.sets} set"
          f"{'s' if args.sets > 1 else ''} x "
          f"{args.answers} answers each way, alternated, a fresh SQLite store per set and kind, synchronous=FULL; "
          f"{len(text.split())} words, {len(value['actions'])} actions)\n")
    print(HEADER)
    for measure, key in (("wall time", "wall"), ("CPU time (the thread's, without the commit's fsync wait)", "cpu")):
        floor = got["score"][key]
        f50, f95 = statistics.median(floor), p95(floor)
        print(row(f"`record_scores`, one score (floor): {measure}, p50 / p95", f"{fmt_s(f50)} / {fmt_s(f95)}"))
        s = got["spans"][key]
        s50, s95 = statistics.median(s), p95(s)
        print(row(f"`record_spans`, {SPANS} spans + {ACTIONS} actions: {measure}, p50", fmt_s(s50), fmt_s(f50),
                  f"{s50 / f50:.2f}x", "<= 2x", s50 / f50 <= 2))
        print(row(f"`record_spans`: {measure}, p95", fmt_s(s95), fmt_s(f95), f"{s95 / f95:.2f}x"))
        parse = statistics.median(got["parse"][key])
        print(row(f"of which `parse_answer` (the check, no store): {measure}, p50", fmt_s(parse), fmt_s(f50),
                  f"{parse / f50:.2f}x"))
    print(f"\n({n} answers of each kind counted, {stored_spans:,} span rows stored)\n")


# ----------------------------------------------------------------------------- `streamlit run`


async def answer(e: Evaluator, kind: str, rng: random.Random) -> None:
    """Answer the question on screen: the spans widget's "submit" (20 spans on its text, 60 actions), or the score
    widget's with the one score."""
    widget = e.find("bidi_component")
    assert widget is not None, e.texts[:3]
    score = rng.randint(20, 95)
    if kind == "spans":
        data = json.loads(widget.proto.json)
        value = spans_value(data["outputs"][0]["segments"][0]["text"], rng, score)
    else:
        value = {"scores": {"quality": [score]}, "texts": None}
    await e.think_time()
    await e.act([e.trigger(widget, "submit", value)], fragment=widget.fragment)


async def alternate(servers: dict[str, tuple[Any, str]], questions: int, rounds: int, warm: bool,
                    cpu: dict[str, list[float]], clicks: dict[str, list[float]]) -> None:
    """Per round, one new evaluator on each server; they take turns question by question."""
    for r in range(rounds):
        kinds = list(servers) if r % 2 == 0 else list(servers)[::-1]
        evaluators = {k: Evaluator(servers[k][1], f"e{r}-{k}", think=(0.25, 0.35), rng=random.Random(r)) for k in kinds}
        ctxs = [e.connected() for e in evaluators.values()]
        for c in ctxs:
            await c.__aenter__()
        try:
            for e in evaluators.values():
                await begin(e)
            spent = dict.fromkeys(kinds, 0.0)  # summed over the round: the clock ticks are 10 ms
            for _ in range(questions):
                for k in kinds:
                    pid = servers[k][0].pid
                    before = cpu_seconds(pid)
                    await answer(evaluators[k], k, evaluators[k].rng)
                    spent[k] += cpu_seconds(pid) - before
                    if not warm:
                        clicks[k].append(evaluators[k].latencies[-1])
            if not warm:
                for k in kinds:
                    cpu[k].append(spent[k] / questions)
        finally:
            for c in ctxs:
                await c.__aexit__(None, None, None)


def server(args: argparse.Namespace, tmp: Path) -> None:
    (tmp / "consent.md").write_text("Consent.")
    questions = args.questions + 3
    servers = {kind: start_server(write_study(tmp, kind, questions), tmp / f"{kind}-server.sqlite",
                                  tmp / f"{kind}.log") for kind in ("spans", "score")}
    cpu: dict[str, list[float]] = {"spans": [], "score": []}
    clicks: dict[str, list[float]] = {"spans": [], "score": []}
    try:
        asyncio.run(alternate(servers, 2, 1, True, cpu, clicks))  # imports, caches, the first plans
        t0 = time.monotonic()
        asyncio.run(alternate(servers, args.questions, args.rounds, False, cpu, clicks))
        took = time.monotonic() - t0
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait()
    conn = sqlite3.connect(tmp / "spans-server.sqlite")
    answers, rows = (conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("evaluations", "spans"))
    conn.close()
    assert rows == SPANS * answers, (answers, rows)  # every answer stored with its 20 spans
    print(f"## The same on `streamlit run`: the whole question (the callback stores the answer, the next question is "
          f"drawn), 1 evaluator per server, {args.rounds} x {args.questions} answers each, alternated question by "
          f"question, 0.25-0.35 s between clicks ({took:.0f} s)\n")
    print(HEADER)
    floor_cpu, floor_click = statistics.median(cpu["score"]), statistics.median(clicks["score"])
    print(row("score question, one slider (floor): server CPU per answer", fmt_s(floor_cpu)))
    print(row("score question: click -> next screen p50 (floor)", fmt_s(floor_click)))
    c = statistics.median(cpu["spans"])
    # (at a toy size the floor can be below the CPU clock's resolution: no ratio then)
    print(row(f"spans question, {SPANS} spans + {ACTIONS} actions: server CPU per answer", fmt_s(c), fmt_s(floor_cpu),
              f"{c / floor_cpu:.2f}x" if floor_cpu else "n/a (floor below the clock's resolution)", "<= 2x",
              c / floor_cpu <= 2 if floor_cpu else None))
    p = statistics.median(clicks["spans"])
    print(row("spans question: click -> next screen p50", fmt_s(p), fmt_s(floor_click), f"{p / floor_click:.2f}x"))
    print(f"\n({answers} spans answers stored, {rows:,} span rows)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", type=int, default=5, help="repetition sets in process, each on fresh stores")
    ap.add_argument("--answers", type=int, default=200, help="answers of each kind per set (after 5 not counted)")
    ap.add_argument("--questions", type=int, default=12, help="questions per evaluator on `streamlit run`")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (new evaluators) on `streamlit run`")
    ap.add_argument("--no-server", action="store_true", help="in process only")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    try:
        write_items(tmp / "items.jsonl")
        in_process(args, tmp)
        if not args.no_server:
            server(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

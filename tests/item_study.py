"""Builders for small studies whose tasks read items files (compare, score, rank, realfake)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

SYSTEMS = ("gpt4", "t5", "human")


def write_items(path: Path, n: int = 12, systems: Iterable[str] = SYSTEMS, *, gold: int = 0,
                missing: Mapping[int, str] | None = None) -> Path:
    """``n`` items r0..r{n-1} with an output per system (``missing`` drops one system from an item), metrics on
    every output, and ``gold`` attention-check items with systems good/bad."""
    systems = tuple(systems)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            outputs = {s: f"Reply {k} to input {i}." for k, s in enumerate(systems) if (missing or {}).get(i) != s}
            fh.write(json.dumps({"id": f"r{i}", "title": f"Item {i}", "input": f"The input text {i}.",
                                 "outputs": outputs,
                                 "metrics": {s: {"bleu": float(10 * i + k)} for k, s in enumerate(outputs)}}) + "\n")
        for g in range(gold):
            fh.write(json.dumps({"id": f"gold{g}", "input": "Check.", "outputs": {"good": "ok", "bad": "no"},
                                 "check": {"expect": "good"}}) + "\n")
    return path


STUDY = """
[study]
title = "Items study"
datasets = "datasets"
database = "responses.sqlite"
seed = 7
"""

TASKS = {
    "compare": """
[[tasks]]
kind = "compare"
id = "help"
items = "items.jsonl"
systems = ["gpt4", "t5", "human"]
question = "Which response is most related to the review?"
response = "{response}"
questions = {questions}
""",
    "score": """
[[tasks]]
kind = "score"
id = "quality"
items = "items.jsonl"
systems = ["gpt4", "t5", "human"]
outputs_per_question = {per_question}
questions = {questions}
textfield = "{textfield}"
[[tasks.scales]]
id = "fluency"
label = "Fluency"
type = "likert"
anchors = ["Incomprehensible", "Poor", "Fair", "Good", "Perfectly fluent"]
[[tasks.scales]]
id = "overall"
label = "Overall quality"
type = "slider"
min = 0
max = 100
""",
    "rank": """
[[tasks]]
kind = "rank"
id = "best"
items = "items.jsonl"
systems = ["gpt4", "t5", "human"]
response = "{response}"
questions = {questions}
""",
    "realfake": """
[[tasks]]
kind = "realfake"
id = "turing"
items = "items.jsonl"
systems = ["gpt4", "t5", "human"]
target = "human"
questions = {questions}
confidence = ["Guessing", "Somewhat sure", "Sure", "Very sure"]
""",
}
DEFAULTS = {"compare": {"response": "choice", "questions": 6},
            "score": {"per_question": 1, "questions": 6, "textfield": "none"},
            "rank": {"response": "best", "questions": 4},
            "realfake": {"questions": 8}}


def task_block(kind: str, **values: object) -> str:
    """The ``[[tasks]]`` block of one kind with its defaults overridden by ``values``."""
    text = TASKS[kind]
    for key, value in {**DEFAULTS[kind], **values}.items():
        text = text.replace("{" + key + "}", str(value))
    return text


def make_items_study(tmp: Path, *blocks: str, n: int = 12, gold: int = 0, extra: str = "") -> Path:
    """A study under ``tmp`` with an items file of ``n`` items and the given task blocks; returns the config."""
    (tmp / "datasets").mkdir(parents=True, exist_ok=True)
    write_items(tmp / "items.jsonl", n, gold=gold)
    path = tmp / "config.toml"
    path.write_text(STUDY + extra + "".join(blocks), encoding="utf-8")
    return path

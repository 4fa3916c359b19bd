"""AppTest of per-system check expectations in the page: a score practice question expecting one output to score
higher than the other (``score_greaterthan``) answered wrong shows the line under the output it concerns (the
widget's ``problems``, by display position) and the feedback where every message goes, survives a reload, names no
system; answered right, the survey goes on. The same order in a span practice question, said in its widget."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pages.tasks.score import widget_key
from tests.apptest.component import component_data, send_trigger
from tests.apptest.conftest import button, page_protos
from tests.apptest.test_item_kinds import HEAD, plan_of, start

GOOD, BAD = "sysGoodQ1", "sysBadQ2"
FEEDBACK = "One of the two repeats a word."
ORDER = {"id": "orderQv", "input": "Der Hund.", "outputs": {GOOD: "The dog.", BAD: "The the dog."},
         "check": {"expect": {GOOD: {"score_greaterthan": BAD}}, "feedback": FEEDBACK}}


def study(tmp: Path, kind: str) -> Path:
    data = tmp / "datasets"
    data.mkdir(parents=True)
    items = [{"id": f"itemQv{k}Zr", "input": f"Eingabe {k}.", "outputs": {GOOD: f"Good {k}.", BAD: f"Bad {k}."}}
             for k in range(4)]
    (data / "items.jsonl").write_text("".join(json.dumps(x) + "\n" for x in [*items, ORDER]), encoding="utf-8")
    scales = '\n[[tasks.scales]]\nid = "quality"\nlabel = "Quality"\ntype = "slider"\nmin = 0\nmax = 100\n'
    config = tmp / "config.toml"
    config.write_text(HEAD + f"""
[[tasks]]
kind = "{kind}"
id = "block"
title = "The block"
instructions = "Read the instructions."
items = "datasets/items.jsonl"
systems = ["{GOOD}", "{BAD}"]
outputs_per_question = 2
questions = 1
output_label = "Translation"
tutorial = ["orderQv"]
""" + (scales if kind == "score" else ""), encoding="utf-8")
    return config


def scores_in_order(q, values: dict[str, int]) -> list[int]:
    return [values[s] for s in q.sources]


def test_a_wrong_order_shows_its_line_under_the_output_and_a_right_one_goes_on(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, "score"))
    at = start(h)
    tutorial = plan_of(h, at)[0]
    assert tutorial.check is not None and tutorial.check.id == "orderQv"
    key = widget_key("block-0")
    assert component_data(at, key)["problems"] == [[], []]  # nothing wrong yet
    wrong = {"scores": {"quality": scores_in_order(tutorial, {GOOD: 40, BAD: 60})}, "texts": None}
    send_trigger(at, key, "submit", wrong)
    assert not at.exception and h.store.answers() == [] and len(h.store.check_tries()) == 1
    higher = tutorial.sources.index(GOOD)
    a, b = tutorial.labels[higher], tutorial.labels[1 - higher]
    line = f"Translation {a} should score higher than Translation {b} (yours: 40 and 60)."
    problems = component_data(at, key)["problems"]
    assert problems[higher] == [line] and problems[1 - higher] == []  # under the card of the one to be higher
    [warning] = at.warning  # the feedback, where every message goes; the line is not repeated there
    assert "Not quite." in warning.value and FEEDBACK in warning.value and "should score higher" not in warning.value
    assert GOOD not in page_protos(at) and BAD not in page_protos(at)  # labels only, never the systems

    refreshed = h.app(s=at.query_params["s"])  # a reload: the same, from the stored try
    button(refreshed, "Begin").click().run()
    assert component_data(refreshed, key)["problems"][higher] == [line]
    assert [w.value for w in refreshed.warning] == [warning.value]

    right = {"scores": {"quality": scores_in_order(tutorial, {GOOD: 61, BAD: 60})}, "texts": None}
    send_trigger(at, key, "submit", right)
    assert not at.exception
    [answer] = h.store.answers(task="block")
    assert answer.check == "tutorial" and answer.check_passed is False  # corrected: the first try was wrong
    at = at.run()
    assert "Question 2 of 2" in at.get("progress")[0].proto.text


def test_a_span_practice_question_with_an_order_says_which_output(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, "spans"))
    at = start(h)
    tutorial = plan_of(h, at)[0]
    higher = tutorial.sources.index(GOOD)
    a, b = tutorial.labels[higher], tutorial.labels[1 - higher]
    value: dict[str, Any] = {"spans": [[[]], [[]]], "scores": {"quality": scores_in_order(tutorial, {GOOD: 50,
                                                                                                       BAD: 50})}}
    send_trigger(at, "block-0-spans", "submit", value)
    assert not at.exception and h.store.answers() == []
    data = component_data(at, "block-0-spans")
    assert data["serverMessage"].startswith(f"Not quite. {FEEDBACK}")
    assert data["serverMessage"].splitlines()[1:] == []  # the line about one output goes under its heading
    assert data["problems"][higher] == [f"Translation {a} should score higher than Translation {b} "
                                        "(yours: 50 and 50)."] and data["problems"][1 - higher] == []
    value["scores"]["quality"] = scores_in_order(tutorial, {GOOD: 70, BAD: 50})
    send_trigger(at, "block-0-spans", "submit", value)
    assert not at.exception and h.store.answers(task="block")[0].check == "tutorial"

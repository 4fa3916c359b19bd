"""AppTest of the error-span kind's question screen: what the span widget is sent (the outputs as text, the
suggestions in UTF-16 offsets, no system name), what one "Next" stores (the answer and its spans, once), a hostile
answer refused with a message and nothing stored, a tutorial's feedback naming the span not marked, and a document
annotated segment by segment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.apptest.component import component, component_data, send_trigger
from tests.apptest.conftest import texts
from tests.apptest.test_item_kinds import HEAD, after_block, plan_of, start

SYSTEMS = ("sysAlphaX1", "sysBetaY2")
TEXT = "The 👍 dog <b>walked</b> outside."
ITEMS = [{"id": f"itemQv{k}Zr", "input": f"Der Hund {k} <i>ist</i> rausgerannt.",
          "outputs": {SYSTEMS[0]: TEXT, SYSTEMS[1]: f"A dog ran out {k}."},
          "error_spans": {SYSTEMS[0]: [{"start_i": 10, "end_i": 23, "severity": "major", "category": None}]}}
         for k in range(4)]
DOC = {"id": "docQv", "segments": [{"input": "Eins.", "outputs": {SYSTEMS[0]: "One.", SYSTEMS[1]: "Won."}},
                                   {"input": "Zwei.", "outputs": {SYSTEMS[0]: "Two.", SYSTEMS[1]: "Too."}}]}
TUTORIAL = {"id": "tutQv", "input": "Der Hund ist rausgerannt.", "outputs": {SYSTEMS[0]: "The dog walked outside."},
            "check": {"expect": {SYSTEMS[0]: {"score": [75, 85], "error_spans": [
                {"start_i": [7, 9], "end_i": [12, 14], "severity": "minor"}]}},
                "feedback": "Mark \"walked\" as a minor error."}}
AFTER = """
[[tasks]]
kind = "compare"
id = "after"
title = "The block after"
instructions = "The next block's instructions."
items = "datasets/after.jsonl"
questions = 1
"""


def study(tmp: Path, keys: str, items: list[dict] | None = None) -> Path:
    data = tmp / "datasets"
    data.mkdir(parents=True)
    (data / "mt.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in items or ITEMS),
                                   encoding="utf-8")
    (data / "after.jsonl").write_text(json.dumps({"id": "a1", "input": "x", "outputs": {"p": "1", "q": "2"}}) + "\n",
                                      encoding="utf-8")
    config = tmp / "config.toml"
    config.write_text(HEAD + f"""
[[tasks]]
kind = "spans"
id = "block"
title = "The block"
instructions = "Read the instructions."
items = "datasets/mt.jsonl"
systems = {json.dumps(list(SYSTEMS))}
{keys}
""" + AFTER, encoding="utf-8")
    return config


def key(index: int = 0) -> str:
    return f"block-{index}-spans"


def data_of(at: Any, index: int = 0) -> dict[str, Any]:
    return component_data(at, key(index))


def submit(at: Any, value: Any, index: int = 0, element_id: str | None = None) -> Any:
    return send_trigger(at, key(index), "submit", value, element_id=element_id)


def test_esa_ai_question_sends_text_and_suggestions_and_stores_once(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, "questions = 2\nprefill = true\nmissing_token = true"))
    at = start(h)
    q0, _ = plan_of(h, at)
    data = data_of(at)
    assert q0.input in texts(at) or any(q0.input in t for t in texts(at))  # the source, as plain text
    shown = json.dumps(data, ensure_ascii=False)
    assert not any(s in shown for s in SYSTEMS) and "itemQv" not in shown  # blind: no system, no item id
    assert data["severities"] == [{"id": "minor", "label": "Minor", "key": "1"},
                                  {"id": "major", "label": "Major", "key": "2"}]
    assert data["scales"][0]["id"] == "quality" and data["missingToken"] is True
    # the task's instructions can be read again while answering (folded under the question)
    [instructions] = [e for e in at.expander if e.label == "The task's instructions"]
    assert "Read the instructions." in [m.value for m in instructions.markdown]
    [output] = data["outputs"]
    [segment] = output["segments"]
    assert segment["text"] == dict(zip(q0.sources, q0.texts, strict=True))[q0.sources[0]]
    if q0.sources[0] == SYSTEMS[0]:  # the suggestion, in the browser's UTF-16 offsets (the emoji counts two)
        assert segment["suggestions"] == [{"start": 10, "end": 24, "severity": "major", "category": None}]
        sent_spans = [{"start": 10, "end": 24, "severity": "major", "origin": "suggested-deleted", "suggestion": 0},
                      {"start": 0, "end": 3, "severity": "minor", "origin": "added"}]
    else:
        assert segment["suggestions"] == []
        sent_spans = [{"start": 0, "end": 1, "severity": "minor", "origin": "added"}]
    value = {"spans": [[sent_spans]], "scores": {"quality": [64]},
             "actions": [{"t": 800, "action": "create", "output": 0, "segment": 0, "start": 0, "end": 1,
                          "severity": "minor"}]}
    drawn = component(at, key()).proto.id
    submit(at, value)
    assert not at.exception and not at.warning
    [answer] = h.store.answers(task="block")
    assert answer.response == "annotated" and answer.sources == q0.sources and answer.detail["scores"] == {
        "quality": [64]}
    rows = h.store.spans()
    assert len(rows) == len(sent_spans) and {r["system"] for r in rows} == {q0.sources[0]}
    submit(at, value, element_id=drawn)  # the same "Next" again (a double click): nothing more
    assert len(h.store.answers(task="block")) == 1 and len(h.store.spans()) == len(sent_spans)


def test_a_hostile_answer_is_refused_with_a_message(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, "questions = 1"))
    at = start(h)
    for bad in ("nonsense", {"spans": [[[{"start": 0, "end": 999, "severity": "minor"}]]], "scores": {"quality": [5]}},
                {"spans": [[[{"start": 0, "end": 4, "severity": "minor"}, {"start": 2, "end": 6,
                                                                          "severity": "major"}]]],
                 "scores": {"quality": [5]}}):
        submit(at, bad)
        assert not at.exception and h.store.answers() == [] and h.store.spans() == []
        # the refusal is said inside the widget, above its "Next" (plain text), not under it
        assert data_of(at)["serverMessage"] and data_of(at)["serverKind"] == "warning" and not at.warning, bad
    assert "overlap" in data_of(at)["serverMessage"] and data_of(at)["refused"] == 3
    submit(at, {"spans": [[[]]], "scores": {"quality": [90]}})
    assert len(h.store.answers(task="block")) == 1
    after_block(at.run())


def test_a_tutorial_names_the_span_not_marked(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, 'questions = 1\ntutorial = ["tutQv"]', items=[*ITEMS, TUTORIAL]))
    at = start(h)
    submit(at, {"spans": [[[]]], "scores": {"quality": [50]}})
    assert not at.exception and h.store.answers() == []
    message = data_of(at)["serverMessage"]  # plain text: the feedback, then one line per problem
    assert message.startswith('Not quite. Mark "walked" as a minor error. Please change your answer and try again.')
    assert message.splitlines()[1:] == ['• A minor error on "walked" is not marked yet.',
                                        "• The score should be between 75 and 85 (yours: 50)."]
    assert h.store.check_tries()  # the wrong try is kept
    at = at.run()  # a reload of the question: the feedback is there again, from the stored try
    assert data_of(at)["serverMessage"] == message
    submit(at, {"spans": [[[{"start": 8, "end": 14, "severity": "minor"}]]], "scores": {"quality": [80]}})
    assert not at.exception
    [answer] = h.store.answers(task="block")
    assert answer.check == "tutorial" and [r["text"] for r in h.store.spans()] == ["walked"]


def test_a_document_is_annotated_segment_by_segment(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, 'questions = 1\nscore_per = "segment"', items=[DOC]))
    at = start(h)
    data = data_of(at)
    [output] = data["outputs"]
    assert [(s["source"], s["text"]) for s in output["segments"]] in ([("Eins.", "One."), ("Zwei.", "Two.")],
                                                                     [("Eins.", "Won."), ("Zwei.", "Too.")])
    assert data["scorePer"] == "segment"
    submit(at, {"spans": [[[{"start": 0, "end": 3, "severity": "major"}], []]], "scores": {"quality": [[30, 90]]}})
    assert not at.exception
    [answer] = h.store.answers(task="block")
    assert answer.detail["segment_scores"] == {"quality": [[30, 90]]} and answer.detail["scores"] == {
        "quality": [60.0]}
    assert [(r["segment"], r["start_char"], r["end_char"]) for r in h.store.spans()] == [(0, 0, 3)]

"""AppTest tests of the question screens of the items kinds (compare, score, rank, realfake), every response
mode: what is shown (the input, the texts, no system name or item id anywhere in what reaches the browser),
what one answer stores (one row: the item id, the systems in display order, the response and its detail),
what a bad answer does (a message, nothing stored), and that a block ends in the next task or the done page.

The study's systems have distinctive names (sysAlphaX1, ...) so that the leak checks can fail; every item's
input carries a markup payload that must arrive as plain text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalkit.balance import arrival_of
from evalkit.sampling import Question, plan
from evalkit.tasks.rank import place_name
from pages.tasks.score import widget_key
from tests.apptest.component import component, component_data, send_trigger
from tests.apptest.conftest import Harness, button, card_texts, cards, leaves, page_protos, texts
from tests.helpers import random_reviews, write_reviews

SYSTEMS = ("sysAlphaX1", "sysBetaY2", "sysGammaZ3")
PAYLOAD = "<b>bold?</b> **stars** [link](javascript:alert(1))"
N_ITEMS = 8

HEAD = """
[study]
title = "Items study"
datasets = "datasets"
database = "responses.sqlite"
seed = 7
completion_url = "https://example.org/done?cc={code}"
"""

#: the block after the block under test, so that a test sees its block end in the next task's instructions
AFTER = """
[[tasks]]
kind = "compare"
id = "after"
title = "The block after"
instructions = "The next block's instructions."
items = "datasets/items.jsonl"
questions = 1
"""


def item_id(k: int) -> str:
    return f"itemQv{k}Zr"


def write_items(path: Path) -> None:
    """N_ITEMS items, each with an output of every system; even items have a title."""
    with open(path, "w", encoding="utf-8") as fh:
        for k in range(N_ITEMS):
            entry: dict[str, Any] = {
                "id": item_id(k), "input": f"Input number {k}: {PAYLOAD}",
                "outputs": {s: f"Output {k} of system {j}: plain words, {PAYLOAD}" for j, s in enumerate(SYSTEMS)}}
            if k % 2 == 0:
                entry["title"] = f"Title {k} <i>x</i>"
            fh.write(json.dumps(entry) + "\n")


def study(tmp: Path, task: str, *, after: bool = True, pools: bool = False) -> Path:
    """A study of one ``[[tasks]]`` block (TOML text), followed by the AFTER block unless ``after`` is False."""
    data = tmp / "datasets"
    data.mkdir(parents=True)
    write_items(data / "items.jsonl")
    if pools:  # review files for a realfake task drawn from the pools
        for j, source in enumerate(SYSTEMS):
            write_reviews(data / f"{source}-alphas.xml", random_reviews(10, seed=j),
                          rids=[f"rid{j}x{i}" for i in range(10)])
    config = tmp / "config.toml"
    config.write_text(HEAD + task + (AFTER if after else ""), encoding="utf-8")
    return config


def task_toml(kind: str, **keys: Any) -> str:
    lines = ["", "[[tasks]]", f'kind = "{kind}"', 'id = "block"', 'title = "The block"',
             'instructions = "Read the instructions."']
    scales = keys.pop("scales", None)
    if "items" not in keys and "sources" not in keys:
        keys["items"] = "datasets/items.jsonl"
    for key, value in keys.items():
        lines.append(f"{key} = {json.dumps(value)}")
    for scale in scales or []:
        lines.append("[[tasks.scales]]")
        lines.extend(f"{key} = {json.dumps(value)}" for key, value in scale.items())
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- helpers


def start(h: Harness):
    """Agree on the consent page and click "Begin" on the block's instructions; returns the AppTest."""
    at = h.app()
    at.checkbox(key="consent_agree").check()
    at.text_input(key="consent_name").input("Ada")
    at.button[0].click().run()
    assert not at.exception
    assert at.header[0].value == "The block" and "Read the instructions." in texts(at)
    button(at, "Begin").click().run()
    assert not at.exception
    return at


def plan_of(h: Harness, at) -> list[Question]:
    session = h.store.get_session(at.query_params["s"])
    loaded = h.loaded
    return [q for q in plan(loaded.study, loaded.pools, session.seed, loaded.item_sets, arrival_of(session.meta))
            if q.task == "block"]


def shown_texts(at) -> list[str]:
    """Every plain text of the last run: st.text elements and the cards' texts."""
    return [t.value for t in at.text] + card_texts(at)


def assert_question_shown(at, q: Question, number: int, of: int) -> None:
    """The question's input, title and texts are on the page as plain text; its progress; no secret."""
    assert f"Question {number} of {of}" in at.get("progress")[0].proto.text
    assert "Task 1 of" in texts(at) and "The block" in texts(at)
    shown = shown_texts(at)
    assert q.input is not None and q.input in shown  # st.text: the payload as it is, never parsed
    if q.title is not None:
        assert q.title in shown
    for text in q.texts:
        assert text in shown
    for md in at.markdown:  # no item text went through markdown
        assert PAYLOAD not in md.value and "Input number" not in md.value
    assert_no_secrets(at)


def assert_no_secrets(at) -> None:
    sent = page_protos(at) + repr(dict(at.query_params))
    for system in SYSTEMS:
        assert system not in sent
    for k in range(N_ITEMS):
        assert item_id(k) not in sent


def only_answer(h: Harness, index: int = 0):
    rows = [a for a in h.store.answers(task="block") if a.question_index == index]
    assert len(rows) == 1, rows
    return rows[0]


def assert_row(answer, q: Question) -> None:
    """Columns every items answer has: the one item id, the systems in display order, kind, time."""
    assert answer.item_ids == (q.review_ids[0],) and q.review_ids[0].startswith("itemQv")
    assert answer.sources == q.sources and answer.kind == q.kind and answer.slot == q.slot
    assert answer.domain is None and answer.time_spent_ms is not None and answer.time_spent_ms >= 0
    if len(q.sources) == 2:
        assert (answer.left_source, answer.right_source) == q.sources
    else:
        assert answer.left_source is None and answer.right_source is None


def elements(at) -> list[tuple[str, Any]]:
    """Every leaf element of the page in the order drawn: (type, key or value)."""
    return leaves(at)


WIDGETS = ("slider", "radio", "selectbox", "text_area", "button")


def mark_under(drawn: list[tuple[str, Any]], widget: tuple[str, str]) -> str:
    """The warning drawn right under ``widget``: after it and its captions, before any other widget."""
    for kind, value in drawn[drawn.index(widget) + 1:]:
        if kind == "warning":
            return value
        assert kind not in WIDGETS and kind != "error", f"no mark under {widget}: {kind} {value} comes first"
    raise AssertionError(f"no mark under {widget}")


def after_block(at) -> None:
    """The screen after the block: the next task's instructions."""
    assert not at.exception
    assert at.header[0].value == "The block after" and "The next block's instructions." in texts(at)


# ----------------------------------------------------------------------------- compare


def test_compare_choice(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml("compare", question="Which reply is better?",
                                                      questions=2)))
    at = start(h)
    q0, q1 = plan_of(h, at)
    assert at.subheader[0].value == "Which reply is better?"
    assert_question_shown(at, q0, 1, 2)
    assert [label for label, _ in cards(at)] == ["Response A", "Response B"]
    radio = at.radio(key="block-0-choice")
    assert radio.options == ["Response A", "Response B"] and radio.value is None
    button(at, "Next").click().run()  # nothing chosen
    assert not at.exception and "Please choose one of the responses" in at.warning[0].value and not at.error
    assert h.store.answers() == []
    at.radio(key="block-0-choice").set_value("B")
    button(at, "Next").click().run()
    answer = only_answer(h)
    assert_row(answer, q0)
    assert answer.response == "B" and answer.review_source == q0.sources[1] and answer.detail == {}
    assert_question_shown(at, q1, 2, 2)
    at.radio(key="block-1-choice").set_value("A")
    button(at, "Next").click().run()
    assert only_answer(h, 1).review_source == q1.sources[0]
    after_block(at)
    assert len(h.store.answers()) == 2


def test_compare_choice_with_no_preference(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml("compare", response="choice-tie", questions=2)))
    at = start(h)
    q0, q1 = plan_of(h, at)
    assert_question_shown(at, q0, 1, 2)
    radio = at.radio(key="block-0-choice")
    assert radio.options == ["Response A", "Response B", "No preference"] and radio.value is None
    css = "\n".join(x.proto.body for x in at.get("html"))
    assert "repeat(2," in css and "nth-child(3) {grid-column: 1 / -1;}" in css  # A, B under the cards
    button(at, "Next").click().run()
    assert "Please choose" in at.warning[0].value and h.store.answers() == []
    at.radio(key="block-0-choice").set_value("tie")
    button(at, "Next").click().run()
    answer = only_answer(h)
    assert_row(answer, q0)
    assert answer.response == "tie" and answer.review_source is None
    at.radio(key="block-1-choice").set_value("A")
    button(at, "Next").click().run()
    assert only_answer(h, 1).response == "A" and only_answer(h, 1).review_source == q1.sources[0]
    after_block(at)


def test_compare_help_slider(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml("compare", response="slider", questions=2)))
    at = start(h)
    q0, q1 = plan_of(h, at)
    assert_question_shown(at, q0, 1, 2)
    slider = at.slider(key="block-0-slider")
    assert (slider.min, slider.max, slider.value) == (-100, 100, 0)
    assert slider.label == "Move the slider towards the better response"
    assert "◀ Response A is better" in texts(at) and "Response B is better ▶" in texts(at)
    button(at, "Accept: both are suitable").click().run()  # left at 0: a positive draw
    first = only_answer(h)
    assert_row(first, q0)
    assert first.response == "0" and first.detail == {"button": "accept", "outcome": "positive_draw"}
    assert first.review_source is None
    at.slider(key="block-1-slider").set_value(65)
    button(at, "Reject: both are unsuitable").click().run()
    second = only_answer(h, 1)
    assert second.response == "65" and second.detail == {"button": "reject", "outcome": "right"}
    assert second.review_source == q1.sources[1] and (second.left_source, second.right_source) == q1.sources
    after_block(at)


# ----------------------------------------------------------------------------- score

LIKERT = {"id": "fluency", "label": "Fluency", "type": "likert", "anchors": ["Broken", "Awkward", "Fine", "Fluent"]}
SLIDER = {"id": "overall", "label": "Overall quality", "type": "slider", "min": 0, "max": 100}


def widget(at, prefix: str = "block-0") -> dict[str, Any]:
    """What the score widget of question ``prefix`` was sent (it draws the scales in the browser)."""
    return component_data(at, widget_key(prefix))


def submit_scores(at, scores: dict[str, list[Any]], texts: list[str] | None = None, prefix: str = "block-0", *,
                  element_id: str | None = None):
    """What the widget sends on "Next" (only when complete, in a browser): one trigger value."""
    return send_trigger(at, widget_key(prefix), "submit", {"scores": scores, "texts": texts}, element_id=element_id)


def test_score_one_output_likert_and_slider(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml("score", questions=2, scales=[SLIDER, LIKERT])))
    at = start(h)
    q0, q1 = plan_of(h, at)
    assert_question_shown(at, q0, 1, 2)
    assert "**Response**" in [m.value for m in at.markdown]  # one output: no letter
    assert not at.slider and not at.radio  # the scales are the widget's, drawn in the browser
    data = widget(at)
    assert data["scales"] == [
        {"id": "overall", "label": "Overall quality", "type": "slider", "min": 0, "max": 100, "anchors": [],
         "horizontal": False},
        {"id": "fluency", "label": "Fluency", "type": "likert", "min": 1, "max": 4,
         "anchors": ["Broken", "Awkward", "Fine", "Fluent"], "horizontal": True}]
    assert data["marks"] == {  # the marks the browser shows under a missing score: evalkit's words
        "overall-0": "The slider 'Overall quality' has not been moved yet: please drag it to your score (where it "
                     "starts is not an answer).",
        "fluency-0": "Please choose a level for 'Fluency'."}
    assert data["outputs"] == [{"heading": ""}] and data["textfield"] == "none" and data["serverMarks"] == {}
    assert PAYLOAD not in json.dumps(data)  # the outputs' texts are cards, not the widget's
    assert not at.warning and not at.error

    submit_scores(at, {"overall": [73], "fluency": [3]})  # one answer, stored in the trigger's callback
    assert not at.exception
    answer = only_answer(h)
    assert_row(answer, q0)
    assert answer.response == "scored" and answer.review_source == q0.sources[0]
    assert answer.detail == {"scores": {"overall": [73], "fluency": [3]}}

    at = at.run()  # a whole-page run shows the next question (AppTest keeps only the fragment's elements)
    assert_question_shown(at, q1, 2, 2)  # the next question starts clean: a new widget
    assert widget(at, "block-1")["serverMarks"] == {} and not at.warning
    submit_scores(at, {"overall": [0], "fluency": [1]}, prefix="block-1")  # the lowest score: an answer
    assert only_answer(h, 1).detail == {"scores": {"overall": [0], "fluency": [1]}}
    after_block(at)


def test_score_an_incomplete_answer_is_refused_and_marked(make_harness, tmp_path) -> None:
    """The browser sends complete answers only; the server checks again: a score missing (an unmoved slider is
    sent as null) stores nothing, says what is missing (yellow) and marks it under its widget."""
    h = make_harness(config=study(tmp_path, task_toml("score", questions=1, outputs_per_question=2,
                                                      scales=[SLIDER, LIKERT])))
    at = start(h)
    submit_scores(at, {"overall": [40, None], "fluency": [2]})
    assert not at.exception and h.store.answers() == [] and not at.error
    assert [w.value for w in at.warning] == [
        "2 scores are still missing (Overall quality for response B; Fluency for response B): they are marked "
        "above. Nothing has been saved yet."]
    data = widget(at)
    assert data["refused"] == 1 and data["serverMarks"] == {
        "overall-1": "The slider 'Overall quality' for response B has not been moved yet: please drag it to your "
                     "score (where it starts is not an answer).",
        "fluency-1": "Please choose a level for 'Fluency' for response B."}
    submit_scores(at, "not scores")  # not even a mapping: everything missing, nothing stored, no traceback
    assert not at.exception and h.store.answers() == [] and widget(at)["refused"] == 2
    submit_scores(at, {"overall": [40, 60], "fluency": [2, 4]})
    assert only_answer(h).detail == {"scores": {"overall": [40, 60], "fluency": [2, 4]}}
    after_block(at.run())


@pytest.mark.parametrize("bad", [101, -1, 50.5, True, "50"])
def test_score_a_value_out_of_range_is_refused(make_harness, tmp_path, bad: Any) -> None:
    h = make_harness(config=study(tmp_path, task_toml("score", questions=1, scales=[SLIDER, LIKERT])))
    at = start(h)
    submit_scores(at, {"overall": [bad], "fluency": [2]})
    assert not at.exception and h.store.answers() == []
    assert [w.value for w in at.warning] == ["'Overall quality' takes whole numbers from 0 to 100."]  # the message
    assert widget(at)["refused"] == 1  # "Next" works again in the browser
    submit_scores(at, {"overall": [50], "fluency": [5]})  # a level past the last anchor
    assert h.store.answers() == [] and [w.value for w in at.warning] == ["'Fluency' takes whole numbers from 1 to 4."]
    submit_scores(at, {"overall": [50], "fluency": [4]})
    assert only_answer(h).detail == {"scores": {"overall": [50], "fluency": [4]}}


def test_score_a_resend_stores_one_answer(make_harness, tmp_path) -> None:
    """A double click or a resent trigger (the same answer, for the same widget, after it was stored) stores one
    answer and never answers the next question."""
    h = make_harness(config=study(tmp_path, task_toml("score", questions=2, scales=[SLIDER])))
    at = start(h)
    first = component(at, widget_key("block-0")).proto.id
    submit_scores(at, {"overall": [30]})
    submit_scores(at, {"overall": [30]}, element_id=first)  # the same trigger again, from the first question's widget
    submit_scores(at, {"overall": [99]}, element_id=first)
    assert not at.exception
    assert [(a.question_index, a.detail) for a in h.store.answers()] == [(0, {"scores": {"overall": [30]}})]
    at = at.run()
    assert "Question 2 of 2" in at.get("progress")[0].proto.text


def test_score_three_outputs_side_by_side_with_comments(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml(
        "score", questions=1, outputs_per_question=3, textfield="comment", scales=[SLIDER, LIKERT])))
    at = start(h)
    [q] = plan_of(h, at)
    assert_question_shown(at, q, 1, 1)
    assert [label for label, _ in cards(at)] == ["Response A", "Response B", "Response C"]
    data = widget(at)
    assert [o["heading"] for o in data["outputs"]] == ["Response A", "Response B", "Response C"]
    assert [o["textLabel"] for o in data["outputs"]] == [f"Comment on response {x} (optional)" for x in "ABC"]
    assert data["textfield"] == "comment" and data["maxChars"] == 5000
    assert data["names"]["overall-1"] == "Overall quality for response B"
    submit_scores(at, {"overall": [10, 40, 90], "fluency": [1, 2, 3]})  # no texts: refused, nothing stored
    assert h.store.answers() == [] and at.warning[-1].value == "Please fill in the text box of every response."
    submit_scores(at, {"overall": [10, 40, 90], "fluency": [1, 2, 3]}, ["", "Too short.", ""])
    answer = only_answer(h)
    assert_row(answer, q)
    assert answer.review_source is None  # several outputs: no one system
    assert answer.detail == {"scores": {"overall": [10, 40, 90], "fluency": [1, 2, 3]},
                             "texts": ["", "Too short.", ""]}
    after_block(at.run())


def test_score_post_edit(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml("score", questions=2, textfield="post-edit",
                                                      scales=[LIKERT]), after=False))
    at = start(h)
    q0, q1 = plan_of(h, at)
    [output] = widget(at)["outputs"]
    assert output["textLabel"] == "Your corrected version of the response" and output["prefill"] == q0.texts[0]
    assert widget(at)["maxChars"] == 20000
    submit_scores(at, {"fluency": [2]}, ["A corrected text."])
    answer = only_answer(h)
    assert answer.detail == {"scores": {"fluency": [2]}, "texts": ["A corrected text."], "edited": [True]}
    at = at.run()
    submit_scores(at, {"fluency": [4]}, [widget(at, "block-1")["outputs"][0]["prefill"]], prefix="block-1")
    assert only_answer(h, 1).detail == {"scores": {"fluency": [4]}, "texts": [q1.texts[0]], "edited": [False]}
    assert not at.exception
    assert at.run().title[0].value == "Thank you!"  # the last block ends in the done page


# ----------------------------------------------------------------------------- rank


def test_rank_best_of_three(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml("rank", questions=2)))
    at = start(h)
    q0, q1 = plan_of(h, at)
    assert at.subheader[0].value == "Which response is best?"
    assert_question_shown(at, q0, 1, 2)
    assert len(q0.texts) == 3
    radio = at.radio(key="block-0-choice")
    assert radio.options == ["Response A", "Response B", "Response C"] and radio.value is None
    button(at, "Next").click().run()
    assert "choose the best response" in at.warning[0].value and h.store.answers() == []
    at.radio(key="block-0-choice").set_value("C")
    button(at, "Next").click().run()
    answer = only_answer(h)
    assert_row(answer, q0)
    assert answer.response == "C" and answer.review_source == q0.sources[2] and answer.detail == {}
    at.radio(key="block-1-choice").set_value("A")
    button(at, "Next").click().run()
    assert only_answer(h, 1).review_source == q1.sources[0]
    after_block(at)


def test_rank_full_ranking(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml("rank", response="ranking", questions=1)))
    at = start(h)
    [q] = plan_of(h, at)
    assert at.subheader[0].value == "Order the responses from best to worst."
    assert_question_shown(at, q, 1, 1)
    boxes = [at.selectbox(key=f"block-0-place-{x}") for x in "ABC"]
    assert [b.label for b in boxes] == ["Place of response A", "Place of response B", "Place of response C"]
    assert boxes[0].options == ["1st (best)", "2nd", "3rd (worst)"] and all(b.value is None for b in boxes)
    drawn = elements(at)  # each place sits right under its card
    for x in "ABC":
        card = drawn.index(("markdown", f"**Response {x}**"))
        assert drawn[card + 2] == ("selectbox", f"block-0-place-{x}")
    at.selectbox(key="block-0-place-A").set_value(2)
    button(at, "Next").click().run()  # incomplete
    assert at.warning[-1].value == "Please give responses B and C a place in the ranking (1st to 3rd)."
    at.selectbox(key="block-0-place-B").set_value(2)
    at.selectbox(key="block-0-place-C").set_value(1)
    button(at, "Next").click().run()  # A and B share a place
    assert at.warning[-1].value == ("Responses A and B are both 2nd: please give each response its own place.")
    assert h.store.answers() == []
    at.selectbox(key="block-0-place-B").set_value(3)
    button(at, "Next").click().run()
    answer = only_answer(h)
    assert_row(answer, q)
    assert answer.response == "C>A>B" and answer.review_source == q.sources[2]
    assert answer.detail == {"ranking": [q.sources[2], q.sources[0], q.sources[1]]}
    after_block(at)


def test_place_names() -> None:
    assert [place_name(k, 4) for k in range(1, 5)] == ["1st (best)", "2nd", "3rd", "4th (worst)"]
    assert [place_name(k, 2) for k in (1, 2)] == ["1st (best)", "2nd (worst)"]


# ----------------------------------------------------------------------------- realfake


def test_realfake_with_confidence(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml("realfake", target=SYSTEMS[0], questions=2)))
    at = start(h)
    q0, q1 = plan_of(h, at)
    assert_question_shown(at, q0, 1, 2)
    assert at.subheader[0].value == "Was this text written by a person, or generated by a system?"
    assert "**The text**" in [m.value for m in at.markdown]
    answer_radio = at.radio(key="block-0-answer")
    assert answer_radio.options == ["Written by a person", "Generated by a system"] and answer_radio.value is None
    sure = at.radio(key="block-0-confidence")
    assert sure.options == ["Guessing", "Somewhat sure", "Sure", "Very sure"] and sure.value is None
    button(at, "Next").click().run()
    assert "written by a person or generated" in at.warning[0].value and h.store.answers() == []
    at.radio(key="block-0-answer").set_value("generated")
    button(at, "Next").click().run()  # no confidence
    assert [w.value for w in at.warning] == ["Please say how sure you are (“How sure are you?”) before continuing."]
    assert h.store.answers() == []
    at.radio(key="block-0-confidence").set_value(3)
    button(at, "Next").click().run()
    answer = only_answer(h)
    assert_row(answer, q0)
    assert answer.response == "generated" and answer.review_source == q0.sources[0]
    assert answer.detail == {"confidence": 3}
    assert_question_shown(at, q1, 2, 2)
    assert at.radio(key="block-1-answer").value is None and at.radio(key="block-1-confidence").value is None
    at.radio(key="block-1-answer").set_value("real")
    at.radio(key="block-1-confidence").set_value(1)
    button(at, "Next").click().run()
    assert only_answer(h, 1).response == "real" and only_answer(h, 1).detail == {"confidence": 1}
    after_block(at)


def test_realfake_without_confidence(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml("realfake", target=SYSTEMS[1], questions=1, confidence=[]),
                                  after=False))
    at = start(h)
    [q] = plan_of(h, at)
    assert_question_shown(at, q, 1, 1)
    assert [r.key for r in at.radio] == ["block-0-answer"]
    at.radio(key="block-0-answer").set_value("real")
    button(at, "Next").click().run()
    answer = only_answer(h)
    assert answer.response == "real" and answer.detail == {}
    assert not at.exception and at.title[0].value == "Thank you!"


def test_realfake_from_the_review_pools(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml(
        "realfake", target=SYSTEMS[0], sources=list(SYSTEMS), domains=["alpha", "alpha"]), pools=True))
    at = start(h)
    q0, _ = plan_of(h, at)
    assert "Topic: Alpha" in texts(at) and q0.input is None
    assert q0.texts[0] in shown_texts(at)
    assert_no_secrets(at)
    assert q0.review_ids[0].split("/")[-1] not in page_protos(at)
    at.radio(key="block-0-answer").set_value("real")
    at.radio(key="block-0-confidence").set_value(4)
    button(at, "Next").click().run()
    answer = only_answer(h)
    assert answer.item_ids == q0.review_ids and answer.domain == "alpha" and answer.sources == q0.sources
    assert answer.review_source == q0.sources[0] and answer.detail == {"confidence": 4}


# ----------------------------------------------------------------------------- all kinds


def answer_compare(at) -> None:
    at.radio(key="block-0-choice").set_value("A")


def answer_rank(at) -> None:
    for place, x in enumerate("ABC", start=1):
        at.selectbox(key=f"block-0-place-{x}").set_value(place)


def answer_realfake(at) -> None:
    at.radio(key="block-0-answer").set_value("real")
    at.radio(key="block-0-confidence").set_value(2)


@pytest.mark.parametrize(("task", "answer", "submit"), [
    (task_toml("compare", questions=1), answer_compare, "Next"),
    (task_toml("compare", questions=1, response="slider"), lambda at: None, "Accept: both are suitable"),
    (task_toml("rank", questions=1, response="ranking"), answer_rank, "Next"),
    (task_toml("realfake", target=SYSTEMS[2], questions=1), answer_realfake, "Next"),
], ids=["compare", "compare-slider", "rank", "realfake"])  # score: test_score_a_resend_stores_one_answer
def test_a_double_click_stores_one_answer(make_harness, tmp_path, task: str, answer, submit: str) -> None:
    """The second click of a double click, from the same rendered page, stores nothing more."""
    h = make_harness(config=study(tmp_path, task))
    at = start(h)
    answer(at)
    clicked = button(at, submit)
    clicked.click().run()
    clicked.click().run()
    assert not at.exception
    assert len(h.store.answers()) == 1
    after_block(at)

"""AppTest tests of "Evaluator screens, as a new user saw them": the browser tab's title, the consent page of a
study without a consent text, the practice question's callout, the HELP slider's words, the cards headed by the
task's ``input_label`` / ``output_label``, and one colour convention for messages (what is missing: yellow; a
failure: red). What only a browser shows (a mark hidden as soon as its answer is given, one row of slider ends,
GraphMind on a phone) is in ``tests/e2e/test_evaluator_screens.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
import streamlit as st

from evalkit.missing import AGREE_LABEL, AGREE_LABEL_NO_TEXT
from evalkit.sampling import Question
from pages.tasks.score import widget_key
from tests.apptest.component import component_data, send_trigger
from tests.apptest.conftest import Harness, button, cards, leaves, texts
from tests.apptest.test_checks_app import crowd, element_kinds
from tests.apptest.test_checks_app import start as start_crowd
from tests.apptest.test_item_kinds import SLIDER, study, task_toml
from tests.apptest.test_item_kinds import start as start_items

LABELS = {"input_label": "Customer review", "output_label": "Reply"}


# ----------------------------------------------------------------------------- the browser tab


def test_the_browser_tab_shows_the_studys_title(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    titles: list[Any] = []
    real = st.set_page_config

    def record(*args: Any, **kwargs: Any) -> None:
        titles.append(kwargs.get("page_title"))
        real(*args, **kwargs)

    monkeypatch.setattr(st, "set_page_config", record)
    at = harness.app()
    assert not at.exception and at.title[0].value == "Token study"
    assert "Token study" in titles and "Survey" not in titles
    at.checkbox(key="consent_agree").check()
    at.text_input(key="consent_name").input("Ada")
    button(at, "Start the study").click().run()  # the survey's screens too
    assert not at.exception and at.header[0].value == "Spot the human"
    assert [t for t in titles if t is not None] == ["Token study"] * len([t for t in titles if t is not None])


# ----------------------------------------------------------------------------- consent without a consent text


def test_a_study_without_a_consent_text_does_not_ask_to_confirm_the_information_above(make_harness) -> None:
    h = make_harness()
    with_text = h.app()
    assert with_text.checkbox(key="consent_agree").label == AGREE_LABEL  # "the information above" is there
    config = h.config
    config.write_text(config.read_text(encoding="utf-8").replace('consent = "consent.md"\n', ""), encoding="utf-8")
    st.cache_resource.clear()
    at = h.app()
    assert not at.exception
    box = at.checkbox(key="consent_agree")
    assert box.label == AGREE_LABEL_NO_TEXT == "I agree to take part in this study."
    assert "information above" not in texts(at) + box.label
    button(at, "Start the study").click().run()  # the mark names the box by its words all the same
    assert "tick the box “I agree to take part”" in at.warning[0].value and h.store.sessions() == []


# ----------------------------------------------------------------------------- the practice question


def test_the_practice_question_has_a_callout_and_otherwise_looks_like_every_question(make_harness, tmp_path) -> None:
    h = make_harness(config=crowd(tmp_path))
    at = start_crowd(h)
    [callout] = at.info
    assert callout.value.startswith("**Practice question: this one is not counted.**")
    assert callout.proto.icon == ":material/school:"
    tutorial_kinds = element_kinds(at)
    first: Question = plan_of_crowd(h, at)[0]
    at.radio(key=f"{first.task}-{first.index}-choice").set_value(first.labels[first.sources.index("good")])
    button(at, "Next").click().run()
    assert not at.exception and not at.info  # a counted question: no callout
    kinds = element_kinds(h.app(s=at.query_params["s"]))  # (a fresh page: no script bringing it into view)
    assert tutorial_kinds[0] == "info"  # the callout, above the question: the one element more
    # the rest is laid out like every question (the items' texts and styles vary: an item with a title has one
    # text more, so only the layout's widgets and headings are compared; this depended on the evaluator's seed)
    def layout(elements: list[str]) -> list[str]:
        return [k for k in elements if k not in ("text", "html")]

    assert layout(tutorial_kinds[1:]) == layout(kinds)


def plan_of_crowd(h: Harness, at) -> list[Question]:
    from tests.apptest.test_checks_app import questions

    return questions(h, at)


# ----------------------------------------------------------------------------- the HELP slider's words


def test_the_help_slider_words_follow_the_protocol(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml("compare", questions=2, response="slider")))
    at = start_items(h)
    assert [b.label for b in at.button] == ["Accept: both are suitable", "Reject: both are unsuitable"]
    said = texts(at)
    assert "Then say whether **both** responses are suitable: *Accept* if both are, *Reject* if both are not." in said
    assert "left there, *Accept* records a tie in which both are suitable, *Reject* a tie in which neither is." in said
    assert "acceptable" not in said and "unsure" not in said
    button(at, "Accept: both are suitable").click().run()  # the untouched slider: a tie, as the page says
    [answer] = h.store.answers()
    assert answer.detail == {"button": "accept", "outcome": "positive_draw"} and answer.review_source is None
    button(at, "Reject: both are unsuitable").click().run()
    assert h.store.answers()[1].detail == {"button": "reject", "outcome": "negative_draw"}


# ----------------------------------------------------------------------------- card labels


def test_a_tasks_input_label_and_output_label_head_its_cards_options_and_messages(make_harness, tmp_path) -> None:
    h = make_harness(config=study(tmp_path, task_toml("compare", questions=1, response="choice-tie", **LABELS)))
    at = start_items(h)
    assert "**Customer review**" in [m.value for m in at.markdown] and "**Input**" not in [m.value for m in at.markdown]
    assert [label for label, _ in cards(at)] == ["Reply A", "Reply B"]
    choice = at.radio(key="block-0-choice")
    assert choice.options == ["Reply A", "Reply B", "No preference"]
    button(at, "Next").click().run()
    assert [w.value for w in at.warning] == [
        "Please choose one of the replies (Reply A, Reply B or No preference) before continuing."]
    assert "response" not in texts(at).lower()


def test_the_labels_name_the_outputs_of_a_ranking_and_a_real_or_generated_text(make_harness, tmp_path) -> None:
    """(A score task's cards, boxes and messages take ``output_label`` too: tests/test_evaluator_words.py.)"""
    tasks = (task_toml("rank", response="ranking", questions=1, input_label="News text", output_label="Headline")
             + task_toml("realfake", target="sysAlphaX1", questions=1, input_label="Forum question",
                         output_label="Answer").replace('id = "block"', 'id = "rf"'))
    h = make_harness(config=study(tmp_path, tasks, after=False))
    at = start_items(h)
    assert at.subheader[0].value == "Order the headlines from best to worst."  # the default question, in its words
    assert "**News text**" in [m.value for m in at.markdown]
    assert [at.selectbox(key=f"block-0-place-{x}").label for x in "ABC"] == [
        "Place of headline A", "Place of headline B", "Place of headline C"]
    assert {"**Headline A**", "**Headline B**", "**Headline C**"} <= {m.value for m in at.markdown}
    at.selectbox(key="block-0-place-B").set_value(1)
    button(at, "Next").click().run()
    assert "Please choose a place for headline A in “Place of headline A”." in [w.value for w in at.warning]
    assert at.warning[-1].value == "Please give headlines A and C a place in the ranking (1st to 3rd)."
    at.selectbox(key="block-0-place-A").set_value(2)
    at.selectbox(key="block-0-place-C").set_value(3)
    button(at, "Next").click().run()
    assert [a.response for a in h.store.answers()] == ["B>A>C"]
    button(at, "Begin").click().run()  # the real-or-generated task
    assert {"**Forum question**", "**Answer**"} <= {m.value for m in at.markdown}
    assert "**The text**" not in [m.value for m in at.markdown] and "**Input**" not in [m.value for m in at.markdown]


def test_the_labels_name_the_outputs_of_a_score_task(make_harness, tmp_path) -> None:
    """The score widget (drawn in the browser) gets its headings, boxes and marks in the task's words."""
    task = task_toml("score", questions=1, outputs_per_question=2, textfield="comment", scales=[SLIDER],
                     input_label="News text", output_label="Summary")
    h = make_harness(config=study(tmp_path, task, after=False))
    at = start_items(h)
    assert at.subheader[0].value == "How good is each summary?"
    assert "**News text**" in [m.value for m in at.markdown]
    assert [label for label, _ in cards(at)] == ["Summary A", "Summary B"]
    data = component_data(at, widget_key("block-0"))
    assert [o["heading"] for o in data["outputs"]] == ["Summary A", "Summary B"]
    assert data["outputs"][1]["textLabel"] == "Comment on summary B (optional)"
    assert data["marks"]["overall-1"].startswith("The slider 'Overall quality' for summary B has not been moved")
    send_trigger(at, widget_key("block-0"), "submit", {"scores": {"overall": [40]}, "texts": ["", ""]})
    assert "(Overall quality for summary B)" in at.warning[0].value and h.store.answers() == []


# ----------------------------------------------------------------------------- message colours


def test_what_is_missing_is_yellow_under_its_widget_and_a_failure_is_red(harness: Harness, monkeypatch) -> None:
    at = harness.app()
    at.checkbox(key="consent_agree").check()
    at.text_input(key="consent_name").input("Ada")
    button(at, "Start the study").click().run()
    button(at, "Begin").click().run()
    button(at, "Next").click().run()  # nothing chosen
    assert not at.error and harness.store.answers() == []
    drawn = leaves(at, button_labels=True)
    radio = drawn.index(("radio", "turing-0-choice"))
    assert drawn[radio + 1] == ("warning", "Please choose one of the reviews (Review A, Review B or Review C) before "
                                           "continuing.")
    [style] = [e.proto.body for e in at.get("html") if "evalkit-card" in e.proto.body]
    # the browser hides the mark as soon as an option is chosen (a form's radio reruns nothing): CSS, no script
    assert "body:has(.st-key-turing-0-choice input:checked) .st-key-why-mark-turing-0-choice" in style

    def disk_full(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("ui.answers.record_choice", disk_full)
    at.radio(key="turing-0-choice").set_value("A")
    button(at, "Next").click().run()
    assert [e.value for e in at.error] == ["Your answer could not be saved. Please try again in a moment."]
    assert not at.warning  # chosen: the mark is gone; the failure is red
